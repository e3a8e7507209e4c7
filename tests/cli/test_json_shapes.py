"""Golden tests of the `--json` shapes documented in docs/json.md.

Each test normalises the values that change from run to run (ids and digests -> "<id>", times ->
"<ts>", the test's TOKA_HOME -> "<home>", pids, uptime, sizes on disk) and compares the WHOLE
document to the expected one written here. A field added to the output fails these tests until it
is added here and to docs/json.md; a field renamed or removed breaks the contract.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_support import (
    EXAMPLE,
    EXAMPLE_SESSION,
    home,
    invoke,
    invoke_json,
    json_lines,
    normalise,
    volatile,
)
from daemons import wait_for

from daemon.client.sync import Client
from daemon.redact import KINDS
from daemon.version import PROTOCOL_VERSION, VERSION
from store.events import canonical_json
from store.rows import INLINE_BELOW, packed
from store.vectors import EMBEDDED_KINDS

EVENT_FIELDS = ["seq", "id", "session", "agent", "kind", "ts", "parents", "digest", "key", "payload"]

EXAMPLE_KINDS = {"tool.call": 7, "tool.result": 7, "message": 4, "usage": 3, "note.decision": 1, "note.rejected": 1}

EXAMPLE_SESSION_JSON = {
    "session": EXAMPLE_SESSION,
    "events": 23,
    "first_seq": 1,
    "last_seq": 23,
    "first_ts": "<ts>",
    "last_ts": "<ts>",
    "head": "<id>",
    "agents": {"main": 23},
    "kinds": EXAMPLE_KINDS,
    "source": None,
    "project": None,
    "model": "claude-sonnet-4-5",
    "context_tokens": 2980 + 620 + 10570,  # the last main-chain usage event of the example
    "context_window": 200_000,
    "fill_pct": 7.1,
    # The example's three usage events, priced as claude-sonnet-4-5 ($3 / $15 per million, $3.75
    # cache writes, $0.30 reads): 7130 * 3 + 756 * 15 + 11190 * 3.75 + 19690 * 0.3 = $0.0806.
    "usage": {
        "calls": 3,
        "input_tokens": 7130,
        "output_tokens": 756,
        "cache_creation_tokens": 11190,
        "cache_creation_1h_tokens": 0,
        "cache_read_tokens": 19690,
        "total_tokens": 38766,
        "telemetry_calls": 0,
        "cost_usd": 0.0806,
        "unpriced_calls": 0,
    },  # fmt: skip
}


def test_sessions_json(example: str) -> None:
    raw = invoke_json("sessions")
    assert raw["sessions"][0]["first_ts"] == "2026-03-14T09:30:00.123456Z"
    assert raw["sessions"][0]["last_ts"] == "2026-03-14T09:32:40.723456Z"
    assert raw["sessions"][0]["head"] == json.loads(EXAMPLE.read_text().splitlines()[-1])["id"]
    assert normalise(raw) == {"sessions": [EXAMPLE_SESSION_JSON]}


def test_sessions_json_empty_log() -> None:
    assert invoke_json("sessions") == {"sessions": []}


def test_show_json(example: str) -> None:
    raw = invoke_json("show", "fix")  # a unique prefix names the session
    assert raw == invoke_json("sessions")["sessions"][0]
    assert normalise(raw) == EXAMPLE_SESSION_JSON


def test_events_json_lines_are_the_documented_event(example: str) -> None:
    result = invoke("events", example, "--json")
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 23
    events = [json.loads(line) for line in lines]
    assert all(list(event) == EVENT_FIELDS for event in events)
    assert normalise(events[0]) == {
        "seq": 1,
        "id": "<id>",
        "session": EXAMPLE_SESSION,
        "agent": "main",
        "kind": "message",
        "ts": "<ts>",
        "parents": [],
        "digest": "<id>",
        "key": None,
        "payload": {
            "role": "user",
            "text": "Login requests time out after 30s when the auth service is slow. Make the client"
            " retry with backoff and surface a clear error instead of hanging.",
        },
    }
    assert normalise(events[4]) == {
        "seq": 5,
        "id": "<id>",
        "session": EXAMPLE_SESSION,
        "agent": "main",
        "kind": "tool.call",
        "ts": "<ts>",
        "parents": ["<id>"],
        "digest": "<id>",
        "key": None,
        "payload": {"tool": "Read", "tool_use_id": "t2", "input": {"file_path": "src/auth/client.py"}},
    }
    # The example file is in the same shape (it is `toka export` output): equal line by line.
    assert events == json_lines(EXAMPLE.read_text())


def test_events_json_with_key_and_no_agent() -> None:
    assert invoke("record", "s", "note.decision", '{"text": "use sqlite"}', "--key", "k-1").exit_code == 0
    assert invoke("record", "s", "message", '{"text": "ok"}', "--agent", "planner").exit_code == 0
    result = invoke("events", "s", "--json")
    first, second = json_lines(result.stdout)
    assert normalise(first) == {
        "seq": 1,
        "id": "<id>",
        "session": "s",
        "agent": None,
        "kind": "note.decision",
        "ts": "<ts>",
        "parents": [],
        "digest": "<id>",
        "key": "k-1",
        "payload": {"text": "use sqlite"},
    }
    assert normalise(second) == {
        "seq": 2,
        "id": "<id>",
        "session": "s",
        "agent": "planner",
        "kind": "message",
        "ts": "<ts>",
        "parents": ["<id>"],
        "digest": "<id>",
        "key": None,
        "payload": {"text": "ok"},
    }
    assert second["parents"] == [first["id"]]  # each session is a hash chain


def test_replay_json_is_event_lines(example: str) -> None:
    result = invoke("replay", example, "--json")
    assert result.exit_code == 0
    assert json_lines(result.stdout) == json_lines(EXAMPLE.read_text())


def test_status_json(example: str) -> None:
    raw = invoke_json("status")
    assert raw["pid"] == int((home() / "run" / "toka.pid").read_text())
    assert raw["uptime_s"] >= 0
    heads = raw.pop("heads")  # the signer may not have caught up with the last commit yet
    assert heads["size"] is None or 1 <= heads["size"] <= 23
    assert (heads["signed_at"] is None) == (heads["size"] is None)
    assert heads["file"] == str(home() / "heads.jsonl") and heads["witness_failures"] == 0
    document = volatile(raw, pid=int, uptime_s=(int, float), commits=int)  # type: ignore[arg-type]
    assert normalise(document) == {
        "version": VERSION,
        "protocol": PROTOCOL_VERSION,
        "pid": "<pid>",
        "uptime_s": "<uptime_s>",
        "database": "<home>/toka.db",
        "durability": "normal",
        "socket": "<home>/run/toka.sock",
        "events": 23,
        "sessions": 1,
        "clients": 1,
        "buffered_bytes": 0,
        "subscribers": 0,
        "commits": "<commits>",
        "watch": None,
        "connection": None,
        "damaged": None,
        "projections": {"skipped": 0, "recent": []},
        "agents_at_risk": [],
        "otel": None,
        "export": None,
    }


def test_verify_json_ok(example: str) -> None:
    last = json_lines(invoke("events", "fix", "--json").stdout)[-1]
    tip = {"seq": 23, "id": last["id"]}  # the last event committed, as recorded beside the database
    assert invoke("proof", "--json", "000000000000").exit_code == 3  # nothing signed for a proof that fails
    assert invoke("daemon", "stop").exit_code == 0  # a clean stop signs a head of the whole log
    report = invoke_json("verify")
    signature = report["heads"]["latest"].pop("signature")
    assert len(bytes.fromhex(signature)) == 64
    assert report.pop("database") == {"check": "quick_check", "ok": True, "found": ["ok"], "tip": tip, "damaged": None}
    assert normalise(report) == {
        "ok": True,
        "session": None,
        "events": 23,
        "problem_count": 0,
        "problems": [],
        "heads": {
            "heads": 1,
            "valid": 1,
            "matched": 1,
            "covered": 23,
            "unsigned": 0,
            "latest": {"size": 23, "root": "<id>", "time": "<ts>", "key": "<id>"},
        },
    }
    assert invoke_json("verify", "fix") == {
        "ok": True,
        "session": EXAMPLE_SESSION,
        "events": 23,
        "problem_count": 0,
        "problems": [],
        "heads": None,  # the signed heads cover the whole log, not a session
        "database": None,
    }
    deep = invoke_json("verify", "fix", "--deep")
    assert deep["database"] == {"check": "integrity_check", "ok": True, "found": ["ok"], "tip": tip, "damaged": None}


def test_stats_json(example: str) -> None:
    raw = invoke_json("stats")
    assert raw["disk_bytes"] > 0
    # The payload sizes are those of the example's canonical JSON: fixed by its content.
    assert volatile(raw, disk_bytes=int) == {
        "events": 23,
        "sessions": 1,
        "blobs": 23,
        "payload_bytes": 2828,
        "blob_bytes": 2828,
        "stored_bytes": 2828,
        "disk_bytes": "<disk_bytes>",
        "dedup_ratio": 1.0,
    }


def test_stats_json_counts_a_repeated_payload_once() -> None:
    output = {"text": "the same tool output\n" * 60}  # over INLINE_BELOW: stored once, in blobs
    for _ in range(4):
        assert invoke("record", "s", "tool.result", json.dumps(output)).exit_code == 0
    raw = invoke_json("stats")
    data = canonical_json(output)
    size, stored = len(data), len(packed(data)[1])
    assert size >= INLINE_BELOW and stored < size  # compressed too
    assert volatile(raw, disk_bytes=int) == {
        "events": 4,
        "sessions": 1,
        "blobs": 1,
        "payload_bytes": 4 * size,
        "blob_bytes": size,
        "stored_bytes": stored,
        "disk_bytes": "<disk_bytes>",
        "dedup_ratio": 4.0,
    }


def test_stats_json_counts_a_small_payload_once_per_event_that_keeps_it() -> None:
    for _ in range(4):
        assert invoke("record", "s", "tool.result", '{"text": "the same tool output"}').exit_code == 0
    raw = invoke_json("stats")
    size = len(b'{"text":"the same tool output"}')
    assert volatile(raw, disk_bytes=int) == {
        "events": 4,
        "sessions": 1,
        "blobs": 4,
        "payload_bytes": 4 * size,
        "blob_bytes": 4 * size,
        "stored_bytes": 4 * size,
        "disk_bytes": "<disk_bytes>",
        "dedup_ratio": 1.0,
    }


def test_record_json() -> None:
    raw = invoke_json("record", "s", "message", '{"text": "hi"}', "--key", "k")
    assert normalise(raw) == {"events": [{"seq": 1, "id": "<id>", "created": True}]}
    again = invoke_json("record", "s", "message", '{"text": "hi"}', "--key", "k")
    assert again == {"events": [{"seq": 1, "id": raw["events"][0]["id"], "created": False}]}


def test_record_json_batch() -> None:
    result = invoke("record", "s", "message", "--json", input='{"n": 1}\n{"n": 2}\n')
    assert result.exit_code == 0, result.stderr
    assert normalise(json.loads(result.stdout)) == {
        "events": [{"seq": 1, "id": "<id>", "created": True}, {"seq": 2, "id": "<id>", "created": True}]
    }


def test_import_json(toka_home: Path) -> None:
    assert invoke_json("import", str(EXAMPLE)) == {
        "files": 1,
        "formats": {"toka": 1},
        "events": 23,
        "created": 23,
        "existing": 0,
        "sessions": [EXAMPLE_SESSION],
        "unknown_types": {},
        "unknown_types_created": {},
        "bad_lines": [],
    }


def test_import_json_with_bad_lines(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("x.jsonl").write_text(
        '{"session": "s", "kind": "message", "payload": {"n": 1}}\n'
        "not json\n"
        '{"session": "s", "kind": "message", "payload": {"n": 2}}\n'
    )
    raw = invoke_json("import", "x.jsonl", exit_code=1)
    assert raw == {
        "files": 1,
        "formats": {"toka": 1},
        "events": 2,
        "created": 2,
        "existing": 0,
        "sessions": ["s"],
        "unknown_types": {},
        "unknown_types_created": {},
        "bad_lines": [
            {"path": "x.jsonl", "line": 2, "reason": "not JSON (Expecting value: line 1 column 1 (char 0))"},
        ],
    }


def _daemon_state(raw: dict[str, object]) -> dict[str, object]:
    pid = raw["server"]["pid"]  # type: ignore[index]
    assert raw["detail"] == f"toka {VERSION}, pid {pid}"
    return normalise({**raw, "detail": "<detail>", "server": volatile(raw["server"], pid=int)})  # type: ignore[arg-type]


def test_daemon_status_json_running() -> None:
    assert invoke("status").exit_code == 0  # starts it
    assert _daemon_state(invoke_json("daemon", "status")) == {
        "state": "running",
        "detail": "<detail>",
        "server": {"version": VERSION, "protocol": PROTOCOL_VERSION, "pid": "<pid>", "max_line_bytes": 4194304},
    }
    assert _daemon_state(invoke_json("daemon", "start")) == _daemon_state(invoke_json("daemon", "status"))


def test_daemon_status_json_stopped() -> None:
    assert invoke_json("daemon", "status", exit_code=4) == {
        "state": "unreachable",
        "detail": "the toka daemon is not running",
        "server": None,
    }


def test_daemon_stop_json() -> None:
    assert invoke("status").exit_code == 0
    pid = int((home() / "run" / "toka.pid").read_text())
    assert invoke_json("daemon", "stop") == {"stopped": True, "pid": pid}
    assert invoke_json("daemon", "stop") == {"stopped": False, "pid": None}


def test_config_show_json(toka_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The tests' daemons follow no agent's folders (tests/conftest.py); shown here is the default.
    monkeypatch.delenv("TOKA_WATCH_AGENTS")
    monkeypatch.delenv("TOKA_END_AFTER_S")  # set for every test (tests/conftest.py): here, the defaults
    monkeypatch.delenv("TOKA_RECALL_EMBEDDING_MODEL")
    raw = invoke_json("config", "show")
    for row in raw["settings"]:
        assert isinstance(row["help"], str) and row["help"]
        assert isinstance(row["allowed"], str) and row["allowed"]  # pinned in tests/cli/test_config_checks.py
        row["help"] = "<help>"
        del row["allowed"]
    assert raw == {
        "settings": [
            {"key": "store.durability", "value": "normal", "source": "default", "help": "<help>"},
            {"key": "store.backend", "value": "sqlite", "source": "default", "help": "<help>"},
            {"key": "store.url", "value": "", "source": "default", "help": "<help>"},
            {"key": "store.signed_heads", "value": True, "source": "default", "help": "<help>"},
            {"key": "store.head_interval_ms", "value": 1000, "source": "default", "help": "<help>"},
            {"key": "store.witness_path", "value": "", "source": "default", "help": "<help>"},
            {"key": "store.witness_command", "value": "", "source": "default", "help": "<help>"},
            {"key": "daemon.max_line_bytes", "value": 4194304, "source": "default", "help": "<help>"},
            {"key": "daemon.shutdown_deadline", "value": 5.0, "source": "default", "help": "<help>"},
            {"key": "daemon.start_timeout", "value": 10.0, "source": "default", "help": "<help>"},
            {"key": "daemon.max_connections", "value": 512, "source": "default", "help": "<help>"},
            {"key": "daemon.max_buffered_bytes", "value": 64 * 1024 * 1024, "source": "default", "help": "<help>"},
            {"key": "daemon.line_timeout", "value": 30.0, "source": "default", "help": "<help>"},
            {"key": "lifecycle.warning_pct", "value": 75.0, "source": "default", "help": "<help>"},
            {"key": "lifecycle.critical_pct", "value": 90.0, "source": "default", "help": "<help>"},
            {"key": "lifecycle.on_critical", "value": "notify", "source": "default", "help": "<help>"},
            {"key": "lifecycle.max_handoffs", "value": 5, "source": "default", "help": "<help>"},
            {"key": "lifecycle.end_after_s", "value": 86400.0, "source": "default", "help": "<help>"},
            {"key": "handoff.save_markdown", "value": False, "source": "default", "help": "<help>"},
            {"key": "inject.mode", "value": "all", "source": "default", "help": "<help>"},
            {"key": "inject.budget_tokens", "value": 3000, "source": "default", "help": "<help>"},
            {"key": "inject.recall", "value": False, "source": "default", "help": "<help>"},
            {"key": "compression.policy", "value": "summarize", "source": "default", "help": "<help>"},
            {"key": "compression.trigger_pct", "value": 75.0, "source": "default", "help": "<help>"},
            {"key": "compression.target_pct", "value": 37.5, "source": "default", "help": "<help>"},
            {"key": "compression.min_messages", "value": 20, "source": "default", "help": "<help>"},
            {"key": "compression.min_interval_s", "value": 1800.0, "source": "default", "help": "<help>"},
            {"key": "compression.auto_compress", "value": "off", "source": "default", "help": "<help>"},
            {"key": "compression.summarizer", "value": "builtin", "source": "default", "help": "<help>"},
            {"key": "compression.summarizer_timeout", "value": 30.0, "source": "default", "help": "<help>"},
            {"key": "redaction.kinds", "value": list(KINDS), "source": "default", "help": "<help>"},
            {"key": "models.windows", "value": {}, "source": "default", "help": "<help>"},
            {"key": "models.prices", "value": {}, "source": "default", "help": "<help>"},
            {"key": "pool.capacity_bytes", "value": 64 * 1024 * 1024, "source": "default", "help": "<help>"},
            {"key": "pool.sweep_s", "value": 5.0, "source": "default", "help": "<help>"},
            {"key": "watch.paths", "value": [], "source": "default", "help": "<help>"},
            {"key": "watch.agents", "value": True, "source": "default", "help": "<help>"},
            {"key": "recall.semantic", "value": True, "source": "default", "help": "<help>"},
            {
                "key": "recall.embedding_model",
                "value": "minilm/all-MiniLM-L6-v2-int8+wordllama/l2_supercat-256",
                "source": "default",
                "help": "<help>",
            },
            {"key": "recall.embedding_model_dir", "value": "", "source": "default", "help": "<help>"},
            {"key": "recall.embedded_kinds", "value": list(EMBEDDED_KINDS), "source": "default", "help": "<help>"},
            {"key": "recall.embedding_batch", "value": 64, "source": "default", "help": "<help>"},
            {"key": "alerts.command", "value": "", "source": "default", "help": "<help>"},
            {"key": "alerts.command_interval_s", "value": 60.0, "source": "default", "help": "<help>"},
            {"key": "alerts.command_timeout_s", "value": 10.0, "source": "default", "help": "<help>"},
            {"key": "alerts.max_age_s", "value": 3600.0, "source": "default", "help": "<help>"},
            {"key": "alerts.block_cost_limit", "value": 0.0, "source": "default", "help": "<help>"},
            {"key": "alerts.block_token_limit", "value": 0, "source": "default", "help": "<help>"},
            {"key": "otel.listen", "value": "", "source": "default", "help": "<help>"},
            {"key": "otel.token", "value": "", "source": "default", "help": "<help>"},
            {"key": "otel.require_token", "value": True, "source": "default", "help": "<help>"},
            {"key": "otel.connection_limit", "value": 64, "source": "default", "help": "<help>"},
            {"key": "otel.read_timeout_s", "value": 10.0, "source": "default", "help": "<help>"},
            {"key": "otel.max_body_bytes", "value": 16 * 1024 * 1024, "source": "default", "help": "<help>"},
            {"key": "otel.max_output_bytes", "value": 64 * 1024, "source": "default", "help": "<help>"},
            {"key": "export.otlp.endpoint", "value": "", "source": "default", "help": "<help>"},
            {"key": "export.otlp.headers", "value": {}, "source": "default", "help": "<help>"},
            {"key": "export.otlp.protocol", "value": "http/protobuf", "source": "default", "help": "<help>"},
            {"key": "export.otlp.include_content", "value": False, "source": "default", "help": "<help>"},
            {"key": "export.otlp.session_idle_s", "value": 300.0, "source": "default", "help": "<help>"},
            {"key": "export.otlp.queue_events", "value": 10_000, "source": "default", "help": "<help>"},
            {"key": "export.otlp.batch_spans", "value": 512, "source": "default", "help": "<help>"},
            {"key": "export.otlp.retry_max_s", "value": 60.0, "source": "default", "help": "<help>"},
            {"key": "export.otlp.request_timeout_s", "value": 10.0, "source": "default", "help": "<help>"},
        ]
    }


def test_config_get_json(toka_home: Path) -> None:
    # Not in docs/json.md yet; pinned here so that it does not drift before it is documented.
    expected = {"key": "store.durability", "value": "normal", "source": "default"}
    assert invoke_json("config", "get", "durability") == expected


def test_admin_rebuild_json(example: str) -> None:
    with Client(autostart=False) as client:  # the embedding model loaded: its count is known
        wait_for(lambda: client.call("recall.status")["embedded"] is not None, "the embedding model has loaded")
    # The usage events carry no text; the messages are embedded again, in the background.
    assert invoke_json("admin", "rebuild") == {"sessions": 1, "search_events": 20, "embed_events": 6}
