"""Results records (docs/results-record.md) read back from files: what the run's page, the matrix and other reports
are built from.

Only the record is read, never the check registry, so records written by other versions of the suite are read too.
"""

from __future__ import annotations

import gzip
import json
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from lmconform.vocabulary import CHECK_KINDS, Outcome, surface_of

GZIP_MAGIC = b"\x1f\x8b"


class RecordError(Exception):
    """A results file that cannot be read as a results record, or an output that cannot be written."""


@dataclass(frozen=True)
class Known:
    """The entry of a known-verdicts file (--expect) a verdict was expected to match."""

    outcomes: tuple[str, ...]
    reason: str
    model_dependent: bool = False  # the outcome depends on what the model said, not on what the server does
    file: str = ""


@dataclass(frozen=True)
class KeywordGrade:
    """What the target did with one row of a graded matrix (docs/results-record.md): a JSON Schema keyword family
    (`schema_keyword`: enforced, refused or ignored), a Responses tool type (`tool_type`: honoured, refused or
    dropped), a field a client sends (`request_field`) or an optional request parameter (`parameter`): honoured,
    refused or ignored."""

    family: str
    grade: str
    evidence: str


@dataclass(frozen=True)
class CaseResult:
    """One row of a results record: the verdict of one check on one case."""

    case: str
    check: str
    level: str
    outcome: str
    title: str = ""
    message: str = ""
    curl: str = ""
    evidence: str = ""
    kind: str = "wire"  # "wire", "client" (replayed through a client), "differential" or "agent" (a coding agent)
    known: Known | None = None
    agent: str = ""  # for a case of a coding agent: the agent and its version, `Claude Code 2.1.332`
    pass_k: str = ""  # with --repeat K: "held/sent"
    schema_keyword: KeywordGrade | None = None  # a row of the keyword matrix
    tool_type: KeywordGrade | None = None  # a row of the tool-type matrix
    request_field: KeywordGrade | None = None  # a row of the matrix of the fields a client sends
    parameter: KeywordGrade | None = None  # a row of the matrix of the optional request parameters

    @property
    def surface(self) -> str:
        return surface_of(self.check)

    @property
    def api(self) -> str:
        """The API of the case: the first part of `<api>/<slug>`."""
        return self.case.partition("/")[0]

    def lines(self, prefix: str) -> list[str]:
        """The message's lines that start with `prefix` (`Expected:`, `Actual:`…), the prefix taken off."""
        return [line[len(prefix):].strip() for line in self.message.splitlines() if line.startswith(prefix)]

    @property
    def reason(self) -> str:
        """What happened, in one line: the first `Actual:` of the message, else the reason given for an ERROR or
        UNSUPPORTED, else what was observed; a passing verdict has none."""
        if self.outcome == Outcome.OK:
            return ""
        for prefix in ("Actual:", f"{self.outcome}:", "Observed:"):
            found = self.lines(prefix)
            if found:
                return found[0]
        return self.title


@dataclass(frozen=True)
class RunTarget:
    url: str
    label: str
    model: str = ""
    server_version: str = ""
    started: str = ""
    profile: str = ""
    fingerprint: dict = field(default_factory=dict)  # kind, version_bracket, engine, evidence, and how it was built
    lmconform: str = ""  # the version of lmconform that wrote the record
    bridge: dict = field(default_factory=dict)  # a VS Code bridge tested: its command, model and profile

    @property
    def subject(self) -> str:
        """The target as a sentence names it: the name the user gave it (--target-name), else "the target" (the
        default label, the address or "reference", reads as a typo at the head of a sentence)."""
        defaults = {"reference", "target", self.url.split("://", 1)[-1].rstrip("/")}
        return self.label if self.label and self.label not in defaults else "the target"


@dataclass(frozen=True)
class RunResults:
    source: Path
    target: RunTarget
    results: tuple[CaseResult, ...]
    exchanges: dict[str, str] = field(default_factory=dict)  # case id -> the exchange as text, for cases with findings
    nothing_to_judge: int = 0  # (case, check) pairs whose check found nothing to judge in the answer
    timing: dict[str, CaseTiming] = field(default_factory=dict)  # case id -> when its answer arrived


