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
    ("lmconform.vocabulary", "lmconform.exit_status", "lmconform.command_line", "lmconform.files",
     "lmconform.wire.redact", "lmconform.reference", "lmconform.schemas", "lmconform.api_entry", "lmconform.api_table",
     "lmconform.apis", "lmconform.surfaces"),
    ("lmconform.target", "lmconform.settings", "lmconform.profiles", "lmconform.expectations", "lmconform.bridge",
     "lmconform.verdicts.causes"),
    ("lmconform.wire", "lmconform.agents"),
    ("lmconform.normalize",),
    ("lmconform.clients", "lmconform.fingerprint", "lmconform.openapi"),
    ("lmconform.cases", "lmconform.snapshots"),
    ("lmconform.checks", "lmconform.record"),
    ("lmconform.source", "lmconform.fuzz"),
    ("lmconform.run", "lmconform.options"),
    ("lmconform.verdicts",),
    ("lmconform.gate", "lmconform.plugin", "lmconform.report", "lmconform.check_command", "lmconform.suite_fixtures",
     "lmconform.agents_command"),
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


# Chosen by their text, not by parsing every module while the tests are collected (once by each worker).
@pytest.mark.parametrize("name", [name for name, path in MODULES.items() if ".room(" in path.read_text()])
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


# --- an API is named by its own folder and the table alone ----------------------------------------------------------

API_NAMES = frozenset(API_FOLDERS)
TABLE = ("lmconform.api_table", "lmconform.api_entry")  # the table names every API


def _names_api(node: ast.AST) -> str | None:
    return node.value if isinstance(node, ast.Constant) and node.value in API_NAMES else None


def _about_an_api(node: ast.AST) -> bool:
    """An expression whose name says it holds or picks an API: `api`, `case.api`, `APIS`, `api_of`, `load_cases`."""
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
    return "api" in name.lower() or name == "load_cases"


def api_names(source: str) -> list[tuple[int, str, str]]:
    """Where `source` names an API by hand: (line, API, how). A string is an API's name where it is used as one —
    compared with an API (`case.api == "chat"`), given as one (`api="chat"`, `APIS["chat"]`, `load_cases("chat")`,
    a parameter `api="chat"`), or listed with another API's name (a hand list of APIs: `("chat", "responses")`, a
    table keyed by them) — and a module is an API's when it is in the API's folder. The same word elsewhere (a
    request's "messages", a check id) names no API."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(_about_an_api(side) for side in sides):
                for side in sides:
                    elements = side.elts if isinstance(side, ast.Tuple | ast.List | ast.Set) else [side]
                    found += [(node.lineno, api, "compared with an API") for api in map(_names_api, elements) if api]
        elif isinstance(node, ast.keyword) and node.arg and "api" in node.arg.lower() and _names_api(node.value):
            found.append((node.value.lineno, node.value.value, f"given as {node.arg}="))
        elif isinstance(node, ast.Subscript) and _about_an_api(node.value) and _names_api(node.slice):
            found.append((node.lineno, node.slice.value, "looked up in a table of APIs"))
        elif isinstance(node, ast.Call) and _about_an_api(node.func):
            found += [(node.lineno, api, "given to a call about APIs") for api in map(_names_api, node.args) if api]
        elif isinstance(node, ast.arguments):
            named = [*node.posonlyargs, *node.args][-len(node.defaults):] if node.defaults else []
            found += [(default.lineno, default.value, "an API parameter's default") for argument, default
                      in zip(named, node.defaults) if "api" in argument.arg.lower() and _names_api(default)]
        elif isinstance(node, ast.Tuple | ast.List | ast.Set | ast.Dict):
            elements = node.keys if isinstance(node, ast.Dict) else node.elts
            listed = [api for api in map(_names_api, [element for element in elements if element is not None]) if api]
            if len(listed) >= 2:
                found += [(node.lineno, api, "listed by hand with another API") for api in listed]
        elif isinstance(node, ast.ImportFrom | ast.Import):
            modules = [alias.name for alias in node.names] if isinstance(node, ast.Import) else \
                [node.module or "", *(f"{node.module}.{alias.name}" for alias in node.names)]
            for module in modules:
                parts = module.split(".")
                if parts[:2] == ["lmconform", "apis"] and len(parts) > 2 and parts[2] in API_NAMES:
                    found.append((node.lineno, parts[2], f"its module {'.'.join(parts[:4])} imported"))
    return sorted(set(found))


def own_api(name: str) -> str | None:
    parts = name.split(".")
    return parts[2] if parts[:2] == ["lmconform", "apis"] and len(parts) > 2 and parts[2] in API_NAMES else None


@pytest.mark.parametrize("name", [name for name in MODULES if name not in TABLE])
def test_only_an_apis_folder_and_the_table_name_the_api(name):
    named = [f"line {line}: {api!r} {how}" for line, api, how in api_names(MODULES[name].read_text())
             if api != own_api(name)]
    assert not named, f"{name} names an API outside its folder and the table (read the entry instead): {named}"


def test_a_hand_list_of_apis_and_a_branch_on_one_are_found():
    source = '''
from lmconform.apis.chat.normalize import normalize_chat
SURFACES = ("chat", "responses", "http")
if case.api == "messages" or api in ("native_chat",):
    load_cases("models")
body = {"messages": [], "model": "m"}  # a request's words, no API
'''
    assert {(api, how) for _, api, how in api_names(source)} == {
        ("chat", "its module lmconform.apis.chat.normalize imported"), ("chat", "listed by hand with another API"),
        ("responses", "listed by hand with another API"), ("messages", "compared with an API"),
        ("native_chat", "compared with an API"), ("models", "given to a call about APIs")}
