"""Installing toka into Codex's ``$CODEX_HOME/config.toml`` (``~/.codex``), and taking it out again.

Two entries, both running this toka by its absolute path (and the trust of toka's hooks in
``hooks.json``, ``[hooks.state]``: toka_cli/integrate/codex_hooks.py):

- ``[mcp_servers.toka]`` with ``command = "/venv/bin/toka"`` and ``args = ["mcp"]``: toka's memory
  as MCP tools (docs/mcp.md);
- ``notify = ["/venv/bin/toka", "hook", "codex"]``: Codex runs it after every turn with one JSON
  argument (``{"type": "agent-turn-complete", "thread-id": ..., "turn-id": ..., ...}``), which
  `toka hook codex` records as an event of that session. Codex runs one notify program only, so
  a ``notify`` of another program is left as it is (and said so).

The file is edited through tomlkit, which keeps the user's comments, order and layout; installing
twice changes nothing, and uninstalling removes only what is toka's.
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeGuard

from store.errors import ConfigError
from toka_cli.integrate.codex_hooks import HooksChange, apply_trust, hook_states, hooks_path, inline_hooks, plan_hooks
from toka_cli.integrate.executable import is_toka, toka_executable
from toka_cli.integrate.mcp_servers import SERVER_NAME, ServerChange, decide, read_text

if TYPE_CHECKING:
    from toka_cli.integrate.otel import Telemetry

NOTIFY_ARGS = ["hook", "codex"]


# Codex starts MCP servers with a few variables only (HOME, PATH, USER, LOGNAME, SHELL, TERM,
# LANG, TMPDIR): where toka keeps its data must be written into the entry, or `toka mcp` would
# find (and start a daemon on) another database.
PLACE_VARIABLES = ("TOKA_HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_RUNTIME_DIR")


def server_env() -> dict[str, str]:
    """The variables of this environment that say where toka's data is, for the server entry."""
    return {name: os.environ[name] for name in PLACE_VARIABLES if os.environ.get(name)}


def codex_path() -> Path:
    return Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex") / "config.toml"


def is_toka_notify(value: Any) -> TypeGuard[list[str]]:
    """A ``notify`` that runs ``toka hook codex`` (by any path)."""
    words = list(value) if isinstance(value, list) else []
    return len(words) == 3 and all(isinstance(w, str) for w in words) and is_toka(words[0]) and words[1:] == NOTIFY_ARGS


@dataclass
class CodexChange(ServerChange):
    # Codex's notify: "added", "updated", "removed", "installed", "other" (another program's,
    # left alone), "absent", or None when not asked for.
    notify: str | None = None
    # The [otel] exporter (toka_cli/integrate/otel.py), the same states; None when not asked for.
    otel: str | None = None
    # toka's hooks in hooks.json, whose trust this file records; None when not asked for.
    hooks: HooksChange | None = None

    def notify_json(self) -> dict[str, Any] | None:
        if self.notify is None:
            return None
        return {"state": self.notify, "command": shlex.join([self.command, *NOTIFY_ARGS])}


def plan_codex(
    path: Path,
    *,
    uninstall: bool = False,
    mcp: bool = True,
    notify: bool = True,
    hooks: bool = True,
    inbox: bool = True,
    otel: Telemetry | None = None,
) -> CodexChange:
    """What installing (or uninstalling) the MCP server, the notify program, toka's hooks (in
    hooks.json, their trust here) and (given the receiver's base URL and token, ``otel``) the
    telemetry exporter changes in ``path``, written nowhere yet."""
    try:
        import tomlkit  # only `toka integrate codex` pays for it
        from tomlkit.exceptions import TOMLKitError
    except ModuleNotFoundError as exc:
        if exc.name is None or exc.name.split(".")[0] != "tomlkit":
            raise
        raise ConfigError(
            "`toka integrate codex` needs tomlkit, which is not installed; nothing was changed",
            "pip install 'tomlkit>=0.12' (toka depends on it; reinstalling toka brings it back too)",
        ) from None

    before = read_text(path)
    try:
        document = tomlkit.parse(before)
    except TOMLKitError as exc:
        raise ConfigError(f"{path} is not valid TOML ({exc}); left untouched", "fix the file, then rerun") from None
    command = toka_executable()
    state = "absent"
    if mcp or uninstall:
        state = _plan_server(document, command, uninstall)
    notify_state = _plan_notify(document, command, uninstall) if notify or uninstall else None
    otel_state = None
    if otel is not None:
        from toka_cli.integrate.otel import plan_codex_otel

        otel_state = plan_codex_otel(document, otel, uninstall)
    hooks_change = (
        plan_hooks(hooks_path(), hook_states(document, path), uninstall=uninstall, inbox=inbox)
        if hooks or uninstall
        else None
    )
    if hooks_change is not None:
        hooks_change.inline = inline_hooks(document)
    trust_gone = hooks_change is not None and apply_trust(document, hooks_change.edits)
    changes = ("added", "updated", "removed")
    touched = state in changes or notify_state in changes or otel_state in changes
    touched = touched or (hooks_change is not None and bool(hooks_change.edits))
    after = tomlkit.dumps(document) if touched else before
    if otel_state == "removed" or trust_gone:
        # the blank line tomlkit wrote above the table it added
        after = after.rstrip("\n") + "\n" if after.strip() else ""
    change = CodexChange(path, state, command, before, after, notify=notify_state, otel=otel_state)
    change.hooks = hooks_change
    return change


def _plan_server(document: Any, command: str, uninstall: bool) -> str:
    import tomlkit

    servers = document.get("mcp_servers")
    entry: dict[str, Any] = {"command": command, "args": ["mcp"]}
    if env := server_env():
        entry["env"] = env
    state = decide(servers, uninstall, entry)
    if state in ("added", "updated"):
        if servers is None:
            servers = tomlkit.table(is_super_table=True)
            document["mcp_servers"] = servers
        table = tomlkit.table()
        table["command"] = command
        table["args"] = ["mcp"]
        if env:
            table["env"] = tomlkit.inline_table()
            table["env"].update(env)
        table.add(tomlkit.nl())  # a blank line before the table that follows, as people write them
        servers[SERVER_NAME] = table
    elif state == "removed" and servers is not None:
        del servers[SERVER_NAME]
        if not servers:
            del document["mcp_servers"]
    return state


def _plan_notify(document: Any, command: str, uninstall: bool) -> str:
    current = document.get("notify")
    wanted = [command, *NOTIFY_ARGS]
    if current is None:
        if uninstall:
            return "absent"
        document["notify"] = wanted  # tomlkit puts a top-level key above the first table
        return "added"
    if not is_toka_notify(current):
        return "other"
    if uninstall:
        del document["notify"]
        return "removed"
    if list(current) == wanted:
        return "installed"
    document["notify"] = wanted
    return "updated"
