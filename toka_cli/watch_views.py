"""How the daemon's watch reads for people, in `toka status` and `toka doctor`: the agents' folders
it follows and its read at start of what they hold (docs/json.md, `watch`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from daemon.contract.results import WatchFolder, WatchHistory, WatchStatus


def watch_rows(watch: WatchStatus) -> list[tuple[str, object]]:
    """The agents' folders the daemon follows, and its read at start, in `status`."""
    rows: list[tuple[str, object]] = []
    agents = watch.get("agents")
    if agents is not None:
        rows.append(("agents", agents_line(agents)))
    history = watch.get("history")
    # With watch.agents off there is no history of theirs to speak of once the read is done.
    if history is not None and (agents is not None or history["state"] != "done"):
        rows.append(("history", history_line(history)))
    return rows


def agents_line(agents: list[WatchFolder]) -> str:
    """Which of the agents' folders are followed, with their files; or where none was found."""
    found = [folder for folder in agents if folder["found"]]
    if not found:
        return f"no agent's folder found (looked in {', '.join(folder['path'] for folder in agents)})"
    return "following " + ", ".join(f"{folder['path']} ({folder['files']} files)" for folder in found)


def history_line(history: WatchHistory) -> str:
    """The read at start: under way (how far), or done, and when the agents' history was imported."""
    if history["state"] != "done":
        what = read_at_start(history["first"])
        return f"{what}: {history['files_read']} of {history['files']} files read, {history['events']} events"
    if history["imported_at"] is None:
        return "no agent's history imported yet"
    return f"the agents' history imported {history['imported_at']}; followed since"


def read_at_start(first: bool) -> str:
    """What the daemon's read at start is doing, for people."""
    if first:
        return "importing the agents' history"
    return "reading what the followed files gained while the daemon was down"
