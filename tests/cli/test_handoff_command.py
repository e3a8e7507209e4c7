"""`toka handoff ...` and `toka note`: documents built from the example session, stored,
shown three ways, listed, walked as a chain, checked against the log; and the errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_support import EXAMPLE_SESSION, assert_error, import_example, invoke, invoke_json

from daemon.client.sync import Client
from daemon.paths import resolve_paths
from store.errors import NotFound


@pytest.fixture
def handoff() -> dict[str, Any]:
    import_example()
    assert invoke("note", EXAMPLE_SESSION, "assumption", "The auth service recovers within a minute").exit_code == 0
    created: dict[str, Any] = invoke_json("handoff", "create", EXAMPLE_SESSION)
    return created


def test_create_builds_from_the_log_and_stores_it(handoff: dict[str, Any]) -> None:
    document = handoff["document"]
    assert document["subject"]["agent"] == f"{EXAMPLE_SESSION}/main"
    assert [n["text"] for n in document["decisions"]] and [n["text"] for n in document["rejected"]]
    assert [n["text"] for n in document["assumptions"]] == ["The auth service recovers within a minute"]
    assert {f["path"] for f in document["files"]} == {"src/auth/client.py", "src/auth/retry.py"}
    assert handoff["markdown"].startswith("---\n") and "## 1. Original request" in handoff["markdown"]
    with Client() as client:
        [stored] = client.iter_events(session=EXAMPLE_SESSION, kinds=["handoff"])
    assert stored["id"] == handoff["id"] and stored["payload"]["document"] == document


def test_show_prints_markdown_prompt_or_json(handoff: dict[str, Any]) -> None:
    prefix = handoff["id"][:10]
    assert invoke("handoff", "show", prefix).stdout == handoff["markdown"]
    assert invoke("handoff", "show", prefix, "--format", "prompt").stdout == handoff["prompt"]
    shown = json.loads(invoke("handoff", "show", prefix, "--format", "json").stdout)
    assert shown["document"] == handoff["document"] and shown["active"] is True


def test_list_chain_and_stats(handoff: dict[str, Any]) -> None:
    [row] = invoke_json("handoff", "list")["handoffs"]
    assert (row["id"], row["trace"], row["successor"], row["reason"], row["active"]) == (
        handoff["id"],
        EXAMPLE_SESSION,
        None,
        None,
        True,
    )
    second = invoke_json("handoff", "create", EXAMPLE_SESSION)  # the log grew? same document, same event
    assert second["id"] == handoff["id"]
    chain = invoke_json("handoff", "chain", EXAMPLE_SESSION)
    assert [h["id"] for h in chain["handoffs"]] == [handoff["id"]]
    stats = invoke_json("handoff", "stats")
    assert (stats["handoffs"], stats["traces"], stats["by_reason"]) == (1, 1, {"manual": 1})
    assert stats["average_fill_pct"] == row["fill_pct"]
    shown = invoke("handoff", "stats")
    assert shown.exit_code == 0 and "{" not in shown.stdout
    assert [line.split() for line in shown.stdout.splitlines()] == [
        ["handoffs", "1"],
        ["traces", "1"],
        ["average", "fill", f"{row['fill_pct']:.1f}%"],
        ["average", "completion", "-"],
        [],
        ["reason", "handoffs"],
        ["manual", "1"],
    ]


def test_verify_passes_for_an_intact_handoff_while_the_log_moves_on(handoff: dict[str, Any]) -> None:
    assert invoke("record", EXAMPLE_SESSION, "message", '{"role": "user", "text": "one more thing"}').exit_code == 0
    report = invoke_json("handoff", "verify", handoff["id"])
    assert (report["ok"], report["digest"], report["rebuilt"]) == (True, report["digest"], report["digest"])
    result = invoke("handoff", "verify", handoff["id"])
    assert result.exit_code == 0 and result.stdout.startswith("ok: handoff")


def test_verify_catches_a_document_that_is_not_what_it_claims(handoff: dict[str, Any]) -> None:
    forged = handoff["document"] | {"decisions": []}  # an edited copy, appended as a handoff
    payload = {"trace": EXAMPLE_SESSION, "document": forged, "markdown": "", "prompt": ""}
    with Client() as client:
        event = client.record(EXAMPLE_SESSION, "handoff", payload)
    result = invoke("handoff", "verify", event["id"])
    assert result.exit_code == 5
    assert_error(result.stderr, contains="does not match its own digest")


def test_write_refuses_to_overwrite_without_force(handoff: dict[str, Any], tmp_path: Path) -> None:
    target = tmp_path / "handoff.md"
    target.write_text("mine")
    result = invoke("handoff", "create", EXAMPLE_SESSION, "--write", str(target))
    assert result.exit_code == 2
    assert_error(result.stderr, contains="exists")
    assert target.read_text() == "mine"
    assert invoke("handoff", "create", EXAMPLE_SESSION, "--write", str(target), "--force").exit_code == 0
    assert target.read_text() == handoff["markdown"]


def test_markdown_goes_to_the_data_dir_when_the_config_asks() -> None:
    resolve_paths().config_file.write_text("[handoff]\nsave_markdown = true\n")
    import_example()
    created = invoke_json("handoff", "create", EXAMPLE_SESSION)
    saved = resolve_paths().handoffs / EXAMPLE_SESSION / f"{created['id'][:16]}.md"
    assert saved.read_text() == created["markdown"]


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (("handoff", "show", "f" * 12), 3, "no handoff matches"),
        (("handoff", "show", "SEQ1"), 3, "not a handoff"),
        (("handoff", "show", "ID", "--format", "pdf"), 2, "unknown format 'pdf'"),
        (("handoff", "create", "no-such-session"), 3, "no session matches"),
        (("handoff", "chain", "no-such-trace"), 3, "no trace"),
        (("note", "SESSION", "opinion", "tabs"), 2, "unknown note kind"),
    ],
)
def test_errors(handoff: dict[str, Any], args: tuple[str, ...], code: int, message: str) -> None:
    with Client() as client:
        first_id = client.call("events.get", seq=1)["id"]
    replace = {"SEQ1": first_id, "ID": handoff["id"], "SESSION": EXAMPLE_SESSION}
    result = invoke(*(replace.get(a, a) for a in args))
    assert result.exit_code == code, result.stderr
    assert message in result.stderr


@pytest.mark.parametrize(
    ("op", "args", "message"),
    [
        ("agents.usage", {"input_tokens": -5}, "input_tokens must be a whole number"),
        ("agents.usage", {"output_tokens": "many"}, "output_tokens must be a whole number"),
        ("agents.usage", {"input_tokens": True}, "input_tokens must be a whole number"),
        ("agents.spawn", {"type": "x", "window": 0}, "a context window must be a positive number"),
        ("agents.spawn", {"type": "x", "warning_pct": 150}, "warning_pct must be a percentage"),
        ("agents.terminate", {"reason": "SLEEPY"}, "unknown termination reason"),
    ],
)
def test_the_protocol_refuses_bad_agent_requests_and_stores_nothing(
    op: str, args: dict[str, Any], message: str
) -> None:
    from store.errors import UsageError

    with Client() as client:
        agent = client.call("agents.spawn", type="subject")["id"]
        before = client.call("stats")["events"]
        with pytest.raises(UsageError) as caught:
            client.call(op, **({"agent": agent} | args))
        assert message in caught.value.message
        assert client.call("stats")["events"] == before


def test_the_client_writes_notes() -> None:
    with Client() as client:
        client.record("session-1", "message", {"role": "user", "text": "port it"})
        event = client.note("session", "constraint", "Python 3.11 only", reason="the fleet runs it")
        [_, stored] = client.iter_events(session="session-1")
        with pytest.raises(NotFound):  # a note goes into a session that is there, never a new one
            client.note("elsewhere", "decision", "x")
    assert (stored["id"], stored["kind"], stored["agent"], stored["payload"]) == (
        event["id"],
        "note.constraint",
        "main",
        {"text": "Python 3.11 only", "reason": "the fleet runs it"},
    )
    assert (event["session"], event["agent"]) == ("session-1", "session-1/main")


def test_personal_data_and_secrets_are_redacted_from_handoffs() -> None:
    with Client() as client:
        client.record("r", "message", {"role": "user", "text": "Mail bob@example.com, key sk-ant-api03-" + "a" * 40})
    created = invoke_json("handoff", "create", "r")
    text = json.dumps(created)
    assert "bob@example.com" not in text and "sk-ant-api03" not in text
    assert "[redacted:email]" in created["markdown"] and "[redacted:api_key]" in created["prompt"]
    assert created["document"]["original_request"]["text"].startswith("Mail [redacted:email]")
    assert invoke_json("handoff", "verify", created["id"])["ok"] is True  # the digest is the redacted document's


def test_a_cut_text_keeps_its_elision_marker_through_redaction() -> None:
    with Client() as client:
        client.record("long", "message", {"role": "user", "text": "Fix the parser. " + "x" * 5_000})
    created = invoke_json("handoff", "create", "long")
    request = created["document"]["original_request"]["text"]
    assert request.endswith(f"… [+{len('Fix the parser. ') + 5_000 - 1500} chars]"), request[-40:]
    assert "[redacted:" not in json.dumps(created)
