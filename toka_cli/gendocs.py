"""Shell completions and the man page, generated from the Typer app.

``python -m toka_cli.gendocs`` rewrites ``completions/toka.bash``, ``completions/_toka`` (zsh),
``completions/toka.fish`` and ``man/toka.1`` from the commands as they are registered in
:mod:`toka_cli.main`; tests/cli/test_gendocs.py fails when the committed files differ from what
it would write. The completion scripts are static: every command, subcommand and option is
written into them, so pressing Tab never starts Python (a `toka` start-up costs about 150 ms). They keep the
command path in ``$at``: zsh ties ``$path`` to ``$PATH``.
"""

from __future__ import annotations

import inspect
import re
import sys
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import typer
import typer.main

from daemon.config import SETTINGS, Settings, env_name, key_of
from daemon.version import VERSION

PROG = "toka"
ROOT = Path(__file__).resolve().parent.parent
HEADER = "generated from the toka command by `python -m toka_cli.gendocs`; do not edit"


@dataclass(frozen=True)
class ParamDoc:
    """One option or argument of a command, as completion and the man page need it."""

    kind: str  # "option" or "argument"
    names: tuple[str, ...]  # "--limit", "-n" (options); the metavar (arguments)
    metavar: str  # what the value is called in usage lines; "" for flags
    takes_value: bool
    choices: tuple[str, ...]
    is_path: bool
    help: str
    required: bool
    repeated: bool  # an argument that takes any number of values, an option given many times


@dataclass(frozen=True)
class CommandDoc:
    """One command or group: ``path`` is its words after `toka` (empty for `toka` itself)."""

    path: tuple[str, ...]
    usage: str  # "[OPTIONS] SESSION", as in --help
    help: str
    short_help: str
    params: tuple[ParamDoc, ...]
    subcommands: tuple[str, ...]

    @property
    def name(self) -> str:
        return " ".join((PROG, *self.path))

    @property
    def options(self) -> tuple[ParamDoc, ...]:
        return tuple(p for p in self.params if p.kind == "option")

    @property
    def arguments(self) -> tuple[ParamDoc, ...]:
        return tuple(p for p in self.params if p.kind == "argument")


def _help_text(text: str | None) -> str:
    # Click's convention: a form feed ends what help shows of a docstring.
    return inspect.cleandoc((text or "").split("\f", 1)[0]).strip()


def _value_name(param: Any, descriptor: Any) -> str:
    """What a value is called in usage lines: ``SESSION``, ``PATH``, ``N``."""
    if param.metavar:
        return str(param.metavar)
    if descriptor is not None and (descriptor.is_path or descriptor.is_file):
        return "PATH"
    annotation = repr(getattr(descriptor, "annotation", ""))
    if param.param_type_name == "option" and re.search(r"\bint\b", annotation):
        return "N"
    longest = max([*param.opts, param.name], key=len) if param.param_type_name == "option" else param.name
    return str(longest).lstrip("-").replace("-", "_").upper()


def _param(param: Any) -> ParamDoc | None:
    if getattr(param, "hidden", False):
        return None
    descriptor = getattr(param, "type_descriptor", None)
    choices = tuple(str(c) for c in (descriptor.choices or ())) if descriptor is not None else ()
    is_path = bool(descriptor is not None and (descriptor.is_path or descriptor.is_file))
    help = _help_text(param.help)
    if param.param_type_name == "argument":
        name = _value_name(param, descriptor)
        return ParamDoc("argument", (name,), name, True, choices, is_path, help, param.required, param.nargs == -1)
    takes_value = not (param.is_flag or param.count)
    metavar = _value_name(param, descriptor) if takes_value else ""
    names = tuple(sorted(param.opts, key=lambda n: n.startswith("--"))) + tuple(param.secondary_opts)
    return ParamDoc("option", names, metavar, takes_value, choices, is_path, help, param.required, param.multiple)


def _usage(params: tuple[ParamDoc, ...], is_group: bool) -> str:
    pieces = ["[OPTIONS]"]
    for argument in (p for p in params if p.kind == "argument"):
        word = argument.metavar + ("..." if argument.repeated else "")
        pieces.append(word if argument.required else f"[{word}]")
    if is_group:
        pieces.append("COMMAND [ARGS]...")
    return " ".join(pieces)


