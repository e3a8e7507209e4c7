"""`toka hook AGENT`, `toka statusline` and `toka integrate AGENT`: recording agent hooks and the
status line, and installing them.

The real `toka hook` and `toka statusline` never reach this module: toka_cli/entry.py runs
toka_cli/hook.py and toka_cli/statusline.py before Typer loads. The commands here are the same
functions, registered for `toka --help`, their `--help` and completions.
"""

from __future__ import annotations

import difflib
import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from store.errors import UsageError
from toka_cli.hook import record_hook
from toka_cli.integrate import claude_hooks, codex_config, codex_hooks, mcp_servers
from toka_cli.integrate.inbox import is_inbox_command
from toka_cli.options import JsonOpt
from toka_cli.output import console, emit, note
from toka_cli.statusline import show as show_statusline

AgentArg = Annotated[
    str, typer.Argument(help="The agent: claude-code, or codex (its notify program: the payload as last argument).")
]


def hook(
    agent: AgentArg,
    headroom: Annotated[
        bool, typer.Option("--headroom", help="On UserPromptSubmit, print the context fill for the agent.")
    ] = False,
    statusline: Annotated[
        bool,
        typer.Option(
            "--statusline",
            help="Claude Code's status line: the older spelling of `toka statusline`, the same command.",
        ),
    ] = False,
) -> None:
    """Record one hook payload (JSON on stdin) as an event of its session.

    Prints nothing and exits 0 whatever happens, so the agent is never blocked; when the daemon
    cannot take the event (not running, not answering, its database failing) it waits in a
    spool that the daemon ingests when it starts, and within seconds while it runs.
    """
    if statusline:
        if agent != "claude-code":
            raise UsageError(
                f"--statusline is Claude Code's status line, not {agent}'s", "toka hook claude-code --statusline"
            )
        raise typer.Exit(show_statusline(sys.stdin.buffer.read(), sys.stdout, sys.stderr))
    raw = sys.stdin.buffer.read()
    raise typer.Exit(record_hook(agent, raw, sys.stdout, sys.stderr, headroom=headroom))


def statusline() -> None:
    """Claude Code's status line: model, context fill and headroom, session cost, block cost and time left.

    Reads the status line's JSON on stdin (set `"statusLine": {"type": "command", "command":
    "toka statusline"}` in Claude Code's settings.json, or run `toka integrate claude-code
    --statusline`), records it, and prints one line; always exits 0.
    """
    raise typer.Exit(show_statusline(sys.stdin.buffer.read(), sys.stdout, sys.stderr))


