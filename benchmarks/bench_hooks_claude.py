"""Hooks inside the real Claude Code: what toka's hooks add to a turn, timed from outside.

The real Claude Code (npm ``@anthropic-ai/claude-code``, run as ``claude -p``) works against a
model server on loopback (tests/e2e/fake_model.py) that answers each turn with five ``Read``
calls of small files, then with a line of text and ``end_turn``. So a turn fires SessionStart,
UserPromptSubmit, five PreToolUse and five PostToolUse, Stop and SessionEnd: 14 hook runs. The
figure is the wall time of the whole ``claude -p`` process, node's start-up and exit included,
as a script running Claude Code waits for it.

Every variant puts a hook on each event toka installs (claude_hooks.EVENTS); only the entries
differ:

- ``true``, the reference: every hook is ``/bin/true``, the least a command hook costs;
- ``sync``: ``toka hook claude-code`` on every event, a command hook Claude Code waits for (what
  toka installed before);
- ``async``: the same command, with ``"async": true`` on the events that only record
  (PreToolUse, PostToolUse, Notification, Stop, SubagentStop, PostCompact, SessionEnd);
  SessionStart, UserPromptSubmit and PreCompact, whose answer is context for the model, stay
  synchronous in every variant;
- ``installed``: what `toka integrate claude-code` installs: the answering events run the hook,
  the recording events drop their payload into the daemon's inbox with a few words of shell
  (toka_cli/integrate/inbox.py: ``mktemp``, ``cat``, ``mv``; no Python);
- ``inbox-bg``: as ``installed``, with the inbox command in the background form
  (claude_hooks.background: the shell starts it in the background and exits);
- ``inbox-async``: as ``installed``, with ``"async": true`` on the inbox command;
- ``background``: what toka installed before: the recording events run the Python hook in the
  background form;
- ``nice``: as ``background``, with ``nice -n 10`` before the background hook;
- ``floor``: the answering events as in ``sync``, every other hook ``/bin/true``: the least any
  install costs whose answering hooks are toka's synchronous command (records nothing more);
- ``bgtrue``: as ``floor``, with ``/bin/true`` in the background form: what the form costs
  without a Python start-up behind it;
- ``http``: the recording events as ``{"type": "http"}`` entries POSTing to a bare loopback HTTP
  server that answers ``{}``: what an http hook costs Claude Code at best. They record nothing
  (an http hook loses every event while the daemon is down), so this variant is not checked for
  lost events;
- ``http-answer``: as ``installed``, with the answering events as http hooks to that bare server:
  what answering over HTTP instead of a Python start would save (the answering events are not
  recorded, so this variant is not checked for lost events either).

Beside the wall time, the CPU a turn costs the machine: Claude Code's and every hook's (this
process is the subreaper of the hooks that outlive Claude Code, so theirs count too: their
rusage is collected once they are reaped) and the daemon's, from before the turn until its
events are in the log. On a 2-core machine shared with other work, CPU is the steadier figure.

The variants run in rounds, every variant once a round, in an order that rotates, after a warm-up
round. Per variant: the median turn time, the median over the rounds of its ratio to the same
round's reference, and the ratio of the medians. After each turn of a recording variant the
benchmark waits (untimed) until the daemon holds every hook event of that session, and counts
those missing after 10 s as lost.

The hooks run toka from a fresh venv holding it as a regular install (bench_hook.py's
``regular_install``); ``--editable``: this venv's toka. Without node, or without the Claude Code
CLI (looked up where tests/e2e/agent_clis.py installs it, or ``--claude PATH``), it says so and
exits 0. Run from the project root:

    .venv/bin/python benchmarks/bench_hooks_claude.py [--rounds 6] [--variants true,sync,installed] [--json]
"""

from __future__ import annotations

import argparse
import collections
import ctypes
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from bench_foundation import DaemonProcess, Home, described, machine, show
from bench_hook import timed_toka

