"""The root group knows its commands by name and imports a command's module only when it is used
(toka_cli/lazy.py): its table matches what the modules register, `toka --help` lists every
command without importing one, and a command imports its own module alone."""

from __future__ import annotations

import inspect
import json
import subprocess
import sys

from cli_support import invoke

from toka_cli.lazy import load
from toka_cli.main import Toka

# Which command modules a process ran as `toka ARGS` holds at its end.
LOADED = """\
import json, sys
from typer.testing import CliRunner
from toka_cli.main import app
result = CliRunner().invoke(app, sys.argv[1:])
commands = sorted(m for m in sys.modules if m.startswith("toka_cli.commands."))
print(json.dumps({"code": result.exit_code, "modules": commands}))
"""


def loaded_by(*args: str) -> dict[str, object]:
    result = subprocess.run([sys.executable, "-c", LOADED, *args], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.splitlines()[-1])


def first_paragraph(help: str | None) -> str:
    return " ".join(inspect.cleandoc(help or "").split("\f")[0].split("\n\n")[0].split())


def test_the_table_is_what_the_modules_register_with_their_help() -> None:
    registered = {}
    for module in sorted({entry.module for entry in Toka.COMMANDS}):
        for name, command in load(module).items():
            registered[name] = (module, first_paragraph(command.help))
    table = {entry.name: (entry.module, entry.help) for entry in Toka.COMMANDS}
    assert table == registered


def test_help_lists_every_command_and_imports_none() -> None:
    found = loaded_by("--help")
    assert found == {"code": 0, "modules": []}
    listed = invoke("--help").stdout
    for entry in Toka.COMMANDS:
        assert f"\n  {entry.name} " in listed, entry.name


def test_a_command_imports_its_own_module_alone() -> None:
    found = loaded_by("sessions", "--help")
    assert found == {"code": 0, "modules": ["toka_cli.commands.sessions"]}


def test_a_group_lists_and_runs_its_commands() -> None:
    result = invoke("config", "path")
    assert result.exit_code == 0, result.stderr
    assert "config.toml" in result.stdout
    assert "  path " in invoke("config", "--help").stdout


def test_a_mistyped_command_is_named_with_the_nearest() -> None:
    result = invoke("sesions")
    assert result.exit_code == 2
    assert "error: no such command 'sesions'. Did you mean 'sessions'?" in result.stderr


def test_help_groups_the_commands_everyday_first_plumbing_last() -> None:
    listed = invoke("--help").stdout
    headings = [line[:-1] for line in listed.splitlines() if line.endswith(":") and not line.startswith(" ")]
    assert headings[headings.index("Options") + 1 :] == [
        "Everyday commands",
        "Agents, handoffs and memory",
        "Getting history in and out",
        "Tamper evidence",
        "Setup and upkeep",
        "Plumbing (run by the agents' hooks and status line)",
    ]
    sections = listed.split("\n\n")
    everyday = next(s for s in sections if s.startswith("Everyday commands:"))
    plumbing = sections[-1]
    assert [line.split()[0] for line in everyday.splitlines()[1:4]] == ["status", "sessions", "show"]
    assert [line.split()[0] for line in plumbing.strip().splitlines()[1:]] == ["hook", "statusline"]
