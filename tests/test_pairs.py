"""A pair (`"pair": "stream"`) is judged on two requests, so its failure text replays both: the request as the case
sends it and in its other form, each a `Reproduce:` line, and the curl of the record holds both."""

from __future__ import annotations

import json

from lmconform.run import run_suite
from lmconform.target import Target


def test_a_pairs_failure_replays_both_of_its_requests(server):
    target = Target(base_url=f"{server.base_url}/faults/stream-finish-differs", profile="reference")
    run = run_suite(target, apis=("chat",), include=["generation.pair.finish_agrees"])
    [verdict] = [verdict for verdict in run.verdicts if verdict.case_id == "chat/forced-enum-tool-stream"]
    assert str(verdict.outcome) == "FAILED"
    commands = [line.removeprefix("Reproduce: ") for line in verdict.message.splitlines()
                if line.startswith("Reproduce: ")]
    assert commands == verdict.record()["curl"].splitlines() and len(commands) == 2
    bodies = [json.loads(command.rsplit("--data-binary ", 1)[1].strip("'")) for command in commands]
    assert bodies[0]["stream"] is True and {key: value for key, value in bodies[0].items() if key != "stream"} == bodies[1]