from daemon.client.sync import Client
from store.errors import NotFound
from toka_cli.integrate import claude_hooks
from toka_cli.integrate.inbox import inbox_command

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "e2e"))
from fake_model import FakeModel, Reply, Text, ToolCall, Usage  # noqa: E402

TARGET = 1.05
TOOL_CALLS = 5
# What one turn fires: kind -> count.
EXPECTED = {
    "hook.session_start": 1,
    "hook.user_prompt_submit": 1,
    "hook.pre_tool_use": TOOL_CALLS,
    "hook.post_tool_use": TOOL_CALLS,
    "hook.stop": 1,
    "hook.session_end": 1,
}
VARIANTS = (
    "true",
    "sync",
    "async",
    "installed",
    "inbox-bg",
    "inbox-async",
    "background",
    "nice",
    "floor",
    "bgtrue",
    "http",
    "http-answer",
)
# Variants whose hooks record nothing, or not every event.
UNRECORDED = ("true", "floor", "bgtrue", "http", "http-answer")
WAIT_S = 10.0
# prctl(2): make this process the reaper of its descendants' orphans (the hooks that outlive
# Claude Code), so that their CPU is counted when they are reaped.
PR_SET_CHILD_SUBREAPER = 36


def become_subreaper() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")


def reap_orphans() -> None:
    """Reap the hooks that outlived Claude Code and have exited, adding their CPU to ours."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def process_cpu(pid: int) -> float:
    """A running process's own CPU seconds (its user and system time, /proc/PID/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def claude_binary(given: str | None) -> Path | None:
    """The Claude Code CLI: ``--claude``, else where the e2e tests install it."""
    if given:
        return Path(given)
    base = os.environ.get("TOKATEST_NPM_CACHE") or str(
        Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "toka-tests" / "npm"
    )
    path = Path(base) / "claude" / "node_modules" / ".bin" / "claude"
    return path if path.exists() else None


def hook_settings(variant: str, toka: Path, http_url: str) -> dict[str, Any]:
    """The settings.json of a variant."""
    command = f"{toka} hook claude-code"
    if variant == "installed":
        # What `toka integrate claude-code` writes into an empty file, with this toka's path.
        change = claude_hooks.plan(Path("/nonexistent/settings.json"))
        text = json.dumps(change.settings).replace(json.dumps(change.command)[1:-1], command)
        installed: dict[str, Any] = json.loads(text)
        return installed
    hooks: dict[str, Any] = {}
    for event in claude_hooks.EVENTS:
        entry: dict[str, Any] = {"type": "command", "command": command}
        dropped = inbox_command("claude-code")
        if variant == "true":
            entry["command"] = "/bin/true"
        elif variant == "http-answer" and event in claude_hooks.ANSWERING:
            entry = {"type": "http", "url": http_url, "timeout": 5}
        elif variant == "sync" or event in claude_hooks.ANSWERING:
            pass
        elif variant == "async":
            entry["async"] = True
        elif variant == "inbox-bg":
            entry["command"] = claude_hooks.background(f"{{ {dropped}; }}")
        elif variant == "http-answer":
            entry["command"] = dropped
        elif variant == "inbox-async":
            entry = {"type": "command", "command": dropped, "async": True}
        elif variant == "background":
            entry["command"] = claude_hooks.background(command)
        elif variant == "nice":
            entry["command"] = claude_hooks.background(f"nice -n 10 {command}")
        elif variant == "floor":
            entry["command"] = "/bin/true"
        elif variant == "bgtrue":
            entry["command"] = claude_hooks.background("/bin/true")
        elif variant == "http":
            entry = {"type": "http", "url": http_url, "timeout": 5}
        else:
            raise ValueError(variant)
        group: dict[str, Any] = {"matcher": "*"} if event in claude_hooks.TOOL_EVENTS else {}
        hooks[event] = [{**group, "hooks": [entry]}]
    return {"hooks": hooks}


