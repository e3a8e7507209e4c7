"""Start-up benchmark: `toka status`, `toka sessions` and `toka --help` against a bare Typer app
printing the same, both as fresh processes.

Every command a person types starts a fresh Python process, so what counts is the whole
process. The reference for each is the least a Typer CLI can be that prints the same thing:

- ``status``, ``sessions`` (text and ``--json``): a Typer app with a root callback and the
  command with a ``--json`` option (as toka's), which sends the same request to the daemon on a
  standard-library socket, reads the answer, and writes the very bytes toka printed for it
  (captured in the same run). What toka pays on top is its own: its imports, its client, its
  rendering with Rich.
- ``--help``: a Typer app with the same commands, in the same order, with the same help texts
  (stubs), whose ``--help`` prints the same list.
- A shell completion of a session id (``_TOKA_COMPLETE=bash_complete``, what the completion
  scripts run when Tab is pressed after `toka show`) is timed too, against the bare ``--help``
  (no target: a figure to watch).

Both run in a fresh venv holding toka as a regular (non-editable) install (as bench_hook.py
does), its dependencies read from this venv, so neither side pays the editable install's import
finder. The commands alternate A, B, B, A after warm-ups; each figure is the median of
``--runs``, the ratio the median of the pairs' ratios, in CPU time (user + system of the process)
and wall time. Targets: status and sessions within 1.2x, --help within 1.3x. Run from the
project root:

    .venv/bin/python benchmarks/bench_startup.py [--runs 30] [--editable] [--json]
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_foundation import DaemonProcess, Home, described, machine, show
from bench_hook import process_options, timed_toka

TARGETS = {"status": 1.2, "sessions": 1.2, "help": 1.3}
SESSIONS = 40  # sessions in the log, so `toka sessions` prints a real table

REFERENCE = """\
import json, socket, sys
import typer

app = typer.Typer(add_completion=False)


@app.callback()
def root(utc: bool = typer.Option(False, "--utc")) -> None:
    pass


@app.command({name!r})
def command(json_: bool = typer.Option(False, "--json")) -> None:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect({socket!r})
    sock.sendall({line!r})
    with sock, sock.makefile("rb") as reader:
        json.loads(reader.readline())
    sys.stdout.write({as_json!r} if json_ else {as_text!r})


@app.command("other")
def other() -> None:
    pass


app()
"""


def help_reference(python: Path, env: dict[str, str]) -> str:
    """A bare Typer app with toka's commands as stubs: the same names, order and help."""
    listing = subprocess.run(
        [str(python), "-c", LIST_COMMANDS], capture_output=True, text=True, env=env, check=True
    ).stdout
    commands: list[list[str]] = json.loads(listing)
    root_help = commands.pop(0)[1]
    lines = [
        "import typer",
        f"app = typer.Typer(help={root_help!r}, add_completion=False, rich_markup_mode=None,"
        " context_settings={'help_option_names': ['-h', '--help']})",
        "@app.callback()",
        "def root(version: bool = typer.Option(False, '--version', '-V', help=\"Print toka's version and exit.\"),"
        " utc: bool = typer.Option(False, '--utc', help='Show times in UTC instead of the local time zone.'))"
        " -> None:",
        "    pass",
    ]
    for name, help, is_group in commands:
        if is_group:
            lines.append(f"app.add_typer(typer.Typer(help={help!r}), name={name!r})")
        else:
            lines.append(f"app.command({name!r}, help={help!r})(lambda: None)")
    lines.append("app()")
    return "\n".join(lines) + "\n"


LIST_COMMANDS = """\
import json
import typer.main
from toka_cli.main import app
group = typer.main.get_command(app)
ctx = group.make_context("toka", ["--help"], resilient_parsing=True)
found = [["toka", group.help]]
for name in group.list_commands(ctx):
    command = group.get_command(ctx, name)
    if not command.hidden:
        found.append([name, command.help or command.short_help or "", hasattr(command, "commands")])
print(json.dumps(found))
"""


class Timed:
    """A command run as a child whose own CPU time is read from its rusage."""

    def __init__(self, command: list[str], env: dict[str, str]) -> None:
        self.command = command
        self.env = env
        self.wall: list[float] = []
        self.cpu: list[float] = []

    def once(self, counted: bool) -> bytes:
        start = time.perf_counter()
        process = subprocess.Popen(self.command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=self.env)
        out = process.stdout.read() if process.stdout else b""
        err = process.stderr.read() if process.stderr else b""
        _, status, usage = os.wait4(process.pid, 0)  # the child's own rusage, to the microsecond
        wall = time.perf_counter() - start
        process.returncode = os.waitstatus_to_exitcode(status)
        if process.returncode != 0:
            raise RuntimeError(f"{self.command[-3:]} failed: {process.returncode} {err[-500:]!r}")
        if counted:
            self.wall.append(wall)
            self.cpu.append(usage.ru_utime + usage.ru_stime)
        return out


