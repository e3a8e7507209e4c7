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
    if history is not None:
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
        what = "importing the agents' history" if history["first"] else "reading what the agents wrote meanwhile"
        return f"{what}: {history['files_read']} of {history['files']} files read, {history['events']} events"
    if history["imported_at"] is None:
        return "no agent's history imported yet"
    return f"the agents' history imported {history['imported_at']}; followed since"
