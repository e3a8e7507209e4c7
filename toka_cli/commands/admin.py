"""`toka admin ...`: maintenance of the store."""

from __future__ import annotations

from typing import Any

from toka_cli.base import make_app
from toka_cli.call import call_and_show
from toka_cli.options import JsonOpt
from toka_cli.output import console

app = make_app("Maintenance: rebuild the query tables from the log.", name="admin")


@app.command()
def rebuild(json_: JsonOpt = False) -> None:
    """Recreate the session tables (projections) and the search index from the events themselves."""
    call_and_show("admin.rebuild", json_, _rebuilt)


def _rebuilt(result: dict[str, Any]) -> None:
    console().print(
        f"rebuilt the projections of {result['sessions']} sessions and the search index"
        f" ({result['search_events']} events) from the log"
    )
