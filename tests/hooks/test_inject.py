"""What the hooks give the agent (daemon/inject/, docs/injection.md): the real `toka hook
claude-code` against a real daemon, its printed answer read as Claude Code reads it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from daemons import Spawned, Spawner, wait_for
from hook_support import run_hook

from daemon.client.sync import Client
from daemon.paths import resolve_paths

FOLDER = "/work/shop"
DECISION = "Persist the job queue in Redis streams rather than RabbitMQ"
TODO = "Move the retry worker onto the new queue"
REQUEST = "Make the order export run in the background."


def hook(session: str, event: str, env: dict[str, str] | None = None, **fields: Any) -> str | None:
    """Run the hook with one payload; the additional context it gives the agent, or None."""
    payload = {"session_id": session, "hook_event_name": event, "cwd": FOLDER, **fields}
    result = run_hook(json.dumps(payload), env=env)
    assert (result.returncode, result.stderr) == (0, b"")
    if not result.stdout:
        return None
    output = json.loads(result.stdout)["hookSpecificOutput"]
    assert output["hookEventName"] == event
    text: str = output["additionalContext"]
    return text


def work(client: Client, session: str) -> None:
    """A session that started in FOLDER, was asked for something, decided and left a to-do."""
    hook(session, "SessionStart", source="startup")
    client.record(session, "message", {"role": "user", "text": REQUEST})
    client.note(session, "decision", DECISION, reason="streams keep the order")
    client.note(session, "todo", TODO)


def injected(client: Client, session: str) -> list[dict[str, Any]]:
    return [e["payload"] for e in client.iter_events(session=session) if e["kind"] == "context.injected"]


def handoffs(client: Client, session: str) -> list[dict[str, Any]]:
    return [e for e in client.iter_events(session=session) if e["kind"] == "handoff"]


def configure(text: str) -> None:
    resolve_paths().config_file.write_text(text)


def test_after_a_compaction_the_agent_gets_its_decisions_and_to_dos_back(daemon: Spawned) -> None:
    with Client(autostart=False) as client:
        work(client, "s-compact")
        assert hook("s-compact", "PreCompact", trigger="manual") is None
        # The PreCompact built the session's handoff in the background.
        wait_for(lambda: handoffs(client, "s-compact"), "the PreCompact's handoff is in the log")
        given = hook("s-compact", "SessionStart", source="compact")
        assert given is not None and DECISION in given and TODO in given and REQUEST in given
        [record] = injected(client, "s-compact")
        [handoff] = handoffs(client, "s-compact")
        assert (record["why"], record["source"], record["handoff"], record["text"]) == (
            "handoff",
            "compact",
            handoff["id"],
            given,
        )
        assert handoff["payload"]["reason"] == "compaction"


def test_a_handoff_built_before_more_work_is_built_again(daemon: Spawned) -> None:
    with Client(autostart=False) as client:
        work(client, "s-stale")
        client.call("handoffs.create", target="s-stale")
        client.note("s-stale", "decision", "Keep the export idempotent")
        given = hook("s-stale", "SessionStart", source="compact")
        assert given is not None and "Keep the export idempotent" in given
        assert len(handoffs(client, "s-stale")) == 2


def test_the_next_session_in_the_folder_of_a_handed_off_one_gets_its_handoff_once(daemon: Spawned) -> None:
    with Client(autostart=False) as client:
        work(client, "s-before")
        made = client.call("handoffs.create", target="s-before")
        given = hook("s-after", "SessionStart", source="startup")
        assert given is not None and DECISION in given
        assert injected(client, "s-after")[0]["handed_on"] == made["id"]
        assert hook("s-third", "SessionStart", source="startup") is None


def test_a_session_that_was_not_handed_off_gives_the_next_one_nothing(daemon: Spawned) -> None:
    with Client(autostart=False) as client:
        work(client, "s-plain")
        assert hook("s-next", "SessionStart", source="startup") is None
        elsewhere = {"cwd": "/work/other"}
        client.call("handoffs.create", target="s-plain")
        assert hook("s-away", "SessionStart", source="startup", **elsewhere) is None


def test_a_resume_gets_the_handoff_only_when_the_session_was_compacted_since(daemon: Spawned) -> None:
    with Client(autostart=False) as client:
        work(client, "s-resume")
        assert hook("s-resume", "SessionStart", source="resume") is None
        client.record("s-resume", "compaction", {"trigger": "auto", "pre_tokens": 150_000})
        given = hook("s-resume", "SessionStart", source="resume")
        assert given is not None and DECISION in given
        assert hook("s-resume", "SessionStart", source="resume") is None


def test_a_cleared_session_under_a_new_id_gets_the_folder_s_previous_session(daemon: Spawned) -> None:
    with Client(autostart=False) as client:
        work(client, "s-cleared")
        given = hook("s-fresh", "SessionStart", source="clear")
        assert given is not None and TODO in given


def test_critical_is_told_on_the_next_prompt_once(daemon: Spawned) -> None:
    with Client(autostart=False) as client:
        work(client, "s-full")
        assert hook("s-full", "UserPromptSubmit", prompt="go on") is None
        client.record("s-full", "usage", {"input_tokens": 10, "cache_read_tokens": 183_990, "output_tokens": 5})
        notice = hook("s-full", "UserPromptSubmit", prompt="and on")
        assert notice is not None
        assert "92% of its 200k-token window (CRITICAL)" in notice and "/compact" in notice
        [record] = injected(client, "s-full")
        [handoff] = handoffs(client, "s-full")
        assert record["why"] == "notice" and record["handoff"] == handoff["id"]
        assert f"toka handoff show {handoff['id'][:12]}" in notice
        assert hook("s-full", "UserPromptSubmit", prompt="more") is None  # once per change


def test_warning_is_told_once_when_the_state_changes_to_it(daemon: Spawned) -> None:
    with Client(autostart=False) as client:
        client.record("s-warn", "usage", {"input_tokens": 10, "cache_read_tokens": 155_990, "output_tokens": 5})
        notice = hook("s-warn", "UserPromptSubmit", prompt="go on")
        assert notice is not None and "78% of its 200k-token window (WARNING)" in notice
        assert hook("s-warn", "UserPromptSubmit", prompt="again") is None


def test_toka_inject_0_records_and_gives_nothing(daemon: Spawned) -> None:
    with Client(autostart=False) as client:
        work(client, "s-quiet")
        client.call("handoffs.create", target="s-quiet")
        quiet = {"TOKA_INJECT": "0"}
        assert hook("s-quiet", "SessionStart", env=quiet, source="compact") is None
        kinds = [e["kind"] for e in client.iter_events(session="s-quiet")]
        assert kinds.count("hook.session_start") == 2 and "context.injected" not in kinds


@pytest.mark.parametrize(("mode", "notice_given"), [("off", False), ("handoffs", False), ("all", True)])
def test_the_mode_setting_turns_injection_off_or_down_to_handoffs(
    spawn: Spawner, mode: str, notice_given: bool
) -> None:
    configure(f'[inject]\nmode = "{mode}"\n')
    spawn()
    with Client(autostart=False) as client:
        work(client, "s-mode")
        client.record("s-mode", "usage", {"input_tokens": 10, "cache_read_tokens": 183_990, "output_tokens": 5})
        assert (hook("s-mode", "UserPromptSubmit", prompt="go") is not None) == notice_given
        given = hook("s-mode", "SessionStart", source="compact")
        assert (given is not None) == (mode != "off")
        kinds = [e["kind"] for e in client.iter_events(session="s-mode")]
        assert kinds.count("hook.user_prompt_submit") == 1  # recorded whatever the mode


def test_a_long_handoff_is_cut_to_the_budget_and_says_where_the_rest_is(spawn: Spawner) -> None:
    configure("[inject]\nbudget_tokens = 200\n")
    spawn()
    with Client(autostart=False) as client:
        work(client, "s-long")
        for n in range(40):
            client.note("s-long", "constraint", f"constraint number {n}: the export must keep working while it moves")
        given = hook("s-long", "SessionStart", source="compact")
        assert given is not None
        [record] = injected(client, "s-long")
        assert record["cut"] is True and record["tokens"] <= 200
        assert given.endswith(f"the whole handoff is `toka handoff show {record['handoff'][:12]}`]")


def test_secrets_are_redacted_from_what_the_agent_is_given(daemon: Spawned) -> None:
    secret = "sk-ant-api03-" + "x7Q" * 30
    with Client(autostart=False) as client:
        work(client, "s-secret")
        client.note("s-secret", "constraint", f"call the API with {secret}")
        given = hook("s-secret", "SessionStart", source="compact")
        assert given is not None and "call the API with" in given and secret not in given


def test_with_the_daemon_down_the_hook_spools_and_gives_nothing(toka_home: Path) -> None:
    assert hook("s-down", "SessionStart", source="compact") is None
    assert resolve_paths().data_dir.joinpath("hooks.spool.jsonl").exists()


def test_recall_gives_a_new_session_the_folder_s_notes_when_turned_on(spawn: Spawner) -> None:
    configure("[inject]\nrecall = true\n")
    spawn()
    with Client(autostart=False) as client:
        work(client, "s-noted")
        given = hook("s-new", "SessionStart", source="startup")
        assert given is not None and given.startswith("toka: notes recorded in this folder's earlier sessions")
        assert f"- decision: {DECISION}" in given and f"- todo: {TODO}" in given
        assert injected(client, "s-new")[0]["why"] == "recall"


def test_recall_gives_the_notes_nearest_the_last_request_first_with_semantic_recall(spawn: Spawner) -> None:
    configure("[inject]\nrecall = true\n")
    spawn()
    near = "idle customers are signed out after thirty minutes because the session cookie is never renewed"
    with Client(autostart=False) as client:
        wait_for(lambda: client.call("recall.status")["embedded"] is not None, "the embedding model has loaded")
        hook("s-login", "SessionStart", source="startup")
        client.record("s-login", "message", {"role": "user", "text": "why does the login page time out?"})
        client.note("s-login", "decision", near)
        for text in ("the invoice PDF uses the new logo", "CSS grid for the settings screen", TODO):
            client.note("s-login", "todo", text)
        given = hook("s-next", "SessionStart", source="startup")
        assert given is not None
        header, first, *rest = given.splitlines()
        assert header == "toka: notes recorded in this folder's earlier sessions (nearest the last request first):"
        assert first == f"- decision: {near}" and len(rest) == 3


def test_a_session_recorded_by_its_hooks_alone_is_given_its_prompts_and_notes(daemon: Spawned) -> None:
    with Client(autostart=False) as client:
        hook("s-hooks", "SessionStart", source="startup")
        hook("s-hooks", "UserPromptSubmit", env={"TOKA_INJECT": "0"}, prompt=REQUEST)
        hook("s-hooks", "UserPromptSubmit", env={"TOKA_INJECT": "0"}, prompt="/compact")
        client.note("s-hooks", "todo", TODO)
        given = hook("s-hooks", "SessionStart", source="compact")
        assert given is not None and REQUEST in given and TODO in given
        [handoff] = handoffs(client, "s-hooks")
        document = client.call("handoffs.get", id=handoff["id"])["document"]
        assert document["task"]["request"]["text"] == REQUEST  # the slash command is no request
        assert [t["text"] for t in document["todos"]["items"]] == [TODO]
