"""The `lmconform` command as a whole: a command line imports only the module of the command it names, so that a
command started often (`lmconform bridge`, once per chat request) does not pay for every other's dependencies; the
table that says which module registers which command is the truth; a mistyped command still lists them all."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from lmconform.cli import COMMAND_MODULES, build_parser


def commands_of(parser: argparse.ArgumentParser) -> set[str]:
    (subparsers,) = [action for action in parser._actions if isinstance(action, argparse._SubParsersAction)]
    return set(subparsers.choices)


@pytest.mark.parametrize(("names", "module"), COMMAND_MODULES, ids=[module for _, module in COMMAND_MODULES])
def test_each_module_registers_exactly_the_commands_the_table_gives_it(names, module):
    for name in names:
        assert commands_of(build_parser(name)) == set(names)


def test_every_command_is_registered_once_when_none_is_named():
    every = [name for names, _ in COMMAND_MODULES for name in names]
    assert len(every) == len(set(every))
    assert commands_of(build_parser()) == set(every)


def imported_by(*argv: str) -> set[str]:
    """The lmconform modules a process that parses `lmconform ARGV --help` holds."""
    script = ("import sys\nfrom lmconform.cli import main\ntry:\n    main([*sys.argv[1:], '--help'])\n"
              "except SystemExit:\n    pass\nprint(' '.join(sorted(name for name in sys.modules "
              "if name.startswith('lmconform'))), file=sys.stderr)")
    finished = subprocess.run([sys.executable, "-c", script, *argv], capture_output=True, text=True, timeout=120)
    assert finished.returncode == 0, finished.stderr
    return set(finished.stderr.split())


def test_the_bridge_imports_neither_the_runner_nor_the_checks():
    modules = imported_by("bridge")
    assert "lmconform.bridge.cli" in modules
    assert not modules & {"lmconform.run", "lmconform.checks", "lmconform.gate", "lmconform.check_command"}


def test_a_mistyped_command_lists_every_command(capsys):
    from lmconform.cli import main

    with pytest.raises(SystemExit) as exited:
        main(["chek"])
    assert exited.value.code == 2
    error = capsys.readouterr().err
    assert "invalid choice: 'chek'" in error
    assert all(name in error for names, _ in COMMAND_MODULES for name in names)


def test_version_is_lmconform_s_own(capsys):
    from lmconform import __version__
    from lmconform.cli import main

    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0 and capsys.readouterr().out == f"lmconform {__version__}\n"


@pytest.mark.parametrize(("argv", "said"), [
    (["check", "--bogus-flag"], "lmconform check: unrecognized arguments: --bogus-flag; "),
    (["check", "--mdoel", "qwen3"], "lmconform check: unrecognized arguments: --mdoel (did you mean --model?); "),
    (["report", "run.json", "-o", "run.html", "--stable"], "lmconform report: unrecognized arguments: --stable; "),
    (["check", "--model"], "lmconform check: argument --model: expected one argument; "),
    (["agents", "install", "--all"], "lmconform agents install: unrecognized arguments: --all; "),
    ([], "lmconform: the following arguments are required: COMMAND; "),
])
def test_a_usage_error_is_one_line_naming_the_command_it_belongs_to(capsys, argv, said):
    """argparse hands a command's unknown options up to the top-level parser, which printed the usage of `lmconform`
    above them; each command now says its own, in one line, with the option it likely meant."""
    from lmconform.cli import main

    with pytest.raises(SystemExit) as exited:
        main(argv)
    error = capsys.readouterr().err
    assert exited.value.code == 2 and error.count("\n") == 1 and "usage:" not in error
    command = said.split(":")[0]
    assert error == f"{said}`{command} --help` says what it takes\n"
