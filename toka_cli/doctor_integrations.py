"""`toka doctor`'s checks of what `toka integrate` installed: each agent file parses, each command
toka put there can run as the agent runs it, and toka's MCP server answers.

Commands are judged as an agent runs them: with the environment it was started from, so a bare
``toka`` that this shell finds on PATH is a warning (an agent started from another shell may not
find it) and a path that does not exist is a problem; both are fixed by rerunning `toka
integrate`, which writes this toka's absolute path. The MCP server is started as the agent would
start it and must answer ``initialize``; it starts no daemon for that (it connects on its first
tool call), so the check changes nothing.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import shlex
import subprocess
import time
import tomllib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from store.errors import ConfigError
from toka_cli.doctor_check import Check
from toka_cli.integrate import claude_hooks, codex_config, mcp_servers
from toka_cli.integrate.executable import unresolved

# How long the MCP server may take to answer `initialize`: a cold Python start with the SDK's
# imports takes about a second on a busy machine.
INITIALIZE_TIMEOUT_S = 20.0
# How long a server that closed its output, or its input, has to exit.
EXIT_TIMEOUT_S = 5.0
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "toka-doctor", "version": "1"},
    },
}


def integration_checks(cwd: Path) -> list[Check]:
    return [_hooks(cwd), _mcp(cwd), _codex_notify()]


def _program(command: str) -> str:
    try:
        words = shlex.split(claude_hooks.unwrapped(command))
    except ValueError:
        return command
    return words[0] if words else command


def _worst(found: Iterable[tuple[str, str]]) -> tuple[str, list[str]]:
    """The worst status among ``(status, detail)`` pairs, and the details of that status."""
    found = list(found)
    for status in ("problem", "warning"):
        details = [detail for s, detail in found if s == status]
        if details:
            return status, details
    return "ok", []


def _judge(program: str, where: str) -> tuple[str, str] | None:
    """``(status, detail)`` when ``program`` would not run (problem) or runs only through PATH
    (warning); None when it is an absolute path that runs."""
    reason = unresolved(program)
    if reason is None:
        return None
    status = "warning" if "only through PATH" in reason else "problem"
    return status, f"{where}: {reason}"


def _hooks(cwd: Path) -> Check:
    """Claude Code's hooks and status line: optional; a partial install or a command that would
    not run as Claude Code runs it is reported."""
    installed, found = [], []
    for label, path in (("user", claude_hooks.settings_path(None)), ("project", claude_hooks.settings_path(cwd))):
        try:
            settings = claude_hooks.load(path)
        except ConfigError as exc:
            return Check("hooks", "problem", exc.message, f"$EDITOR {path}")
        fix = "toka integrate claude-code" + (" --project ." if label == "project" else "")
        handlers = {
            event: [
                handler
                for group in groups
                if isinstance(group, dict) and isinstance(group.get("hooks"), list)
                for handler in group["hooks"]
                if claude_hooks.is_toka_hook(handler)
            ]
            for event, groups in settings.get("hooks", {}).items()
        }
        events = [event for event, ours in handlers.items() if ours]
        # The inbox command runs no toka, only the shell's tools: nothing of it to judge.
        commands = {h["command"] for ours in handlers.values() for h in ours if not claude_hooks.is_inbox_hook(h)}
        line = settings.get("statusLine")
        if claude_hooks.is_toka_statusline(line):
            commands.add(line["command"])
        if not events and not commands:
            continue
        installed.append(str(path))
        for command in sorted(commands):
            if (judged := _judge(_program(command), f"{path}: `{command}`")) is not None:
                found.append((*judged, fix))
        missing = [event for event in claude_hooks.EVENTS if event not in events]
        if events and missing:
            found.append(("warning", f"Claude Code hooks in {path} miss {', '.join(missing)}", fix))
        killed = [event for event, ours in handlers.items() if any(h.get("async") is True for h in ours)]
        if killed:
            detail = (
                f"toka's hooks of {', '.join(killed)} in {path} are async: Claude Code kills them when a run ends,"
                " and their events are lost (docs/hooks.md)"
            )
            found.append(("warning", detail, fix))
    if not installed:
        return Check("hooks", "ok", "Claude Code hooks not installed (optional)", "toka integrate claude-code")
    status, details = _worst((s, d) for s, d, _ in found)
    if status != "ok":
        fix = next(f for s, _, f in found if s == status)
        return Check("hooks", status, "; ".join(details), fix)  # type: ignore[arg-type]
    return Check("hooks", "ok", f"Claude Code hooks installed in {', '.join(installed)}")


def _servers(cwd: Path) -> list[tuple[Path, str, dict[str, Any]]]:
    """Toka's MCP server entries: ``(file, fix, entry)``; ConfigError for a file that does not parse."""
    entries = []
    for path, fix in (
        (mcp_servers.claude_path(None), "toka integrate claude-code"),
        (mcp_servers.claude_path(cwd), "toka integrate claude-code --project ."),
    ):
        text = mcp_servers.read_text(path)
        try:
            data = json.loads(text) if text.strip() else {}
        except ValueError as exc:
            raise ConfigError(f"{path} is not valid JSON ({exc})", f"$EDITOR {path}") from None
        servers = data.get("mcpServers") if isinstance(data, dict) else None
        entry = servers.get(mcp_servers.SERVER_NAME) if isinstance(servers, dict) else None
        if mcp_servers.is_toka_server(entry):
            entries.append((path, fix, entry))
    codex = _codex_document()
    servers = codex.get("mcp_servers") if codex else None
    entry = servers.get(mcp_servers.SERVER_NAME) if isinstance(servers, dict) else None
    if mcp_servers.is_toka_server(entry):
        entries.append((codex_config.codex_path(), "toka integrate codex", entry))
    return entries


