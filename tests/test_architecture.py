"""The house as docs/architecture.md draws it: floors that only look down, no circle of imports, no room too big.

Every import of every module of lmconform counts, the ones inside functions too: an import made late is still an
arrow between two rooms.
"""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "lmconform"
MAX_LINES = 400
# From the ground up. A module may import its own floor or a lower one, never a higher one.
FLOORS = (
    ("lmconform.vocabulary", "lmconform.exit_status", "lmconform.files", "lmconform.wire.redact",
     "lmconform.reference", "lmconform.schemas"),
    ("lmconform.target", "lmconform.profiles", "lmconform.expectations", "lmconform.bridge"),
    ("lmconform.wire", "lmconform.agents"),
    ("lmconform.normalize",),
    ("lmconform.apis", "lmconform.clients", "lmconform.fingerprint", "lmconform.openapi"),
    ("lmconform.cases", "lmconform.snapshots"),
    ("lmconform.checks", "lmconform.record"),
    ("lmconform.fuzz",),
    ("lmconform.run", "lmconform.options"),
    ("lmconform.gate", "lmconform.plugin", "lmconform.report"),
    ("lmconform.cli", "lmconform.suites"),
)


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def imports_of(name: str) -> set[str]:
    """The lmconform modules `name` imports, resolved to modules (a name imported from a package counts as the
    package, or as its submodule when it is one)."""
    found = set()
    for node in ast.walk(ast.parse(MODULES[name].read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name.startswith("lmconform")}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("lmconform"):
            for alias in node.names:
                submodule = f"{node.module}.{alias.name}"
                found.add(submodule if submodule in MODULES else node.module)
    return {module for module in found if module in MODULES and module != name}


def floor_of(name: str) -> int:
    matches = [(len(prefix), floor) for floor, prefixes in enumerate(FLOORS) for prefix in prefixes
               if name == prefix or name.startswith(prefix + ".")]
    assert matches, f"{name} stands on no floor of FLOORS: place it"
    return max(matches)[1]


@pytest.mark.parametrize("name", [name for name in MODULES if name != "lmconform"])
def test_every_import_looks_down(name):
    up = sorted(other for other in imports_of(name) if other != "lmconform" and floor_of(other) > floor_of(name))
    assert not up, f"{name} (floor {floor_of(name)}) imports from higher floors: {up}"


def test_no_circle_of_imports():
    graph = {name: imports_of(name) - {"lmconform"} for name in MODULES}
    state: dict[str, str] = {}

    def visit(name: str, path: list[str]) -> None:
        state[name] = "open"
        for other in sorted(graph[name]):
            if state.get(other) == "open":
                raise AssertionError("circle: " + " -> ".join(path[path.index(other):] + [name, other]))
            if other not in state:
                visit(other, path + [name])
        state[name] = "done"

    for name in sorted(graph):
        if name not in state:
            visit(name, [])


def test_no_module_over_the_limit():
    big = {name: lines for name, path in MODULES.items() if (lines := len(path.read_text().splitlines())) > MAX_LINES}
    assert not big, f"modules over {MAX_LINES} lines, each doing more than one job? {big}"
