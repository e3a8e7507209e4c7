"""Hook benchmark: `toka hook claude-code` against the least a hook can do, both as fresh processes.

A Claude Code hook is a fresh process on every tool call, so what matters is the wall time of
the whole process. The reference is a minimal standard-library client in ``python -c``: it
connects to the daemon's socket, sends one ``events.append`` line carrying the same event the
hook would send, and reads the answer. `toka hook claude-code` (the console script) reads the
same payload on stdin. Each run uses a payload of its own (a distinct ``tool_use_id``), so both
create one new event per run and neither is answered from the key.

Both run in a fresh venv holding toka as a regular (non-editable) install gives it: the packages
in site-packages, byte-compiled, and the console script pip writes (copied there as installing
the wheel would, so no network and no build are needed). That is what a user's hook runs. The
project's own venv is an editable install, whose import finder costs every Python process in it
9 to 16 ms at start-up (both sides alike) and loads ``pathlib`` and ``re`` before the hook asks
for them; ``--editable`` measures there instead. The hook path imports none of toka's
dependencies (tests/hooks/test_hook_imports.py), so the venv needs none of them.

The two alternate, after warm-ups; the figure is the median of ``--runs`` each. Target: the
hook within 1.5x of the reference. Run from the project root:

    .venv/bin/python benchmarks/bench_hook.py [--runs 30] [--editable] [--json]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_foundation import DaemonProcess, Home, described, machine, show

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT.parent / "shared" / "fixtures" / "transcripts" / "hooks"
PACKAGES = ("store", "daemon", "toka_cli")
TARGET = 1.5

REFERENCE = """\
import socket, sys
sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
sock.connect(sys.argv[1])
sock.sendall(sys.stdin.buffer.read())
answer = b""
while not answer.endswith(b"\\n"):
    answer += sock.recv(65536)
"""


def typical_payload() -> dict[str, Any]:
    """The median-sized PostToolUse payload of the shared fixtures (or a small stand-in)."""
    path = FIXTURE / "CoorpAcademy__logs__4f65f198-0c0c-47a2-b6ab-5f2e30ae5cbe__post_tool_use.json"
    if not path.exists():
        return {"session_id": "bench", "hook_event_name": "PostToolUse", "tool_name": "Read", "tool_input": {}}
    payloads: list[dict[str, Any]] = json.loads(path.read_text())
    return sorted(payloads, key=lambda p: len(json.dumps(p)))[len(payloads) // 2]


def regular_install(venv: Path) -> tuple[Path, Path]:
    """A venv with toka as a wheel installs it; its (python, toka console script)."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = Path(sysconfig.get_path("purelib", vars={"base": str(venv)}))
    for package in PACKAGES:
        shutil.copytree(ROOT / package, site / package, ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run([str(python), "-m", "compileall", "-q", str(site)], check=True)
    # What pip writes for `toka = "toka_cli.entry:main"` (see the project's own .venv/bin/toka).
    script = venv / "bin" / "toka"
    script.write_text(
        f"#!{python}\n"
        "# -*- coding: utf-8 -*-\n"
        "import re\n"
        "import sys\n"
        "from toka_cli.entry import main\n"
        "if __name__ == '__main__':\n"
        "    sys.argv[0] = re.sub(r'(-script\\.pyw|\\.exe)?$', '', sys.argv[0])\n"
        "    sys.exit(main())\n"
    )
    script.chmod(0o755)
    return python, script


def process_options(doc: str | None) -> argparse.Namespace:
    """The options of a benchmark of whole toka processes: --runs, --editable, --json."""
    parser = argparse.ArgumentParser(description=(doc or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--editable", action="store_true", help="measure in this venv (an editable install)")
    parser.add_argument("--json", action="store_true")
    return parser.parse_args()


def timed_toka(work: Path, editable: bool) -> tuple[Path, Path]:
    """The (python, toka) to time: this venv's with ``editable``, else a regular install's in ``work``."""
    if editable:
        return Path(sys.executable), Path(sys.executable).parent / "toka"
    return regular_install(work / "venv")


def timed(command: list[str], stdin: bytes, env: dict[str, str]) -> float:
    start = time.perf_counter()
    result = subprocess.run(command, input=stdin, capture_output=True, env=env, timeout=60)
    elapsed = time.perf_counter() - start
    if result.returncode != 0 or result.stdout or result.stderr:
        raise RuntimeError(f"{command[:3]} failed: {result.returncode} {result.stdout!r} {result.stderr!r}")
    return elapsed


def main() -> None:
    options = process_options(__doc__)

    work = Path(tempfile.mkdtemp(prefix="tkbh", dir="/tmp"))
    home = Home(work, "h")
    env = {**os.environ, "TOKA_HOME": str(home.root)}
    try:
        python, toka = timed_toka(work, options.editable)
        with DaemonProcess(home):
            info = machine()
            base = typical_payload()
            hook_times: list[float] = []
            reference_times: list[float] = []
            for run in range(-3, options.runs):  # three warm-up rounds
                payload = {**base, "tool_use_id": f"bench-{run}"}
                raw = json.dumps(payload).encode()
                event = {
                    "session": payload["session_id"],
                    "kind": "hook.post_tool_use",
                    "agent": "main",
                    "ts": time.time(),
                    "key": "ref:" + hashlib.sha256(raw).hexdigest(),
                    "payload": payload,
                }
                line = json.dumps({"id": 1, "op": "events.append", "args": {"events": [event]}}).encode() + b"\n"
                hook = timed([str(toka), "hook", "claude-code"], raw, env)
                reference = timed([str(python), "-c", REFERENCE, str(home.paths.socket)], line, env)
                if run >= 0:
                    hook_times.append(hook)
                    reference_times.append(reference)
            if home.paths.spool.exists():
                raise RuntimeError("the hook spooled: the daemon did not answer")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    hook_ms = statistics.median(hook_times) * 1000
    reference_ms = statistics.median(reference_times) * 1000
    result = {
        **described(info),
        "install": "editable (this venv)" if options.editable else "regular (fresh venv)",
        "payload_bytes": len(json.dumps(base)),
        "runs": options.runs,
        "hook_ms": round(hook_ms, 1),
        "reference_ms": round(reference_ms, 1),
        "ratio": round(hook_ms / reference_ms, 2),
        "target": TARGET,
        "pass": hook_ms / reference_ms <= TARGET,
        "load": [info["load_at_start"], round(os.getloadavg()[0], 2)],
    }
    show(result, options.json)


if __name__ == "__main__":
    main()
