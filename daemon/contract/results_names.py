"""`names.complete`'s answer, as the shell completions of `toka` read it
(toka_cli/completers.py); tests/cli/test_results.py holds it to a real daemon's answer."""

from typing import TypedDict


class NameCompletion(TypedDict):
    """A session, one of its agents (``SESSIONPREFIX/NAME``) or a spawned agent's id."""

    name: str
    what: str  # "session" or "agent"
    session: str
    last_ts: str | None
    events: int


class NameCompletions(TypedDict):
    names: list[NameCompletion]
