"""The values the shells complete for an argument or an option that the completion scripts
cannot hold: the names of sessions and agents, read from a running daemon when Tab is pressed.
The scripts (toka_cli/completions/, written by docs/gen/gendocs.py) hold the commands, the
options and the few words an option takes (:func:`choices`); for a name they run `toka` with
Click's protocol (toka_cli/completion.py), which calls :func:`complete_sessions` or
:func:`complete_targets`.

Imported by every command module through toka_cli/options.py: nothing here loads the client
until a completion asks for names.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from daemon.contract.results_names import NameCompletion, NameCompletions

# Names a completion lists: enough to page through, few enough to read at once.
LIMIT = 100
# A daemon that does not answer within this is left alone: Tab must not hang.
TIMEOUT_S = 1.0


def choices(*values: str, load: Callable[[], Iterable[str]] | None = None) -> Callable[[str], list[str]]:
    """A completer of the words an option or argument takes (toka still checks the value where it
    reads it, with its own error and hint); ``load`` gives them when they are costly to import,
    and is called only when they are asked for. Its ``choices()`` gives them all, for the
    completion scripts (docs/gen/command_docs.py)."""

    def every() -> tuple[str, ...]:
        return values if load is None else tuple(load())

    def complete(incomplete: str) -> list[str]:
        return [value for value in every() if value.startswith(incomplete)]

    complete.choices = every  # type: ignore[attr-defined]
    return complete


def complete_sessions(incomplete: str) -> list[tuple[str, str]]:
    """Session names that begin ``incomplete``, the most recently active first, each with its
    events and last time."""
    return _names(incomplete, agents=False)


def complete_targets(incomplete: str) -> list[tuple[str, str]]:
    """As :func:`complete_sessions`, then spawned agents' ids; after ``SESSION/``, its agents."""
    return _names(incomplete, agents=True)


# The completers the scripts cannot hold: they ask `toka` (docs/gen/command_docs.py reads this).
FROM_DAEMON = (complete_sessions, complete_targets)


def _names(incomplete: str, agents: bool) -> list[tuple[str, str]]:
    """From a running daemon only: none is started for a completion, and a daemon that is down
    or slow, or a config that does not load, completes nothing and prints nothing."""
    from daemon.client.sync import Client
    from store.errors import TokaError

    try:
        with Client(autostart=False, timeout=TIMEOUT_S) as client:
            found: NameCompletions = client.call("names.complete", prefix=incomplete, agents=agents, limit=LIMIT)
    except (TokaError, OSError, ValueError):
        return []
    return [(name["name"], _described(name)) for name in found["names"]]


def _described(name: NameCompletion) -> str:
    if name["what"] == "agent" and name["name"] != name["session"] and "/" not in name["name"]:
        return f"agent of {name['session']}"
    last = "" if name["last_ts"] is None else f", last {name['last_ts'][:16].replace('T', ' ')} UTC"
    return f"{name['what']}, {name['events']} events{last}"
