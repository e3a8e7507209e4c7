"""`toka agent spawn|list|show|pause|resume|terminate|usage`: agents and their lifecycle."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from daemon.contract.policies import OnCritical, choices_of
from toka_cli.base import make_app
from toka_cli.call import call_and_show
from toka_cli.completers import choices, complete_targets
from toka_cli.options import JsonOpt
from toka_cli.output import console, print_view
from toka_cli.render import agents_table, compressed_line, fill_line, key_values, short_ts

if TYPE_CHECKING:
    from daemon.contract.results import Agent, AgentList

app = make_app("Agents: spawn them, follow their context fill and lifecycle, pause, resume, terminate.", name="agent")
AgentArg = Annotated[
    str,
    typer.Argument(
        help="An agent: its id (frontend-v2-3f9a, SESSION/NAME) or a unique prefix; a session: its main agent.",
        autocompletion=complete_targets,
    ),
]


def agent_view(agent: Agent) -> None:
    rows = [
        ("agent", agent["id"]),
        ("state", agent["state"] + (f" ({agent['reason']})" if agent["reason"] else "")),
        ("detail", agent["detail"] or "-"),
        ("session", agent["session"]),
        ("type", f"{agent['type'] or '-'} v{agent['version']}" if agent["spawned"] else "implicit (from its session)"),
        ("role", agent["role"] or "-"),
        ("trace", agent["trace"] or "-"),
        ("model", agent["model"] or "-"),
        ("context", fill_line(agent)),
        ("toka's compressed context", compressed_line(agent)),
        ("last active", short_ts(agent["last_active"]) if agent["last_active"] else "-"),
        ("thresholds", "warning {warning_pct:g}%, critical {critical_pct:g}%".format(**agent["thresholds"])),
        ("policy at critical", agent["policy"]),
        ("handoffs in trace", agent["handoffs_in_trace"]),
        ("predecessor", agent["predecessor"] or "-"),
        ("successor", agent["successor"] or "-"),
    ]
    print_view(key_values(rows))
    for change in agent.get("history", []):
        reason = f" {change['reason']}" if change.get("reason") else ""
        line = f"{short_ts(change['ts'])}  {change['from']} -> {change['to']}{reason}  {change.get('detail') or ''}"
        console().print(line, highlight=False, markup=False)


@app.command()
def spawn(
    type_: Annotated[str, typer.Option("--type", "-t", help="What the agent does, e.g. frontend.")],
    role: Annotated[str | None, typer.Option(help="Its role in words.")] = None,
    model: Annotated[str | None, typer.Option(help="The model it runs on (sets the window from the table).")] = None,
    window: Annotated[int | None, typer.Option(min=1, help="Its context window in tokens, over the model's.")] = None,
    warning: Annotated[float | None, typer.Option(help="WARNING at this % of the window (default 75).")] = None,
    critical: Annotated[float | None, typer.Option(help="CRITICAL at this % of the window (default 90).")] = None,
    policy: Annotated[
        str | None,
        typer.Option(
            help="At CRITICAL: notify, or handoff to a successor (lifecycle.on_critical).",
            autocompletion=choices(*choices_of(OnCritical)),
        ),
    ] = None,
    session: Annotated[str | None, typer.Option(help="The session it records into (default: its id).")] = None,
    trace: Annotated[str | None, typer.Option(help="The trace it belongs to (default: a new one).")] = None,
    json_: JsonOpt = False,
) -> None:
    """Register a new agent; each spawn of a type within a trace gets the next version."""
    call_and_show(
        "agents.spawn",
        json_,
        _spawned,
        type=type_,
        role=role,
        model=model,
        window=window,
        warning_pct=warning,
        critical_pct=critical,
        policy=policy,
        session=session,
        trace=trace,
    )


def _spawned(agent: Agent) -> None:
    typer.echo(agent["id"])


@app.command("list")
def list_(
    trace: Annotated[str | None, typer.Option(help="Only this trace.")] = None,
    state: Annotated[str | None, typer.Option(help="Only agents in this state, e.g. CRITICAL.")] = None,
    live: Annotated[
        bool, typer.Option("--live", help="Only the agents that still run (not ENDED or TERMINATED).")
    ] = False,
    json_: JsonOpt = False,
) -> None:
    """Every agent with when it was last active: the live first, those at risk first (ERROR,
    CRITICAL, WARNING, ...), then by fill; then the ended, the last active first."""
    call_and_show("agents.list", json_, agents_view, trace=trace, state=state, live=live)


def agents_view(result: AgentList) -> None:
    print_view(agents_table(result["agents"]))


@app.command()
def show(agent: AgentArg, json_: JsonOpt = False) -> None:
    """One agent: state and why, context fill, thresholds, trace, and its lifecycle history."""
    call_and_show("agents.get", json_, agent_view, agent=agent)


@app.command()
def pause(agent: AgentArg, json_: JsonOpt = False) -> None:
    """Pause an agent: usage is still recorded, its state stays PAUSED until resumed."""
    call_and_show("agents.pause", json_, agent_view, agent=agent)


@app.command()
def resume(agent: AgentArg, json_: JsonOpt = False) -> None:
    """Resume a paused agent, in the state its context fill calls for."""
    call_and_show("agents.resume", json_, agent_view, agent=agent)


@app.command()
def terminate(
    agent: AgentArg,
    reason: Annotated[
        str, typer.Option(help="TASK_COMPLETED, MANUAL_TERMINATION, TIMEOUT, ... (see `toka agent --help`).")
    ] = "MANUAL_TERMINATION",
    detail: Annotated[str | None, typer.Option(help="Why, in words.")] = None,
    json_: JsonOpt = False,
) -> None:
    """End an agent; TERMINATED is final."""
    call_and_show("agents.terminate", json_, agent_view, agent=agent, reason=reason, detail=detail or None)


@app.command("usage")
def usage_(
    agent: AgentArg,
    input_: Annotated[int, typer.Option("--input", min=0, help="Input tokens of the call.")] = 0,
    output: Annotated[int, typer.Option(min=0, help="Output tokens.")] = 0,
    cache_read: Annotated[int, typer.Option(min=0, help="Cache-read input tokens.")] = 0,
    cache_creation: Annotated[int, typer.Option(min=0, help="Cache-creation input tokens.")] = 0,
    model: Annotated[str | None, typer.Option(help="The model that answered.")] = None,
    json_: JsonOpt = False,
) -> None:
    """Report one call's usage by hand; the agent's state follows its context fill."""
    call_and_show(
        "agents.usage",
        json_,
        agent_view,
        agent=agent,
        input_tokens=input_,
        output_tokens=output,
        cache_read_tokens=cache_read,
        cache_creation_tokens=cache_creation,
        model=model or None,
    )
