"""The `toka` command: the app assembled from its command groups."""

from __future__ import annotations

from typing import Annotated

import typer

from daemon.version import VERSION
from toka_cli.base import make_app
from toka_cli.lazy import Lazy, LazyGroup
from toka_cli.render import use_utc


class Toka(LazyGroup):
    """`toka`: its commands in the order `--help` lists them, each with the module that registers
    it and the first paragraph of its help (tests/cli/test_lazy_commands.py holds them equal)."""

    COMMANDS = (
        Lazy("status", "inspect", "The daemon (starting it when needed) and the log: version, pid, database, counts."),
        Lazy("stats", "inspect", "Storage figures: events, blobs, deduplication, size on disk."),
        Lazy(
            "verify",
            "inspect",
            "Recompute every payload digest and event id and check each chain; for the whole log, also run SQLite's"
            " own check of the file, check that the log still holds its last committed event, and check it against"
            " its signed tree heads (docs/tamper-evidence.md).",
        ),
        Lazy("proof", "heads", "Print an inclusion proof of an event in the log's latest signed head."),
        Lazy("heads", "heads", "The latest signed tree heads, from the heads file and the witness (oldest first)."),
        Lazy("sessions", "sessions", "List sessions, most recently active first."),
        Lazy("show", "sessions", "Show one session: its counts, time span, head, agents and kinds."),
        Lazy("events", "events", "List a session's events, oldest first; with --json, one JSON object per line."),
        Lazy("replay", "events", "The session as it stood at a point, in order: a readable transcript, or JSON lines."),
        Lazy("record", "events", "Append an event (or a batch, one JSON payload per line on stdin) to a session."),
        Lazy("import", "transfer", "Import toka exports, Claude Code transcripts (with subagents) and Codex rollouts."),
        Lazy(
            "export",
            "export",
            "Export sessions: as toka's JSON lines (toka export SESSION), or as OpenTelemetry traces"
            " (toka export otel).",
        ),
        Lazy("watch", "watch", "Ingest transcripts as they are written, until Ctrl-C."),
        Lazy(
            "usage",
            "usage",
            "How full a context window is (latest prompt), the headroom to each threshold, and the tokens used in all.",
        ),
        Lazy(
            "alerts",
            "alerts",
            "Alerts: agents that went WARNING or CRITICAL, 5-hour blocks over their limits; oldest first.",
        ),
        Lazy("hook", "hooks", "Record one hook payload (JSON on stdin) as an event of its session."),
        Lazy(
            "statusline",
            "hooks",
            "Claude Code's status line: model, context fill and headroom, session cost, block cost and time left.",
        ),
        Lazy(
            "integrate",
            "hooks",
            "Install toka into an agent: Claude Code's hooks and MCP server;"
            " Codex's hooks (trusted), MCP server and notify.",
        ),
        Lazy(
            "note",
            "handoff",
            "Add a note the agent's next handoff document lists: decisions, rejected paths, assumptions, constraints.",
        ),
        Lazy(
            "compress", "compress", "Compress an agent's older events into a summary, without deleting or changing any."
        ),
        Lazy(
            "context",
            "compress",
            "The working context of an agent (a session: its main agent) as it should see it now, fitted to a budget.",
        ),
        Lazy("search", "search", "Find events by their text, best match first (docs/search.md)."),
        Lazy(
            "recall", "search", "What a session should remember about QUERY: its recent events, matches, its summaries."
        ),
        Lazy("prune", "retention", "Replace each session's events older than a cut-off by one checkpoint event."),
        Lazy("gc", "retention", "Delete the payloads no event refers to any more (after `toka prune`)."),
        Lazy(
            "completion",
            "completion",
            "Print the completion script for SHELL: commands, options, their values, and the names of sessions and"
            " agents from the running daemon (most recent first).",
        ),
        Lazy("doctor", "doctor", "Check that toka works here, and name the command that fixes each problem found."),
        Lazy(
            "mcp",
            "mcp",
            "Serve toka's memory to an agent over the Model Context Protocol (stdio): tools, resources, a prompt.",
        ),
        Lazy("tui", "tui", "A live dashboard of agents, sessions, handoffs, search and memory (docs/tui.md)."),
        Lazy(
            "agent",
            "agent",
            "Agents: spawn them, follow their context fill and lifecycle, pause, resume, terminate.",
        ),
        Lazy("memory", "memory", "Durable scoped memory: global, agent:<id>, session:<name>, trace:<id>."),
        Lazy(
            "handoff", "handoff", "Handoff documents: build, show, list, walk a trace's chain, check against the log."
        ),
        Lazy("blob", "compress", "Payloads by digest: what a summary elided as [blob DIGEST SIZE]."),
        Lazy(
            "state",
            "state",
            "State machines: the state of agents, sessions and workstreams, every change an event.",
        ),
        Lazy(
            "pool",
            "pool",
            "The memory pool: short-lived working memory in the daemon, bounded in bytes, with time-to-live and"
            " least-recently-used eviction.",
        ),
        Lazy("deps", "deps", "Dependencies between agents or workstreams: a graph kept acyclic, run in waves."),
        Lazy(
            "report",
            "report",
            "Usage and what it cost, over every session, agent and source in the log: by day, week, month, session"
            " or 5-hour block.",
        ),
        Lazy("daemon", "daemon", "Start, stop and inspect the background daemon."),
        Lazy("config", "config", "Read and write config.toml (precedence: flag, env TOKA_*, file, default)."),
        Lazy(
            "admin",
            "admin",
            "Maintenance: rebuild the query tables from the log, copy the log into PostgreSQL, recover a damaged"
            " database.",
        ),
    )


app = make_app(
    "Toka: a tamper-evident event log and context manager for AI agents.\n\n"
    "Exit codes: 0 ok, 1 failure, 2 usage or config error, 3 not found, 4 daemon unavailable, 5 integrity failure,"
    " 6 conflict (the current state does not allow it).",
    cls=Toka,
)


def _show_version(value: bool) -> None:
    if value:
        print(f"toka {VERSION}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", "-V", callback=_show_version, is_eager=True, help="Print toka's version and exit."),
    ] = False,
    utc: Annotated[bool, typer.Option("--utc", help="Show times in UTC instead of the local time zone.")] = False,
) -> None:
    use_utc(utc)


def main() -> None:
    app()