class BareEndpoint:
    """A loopback HTTP server answering every POST with ``{}``: the http hook's other end."""

    def __init__(self) -> None:
        self.posts = 0

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(inner) -> None:  # noqa: N805 - the server's handler
                inner.rfile.read(int(inner.headers.get("Content-Length") or 0))
                self.posts += 1
                inner.send_response(200)
                inner.send_header("Content-Type", "application/json")
                inner.send_header("Content-Length", "2")
                inner.end_headers()
                inner.wfile.write(b"{}")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_port}/hooks"


class Bench:
    def __init__(self, work: Path, home: Home, toka: Path, claude: Path, model: FakeModel, http_url: str) -> None:
        self.home, self.toka, self.claude, self.model, self.http_url = home, toka, claude, model, http_url
        self.agent_home = work / "agent"
        self.project = self.agent_home / "project"
        self.project.mkdir(parents=True)
        (self.agent_home / ".claude").mkdir()
        self.files = []
        for i in range(TOOL_CALLS):
            path = self.project / f"notes{i}.txt"
            path.write_text(f"line {i}: the build runs on port {8420 + i}\n")
            self.files.append(path)
        node = shutil.which("node")
        self.env = {
            "PATH": os.pathsep.join(([str(Path(node).parent)] if node else []) + ["/usr/bin", "/bin"]),
            "LANG": "C.UTF-8",
            "HOME": str(self.agent_home),
            "TOKA_HOME": str(home.root),
            "ANTHROPIC_BASE_URL": model.url,
            "ANTHROPIC_API_KEY": "sk-ant-bench",
            "DISABLE_AUTOUPDATER": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        }

    def install(self, variant: str) -> None:
        settings = hook_settings(variant, self.toka, self.http_url)
        (self.agent_home / ".claude" / "settings.json").write_text(json.dumps(settings, indent=2))

    def turn(self, variant: str) -> tuple[float, str]:
        """One timed turn of ``variant``: its wall time and session id."""
        self.install(variant)
        calls = tuple(ToolCall("Read", {"file_path": str(path)}) for path in self.files)
        self.model.script(Reply((Text("Reading."), *calls), Usage(120, 25)), Reply((Text("Done."),), Usage(180, 9)))
        session = str(uuid.uuid4())
        command = [str(self.claude), "-p", "Read the notes.", "--allowedTools", "Read", "--session-id", session]
        start = time.perf_counter()
        done = subprocess.run(
            command, cwd=self.project, env=self.env, stdin=subprocess.DEVNULL, capture_output=True, text=True
        )
        elapsed = time.perf_counter() - start
        if done.returncode != 0 or "Done." not in done.stdout:
            raise RuntimeError(f"claude exited {done.returncode}: {done.stdout[-500:]} {done.stderr[-500:]}")
        return elapsed, session

    def recorded(self, session: str) -> collections.Counter[str]:
        try:
            with Client(self.home.paths, autostart=False) as client:
                found = client.call("events.query", session=session)
        except NotFound:
            return collections.Counter()
        return collections.Counter(e["kind"] for e in found["events"] if e["kind"].startswith("hook."))

    def lost(self, session: str) -> int:
        """Wait (untimed) until every hook event of the turn is in the log; how many never came."""
        want = sum(EXPECTED.values())
        deadline = time.monotonic() + WAIT_S
        while True:
            have = self.recorded(session)
            got = sum(min(have[k], n) for k, n in EXPECTED.items())
            if got == want or time.monotonic() > deadline:
                return want - got
            time.sleep(0.05)


def options() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--variants", default=",".join(VARIANTS), help=f"some of {','.join(VARIANTS)}")
    parser.add_argument(
        "--model-latency", type=float, default=0.0, help="seconds the model waits before each reply (default 0)"
    )
    parser.add_argument("--claude", help="the Claude Code CLI (default: where the e2e tests install it)")
    parser.add_argument("--editable", action="store_true", help="hooks run this venv's toka (an editable install)")
    parser.add_argument("--json", action="store_true")
    return parser.parse_args()


