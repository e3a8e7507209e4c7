"""Output conventions: data on stdout, diagnostics on stderr, NO_COLOR, help, and broken pipes."""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_support import EXAMPLE, TOKA, home, invoke, run_shell, toka

ANSI = re.compile(r"\x1b\[")


def test_import_summary_on_stdout_skipped_lines_on_stderr(tmp_path: Path) -> None:
    source = tmp_path / "a.jsonl"
    source.write_text('{"session": "s", "kind": "message", "payload": {}}\n{oops\n')
    result = toka("import", str(source))
    assert result.returncode == 1
    assert result.stdout == "imported 1 new events (0 already present) into 1 session from 1 file\n"
    assert result.stderr.splitlines() == [
        f"skipped {source}:2: not JSON (Expecting property name enclosed in double quotes: line 1 column 2 (char 1))"
    ]
    as_json = toka("import", str(source), "--json")
    json.loads(as_json.stdout)  # stdout holds the document only
    assert as_json.stderr == ""  # with --json the bad lines are in the document, not repeated


def test_export_to_a_file_notes_on_stderr(example: str, tmp_path: Path) -> None:
    out = tmp_path / "x.jsonl"
    result = toka("export", example, "-o", str(out))
    assert result.returncode == 0
    assert result.stdout == ""
    assert result.stderr == f"exported 23 events to {out}\n"
    assert len(out.read_text().splitlines()) == 23


def test_errors_go_to_stderr_only() -> None:
    result = toka("show", "nothing-here")
    assert result.returncode == 3
    assert result.stdout == ""
    assert result.stderr.startswith("error: no session matches 'nothing-here'\n")


def test_json_documents_are_alone_on_stdout(example: str) -> None:
    for args in (["status"], ["show", example], ["verify"]):
        result = toka(*args, "--json")
        assert result.returncode == 0, args
        json.loads(result.stdout)
        assert result.stderr == "", args


def _on_a_terminal(*args: str, env: dict[str, str]) -> bytes:
    """Run toka with stdout and stderr on a pseudo-terminal; what it wrote there."""
    main, secondary = pty.openpty()
    try:
        process = subprocess.run(
            [str(TOKA), *args],
            stdin=subprocess.DEVNULL,
            stdout=secondary,
            stderr=secondary,
            env={**os.environ, "TERM": "xterm-256color", "COLUMNS": "120", **env},
            timeout=30,
        )
    finally:
        os.close(secondary)
    output = b""
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:  # EIO: the other side is closed and drained
            break
        if not chunk:
            break
        output += chunk
    os.close(main)
    assert process.returncode == 0, output
    return output


