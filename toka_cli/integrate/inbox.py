"""The recording hooks' command: a few words of POSIX shell that drop the hook's payload into the
daemon's inbox (``hooks.inbox`` in the data dir, daemon/ingest/inbox.py) without starting Python.

A hook that only records need not reach the daemon: ``cat`` writes its payload (stdin) to a file
of its own in the inbox, named for the agent and the shell's pid, created with the shell's
``noclobber`` (``set -C``: the file must not exist yet). When it does exist (a pid used again
before the daemon took the file) or the inbox is missing, ``mktemp`` makes another name (after
making the inbox, 0700). Every file is made 0600 by the shell (``umask 077``).

A payload is one JSON object, and no part of a JSON object cut short is one, so the daemon takes
a file whole once it parses, and leaves it while it does not (``cat`` may still be writing it):
each payload is ingested whole or not at all without a rename, which would cost two more
processes (``mktemp`` and ``mv``) on every hook, about 10 ms that Claude Code waits for. The
daemon ingests the inbox as it does the spool: live while it runs, and at its next start what was
left while it was down. It builds the same event `toka hook` would have recorded (kind, session,
key, payload), so nothing is counted twice. The whole run is a shell and ``cat``: a few
milliseconds, against the 25 ms of a Python start.

The data dir is resolved in the shell as daemon/paths.py resolves it: ``$TOKA_HOME`` when the
agent's environment sets it, else the platform's data dir, which `toka integrate` writes into
the command (resolved when it runs).
"""

from __future__ import annotations

import re
import shlex

from daemon.paths import INBOX_NAME, platform_dirs

# The agents whose hooks drop payloads, as the file names say (daemon/ingest/inbox.py reads them).
AGENTS = ("claude-code", "codex")
# mktemp's template when the pid's name is taken: ten random letters and digits.
_RANDOM = "XXXXXXXXXX"


def inbox_command(agent: str, data_dir: str | None = None) -> str:
    """The shell command that drops a hook payload of ``agent`` into the inbox (``data_dir``: the
    data dir when TOKA_HOME is not set; the platform's by default)."""
    if agent not in AGENTS:
        raise ValueError(agent)
    default = shlex.quote(data_dir if data_dir is not None else platform_dirs()[0])
    return (
        f"d=${{TOKA_HOME:-{default}}}/{INBOX_NAME}; umask 077; set -C; "
        f'cat 2>/dev/null >"$d/{agent}.$$" || '
        f'{{ mkdir -p "$d"; cat >|"$(mktemp "$d/{agent}.{_RANDOM}")"; }}'
    )


def _pattern(agent: str) -> re.Pattern[str]:
    """Any toka's inbox command of ``agent``, whatever data dir it names."""
    sample = inbox_command(agent, "DATA")
    head, tail = sample.split(shlex.quote("DATA"), 1)
    return re.compile(re.escape(head) + r"(?P<data>'[^']*'|[^}\s]+)" + re.escape(tail))


_PATTERNS = {agent: _pattern(agent) for agent in AGENTS}


def is_inbox_command(command: object, agent: str) -> bool:
    """Whether ``command`` is toka's inbox command of ``agent`` (from this toka or another)."""
    return isinstance(command, str) and _PATTERNS[agent].fullmatch(command.strip()) is not None
