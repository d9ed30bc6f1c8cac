"""The real servers the project's tests run the suite against, each started on a free loopback port for as
long as its `with` block lasts.

    with llama_cpp_python() as target:
        run_suite(Target(target.base_url, model=target.model, ...))
"""

from __future__ import annotations

import json
import os
import re
import secrets
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

from lmconform import __version__ as LMCONFORM_VERSION
from lmconform.reference.wire import DEFAULT_MODEL as REFERENCE_MODEL
from tools.targets.install import (
    CPU_VARIANT,
    CPU_VARIANT_FLAGS,
    LLAMA_CPP_CMAKE_ARGS,
    Venv,
    cpu_flags,
    default_cache_dir,
    in_chroot,
    litellm_venv,
    llama_cpp_python_venv,
    model,
    sid_chroot,
)
from tools.targets.process import LOOPBACK, RunningTarget, TargetStartError, free_port, start

# Both llama.cpp servers serve the model under this id rather than its file path, which depends on the cache folder.
MODEL_ID = "gemma-3-270m-q4_k_m"
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
# What LiteLLM's providers append to a route's api_base: openai/ its paths after /v1 (`/chat/completions`),
# anthropic/ the whole `/v1/messages` (AnthropicMessagesConfig.get_complete_url).
API_BASE_SUFFIX = {"openai": "/v1", "anthropic": ""}
GEMMA_TOOL_CALLS_TEMPLATE = Path(__file__).resolve().parent / "templates" / "gemma-tool-calls.jinja"


def _version(venv: Venv, distribution: str) -> str:
    code = f"import importlib.metadata as m; print(m.version({distribution!r}))"
    return subprocess.run([str(venv.python), "-c", code], capture_output=True, text=True, check=True).stdout.strip()


@contextmanager
def _serving(running: RunningTarget) -> Iterator[RunningTarget]:
    try:
        yield running
    finally:
        running.stop()


def _system_info(venv: Venv) -> str:
    """What llama.cpp says its CPU code was built with (`AVX = 1 | AVX2 = 1 | AVX512 = 0 | …`)."""
    code = "import llama_cpp; print(llama_cpp.llama_print_system_info().decode())"
    return subprocess.run([str(venv.python), "-c", code], capture_output=True, text=True, check=True).stdout.strip()


@contextmanager
def llama_cpp_python(cache: Path | None = None) -> Iterator[RunningTarget]:
    """llama-cpp-python's OpenAI-compatible server with Gemma 3 270M and the tool-calling chat format, built for
    one instruction set (LLAMA_CPP_CMAKE_ARGS) and on one thread, so that it computes the same on every machine."""
    cache = cache or default_cache_dir()
    venv = llama_cpp_python_venv(cache).ensure()
    model_path = model(cache)
    port = free_port()
    command = [str(venv.python), "-m", "llama_cpp.server", "--model", str(model_path), "--model_alias", MODEL_ID,
               "--host", LOOPBACK, "--port", str(port), "--chat_format", "chatml-function-calling", "--n_ctx", "2048",
               "--n_threads", "1", "--n_threads_batch", "1"]
    build = {"cmake_args": LLAMA_CPP_CMAKE_ARGS, "system_info": _system_info(venv), "threads": 1}
    with _serving(start(command, port=port, label="llama-cpp-python", model=MODEL_ID,
                        log_path=cache / "logs" / "llama-cpp-python.log",
                        server_version=_version(venv, "llama_cpp_python"), build=build)) as running:
        yield running


@contextmanager
def reference_server(cache: Path | None = None) -> Iterator[RunningTarget]:
    """lmconform's reference server as `lmconform serve` runs it, in a process of its own: the baseline the real
    servers are shown beside. Its version is lmconform's."""
    cache = cache or default_cache_dir()
    port = free_port()
    command = [sys.executable, "-m", "lmconform.cli", "serve", "--host", LOOPBACK, "--port", str(port)]
    with _serving(start(command, port=port, label="reference", model=REFERENCE_MODEL,
                        log_path=cache / "logs" / "reference.log", server_version=LMCONFORM_VERSION)) as running:
        yield running


def cpu_supports(variant: str) -> bool:
    """Whether this machine can run the pinned CPU_VARIANT build; other variants are found by trying."""
    return variant != CPU_VARIANT or CPU_VARIANT_FLAGS <= cpu_flags()


# The server's output cap for a request that names none (the cases about a missing max_tokens, which the run leaves
# without one): without it a 270M model writes on until its context is full. A request's own max_tokens wins over it
# in this version: the Anthropic thinking cases, whose max_tokens must exceed a budget of at least 1024, are answered
# with 1100 tokens, about 25 s each on one thread.
N_PREDICT = 128

# Four slots of 4,096 tokens each, every slot with a KV cache of its own. Left to itself the server shares one
# cache of `-c` tokens among its slots, and then a request can run out of context mid-stream ("Context size has
# been exceeded") only because others were in flight beside it or earlier prompts were still cached: a verdict
# that depends on timing. A single slot would not do either: the Messages request without max_tokens writes
# until its slot is full, minutes during which every other request would wait.
SLOTS = ("--parallel", "4", "--no-kv-unified", "-c", str(4 * 4096))


