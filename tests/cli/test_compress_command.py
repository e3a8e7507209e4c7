"""`toka compress`, `toka context` and `toka blob show` against a real daemon: compression
appends and never changes, rate limits and --force, --dry-run, summarizer fall-backs, automatic
compression and the lifecycle following it, and the assembled context."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest
from cli_support import EXAMPLE_SESSION, assert_error, import_example, invoke, invoke_json
from transcripts import shared_or_skip

from daemon.client.sync import Client
from daemon.client.transfer import import_files
from daemon.paths import resolve_paths

LARGEST = "marot__fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl"
LARGEST_SESSION = "fa812bfe-b295-4cca-9c2f-fdf01028cb46"


def _config(text: str) -> None:
    resolve_paths().config_file.write_text(text)


def _counts(session: str) -> tuple[int, int]:
    """(events other than compressions, compressions) of a session."""
    with Client() as client:
        events = list(client.iter_events(session=session))
    compressions = sum(1 for e in events if e["kind"] == "compression")
    return len(events) - compressions, compressions


@pytest.fixture
def largest() -> str:
    source = shared_or_skip("fixtures", "transcripts", "claude", LARGEST)
    with Client() as client:
        import_files(client, [source])
    return LARGEST_SESSION


@pytest.mark.parametrize("policy", ["fifo", "window", "summarize", "importance"])
def test_each_policy_reaches_its_target_and_changes_no_event(largest: str, policy: str) -> None:
    before = _counts(largest)
    result = invoke_json("compress", largest, "--policy", policy, "--target", "37.5")
    assert result["stored"] is True and result["policy"] == policy
    assert result["target_tokens"] == 75_000  # 37.5% of claude-opus-4-6's 200k
    assert result["tokens_after"] <= result["target_tokens"] < result["tokens_before"]
    assert result["first_seq"] is not None and result["events_in_range"] > 0
    assert _counts(largest) == (before[0], 1)
    assert invoke_json("verify", largest)["ok"] is True
    if policy in ("summarize", "importance"):
        assert "Original request" in result["summary"] and "Files changed" in result["summary"]


def test_dry_run_stores_nothing(largest: str) -> None:
    before = _counts(largest)
    result = invoke_json("compress", largest, "--dry-run")
    assert (result["stored"], result["id"]) == (False, None)
    assert result["tokens_after"] < result["tokens_before"]
    assert _counts(largest) == before


def test_the_rate_limits_hold_and_force_overrides_them(largest: str) -> None:
    assert invoke_json("compress", largest)["stored"] is True
    again = invoke("compress", largest)
    assert again.exit_code == 6
    assert_error(again.stderr, contains="compression.min_interval_s")
    assert "--force" in again.stderr
    _config("[compression]\nmin_interval_s = 0.001\n")
    assert invoke("daemon", "restart").exit_code == 0
    too_few = invoke("compress", largest)
    assert too_few.exit_code == 6
    assert_error(too_few.stderr, contains="compression.min_messages")
    assert invoke_json("compress", largest, "--force", "--target", "5")["stored"] is True


def test_the_agents_state_follows_its_compressed_size() -> None:
    with Client() as client:
        agent = client.call("agents.spawn", type="writer", window=20_000)["id"]
        for i in range(30):
            client.record(agent, "message", {"role": "user" if i % 2 else "assistant", "text": f"step {i} " * 600})
        assert client.report_usage(agent, input_tokens=100, cache_read_tokens=18_500)["state"] == "CRITICAL"
    result = invoke_json("compress", agent, "--policy", "summarize")
    assert result["stored"] is True
    with Client() as client:
        shown = client.call("agents.get", agent=agent)
    assert shown["state"] in ("ACTIVE", "WARNING") and shown["compressed_tokens"] == result["tokens_after"]
    assert shown["history"][-1]["from"] == "CRITICAL"
    assert shown["history"][-1]["compressed_tokens"] == result["tokens_after"]
    assert shown["history"][-1]["detail"].startswith("toka's compressed context")
    # Its fill stays what its last request held: one figure for the agent, wherever it is read.
    assert shown["context_tokens"] == 18_600 and shown["fill_pct"] == 93.0
    usage = invoke_json("usage", agent)
    assert (usage["context_tokens"], usage["fill_pct"]) == (18_600, 93.0)
    assert usage["compressed_tokens"] == result["tokens_after"]
    listed = {a["id"]: a for a in invoke_json("agent", "list")["agents"]}[agent]
    assert (listed["context_tokens"], listed["fill_pct"], listed["compressed_tokens"]) == (
        18_600,
        93.0,
        result["tokens_after"],
    )
    assert "toka's compressed context" in invoke("usage", agent).stdout


def test_an_agent_compresses_by_itself_at_the_trigger() -> None:
    with Client() as client:
        agent = client.call("agents.spawn", type="auto", window=20_000, auto_compress="window")["id"]
        for i in range(30):
            client.record(agent, "message", {"role": "user", "text": f"note {i} " * 600})
        client.report_usage(agent, input_tokens=100, cache_read_tokens=16_000)  # 80%: past the 75% trigger
        for _ in range(200):
            found = list(client.iter_events(session=agent, kinds=["compression"]))
            if found:
                break
            time.sleep(0.05)
    assert found and found[0]["payload"]["trigger"] == "auto" and found[0]["payload"]["policy"] == "window"


@pytest.mark.parametrize(
    ("command", "reason"),
    [
        ("import sys; sys.exit(3)", "exit"),
        ("import time; time.sleep(30)", "timed out"),
        ("pass", "nothing"),
        ("import sys; sys.stdout.buffer.write(bytes([255, 254, 0]))", "UTF-8"),
    ],
    ids=["crash", "hang", "silent", "garbage"],
)
def test_a_failing_external_summarizer_falls_back_and_says_why(largest: str, command: str, reason: str) -> None:
    summarizer = f'{sys.executable} -c "{command}"'
    _config(f"[compression]\nsummarizer = '{summarizer}'\nsummarizer_timeout = 1.0\n")
    assert invoke("daemon", "restart").exit_code == 0
    result = invoke_json("compress", largest, "--dry-run")
    used = result["summarizer"]
    assert used["kind"] == "extractive" and reason in used["fallback"]["reason"]
    assert "Original request" in result["summary"]


def test_a_working_external_summarizer_is_used(largest: str) -> None:
    summarizer = f"{sys.executable} -c \"import sys; print('SUMMARY: ' + sys.stdin.read()[:300])\""
    _config(f"[compression]\nsummarizer = '''{summarizer}'''\n")
    assert invoke("daemon", "restart").exit_code == 0
    result = invoke_json("compress", largest, "--dry-run")
    assert result["summarizer"]["kind"] == "external" and result["summarizer"]["fallback"] is None
    assert result["summary"].startswith("SUMMARY: ")


def test_context_fits_the_budget_and_says_what_it_left_out(largest: str) -> None:
    result = invoke("context", largest, "--budget", "20000", "--format", "json")
    assert result.exit_code == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["tokens"] <= 20_000 * (1 - 0.15 - 0.10)
    assert set(document["parts"]) == {"system", "memory", "summaries", "history"}
    assert document["left_out"] and all(item["reason"] for item in document["left_out"])
    included = {item["seq"] for item in document["included"] if item["seq"] is not None}
    assert not included & {item["seq"] for item in document["left_out"]}
    messages = json.loads(invoke("context", largest, "--budget", "20000").stdout)
    assert messages == document["messages"] and all(set(m) == {"role", "content"} for m in messages)
    text = invoke("context", largest, "--budget", "20000", "--format", "text").stdout
    assert text.startswith(f"{messages[0]['role']}: ")


def test_context_after_a_compression_starts_with_its_summary(largest: str) -> None:
    stored = invoke_json("compress", largest, "--policy", "summarize")
    document = json.loads(invoke("context", largest, "--format", "json").stdout)
    assert document["compressions"] == [stored["id"]]
    assert document["messages"][0]["content"].startswith(f"[summary of events {stored['first_seq']}-")
    assert all(item["seq"] is None or item["seq"] > stored["last_seq"] for item in document["included"][1:])


def test_blob_show_brings_an_elided_payload_back(largest: str) -> None:
    result = invoke_json("compress", largest, "--dry-run", "--policy", "summarize")
    assert result["elided"], "the largest fixture has payloads over 2 KiB"
    elided = result["elided"][0]
    assert f"[blob {elided['digest']} {elided['size']}]" in result["summary"]
    shown = invoke_json("blob", "show", elided["digest"][:16])
    assert shown["digest"] == elided["digest"]
    with Client() as client:
        event = client.call("events.get", seq=elided["seq"])
    assert shown["payload"] == event["payload"]


def test_blob_show_finds_a_small_payload_kept_in_its_event_row() -> None:
    import_example()
    with Client() as client:
        event = client.call("events.get", seq=1)

    shown = invoke_json("blob", "show", event["digest"][:12])

    assert shown == {"digest": event["digest"], "payload": event["payload"]}


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (("compress", EXAMPLE_SESSION, "--policy", "lottery"), 2, "unknown policy"),
        (("compress", "no-such-session"), 3, "no session matches"),
        (("context", EXAMPLE_SESSION, "--format", "xml"), 2, "unknown format"),
        (("context", EXAMPLE_SESSION, "--budget", "10"), 2, "--budget"),
        (("blob", "show", "0" * 64), 3, "no payload"),
    ],
)
def test_errors(args: tuple[str, ...], code: int, message: str) -> None:
    import_example()
    result = invoke(*args)
    assert result.exit_code == code, result.stderr
    assert message in result.stderr


def test_a_small_session_has_nothing_to_compress(tmp_path: Path) -> None:
    import_example()
    result = invoke_json("compress", EXAMPLE_SESSION, "--force")
    assert (result["stored"], result["first_seq"], result["tokens_saved"]) == (False, None, 0)
    assert "nothing to compress" in invoke("compress", EXAMPLE_SESSION, "--force").stderr


def test_a_repeated_context_comes_from_the_pool_until_the_log_moves(largest: str) -> None:
    with Client() as client:
        first = client.call("context", session=largest, budget=30_000)
        hits = client.call("pool.stats")["gets"]["hits"]
        again = client.call("context", session=largest, budget=30_000)
        assert again == first and client.call("pool.stats")["gets"]["hits"] == hits + 1
        client.record(largest, "message", {"role": "user", "text": "one more request"})
        moved = client.call("context", session=largest, budget=30_000)
    assert moved["messages"][-1] == {"role": "user", "content": "one more request"}


SECRET_SCRIPT = [
    ("message", {"role": "user", "text": "Deploy with password=hunter2 and mail bob@example.com when done"}),
    (
        "tool.call",
        {"tool": "Bash", "tool_use_id": "t1", "input": {"command": "REDIS_URL=redis://:s3cr3t@cache:6379 ./deploy"}},
    ),
    (
        "tool.result",
        {"tool_use_id": "t1", "output": "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"},
    ),
]
SECRET_VALUES = ("hunter2", "bob@example.com", "s3cr3t", "wJalrXUtnFEMI")


def _record_secrets(session: str) -> None:
    with Client() as client:
        for kind, payload in SECRET_SCRIPT:
            client.record(session, kind, payload)


def test_context_is_redacted_by_default_in_every_format() -> None:
    _record_secrets("deploy")
    result = invoke("context", "deploy", "--format", "json")
    assert result.exit_code == 0, result.stderr
    document = json.loads(result.stdout)
    shown = json.dumps(document)
    assert not [value for value in SECRET_VALUES if value in shown]
    assert document["redaction"]["raw"] is False
    assert document["redaction"]["counts"] == {"secret": 1, "email": 1, "url_password": 1, "aws_secret": 1}
    assert "password=[redacted:secret]" in document["messages"][0]["content"]
    for format_ in ("messages", "text"):
        printed = invoke("context", "deploy", "--format", format_)
        assert not [value for value in SECRET_VALUES if value in printed.stdout], format_
        assert "4 values redacted" in printed.stderr and "--raw" in printed.stderr


def test_context_raw_shows_the_log_as_recorded() -> None:
    _record_secrets("deploy")
    redacted = json.loads(invoke("context", "deploy", "--format", "json").stdout)
    raw = json.loads(invoke("context", "deploy", "--raw", "--format", "json").stdout)  # not the pooled redacted answer
    assert all(value in json.dumps(raw["messages"]) for value in SECRET_VALUES)
    assert raw["redaction"] == {"raw": True, "kinds": [], "counts": {}}
    assert [m["role"] for m in raw["messages"]] == [m["role"] for m in redacted["messages"]]
    assert raw["included"] == redacted["included"]


def test_context_redacts_only_the_configured_kinds() -> None:
    _config('[redaction]\nkinds = ["email"]\n')
    assert invoke("daemon", "restart").exit_code == 0
    _record_secrets("deploy")
    document = json.loads(invoke("context", "deploy", "--format", "json").stdout)
    assert document["redaction"]["kinds"] == ["email"] and document["redaction"]["counts"] == {"email": 1}
    assert "hunter2" in document["messages"][0]["content"]


def test_after_compress_the_fill_is_one_figure_everywhere_and_a_restart_keeps_it(largest: str) -> None:
    before = invoke_json("usage", largest)
    result = invoke_json("compress", largest, "--policy", "summarize", "--target", "37.5")
    assert result["stored"] is True and result["tokens_after"] < before["context_tokens"]

    def figures() -> list[tuple[int, float, int]]:
        usage = invoke_json("usage", largest)
        [listed] = [a for a in invoke_json("agent", "list")["agents"] if a["id"] == f"{largest}/main"]
        shown = invoke_json("agent", "show", f"{largest}/main")
        return [(d["context_tokens"], d["fill_pct"], d["compressed_tokens"]) for d in (usage, listed, shown)]

    # What the agent's latest request held, the same in usage, agent list and agent show; toka's
    # compressed context beside it.
    expected = (before["context_tokens"], before["fill_pct"], result["tokens_after"])
    assert figures() == [expected] * 3
    assert invoke("daemon", "restart").exit_code == 0
    assert figures() == [expected] * 3
    text = invoke("agent", "show", f"{largest}/main").stdout
    assert f"toka's compressed context  {result['tokens_after']:,} tokens" in text
