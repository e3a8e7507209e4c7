"""Shell completion for bash, zsh and fish, generated from the command tree.

The scripts hold every command, subcommand and option, and the words an option takes, so pressing
Tab on them never starts Python (a `toka` start-up costs about 100 ms). Session and agent names
exist only in the log: for those, and for the arguments of a command that takes names or words
(only Click knows which argument the cursor is on), the scripts ask `toka` itself in Click's
protocol (``_TOKA_COMPLETE=bash_complete`` with ``COMP_WORDS`` and ``COMP_CWORD``;
toka_cli/completion.py), which reads them from a running daemon, most recent first. They keep
the command path in ``$at``: zsh ties ``$path`` to ``$PATH``.
"""

from __future__ import annotations

from collections.abc import Callable

from command_docs import HEADER, PROG, CommandDoc, ParamDoc, one_line


def _sh(text: str) -> str:
    """``text`` as one single-quoted word for bash, zsh and fish."""
    return "'" + text.replace("'", "'\\''") + "'"


def _fish(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _values(option: ParamDoc, quote: Callable[[str], str]) -> str:
    """What the scripts offer for an option's value: its words, @toka (ask toka), @files, or nothing."""
    if option.choices:
        return " ".join(quote(choice) for choice in option.choices)
    return "@toka" if option.from_daemon else "@files" if option.is_path else ""


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
        "# Succeeds when option $2 of command $1 takes a value; prints its choices, @toka or @files.",
        "_toka_value() {",
        '    case "$1|$2" in',
    ]
    for path, name, option in _value_options(tree):
        lines.append(f"        {_sh(f'{path}|{name}')}) echo {_sh(_values(option, str))} ;;")
    lines += [
        "        *) return 1 ;;",
        "    esac",
        "}",
        "",
        "# Succeeds when toka completes the arguments of command $1 (names from the daemon, words).",
        "_toka_asks() {",
        '    case "$1" in',
    ]
    asking = [command for command in tree if command.asks_toka]
    if asking:
        lines.append("        " + "|".join(_sh(" ".join(command.path)) for command in asking) + ") return 0 ;;")
    lines += [
        "        *) return 1 ;;",
        "    esac",
        "}",
        "",
        "# Asks toka, in Click's protocol, for what completes the word at COMP_CWORD: type,value lines,",
        "# most recent first. A daemon that is not running gives nothing; nothing is ever printed.",
        "_toka_ask() {",
        "    local IFS=$'\\n' line",
        '    for line in $(COMP_WORDS="${COMP_WORDS[*]}" COMP_CWORD=$COMP_CWORD _TOKA_COMPLETE=bash_complete \\',
        '        "${COMP_WORDS[0]}" 2>/dev/null); do',
        "        case ${line%%,*} in",
        '            file) COMPREPLY+=($(compgen -f -- "$cur")) ;;',
        '            dir) COMPREPLY+=($(compgen -d -- "$cur")) ;;',
        '            *) COMPREPLY+=("${line#*,}") ;;',
        "        esac",
        "    done",
        "    compopt -o nosort 2>/dev/null  # bash 4.4 and later: keep toka's order",
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
        "    COMPREPLY=()",
        '    if [[ $prev == -* ]] && values=$(_toka_value "$at" "$prev"); then',
        '        if [[ $values == "@files" ]]; then',
        '            COMPREPLY=($(compgen -f -- "$cur"))',
        '        elif [[ $values == "@toka" ]]; then',
        "            _toka_ask",
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
        '    elif _toka_asks "$at"; then',
        "        _toka_ask  # arguments: sessions, agents, words",
        "    else",
        '        COMPREPLY=($(compgen -f -- "$cur"))  # arguments: paths, text',
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
        "# Succeeds when option $2 of command $1 takes a value; its choices (or @toka, @files) in reply.",
        "__toka_value() {",
        '    case "$1|$2" in',
    ]
    for path, name, option in _value_options(tree):
        lines.append(f"        ({_sh(f'{path}|{name}')}) reply=({_values(option, _sh)}) ;;")
    lines += [
        "        (*) return 1 ;;",
        "    esac",
        "}",
        "",
        "# Succeeds when toka completes the arguments of command $1 (names from the daemon, words).",
        "__toka_asks() {",
        '    case "$1" in',
    ]
    asking = [command for command in tree if command.asks_toka]
    if asking:
        lines.append("        (" + "|".join(_sh(" ".join(command.path)) for command in asking) + ") return 0 ;;")
    lines += [
        "        (*) return 1 ;;",
        "    esac",
        "}",
        "",
        "# Asks toka, in Click's protocol, for what completes the current word: type, value and help",
        "# lines, most recent first. A daemon that is not running gives nothing; nothing is printed.",
        "__toka_ask() {",
        "    local -a answer described plain",
        "    local i",
        '    answer=("${(@f)$(COMP_WORDS="${words[*]}" COMP_CWORD=$((CURRENT - 1)) _TOKA_COMPLETE=zsh_complete \\',
        '        ${words[1]} 2>/dev/null)}")',
        "    for ((i = 1; i + 2 <= ${#answer}; i += 3)); do",
        "        case ${answer[i]} in",
        "            (file) _files ;;",
        "            (dir) _path_files -/ ;;",
        '            (*) if [[ ${answer[i + 2]} == _ ]]; then plain+=("${answer[i + 1]}");'
        ' else described+=("${answer[i + 1]}:${answer[i + 2]}"); fi ;;',
        "        esac",
        "    done",
        "    ((${#described})) && _describe -V -t names name described  # -V: toka's order, most recent first",
        "    ((${#plain})) && compadd -V names -a plain",
        "    return 0",
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
        '        elif [[ ${reply[1]} == "@toka" ]]; then',
        "            __toka_ask",
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
        '    elif __toka_asks "$at"; then',
        "        __toka_ask  # arguments: sessions, agents, words",
        "    else",
        "        _files  # arguments: paths, text",
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
        "# Asks toka, in Click's protocol, for what completes the current word: names from the daemon",
        "# (most recent first) and words, each with its help. A daemon that is not running gives nothing.",
        "function __toka_ask --description 'what toka completes for the current word'",
        "    set -l words (commandline -opc) (commandline -ct)",
        "    set -l cword (math (count $words) - 1)",
        '    env COMP_WORDS="$words" COMP_CWORD=$cword _TOKA_COMPLETE=fish_complete $words[1] 2>/dev/null \\',
        "        | while read -l line",
        "        set -l answer (string split -m 1 , -- $line)",
        "        switch $answer[1]",
        "            case file",
        "                __fish_complete_path (commandline -ct)",
        "            case dir",
        "                __fish_complete_directories (commandline -ct)",
        "            case '*'",
        "                echo $answer[2]",
        "        end",
        "    end",
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
        elif command.asks_toka:
            lines.append(f"complete -c {PROG} -n {at} -f -k -a '(__toka_ask)'")
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
            elif option.takes_value and option.from_daemon:
                flags.append("-x -k -a '(__toka_ask)'")
            elif option.takes_value:
                flags.append("-r" + (" -F" if option.is_path else " -f"))
            lines.append(f"complete -c {PROG} -n {at} {' '.join(flags)} -d {_fish(one_line(option.help))}")
    lines.append("")
    return "\n".join(lines)