def main() -> int:
    opts = options()
    variants = [v for v in opts.variants.split(",") if v]
    if unknown := set(variants) - set(VARIANTS):
        print(f"unknown variants: {', '.join(sorted(unknown))} (known: {', '.join(VARIANTS)})", file=sys.stderr)
        return 2
    if "true" not in variants:
        variants.insert(0, "true")
    if shutil.which("node") is None:
        print("skipped: the Claude Code CLI needs node, which is not on PATH", file=sys.stderr)
        return 0
    claude = claude_binary(opts.claude)
    if claude is None:
        print(
            "skipped: no Claude Code CLI (run tests/e2e once, or `npm install @anthropic-ai/claude-code`"
            " and pass --claude node_modules/.bin/claude)",
            file=sys.stderr,
        )
        return 0
    version = subprocess.run([str(claude), "--version"], capture_output=True, text=True).stdout.strip()
    work = Path(tempfile.mkdtemp(prefix="tkbc", dir="/tmp"))
    home = Home(work, "h")
    times: dict[str, list[float]] = {v: [] for v in variants}
    ratios: dict[str, list[float]] = {v: [] for v in variants}
    lost: dict[str, int] = dict.fromkeys(variants, 0)
    cpu: dict[str, list[float]] = {v: [] for v in variants}
    become_subreaper()
    try:
        _, toka = timed_toka(work, opts.editable)
        endpoint = BareEndpoint()
        with DaemonProcess(home) as daemon, FakeModel(opts.model_latency) as model:
            info = machine()
            bench = Bench(work, home, toka, claude, model, endpoint.url)
            for round_ in range(-1, opts.rounds):  # one warm-up round
                shift = max(round_, 0) % len(variants)
                order = variants[shift:] + variants[:shift]
                took: dict[str, float] = {}
                for variant in order:
                    reap_orphans()
                    before = children_cpu() + process_cpu(daemon.pid)
                    took[variant], session = bench.turn(variant)
                    if variant not in UNRECORDED:
                        missing = bench.lost(session)
                        if round_ >= 0:
                            lost[variant] += missing
                    else:
                        time.sleep(0.3)  # what the daemon may still do for it
                    time.sleep(0.2)  # the hooks that outlive Claude Code end (they took < 0.1 s)
                    reap_orphans()
                    if round_ >= 0:
                        cpu[variant].append(children_cpu() + process_cpu(daemon.pid) - before)
                    print(f"round {round_} {variant}: {took[variant]:.2f}s", file=sys.stderr)
                if round_ < 0:
                    continue
                for variant in variants:
                    times[variant].append(took[variant])
                    ratios[variant].append(took[variant] / took["true"])
        load_end = round(os.getloadavg()[0], 2)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    result: dict[str, Any] = {
        **described(info),
        "claude_code": version,
        "install": "editable (this venv)" if opts.editable else "regular (fresh venv)",
        "rounds": opts.rounds,
        "model_latency_s": opts.model_latency,
        "hooks_per_turn": sum(EXPECTED.values()),
    }
    reference = statistics.median(times["true"])
    for variant in variants:
        result[f"{variant}_p50_s"] = round(statistics.median(times[variant]), 3)
        result[f"{variant}_cpu_p50_s"] = round(statistics.median(cpu[variant]), 3)
        if variant != "true":
            result[f"{variant}_ratio"] = round(statistics.median(ratios[variant]), 3)
            result[f"{variant}_ratio_of_p50"] = round(statistics.median(times[variant]) / reference, 3)
            result[f"{variant}_lost"] = "not recorded" if variant in UNRECORDED else lost[variant]
    result["target"] = TARGET
    result["load"] = [info["load_at_start"], load_end]
    show(result, opts.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
