"""Pointing Claude Code's and Codex's own telemetry at toka's receiver (docs/otel.md), and taking
it out again.

- Claude Code: the ``env`` block of its settings.json gets ``CLAUDE_CODE_ENABLE_TELEMETRY=1``,
  ``OTEL_LOGS_EXPORTER`` and ``OTEL_METRICS_EXPORTER`` ``otlp``,
  ``OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf`` and ``OTEL_EXPORTER_OTLP_ENDPOINT`` (a base URL:
  Claude Code appends ``/v1/logs`` and ``/v1/metrics``).
- Codex: the ``[otel]`` table of its config.toml gets ``exporter = { otlp-http = { endpoint =
  ".../v1/logs", protocol = "binary" } }``; Codex posts to the endpoint as written, so it is the
  full URL.

Where the agent already exports to another endpoint, nothing is changed (state ``other``): the
user's collector keeps its data. An uninstall removes the entries only while they point at
toka. The receiver is off until ``otel.listen`` is set; installing sets it to
:data:`DEFAULT_LISTEN` in toka's config.toml when it is empty (the daemon starts listening
after a restart).
"""

from __future__ import annotations

from typing import Any

from daemon.config_file import load_settings, write_setting
from daemon.paths import resolve_paths

DEFAULT_LISTEN = "127.0.0.1:4318"
ENDPOINT = "OTEL_EXPORTER_OTLP_ENDPOINT"
# The endpoint keys a user may have pointed elsewhere: any of them set to another URL is theirs.
OTHER_ENDPOINTS = (ENDPOINT, "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT")


def listen(set_default: bool) -> tuple[str, bool]:
    """toka's ``otel.listen``, and whether it was set to the default just now (``set_default``
    when it is empty: a dry run passes False)."""
    paths = resolve_paths()
    current = load_settings(paths.config_file).settings.otel.listen
    if current:
        return current, False
    if set_default:
        write_setting(paths.config_file, "otel.listen", DEFAULT_LISTEN)
    return DEFAULT_LISTEN, True


def base_url(listen_at: str) -> str:
    """The URL an agent on this machine reaches the receiver at."""
    text = listen_at.strip()
    if text.isdigit():
        return f"http://127.0.0.1:{text}"
    host, _, port = text.rpartition(":")
    host = {"0.0.0.0": "127.0.0.1", "[::]": "[::1]", "": "127.0.0.1"}.get(host, host)
    return f"http://{host}:{port}"


def claude_env(base: str) -> dict[str, str]:
    return {
        "CLAUDE_CODE_ENABLE_TELEMETRY": "1",
        "OTEL_LOGS_EXPORTER": "otlp",
        "OTEL_METRICS_EXPORTER": "otlp",
        "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
        ENDPOINT: base,
    }


def plan_claude_env(settings: dict[str, Any], base: str, uninstall: bool) -> str:
    """Change ``settings`` (Claude Code's settings.json, as loaded) in place; the state:
    added, updated, installed, removed, absent, or other (exporting elsewhere: left alone)."""
    env = settings.get("env")
    env = env if isinstance(env, dict) else {}
    wanted = claude_env(base)
    ours = env.get(ENDPOINT) == base
    elsewhere = [key for key in OTHER_ENDPOINTS if env.get(key) not in (None, "", base)]
    if uninstall:
        if not ours:
            return "absent" if not elsewhere else "other"
        for key in wanted:
            env.pop(key, None)
        if env:
            settings["env"] = env
        else:
            settings.pop("env", None)
        return "removed"
    if elsewhere:
        return "other"
    if all(env.get(key) == value for key, value in wanted.items()):
        return "installed"
    state = "updated" if any(key in env for key in wanted) else "added"
    settings["env"] = {**env, **wanted}
    return state


def codex_exporter(base: str) -> dict[str, Any]:
    return {"otlp-http": {"endpoint": f"{base}/v1/logs", "protocol": "binary"}}


def _codex_endpoint(exporter: Any) -> str | None:
    if not isinstance(exporter, dict):
        return None
    http = exporter.get("otlp-http")
    return http.get("endpoint") if isinstance(http, dict) else None


def plan_codex_otel(document: Any, base: str, uninstall: bool) -> str:
    """Change Codex's config.toml (a tomlkit document) in place; the state, as for Claude Code."""
    import tomlkit

    table = document.get("otel")
    exporter = table.get("exporter") if table is not None else None
    wanted = codex_exporter(base)
    ours = _codex_endpoint(exporter) == wanted["otlp-http"]["endpoint"]
    if uninstall:
        if not ours:
            return "absent" if exporter in (None, "none") else "other"
        del table["exporter"]
        if not table:
            del document["otel"]
        return "removed"
    if exporter not in (None, "none") and not ours:
        return "other"  # statsig, or another collector
    if ours and isinstance(exporter, dict) and exporter["otlp-http"].get("protocol") == "binary":
        return "installed"
    inline = tomlkit.inline_table()
    http = tomlkit.inline_table()
    http.update(wanted["otlp-http"])
    inline["otlp-http"] = http
    if table is None:
        table = tomlkit.table()
        document["otel"] = table
    state = "updated" if exporter not in (None, "none") else "added"
    table["exporter"] = inline
    return state
