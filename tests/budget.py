"""How much the tests that repeat one proof over many inputs do: all of it in `make test`, less in `make check`
(LMCONFORM_TEST_BUDGET=check), the contributor's quick loop. Such a test proves the same property either way; the
full budget only tries more of it, and `make test` is the one that must pass before a merge:
- a test that judges many generated examples (no check raises a false alarm on a legal one) sends a tenth of them;
- the fault catalogues (of the reference server and of the reference bridge) play against each fault the cases its row
  names (`shown_by`, the first case each finding showed on when `make catalogue` wrote the table, in differential mode
  too): the row's findings are all found, and nothing outside the row fires on what was played. A fault whose row
  names no case (a variant: a legal form no check may report) is played a tenth of the cases of the API it changes. A
  finding of generated requests is shrunk with a tenth of the requests. In `make test` the server's catalogue plays
  every case of the API a fault breaks and a tenth of the other APIs' cases, the bridge's every case;
  `make catalogue`, which writes the table, plays every case against every fault;
- the stream fuzz plays half its generated answers through each proxy (12), which still find and shrink each
  proxy's defect;
- a test that holds one judge to another on many recorded payloads (the fast schema check to jsonschema on the real
  answers) compares one payload in SAMPLE_EVERY of each schema's, the first included;
- a test of every pair of two settings (each profile at each level) tries each setting once in make check, the pairs
  along the diagonal;
- a test that runs the whole suite for what the run does (its exit status, its output, its files) keeps the schemas'
  checks and those it is about, plays a tenth of each API's cases and those it is about, and its generated cases
  send a tenth of their requests.

Measured with `/usr/bin/time` (user + sys of pytest and every process it starts, on a busy machine, so CPU time
rather than wall time): see docs/contributing.md, "What make check costs"."""

import os
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TypeVar

from lmconform.api_table import APIS
from lmconform.cases import load_cases
from lmconform.settings import DEFAULT_FUZZ_EXAMPLES, RunSettings

ROOT = Path(__file__).resolve().parent.parent
CHECK = os.environ.get("LMCONFORM_TEST_BUDGET") == "check"
# One case in SAMPLE_EVERY of each API's cases: what make check's whole-suite runs play, and a fault whose row names no
# case; make test's server catalogue plays it of the APIs a fault does not break.
SAMPLE_EVERY = 10
T = TypeVar("T")
U = TypeVar("U")


def examples(full: int) -> int:
    """The number of examples a test sends: `full` in `make test`, a tenth of it in `make check`."""
    return max(1, full // 10) if CHECK else full


def spread(items: Sequence[T]) -> Sequence[T]:
    """Every item in `make test`; one in SAMPLE_EVERY, the first included, in `make check`."""
    return items[::SAMPLE_EVERY] if CHECK else items


def pairs(first: Sequence[T], second: Sequence[U]) -> list[tuple[T, U]]:
    """Every pair in `make test`; in `make check` each item of either once, paired in order and round again on the
    shorter."""
    if not CHECK:
        return [(one, other) for one in first for other in second]
    return [(first[n % len(first)], second[n % len(second)]) for n in range(max(len(first), len(second)))]


def cases_played(showing: Iterable[str], apis: Iterable[str]) -> set[str] | None:
    """The cases of `apis` played against a fault whose findings show on the cases `showing`: every case in
    `make test` (None); in `make check` those, or a sample of `apis`' cases when there are none (a variant, which
    no check may report)."""
    if not CHECK:
        return None
    return set(showing) or set(sampled(apis))


def sampled(apis: Iterable[str]) -> tuple[str, ...]:
    """One case in SAMPLE_EVERY of each of `apis`, by id."""
    return tuple(case.id for api in apis for case in load_cases(api)[::SAMPLE_EVERY])


# A run of the whole suite in a subprocess, in `make check`: it tests what the subprocess does (its exit status, its
# output, its files), which a sample shows as well as the whole. It keeps the schemas' checks, which judge every case
# of every API, and plays one case in SAMPLE_EVERY of each API; a test adds the checks it is about (the clients',
# whose SDKs take two seconds to import) and the cases it needs (those a fault shows on: `shown_by`). `make test`
# plays every case with every check.
SUITE_CHECKS = ("schema.*",) if CHECK else ()
SUITE_CASES = sampled(APIS) if CHECK else ()


def suite_checks(*also: str) -> tuple[str, ...]:
    """The checks a run of the whole suite keeps: every one in `make test` (none named); in `make check`
    SUITE_CHECKS and those `also` names, which the test is about."""
    return (*SUITE_CHECKS, *also) if CHECK else ()


def suite_cases(*also: str) -> tuple[str, ...] | None:
    """The cases a run of the whole suite plays: every one in `make test` (None); in `make check` SUITE_CASES and
    those `also` names."""
    return (*SUITE_CASES, *also) if CHECK else None


def case_options(*also: str) -> list[str]:
    """`pytest suites` options that play suite_cases(*also)."""
    return [option for case in suite_cases(*also) or () for option in ("--cases", case)]


def suite_options(*also: str, cases: Iterable[str] = ()) -> list[str]:
    """`pytest suites` options that keep suite_checks(*also) and play suite_cases(*cases)."""
    return [*(option for glob in suite_checks(*also) for option in ("--checks", glob)), *case_options(*cases)]


def shown_by(fault: str) -> tuple[str, ...]:
    """The cases the findings of a fault of the reference server show on (its row's shown_by in
    fixtures/catalogue.toml), in order."""
    from tools.catalogue import load

    return tuple(sorted(load().server[fault].shown_by))


def fuzz_examples() -> int:
    """The requests each generated case of a whole-suite run sends: the suite's default in `make test`, a tenth of it
    in `make check`. They are half of such a run's time, and the tests of the generated requests themselves
    (tests/test_generated_requests.py, tests/test_fuzz.py) set their own numbers."""
    return examples(DEFAULT_FUZZ_EXAMPLES)


def suite_settings() -> RunSettings:
    """The in-process run's settings that match a subprocess run with fuzz_options()."""
    return RunSettings(fuzz_examples=fuzz_examples())


def fuzz_options() -> list[str]:
    """`pytest suites` options for fuzz_examples(); none in `make test`, where the suite's default holds."""
    return ["--fuzz-examples", str(fuzz_examples())] if CHECK else []


def suite_command(*args: str) -> list[str]:
    """`pytest suites` in a subprocess, as users run it, with fuzz_options(); `args` come after, so a test's own
    options win."""
    return [sys.executable, "-m", "pytest", str(ROOT / "suites"), "-p", "no:cacheprovider", *fuzz_options(), *args]
