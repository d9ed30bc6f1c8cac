"""`bench fuzz`: lmconform's generated requests against schemathesis on the same reference server, the same number
of examples, in one run (goal: 2x schemathesis' requests per second).

lmconform generates valid and invalid requests of chat completions and the Responses API and judges every answer
with every check that applies (streams included); schemathesis generates from the `lmconform openapi` document and
runs its own checks. Both count requests the server answered. The server runs in a process of its own, as a user's
does: in lmconform's process it would take its CPU time from lmconform's side alone. schemathesis is installed for
the bench only (the `bench` group of pyproject.toml, which `make bench` installs); without it the line says so.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from lmconform.cases import load_cases
from lmconform.fuzz import requests
from lmconform.run import RunPlan
from lmconform.settings import RunSettings
from lmconform.target import Target
from tools.targets.servers import reference_server

EXAMPLES = 100  # per operation and mode for schemathesis; per generated case for lmconform


def lmconform_rate(base_url: str) -> tuple[int, float]:
    """Requests lmconform's generated cases sent, and the seconds they took (generation and judging included)."""
    apis = ("chat", "responses")
    sources = [case for api in apis for case in load_cases(api) if case.source == requests.SOURCE]
    started = time.perf_counter()  # the run's start counts, as schemathesis' does on its side
    run = RunPlan(Target(base_url=base_url, profile="reference"), apis=apis, probe=False,
                  settings=RunSettings(fuzz_examples=EXAMPLES)).start()
    sent = 0
    try:
        for case in sources:
            examples = run.examples(case)
            for check in run.checks:  # judged as a run judges them: every check that applies
                run.judge(case, check)
            sent += len(examples)
    finally:
        run.close()
    return sent, time.perf_counter() - started


def schemathesis_command() -> list[str] | None:
    found = shutil.which("schemathesis") or shutil.which("st")
    if found:
        return [found]
    beside = Path(sys.executable).with_name("schemathesis")
    return [str(beside)] if beside.exists() else None


def schemathesis_rate(command: list[str], base_url: str, folder: Path) -> tuple[int, float]:
    """Requests schemathesis sent (counted from its HAR report), and the seconds its run took."""
    document, har = folder / "openapi.json", folder / "schemathesis.har"
    subprocess.run([sys.executable, "-m", "lmconform.cli", "openapi", "--level", "MUST", "-o", str(document)],
                   check=True, capture_output=True)
    started = time.perf_counter()
    subprocess.run([*command, "run", str(document), "--url", base_url, "--max-examples", str(EXAMPLES),
                    "--report", "har", "--report-har-path", str(har)],
                   capture_output=True, text=True, timeout=3600, cwd=folder)  # its cache stays in the folder
    elapsed = time.perf_counter() - started
    entries = json.loads(har.read_text())["log"]["entries"] if har.exists() else []
    return len(entries), elapsed


def bench() -> list[str]:
    command = schemathesis_command()
    if command is None:
        return ["bench fuzz: skipped: schemathesis is not installed (make bench installs the `bench` group)"]
    with reference_server() as server, tempfile.TemporaryDirectory() as folder:
        ours, our_seconds = lmconform_rate(server.base_url)
        theirs, their_seconds = schemathesis_rate(command, server.base_url, Path(folder))
    if not theirs:
        return ["bench fuzz: schemathesis sent no request (see `schemathesis run --help` for this version's options)"]
    ratio = (ours / our_seconds) / (theirs / their_seconds)
    return [f"bench fuzz: {ratio:.2f}x schemathesis requests/s (lmconform {ours} requests in {our_seconds:.1f} s, "
            f"every check judging each; schemathesis {theirs} in {their_seconds:.1f} s)"]