@contextmanager
def llama_server(cache: Path | None = None, cpu_variant: str | None = CPU_VARIANT,
                 label: str = "llama-server") -> Iterator[RunningTarget]:
    """llama.cpp's own C++ `llama-server` from Debian sid, run in a chroot, with Gemma 3 270M on one thread and
    a chat template that lets it call tools (the GGUF has none, and llama.cpp's fallback, chatml, has no tools).

    ggml's CPU code is loaded from the one `cpu_variant` given (None: the best this CPU supports, as Debian's
    package does by itself); the variant actually loaded is read from the process's memory map."""
    cache = cache or default_cache_dir()
    chroot = sid_chroot(cache).ensure()
    model_inside = chroot.place(model(cache))
    template_inside = chroot.place(GEMMA_TOOL_CALLS_TEMPLATE)
    binds = (chroot.only_cpu_variant(cpu_variant),) if cpu_variant else ()
    port = free_port()
    command = in_chroot(chroot.root, ["llama-server", "-m", model_inside, "--alias", MODEL_ID, "--host", LOOPBACK,
                                      "--port", str(port), "--jinja", "--chat-template-file", template_inside,
                                      "--no-ui", *SLOTS, "-t", "1", "--n-predict", str(N_PREDICT)], binds)
    with _serving(start(command, port=port, label=label, model=MODEL_ID, log_path=cache / "logs" / f"{label}.log",
                        server_version=chroot.llama_cpp_version())) as running:
        loaded = loaded_cpu_variants(running.process.pid)
        if cpu_variant and loaded != [cpu_variant]:
            raise TargetStartError(f"{label} was to load ggml's {cpu_variant} CPU code, but loaded {loaded or 'none'}")
        running.build = {"cpu_variant": ", ".join(loaded), "pinned": cpu_variant is not None, "threads": 1}
        yield running


def loaded_cpu_variants(group: int) -> list[str]:
    """The ggml CPU variants mapped into the processes of a process group (`libggml-cpu-haswell.so` → haswell)."""
    found = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            # The fifth field after the parenthesised command is the process group.
            if int(stat.read_text().rsplit(")", 1)[1].split()[2]) != group:
                continue
            found |= set(re.findall(r"libggml-cpu-([a-z0-9]+)\.so", (stat.parent / "maps").read_text()))
        except (OSError, IndexError, ValueError):
            continue
    return sorted(found)


@contextmanager
def litellm_proxy(upstream_base_url: str, upstream_model: str, cache: Path | None = None,
                  label: str = "litellm", routes: Mapping[str, str] | None = None,
                  anthropic_routes: Mapping[str, str] | None = None) -> Iterator[RunningTarget]:
    """The LiteLLM proxy, offline, forwarding one model to an OpenAI-compatible upstream (`openai/` provider).

    It serves the model under the upstream's id and refuses to start without a master key, which is generated
    here and is the API key to send. `routes` adds more model names, each forwarded as `upstream_model` to a
    base URL of its own (such as a reference server fault's `/faults/NAME`): one proxy for many upstreams.
    `anthropic_routes` does the same through the `anthropic/` provider, the one whose `/v1/messages` reaches the
    upstream's `/v1/messages` as it is (with `openai/`, LiteLLM translates a Messages request into chat)."""
    providers = {"openai": {upstream_model: upstream_base_url, **(routes or {})}, "anthropic": anthropic_routes or {}}
    for served in providers.values():
        for base_url in served.values():
            host = urlsplit(base_url).hostname
            if host not in LOOPBACK_HOSTS:
                raise ValueError(f"the upstream must be on this machine's loopback, not {host!r}")
    cache = cache or default_cache_dir()
    venv = litellm_venv(cache).ensure()
    master_key = f"sk-lmconform-{secrets.token_hex(16)}"
    # JSON is YAML: the config is written with the standard library.
    config = {
        "general_settings": {"master_key": master_key},
        "model_list": [{
            "model_name": name,
            "litellm_params": {"model": f"{provider}/{upstream_model}", "api_key": "x",
                               "api_base": base_url + API_BASE_SUFFIX[provider]},
        } for provider, served in providers.items() for name, base_url in served.items()],
    }
    # Offline: the price list it ships, not a download. The fault handler writes the Python stack into the log if the
    # interpreter crashes, which it has done under load (see the proxy gate's retry).
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "PYTHONFAULTHANDLER": "1"}
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="lmconform-litellm-") as folder:
        config_path = Path(folder) / "config.yaml"
        config_path.write_text(json.dumps(config, indent=2))
        command = [str(venv.bin("litellm")), "--config", str(config_path), "--host", LOOPBACK, "--port", str(port)]
        with _serving(start(command, port=port, label=label, model=upstream_model, api_key=master_key,
                            log_path=cache / "logs" / f"{label}.log", server_version=_version(venv, "litellm"),
                            env=env, cwd=Path(folder))) as running:
            yield running

