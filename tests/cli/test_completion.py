"""Shell completion through the mechanism the shells use: `toka` run as a process with Click's
protocol (``_TOKA_COMPLETE=bash_complete``, ``COMP_WORDS``, ``COMP_CWORD``) against a real daemon
with real sessions, and the generated scripts sourced by a real bash (and fish, where installed).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib

import pytest
from cli_support import ROOT, TOKA, home, invoke, toka

from daemon.contract.policies import CompressionPolicy, NoteKind, choices_of
from daemon.ingest.formats import FORMATS as INGEST_FORMATS
from daemon.sections import SECTIONS
from toka_cli.commands.compress import POLICIES as CLI_POLICIES
from toka_cli.commands.handoff import NOTE_KINDS
from toka_cli.commands.transfer import FORMAT_CHOICES

SCRIPTS = ROOT / "toka_cli" / "completions"


def complete(line: str, shell: str = "bash") -> subprocess.CompletedProcess[str]:
    """What `toka` answers a shell completing the last word of ``line`` (after a space: a new word)."""
    words = line.split()
    cword = len(words) if line.endswith(" ") else len(words) - 1
    env = {"_TOKA_COMPLETE": f"{shell}_complete", "COMP_WORDS": line, "COMP_CWORD": str(cword)}
    return toka(env=env)


def values(line: str) -> list[str]:
    result = complete(line)
    assert result.returncode == 0 and result.stderr == "", result.stderr
    return [answer.split(",", 1)[1] for answer in result.stdout.splitlines()]


@pytest.fixture
def sessions() -> None:
    """Sessions whose last events are at known times: fix-b the latest, then fix-c, then fix-a."""
    for session, ts, agent in [
        ("fix-a", "2026-01-01T10:00:00Z", None),
        ("fix-b", "2026-03-01T10:00:00Z", None),
        ("fix-b", "2026-03-01T10:05:00Z", "worker"),
        ("fix-c", "2026-02-01T10:00:00Z", None),
        ("other", "2026-04-01T10:00:00Z", None),
    ]:
        args = ["record", session, "message", '{"text": "hi"}', "--ts", ts]
        result = invoke(*args, *(["--agent", agent] if agent else []))
        assert result.exit_code == 0, result.stderr


def test_session_ids_complete_by_prefix_most_recent_first(sessions: None) -> None:
    assert values("toka show fix") == ["fix-b", "fix-c", "fix-a"]
    assert values("toka show ") == ["other", "fix-b", "fix-c", "fix-a"]
    assert values("toka events fix-c") == ["fix-c"]
    assert values("toka search hi --session fix") == ["fix-b", "fix-c", "fix-a"]


def test_agent_ids_complete_after_the_session_prefix(sessions: None) -> None:
    assert values("toka agent show fix-b/") == ["fix-b/main", "fix-b/worker"]
    assert values("toka compress fix-b/w") == ["fix-b/worker"]
    assert values("toka agent show fix/") == []  # fix names three sessions: no agent list to offer


def test_zsh_and_fish_answers_carry_what_each_name_is(sessions: None) -> None:
    zsh = complete("toka show fix-a", "zsh")
    assert zsh.stdout.splitlines() == ["plain", "fix-a", "session, 1 events, last 2026-01-01 10:00 UTC"]
    fish = complete("toka show fix-a", "fish")
    assert fish.stdout == "plain,fix-a\tsession, 1 events, last 2026-01-01 10:00 UTC\n"


def test_choice_options_and_arguments_complete_their_words() -> None:
    assert values("toka compress s --policy ") == list(CLI_POLICIES)
    assert values("toka report daily --format m") == ["markdown"]
    assert values("toka sessions --source c") == ["claude-code", "codex"]
    assert values("toka note s d") == ["decision", "dependency"]
    assert values("toka config get store.dur") == ["store.durability"]
    assert values("toka completion ") == ["bash", "zsh", "fish"]


def test_the_choices_are_what_toka_accepts() -> None:
    assert CLI_POLICIES == choices_of(CompressionPolicy) == tuple(SECTIONS.allowed("policy").split(", "))
    assert FORMAT_CHOICES.choices() == INGEST_FORMATS  # type: ignore[attr-defined]
    assert choices_of(NoteKind) == NOTE_KINDS
    assert values("toka daemon run --durability ") == SECTIONS.allowed("durability").split(", ")
    assert values("toka agent spawn --policy ") == SECTIONS.allowed("on_critical").split(", ")


def test_without_a_daemon_nothing_completes_none_starts_and_nothing_is_printed() -> None:
    result = complete("toka show fix")
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    assert not (home() / "run" / "toka.sock").exists()
    assert values("toka compress s --policy f") == ["fifo"]  # what needs no daemon still completes


def test_a_command_line_that_does_not_parse_completes_nothing_quietly() -> None:
    for line in ("toka nosuch ", "toka show fix --limit x ", "toka --bogus show "):
        result = complete(line)
        assert (result.returncode, result.stderr) == (0, ""), line


def _bash(probe: str) -> list[str]:
    script = SCRIPTS / "toka.bash"
    result = subprocess.run(
        ["bash", "-c", f"source {script}\n{probe}"], capture_output=True, text=True, timeout=60, env=os.environ.copy()
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()


def test_the_bash_script_asks_toka_for_names_and_keeps_their_order(sessions: None) -> None:
    probe = (
        f'COMP_WORDS=({TOKA} show fix); COMP_CWORD=2; _toka; echo "${{COMPREPLY[*]}}"\n'
        f'COMP_WORDS=({TOKA} agent show fix-b/w); COMP_CWORD=3; _toka; echo "${{COMPREPLY[*]}}"\n'
        f'COMP_WORDS=({TOKA} search q -s fix-c); COMP_CWORD=4; _toka; echo "${{COMPREPLY[*]}}"\n'
        f'COMP_WORDS=({TOKA} compress s --policy w); COMP_CWORD=4; _toka; echo "${{COMPREPLY[*]}}"\n'
        f'COMP_WORDS=({TOKA} daemon lo); COMP_CWORD=2; _toka; echo "${{COMPREPLY[*]}}"\n'
    )
    assert _bash(probe) == ["fix-b fix-c fix-a", "fix-b/worker", "fix-c", "window", "logs"]


@pytest.mark.skipif(shutil.which("fish") is None, reason="fish is not installed")
def test_the_fish_script_asks_toka_for_names(sessions: None) -> None:
    script = SCRIPTS / "toka.fish"
    env = {**os.environ, "PATH": f"{TOKA.parent}:{os.environ['PATH']}"}
    result = subprocess.run(
        ["fish", "--no-config", "-c", f"source {script}; complete -C'toka show fix'"],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert result.returncode == 0, result.stderr
    assert [line.split("\t")[0] for line in result.stdout.splitlines()] == ["fix-b", "fix-c", "fix-a"]


def test_toka_completion_prints_the_installed_script() -> None:
    for shell, name in (("bash", "toka.bash"), ("zsh", "_toka"), ("fish", "toka.fish")):
        result = toka("completion", shell)
        assert result.returncode == 0, result.stderr
        assert result.stdout == (SCRIPTS / name).read_text(encoding="utf-8")
    wrong = toka("completion", "tcsh")
    assert wrong.returncode == 2
    assert wrong.stderr == "error: no completion script for 'tcsh'\nhint: use one of: bash, zsh, fish\n"


def test_the_wheel_installs_the_scripts_and_the_man_page() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert "completions/*" in config["package-data"]["toka_cli"]
    installed = {place: files for place, files in config["data-files"].items()}
    assert installed == {
        "share/man/man1": ["man/toka.1"],
        "share/bash-completion/completions": ["toka_cli/completions/toka.bash"],
        "share/zsh/site-functions": ["toka_cli/completions/_toka"],
        "share/fish/vendor_completions.d": ["toka_cli/completions/toka.fish"],
    }
    for files in installed.values():
        assert all((ROOT / file).is_file() for file in files)


COMPLETING = """\
import sys
from toka_cli.entry import main
sys.argv = ["toka"]
try:
    main()
except SystemExit:
    pass
loaded = sorted(m for m in sys.modules if m.startswith("toka_cli.commands.") or m in ("pydantic", "rich"))
print(loaded, file=sys.stderr)
"""


def test_a_completion_imports_only_the_command_it_completes_and_no_pydantic_or_rich(sessions: None) -> None:
    env = {**os.environ, "_TOKA_COMPLETE": "bash_complete", "COMP_WORDS": "toka show fix", "COMP_CWORD": "2"}
    result = subprocess.run([sys.executable, "-c", COMPLETING], capture_output=True, text=True, timeout=60, env=env)
    assert result.stdout.splitlines() == ["plain,fix-b", "plain,fix-c", "plain,fix-a"]
    assert result.stderr.strip() == "['toka_cli.commands.sessions']"