@dataclass(frozen=True)
class CaseTiming:
    """When one case's answer arrived (lmconform.run.timing); a figure the record does not give is None."""

    first_byte_s: float | None = None
    first_token_s: float | None = None
    total_s: float | None = None
    tokens_per_s: float | None = None
    events: int | None = None
    longest_gap_s: float | None = None
    median_gap_s: float | None = None
    curve: tuple[tuple[float, int], ...] = ()  # (seconds, events so far)


def timing_of(document: dict) -> dict[str, CaseTiming]:
    """The timing a record keeps, by case id; a record written before it kept any, or a figure that is not a
    number, gives nothing for it (timing informs, it never makes a record unreadable)."""
    entries = document.get("timing")
    if not isinstance(entries, dict):
        return {}

    def number(entry: dict, key: str) -> float | None:
        value = entry.get(key)
        return value if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0 else None

    timings = {}
    for case, entry in entries.items():
        if not isinstance(entry, dict):
            continue
        points = entry.get("curve")
        points = points if isinstance(points, list) else []
        curve = tuple((float(point[0]), int(point[1])) for point in points
                      if isinstance(point, list) and len(point) == 2
                      and all(isinstance(part, (int, float)) and not isinstance(part, bool) for part in point))
        events = number(entry, "events")
        timings[case] = CaseTiming(number(entry, "first_byte_s"), number(entry, "first_token_s"),
                                   number(entry, "total_s"), number(entry, "tokens_per_s"),
                                   int(events) if events is not None else None, number(entry, "longest_gap_s"),
                                   number(entry, "median_gap_s"), curve)
    return timings


def load_results(paths: list[Path | str]) -> list[RunResults]:
    """Each file read and checked as a results record; the first bad one raises a RecordError naming it."""
    return [load_run(Path(path)) for path in paths]


def load_run(path: Path) -> RunResults:
    """A record file, as written (JSON) or gzip-compressed (`--results-json results.json.gz`): told apart by its first
    bytes, not its name, so a renamed file reads too."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise RecordError(f"{path}: no such file") from None
    except OSError as error:
        raise RecordError(f"{path}: cannot read: {error.strerror or error}") from None
    if data.startswith(GZIP_MAGIC):
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as error:
            raise RecordError(f"{path}: a damaged gzip file ({error})") from None
    try:
        document = json.loads(data)
    except ValueError as error:
        raise RecordError(f"{path}: not JSON ({error})") from None
    return read_document(document, path)


def read_document(document: object, path: Path) -> RunResults:
    if not isinstance(document, dict):
        raise RecordError(f"{path}: not a results record: the top level is not an object")
    target = field_of(document, "target", dict, path, "the record")
    rows = field_of(document, "results", list, path, "the record")
    curls = texts_by_case(document, "curls", path)
    return RunResults(
        source=path,
        target=RunTarget(
            url=text_field(target, "url", path, "target"),
            label=text_field(target, "label", path, "target"),
            model=text_field(target, "model", path, "target", required=False),
            server_version=text_field(target, "server_version", path, "target", required=False),
            started=text_field(document, "started", path, "the record", required=False),
            profile=text_field(target, "profile", path, "target", required=False),
            bridge=target.get("bridge") if isinstance(target.get("bridge"), dict) else {},
            fingerprint=target["fingerprint"] if isinstance(target.get("fingerprint"), dict) else {},
            lmconform=text_field(document, "lmconform", path, "the record", required=False),
        ),
        results=tuple(case_result(row, path, f"results[{index}]", curls) for index, row in enumerate(rows)),
        exchanges=texts_by_case(document, "exchanges", path),
        nothing_to_judge=count_field(document, "nothing_to_judge", path),
        timing=timing_of(document),
    )


def texts_by_case(document: dict, key: str, path: Path) -> dict[str, str]:
    """A text per case id (`exchanges`, `curls`); a record written before it kept them has none."""
    texts = document.get(key, {})
    if not isinstance(texts, dict) or not all(isinstance(text, str) for text in texts.values()):
        raise RecordError(f"{path}: the record: {key!r} is not an object of case ids and texts")
    return texts


def count_field(record: dict, key: str, path: Path) -> int:
    """An optional count: absent is 0."""
    value = record.get(key, 0)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise RecordError(f"{path}: the record: {key!r} is not a count")
    return value


def case_result(row: object, path: Path, where: str, curls: dict[str, str]) -> CaseResult:
    """A row; without a curl of its own, it replays its case's (`curls`: records before it kept one on every row)."""
    if not isinstance(row, dict):
        raise RecordError(f"{path}: {where} is not an object")
    outcome = text_field(row, "outcome", path, where)
    if outcome not in set(Outcome):
        raise RecordError(f"{path}: {where}.outcome {outcome!r:.60} is not one of {', '.join(Outcome)}")
    check = text_field(row, "check", path, where)
    kind = text_field(row, "kind", path, where, required=False) or kind_of(check)
    if kind not in CHECK_KINDS:
        raise RecordError(f"{path}: {where}.kind {kind!r:.60} is not one of {', '.join(CHECK_KINDS)}")
    case = text_field(row, "case", path, where)
    return CaseResult(
        case=case,
        check=check,
        level=text_field(row, "level", path, where),
        outcome=outcome,
        title=text_field(row, "title", path, where, required=False),
        message=text_field(row, "message", path, where, required=False),
        curl=text_field(row, "curl", path, where, required=False) if "curl" in row else curls.get(case, ""),
        evidence=text_field(row, "evidence", path, where, required=False),
        kind=kind,
        known=known_of(row.get("expected")),
        agent=text_field(row, "agent", path, where, required=False),
        pass_k=row["pass_k"] if isinstance(row.get("pass_k"), str) else "",
        schema_keyword=keyword_grade_of(row.get("schema_keyword")),
        tool_type=keyword_grade_of(row.get("tool_type")),
        request_field=keyword_grade_of(row.get("request_field")),
        parameter=keyword_grade_of(row.get("parameter")),
    )


