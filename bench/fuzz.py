"""`bench fuzz`: lmconform's generated requests against schemathesis on the same reference server, in one run (goal:
2x schemathesis' requests per second).

lmconform generates valid and invalid requests of chat completions and the Responses API and judges every answer
with every check that applies (streams included); schemathesis generates from the `lmconform openapi` document and
runs its own checks. Both count requests the server answered. Each side sends about as many requests as the other:
schemathesis goes first in each round with its default budget (EXAMPLES examples per operation and phase), and
lmconform's generated cases then share as many examples as schemathesis sent. Each side's start (imports, the first
models of the SDKs, a schema's first compile) is then spread over as many requests as the other's; with lmconform held
at EXAMPLES per case it sent 400 requests to schemathesis' 700 to 1,250, and its second of start weighed twice as much.
The server runs in a process of its own, as a user's does: in lmconform's process it would take its CPU time from
lmconform's side alone. Each side runs in a new process each round (the openai SDK's import and first models count on
lmconform's side every time, as schemathesis' start does on its own); the rounds alternate and each side's best rate
counts, as in the other benches (bench.timing): one round of either side swings by a third with whatever else the
machine does. schemathesis is installed for the bench only (the `bench` group of pyproject.toml, which `make bench`
installs); without it the line says so.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from lmconform.cases import Case, load_cases
from lmconform.fuzz import requests
from lmconform.run import RunPlan
from lmconform.settings import RunSettings
from lmconform.target import Target
from tools.targets.servers import reference_server

EXAMPLES = 100  # schemathesis' examples per operation and phase
ROUNDS = 3
APIS = ("chat", "responses")


def generated_cases() -> list[Case]:
    """The cases of APIS whose requests are generated: the examples each round shares out among them."""
    return [case for api in APIS for case in load_cases(api) if case.source == requests.SOURCE]


def lmconform_rate(base_url: str, examples: int) -> tuple[int, float]:
    """Requests lmconform's generated cases sent with `examples` each, and the seconds they took (generation and
    judging included)."""
    sources = generated_cases()
    started = time.perf_counter()  # the run's start counts, as schemathesis' does on its side
    run = RunPlan(Target(base_url=base_url, profile="reference"), apis=APIS, probe=False,
                  settings=RunSettings(fuzz_examples=examples)).start()
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


class RoundFailed(Exception):
    pass


def lmconform_rate_apart(base_url: str, examples: int) -> tuple[int, float]:
    """lmconform_rate in a new process."""
    finished = subprocess.run([sys.executable, "-m", "bench.fuzz", base_url, str(examples)], capture_output=True,
                              text=True, timeout=3600)
    if finished.returncode != 0:
        raise RoundFailed((finished.stderr.strip().splitlines() or ["no output"])[-1])
    sent, seconds = json.loads(finished.stdout)
    return sent, seconds


def schemathesis_command() -> list[str] | None:
    found = shutil.which("schemathesis") or shutil.which("st")
    if found:
        return [found]
    beside = Path(sys.executable).with_name("schemathesis")
    return [str(beside)] if beside.exists() else None


def schemathesis_rate(command: list[str], base_url: str, folder: Path) -> tuple[int, float]:
    """Requests schemathesis sent (counted from its HAR report), and the seconds its run took."""
    folder.mkdir(parents=True, exist_ok=True)
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
    ours: list[tuple[int, float]] = []
    theirs: list[tuple[int, float]] = []
    cases = len(generated_cases())
    with reference_server() as server, tempfile.TemporaryDirectory() as folder:
        for round_number in range(ROUNDS):
            theirs.append(schemathesis_rate(command, server.base_url, Path(folder) / str(round_number)))
            if not theirs[-1][0]:
                return ["bench fuzz: schemathesis sent no request (see `schemathesis run --help` for this version's "
                        "options)"]
            try:
                ours.append(lmconform_rate_apart(server.base_url, max(1, round(theirs[-1][0] / cases))))
            except RoundFailed as failure:
                return [f"bench fuzz: lmconform's side failed: {failure}"]
    (our_sent, our_seconds), (their_sent, their_seconds) = (max(runs, key=lambda run: run[0] / run[1])
                                                            for runs in (ours, theirs))
    ratio = (our_sent / our_seconds) / (their_sent / their_seconds)
    return [f"bench fuzz: {ratio:.2f}x schemathesis requests/s, best round of {ROUNDS} each, as many requests each "
            f"(lmconform {our_sent} requests in {our_seconds:.1f} s, every check judging each; schemathesis "
            f"{their_sent} in {their_seconds:.1f} s)"]


if __name__ == "__main__":  # one round of lmconform's side, in a process of its own (lmconform_rate_apart)
    print(json.dumps(lmconform_rate(sys.argv[1], int(sys.argv[2]))))
