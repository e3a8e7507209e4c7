"""`toka hook claude-code --headroom`: one line of context fill on UserPromptSubmit, given to the
agent as the hook's additional context, else nothing. Injection is off here (TOKA_INJECT=0), so
that the fill is all the hook says (tests/hooks/test_inject.py: what it adds)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hook_support import run_hook

from daemon.client.sync import Client
from toka_cli.hook import headroom_line

PROMPT = {"session_id": "s-head", "hook_event_name": "UserPromptSubmit", "prompt": "go on"}
QUIET = {"TOKA_INJECT": "0"}


def _given(stdout: bytes) -> str:
    """The additional context a hook's output gives the agent."""
    output = json.loads(stdout)["hookSpecificOutput"]
    assert output["hookEventName"] == "UserPromptSubmit"
    text: str = output["additionalContext"]
    return text


def _usage(tokens: int, **extra: object) -> None:
    with Client(autostart=False) as client:
        client.record(
            "s-head", "usage", {"input_tokens": 10, "cache_read_tokens": tokens - 10, "output_tokens": 5, **extra}
        )


def test_nothing_before_any_usage(daemon: object) -> None:
    result = run_hook(json.dumps(PROMPT), "--headroom", env=QUIET)
    assert (result.returncode, result.stdout, result.stderr) == (0, b"", b"")


def test_one_line_once_usage_exists(daemon: object) -> None:
    _usage(142_000)
    result = run_hook(json.dumps({**PROMPT, "prompt": "next"}), "--headroom", env=QUIET)
    assert (result.returncode, _given(result.stdout), result.stderr) == (0, "context 71% of 200k", b"")
    _usage(160_000)
    result = run_hook(json.dumps({**PROMPT, "prompt": "and next"}), "--headroom", env=QUIET)
    assert _given(result.stdout) == "context 80% of 200k; compaction near"


def test_only_on_user_prompt_submit_and_only_when_asked(daemon: object) -> None:
    _usage(142_000)
    assert run_hook(json.dumps({**PROMPT, "prompt": "x"}), env=QUIET).stdout == b""
    other = {**PROMPT, "hook_event_name": "PreToolUse", "tool_name": "Read"}
    assert run_hook(json.dumps(other), "--headroom", env=QUIET).stdout == b""


def test_nothing_when_the_daemon_is_down(toka_home: Path) -> None:
    result = run_hook(json.dumps(PROMPT), "--headroom")
    assert (result.returncode, result.stdout, result.stderr) == (0, b"", b"")


@pytest.mark.parametrize(
    ("figures", "line"),
    [
        ({"context_tokens": 500_000, "context_window": 1_000_000, "fill_pct": 50.0}, "context 50% of 1M"),
        (
            {"context_tokens": 190_000, "context_window": 200_000, "fill_pct": 95.0},
            "context 95% of 200k; compaction near",
        ),
        ({"context_tokens": None, "context_window": 200_000, "fill_pct": None}, None),
    ],
)
def test_headroom_line(figures: dict[str, object], line: str | None) -> None:
    assert headroom_line(figures) == line