def keyword_grade_of(entry: object) -> KeywordGrade | None:
    """A graded matrix's grade in a row, when it is well formed; records before the matrix had none."""
    fields = [entry.get(name) if isinstance(entry, dict) else None for name in ("family", "grade", "evidence")]
    family, grade, evidence = (value if isinstance(value, str) else None for value in fields)
    if family is None or grade is None or evidence is None:
        return None
    return KeywordGrade(family, grade, evidence)


def kind_of(check: str) -> str:
    """The kind of a check, for records written before rows carried it: client checks are on `client.*`
    surfaces, differential ones on `proxy`."""
    surface = surface_of(check)
    return "client" if surface.startswith("client.") else "differential" if surface == "proxy" else "wire"


def known_of(entry: object) -> Known | None:
    """The known-verdicts entry beside a row, when it is well formed; anything else is no entry."""
    if not isinstance(entry, dict) or not isinstance(entry.get("reason"), str):
        return None
    outcomes = entry.get("outcomes")
    outcomes = tuple(outcome for outcome in outcomes if outcome in set(Outcome)) if isinstance(outcomes, list) else ()
    return Known(outcomes, entry["reason"], entry.get("model_dependent") is True,
                 entry["file"] if isinstance(entry.get("file"), str) else "")


def results_of(document: dict, source: Path = Path("results.json")) -> RunResults:
    """A results record already in memory (a run's `results()`), read as a file would be."""
    return read_document(document, source)


def field_of(record: dict, key: str, kind: type, path: Path, where: str):
    if key not in record:
        raise RecordError(f"{path}: {where} has no {key!r}")
    if not isinstance(record[key], kind):
        raise RecordError(f"{path}: {where}: {key!r} is not {'an object' if kind is dict else 'a list'}")
    return record[key]


def text_field(record: dict, key: str, path: Path, where: str, required: bool = True) -> str:
    """A string field; an optional one may be absent or null (a run that never learnt the server version)."""
    value = record.get(key)
    if value is None and not required:
        return ""
    if key not in record:
        raise RecordError(f"{path}: {where} has no {key!r}")
    if not isinstance(value, str):
        raise RecordError(f"{path}: {where}: {key!r} is not a string")
    return value
