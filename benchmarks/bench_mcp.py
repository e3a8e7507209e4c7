"""MCP benchmark: how soon `toka mcp` answers, and what a tool call adds to the daemon op it wraps.

1. Ready. An agent starts its MCP servers when it starts, and waits for each to answer
   ``initialize``. Both sides are fresh processes fed the same ``initialize`` line on stdin, timed
   from spawn to the answer's line on stdout:
   - toka: the `toka mcp` console script;
   - reference: ``python -c`` building a bare SDK server (``MCPServer``) and registering the same
     tools and resources (toka's own functions, from toka_cli/mcp/), then serving stdio. So the
     ratio is what `toka mcp` adds over the SDK and the tools themselves: the entry point, the
     Typer app, toka's settings. Target: at most 1.5x.
2. Per call. One SDK client session (the SDK's stdio client, as agents drive it) calls
   ``memory_get`` and ``search``; the daemon op each wraps (``memory.get``, ``search``) is called
   with the same arguments by toka's async client in this process. The overhead is the
   difference of the medians (p50), with both p50s shown.

Both sides alternate, after warm-ups, in this venv (an editable install costs both sides alike).
Run from the project root:

    .venv/bin/python benchmarks/bench_mcp.py [--runs 20] [--calls 300] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import select
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_foundation import DaemonProcess, Home, described, machine, percentile, show

from daemon.client.aio import AsyncClient
from toka_cli.doctor_integrations import INITIALIZE

TOKA = Path(sys.executable).parent / "toka"
TARGET = 1.5
REFERENCE = """\
import anyio
from mcp.server.mcpserver import MCPServer
from toka_cli.mcp import resources, tools
from toka_cli.mcp.link import Link

server = MCPServer("bare", log_level="WARNING")
link = Link()
tools.register(server, link)
resources.register(server, link)
anyio.run(server.run_stdio_async)
"""


def ready_once(command: list[str], env: dict[str, str]) -> float:
    """Seconds from spawn to the answer to ``initialize``."""
    start = time.perf_counter()
    server = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert server.stdin is not None and server.stdout is not None
    server.stdin.write(json.dumps(INITIALIZE).encode() + b"\n")
    server.stdin.flush()
    buffered = b""
    while b"\n" not in buffered:
        if not select.select([server.stdout], [], [], 60)[0]:
            server.kill()
            raise RuntimeError(f"{command[:2]} did not answer initialize")
        chunk = os.read(server.stdout.fileno(), 65536)
        if not chunk:
            raise RuntimeError(f"{command[:2]} exited: {server.stderr.read() if server.stderr else b''!r}")
        buffered += chunk
    elapsed = time.perf_counter() - start
    if "result" not in json.loads(buffered.split(b"\n", 1)[0]):
        raise RuntimeError(f"{command[:2]} refused initialize: {buffered[:200]!r}")
    server.stdin.close()
    server.wait(30)
    return elapsed


def bench_ready(env: dict[str, str], runs: int) -> dict[str, Any]:
    toka_times: list[float] = []
    reference_times: list[float] = []
    for run in range(-3, runs):  # three warm-up rounds
        pair = [
            ("toka", [str(TOKA), "mcp"]),
            ("reference", [sys.executable, "-c", REFERENCE]),
        ]
        if run % 2:
            pair.reverse()
        for name, command in pair:
            elapsed = ready_once(command, env)
            if run >= 0:
                (toka_times if name == "toka" else reference_times).append(elapsed)
    toka_ms = statistics.median(toka_times) * 1000
    reference_ms = statistics.median(reference_times) * 1000
    return {
        "toka_ms": round(toka_ms, 1),
        "reference_ms": round(reference_ms, 1),
        "ratio": round(toka_ms / reference_ms, 2),
        "target": TARGET,
        "pass": toka_ms / reference_ms <= TARGET,
    }


async def bench_calls(home: Home, env: dict[str, str], calls: int) -> dict[str, Any]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    client = AsyncClient(home.paths, autostart=False)
    await client.connect()
    await client.call("memory.set", scope="global", key="bench", value={"answer": 42})
    # tool: ((the op it wraps, the op's arguments), the tool's arguments)
    cases: dict[str, tuple[tuple[str, dict[str, Any]], dict[str, Any]]] = {
        "memory_get": (("memory.get", {"scope": "global", "key": "bench"}), {"scope": "global", "key": "bench"}),
        "search": (("search", {"query": "bench", "limit": 20}), {"query": "bench", "limit": 20}),
    }
    parameters = StdioServerParameters(command=str(TOKA), args=["mcp"], env=env)
    found: dict[str, Any] = {}
    with open(os.devnull, "w") as errlog:
        async with stdio_client(parameters, errlog=errlog) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            for tool, ((op, op_args), tool_args) in cases.items():
                via_tool, via_op = [], []
                for n in range(-20, calls):  # warm-ups first
                    start = time.perf_counter()
                    result = await session.call_tool(tool, tool_args)
                    tool_s = time.perf_counter() - start
                    if result.is_error:
                        raise RuntimeError(f"{tool} failed: {result.content}")
                    start = time.perf_counter()
                    await client.call(op, **op_args)
                    op_s = time.perf_counter() - start
                    if n >= 0:
                        via_tool.append(tool_s)
                        via_op.append(op_s)
                tool_p50, op_p50 = percentile(via_tool, 50) * 1e3, percentile(via_op, 50) * 1e3
                found[tool] = {
                    "tool_p50_ms": round(tool_p50, 3),
                    "tool_p99_ms": round(percentile(via_tool, 99) * 1e3, 3),
                    "op_p50_ms": round(op_p50, 3),
                    "overhead_p50_ms": round(tool_p50 - op_p50, 3),
                }
    await client.close()
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--json", action="store_true")
    options = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="tkbm", dir="/tmp"))
    home = Home(work, "h")
    env = {**os.environ, "TOKA_HOME": str(home.root)}
    try:
        with DaemonProcess(home):
            info = machine()
            ready = bench_ready(env, options.runs)
            calls = asyncio.run(bench_calls(home, env, options.calls))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    result = {
        **described(info),
        "runs": options.runs,
        "calls": options.calls,
        "ready": ready,
        "calls_p50": calls,
        "load": [info["load_at_start"], round(os.getloadavg()[0], 2)],
    }
    show(result, options.json)


if __name__ == "__main__":
    main()
