"""The house as docs/architecture.md draws it: floors that only look down, no circle of imports, no room too big.

Every import of every module of lmconform counts, the ones inside functions too: an import made late is still an
arrow between two rooms. So does every module an API's room is loaded from (`api.room("checks")`): an arrow to the
floor of that room.

A module in an API's folder (`lmconform/apis/<api>/<room>…`) stands on the floor of the room it is named after:
`apis/chat/normalize.py` where lmconform.normalize stands, `apis/chat/checks/` where lmconform.checks does,
`apis/chat/reference/` where the reference server does. The entries (`apis/<api>/__init__.py`) and the table stand
on the ground floor, so that every floor can read them.
"""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "lmconform"
MAX_LINES = 400
# From the ground up. A module may import its own floor or a lower one, never a higher one.
FLOORS = (
    ("lmconform.vocabulary", "lmconform.exit_status", "lmconform.files", "lmconform.wire.redact",
     "lmconform.reference", "lmconform.schemas", "lmconform.apis"),
    ("lmconform.target", "lmconform.profiles", "lmconform.expectations", "lmconform.bridge"),
    ("lmconform.wire",),
    ("lmconform.normalize",),
    ("lmconform.clients", "lmconform.fingerprint", "lmconform.openapi"),
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
API_FOLDERS = {path.parent.name for path in (PACKAGE / "apis").glob("*/__init__.py")}


def room_of(name: str) -> str:
    """The room a module stands for: `lmconform.apis.chat.checks.scope` → `lmconform.checks.scope`; any other
    module (an entry, the table) for itself."""
    parts = name.split(".")
    if len(parts) > 3 and parts[1] == "apis" and parts[2] in API_FOLDERS:
        return ".".join(["lmconform", *parts[3:]])
    return name


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
    room = room_of(name)
    matches = [(len(prefix), floor) for floor, prefixes in enumerate(FLOORS) for prefix in prefixes
               if room == prefix or room.startswith(prefix + ".")]
    assert matches, f"{name} stands on no floor of FLOORS: place it (an API's module is named after a room)"
    return max(matches)[1]


def rooms_loaded(name: str) -> list[tuple[int, str | None]]:
    """Every call `<api>.room(ROOM)` in module `name`, with its line and the room it names (None when the room is
    not written as a string: then no one can tell the floor it reaches)."""
    found = []
    for node in ast.walk(ast.parse(MODULES[name].read_text())):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "room":
            argument = node.args[0] if len(node.args) == 1 and not node.keywords else None
            literal = isinstance(argument, ast.Constant) and isinstance(argument.value, str)
            found.append((node.lineno, argument.value if literal else None))
    return found


@pytest.mark.parametrize("name", [name for name in MODULES if name != "lmconform"])
def test_every_import_looks_down(name):
    up = sorted(other for other in imports_of(name) if other != "lmconform" and floor_of(other) > floor_of(name))
    assert not up, f"{name} (floor {floor_of(name)}) imports from higher floors: {up}"


@pytest.mark.parametrize("name", [name for name in MODULES if rooms_loaded(name)])
def test_a_room_of_an_api_is_loaded_from_its_floor_or_above(name):
    for line, room in rooms_loaded(name):
        assert room is not None, f"{name}:{line} loads an API's room whose name is not written as a string"
        assert floor_of(f"lmconform.{room}") <= floor_of(name), \
            f"{name}:{line} (floor {floor_of(name)}) loads an API's {room!r}, which stands higher"


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
