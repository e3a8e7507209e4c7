"""Agents end: a SessionEnd hook moves its session's running agents to ENDED (SESSION_ENDED), an
agent with no activity of its own for `lifecycle.end_after_s` goes ENDED (TIMEOUT), each a
`lifecycle` event a restart rebuilds the same, and the agent's next activity brings it back."""

from __future__ import annotations

from typing import Any

from daemon_support import Spawner, events_of
from transcripts import shared_or_skip

from daemon.client.sync import Client
from daemon.client.transfer import import_files

SONNET = {"model": "claude-sonnet-4-5", "input_tokens": 100, "cache_read_tokens": 49_900, "output_tokens": 20}


def _agents(client: Client) -> dict[str, dict[str, Any]]:
    return {agent["id"]: agent for agent in client.call("agents.list")["agents"]}


def _changes(client: Client, session: str, agent: str = "main") -> list[dict[str, Any]]:
    return [e["payload"] for e in events_of(client, session=session, kinds=["lifecycle"]) if e["agent"] == agent]


def test_a_session_end_ends_its_agents_and_their_own_activity_brings_them_back(daemon: Any) -> None:
    with daemon.client() as client:
        client.append([{"session": "live", "kind": "usage", "agent": "main", "payload": SONNET}])
        client.append([{"session": "live", "kind": "usage", "agent": "helper", "payload": SONNET}])
        assert {a["state"] for a in _agents(client).values()} == {"ACTIVE"}
        [end] = client.append([{"session": "live", "kind": "hook.session_end", "payload": {"reason": "logout"}}])
        agents = _agents(client)
        for name in ("live/main", "live/helper"):
            assert (agents[name]["state"], agents[name]["reason"], agents[name]["live"]) == (
                "ENDED",
                "SESSION_ENDED",
                False,
            )
            assert agents[name]["detail"] == "session ended (logout)"
        ended = _changes(client, "live")[-1]
        assert (ended["from"], ended["to"], ended["cause"]) == ("ACTIVE", "ENDED", end["id"])
        # What toka appends to the session is not the agent at work: it stays ENDED.
        client.append([{"session": "live", "kind": "note.decision", "payload": {"text": "use sqlite"}}])
        assert _agents(client)["live/main"]["state"] == "ENDED"
        # The main agent's own activity brings it back; the helper's session work is not its own.
        [prompt] = client.append([{"session": "live", "kind": "message", "payload": {"role": "user", "text": "go"}}])
        agents = _agents(client)
        assert (agents["live/main"]["state"], agents["live/main"]["live"]) == ("ACTIVE", True)
        assert agents["live/helper"]["state"] == "ENDED"
        back = _changes(client, "live")[-1]
        assert (back["from"], back["to"], back["cause"], back["detail"]) == (
            "ENDED",
            "ACTIVE",
            prompt["id"],
            "active again (message)",
        )
        # Live ones first, then the ended.
        assert list(agents) == ["live/main", "live/helper"]
        assert [a["id"] for a in client.call("agents.list", live=True)["agents"]] == ["live/main"]


def test_imported_history_ends_as_it_lands_and_a_restart_keeps_the_same_states(spawn: Spawner) -> None:
    folder = shared_or_skip("fixtures", "transcripts", "claude")
    daemon = spawn(env={"TOKA_END_AFTER_S": "3600"})
    with daemon.client() as client:
        import_files(client, [folder])
        agents = _agents(client)
        sessions = {s["session"]: s for s in client.call("sessions.list")["sessions"]}
        assert agents and {(a["state"], a["reason"], a["live"]) for a in agents.values()} == {
            ("ENDED", "TIMEOUT", False)
        }
        for session, info in sessions.items():
            main = agents.get(f"{session}/main")
            if main is not None:
                # The main agent was last active when its session was: its own activity, not toka's.
                assert main["last_active"] == info["last_ts"]
                # It ended as its own events landed (its subagents' files may come after it).
                ended = _changes(client, session)[-1]
                assert (ended["to"], ended["reason"]) == ("ENDED", "TIMEOUT")
                assert ended["last_active"] <= info["last_ts"]
                assert ended["detail"] == f"no activity for 1 h (last active {ended['last_active']})"
        # Ended agents come last, the last active first.
        listed = [a["last_active"] or "" for a in client.call("agents.list")["agents"]]
        assert listed == sorted(listed, reverse=True)
        changes = len(events_of(client, kinds=["lifecycle"]))
    daemon.stop()
    daemon = spawn(env={"TOKA_END_AFTER_S": "3600"})
    with daemon.client() as client:
        assert {k: (a["state"], a["reason"], a["last_active"]) for k, a in _agents(client).items()} == {
            k: (a["state"], a["reason"], a["last_active"]) for k, a in agents.items()
        }
        assert len(events_of(client, kinds=["lifecycle"])) == changes  # ended once, not again


def test_an_agent_quiet_while_the_daemon_runs_ends_and_comes_back_with_its_next_call(spawn: Spawner) -> None:
    daemon = spawn(env={"TOKA_END_AFTER_S": "0.5"})
    with daemon.client() as client:
        client.append([{"session": "quiet", "kind": "usage", "agent": "main", "payload": SONNET}])
        [call] = events_of(client, session="quiet", kinds=["usage"])
        assert _agents(client)["quiet/main"]["state"] == "ACTIVE"
        with daemon.client() as watcher:
            for event in watcher.subscribe(session="quiet", after_seq=call["seq"], kinds=["lifecycle"]):
                if event["payload"]["to"] == "ENDED":
                    break
        assert event["payload"]["reason"] == "TIMEOUT"
        assert event["payload"]["last_active"] == call["ts"]
        assert event["payload"]["detail"] == f"no activity for 0.5 s (last active {call['ts']})"
        agent = _agents(client)["quiet/main"]
        assert (agent["state"], agent["last_active"]) == ("ENDED", call["ts"])
        client.append([{"session": "quiet", "kind": "usage", "agent": "main", "payload": SONNET}])
        back = _changes(client, "quiet")[-1]
        assert (back["from"], back["to"], back["detail"]) == ("ENDED", "ACTIVE", "active again (usage)")
        assert back["fill_pct"] == 25.0  # the call that brought it back counted first


def test_a_codex_exec_session_ends_with_its_task_and_an_interactive_one_does_not(daemon: Any) -> None:
    gpt = {"model": "gpt-5.3-codex", "input_tokens": 5000, "cached_input_tokens": 4000, "output_tokens": 300}
    done = {"type": "task_complete", "turn_id": "t1", "last_agent_message": "done"}
    with daemon.client() as client:
        for session, codex_source in (("exec", "exec"), ("tui", "cli")):
            meta = {"source": "codex", "codex_source": codex_source}
            client.append([{"session": session, "kind": "session.meta", "agent": "main", "payload": meta}])
            client.append([{"session": session, "kind": "usage", "agent": "main", "payload": gpt}])
            client.append([{"session": session, "kind": "event", "agent": "main", "payload": done}])
        agents = _agents(client)
        assert (agents["exec/main"]["state"], agents["exec/main"]["reason"]) == ("ENDED", "TASK_COMPLETED")
        assert agents["exec/main"]["detail"] == "codex exec: its task completed"
        # An interactive session's task is a turn: the session waits for the next prompt.
        assert agents["tui/main"]["state"] == "ACTIVE"
