"""The `toka` command: the app assembled from its command groups."""

from __future__ import annotations

from typing import Annotated

import typer

from daemon.version import VERSION
from toka_cli.base import make_app
from toka_cli.lazy import Lazy, LazyGroup
from toka_cli.render import use_utc

# The sections `toka --help` lists its commands in, as gh groups its own: what people use every
# day first, the plumbing agents call last.
EVERYDAY = "Everyday commands"
AGENTS = "Agents, handoffs and memory"
DATA = "Getting history in and out"
INTEGRITY = "Tamper evidence"
UPKEEP = "Setup and upkeep"
PLUMBING = "Plumbing (run by the agents' hooks and status line)"


class Toka(LazyGroup):
    """`toka`: its commands in the order `--help` lists them, each with the module that registers
    it and the first paragraph of its help (tests/cli/test_lazy_commands.py holds them equal)."""

    COMMANDS = (
        Lazy(
            "status",
            "inspect",
            "The daemon (starting it when needed) and the log: version, pid, database, counts.",
            EVERYDAY,
        ),
        Lazy("sessions", "sessions", "List sessions, most recently active first.", EVERYDAY),
        Lazy("show", "sessions", "Show one session: its counts, time span, head, agents and kinds.", EVERYDAY),
        Lazy(
            "events",
            "events",
            "List a session's events, oldest first; with --json, one JSON object per line.",
            EVERYDAY,
        ),
        Lazy(
            "replay",
            "events",
            "The session as it stood at a point, in order: a readable transcript, or JSON lines.",
            EVERYDAY,
        ),
        Lazy(
            "search",
            "search",
            "Find events by their words and their meaning, best first (docs/search.md, docs/recall.md).",
            EVERYDAY,
        ),
        Lazy(
            "usage",
            "usage",
            "How full a context window is (latest prompt), the headroom to each threshold, and the tokens used in all.",
            EVERYDAY,
        ),
        Lazy(
            "report",
            "report",
            "Usage and what it cost, over every session, agent and source in the log: by day, week, month, session"
            " or 5-hour block.",
            EVERYDAY,
        ),
        Lazy(
            "alerts",
            "alerts",
            "Alerts: agents that went WARNING or CRITICAL, 5-hour blocks over their limits; oldest first.",
            EVERYDAY,
        ),
        Lazy(
            "tui", "tui", "A live dashboard of agents, sessions, handoffs, search and memory (docs/tui.md).", EVERYDAY
        ),
        Lazy(
            "agent",
            "agent",
            "Agents: spawn them, follow their context fill and lifecycle, pause, resume, terminate.",
            AGENTS,
        ),
        Lazy(
            "handoff",
            "handoff",
            "Handoff documents: build, show, list, walk a trace's chain, check against the log.",
            AGENTS,
        ),
        Lazy(
            "note",
            "handoff",
            "Add a note the agent's next handoff document lists: decisions, rejected paths, assumptions, constraints.",
            AGENTS,
        ),
        Lazy(
            "context",
            "compress",
            "The working context of an agent (a session: its main agent) as it should see it now, fitted to a budget.",
            AGENTS,
        ),
        Lazy(
            "recall",
            "search",
            "What a session should remember about QUERY: its recent events, matches, its summaries.",
            AGENTS,
        ),
        Lazy(
            "compress",
            "compress",
            "Compress an agent's older events into a summary, without deleting or changing any.",
            AGENTS,
        ),
        Lazy("memory", "memory", "Durable scoped memory: global, agent:<id>, session:<name>, trace:<id>.", AGENTS),
        Lazy(
            "pool",
            "pool",
            "The memory pool: short-lived working memory in the daemon, bounded in bytes, with time-to-live and"
            " least-recently-used eviction.",
            AGENTS,
        ),
        Lazy(
            "state",
            "state",
            "State machines: the state of agents, sessions and workstreams, every change an event.",
            AGENTS,
        ),
        Lazy("deps", "deps", "Dependencies between agents or workstreams: a graph kept acyclic, run in waves.", AGENTS),
        Lazy(
            "import",
            "transfer",
            "Import toka exports, Claude Code transcripts (with subagents) and Codex rollouts.",
            DATA,
        ),
        Lazy(
            "export",
            "export",
            "Export sessions: as toka's JSON lines (toka export SESSION), or as OpenTelemetry traces"
            " (toka export otel).",
            DATA,
        ),
        Lazy("watch", "watch", "Ingest transcripts as they are written, until Ctrl-C.", DATA),
        Lazy(
            "record", "events", "Append an event (or a batch, one JSON payload per line on stdin) to a session.", DATA
        ),
        Lazy(
            "integrate",
            "hooks",
            "Install toka into an agent: Claude Code's hooks and MCP server; Codex's hooks (trusted), MCP server and"
            " notify.",
            DATA,
        ),
        Lazy(
            "mcp",
            "mcp",
            "Serve toka's memory to an agent over the Model Context Protocol (stdio): tools, resources, a prompt.",
            DATA,
        ),
        Lazy(
            "verify",
            "inspect",
            "Recompute every payload digest and event id and check each chain; for the whole log, also run SQLite's"
            " own check of the file, check that the log still holds its last committed event, and check it against"
            " its signed tree heads (docs/tamper-evidence.md).",
            INTEGRITY,
        ),
        Lazy("proof", "heads", "Print an inclusion proof of an event in the log's latest signed head.", INTEGRITY),
        Lazy(
            "heads",
            "heads",
            "The latest signed tree heads, from the heads file and the witness (oldest first).",
            INTEGRITY,
        ),
        Lazy(
            "doctor",
            "doctor",
            "Check that toka works here, and name the command that fixes each problem found.",
            UPKEEP,
        ),
        Lazy("daemon", "daemon", "Start, stop and inspect the background daemon.", UPKEEP),
        Lazy("config", "config", "Read and write config.toml (precedence: flag, env TOKA_*, file, default).", UPKEEP),
        Lazy("stats", "inspect", "Storage figures: events, blobs, deduplication, size on disk.", UPKEEP),
        Lazy(
            "prune", "retention", "Replace each session's events older than a cut-off by one checkpoint event.", UPKEEP
        ),
        Lazy("gc", "retention", "Delete the payloads no event refers to any more (after `toka prune`).", UPKEEP),
        Lazy("blob", "compress", "Payloads by digest: what a summary elided as [blob DIGEST SIZE].", UPKEEP),
        Lazy(
            "admin",
            "admin",
            "Maintenance: rebuild the query tables from the log, copy the log into PostgreSQL, recover a damaged"
            " database.",
            UPKEEP,
        ),
        Lazy(
            "completion",
            "completion",
            "Print the completion script for SHELL: commands, options, their values, and the names of sessions and"
            " agents from the running daemon (most recent first).",
            UPKEEP,
        ),
        Lazy("hook", "hooks", "Record one hook payload (JSON on stdin) as an event of its session.", PLUMBING),
        Lazy(
            "statusline",
            "hooks",
            "Claude Code's status line: model, context fill and headroom, session cost, block cost and time left.",
            PLUMBING,
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
