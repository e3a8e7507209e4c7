"""The receiver's bearer token: ``otel.token`` when it is set, else a random one kept in
``otel.token`` in the config dir (mode 0600, beside ``heads.key``), made by whichever comes first
of the daemon's start and ``toka integrate --otel`` (which writes it into the agent's settings).
With ``otel.require_token = false`` and no ``otel.token`` there is none: every process that
reaches the port may write into the log.

Kept apart from the server (no aiohttp here), since the CLI reads it too.
"""

from __future__ import annotations

import os
import secrets

from daemon.config import Settings
from daemon.otel.settings import OtelSettings
from daemon.ownership import open_private, private_dir, read_private
from daemon.paths import Paths
from store.errors import ConfigError

# 32 random bytes, URL-safe: nothing in it needs escaping in a header or in
# OTEL_EXPORTER_OTLP_HEADERS, whose values are percent-decoded.
TOKEN_BYTES = 32


def receiver_token(settings: Settings, paths: Paths) -> str | None:
    """The token requests must carry, made on first use; None when none is required."""
    configured = settings[OtelSettings].token.strip()
    if configured:
        return configured
    if not settings[OtelSettings].require_token:
        return None
    return stored_token(paths)


def stored_token(paths: Paths) -> str:
    """The token in ``paths.otel_token``, made first when the file is missing. Two processes
    making it at once agree: the file appears whole (linked into place) or not at all."""
    path = paths.otel_token
    private_dir(path.parent)
    try:
        return _read(paths)
    except FileNotFoundError:
        pass
    token = secrets.token_urlsafe(TOKEN_BYTES)
    draft = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
    fd = open_private(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    try:
        with os.fdopen(fd, "w") as out:
            out.write(token + "\n")
            out.flush()
            os.fsync(out.fileno())
        try:
            os.link(draft, path)
        except FileExistsError:  # another process made it first: use that one
            return _read(paths)
    finally:
        draft.unlink(missing_ok=True)
    return token


def _read(paths: Paths) -> str:
    path = paths.otel_token
    token = read_private(path).decode(errors="replace").strip()
    if not token or any(char.isspace() for char in token):
        raise ConfigError(
            f"{path} does not hold a token (one word)", f"remove it: a new one is made (or set otel.token); rm {path}"
        )
    return token
