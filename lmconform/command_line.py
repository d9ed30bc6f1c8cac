"""What the options of lmconform's commands share: a number within bounds, or a one-line usage error (exit status 2)
naming the option, rather than a traceback or a hang when the number reaches what cannot take it (a port above 65535
reaching bind(), an infinite timeout reaching a socket, an infinite pause between two parts of an answer); every usage
error in one line naming its command, with the option or the name a slip of the keyboard likely meant."""

from __future__ import annotations

import argparse
import difflib
import sys
from collections.abc import Callable, Iterable
from typing import Any, NoReturn

from lmconform.exit_status import USAGE_ERROR

# The longest wait an option may ask for: a day. A socket refuses a timeout past what the platform's time_t holds,
# and a wait of days is a slip of the keyboard, not a slow model.
LONGEST_WAIT_S = 86400


def number_within(text: str, kind: type[int] | type[float], low: float, high: float = sys.maxsize,
                  above: bool = False) -> float:
    """`text` as a number of `kind` from `low` (or above it, with `above`) to `high` (no upper bound when none is
    given); else ValueError saying what the option takes ("takes a whole number from 0 to 65535, not '99999'")."""
    try:
        value = kind(text)
    except (TypeError, ValueError):
        value = None
    # NaN fails every comparison
    if value is None or not (low < value if above else low <= value) or not value <= high:
        whole = "a whole number" if kind is int else "a number"
        start = f"above {low:g}" if above else f"of at least {low:g}" if high == sys.maxsize else f"from {low:g}"
        bound = start if high == sys.maxsize else f"{start} and at most {high:g}" if above else f"{start} to {high:g}"
        raise ValueError(f"takes {whole} {bound}, not {str(text)!r}")
    return value


def bounded(kind: type[int] | type[float], low: float, high: float = sys.maxsize,
            above: bool = False) -> Callable[[str], float]:
    """An argparse `type`: number_within, whose complaint argparse prints as the option's usage error."""
    def parse(text: str) -> float:
        try:
            return number_within(text, kind, low, high, above)
        except ValueError as error:
            raise argparse.ArgumentTypeError(str(error)) from None
    return parse


# The bounds of a wait in seconds (an answer's next bytes, an agent's run), for number_within and bounded: above 0, at
# most a day.
WAIT: tuple[type[float], float, float, bool] = (float, 0, LONGEST_WAIT_S, True)
PORT = bounded(int, 0, 65535)
SECONDS = bounded(*WAIT)


class OneLineErrorParser(argparse.ArgumentParser):
    """A parser whose usage error is one line on stderr and exit status 2, naming the command it belongs to: argparse's
    usage block buries the one line that matters, and hands the unknown options of a command up to the top-level
    parser, which then prints the usage of `lmconform` instead of the command's."""

    def error(self, message: str) -> NoReturn:
        print(f"{self.prog}: {message}; `{self.prog} --help` says what it takes", file=sys.stderr)
        sys.exit(USAGE_ERROR)

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        namespace, unknown = super().parse_known_args(args, namespace)
        if unknown:
            self.error(f"unrecognized arguments: {' '.join(unknown)}{self.did_you_mean(unknown[0])}")
        return namespace, []

    def did_you_mean(self, word: str) -> str:
        """` (did you mean --model?)` for an option close to one this parser has; nothing otherwise."""
        if not word.startswith("--"):
            return ""
        # Compared without their dashes, which every long option shares: `--bogus` is not close to `--out`.
        names = {option.lstrip("-"): option for option in self._option_string_actions if option.startswith("--")}
        near = closest(word.partition("=")[0].lstrip("-"), names)
        return f" (did you mean {names[near]}?)" if near else ""


def closest(word: str, candidates: Iterable[str]) -> str | None:
    """The candidate `word` was most likely meant to be (a slip of the keyboard), if one is close enough."""
    close = difflib.get_close_matches(word, list(candidates), n=1)
    return close[0] if close else None


def unknown_name(what: str, name: str, known: Iterable[str], listing: str) -> str:
    """`unknown fault 'tool-index-on' (did you mean 'tool-index-one'?); `lmconform faults` lists them`: a name that
    is none of a long list, said in one line, the list left to the command that shows it."""
    near = closest(name, known)
    return f"unknown {what} {name!r}{f' (did you mean {near!r}?)' if near else ''}; {listing} lists them"
