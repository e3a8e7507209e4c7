"""The hook's fast path loads neither Typer, Rich, Textual, asyncio, aiosqlite, pydantic nor blake3."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from hook_support import TOKA

from daemon.paths import resolve_paths

HEAVY = ("typer", "rich", "textual", "asyncio", "aiosqlite", "pydantic", "blake3", "click")
CHECK = (
    "import sys\n"
    "sys.argv = ['toka', 'hook', 'claude-code']\n"
    "from toka_cli.entry import main\n"
    "try:\n"
    "    main()\n"
    "except SystemExit as exit:\n"
    "    code = exit.code\n"
    f"print(code, sorted(m for m in {HEAVY!r} if m in sys.modules), file=sys.stderr)\n"
)
PAYLOAD = json.dumps({"session_id": "s-fast", "hook_event_name": "PreToolUse", "tool_name": "Read"})


def _loaded() -> str:
    result = subprocess.run([sys.executable, "-c", CHECK], input=PAYLOAD, capture_output=True, text=True, timeout=60)
    assert result.stdout == ""
    return result.stderr.strip()


def test_spooling_loads_nothing_heavy(toka_home: Path) -> None:
    assert _loaded() == "0 []"
    assert resolve_paths().spool.exists()  # the hook did run: the daemon is down, so it spooled


def test_recording_loads_nothing_heavy(daemon: object) -> None:
    assert _loaded() == "0 []"
    assert not resolve_paths().spool.exists()  # it went to the daemon


def test_hook_is_in_the_help_and_its_help_comes_from_the_app() -> None:
    listing = subprocess.run([str(TOKA), "--help"], capture_output=True, text=True, timeout=60)
    assert listing.returncode == 0 and " hook " in listing.stdout and " integrate " in listing.stdout
    own = subprocess.run([str(TOKA), "hook", "claude-code", "--help"], capture_output=True, text=True, timeout=60)
    assert own.returncode == 0 and "--headroom" in own.stdout


def test_recording_loads_no_pathlib(daemon: object) -> None:
    # Run without site (-S) and from the source tree: an editable install's import finder loads
    # pathlib into every process of its venv, so the hook's own imports show only this way.
    root = Path(__file__).resolve().parents[2]
    check = CHECK.replace(repr(HEAVY), repr(("pathlib",)))
    result = subprocess.run(
        [sys.executable, "-S", "-c", check],
        input=PAYLOAD,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(root)},
    )
    assert result.stderr.strip() == "0 []"
    assert not resolve_paths().spool.exists()  # it went to the daemon
