"""The grammar of a custom tool's input (a Responses tool `{"type": "custom", "format": {"type": "grammar", "syntax",
"definition"}}`): whether a text is in the language the grammar defines, where that can be told.

A `regex` grammar is matched whole with Python's `re`; OpenAI writes it for Rust's regex crate, and a definition
Python cannot compile is not checked. A `lark` grammar is parsed with the lark library's Earley parser, which takes
any context-free grammar; the extensions of Lark that OpenAI's constrained decoding (LLGuidance) accepts and lark does
not (`%json`, lazy rules) leave a definition lark cannot load, which is not checked either."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from lark import Lark
from lark.exceptions import LarkError, UnexpectedInput

SYNTAXES = ("lark", "regex")


@dataclass(frozen=True)
class GrammarMatch:
    """Whether a text is in a grammar's language: True, False, or None where it cannot be told, with why."""

    matches: bool | None
    why: str = ""


@lru_cache(maxsize=64)
def _regex(definition: str) -> re.Pattern[str] | str:
    try:
        return re.compile(definition)
    except re.error as error:
        return f"Python's re cannot compile the regex ({error})"


@lru_cache(maxsize=64)
def _lark(definition: str) -> Lark | str:
    try:
        return Lark(definition, start="start", parser="earley")
    except LarkError as error:
        return f"the lark library cannot load the grammar ({str(error).splitlines()[0] if str(error) else error})"


def in_grammar(syntax: object, definition: object, text: str) -> GrammarMatch:
    """Whether `text` is in the language of the grammar `definition` written in `syntax`."""
    if syntax not in SYNTAXES or not isinstance(definition, str):
        return GrammarMatch(None, f"a grammar of syntax {syntax!r} is not checked")
    if syntax == "regex":
        pattern = _regex(definition)
        if isinstance(pattern, str):
            return GrammarMatch(None, pattern)
        return GrammarMatch(True) if pattern.fullmatch(text) else GrammarMatch(False, "the regex does not match it whole")
    parser = _lark(definition)
    if isinstance(parser, str):
        return GrammarMatch(None, parser)
    try:
        parser.parse(text)
    except UnexpectedInput as error:
        return GrammarMatch(False, f"lark cannot parse it: {str(error).strip().splitlines()[0]} at character "
                                   f"{error.pos_in_stream}")
    except LarkError as error:  # a grammar lark loaded but cannot run (a rule it rejects only when parsing)
        return GrammarMatch(None, f"the lark library cannot parse with the grammar ({error})")
    return GrammarMatch(True)
