"""The dashboard against a real daemon: what each screen shows, and that it stays live."""

from __future__ import annotations

from typing import Any

from textual.pilot import Pilot
from textual.widgets import DataTable, Markdown
from transcripts import TRANSCRIPTS, shared_or_skip
from tui_driver import EXAMPLE_SESSION, drive, import_example, in_thread, rows, screen_text, wait_until

from daemon.client.transfer import import_files
from toka_cli.tui.fill_curve import FillCurve
from toka_cli.tui.modals import HelpScreen
from toka_cli.tui.rows_view import RowsView
from toka_cli.tui.screens.session import SessionScreen


def _session_row(pilot: Pilot[None], session: str) -> str | None:
    return next((row for row in rows(pilot, "#sessions") if row.startswith(session)), None)


async def _open_example_session(pilot: Pilot[None]) -> None:
    """From the overview, open the example session with enter."""
    await wait_until(pilot, lambda: _session_row(pilot, EXAMPLE_SESSION), "the example session")
    pilot.app.screen.query_one("#sessions", DataTable).focus()
    await pilot.press("enter")
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, SessionScreen), "the session screen")


def test_the_overview_lists_imported_sessions_with_their_fill(daemon: Any) -> None:
    with daemon.client() as client:
        import_example(client)
        expected_fill = client.call("sessions.get", session=EXAMPLE_SESSION)["fill_pct"]

    async def scenario(pilot: Pilot[None]) -> None:
        row = await wait_until(pilot, lambda: _session_row(pilot, EXAMPLE_SESSION), "the example session")
        assert f"{expected_fill:4.0f}%" in row
        assert row.split(" | ")[2] == "23"
        assert "claude-sonnet-4-5" in row

    drive(scenario)


def test_the_overview_shows_a_transcript_session_and_its_agent(daemon: Any) -> None:
    transcript = sorted(shared_or_skip("fixtures", "transcripts", "claude").glob("*.jsonl"))[0]
    assert transcript.parent.parent == TRANSCRIPTS
    with daemon.client() as client:
        summary = import_files(client, [transcript])
        session = sorted(summary.sessions)[0]
        info = client.call("sessions.get", session=session)

    async def scenario(pilot: Pilot[None]) -> None:
        row = await wait_until(pilot, lambda: _session_row(pilot, session), f"session {session}")
        assert f"{info['events']:,}" in row
        if info["fill_pct"] is not None:
            assert f"{info['fill_pct']:4.0f}%" in row
            agents = await wait_until(pilot, lambda: rows(pilot, "#agents"), "the agents")
            assert any(session in line for line in agents)

    drive(scenario)


def test_a_new_event_shows_up_without_a_keypress(daemon: Any) -> None:
    with daemon.client() as client:
        import_example(client)

    async def scenario(pilot: Pilot[None]) -> None:
        await wait_until(pilot, lambda: _session_row(pilot, EXAMPLE_SESSION), "the example session")
        with daemon.client() as client:
            await in_thread(client.record, "fresh-session", "message", {"text": "hello from a live agent"})
        row = await wait_until(pilot, lambda: _session_row(pilot, "fresh-session"), "the new session")
        assert row.split(" | ")[2] == "1"

    drive(scenario)


def test_a_session_open_on_screen_gets_new_events_live(daemon: Any) -> None:
    with daemon.client() as client:
        import_example(client)

    async def scenario(pilot: Pilot[None]) -> None:
        await pilot.app.push_screen(SessionScreen(EXAMPLE_SESSION))
        await wait_until(pilot, lambda: len(rows(pilot, "#timeline")) == 23, "the timeline")
        with daemon.client() as client:
            await in_thread(client.record, EXAMPLE_SESSION, "message", {"text": "one more thing"})
        await wait_until(pilot, lambda: len(rows(pilot, "#timeline")) == 24, "the live event")
        assert "one more thing" in rows(pilot, "#timeline")[-1]

    drive(scenario)


def test_selecting_a_session_shows_its_timeline_payload_and_fill_curve(daemon: Any) -> None:
    with daemon.client() as client:
        import_example(client)

    async def scenario(pilot: Pilot[None]) -> None:
        await _open_example_session(pilot)
        timeline = await wait_until(
            pilot, lambda: len(rows(pilot, "#timeline")) == 23 and rows(pilot, "#timeline"), "rows"
        )
        assert timeline[0].split(" | ")[4] == "message"
        # tool results are paired with their calls
        assert any("↳ #" in row and "ok:" in row for row in timeline)
        curve = pilot.app.screen.query_one("#fill-curve", FillCurve)
        await wait_until(pilot, lambda: len(list(curve.data or [])) == 3, "the fill curve's three usage events")
        text = await wait_until(pilot, lambda: "seq 23" in screen_text(pilot.app) and screen_text(pilot.app), "payload")
        assert "fix-login-timeout" in text

    drive(scenario)


