"""`toka search QUERY` and `toka recall QUERY --session S`: search over the log by its words and
their meaning (docs/search.md, docs/recall.md)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated

import typer

from toka_cli.call import call_and_show
from toka_cli.completers import complete_sessions, complete_targets
from toka_cli.options import ExcludeKindOpt, JsonOpt, KindOpt, LimitOpt, SinceOpt, UntilOpt, kind_patterns
from toka_cli.output import console, print_view
from toka_cli.render import short_ts, table, when

if TYPE_CHECKING:
    from rich.text import Text

    from daemon.contract.results import Recall, RecallItem, SearchHit, SearchResult

QueryArg = Annotated[
    str, typer.Argument(help="Words, names or paths to find as written, or a question whose meaning to find.")
]
FtsOpt = Annotated[
    bool,
    typer.Option("--fts", help='Words only, the query read as FTS5 syntax: "a phrase", pre*, AND, OR, NOT, NEAR().'),
]
SemanticOpt = Annotated[
    bool, typer.Option("--semantic", help="Meaning only: the events nearest the query's embedding (docs/recall.md).")
]


def highlighted(snippet: str) -> Text | str:
    """The snippet on one line; on a terminal with styles, its «marked» words in bold instead of
    between marks. Pipes, files and NO_COLOR keep the marks, so the matches still show."""
    line = " ".join(snippet.split())
    out = console()
    if not out.is_terminal or out.color_system is None:
        return line
    from rich.text import Text

    from daemon.contract.results import MARK_END, MARK_START

    text = Text()
    for index, part in enumerate(line.replace(MARK_END, MARK_START).split(MARK_START)):
        text.append(part, style="bold" if index % 2 else "")
    return text


def _rows(items: Sequence[SearchHit], why: Sequence[str] = ()) -> None:
    grid = table(*(("why",) if why else ()), "seq", "time", "session", "kind", "matched", "snippet")
    for index, item in enumerate(items):
        cells = [
            str(item["seq"]),
            short_ts(item["ts"]),
            item["session"],
            item["kind"],
            item.get("matched") or "",
            highlighted(item["snippet"]),
        ]
        grid.add_row(*([why[index]] if why else []), *cells)
    print_view(grid)


def search(
    query: QueryArg,
    session: Annotated[
        str | None,
        typer.Option(
            "--session",
            "-s",
            help="Only this session (or a prefix); SESSION/NAME: only that agent of it.",
            autocompletion=complete_targets,
        ),
    ] = None,
    agent: Annotated[str | None, typer.Option("--agent", "-a", help="Only events of this agent.")] = None,
    kind: KindOpt = None,
    exclude_kind: ExcludeKindOpt = None,
    since: SinceOpt = None,
    until: UntilOpt = None,
    limit: LimitOpt = None,
    fts: FtsOpt = False,
    semantic: SemanticOpt = False,
    json_: JsonOpt = False,
) -> None:
    """Find events by their words and their meaning, best first (docs/search.md, docs/recall.md).

    The words are searched for as written (`toka search src/auth/client.py` finds the path; every
    word must be found) and the meaning by the query's embedding; the two rankings are fused and
    each hit says what matched: words, meaning or both. --fts: words only, in FTS5 syntax;
    --semantic: meaning only.
    """

    def found(result: SearchResult) -> None:
        if result["hits"]:
            _rows(result["hits"])
        else:
            console().print(f"no event matches {query!r}", highlight=False)

    call_and_show(
        "search",
        json_,
        found,
        query=query,
        session=session,
        agent=agent,
        kinds=kind_patterns(kind, exclude_kind) or None,
        since=when(since, "--since"),
        until=when(until, "--until"),
        limit=limit,
        fts=fts or None,
        semantic=semantic or None,
    )


def recall(
    query: QueryArg,
    session: Annotated[
        str,
        typer.Option(
            "--session", "-s", help="The session recalling (or a unique prefix).", autocompletion=complete_sessions
        ),
    ],
    limit: LimitOpt = None,
    json_: JsonOpt = False,
) -> None:
    """What a session should remember about QUERY: its recent events, matches, its summaries."""
    call_and_show("recall", json_, _recalled, query=query, session=session, limit=limit)


def _recalled(result: Recall) -> None:
    items: list[RecallItem] = result["items"]
    if items:
        _rows(items, why=[item["why"] for item in items])
    else:
        console().print(f"nothing to recall about {result['query']!r} in {result['session']}", highlight=False)


def register(app: typer.Typer) -> None:
    app.command()(search)
    app.command()(recall)
