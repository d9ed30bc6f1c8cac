"""What concurrency buys against a real model server (`python -m bench real`, `make bench-real`; the servers of
`make targets` must be installable, so it is not part of `make bench`):

- `bench real concurrency: <server> X.XXx with -n 2` — the suite's run time with one case at a time over its time
  with two pytest-xdist workers sending cases at once, against each llama.cpp server with Gemma 3 270M, run as
  the real-server tests run it (one thread, the expected-verdict file's options). A ratio above 1 is time saved.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path

from tools.targets.expected import TargetFile, load_target_file
from tools.targets.process import RunningTarget
from tools.targets.servers import llama_cpp_python, llama_server

ROOT = Path(__file__).resolve().parent.parent
SERVERS: dict[str, Callable[[], AbstractContextManager[RunningTarget]]] = {
    "llama-cpp-python": llama_cpp_python,
    "llama-server": llama_server,
}


def suite_seconds(spec: TargetFile, running: RunningTarget, workers: int) -> float:
    command = [sys.executable, "-m", "pytest", str(ROOT / "suites"), "-q", "-p", "no:cacheprovider",
               "--endpoint", running.base_url, "--model", running.model, "--target-name", spec.label]
    if spec.max_tokens is not None:
        command += ["--max-tokens", str(spec.max_tokens)]
    if spec.temperature is not None:
        command += ["--temperature", str(spec.temperature)]
    if workers > 1:
        command += ["-n", str(workers)]
    started = time.perf_counter()
    subprocess.run(command, cwd=ROOT, capture_output=True, check=False)
    return time.perf_counter() - started


def bench() -> list[str]:
    lines = []
    for name, serving in SERVERS.items():
        spec = load_target_file(ROOT / "fixtures" / "targets" / f"{name}.toml")
        with serving() as running:
            serial = suite_seconds(spec, running, 1)
            parallel = suite_seconds(spec, running, 2)
        lines.append(f"bench real concurrency: {name} {serial / parallel:.2f}x with -n 2 "
                     f"({serial:.0f} s one case at a time, {parallel:.0f} s)")
    return lines
