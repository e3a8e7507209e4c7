"""The man page, man/toka.1, generated from the command tree and the settings."""

from __future__ import annotations

import re

from command_docs import HEADER, PROG, CommandDoc, ParamDoc, one_line

from daemon.sections import SECTIONS
from daemon.version import VERSION

EXIT_STATUS = (
    ("0", "Success."),
    ("1", "Failure: the command ran and found a problem (a failed check, an unhealthy pool, ...)."),
    (
        "2",
        "Usage or configuration error: a bad flag or argument, a config.toml that does not parse or holds a key"
        " or value toka does not accept, a file or directory of toka's that is not yours alone.",
    ),
    ("3", "Not found: no session, event, agent, handoff or key of that name."),
    ("4", "Daemon unavailable: it could not be reached or started; or its PostgreSQL database cannot be reached."),
    ("5", "Integrity failure: a digest, event id or chain link does not match (toka verify)."),
    ("6", "Conflict: the current state does not allow it (a refused transition, a stale --expect-version)."),
)

FILES = (
    ("toka.db", "data", "The event log: a SQLite database in WAL mode (with toka.db-wal and toka.db-shm)."),
    ("config.toml", "config", "Settings, grouped in tables; see ENVIRONMENT and toka config show."),
    ("logs/daemon.log", "data", "The log of a daemon started in the background."),
    ("hooks.spool.jsonl", "data", "Hook payloads recorded while the daemon was down; replayed when it starts."),
    ("watch/", "data", "How far the daemon (watch/daemon) and toka watch (watch/cli) read each watched file."),
    ("handoffs/", "data", "Handoff documents as markdown, when handoff.save_markdown is on."),
    ("run/toka.sock", "runtime", "The daemon's Unix socket, mode 0600 in a 0700 directory."),
    ("run/toka.pid", "runtime", "The daemon's pidfile, locked while it runs."),
)


def _roff(text: str) -> str:
    """Text for a roff line: backslashes escaped, hyphens of options unbreakable, no control
    character at the start."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    return "\\&" + text if text[:1] in (".", "'") else text


def _paragraphs(text: str) -> list[str]:
    lines: list[str] = []
    for paragraph in re.split(r"\n\s*\n", text.strip()):
        if lines:
            lines.append(".PP")
        if paragraph.startswith("\b"):  # Click's mark of a paragraph kept as it is written
            lines += [".nf", *(_roff(line.rstrip()) for line in paragraph.splitlines()[1:]), ".fi"]
        else:
            lines.append(_roff(one_line(paragraph)))
    return lines


def _bold(text: str) -> str:
    return f"\\fB{_roff(text)}\\fR"


def _option_label(option: ParamDoc) -> str:
    names = ", ".join(_bold(name) for name in option.names)
    return f"{names} \\fI{_roff(option.metavar)}\\fR" if option.metavar else names


def man_page(tree: list[CommandDoc]) -> str:
    root = tree[0]
    lines = [
        f'.\\" {HEADER}',
        f'.TH TOKA 1 "" "toka {VERSION}" "User Commands"',
        ".SH NAME",
        f"toka \\- {_roff(one_line(root.short_help).rstrip('.'))}",
        ".SH SYNOPSIS",
        f".B {PROG}",
        "\\fICOMMAND\\fR [\\fIOPTIONS\\fR] [\\fIARGUMENTS\\fR]",
        ".br",
        f".B {PROG}",
        "\\fICOMMAND\\fR \\fB\\-\\-help\\fR",
        ".SH DESCRIPTION",
        *_paragraphs(root.help.split("\n\nExit codes:")[0]),
        ".PP",
        "Every command that prints data takes \\fB\\-\\-json\\fR: one JSON document, or JSON lines for"
        " streams. Data goes to standard output, diagnostics to standard error. Errors are one line,"
        " \\fBerror:\\fR ..., then \\fBhint:\\fR ... where there is one.",
        ".SH COMMANDS",
    ]
    for command in tree[1:]:
        lines += [".SS " + _roff(f"{command.name} {command.usage}".strip())]
        lines += _paragraphs(command.help or command.short_help)
        if command.subcommands:
            lines += [".PP", "Commands: " + ", ".join(_bold(name) for name in command.subcommands) + "."]
        for argument in command.arguments:
            lines += [".TP", f"\\fI{_roff(argument.metavar)}\\fR"]
            lines.append(_roff(one_line(argument.help)) if argument.help else "An argument.")
        for option in command.options:
            if option.names[0] in ("--help", "-h"):
                continue
            lines += [".TP", _option_label(option), _roff(one_line(option.help)) if option.help else "An option."]
    lines += [".SH EXIT STATUS"]
    for code, meaning in EXIT_STATUS:
        lines += [".TP", f"\\fB{code}\\fR", _roff(meaning)]
    lines += [
        ".SH FILES",
        "With \\fBTOKA_HOME\\fR set, every file below is in that one folder, and the runtime files"
        " in its \\fIrun\\fR subfolder. Without it, data files are in the user data dir"
        " (\\fI$XDG_DATA_HOME/toka\\fR, by default \\fI\\(ti/.local/share/toka\\fR, on Linux),"
        " config.toml in the user config dir (\\fI$XDG_CONFIG_HOME/toka\\fR, by default"
        " \\fI\\(ti/.config/toka\\fR) and the runtime files in the user runtime dir"
        " (\\fI$XDG_RUNTIME_DIR/toka\\fR, or \\fIrun\\fR in the data dir when there is none);"
        " \\fBtoka config path\\fR prints them.",
        ".PP",
        "They are yours alone: directories 0700 and files 0600 (tightened when looser). A directory or file that"
        " another user owns or every user may write, a directory above them that another user owns or every user"
        " may write without the sticky bit, a symbolic link where toka keeps a file of its own, and a socket served"
        " by another user's process are refused (exit status 2); config.toml may be a link, and root's.",
    ]
    for name, place, meaning in FILES:
        shown = name.removeprefix("run/") if place == "runtime" else name
        lines += [".TP", f"\\fI{_roff(shown)}\\fR ({place} dir)", _roff(meaning)]
    lines += [
        ".SH ENVIRONMENT",
        ".TP",
        "\\fBTOKA_HOME\\fR",
        "Keep the data, config and runtime files together in this folder.",
        ".TP",
        "\\fBTOKA_DEBUG\\fR",
        "Set to 1 to show the traceback of an error instead of one line.",
        ".TP",
        "\\fBNO_COLOR\\fR",
        "Set (and not empty) to print no colours or styles.",
        ".PP",
        "Each setting may be given as an environment variable, which overrides config.toml and is"
        " overridden by a command-line flag. Lists are separated by colons.",
    ]
    defaults = SECTIONS.defaults()
    for name in SECTIONS.by_name:
        default = defaults.value(name)
        shown = ", ".join(default) if isinstance(default, tuple) else default
        shown = str(shown).lower() if isinstance(shown, bool) else shown
        lines += [
            ".TP",
            f"\\fB{_roff(SECTIONS.env_name(name))}\\fR",
            _roff(
                f"{SECTIONS.key_of(name)}: {one_line(SECTIONS.by_name[name].metadata['help'])}."
                f" Default: {shown or 'none'}."
                f" Allowed: {SECTIONS.allowed(name)}."
            ),
        ]
    lines += [
        ".SH SEE ALSO",
        "\\fBsqlite3\\fR(1), \\fBsystemctl\\fR(1), \\fBjq\\fR(1).",
        "The README and docs/ of toka's source, in particular docs/json.md (JSON shapes) and"
        " docs/protocol.md (the daemon's protocol).",
        "",
    ]
    return "\n".join(lines)
