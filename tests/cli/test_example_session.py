"""The example session of the README's quickstart: import, re-import, verify, replay."""

from __future__ import annotations

import json

from cli_support import EXAMPLE, EXAMPLE_SESSION, ROOT, invoke, json_lines, seqs, toka


def test_import_from_a_checkout_as_the_readme_says() -> None:
    # The README's quickstart runs from the repository root with a relative path.
    first = toka("import", "examples/session.jsonl", cwd=ROOT)
    assert first.returncode == 0, first.stderr
    assert first.stdout == "imported 23 new events (0 already present) into 1 session from 1 file\n"
    assert first.stderr == ""

    again = toka("import", "examples/session.jsonl", "--json", cwd=ROOT)
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout) == {
        "files": 1,
        "formats": {"toka": 1},
        "events": 23,
        "created": 0,
        "existing": 23,
        "sessions": [EXAMPLE_SESSION],
        "unknown_types": {},
        "unknown_types_created": {},
        "bad_lines": [],
    }

    sessions = json.loads(toka("sessions", "--json").stdout)["sessions"]
    assert [(s["session"], s["events"]) for s in sessions] == [(EXAMPLE_SESSION, 23)]

    # A clean stop signs a head covering the last event, so verify has one to check against
    # however quickly it follows the import.
    assert toka("daemon", "stop").returncode == 0
    verify = toka("verify")
    assert verify.returncode == 0, verify.stdout + verify.stderr
    first_line, heads = verify.stdout.splitlines()
    assert first_line == "ok: 23 events in the log match their hashes; the database passes SQLite's quick_check"
    assert heads.startswith("ok: the log matches its 1 signed head, the latest of "), heads


def test_reimport_changes_nothing(example: str) -> None:
    before = invoke("export", example).stdout
    result = invoke("import", str(EXAMPLE))
    assert result.exit_code == 0
    assert "imported 0 new events (23 already present)" in result.stdout
    assert invoke("export", example).stdout == before
    assert json.loads(invoke("stats", "--json").stdout)["events"] == 23


def test_export_gives_back_the_example(example: str) -> None:
    # The same events, ids and all (the payload keys come back in canonical, sorted order).
    assert json_lines(invoke("export", example).stdout) == json_lines(EXAMPLE.read_text())


def test_verify_passes(example: str) -> None:
    result = invoke("verify", example)
    assert result.exit_code == 0
    assert result.stdout == f"ok: 23 events in session {EXAMPLE_SESSION} match their hashes\n"


def test_replay_to_a_seq(example: str) -> None:
    result = invoke("replay", example, "--to", "5", "--json")
    assert result.exit_code == 0, result.stderr
    events = json_lines(result.stdout)
    assert seqs(events) == [1, 2, 3, 4, 5]
    assert events == json_lines(EXAMPLE.read_text())[:5]


def test_replay_to_an_event_id_prefix(example: str) -> None:
    fifth = json_lines(EXAMPLE.read_text())[4]
    by_seq = invoke("replay", example, "--to", "5", "--json").stdout
    by_id = invoke("replay", example, "--to", fifth["id"][:12], "--json")
    assert by_id.exit_code == 0, by_id.stderr
    assert by_id.stdout == by_seq
    assert seqs(json_lines(by_id.stdout)) == [1, 2, 3, 4, 5]


def test_replay_transcript_stops_at_the_point(example: str) -> None:
    result = toka("replay", "fix", "--to", "5")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    headers = [line for line in lines if not line.startswith("  ")]
    assert headers == [
        "2026-03-14 09:30:00 #1 main message",
        "2026-03-14 09:30:07 #2 main message",
        "2026-03-14 09:30:14 #3 main tool.call",
        "2026-03-14 09:30:22 #4 main tool.result",
        "2026-03-14 09:30:29 #5 main tool.call",
    ]
    assert lines[1].startswith("  user: Login requests time out after 30s")


def test_replay_to_an_unknown_event_is_not_found(example: str) -> None:
    result = invoke("replay", example, "--to", "ffffffffffff")
    assert result.exit_code == 3
    assert result.stdout == ""
    assert result.stderr.startswith("error: ")
