"""Captured answers of the real servers: every exchange of every case, as the suite played it against each target of
fixtures/targets/, kept under fixtures/captures/<target>/ with where and how it was captured, so that the schemas
can be checked against real answers without starting a server.

    python -m tools.targets.captures                     # every target (about 10 minutes on 2 cores)
    python -m tools.targets.captures llama-server        # one

A capture is `<api>/<slug>.json` holding the case id and each exchange (the request's, then each turn's): what was
sent (method, path, JSON body), the status, the content type and the body as text. `provenance.json` says which
server, version, model and build answered, when, and with which lmconform. `observed(...)` reads a capture back into
the `Observed` the checks judge.
"""

from __future__ import annotations

import argparse
import base64
import json
import sys
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from lmconform import __version__
from lmconform.cases import FIRST, case_file, load_case
from lmconform.checks.observed import Observed, PlayedTurn
from lmconform.files import write_json_atomically
from lmconform.reference import ReferenceServer
from lmconform.target import Target
from lmconform.wire.exchange import BodyChunk
from lmconform.wire.http import HttpExchange, HttpRequest, route_missing
from tools.targets.expected import TargetFile, load_target_file, run_target_file
from tools.targets.process import RunningTarget
from tools.targets.servers import litellm_proxy, llama_cpp_python, llama_server

ROOT = Path(__file__).resolve().parent.parent.parent
TARGET_FILES = ROOT / "fixtures" / "targets"
CAPTURES = ROOT / "fixtures" / "captures"
CAPTURED_HOST = "http://captured.invalid"  # the address a replayed request names: a capture is no live server
PROVENANCE = "provenance.json"
KNOWN = ("llama-cpp-python", "llama-server", "litellm-reference", "litellm-llama-server")


def _exchange_record(name: str, exchange: HttpExchange) -> dict[str, Any]:
    request = exchange.request
    record: dict[str, Any] = {"name": name, "method": request.method, "path": urlsplit(request.url).path,
                              "body": request.body,
                              "status": exchange.status, "content_type": exchange.headers.get("content-type", "")}
    try:
        record["text"] = exchange.body.decode("utf-8")
    except UnicodeDecodeError:
        record["base64"] = base64.b64encode(exchange.body).decode("ascii")
    if exchange.error:
        record["error"] = exchange.error
    return record


def capture_record(observed: Observed) -> dict[str, Any]:
    exchanges = [_exchange_record(FIRST, observed.exchange)]
    exchanges += [_exchange_record(name, played.exchange) for name, played in observed.turns.items()
                  if played.exchange is not None]
    return {"case": observed.case.id, "exchanges": exchanges}


def _exchange(record: dict[str, Any]) -> HttpExchange:
    body = base64.b64decode(record["base64"]) if "base64" in record else record["text"].encode("utf-8")
    request = HttpRequest(record["method"], CAPTURED_HOST + record["path"], {}, record["body"])
    return HttpExchange(request=request, chunks=[BodyChunk(0.0, body)] if body else [], status=record["status"],
                        headers={"content-type": record["content_type"]}, error=record.get("error"))


def observed(capture: dict[str, Any], target: Target) -> Observed:
    """A capture as the checks see it: the case, its answer and its turns' answers."""
    case = load_case(case_file(capture["case"]))
    by_name = {record["name"]: _exchange(record) for record in capture["exchanges"]}
    turns = {turn.name: PlayedTurn(turn, by_name[turn.name]) for turn in case.turns if turn.name in by_name}
    return Observed(case, target, by_name[FIRST], turns)


def replayed(name: str, target: Target) -> list[Observed]:
    """Every capture of a target as the checks see it, a case whose optional route the target lacks marked so, as the
    run decided it: from the answer to the first valid case of the same feature."""
    seen = [observed(capture, target) for capture in captures(name)]
    by_id = {one.case.id: one for one in seen}
    for one in seen:
        if one.case.feature:
            probe = next((other for other in seen if other.case.feature == one.case.feature and other.case.valid),
                         one)
            one.feature_missing = route_missing(by_id[probe.case.id].exchange)
    return seen


def captures(name: str) -> Iterator[dict[str, Any]]:
    """Every capture of a target, in case order."""
    for path in sorted((CAPTURES / name).glob("*/*.json")):
        yield json.loads(path.read_text())


def provenance(name: str) -> dict[str, Any]:
    return json.loads((CAPTURES / name / PROVENANCE).read_text())


@contextmanager
def _running(name: str, spec: TargetFile) -> Iterator[tuple[RunningTarget, str | None]]:
    """The target of a file started as tests/test_real_targets.py starts it, and its upstream's URL if a proxy."""
    with ExitStack() as stack:
        if name == "llama-cpp-python":
            yield stack.enter_context(llama_cpp_python()), None
        elif name == "llama-server":
            yield stack.enter_context(llama_server()), None
        elif name == "litellm-reference":
            upstream = stack.enter_context(ReferenceServer())
            yield stack.enter_context(litellm_proxy(upstream.base_url, spec.model, label=spec.label)), \
                upstream.base_url
        elif name == "litellm-llama-server":
            upstream = stack.enter_context(llama_server())
            yield stack.enter_context(litellm_proxy(upstream.base_url, spec.model, label=spec.label)), \
                upstream.base_url
        else:
            raise ValueError(f"no way to start {name!r}: one of {', '.join(KNOWN)}")


def capture(name: str) -> int:
    spec = load_target_file(TARGET_FILES / f"{name}.toml")
    with _running(name, spec) as (running, upstream_url):
        run = run_target_file(spec, running, upstream_url)
    folder = CAPTURES / name
    for old in folder.glob("*/*.json"):
        old.unlink()
    kept = 0
    for case_id, seen in sorted(run.observations().items()):
        if load_case(case_file(case_id)).source:  # a source of generated cases: no answer of its own
            continue
        write_json_atomically(folder / f"{case_id}.json", capture_record(seen))
        kept += 1
    target = run.target
    write_json_atomically(folder / PROVENANCE, {
        "target": name, "label": target.label, "start": spec.start, "server_version": target.server_version,
        "model": target.model, "max_tokens": spec.max_tokens, "temperature": spec.temperature,
        "fingerprint": target.fingerprint, "captured": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "lmconform": __version__, "command": f"python -m tools.targets.captures {name}",
        "note": "what the suite's cases got from this server; tests/test_schemas.py checks the schemas against it",
    })
    print(f"{name}: {kept} cases captured in {folder.relative_to(ROOT)}")
    return kept


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.targets.captures", description=__doc__.split("\n\n")[0])
    parser.add_argument("targets", nargs="*", metavar="TARGET", help=f"one of {', '.join(KNOWN)} (default: all)")
    names = parser.parse_args(argv).targets or list(KNOWN)
    unknown = sorted(set(names) - set(KNOWN))
    if unknown:
        parser.error(f"unknown target {', '.join(unknown)}; known: {', '.join(KNOWN)}")
    for name in names:
        capture(name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