def integrate(
    agent: Annotated[str, typer.Argument(help="The agent: claude-code or codex.")],
    project: Annotated[
        Path | None,
        typer.Option(
            help="Claude Code: install into DIR/.claude/settings.json and DIR/.mcp.json instead of the user's files.",
            metavar="DIR",
        ),
    ] = None,
    uninstall: Annotated[
        bool, typer.Option("--uninstall", help="Remove what toka added (hooks, MCP server, status line), only that.")
    ] = False,
    statusline_: Annotated[
        bool,
        typer.Option("--statusline", help="Also make `toka statusline` Claude Code's status line (unless one is set)."),
    ] = False,
    mcp: Annotated[
        bool, typer.Option("--mcp/--no-mcp", help="Install `toka mcp` as the agent's MCP server `toka`.")
    ] = True,
    notify: Annotated[
        bool,
        typer.Option(
            "--notify/--no-notify",
            help="Codex: make `toka hook codex` its notify program (unless one is set).",
        ),
    ] = True,
    hooks: Annotated[
        bool,
        typer.Option(
            "--hooks/--no-hooks",
            help="Codex: add toka's hooks to its hooks.json on every event, and record them as trusted.",
        ),
    ] = True,
    otel: Annotated[
        bool,
        typer.Option(
            "--otel",
            help="Also send the agent's own telemetry (per-request tokens, its cost) to toka's receiver, and turn the"
            " receiver on (otel.listen) if it is off; never over another exporter (docs/otel.md).",
        ),
    ] = False,
    inbox: Annotated[
        bool,
        typer.Option(
            "--inbox/--no-inbox",
            help="The hooks that only record drop their payload into the daemon's inbox with a few words of shell,"
            " no Python start (the agent waits milliseconds); --no-inbox: `toka hook` on every event (docs/hooks.md).",
        ),
    ] = True,
    background: Annotated[
        bool,
        typer.Option(
            "--background/--no-background",
            hidden=True,
            help="Accepted for older scripts: no hook runs in the background any more, so nothing outlives the agent.",
        ),
    ] = True,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print what would change, as a diff; write nothing.")
    ] = False,
    json_: JsonOpt = False,
) -> None:
    """Install toka into an agent: Claude Code's hooks and MCP server; Codex's hooks (trusted), MCP server and notify.

    Every other setting is kept; installing twice changes nothing; --uninstall removes what toka
    added and only that. Every entry runs this toka by its absolute path.
    """
    del background  # no hook runs in the background any more: the option is kept for older scripts
    if agent not in ("claude-code", "codex"):
        raise typer.BadParameter(f"unknown agent {agent!r} (known: claude-code, codex)", param_hint="AGENT")
    server: mcp_servers.ServerChange | None = None
    receiver, telemetry = _receiver(otel, uninstall, dry_run)
    if agent == "codex":
        server = codex_config.plan_codex(
            codex_config.codex_path(),
            uninstall=uninstall,
            mcp=mcp,
            notify=notify,
            hooks=hooks,
            inbox=inbox,
            otel=telemetry,
        )
    elif mcp or uninstall:
        server = mcp_servers.plan_claude(mcp_servers.claude_path(project), uninstall=uninstall)
    result: dict[str, Any] = {"agent": agent}
    diffs = [server.diff()] if server is not None else []
    changed = server is not None and server.changed
    if agent == "claude-code":
        change = claude_hooks.plan(
            claude_hooks.settings_path(project),
            uninstall=uninstall,
            statusline=statusline_,
            otel=telemetry,
            inbox=inbox,
        )
        _guard_token(change.path, change.otel, dry_run)
        backup = claude_hooks.apply(change) if change.changed and not dry_run else None
        changed = changed or change.changed
        diffs.insert(0, _settings_diff(change))
        result |= {
            "settings": str(change.path),
            "action": change.action,
            "command": change.command,
            "commands": {} if uninstall else claude_hooks.event_commands(change.command, inbox),
            "events": change.events,
            "updated": change.updated,
            "statusline": {"command": claude_hooks.statusline_command(), "state": change.statusline},
            "backup": None if backup is None else str(backup),
        }
        if receiver is not None:
            receiver["state"] = change.otel
    else:
        assert isinstance(server, codex_config.CodexChange)
        hooks_change = server.hooks
        result |= {
            "action": "uninstall" if uninstall else "install",
            "notify": server.notify_json(),
            "hooks": None if hooks_change is None else hooks_change.to_json(server.path),
        }
        if hooks_change is not None:
            diffs.insert(0, _text_diff(hooks_change.path, hooks_change.before, hooks_change.after))
            changed = changed or hooks_change.changed
        if receiver is not None:
            receiver["state"] = server.otel
        _guard_token(server.path, server.otel, dry_run)
    if server is not None and server.changed and not dry_run:
        mcp_servers.apply(server)  # config.toml first: the trust of hooks.json's hooks, before them
    if isinstance(server, codex_config.CodexChange) and server.hooks is not None and not dry_run:
        codex_hooks.write_hooks(server.hooks)
    result |= {
        "otel": receiver,
        "mcp": None if server is None or not (mcp or uninstall) else server.to_json(),
        "changed": changed,
        "dry_run": dry_run,
        "diff": _masked("".join(diffs), telemetry) if dry_run else None,
    }
    emit(result, json_, _integrated)


def _receiver(otel: bool, uninstall: bool, dry_run: bool) -> tuple[dict[str, Any] | None, Any]:
    """Where toka receives telemetry, turned on (otel.listen) when installing and it is off, and
    what the agent is to send there (its URL and token); None, None when neither --otel nor
    --uninstall asks about it."""
    if not (otel or uninstall):
        return None, None
    from toka_cli.integrate import otel as receiver

    installing = otel and not uninstall
    listen, turned_on = receiver.listen(set_default=installing and not dry_run)
    endpoint = receiver.base_url(listen)
    token = receiver.token(make=not dry_run) if installing else None
    shown = {"state": None, "endpoint": endpoint, "listen": listen, "listen_set": turned_on and installing}
    return shown, receiver.Telemetry(endpoint, token)


def _masked(diff: str, telemetry: Any) -> str:
    """The diff without the receiver's token: a dry run's output ends up in terminals and logs."""
    if telemetry is None or not telemetry.token:
        return diff
    return diff.replace(telemetry.token, "<the receiver's token>")


def _guard_token(path: Path, state: str | None, dry_run: bool) -> None:
    """The agent's file is about to hold the receiver's token: others may not read it."""
    if state in ("added", "updated") and not dry_run:
        from toka_cli.integrate.otel import keep_private

        if keep_private(path):
            note(f"{path}: made readable by you alone, since it now holds toka's receiver token")


def _settings_diff(change: claude_hooks.Change) -> str:
    before = change.path.read_text(encoding="utf-8") if change.path.exists() else ""
    after = json.dumps(change.settings, indent=2, ensure_ascii=False) + "\n" if change.changed else before
    return _text_diff(change.path, before, after)


def _text_diff(path: Path, before: str, after: str) -> str:
    lines = difflib.unified_diff(
        before.splitlines(keepends=True), after.splitlines(keepends=True), str(path), str(path)
    )
    return "".join(lines)


_VERBS = {"added": "add", "updated": "update", "removed": "remove"}


def _notified(result: dict[str, Any], would: str) -> None:
    notify = result["notify"]
    if notify is None:
        return
    state = notify["state"]
    if state in _VERBS:
        console().print(f"{would}{_VERBS[state]} notify: {notify['command']}")
    elif state == "other":
        console().print("notify: Codex runs another program after each turn; left as it is (Codex runs one only)")


