"""Real servers for the project's own tests: installed once into a cache folder, started for a test session on a
free loopback port, and described with their expected verdicts in fixtures/targets/*.toml."""

from tools.targets.expected import (
    Difference,
    TargetFile,
    differences,
    load_target_file,
    run_target_file,
    table,
)
from tools.targets.install import InstallError, default_cache_dir, install_all
from tools.targets.process import RunningTarget, TargetStartError
from tools.targets.servers import (
    MODEL_ID,
    litellm_proxy,
    llama_cpp_python,
    llama_server,
    reference_server,
)

__all__ = [
    "MODEL_ID", "Difference", "InstallError", "RunningTarget", "TargetFile", "TargetStartError", "default_cache_dir",
    "differences", "install_all", "litellm_proxy", "llama_cpp_python", "llama_server", "load_target_file",
    "reference_server", "run_target_file", "table",
]