def test_the_replay_scrubber_shows_the_session_as_it_stood_at_an_event(daemon: Any) -> None:
    with daemon.client() as client:
        import_example(client)

    async def scenario(pilot: Pilot[None]) -> None:
        await _open_example_session(pilot)
        await wait_until(pilot, lambda: len(rows(pilot, "#timeline")) == 23, "the timeline")
        table = pilot.app.screen.query_one("#timeline", RowsView)
        table.focus()
        table.move_cursor(row=9)  # seq 10
        await pilot.press("r")
        await wait_until(pilot, lambda: len(rows(pilot, "#timeline")) == 10, "the session up to seq 10")
        await wait_until(pilot, lambda: "replay at seq 10" in screen_text(pilot.app), "the title at seq 10")
        curve = pilot.app.screen.query_one("#fill-curve", FillCurve)
        await wait_until(pilot, lambda: len(list(curve.data or [])) == 1, "the one usage event before seq 10")
        await pilot.press("comma")
        await wait_until(pilot, lambda: len(rows(pilot, "#timeline")) == 9, "one event back")
        await pilot.press("full_stop", "full_stop")
        await wait_until(pilot, lambda: len(rows(pilot, "#timeline")) == 11, "two events on")
        await pilot.press("end")
        await wait_until(pilot, lambda: len(rows(pilot, "#timeline")) == 23, "back to now")
        await wait_until(pilot, lambda: "replay at" not in screen_text(pilot.app), "the title back to now")

    drive(scenario)


def test_the_handoff_screen_renders_the_document_as_markdown(daemon: Any) -> None:
    with daemon.client() as client:
        import_example(client)
        handoff = client.call("handoffs.create", target=EXAMPLE_SESSION)

    async def scenario(pilot: Pilot[None]) -> None:
        await pilot.press("2")
        await wait_until(pilot, lambda: rows(pilot, "#handoffs"), "the handoff list")
        doc = pilot.app.screen.query_one("#handoff-doc", Markdown)
        await wait_until(pilot, lambda: pilot.app.screen.rendered == handoff["id"], "the document")  # type: ignore[attr-defined]
        assert doc.source == handoff["markdown"]
        await wait_until(pilot, lambda: "Login requests time out" in screen_text(pilot.app), "the document on screen")
        await pilot.press("y")
        assert pilot.app.clipboard == handoff["prompt"]

    drive(scenario)


def test_the_handoff_screen_shows_the_chain_of_a_trace(daemon: Any) -> None:
    with daemon.client() as client:
        agent = client.call("agents.spawn", type="billing", trace="pay", policy="handoff", window=10_000)["id"]
        client.record(agent, "message", {"role": "user", "text": "Build the billing API"}, agent=agent)
        successor = client.report_usage(agent, input_tokens=100, cache_read_tokens=9_500)["successor"]

    async def scenario(pilot: Pilot[None]) -> None:
        await pilot.press("2")
        await wait_until(pilot, lambda: rows(pilot, "#handoffs"), "the handoff list")
        line = f"trace pay: {agent} (TERMINATED) -> {successor} (INITIALIZING)"
        await wait_until(pilot, lambda: line in screen_text(pilot.app), "the chain of trace pay")
        assert any(agent in row and successor in row for row in rows(pilot, "#handoffs"))

    drive(scenario)


def test_search_finds_events_and_opens_their_session(daemon: Any) -> None:
    with daemon.client() as client:
        import_example(client)

    async def scenario(pilot: Pilot[None]) -> None:
        await pilot.press("3")
        await pilot.click("#query")
        await pilot.press(*"backoff", "enter")
        hits = await wait_until(pilot, lambda: rows(pilot, "#hits"), "search hits")
        assert all(EXAMPLE_SESSION in hit for hit in hits)
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, SessionScreen), "the session screen")
        await wait_until(pilot, lambda: rows(pilot, "#timeline"), "the timeline")

    drive(scenario)


def test_the_memory_screen_shows_the_pool_and_the_context_store(daemon: Any) -> None:
    with daemon.client() as client:
        client.call("memory.set", scope="global", key="style", value={"quotes": "double"})

    async def scenario(pilot: Pilot[None]) -> None:
        await pilot.press("4")
        entries = await wait_until(pilot, lambda: rows(pilot, "#entries"), "the entries")
        assert entries[0].startswith("global | style | 1")
        assert '"double"' in entries[0]
        await wait_until(pilot, lambda: "entries" in screen_text(pilot.app), "the entries on screen")

    drive(scenario)


def test_the_help_screen_lists_the_bindings_of_the_screen(daemon: Any) -> None:
    async def scenario(pilot: Pilot[None]) -> None:
        await pilot.press("question_mark")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, HelpScreen), "the help screen")
        text = screen_text(pilot.app)
        for words in ("Compress", "Handoff", "Verify", "Pause/resume", "Terminate", "Quit"):
            assert words in text
        await pilot.press("escape")
        assert not isinstance(pilot.app.screen, HelpScreen)

    drive(scenario)
