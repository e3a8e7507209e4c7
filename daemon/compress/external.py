"""Running an external summarizer: a command that reads text on stdin and writes a summary on stdout.

The command line is split with :func:`shlex.split` and run without a shell, in a process group of
its own so that a timeout kills it and whatever it started. Its output is accepted only when the
command exits 0 within the timeout and prints non-empty UTF-8 text no larger than its input;
anything else raises :class:`ExternalFailure` with the reason, and the caller falls back to the
built-in summarizer. Output is read as it comes and the command is killed as soon as it prints
more than its input, so a runaway command costs neither the timeout nor memory.
"""

from __future__ import annotations

import contextlib
import os
import re
import selectors
import shlex
import signal
import subprocess
import time

# How much of the command's stderr is kept to explain a failure.
STDERR_KEPT = 4096
_CHUNK = 65536
# Bytes that do not occur in text: NUL and the C0 controls other than tab, newline, carriage return.
_BINARY = re.compile(rb"[\x00-\x08\x0b\x0c\x0e-\x1f]")


class ExternalFailure(Exception):
    """The external summarizer gave no usable summary; ``reason`` says why, for the record."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _kill(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):  # it exited on its own meanwhile
        os.killpg(process.pid, signal.SIGKILL)  # its own group: start_new_session below
    process.wait()


def _stderr_line(stderr: bytes) -> str:
    lines = stderr.decode("utf-8", "replace").strip().splitlines()
    return f": {lines[-1][:200]}" if lines else ""


def run_external(command: str, text: str, timeout_s: float) -> str:
    """The summary ``command`` prints for ``text``, or :class:`ExternalFailure`."""
    try:
        argv = shlex.split(command)
    except ValueError as error:
        raise ExternalFailure(f"the command line does not parse: {error}") from None
    if not argv:
        raise ExternalFailure("the command line is empty")
    data = text.encode("utf-8")
    try:
        process = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as error:
        raise ExternalFailure(f"could not start {argv[0]}: {error.strerror or error}") from None
    assert process.stdin is not None and process.stdout is not None and process.stderr is not None
    deadline = time.monotonic() + timeout_s
    stdout = bytearray()
    stderr = bytearray()
    written = 0
    try:
        with selectors.DefaultSelector() as selector:
            if data:
                os.set_blocking(process.stdin.fileno(), False)
                selector.register(process.stdin, selectors.EVENT_WRITE)
            else:
                process.stdin.close()
            selector.register(process.stdout, selectors.EVENT_READ)
            selector.register(process.stderr, selectors.EVENT_READ)
            while selector.get_map():
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise ExternalFailure(f"timed out after {timeout_s:g} s")
                for key, _ in selector.select(remaining):
                    if key.fileobj is process.stdin:
                        try:
                            written += os.write(key.fd, data[written : written + _CHUNK])
                        except BlockingIOError:
                            continue
                        except BrokenPipeError:
                            written = len(data)  # it stopped reading; its output decides
                        if written >= len(data):
                            selector.unregister(process.stdin)
                            process.stdin.close()
                        continue
                    chunk = os.read(key.fd, _CHUNK)
                    if not chunk:
                        selector.unregister(key.fileobj)
                    elif key.fileobj is process.stdout:
                        stdout += chunk
                        if len(stdout) > len(data):
                            raise ExternalFailure(f"its output is larger than its input ({len(data)} bytes)")
                    else:
                        stderr = (stderr + chunk)[-STDERR_KEPT:]
        try:
            status = process.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            raise ExternalFailure(f"timed out after {timeout_s:g} s") from None
    except ExternalFailure:
        _kill(process)
        raise
    finally:
        for stream in (process.stdin, process.stdout, process.stderr):
            stream.close()
    if status < 0:
        raise ExternalFailure(f"killed by signal {-status}{_stderr_line(bytes(stderr))}")
    if status != 0:
        raise ExternalFailure(f"exited with status {status}{_stderr_line(bytes(stderr))}")
    try:
        summary = stdout.decode("utf-8")
    except UnicodeDecodeError:
        raise ExternalFailure("its output is not UTF-8 text") from None
    if _BINARY.search(stdout):
        raise ExternalFailure("its output is not text (it holds control characters)")
    if not summary.strip():
        raise ExternalFailure("it printed nothing")
    return summary.strip()
