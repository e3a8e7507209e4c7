"""`toka search QUERY` and `toka recall QUERY --session S`: full-text search over the log."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from daemon.client.sync import Client
from toka_cli.options import JsonOpt, KindOpt, LimitOpt, SinceOpt, UntilOpt
from toka_cli.output import console, print_json
from toka_cli.render import short_ts, table, when

if TYPE_CHECKING:
    from rich.text import Text

QueryArg = Annotated[str, typer.Argument(help='Words to find; FTS5 syntax: "a phrase", pre*, AND, OR, NOT, NEAR().')]


def highlighted(snippet: str) -> Text | str:
    """The snippet on one line; on a terminal with styles, its «marked» words in bold instead of
    between marks. Pipes, files and NO_COLOR keep the marks, so the matches still show."""
    line = " ".join(snippet.split())
    out = console()
    if not out.is_terminal or out.color_system is None:
        return line
    from rich.text import Text

    from store.search import MARK_END, MARK_START  # the store's index code loads for search only

    text = Text()
    for index, part in enumerate(line.replace(MARK_END, MARK_START).split(MARK_START)):
        text.append(part, style="bold" if index % 2 else "")
    return text


def _rows(items: list[dict[str, Any]], why: bool) -> None:
    grid = table(*(("why",) if why else ()), "seq", "time", "session", "kind", "snippet")
    for item in items:
        cells = [str(item["seq"]), short_ts(item["ts"]), item["session"], item["kind"], highlighted(item["snippet"])]
        grid.add_row(*([item["why"]] if why else []), *cells)
    console().print(grid)


def search(
    query: QueryArg,
    session: Annotated[str | None, typer.Option("--session", "-s", help="Only this session (or a prefix).")] = None,
    agent: Annotated[str | None, typer.Option("--agent", "-a", help="Only events of this agent.")] = None,
    kind: KindOpt = None,
    since: SinceOpt = None,
    until: UntilOpt = None,
    limit: LimitOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Find events by their text, best match first (docs/search.md)."""
    args: dict[str, Any] = {
        "query": query,
        "session": session,
        "agent": agent,
        "kinds": kind or [],
        "since": when(since),
        "until": when(until),
        "limit": limit,
    }
    with Client() as client:
        hits = client.call("search", **{k: v for k, v in args.items() if v not in (None, [])})["hits"]
    if json_:
        print_json({"hits": hits})
    elif not hits:
        console().print(f"no event matches {query!r}", highlight=False)
    else:
        _rows(hits, why=False)


def recall(
    query: QueryArg,
    session: Annotated[str, typer.Option("--session", "-s", help="The session recalling (or a unique prefix).")],
    limit: LimitOpt = None,
    json_: JsonOpt = False,
) -> None:
    """What a session should remember about QUERY: its recent events, matches, its summaries."""
    args: dict[str, Any] = {"query": query, "session": session}
    if limit is not None:
        args["limit"] = limit
    with Client() as client:
        result = client.call("recall", **args)
    if json_:
        print_json(result)
    elif not result["items"]:
        console().print(f"nothing to recall about {query!r} in {result['session']}", highlight=False)
    else:
        _rows(result["items"], why=True)


def register(app: typer.Typer) -> None:
    app.command()(search)
    app.command()(recall)