def _codex_document() -> dict[str, Any] | None:
    path = codex_config.codex_path()
    if not path.exists():
        return None
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path} is not valid TOML ({exc})", f"$EDITOR {path}") from None


def _mcp(cwd: Path) -> Check:
    try:
        entries = _servers(cwd)
    except ConfigError as exc:
        return Check("mcp", "problem", exc.message, exc.hint)
    if not entries:
        return Check("mcp", "ok", "toka's MCP server not installed (optional)", "toka integrate claude-code")
    answered: dict[tuple[str, ...], tuple[str, str | None] | None] = {}
    found = []
    for path, fix, entry in entries:
        argv = (entry["command"], *map(str, entry.get("args") or []))
        if (judged := _judge(argv[0], f"{path}: `{shlex.join(argv)}`")) is not None:
            found.append((*judged, fix))
            if judged[0] == "problem":
                continue
        if argv not in answered:
            answered[argv] = _initialize(argv, entry.get("env"))
        if (failed := answered[argv]) is not None:
            reason, hint = failed
            found.append(("problem", f"{path}: `{shlex.join(argv)}` {reason}", hint or fix))
    status, details = _worst((s, d) for s, d, _ in found)
    if status != "ok":
        fix = next(f for s, _, f in found if s == status)
        return Check("mcp", status, "; ".join(details), fix)  # type: ignore[arg-type]
    where = ", ".join(str(path) for path, _, _ in entries)
    return Check("mcp", "ok", f"toka's MCP server answers, installed in {where}")


def _initialize(argv: tuple[str, ...], env: Any) -> tuple[str, str | None] | None:
    """Start the server as an agent would and send ``initialize``; None, or why it failed and, when
    the server said how to fix it (toka's ``hint:`` line, such as a package to install), that fix."""
    reason = _answer_to_initialize(argv, env)
    return None if reason is None else _with_hint(reason)


def _with_hint(reason: str) -> tuple[str, str | None]:
    said, sep, hint = reason.partition(HINT_MARK)
    return (said, hint.strip()) if sep else (reason, None)


# Between the server's last error line and its hint, as _exited joins them.
HINT_MARK = "\x00hint: "


def _answer_to_initialize(argv: tuple[str, ...], env: Any) -> str | None:
    environment = os.environ | ({str(k): str(v) for k, v in env.items()} if isinstance(env, dict) else {})
    try:
        server = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=environment
        )
    except OSError as exc:
        return f"does not start ({exc.strerror})"
    assert server.stdin is not None and server.stdout is not None and server.stderr is not None
    try:
        server.stdin.write(json.dumps(INITIALIZE).encode() + b"\n")
        server.stdin.flush()
        try:
            line = _read_line(server.stdout.fileno(), INITIALIZE_TIMEOUT_S)
        except EOFError:
            return _exited(server)
        if line is None:
            return f"did not answer `initialize` within {INITIALIZE_TIMEOUT_S:g} s"
        try:
            answer = json.loads(line)
        except ValueError:
            return f"answered `initialize` with something other than JSON-RPC: {line[:80]!r}"
        if not isinstance(answer, dict) or "result" not in answer:
            return f"refused `initialize`: {str(answer.get('error') if isinstance(answer, dict) else answer)[:120]}"
        return None
    except BrokenPipeError:
        return _exited(server)
    finally:
        for stream in (server.stdin, server.stdout, server.stderr):
            with contextlib.suppress(OSError):
                stream.close()
        try:
            server.wait(EXIT_TIMEOUT_S)  # it exits when its stdin closes
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def _exited(server: subprocess.Popen[bytes]) -> str:
    """What a server that closed its output said: its exit code and the last line of its stderr."""
    assert server.stderr is not None
    try:
        code = server.wait(EXIT_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return "closed its output without answering `initialize`"
    said = server.stderr.read().decode(errors="replace").strip().splitlines()  # it exited: read to the end
    if len(said) >= 2 and said[-1].startswith("hint: ") and said[-2].startswith("error: "):
        return f"exited with {code}: {said[-2]}{HINT_MARK}{said[-1].removeprefix('hint: ')}"
    return f"exited with {code}" + (f": {said[-1]}" if said else "")


def _read_line(fd: int, timeout: float) -> bytes | None:
    """One line from ``fd`` within ``timeout`` seconds; None on timeout; EOFError at its end."""
    deadline = time.monotonic() + timeout
    buffered = b""
    while b"\n" not in buffered:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            return None
        chunk = os.read(fd, 65536)
        if not chunk:
            raise EOFError
        buffered += chunk
    return buffered.split(b"\n", 1)[0]


def _codex_notify() -> Check:
    try:
        document = _codex_document()
    except ConfigError as exc:
        return Check("codex_notify", "problem", exc.message, exc.hint)
    notify = document.get("notify") if document else None
    if not codex_config.is_toka_notify(notify):
        return Check("codex_notify", "ok", "Codex's notify is not toka's (optional)", "toka integrate codex")
    path = codex_config.codex_path()
    judged = _judge(notify[0], f"{path}: notify `{shlex.join(notify)}`")
    if judged is not None:
        return Check("codex_notify", judged[0], judged[1], "toka integrate codex")  # type: ignore[arg-type]
    return Check("codex_notify", "ok", f"Codex runs `{shlex.join(notify)}` after each turn")
