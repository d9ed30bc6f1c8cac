"""Everything the project cites lives in the project: a file the code, the cases or the docs name exists (a path with
placeholders, `lmconform/cases/<api>/<slug>.json`, matches at least one), a Markdown link leads to a file and, with
a fragment, to a heading or an anchor of it, and every `lmconform` command and `make` target shown exists."""

import argparse
import json
import os
import re
from functools import cache
from pathlib import Path

import pytest

from lmconform.cli import build_parser

ROOT = Path(__file__).resolve().parent.parent
# Where citations are made: code, cases and docs. The compatibility pages are written from runs (make matrix-real);
# npm writes the agents' lock.
CITING = sorted({*ROOT.glob("*.md"), *ROOT.glob("docs/*.md"), *ROOT.glob("examples/**/*.*"),
                 *ROOT.glob("lmconform/**/*.py"), *ROOT.glob("lmconform/**/*.json"), *ROOT.glob("tests/*.py"),
                 *ROOT.glob("tools/**/*.py"), *ROOT.glob("bench/*.py"), ROOT / "Makefile", ROOT / "pyproject.toml",
                 ROOT / ".ci" / "run"} - {ROOT / "docs" / "compatibility.md", ROOT / "lmconform/agents/package-lock.json",
                                          Path(__file__)})
# A path from the checkout's root, as code and docs write one: a top folder, then a file or folder name; what is in
# angle or curly brackets, or a star, stands for any name. A path whose second part the checkout lacks is another
# project's, named as such (vLLM's tests/tool_use/…, llama.cpp's tools/server/…).
PATH = re.compile(r"(?<![\w./~-])((?:lmconform|tests|tools|docs|fixtures|bench|examples|\.ci)/"
                  r"(?:[\w.<>*/-]|\{[^}\s]*\})+(?<=[\w>}*/]))")
# A note named on its own, anywhere: `README.md#limits`, `CHANGELOG.md`, `schema-facts.md`. A lower-case name is
# not a citation where it is what a command writes (`--markdown matrix.md`, `-o matrix.md`), nor in the tests, whose
# strings name the files they write.
MARKDOWN_NAME = re.compile(r"(?<![\w./-])((?:[A-Z][A-Z0-9_]*|[a-z][\w-]*)\.md)(?:#([\w-]+))?\b")
WRITTEN = re.compile(r"(?:--[a-z-]+|-o)[ =]$")
LINK = re.compile(r"\]\(([^)\s]+)\)")
# A command as code shows one: in backticks, or a line of a shell block.
COMMAND = re.compile(r"(?:`|^|\$ )lmconform ([a-z][a-z-]*)", re.MULTILINE)
MAKE_TARGET = re.compile(r"(?:`|^)make ([a-z][a-z-]*)", re.MULTILINE)
SHELL_BLOCK = re.compile(r"^```(?:sh|bash|console)?\n(.*?)^```", re.MULTILINE | re.DOTALL)
# Folders a user's own runs fill, shown as examples: the shapes of their LM Studio, recorded per version.
USERS_OWN = ("fixtures/snapshots/lmstudio-",)


def placeholders_as_glob(path: str) -> str:
    return re.sub(r"<[^>]*>|\{[^}]*\}", "*", path).rstrip("/")


@cache
def exists(path: str) -> bool:
    pattern = placeholders_as_glob(path)
    parts = pattern.split("/")
    if path.startswith(USERS_OWN) or (len(parts) > 2 and not any(ROOT.glob("/".join(parts[:2])))):
        return True
    return any(ROOT.glob(pattern)) if "*" in pattern else (ROOT / pattern).exists()


# Folders no citation points into, left out of the walk: globbing through the environment took 12 s per worker.
NOT_CITED = {".venv", "node_modules", ".git", ".mypy_cache", ".ruff_cache", "__pycache__"}


@cache
def markdown_files() -> dict[str, list[Path]]:
    found: dict[str, list[Path]] = {}
    for folder, subfolders, names in os.walk(ROOT):
        subfolders[:] = [name for name in subfolders if name not in NOT_CITED]
        for name in names:
            if name.endswith(".md"):
                found.setdefault(name, []).append(Path(folder, name))
    return found


@cache
def anchors(path: Path) -> set[str]:
    """The fragments a Markdown file answers: its headings as GitHub slugs them, and its explicit anchors."""
    text = path.read_text(encoding="utf-8")
    slugs = {re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
             for heading in re.findall(r"^#+ (.+)$", text, re.MULTILINE)}
    return slugs | set(re.findall(r'<a id="([^"]+)"', text))


def relative(path: Path) -> str:
    return str(path.relative_to(ROOT))