def command_tree(app: typer.Typer) -> list[CommandDoc]:
    """Every visible command of ``app``, `toka` itself first, each group before its commands."""
    root = typer.main.get_command(app)
    found: list[CommandDoc] = []

    def walk(command: Any, path: tuple[str, ...], parent: Any) -> None:
        name = path[-1] if path else PROG
        ctx = command.context_class(command, info_name=name, parent=parent, **command.context_settings)
        params = tuple(p for p in (_param(param) for param in command.get_params(ctx)) if p is not None)
        children = getattr(command, "commands", {})
        visible = tuple(name for name in sorted(children) if not getattr(children[name], "hidden", False))
        usage = _usage(params, bool(visible))
        short = command.get_short_help_str(limit=80) if path else _help_text(command.help).splitlines()[0]
        found.append(CommandDoc(path, usage, _help_text(command.help), short, params, visible))
        for name in visible:
            walk(children[name], (*path, name), ctx)

    walk(root, (), None)
    return found


# Shell completion ---------------------------------------------------------------------------


def _sh(text: str) -> str:
    """``text`` as one single-quoted word for bash, zsh and fish."""
    return "'" + text.replace("'", "'\\''") + "'"


def _fish(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _value_options(tree: list[CommandDoc]) -> list[tuple[str, str, ParamDoc]]:
    """(command path, option name, option) for every option that takes a value."""
    return [
        (" ".join(c.path), name, option)
        for c in tree
        for option in c.options
        if option.takes_value
        for name in option.names
    ]


def bash_completion(tree: list[CommandDoc]) -> str:
    lines = [f"# bash completion for {PROG}; {HEADER}.", "", "_toka_commands() {", '    case "$1" in']
    for command in tree:
        if command.subcommands:
            lines.append(f"        {_sh(' '.join(command.path))}) echo {_sh(' '.join(command.subcommands))} ;;")
    lines += ["    esac", "}", "", "_toka_options() {", '    case "$1" in']
    for command in tree:
        names = " ".join(name for option in command.options for name in option.names)
        lines.append(f"        {_sh(' '.join(command.path))}) echo {_sh(names)} ;;")
    lines += [
        "    esac",
        "}",
        "",
        "# Succeeds when option $2 of command $1 takes a value; prints its choices, or @files.",
        "_toka_value() {",
        '    case "$1|$2" in',
    ]
    for path, name, option in _value_options(tree):
        values = " ".join(option.choices) if option.choices else ("@files" if option.is_path else "")
        lines.append(f"        {_sh(f'{path}|{name}')}) echo {_sh(values)} ;;")
    lines += [
        "        *) return 1 ;;",
        "    esac",
        "}",
        "",
        "_toka() {",
        '    local cur=${COMP_WORDS[COMP_CWORD]} prev="" at="" word i',
        "    for ((i = 1; i < COMP_CWORD; i++)); do",
        "        word=${COMP_WORDS[i]}",
        "        if [[ $word == -*=* ]]; then",
        "            continue",
        "        elif [[ $word == -* ]]; then",
        '            if _toka_value "$at" "$word" >/dev/null; then',
        "                ((i++))",
        '                [[ ${COMP_WORDS[i]} == "=" ]] && ((i++))  # --opt=value split at COMP_WORDBREAKS',
        "            fi",
        '        elif [[ " $(_toka_commands "$at") " == *" $word "* ]]; then',
        "            at=${at:+$at }$word",
        "        fi",
        "    done",
        "    ((COMP_CWORD > 1)) && prev=${COMP_WORDS[COMP_CWORD - 1]}",
        '    [[ $prev == "=" && COMP_CWORD -gt 2 ]] && prev=${COMP_WORDS[COMP_CWORD - 2]}',
        '    [[ $cur == "=" ]] && cur=""',
        "    local values",
        '    if [[ $prev == -* ]] && values=$(_toka_value "$at" "$prev"); then',
        '        if [[ $values == "@files" ]]; then',
        '            COMPREPLY=($(compgen -f -- "$cur"))',
        "        else",
        '            COMPREPLY=($(compgen -W "$values" -- "$cur"))',
        "        fi",
        "        return",
        "    fi",
        "    if [[ $cur == -* ]]; then",
        '        COMPREPLY=($(compgen -W "$(_toka_options "$at")" -- "$cur"))',
        "        return",
        "    fi",
        "    local commands",
        '    commands=$(_toka_commands "$at")',
        "    if [[ -n $commands ]]; then",
        '        COMPREPLY=($(compgen -W "$commands" -- "$cur"))',
        "    else",
        '        COMPREPLY=($(compgen -f -- "$cur"))  # arguments: sessions, paths, text',
        "    fi",
        "}",
        "",
        f"complete -o filenames -F _toka {PROG}",
        "",
    ]
    return "\n".join(lines)


def zsh_completion(tree: list[CommandDoc]) -> str:
    lines = [
        f"#compdef {PROG}",
        f"# zsh completion for {PROG}; {HEADER}.",
        "",
        "__toka_commands() {",
        '    case "$1" in',
    ]
    for command in tree:
        if command.subcommands:
            by_name = {c.path[-1]: c for c in tree if c.path[:-1] == command.path and c.path}
            entries = " ".join(_sh(f"{name}:{_one_line(by_name[name].short_help)}") for name in command.subcommands)
            lines.append(f"        ({_sh(' '.join(command.path))}) reply=({entries}) ;;")
    lines += ["        (*) reply=() ;;", "    esac", "}", "", "__toka_options() {", '    case "$1" in']
    for command in tree:
        entries = " ".join(
            _sh(f"{name}:{_one_line(option.help)}") for option in command.options for name in option.names
        )
        lines.append(f"        ({_sh(' '.join(command.path))}) reply=({entries}) ;;")
    lines += [
        "        (*) reply=() ;;",
        "    esac",
        "}",
        "",
        "# Succeeds when option $2 of command $1 takes a value; its choices (or @files) in reply.",
        "__toka_value() {",
        '    case "$1|$2" in',
    ]
    for path, name, option in _value_options(tree):
        values = " ".join(_sh(c) for c in option.choices) if option.choices else ("@files" if option.is_path else "")
        lines.append(f"        ({_sh(f'{path}|{name}')}) reply=({values}) ;;")
    lines += [
        "        (*) return 1 ;;",
        "    esac",
        "}",
        "",
        "__toka_complete() {",
        '    local at="" word entry found i',
        "    local -a reply",
        "    for ((i = 2; i < CURRENT; i++)); do",
        "        word=${words[i]}",
        "        if [[ $word == -*=* ]]; then",
        "            continue",
        "        elif [[ $word == -* ]]; then",
        '            __toka_value "$at" "$word" && ((i++))',
        "        else",
        '            __toka_commands "$at"',
        "            found=0",
        '            for entry in "${reply[@]}"; do [[ ${entry%%:*} == "$word" ]] && found=1; done',
        "            ((found)) && at=${at:+$at }$word",
        "        fi",
        "    done",
        "    local prev=${words[CURRENT - 1]}",
        '    if [[ $prev == -* && $prev != *=* ]] && __toka_value "$at" "$prev"; then',
        '        if [[ ${reply[1]} == "@files" ]]; then',
        "            _files",
        "        elif ((${#reply})); then",
        "            compadd -a reply",
        "        else",
        "            _message value",
        "        fi",
        "        return",
        "    fi",
        "    if [[ $PREFIX == -* ]]; then",
        '        __toka_options "$at"',
        "        _describe -t options option reply",
        "        return",
        "    fi",
        '    __toka_commands "$at"',
        "    if ((${#reply})); then",
        "        _describe -t commands command reply",
        "    else",
        "        _files  # arguments: sessions, paths, text",
        "    fi",
        "}",
        "",
        "if [[ ${zsh_eval_context[-1]} == loadautofunc ]]; then",
        '    __toka_complete "$@"',
        "else",
        f"    compdef __toka_complete {PROG}",
        "fi",
        "",
    ]
    return "\n".join(lines)


def fish_completion(tree: list[CommandDoc]) -> str:
    value_options = " ".join(_fish(f"{path}|{name}") for path, name, _ in _value_options(tree))
    lines = [
        f"# fish completion for {PROG}; {HEADER}.",
        "",
        f"set -g __toka_value_options {value_options}",
        "",
        "function __toka_commands --description 'the subcommands of a toka command path'",
        '    switch "$argv[1]"',
    ]
    for command in tree:
        if command.subcommands:
            lines.append(f"        case {_fish(' '.join(command.path))}")
            lines.append(f"            echo {' '.join(_fish(name) for name in command.subcommands)}")
    lines += [
        "    end",
        "end",
        "",
        "function __toka_path --description 'the toka command path on the command line so far'",
        "    set -l tokens (commandline -opc)",
        "    set -e tokens[1]",
        "    set -l at ''",
        "    set -l skip 0",
        "    for word in $tokens",
        "        if test $skip = 1",
        "            set skip 0",
        "            continue",
        "        end",
        "        switch $word",
        "            case '-*=*'",
        "                continue",
        "            case '-*'",
        '                contains -- "$at|$word" $__toka_value_options; and set skip 1',
        "            case '*'",
        '                if contains -- $word (string split " " -- (__toka_commands "$at"))',
        '                    set at (string trim -- "$at $word")',
        "                end",
        "        end",
        "    end",
        '    echo "$at"',
        "end",
        "",
        "function __toka_at --description 'whether the command line is at toka command path $argv[1]'",
        "    set -l at (__toka_path)",
        '    test "$at" = "$argv[1]"',
        "end",
        "",
        f"complete -c {PROG} -e",
    ]
    by_path = {c.path: c for c in tree}
    for command in tree:
        at = _fish(f"__toka_at {_sh(' '.join(command.path))}")
        if command.subcommands:
            lines.append(f"complete -c {PROG} -n {at} -f")
        for name in command.subcommands:
            help = _one_line(by_path[(*command.path, name)].short_help)
            lines.append(f"complete -c {PROG} -n {at} -a {_fish(name)} -d {_fish(help)}")
        for option in command.options:
            flags = []
            for name in option.names:
                if name.startswith("--"):
                    flags.append(f"-l {_fish(name[2:])}")
                elif len(name) == 2:
                    flags.append(f"-s {_fish(name[1:])}")
                else:
                    flags.append(f"-o {_fish(name[1:])}")
            if option.takes_value and option.choices:
                flags.append(f"-x -a {_fish(' '.join(option.choices))}")
            elif option.takes_value:
                flags.append("-r" + (" -F" if option.is_path else " -f"))
            lines.append(f"complete -c {PROG} -n {at} {' '.join(flags)} -d {_fish(_one_line(option.help))}")
    lines.append("")
    return "\n".join(lines)


# The man page -------------------------------------------------------------------------------

EXIT_STATUS = (
    ("0", "Success."),
    ("1", "Failure: the command ran and found a problem (a failed check, an unhealthy pool, ...)."),
    ("2", "Usage or configuration error: a bad flag or argument, a config.toml that does not parse."),
    ("3", "Not found: no session, event, agent, handoff or key of that name."),
    ("4", "Daemon unavailable: it could not be reached or started."),
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
        lines.append(_roff(_one_line(paragraph)))
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
        f"toka \\- {_roff(_one_line(root.short_help).rstrip('.'))}",
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
            lines.append(_roff(_one_line(argument.help)) if argument.help else "An argument.")
        for option in command.options:
            if option.names[0] in ("--help", "-h"):
                continue
            lines += [".TP", _option_label(option), _roff(_one_line(option.help)) if option.help else "An option."]
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
    defaults = Settings()
    for spec in fields(Settings):
        name = spec.name
        default = getattr(defaults, name)
        shown = ", ".join(default) if isinstance(default, tuple) else default
        shown = str(shown).lower() if isinstance(shown, bool) else shown
        lines += [
            ".TP",
            f"\\fB{_roff(env_name(name))}\\fR",
            _roff(f"{key_of(name)}: {_one_line(SETTINGS[name].metadata['help'])}. Default: {shown or 'none'}."),
        ]
    lines += [
        ".SH SEE ALSO",
        "\\fBsqlite3\\fR(1), \\fBsystemctl\\fR(1), \\fBjq\\fR(1).",
        "The README and docs/ of toka's source, in particular docs/json.md (JSON shapes) and"
        " docs/protocol.md (the daemon's protocol).",
        "",
    ]
    return "\n".join(lines)


def generate(app: typer.Typer | None = None) -> dict[str, str]:
    """The generated files, by path under the project root, for ``app`` (toka's own by default)."""
    if app is None:
        from toka_cli.main import app as toka_app

        app = toka_app
    tree = command_tree(app)
    return {
        "completions/toka.bash": bash_completion(tree),
        "completions/_toka": zsh_completion(tree),
        "completions/toka.fish": fish_completion(tree),
        "man/toka.1": man_page(tree),
    }


def main() -> None:
    for relative, text in generate().items():
        path = ROOT / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        print(f"wrote {relative}", file=sys.stderr)


if __name__ == "__main__":
    main()
