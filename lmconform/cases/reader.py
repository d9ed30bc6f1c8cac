"""Reading cases: `<slug>.json` files in each API's folder (`lmconform/apis/<api>/cases/`, shipped with the package)
or in any cases folder laid out as `<api>/<slug>.json`, each validated by case.schema.json, the fixture format's own
schema."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from functools import cache
from pathlib import Path

import jsonschema

from lmconform.api_table import APIS, HTTP, STDIO, api_of
from lmconform.cases.model import FIRST, PLACEHOLDER, AgentTask, Case, HttpTurn, StdioTurn
from lmconform.wire.redact import SECRET_HEADERS

CASE_SCHEMA = Path(__file__).resolve().parent / "case.schema.json"
# The cases lmconform ships: each API's in the `cases/` folder of the API's own folder.
CASES_DIR = Path(__file__).resolve().parent.parent / "apis"


class CaseError(ValueError):
    pass


@cache
def case_validator() -> jsonschema.Draft202012Validator:
    schema = json.loads(CASE_SCHEMA.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def cases_folder(root: Path, api: str) -> Path:
    """Where the cases of `api` are under `root`: `<root>/<api>/cases/` in a folder laid out as lmconform/apis (an
    API's own folder, which holds more than its cases), `<root>/<api>/` in any other cases folder."""
    own = root / api / "cases"
    return own if own.is_dir() else root / api


def api_of_file(path: Path) -> str:
    """The API a case file belongs to, from the folder it is in (see cases_folder)."""
    folder = path.parent
    return folder.parent.name if folder.name == "cases" else folder.name


def load_case(path: Path) -> Case:
    try:
        data = json.loads(path.read_text())
    except ValueError as error:
        raise CaseError(f"{path}: not JSON: {error}") from None
    errors = sorted(case_validator().iter_errors(data), key=lambda e: list(e.path))
    if errors:
        raise CaseError(f"{path}: {errors[0].message} at {'/'.join(map(str, errors[0].path)) or '(top)'}")
    api = api_of_file(path)
    request = data["request"]
    names = [FIRST, *(turn["name"] for turn in data.get("turns", ()))]
    for turn in data.get("turns", ()):
        for reference in (turn.get("previous"), turn.get("answers_call_of"), turn.get("compaction_of")):
            if reference is not None and reference not in names[:names.index(turn["name"])]:
                raise CaseError(f"{path}: turn {turn['name']!r} refers to {reference!r}, which is not an earlier turn")
    if len(set(names)) != len(names):
        raise CaseError(f"{path}: two turns share a name")
    _fits_its_transport(path, data)
    return Case(
        id=f"{api}/{path.stem}",
        api=api,
        slug=path.stem,
        description=data["description"],
        provenance=data["provenance"],
        method=request.get("method", api_of(api).method),
        path=request.get("path", api_of(api).path),
        body=request.get("body"),
        raw_body=request.get("raw_body"),
        expect_status=data["expect"]["status"],
        feature=data.get("feature"),
        schema_keyword=data.get("schema_keyword"),
        tool_type=data.get("tool_type"),
        replay=data.get("replay"),
        websocket=data.get("websocket"),
        plays=data.get("plays", 1),
        overflows_context=data.get("overflows_context", False),
        request_field=data.get("request_field"),
        headers=tuple(request.get("headers", {}).items()),
        parameter=data.get("parameter"),
        turns=_turns(api, data.get("turns", ())),
        source=data.get("source"),
        notification=request.get("notification", False),
        request_id=request.get("id"),
        expect_code=data["expect"].get("code"),
        omit=frozenset(data.get("omit", ())),
        agent=AgentTask(**data["agent"]) if "agent" in data else None,
        pair=data.get("pair"),
    )


def _turns(api: str, documents: Iterable[dict]) -> tuple[HttpTurn, ...] | tuple[StdioTurn, ...]:
    """A case's further turns, of its API's transport."""
    if api_of(api).transport == STDIO:
        return tuple(StdioTurn(**turn) for turn in documents)
    return tuple(HttpTurn(**turn) for turn in documents)


# What only one transport's cases may say.
_HTTP_METHODS = {"GET", "POST", "DELETE"}
_STDIO_REQUEST_KEYS = {"notification", "id"}
_STDIO_TURN_KEYS = {"notification", "id", "raw_body", "cancels", "after_parts", "edited_answer"}
_HTTP_TURN_KEYS = {"recall", "path", "compaction_of", "reconnect"}


def _fits_its_transport(path: Path, data: dict) -> None:
    """An HTTP case speaks HTTP (a method such as POST, a path); a stdio case speaks JSON-RPC (a method such as
    lm/cancel, no path), and what its turns name must be earlier turns."""
    api = api_of(api_of_file(path))
    request, turns = data["request"], data.get("turns", ())
    credentials = sorted(name for name in request.get("headers", {}) if name.lower() in SECRET_HEADERS)
    if credentials:
        raise CaseError(f"{path}: a case never carries a credential ({', '.join(credentials)}): the target's key is "
                        "the run's (--api-key)")
    if api.transport == HTTP:
        stray = sorted((_STDIO_REQUEST_KEYS & set(request)) | {key for turn in turns for key in _STDIO_TURN_KEYS & set(turn)})
        methods = [request.get("method", "POST"), *(turn.get("method", "POST") for turn in turns)]
        if set(methods) - _HTTP_METHODS or stray or "code" in data["expect"]:
            raise CaseError(f"{path}: an HTTP case has HTTP methods and none of {', '.join(stray) or 'the stdio fields'}")
        names = [FIRST]
        for turn in turns:
            unknown = sorted(set(PLACEHOLDER.findall(turn.get("path", ""))) - set(names))
            if unknown:
                raise CaseError(f"{path}: turn {turn['name']!r} names {', '.join(unknown)} in its path, which is no "
                                "earlier turn")
            names.append(turn["name"])
        return
    if "path" in request or "headers" in request or request.get("method", api.method) in _HTTP_METHODS \
            or "pair" in data:
        raise CaseError(f"{path}: a {api.transport} case names a JSON-RPC method, no path, no headers and no pair")
    stray = sorted({key for turn in turns for key in _HTTP_TURN_KEYS & set(turn)}
                   | {"an HTTP method" for turn in turns if turn.get("method") in _HTTP_METHODS})
    if stray:
        raise CaseError(f"{path}: a {api.transport} case's turns have none of {', '.join(stray)}")
    if request.get("notification") and "id" in request:
        raise CaseError(f"{path}: a notification has no id")
    names = [FIRST]
    for turn in turns:
        if turn.get("cancels") is not None and turn["cancels"] not in names:
            raise CaseError(f"{path}: turn {turn['name']!r} cancels {turn['cancels']!r}, which is not an earlier turn")
        if turn.get("notification") and "id" in turn:
            raise CaseError(f"{path}: turn {turn['name']!r} is a notification and has an id")
        names.append(turn["name"])


def case_files(root: Path = CASES_DIR) -> list[Path]:
    """Every case file under `root`, API by API in the table's order."""
    return [path for api in APIS for path in sorted(cases_folder(root, api).glob("*.json"))]


def case_file(case_id: str, root: Path = CASES_DIR) -> Path:
    """The file of a case by its id (`chat/void-weather-tool`)."""
    api, slug = case_id.split("/", 1)
    return cases_folder(root, api) / f"{slug}.json"


@cache
def load_cases(api: str, root: Path = CASES_DIR) -> tuple[Case, ...]:
    return tuple(load_case(path) for path in sorted(cases_folder(root, api).glob("*.json")))


def unmatched_case_patterns(patterns: Iterable[str]) -> Iterator[str]:
    """Globs that name no case of any API (Case.named_by): almost always a typo, reported as a usage error."""
    cases = [case for api in APIS for case in load_cases(api)]
    for pattern in patterns:
        if not any(case.named_by(pattern) for case in cases):
            yield pattern
