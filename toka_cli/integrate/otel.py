"""Pointing Claude Code's and Codex's own telemetry at toka's receiver (docs/otel.md), and taking
it out again.

- Claude Code: the ``env`` block of its settings.json gets ``CLAUDE_CODE_ENABLE_TELEMETRY=1``,
  ``OTEL_LOGS_EXPORTER`` and ``OTEL_METRICS_EXPORTER`` ``otlp``,
  ``OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf``, ``OTEL_EXPORTER_OTLP_ENDPOINT`` (a base URL:
  Claude Code appends ``/v1/logs`` and ``/v1/metrics``) and ``OTEL_EXPORTER_OTLP_HEADERS``
  (``Authorization=Bearer TOKEN``).
- Codex: the ``[otel]`` table of its config.toml gets ``exporter = { otlp-http = { endpoint =
  ".../v1/logs", protocol = "binary", headers = { Authorization = "Bearer TOKEN" } } }``; Codex
  posts to the endpoint as written, so it is the full URL.

The token is the receiver's (daemon/otel/token.py: ``otel.token``, else the one kept beside the
config, made here when the daemon has not made it yet), so the agent's file then holds a secret:
one that others may read is made the user's alone (:func:`keep_private`). With
``otel.require_token = false`` no header is written.

Where the agent already exports to another endpoint, nothing is changed (state ``other``): the
user's collector keeps its data. An uninstall removes the entries only while they point at
toka. The receiver is off until ``otel.listen`` is set; installing sets it to
:data:`DEFAULT_LISTEN` in toka's config.toml when it is empty (the daemon starts listening
after a restart).
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from daemon.config_file import load_settings, write_setting
from daemon.otel.settings import OtelSettings
from daemon.otel.token import receiver_token
from daemon.paths import resolve_paths
from daemon.sections import SECTIONS

DEFAULT_LISTEN = "127.0.0.1:4318"
ENDPOINT = "OTEL_EXPORTER_OTLP_ENDPOINT"
HEADERS = "OTEL_EXPORTER_OTLP_HEADERS"
# What a dry run shows for a token the daemon has not made yet (a dry run makes nothing).
UNMADE = "TOKEN-MADE-ON-INSTALL"


@dataclass(frozen=True, slots=True)
class Telemetry:
    """Where an agent sends its telemetry: the receiver's base URL, and the token it must carry
    (None when the receiver takes requests without one)."""

    base: str
    token: str | None = None


# The endpoint keys a user may have pointed elsewhere: any of them set to another URL is theirs.
OTHER_ENDPOINTS = (ENDPOINT, "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT")


def listen(set_default: bool) -> tuple[str, bool]:
    """toka's ``otel.listen``, and whether it was set to the default just now (``set_default``
    when it is empty: a dry run passes False)."""
    paths = resolve_paths()
    current = load_settings(SECTIONS, paths.config_file).settings[OtelSettings].listen
    if current:
        return current, False
    if set_default:
        write_setting(SECTIONS, paths.config_file, "otel.listen", DEFAULT_LISTEN)
    return DEFAULT_LISTEN, True


def token(make: bool) -> str | None:
    """The token the receiver requires, made now when it does not exist yet and ``make`` (a dry
    run passes False, and is shown a placeholder)."""
    paths = resolve_paths()
    settings = load_settings(SECTIONS, paths.config_file).settings
    otel = settings[OtelSettings]
    if not make and not otel.token.strip() and otel.require_token and not paths.otel_token.exists():
        return UNMADE
    return receiver_token(settings, paths)


def keep_private(path: Path) -> bool:
    """Make the agent's file, about to hold the token, readable by its owner alone; whether its
    mode changed."""
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        return False  # written new: the integration writes it 0600
    if not mode & 0o077:
        return False
    os.chmod(path, mode & 0o700)
    return True


def base_url(listen_at: str) -> str:
    """The URL an agent on this machine reaches the receiver at."""
    text = listen_at.strip()
    if text.isdigit():
        return f"http://127.0.0.1:{text}"
    host, _, port = text.rpartition(":")
    host = {"0.0.0.0": "127.0.0.1", "[::]": "[::1]", "": "127.0.0.1"}.get(host, host)
    return f"http://{host}:{port}"


def claude_env(telemetry: Telemetry) -> dict[str, str]:
    env = {
        "CLAUDE_CODE_ENABLE_TELEMETRY": "1",
        "OTEL_LOGS_EXPORTER": "otlp",
        "OTEL_METRICS_EXPORTER": "otlp",
        "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
        ENDPOINT: telemetry.base,
    }
    if telemetry.token is not None:
        # Claude Code's exporter reads name=value pairs, values percent-decoded; the token is
        # URL-safe, and the space is written as Claude Code's own documentation writes it.
        env[HEADERS] = f"Authorization=Bearer {telemetry.token}"
    return env


def plan_claude_env(settings: dict[str, Any], telemetry: Telemetry, uninstall: bool) -> str:
    """Change ``settings`` (Claude Code's settings.json, as loaded) in place; the state:
    added, updated, installed, removed, absent, or other (exporting elsewhere: left alone)."""
    env = settings.get("env")
    env = env if isinstance(env, dict) else {}
    base = telemetry.base
    wanted = claude_env(telemetry)
    ours = env.get(ENDPOINT) == base
    elsewhere = [key for key in OTHER_ENDPOINTS if env.get(key) not in (None, "", base)]
    if uninstall:
        if not ours:
            return "absent" if not elsewhere else "other"
        for key in [*wanted, HEADERS]:
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


def codex_exporter(telemetry: Telemetry) -> dict[str, Any]:
    http: dict[str, Any] = {"endpoint": f"{telemetry.base}/v1/logs", "protocol": "binary"}
    if telemetry.token is not None:
        http["headers"] = {"Authorization": f"Bearer {telemetry.token}"}
    return {"otlp-http": http}


def _codex_endpoint(exporter: Any) -> str | None:
    if not isinstance(exporter, dict):
        return None
    http = exporter.get("otlp-http")
    return http.get("endpoint") if isinstance(http, dict) else None


def plan_codex_otel(document: Any, telemetry: Telemetry, uninstall: bool) -> str:
    """Change Codex's config.toml (a tomlkit document) in place; the state, as for Claude Code."""
    import tomlkit

    table = document.get("otel")
    exporter = table.get("exporter") if table is not None else None
    wanted = codex_exporter(telemetry)
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
    current = _plain(exporter["otlp-http"]) if ours and isinstance(exporter, dict) else {}
    merged = current | wanted["otlp-http"]  # the user's other keys (tls, headers of their own) kept
    if isinstance(current.get("headers"), dict) and "headers" in merged:
        merged["headers"] = current["headers"] | merged["headers"]
    if ours and merged == current:
        return "installed"
    inline = tomlkit.inline_table()
    http = tomlkit.inline_table()
    for key, value in merged.items():
        if isinstance(value, dict):
            headers = tomlkit.inline_table()
            headers.update(value)
            value = headers
        http[key] = value
    inline["otlp-http"] = http
    if table is None:
        table = tomlkit.table()
        document["otel"] = table
    state = "updated" if exporter not in (None, "none") else "added"
    table["exporter"] = inline
    return state


def _plain(table: Any) -> Any:
    """A tomlkit table as plain dicts, to compare with what is wanted."""
    if isinstance(table, dict):
        return {str(key): _plain(value) for key, value in table.items()}
    return table
