"""The real Claude Code and Codex CLIs: installed from npm once per machine, and run against the
fake model (fake_model.py) in a home of the test's own.

The CLIs go into a cache folder outside the repository, ``$XDG_CACHE_HOME/toka-tests/npm`` (or
``~/.cache/toka-tests/npm``; ``TOKATEST_NPM_CACHE`` overrides it), one folder per package. A file
lock makes parallel workers wait for the one that installs; an install is reused while it is
younger than ``MAX_AGE_S`` and refreshed after (the old one is kept when the refresh fails). When
node or npm is missing, or npm cannot install (offline), the tests skip with the reason, and the
failure is remembered for ``RETRY_AFTER_S`` so that the other tests do not wait on npm again.
``TOKATEST_REQUIRE_AGENTS=1`` turns those skips into failures (for a CI that has node).
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import pytest
from daemons import Spawned

from store.errors import NotFound

# The `toka` console script of the interpreter running the tests; the agents get it by this path
# only, never through their PATH.
TOKA = Path(sys.executable).parent / "toka"

PACKAGES = {"claude": "@anthropic-ai/claude-code", "codex": "@openai/codex"}
# A week: new CLI versions are worth testing against, but not worth a download on every run.
MAX_AGE_S = 7 * 24 * 3600
# After a failed install (offline), the other workers and the next run skip without asking npm
# again for this long.
RETRY_AFTER_S = 600
INSTALL_TIMEOUT_S = 240
# One agent turn against the loopback model takes about a second; a loaded machine, more.
RUN_TIMEOUT_S = 90


@dataclass(frozen=True)
class AgentCli:
    name: str
    path: Path
    version: str


def cache_root() -> Path:
    if override := os.environ.get("TOKATEST_NPM_CACHE"):
        return Path(override)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "toka-tests" / "npm"


def _unavailable(reason: str) -> NoReturn:
    if os.environ.get("TOKATEST_REQUIRE_AGENTS") == "1":
        pytest.fail(f"{reason} (and TOKATEST_REQUIRE_AGENTS=1)", pytrace=False)
    pytest.skip(reason)


def installed(name: str) -> AgentCli:
    """The CLI ``name`` (``claude`` or ``codex``), installed when it is not; a skip saying why when
    it cannot be."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        _unavailable(f"the {name} CLI needs node and npm, and {'node' if node is None else 'npm'} is not on PATH")
    folder = cache_root() / name
    folder.mkdir(parents=True, exist_ok=True)
    binary = folder / "node_modules" / ".bin" / name
    failed = folder / "install-failed"
    with open(folder / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        installed_at = folder / "package-lock.json"  # touched by every install that succeeds
        fresh = binary.exists() and installed_at.exists() and time.time() - installed_at.stat().st_mtime < MAX_AGE_S
        recent_failure = failed.exists() and time.time() - failed.stat().st_mtime < RETRY_AFTER_S
        if not fresh and not recent_failure:
            problem = _npm_install(npm, folder, PACKAGES[name])
            if problem is None:
                failed.unlink(missing_ok=True)
            else:
                failed.write_text(problem)
        if not binary.exists():
            reason = failed.read_text() if failed.exists() else "no binary after install"
            _unavailable(f"cannot install {PACKAGES[name]} from npm into {folder}: {reason}")
    version = _version(binary)
    if version is None:
        _unavailable(f"{binary} does not run (`--version` failed)")
    return AgentCli(name, binary, version)


def _npm_install(npm: str, folder: Path, package: str) -> str | None:
    """Install ``package@latest`` into ``folder``; None, or the reason it failed."""
    manifest = folder / "package.json"
    if not manifest.exists():
        manifest.write_text(json.dumps({"private": True, "description": "toka's end-to-end tests"}) + "\n")
    command = [
        npm, "install", "--no-audit", "--no-fund", "--no-update-notifier",
        "--fetch-retries=1", "--fetch-timeout=30000", f"{package}@latest",
    ]  # fmt: skip
    try:
        done = subprocess.run(command, cwd=folder, capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return f"npm install took over {INSTALL_TIMEOUT_S}s"
    if done.returncode != 0:
        # npm's own summary: the error code and what failed (e.g. "request to ... failed, reason:
        # connect ECONNREFUSED"), not the stack nor the pointer to its log.
        said = [line.removeprefix("npm error ").strip() for line in done.stderr.splitlines()]
        useful = [line for line in said if line.startswith(("code ", "FetchError", "network")) or "404" in line]
        summary = "; ".join(useful[:2]) or (said[-1] if said else "no output")
        return f"npm install exited {done.returncode}: {summary}"
    (folder / "package-lock.json").touch()  # the install's age, even when nothing changed
    return None


def _version(binary: Path) -> str | None:
    try:
        done = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=60, env=base_env())
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def agent_path() -> str:
    """The PATH the agents run with: node's folder and the system's, never the venv's bin (the
    hooks and servers toka installs must work without it)."""
    node = shutil.which("node")
    folders = [str(Path(node).parent)] if node else []
    folders += [f for f in ("/usr/local/bin", "/usr/bin", "/bin") if f not in folders]
    venv_bin = str(TOKA.parent)
    return os.pathsep.join(f for f in folders if f != venv_bin)


def base_env(home: Path | None = None) -> dict[str, str]:
    """An environment for an agent CLI: this test's TOKA_HOME (and watch.agents, the embedding model),
    a HOME of its own, the agent PATH."""
    env = {
        "PATH": agent_path(),
        "LANG": "C.UTF-8",
        "TERM": "xterm-256color",
        "TOKA_HOME": os.environ.get("TOKA_HOME", ""),
    }
    # A daemon the agent's toka starts follows the agents' folders, and embeds with the model, as the
    # test's would (conftest.py).
    for name in ("TOKA_WATCH_AGENTS", "TOKA_RECALL_EMBEDDING_MODEL"):
        if name in os.environ:
            env[name] = os.environ[name]
    if home is not None:
        env["HOME"] = str(home)
    return env


def claude_env(home: Path, model_url: str, **extra: str) -> dict[str, str]:
    return {
        **base_env(home),
        "ANTHROPIC_BASE_URL": model_url,
        "ANTHROPIC_API_KEY": "sk-ant-test-key",
        "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        **extra,
    }


def codex_env(home: Path, **extra: str) -> dict[str, str]:
    return {**base_env(home), "CODEX_HOME": str(home / ".codex"), "FAKE_KEY": "sk-test-key", **extra}


def run(command: list[str], env: Mapping[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run an agent to its end, stdin closed; a failure shows what it printed."""
    done = subprocess.run(
        command, cwd=cwd, env=dict(env), stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=RUN_TIMEOUT_S
    )
    assert done.returncode == 0, f"{command[0]} exited {done.returncode}\nstdout: {done.stdout}\nstderr: {done.stderr}"
    return done


def toka(*args: str, env: Mapping[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """The real `toka` in a child process (this test's TOKA_HOME), failing the test on a non-zero exit."""
    done = subprocess.run(
        [str(TOKA), *args], capture_output=True, text=True, env={**os.environ, **(env or {})}, cwd=cwd, timeout=60
    )
    assert done.returncode == 0, f"toka {' '.join(args)} exited {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done


def toka_json(*args: str, env: Mapping[str, str] | None = None, cwd: Path | None = None) -> Any:
    return json.loads(toka(*args, "--json", env=env, cwd=cwd).stdout)


def logged(daemon: Spawned, session: str, *kinds: str) -> list[dict[str, Any]]:
    """The session's events of ``kinds`` as the daemon has them now (none while the session is
    unknown): a quick look for a test waiting on the agent, which asserts through the CLI."""
    try:
        with daemon.client() as client:
            found: dict[str, Any] = client.call("events.query", session=session, kinds=list(kinds))
    except NotFound:
        return []
    return list(found["events"])
