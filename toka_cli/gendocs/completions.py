"""Completion scripts for bash, zsh and fish: static, with every command, subcommand and option
written into them, so pressing Tab never starts Python (a `toka` start-up costs about 150 ms).
They keep the command path in ``$at``: zsh ties ``$path`` to ``$PATH``."""

from __future__ import annotations

from toka_cli.gendocs.tree import HEADER, PROG, CommandDoc, ParamDoc, one_line


def _sh(text: str) -> str:
    """``text`` as one single-quoted word for bash, zsh and fish."""
    return "'" + text.replace("'", "'\\''") + "'"


def _fish(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


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
            entries = " ".join(_sh(f"{name}:{one_line(by_name[name].short_help)}") for name in command.subcommands)
            lines.append(f"        ({_sh(' '.join(command.path))}) reply=({entries}) ;;")
    lines += ["        (*) reply=() ;;", "    esac", "}", "", "__toka_options() {", '    case "$1" in']
    for command in tree:
        entries = " ".join(
            _sh(f"{name}:{one_line(option.help)}") for option in command.options for name in option.names
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
            help = one_line(by_path[(*command.path, name)].short_help)
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
            lines.append(f"complete -c {PROG} -n {at} {' '.join(flags)} -d {_fish(one_line(option.help))}")
    lines.append("")
    return "\n".join(lines)