def cited_text(path: Path) -> str:
    """What a file says in its own words: a case's request and turns are what a client sent (a recorded agent's
    system prompt names its own CLAUDE.md), quoted rather than cited."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".json" and path.parent.name == "cases":
        case = json.loads(text)
        if isinstance(case, dict):
            return json.dumps({key: value for key, value in case.items() if key not in ("request", "turns")})
    return text


def citations_of(path: Path, text: str | None = None) -> list[tuple[str, str]]:
    """(what is cited, why it is missing) for every citation in the file (or in `text`, as if it were the file's)
    that leads nowhere."""
    text = cited_text(path) if text is None else text
    missing = []
    for cited in PATH.findall(text):
        if not exists(cited):
            missing.append((cited, "no such file or folder"))
    for found in MARKDOWN_NAME.finditer(text):
        name, fragment = found.groups()
        if name[0].islower() and (path.parent == ROOT / "tests" or WRITTEN.search(text[:found.start()][-16:])):
            continue
        homes = markdown_files().get(name, [])
        if not homes:
            missing.append((name, "no such Markdown file in the repository"))
        elif fragment and not any(fragment in anchors(home) for home in homes):
            missing.append((f"{name}#{fragment}", "no such heading or anchor"))
    if path.suffix == ".md":
        for target in LINK.findall(text):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue
            file, _, fragment = target.partition("#")
            linked = (path.parent / file).resolve()
            if not linked.exists():
                missing.append((target, "a link to no file"))
            elif fragment and linked.suffix == ".md" and fragment not in anchors(linked):
                missing.append((target, "a link to no heading or anchor"))
    return missing


def makefile_targets() -> set[str]:
    return set(re.findall(r"^([a-z][\w-]*):", (ROOT / "Makefile").read_text(), re.MULTILINE))


def commands() -> set[str]:
    parser = build_parser()
    (subparsers,) = [action for action in parser._actions if action.dest == "command"]
    return set(subparsers.choices)


@pytest.mark.parametrize("path", CITING, ids=relative)
def test_every_file_cited_exists(path):
    missing = citations_of(path)
    assert not missing, f"{relative(path)} cites what the repository lacks: {missing}"


def shown_code(text: str) -> str:
    """What a text shows as code: its backtick spans, and the lines of its Markdown shell blocks."""
    return "\n".join([*re.findall(r"`[^`\n]+`", text), *SHELL_BLOCK.findall(text)])


def test_every_command_and_make_target_shown_exists():
    known_commands, known_targets = commands(), makefile_targets()
    wrong = []
    for path in CITING:
        code = shown_code(path.read_text(encoding="utf-8"))
        wrong += [(relative(path), f"lmconform {name}") for name in COMMAND.findall(code) if name not in known_commands]
        wrong += [(relative(path), f"make {name}") for name in MAKE_TARGET.findall(code) if name not in known_targets]
    assert not wrong, f"commands and targets that do not exist: {sorted(set(wrong))}"


def test_the_test_catches_what_it_looks_for():
    """A citation of a file the repository lacks, a dead link, a note that is nowhere, an unknown command and an
    unknown make target are each found."""
    text = ("See `docs/nowhere.md`, [there](usage.md#no-such-heading), [here](gone.md), NOTES.md, schema-facts.md, "
            "`lmconform matrix a.json -o m.html --markdown written.md`, `lmconform frobnicate` and `make everything`.\n")
    found = {cited for cited, _ in citations_of(ROOT / "docs" / "probe.md", text)}
    assert found == {"docs/nowhere.md", "usage.md#no-such-heading", "gone.md", "NOTES.md", "schema-facts.md"}
    assert COMMAND.findall(shown_code(text)) == ["matrix", "frobnicate"] and "frobnicate" not in commands()
    assert MAKE_TARGET.findall(shown_code(text)) == ["everything"] and "everything" not in makefile_targets()


def test_every_commands_description_is_whole_sentences():
    """What `lmconform … --help` says above the options: cut from a docstring mid-sentence, it once ended "a run's"."""
    def descriptions(parser, name):
        yield name, parser.description
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for word, sub in action.choices.items():
                    yield from descriptions(sub, f"{name} {word}")

    cut = [(name, text[-40:]) for name, text in descriptions(build_parser(), "lmconform")
           if text and not text.rstrip().endswith((".", ")"))]
    assert not cut, cut


def test_the_readme_stays_short():
    """The README says what lmconform is, how to run it and where the guides are; the guides live in docs/."""
    size = len((ROOT / "README.md").read_bytes())
    assert size <= 8_000, f"README.md is {size} bytes: move detail into a guide in docs/"
