"""The committed completions and man page are what `python docs/gen/gendocs.py` writes now, and
the man page renders without a warning. docs/gen is on the tests' path (pyproject.toml)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from cli_support import ROOT
from command_docs import command_tree
from gendocs import generate

from toka_cli.base import make_app
from toka_cli.main import app

GENERATED = generate(app)
SCRIPTS = ("toka_cli/completions/toka.bash", "toka_cli/completions/_toka", "toka_cli/completions/toka.fish")


@pytest.mark.parametrize("relative", sorted(GENERATED))
def test_the_committed_file_is_up_to_date(relative: str) -> None:
    committed = ROOT / relative
    assert committed.exists(), f"{relative} is missing: run `python docs/gen/gendocs.py`"
    assert committed.read_text(encoding="utf-8") == GENERATED[relative], (
        f"{relative} is stale: run `python docs/gen/gendocs.py` and commit the result"
    )


def test_every_command_and_option_is_in_each_file() -> None:
    tree = command_tree(app)
    for command in tree[1:]:
        assert f".SS {command.name}".replace("-", "\\-") in GENERATED["man/toka.1"], command.name
        for relative in SCRIPTS:
            assert command.path[-1] in GENERATED[relative], (relative, command.name)
        for option in command.options:
            for name in option.names:
                assert name in GENERATED["toka_cli/completions/toka.bash"], (command.name, name)
                if name not in ("-h", "--help"):  # said once, in SYNOPSIS
                    assert f"\\fB{name.replace('-', chr(92) + '-')}\\fR" in GENERATED["man/toka.1"], (
                        command.name,
                        name,
                    )


def test_a_command_added_to_the_app_shows_up() -> None:
    extra = make_app("an app with one more command")

    @extra.callback()
    def root() -> None:
        """A group."""

    @extra.command()
    def frobnicate(level: int = 1) -> None:
        """Frobnicate the log."""

    generated = generate(extra)
    assert "'' ) echo 'frobnicate'" in generated["toka_cli/completions/toka.bash"].replace("'')", "'' )")
    assert "'frobnicate:Frobnicate the log.'" in generated["toka_cli/completions/_toka"]
    assert "-a 'frobnicate' -d 'Frobnicate the log.'" in generated["toka_cli/completions/toka.fish"]
    assert ".SS toka frobnicate [OPTIONS]" in generated["man/toka.1"]
    assert "\\fB\\-\\-level\\fR \\fIN\\fR" in generated["man/toka.1"]


def test_the_bash_script_is_valid_and_completes_commands(tmp_path: Path) -> None:
    script = ROOT / "toka_cli" / "completions" / "toka.bash"
    probe = (
        f"source {script}\n"
        'COMP_WORDS=(toka daemon lo); COMP_CWORD=2; _toka; echo "${COMPREPLY[*]}"\n'
        'COMP_WORDS=(toka daemon logs --l); COMP_CWORD=3; _toka; echo "${COMPREPLY[*]}"\n'
        'COMP_WORDS=(toka --help ag); COMP_CWORD=2; _toka; echo "${COMPREPLY[*]}"\n'
    )
    result = subprocess.run(["bash", "-c", probe], capture_output=True, text=True, cwd=tmp_path, timeout=30)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["logs", "--lines", "agent"]


def _man_linter() -> list[str] | None:
    if shutil.which("mandoc"):
        return ["mandoc", "-T", "lint", "-W", "warning"]
    if shutil.which("groff"):
        return ["groff", "-man", "-Tutf8", "-ww", "-z"]
    return None


def test_the_man_page_renders_without_warnings() -> None:
    command = _man_linter()
    if command is None:
        pytest.skip("neither mandoc nor groff is installed")
    result = subprocess.run([*command, str(ROOT / "man" / "toka.1")], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and result.stderr == "", result.stderr + result.stdout


def test_man_shows_the_page() -> None:
    if shutil.which("man") is None:
        pytest.skip("man is not installed")
    result = subprocess.run(
        ["man", "-l", str(ROOT / "man" / "toka.1")],
        capture_output=True,
        text=True,
        timeout=60,
        env={"MANPAGER": "cat", "PAGER": "cat", "MANWIDTH": "100", "PATH": "/usr/bin:/bin"},
    )
    assert result.returncode == 0 and result.stderr == "", result.stderr
    for heading in ("NAME", "SYNOPSIS", "DESCRIPTION", "COMMANDS", "EXIT STATUS", "FILES", "ENVIRONMENT", "SEE ALSO"):
        assert f"\n{heading}\n" in result.stdout, heading