def paired(a: Timed, b: Timed, runs: int) -> dict[str, float]:
    """A and B alternated (A B, then B A), after three warm-up pairs; medians and ratios."""
    for round_ in range(-3, runs):
        first, second = (a, b) if round_ % 2 == 0 else (b, a)
        first.once(round_ >= 0)
        second.once(round_ >= 0)
    return {
        "toka_ms": round(statistics.median(a.cpu) * 1000, 1),
        "reference_ms": round(statistics.median(b.cpu) * 1000, 1),
        "ratio_cpu": round(statistics.median(x / y for x, y in zip(a.cpu, b.cpu, strict=True)), 3),
        "toka_wall_ms": round(statistics.median(a.wall) * 1000, 1),
        "reference_wall_ms": round(statistics.median(b.wall) * 1000, 1),
        "ratio_wall": round(statistics.median(x / y for x, y in zip(a.wall, b.wall, strict=True)), 3),
    }


def fill_log(daemon: DaemonProcess) -> None:
    """SESSIONS sessions of a few events each, so `toka sessions` has a table to print."""
    with daemon.client() as client:
        for i in range(SESSIONS):
            events = [
                {"session": f"bench-{i:04d}-{'abcdef'[i % 6]}", "kind": "message", "payload": {"role": "user", "n": n}}
                for n in range(3)
            ]
            client.call("events.append", events=events)


def main() -> None:
    options = process_options(__doc__)
    work = Path(tempfile.mkdtemp(prefix="tkbs", dir="/tmp"))
    home = Home(work, "h")
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOKA_")}
    env.update(TOKA_HOME=str(home.root), COLUMNS="120", NO_COLOR="1")
    results: dict[str, Any] = {}
    try:
        python, toka = timed_toka(work, options.editable)
        if not options.editable:  # its dependencies: this venv's
            site = next((work / "venv" / "lib").glob("python*/site-packages"))
            deps = next(p for p in sys.path if p.endswith("site-packages"))
            (site / "dependencies.pth").write_text(deps + "\n")
        with DaemonProcess(home) as daemon:
            info = machine()
            fill_log(daemon)
            for name in ("status", "sessions"):
                printed = {
                    flags: subprocess.run(
                        [str(toka), name, *flags], capture_output=True, text=True, env=env, check=True
                    ).stdout
                    for flags in ((), ("--json",))
                }
                line = json.dumps({"id": 1, "op": "status" if name == "status" else "sessions.list", "args": {}})
                script = work / f"ref_{name}.py"
                script.write_text(
                    REFERENCE.format(
                        name=name,
                        socket=str(home.paths.socket),
                        line=(line + "\n").encode(),
                        as_json=printed[("--json",)],
                        as_text=printed[()],
                    )
                )
                for flags in ((), ("--json",)):
                    results[" ".join((name, *flags))] = paired(
                        Timed([str(toka), name, *flags], env),
                        Timed([str(python), str(script), name, *flags], env),
                        options.runs,
                    )
            reference_help = work / "ref_help.py"
            reference_help.write_text(help_reference(python, env))
            results["--help"] = paired(
                Timed([str(toka), "--help"], env),
                Timed([str(python), str(reference_help), "--help"], env),
                options.runs,
            )
            completing = {
                **env,
                "_TOKA_COMPLETE": "bash_complete",
                "COMP_WORDS": "toka show bench-00",
                "COMP_CWORD": "2",
            }
            with contextlib.suppress(RuntimeError):  # a toka without completion of session ids
                results["completion (info)"] = paired(
                    Timed([str(toka)], completing),
                    Timed([str(python), str(reference_help), "--help"], env),
                    options.runs,
                )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    verdicts = {
        label: figures["ratio_cpu"] <= TARGETS[label.split()[0].lstrip("-")]
        for label, figures in results.items()
        if label.split()[0].lstrip("-") in TARGETS
    }
    show(
        {
            **described(info),
            "install": "editable (this venv)" if options.editable else "regular (fresh venv)",
            "runs": options.runs,
            **results,
            "pass": verdicts,
            "load": [info["load_at_start"], round(os.getloadavg()[0], 2)],
        },
        options.json,
    )


if __name__ == "__main__":
    main()
