"""`toka replay`: a lifecycle change comes right after the usage that caused it, although the
daemon appends it after the whole batch that carried the usage (as an import's batches do); and
`--to` names an event of the session, or is an error."""

from __future__ import annotations

from cli_support import json_lines, toka
from daemons import wait_for

from daemon.client.sync import Client

SESSION = "replay-order"
USAGE = {"model": "claude-sonnet-4-5", "input_tokens": 10, "cache_read_tokens": 160_000, "output_tokens": 40}


def import_a_batch() -> list[dict[str, object]]:
    """Ten events in one request, the fourth a usage at 80% of a 200k window."""
    events = [
        {
            "session": SESSION,
            "kind": "message",
            "agent": "main",
            "key": f"m{n}",
            "payload": {"role": "user", "text": f"step {n}"},
        }
        for n in range(10)
    ]
    events[3] = {"session": SESSION, "kind": "usage", "agent": "main", "key": "u3", "payload": USAGE}
    with Client() as client:
        stored = client.append(events)
        wait_for(lambda: list(client.iter_events(session=SESSION, kinds=["lifecycle"])), "the WARNING is appended")
    return stored


def test_the_lifecycle_change_follows_its_cause(toka_home: object) -> None:
    stored = import_a_batch()
    cause = stored[3]
    replayed = json_lines(toka("replay", SESSION, "--json").stdout)
    kinds = [e["kind"] for e in replayed]
    assert kinds == ["message"] * 3 + ["usage", "lifecycle"] + ["message"] * 6
    change = replayed[4]
    assert change["payload"]["cause"] == cause["id"] and change["payload"]["to"] == "WARNING"
    assert change["seq"] > stored[-1]["seq"]  # appended after the batch, shown at its cause


def test_replay_to_the_cause_shows_the_change(toka_home: object) -> None:
    stored = import_a_batch()
    replayed = json_lines(toka("replay", SESSION, "--to", str(stored[3]["seq"]), "--json").stdout)
    assert [e["kind"] for e in replayed] == ["message"] * 3 + ["usage", "lifecycle"]
    before = json_lines(toka("replay", SESSION, "--to", str(stored[2]["seq"]), "--json").stdout)
    assert [e["kind"] for e in before] == ["message"] * 3  # not yet


def test_replay_to_past_the_end_is_an_error(toka_home: object) -> None:
    import_a_batch()
    result = toka("replay", SESSION, "--to", "999999")
    assert result.returncode == 3 and result.stdout == ""
    assert result.stderr.startswith("error: no event at seq 999999")


def test_replay_to_an_event_of_another_session_is_an_error(toka_home: object) -> None:
    import_a_batch()
    with Client() as client:
        [other] = client.append([{"session": "elsewhere", "kind": "message", "payload": {"text": "hi"}}])
    result = toka("replay", SESSION, "--to", str(other["seq"]))
    assert result.returncode == 2
    assert result.stderr.startswith(f"error: event {other['seq']} is not in session {SESSION} (it is in elsewhere)")