def _hooked(result: dict[str, Any], would: str) -> None:
    """What became of toka's hooks in Codex's hooks.json, and of their trust."""
    hooks = result["hooks"]
    if hooks is None:
        return
    out = console()
    events, trusted = ", ".join(hooks["events"]), ", ".join(hooks["trusted"])
    if result["action"] == "uninstall":
        if not hooks["events"]:
            out.print(f"{hooks['file']}: toka's hooks absent")
            return
        out.print(f"{would}remove hooks from {hooks['file']}: {events}")
        if trusted:
            out.print(f"{would}remove their trust from {hooks['trust_file']}")
        if hooks["moved"]:
            out.print(f"{would}move the trust of {hooks['moved']} of your own hooks to their new places")
        return
    shown = hooks["command"]
    if hooks["inbox"]:
        shown += f" on {', '.join(codex_hooks.ANSWERING)}; on the others, {INBOX_SHOWN}"
    if hooks["events"]:
        out.print(f"{would}add hooks to {hooks['file']}: {events}: {shown}")
    if hooks["updated"]:
        out.print(f"{would}update hooks in {hooks['file']} to {shown}: {', '.join(hooks['updated'])}")
    if trusted:
        out.print(
            f"{would}trust toka's hooks in {hooks['trust_file']} ([hooks.state], as Codex's /hooks records it;"
            f" running this is your approval): {trusted}"
        )
    if not (hooks["events"] or hooks["updated"] or trusted):
        out.print(f"{hooks['file']}: toka's hooks in place, trusted")
    for event in hooks["disabled"]:
        out.print(f"{event}: toka's hook is turned off in Codex (/hooks); left so")
    if hooks["inline"]:
        out.print(f"{hooks['trust_file']} declares hooks too: Codex loads both, and warns that it does at start-up")


def _received(result: dict[str, Any], would: str) -> None:
    otel = result["otel"]
    if otel is None:
        return
    state = otel["state"]
    if state in _VERBS:
        console().print(f"{would}{_VERBS[state]} telemetry export to {otel['endpoint']}")
    elif state == "other":
        console().print(
            "telemetry: the agent already exports to another endpoint; left as it is. For both, remove that export"
            " and rerun this, then set export.otlp.endpoint to that collector: toka forwards each session there as"
            " traces (docs/otel.md)"
        )
    if otel["listen_set"]:
        console().print(
            f"{would}turn toka's receiver on: otel.listen = {otel['listen']} (then run `toka daemon restart`)"
        )


# How the table shows the inbox command, a line of shell (--json and the diff of --dry-run give it whole).
INBOX_SHOWN = "the payload into toka's inbox (a shell command: cat, no Python; docs/hooks.md)"


def _shown(command: str) -> str:
    """A hook's command as the table shows it: the inbox command by what it does."""
    if is_inbox_command(command, claude_hooks.AGENT) or is_inbox_command(command, codex_hooks.AGENT):
        return INBOX_SHOWN
    return command


def _integrated(result: dict[str, Any]) -> None:
    out = console()
    uninstall = result["action"] == "uninstall"
    verb = "remove" if uninstall else "add"
    would = "would " if result["dry_run"] else ""
    server = result["mcp"]
    if result["dry_run"] and result["diff"]:
        out.print(result["diff"], end="")
    if server is not None:
        if server["state"] in _VERBS:
            out.print(f"{would}{_VERBS[server['state']]} MCP server toka in {server['file']}: {server['command']}")
        elif server["state"] == "other":
            out.print(f"{server['file']}: an MCP server named toka runs another command; left as it is")
        else:
            out.print(f"{server['file']}: MCP server toka {'absent' if uninstall else 'in place'}")
    _received(result, would)
    if result["agent"] == "codex":
        _hooked(result, would)
        _notified(result, would)
        if result["dry_run"] and result["changed"]:
            out.print("dry run, nothing written")
        return
    line = result["statusline"]
    if not result["changed"]:
        out.print(f"{result['settings']}: nothing to {verb}, toka's hooks are {'absent' if uninstall else 'in place'}")
    commands = {event: _shown(command) for event, command in result["commands"].items()}
    for event in result["events"]:
        out.print(f"{would}{verb} {event}: {commands.get(event, result['command'])}")
    for event in result["updated"]:
        out.print(f"{would}update {event}: {commands.get(event, result['command'])}")
    if line["state"] in _VERBS:
        out.print(f"{would}{_VERBS[line['state']]} statusLine: {line['command']}")
    elif line["state"] == "absent" and not uninstall:
        out.print(f"toka can be Claude Code's status line too: rerun with --statusline to add `{line['command']}`")
    elif line["state"] == "other" and not uninstall:
        out.print("statusLine: another command is set; left as it is")
    if not result["changed"]:
        return
    if result["dry_run"]:
        out.print(f"{result['settings']}: dry run, nothing written")
    else:
        out.print(f"wrote {result['settings']}" + (f" (backup: {result['backup']})" if result["backup"] else ""))


def register(app: typer.Typer) -> None:
    app.command()(hook)
    app.command()(statusline)
    app.command()(integrate)