def test_no_color_on_a_terminal(example: str, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("NO_COLOR", "FORCE_COLOR", "TERM"):
        monkeypatch.delenv(name, raising=False)
    for args in (["replay", example, "--to", "3"], ["sessions"]):
        styled = _on_a_terminal(*args, env={})
        assert ANSI.search(styled.decode()), args  # a terminal gets styles by default
        plain = _on_a_terminal(*args, env={"NO_COLOR": "1"})
        assert not ANSI.search(plain.decode()), (args, plain)
        assert re.sub(r"\x1b\[[0-9;]*m", "", styled.decode()) == plain.decode()


def test_no_color_in_a_pipe(example: str) -> None:
    for args in (["replay", example], ["sessions"], ["verify"]):
        result = toka(*args, env={"NO_COLOR": "1"})
        assert result.returncode == 0
        assert not ANSI.search(result.stdout + result.stderr), args
    plain = toka("replay", example)  # not a terminal: no escapes without NO_COLOR either
    assert not ANSI.search(plain.stdout + plain.stderr)


@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_help(flag: str) -> None:
    result = toka(flag)
    assert result.returncode == 0
    assert result.stdout.startswith("Usage: toka [OPTIONS] COMMAND [ARGS]...")
    for command in (
        "status",
        "sessions",
        "show",
        "events",
        "replay",
        "record",
        "import",
        "export",
        "verify",
        "stats",
        "daemon",
        "config",
        "admin",
    ):
        assert re.search(rf"^  {command}\b", result.stdout, re.MULTILINE), command
    sub = toka("events", flag)
    assert sub.returncode == 0
    assert "--follow" in sub.stdout and "--kind" in sub.stdout
    assert not (home() / "toka.db").exists()  # help never starts the daemon


def test_no_arguments_prints_the_help_as_a_usage_error() -> None:
    result = invoke()
    assert result.exit_code == 2  # a usage error: the help goes to stderr, stdout stays empty
    assert result.stdout == ""
    assert result.stderr.startswith("Usage: ")
    group = invoke("daemon")
    assert (group.exit_code, group.stdout) == (2, "")
    assert "restart" in group.stderr


def _big_session() -> None:
    # More than a pipe buffer (64 KiB) of output, so the reader leaves while toka still writes.
    payloads = "".join(json.dumps({"text": f"line {n} " + "x" * 150}) + "\n" for n in range(1500))
    result = invoke("record", "big", "message", input=payloads)
    assert result.exit_code == 0, result.stderr


@pytest.mark.parametrize("json_flag", ["", "--json"])
def test_reader_that_leaves_early_is_no_error(json_flag: str) -> None:
    _big_session()
    result = run_shell(f"'{TOKA}' events big {json_flag} | head -1; echo \"exit=${{PIPESTATUS[0]}}\"")
    lines = result.stdout.splitlines()
    assert len(lines) == 2, result.stdout
    assert "line 0 " in lines[0]
    assert lines[1] == "exit=0"
    assert result.stderr == ""  # no traceback, no "Exception ignored"


def test_replay_reader_that_leaves_early_is_no_error() -> None:
    _big_session()
    result = run_shell(f"'{TOKA}' replay big | head -2 >/dev/null; echo \"exit=${{PIPESTATUS[0]}}\"")
    assert result.stdout == "exit=0\n"
    assert result.stderr == ""


def test_user_text_is_not_rich_markup() -> None:
    text = "a[i] = b[/INST] [bold]not bold[/bold] [/x]"
    assert invoke("record", "s", "message", json.dumps({"text": text}), "--agent", "[/agent]").exit_code == 0
    replay = toka("replay", "s")
    assert replay.returncode == 0, replay.stderr
    assert replay.stdout.splitlines()[0].endswith(" #1 [/agent] message")
    assert replay.stdout.splitlines()[1] == f"  {text}"
    events = toka("events", "s")
    assert text in events.stdout and "[/agent]" in events.stdout
    meta = {"source": "[bold]src[/bold]", "cwd": "/p/[/x]"}
    assert invoke("record", "s", "session.meta", json.dumps(meta)).exit_code == 0
    sessions = toka("sessions")
    assert sessions.returncode == 0 and "[bold]src[/bold]" in sessions.stdout and "/p/[/x]" in sessions.stdout


@pytest.mark.parametrize("command", ["verify", "import"])
def test_long_work_shows_a_progress_bar_on_a_terminal_only(example: str, command: str) -> None:
    args = ["verify"] if command == "verify" else ["import", str(EXAMPLE)]
    on_terminal = _on_a_terminal(*args, env={}).decode()
    label = "verifying" if command == "verify" else "importing"
    assert label in on_terminal and "━" in on_terminal  # the bar, drawn on the terminal
    in_a_pipe = toka(*args)
    assert in_a_pipe.returncode == 0
    assert label not in in_a_pipe.stderr and "━" not in in_a_pipe.stderr  # pipes stay quiet


def _commands(command: Any, path: str) -> Iterator[tuple[str, Any]]:
    for name, sub in getattr(command, "commands", {}).items():
        yield f"{path} {name}", sub
        yield from _commands(sub, f"{path} {name}")


def test_no_command_summary_is_cut_at_an_abbreviation() -> None:
    """A command list shows each command's first sentence; an "e.g." must not end it."""
    from typer.main import get_command

    from toka_cli.main import app

    for path, command in _commands(get_command(app), "toka"):
        first = (command.help or "").split("\n\n")[0].replace("\n", " ").strip()
        shown = command.get_short_help_str(limit=1000)
        assert first.startswith(shown.removesuffix("...")), path
        assert not shown.endswith(("e.g.", "i.e.", "etc.", "vs.")), (path, shown)


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (
            ["sessions", "--bogus"],
            "error: no such option: --bogus\nhint: `toka sessions -h` shows its arguments and options\n",
        ),
        (["--bogus"], "error: no such option: --bogus\nhint: `toka -h` shows its arguments and options\n"),
        (["replay"], "error: missing argument 'session'\nhint: `toka replay -h` shows its arguments and options\n"),
    ],
)
def test_a_bad_command_line_is_an_error_and_a_hint_like_any_other(args: list[str], error: str) -> None:
    result = toka(*args)
    assert (result.returncode, result.stdout, result.stderr) == (2, "", error)


@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_version(flag: str) -> None:
    from daemon.version import VERSION

    result = toka(flag)
    assert (result.returncode, result.stdout, result.stderr) == (0, f"toka {VERSION}\n", "")
    assert invoke(flag).stdout == f"toka {VERSION}\n"  # the Typer app answers it too


def test_dash_f_means_follow_wherever_it_is_taken() -> None:
    from typer.main import get_command

    from toka_cli.main import app

    for path, command in _commands(get_command(app), "toka"):
        for param in getattr(command, "params", []):
            if "-f" in param.opts:
                assert "--follow" in param.opts, path
