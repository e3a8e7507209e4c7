"""The optional packages of the otel extra, named as pip knows them when one is missing (an
ImportError names the module: ``google`` for protobuf)."""

from __future__ import annotations

INSTALL = "pip install 'toka[otel]'"
_PACKAGES = {"google": "protobuf", "opentelemetry": "opentelemetry-proto", "aiohttp": "aiohttp"}


def missing(exc: ImportError) -> str:
    """``the otel extra (protobuf is not installed)``."""
    top = (exc.name or "").split(".")[0]
    return f"the otel extra ({_PACKAGES.get(top, top or 'one of its packages')} is not installed)"
