"""`toka admin ...`: maintenance of the store."""

from __future__ import annotations

from daemon.client.sync import Client
from toka_cli.base import make_app
from toka_cli.options import JsonOpt
from toka_cli.output import console, print_json

app = make_app("Maintenance: rebuild the query tables from the log.", name="admin")


@app.command()
def rebuild(json_: JsonOpt = False) -> None:
    """Recreate the session tables (projections) and the search index from the events themselves."""
    with Client() as client:
        result = client.call("admin.rebuild")
    if json_:
        print_json(result)
    else:
        console().print(
            f"rebuilt the projections of {result['sessions']} sessions and the search index"
            f" ({result['search_events']} events) from the log"
        )
