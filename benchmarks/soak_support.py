"""What the soak scripts share: run one test of the suite at length, and read its figures."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def run_soak(test: str, env: dict[str, str], report_variable: str) -> dict[str, Any]:
    """Run ``test`` (a pytest node id) with ``env`` added; the test writes its figures as JSON to
    the file named by ``report_variable``. The figures, with the seconds it took; exits with a
    message when the test fails."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "soak.json"
        started = time.monotonic()
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", test]
        result = subprocess.run(command, cwd=ROOT, env=os.environ | env | {report_variable: str(report)})
        elapsed = time.monotonic() - started
        if result.returncode != 0:
            raise SystemExit(f"the soak failed after {elapsed:.0f} s: see the test output above")
        figures: dict[str, Any] = json.loads(report.read_text())
    return figures | {"seconds": round(elapsed, 1)}
