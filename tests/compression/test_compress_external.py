"""External summarizers: a good one is used; one that hangs, crashes, prints nothing, prints bytes
that are not text or prints more than it was given is replaced by the built-in summarizer, and
the reason is recorded. What the command reads has gone through the caller's masking first."""

from __future__ import annotations

import shlex
import sys
import time
from pathlib import Path

import pytest
from compress_support import estimate, working_session

from daemon.compress.engine import compress
from daemon.compress.external import ExternalFailure, run_external
from daemon.compress.model import Compression

MARKER = "SECRET-4242"
MASK = "[masked]"


def masking(text: str) -> str:
    return text.replace(MARKER, MASK)


def python(code: str) -> str:
    """A command line running ``code`` with this interpreter."""
    return shlex.join([sys.executable, "-c", code])


def compressed(summarizer: str | None, policy: str = "summarize", timeout_s: float = 10.0) -> Compression:
    events = working_session(secret=MARKER)
    target = sum(estimate(e) for e in events) * 3 // 8
    return compress(
        events,
        policy=policy,
        target_tokens=target,
        tokens=estimate,
        redact=masking,
        summarizer=summarizer,
        timeout_s=timeout_s,
    )


@pytest.mark.parametrize("policy", ["summarize", "importance"])
def test_a_working_external_summarizer_is_used(policy: str, tmp_path: Path) -> None:
    received = tmp_path / "stdin.txt"
    command = python(
        f"import sys; text = sys.stdin.read(); open({str(received)!r}, 'w').write(text); print(text[:200])"
    )

    result = compressed(command, policy)

    assert result.summarizer is not None
    assert result.summarizer.to_json() == {"kind": "external", "command": command, "fallback": None, "clipped": False}
    text = received.read_text()
    assert result.summary == text[:200].strip()
    assert result.events_in_range > 0 and result.tokens_after <= result.target_tokens
    # The command read the range as a transcript, masked.
    assert "Fix the login timeout" in text and MASK in text and MARKER not in text
    assert MARKER not in result.summary


FAILURES = {
    "hangs": (python("import time; time.sleep(120)"), "timed out after 0.5 s"),
    "crashes": (python("import sys; sys.stdin.read(); sys.exit(3)"), "exited with status 3"),
    "crashes-with-stderr": (python("import sys; sys.exit('model not found')"), "exited with status 1: model not found"),
    "prints-nothing": (python("import sys; sys.stdin.read()"), "it printed nothing"),
    "prints-blank-lines": (python("print(); print('   ')"), "it printed nothing"),
    "prints-non-utf8": (python(r"import sys; sys.stdout.buffer.write(b'\xff\xfe\xfa summary')"), "not UTF-8"),
    "prints-nul-bytes": (python(r"import sys; sys.stdout.buffer.write(b'sum\x00mary')"), "not text"),
    "prints-more-than-its-input": (python("import sys; print(sys.stdin.read() * 3)"), "larger than its input"),
    "is-not-installed": ("/nonexistent/bin/summarize --fast", "could not start /nonexistent/bin/summarize"),
    "does-not-parse": ("summarize 'unclosed", "does not parse"),
}


@pytest.mark.parametrize("failure", list(FAILURES))
def test_a_failing_external_summarizer_falls_back_to_the_extractive_one(failure: str) -> None:
    command, reason = FAILURES[failure]
    # Only the hanging command meets its timeout: the others, on a loaded machine, may take more
    # than half a second to start and must still fail for their own reason.
    timeout_s = 0.5 if failure == "hangs" else 60.0
    began = time.monotonic()

    result = compressed(command, timeout_s=timeout_s)

    assert time.monotonic() - began < 60  # not the 120 s the hanging command would take
    assert result.summarizer is not None
    assert result.summarizer.kind == "extractive"
    assert result.summarizer.command == command
    assert result.summarizer.fallback is not None and reason in result.summarizer.fallback
    assert result.to_json()["summarizer"]["fallback"] == {"reason": result.summarizer.fallback}
    # The fallback's summary is the built-in one, as if no command had been configured.
    assert result.summary == compressed(None).summary
    assert result.summary.startswith("Summary of ") and MARKER not in result.summary


def test_a_timeout_kills_what_the_command_started(tmp_path: Path) -> None:
    # The child starts a grandchild that would keep the output pipe open for 120 s.
    command = python(
        "import subprocess, sys, time; "
        "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)']); time.sleep(120)"
    )
    began = time.monotonic()
    with pytest.raises(ExternalFailure, match="timed out after 0.5 s"):
        run_external(command, "some text to summarize", 0.5)
    assert time.monotonic() - began < 60  # not the grandchild's 120 s


def test_a_command_that_does_not_read_its_input_is_judged_by_its_output() -> None:
    # More input than a pipe holds, and a command that never reads it.
    text = "a long transcript line\n" * 20_000
    assert run_external(python("print('short summary')"), text, 10) == "short summary"


def test_an_external_summary_longer_than_the_budget_is_cut_to_it() -> None:
    # Under its input's size, so accepted, but far over a quarter of the target.
    result = compressed(python("import sys; print(sys.stdin.read()[:-10])"))

    assert result.summarizer is not None and result.summarizer.kind == "external"
    assert result.summarizer.clipped is True
    assert result.summary_tokens <= result.target_tokens // 4
    assert result.tokens_after <= result.target_tokens
