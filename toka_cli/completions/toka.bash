# bash completion for toka; generated from the toka command by `python docs/gen/gendocs.py`; do not edit.

_toka_commands() {
    case "$1" in
        '') echo 'admin agent alerts blob completion compress config context daemon deps doctor events export gc handoff heads hook import integrate mcp memory note pool proof prune recall record replay report search sessions show state stats status statusline tui usage verify watch' ;;
        'admin') echo 'copy rebuild recover' ;;
        'agent') echo 'list pause resume show spawn terminate usage' ;;
        'blob') echo 'show' ;;
        'config') echo 'get path set show' ;;
        'daemon') echo 'logs restart run start status stop' ;;
        'deps') echo 'add order rm show' ;;
        'export') echo 'jsonl otel' ;;
        'handoff') echo 'chain create list show stats verify' ;;
        'memory') echo 'get history list rm set watch' ;;
        'pool') echo 'get health list put rm stats' ;;
        'report') echo 'blocks daily monthly session weekly' ;;
        'state') echo 'get history list machines register set' ;;
    esac
}

_toka_options() {
    case "$1" in
        '') echo '-V --version --utc -h --help' ;;
        'admin') echo '-h --help' ;;
        'admin copy') echo '--to --json -h --help' ;;
        'admin rebuild') echo '--json -h --help' ;;
        'admin recover') echo '--json -h --help' ;;
        'agent') echo '-h --help' ;;
        'agent list') echo '--trace --state --live --json -h --help' ;;
        'agent pause') echo '--json -h --help' ;;
        'agent resume') echo '--json -h --help' ;;
        'agent show') echo '--json -h --help' ;;
        'agent spawn') echo '-t --type --role --model --window --warning --critical --policy --session --trace --json -h --help' ;;
        'agent terminate') echo '--reason --detail --json -h --help' ;;
        'agent usage') echo '--input --output --cache-read --cache-creation --model --json -h --help' ;;
        'alerts') echo '--since -n --limit -f --follow --test --json -h --help' ;;
        'blob') echo '-h --help' ;;
        'blob show') echo '--json -h --help' ;;
        'completion') echo '-h --help' ;;
        'compress') echo '--policy --target --dry-run --force --json -h --help' ;;
        'config') echo '-h --help' ;;
        'config get') echo '--json -h --help' ;;
        'config path') echo '-h --help' ;;
        'config set') echo '-h --help' ;;
        'config show') echo '--json --toml -h --help' ;;
        'context') echo '--budget --policy --format --raw --json -h --help' ;;
        'daemon') echo '-h --help' ;;
        'daemon logs') echo '-n --lines -f --follow -h --help' ;;
        'daemon restart') echo '--json -h --help' ;;
        'daemon run') echo '--memory --durability -h --help' ;;
        'daemon start') echo '--json -h --help' ;;
        'daemon status') echo '--json -h --help' ;;
        'daemon stop') echo '--json -h --help' ;;
        'deps') echo '-h --help' ;;
        'deps add') echo '--needs --json -h --help' ;;
        'deps order') echo '--json -h --help' ;;
        'deps rm') echo '--needs --json -h --help' ;;
        'deps show') echo '--json -h --help' ;;
        'doctor') echo '--json -h --help' ;;
        'events') echo '-k --kind --exclude-kind --since --until -n --limit --last -f --follow --json -h --help' ;;
        'export') echo '-h --help' ;;
        'export jsonl') echo '-o --output -h --help' ;;
        'export otel') echo '--since --until --endpoint --header --include-content --no-content --json -h --help' ;;
        'gc') echo '--vacuum --dry-run --json -h --help' ;;
        'handoff') echo '-h --help' ;;
        'handoff chain') echo '--json -h --help' ;;
        'handoff create') echo '--write --force --no-force --json -h --help' ;;
        'handoff list') echo '--trace --active --json -h --help' ;;
        'handoff show') echo '--format --json -h --help' ;;
        'handoff stats') echo '--json -h --help' ;;
        'handoff verify') echo '--json -h --help' ;;
        'heads') echo '-n --limit --reset --yes --json -h --help' ;;
        'hook') echo '--headroom --statusline -h --help' ;;
        'import') echo '--format --json --wait -h --help' ;;
        'integrate') echo '--project --uninstall --statusline --mcp --no-mcp --notify --no-notify --hooks --no-hooks --otel --inbox --no-inbox --dry-run --json -h --help' ;;
        'mcp') echo '--session -h --help' ;;
        'memory') echo '-h --help' ;;
        'memory get') echo '--json -h --help' ;;
        'memory history') echo '--json -h --help' ;;
        'memory list') echo '--prefix --pinned --json -h --help' ;;
        'memory rm') echo '--expect-version --json -h --help' ;;
        'memory set') echo '--expect-version --ttl --pin --unpin --json -h --help' ;;
        'memory watch') echo '--json -h --help' ;;
        'note') echo '--reason --agent --json -h --help' ;;
        'pool') echo '-h --help' ;;
        'pool get') echo '--json -h --help' ;;
        'pool health') echo '--json -h --help' ;;
        'pool list') echo '-n --limit --json -h --help' ;;
        'pool put') echo '--ttl --json -h --help' ;;
        'pool rm') echo '--json -h --help' ;;
        'pool stats') echo '--json -h --help' ;;
        'proof') echo '--id --json -h --help' ;;
        'prune') echo '--before --keep-days -s --session --dry-run --json -h --help' ;;
        'recall') echo '-s --session -n --limit --json -h --help' ;;
        'record') echo '--agent --key --ts --json -h --help' ;;
        'replay') echo '--to -k --kind --exclude-kind --all --json -h --help' ;;
        'report') echo '-h --help' ;;
        'report blocks') echo '--since --until -z --timezone --source --project --token-limit --cost-limit --breakdown --live --format --json -h --help' ;;
        'report daily') echo '--since --until -z --timezone --source --project --breakdown --format --json -h --help' ;;
        'report monthly') echo '--since --until -z --timezone --source --project --breakdown --format --json -h --help' ;;
        'report session') echo '--since --until -z --timezone --source --project --breakdown --compare --format --json -h --help' ;;
        'report weekly') echo '--since --until -z --timezone --source --project --breakdown --format --json -h --help' ;;
        'search') echo '-s --session -a --agent -k --kind --exclude-kind --since --until -n --limit --fts --semantic --json -h --help' ;;
        'sessions') echo '--since --until --source --project --json -n --limit -h --help' ;;
        'show') echo '--json -h --help' ;;
        'state') echo '-h --help' ;;
        'state get') echo '--json -h --help' ;;
        'state history') echo '--json -h --help' ;;
        'state list') echo '--json -h --help' ;;
        'state machines') echo '--json -h --help' ;;
        'state register') echo '--json -h --help' ;;
        'state set') echo '--reason --json -h --help' ;;
        'stats') echo '--json -h --help' ;;
        'status') echo '--json -h --help' ;;
        'statusline') echo '-h --help' ;;
        'tui') echo '-h --help' ;;
        'usage') echo '--json -h --help' ;;
        'verify') echo '--deep --since-head --json -h --help' ;;
        'watch') echo '--format --json -h --help' ;;
    esac
}

# Succeeds when option $2 of command $1 takes a value; prints its choices, @toka or @files.
_toka_value() {
    case "$1|$2" in
        'admin copy|--to') echo '' ;;
        'agent list|--trace') echo '' ;;
        'agent list|--state') echo '' ;;
        'agent spawn|-t') echo '' ;;
        'agent spawn|--type') echo '' ;;
        'agent spawn|--role') echo '' ;;
        'agent spawn|--model') echo '' ;;
        'agent spawn|--window') echo '' ;;
        'agent spawn|--warning') echo '' ;;
        'agent spawn|--critical') echo '' ;;
        'agent spawn|--policy') echo 'notify handoff' ;;
        'agent spawn|--session') echo '' ;;
        'agent spawn|--trace') echo '' ;;
        'agent terminate|--reason') echo '' ;;
        'agent terminate|--detail') echo '' ;;
        'agent usage|--input') echo '' ;;
        'agent usage|--output') echo '' ;;
        'agent usage|--cache-read') echo '' ;;
        'agent usage|--cache-creation') echo '' ;;
        'agent usage|--model') echo '' ;;
        'alerts|--since') echo '' ;;
        'alerts|-n') echo '' ;;
        'alerts|--limit') echo '' ;;
        'compress|--policy') echo 'fifo window summarize importance' ;;
        'compress|--target') echo '' ;;
        'context|--budget') echo '' ;;
        'context|--policy') echo 'fifo window summarize importance' ;;
        'context|--format') echo 'messages text json' ;;
        'daemon logs|-n') echo '' ;;
        'daemon logs|--lines') echo '' ;;
        'daemon run|--durability') echo 'normal full' ;;
        'deps add|--needs') echo '' ;;
        'deps rm|--needs') echo '' ;;
        'events|-k') echo '' ;;
        'events|--kind') echo '' ;;
        'events|--exclude-kind') echo '' ;;
        'events|--since') echo '' ;;
        'events|--until') echo '' ;;
        'events|-n') echo '' ;;
        'events|--limit') echo '' ;;
        'export jsonl|-o') echo '@files' ;;
        'export jsonl|--output') echo '@files' ;;
        'export otel|--since') echo '' ;;
        'export otel|--until') echo '' ;;
        'export otel|--endpoint') echo '' ;;
        'export otel|--header') echo '' ;;
        'handoff create|--write') echo '@files' ;;
        'handoff list|--trace') echo '' ;;
        'handoff show|--format') echo 'markdown prompt json' ;;
        'heads|-n') echo '' ;;
        'heads|--limit') echo '' ;;
        'import|--format') echo 'auto toka claude-code codex' ;;
        'integrate|--project') echo '@files' ;;
        'mcp|--session') echo '' ;;
        'memory list|--prefix') echo '' ;;
        'memory rm|--expect-version') echo '' ;;
        'memory set|--expect-version') echo '' ;;
        'memory set|--ttl') echo '' ;;
        'note|--reason') echo '' ;;
        'note|--agent') echo '' ;;
        'pool list|-n') echo '' ;;
        'pool list|--limit') echo '' ;;
        'pool put|--ttl') echo '' ;;
        'prune|--before') echo '' ;;
        'prune|--keep-days') echo '' ;;
        'prune|-s') echo '' ;;
        'prune|--session') echo '' ;;
        'recall|-s') echo '@toka' ;;
        'recall|--session') echo '@toka' ;;
        'recall|-n') echo '' ;;
        'recall|--limit') echo '' ;;
        'record|--agent') echo '' ;;
        'record|--key') echo '' ;;
        'record|--ts') echo '' ;;
        'replay|--to') echo '' ;;
        'replay|-k') echo '' ;;
        'replay|--kind') echo '' ;;
        'replay|--exclude-kind') echo '' ;;
        'report blocks|--since') echo '' ;;
        'report blocks|--until') echo '' ;;
        'report blocks|-z') echo '' ;;
        'report blocks|--timezone') echo '' ;;
        'report blocks|--source') echo 'claude-code codex toka' ;;
        'report blocks|--project') echo '' ;;
        'report blocks|--token-limit') echo '' ;;
        'report blocks|--cost-limit') echo '' ;;
        'report blocks|--format') echo 'table csv markdown' ;;
        'report daily|--since') echo '' ;;
        'report daily|--until') echo '' ;;
        'report daily|-z') echo '' ;;
        'report daily|--timezone') echo '' ;;
        'report daily|--source') echo 'claude-code codex toka' ;;
        'report daily|--project') echo '' ;;
        'report daily|--format') echo 'table csv markdown' ;;
        'report monthly|--since') echo '' ;;
        'report monthly|--until') echo '' ;;
        'report monthly|-z') echo '' ;;
        'report monthly|--timezone') echo '' ;;
        'report monthly|--source') echo 'claude-code codex toka' ;;
        'report monthly|--project') echo '' ;;
        'report monthly|--format') echo 'table csv markdown' ;;
        'report session|--since') echo '' ;;
        'report session|--until') echo '' ;;
        'report session|-z') echo '' ;;
        'report session|--timezone') echo '' ;;
        'report session|--source') echo 'claude-code codex toka' ;;
        'report session|--project') echo '' ;;
        'report session|--compare') echo '' ;;
        'report session|--format') echo 'table csv markdown' ;;
        'report weekly|--since') echo '' ;;
        'report weekly|--until') echo '' ;;
        'report weekly|-z') echo '' ;;
        'report weekly|--timezone') echo '' ;;
        'report weekly|--source') echo 'claude-code codex toka' ;;
        'report weekly|--project') echo '' ;;
        'report weekly|--format') echo 'table csv markdown' ;;
        'search|-s') echo '@toka' ;;
        'search|--session') echo '@toka' ;;
        'search|-a') echo '' ;;
        'search|--agent') echo '' ;;
        'search|-k') echo '' ;;
        'search|--kind') echo '' ;;
        'search|--exclude-kind') echo '' ;;
        'search|--since') echo '' ;;
        'search|--until') echo '' ;;
        'search|-n') echo '' ;;
        'search|--limit') echo '' ;;
        'sessions|--since') echo '' ;;
        'sessions|--until') echo '' ;;
        'sessions|--source') echo 'claude-code codex toka' ;;
        'sessions|--project') echo '' ;;
        'sessions|-n') echo '' ;;
        'sessions|--limit') echo '' ;;
        'state set|--reason') echo '' ;;
        'verify|--since-head') echo '' ;;
        'watch|--format') echo 'auto toka claude-code codex' ;;
        *) return 1 ;;
    esac
}

# Succeeds when toka completes the arguments of command $1 (names from the daemon, words).
_toka_asks() {
    case "$1" in
        'agent pause'|'agent resume'|'agent show'|'agent terminate'|'agent usage'|'completion'|'compress'|'config get'|'config set'|'context'|'events'|'export jsonl'|'handoff create'|'note'|'record'|'replay'|'show'|'state get'|'state history'|'state set'|'usage'|'verify') return 0 ;;
        *) return 1 ;;
    esac
}

# Asks toka, in Click's protocol, for what completes the word at COMP_CWORD: type,value lines,
# most recent first. A daemon that is not running gives nothing; nothing is ever printed.
_toka_ask() {
    local IFS=$'\n' line
    for line in $(COMP_WORDS="${COMP_WORDS[*]}" COMP_CWORD=$COMP_CWORD _TOKA_COMPLETE=bash_complete \
        "${COMP_WORDS[0]}" 2>/dev/null); do
        case ${line%%,*} in
            file) COMPREPLY+=($(compgen -f -- "$cur")) ;;
            dir) COMPREPLY+=($(compgen -d -- "$cur")) ;;
            *) COMPREPLY+=("${line#*,}") ;;
        esac
    done
    compopt -o nosort 2>/dev/null  # bash 4.4 and later: keep toka's order
}

_toka() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev="" at="" word i
    for ((i = 1; i < COMP_CWORD; i++)); do
        word=${COMP_WORDS[i]}
        if [[ $word == -*=* ]]; then
            continue
        elif [[ $word == -* ]]; then
            if _toka_value "$at" "$word" >/dev/null; then
                ((i++))
                [[ ${COMP_WORDS[i]} == "=" ]] && ((i++))  # --opt=value split at COMP_WORDBREAKS
            fi
        elif [[ " $(_toka_commands "$at") " == *" $word "* ]]; then
            at=${at:+$at }$word
        fi
    done
    ((COMP_CWORD > 1)) && prev=${COMP_WORDS[COMP_CWORD - 1]}
    [[ $prev == "=" && COMP_CWORD -gt 2 ]] && prev=${COMP_WORDS[COMP_CWORD - 2]}
    [[ $cur == "=" ]] && cur=""
    local values
    COMPREPLY=()
    if [[ $prev == -* ]] && values=$(_toka_value "$at" "$prev"); then
        if [[ $values == "@files" ]]; then
            COMPREPLY=($(compgen -f -- "$cur"))
        elif [[ $values == "@toka" ]]; then
            _toka_ask
        else
            COMPREPLY=($(compgen -W "$values" -- "$cur"))
        fi
        return
    fi
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$(_toka_options "$at")" -- "$cur"))
        return
    fi
    local commands
    commands=$(_toka_commands "$at")
    if [[ -n $commands ]]; then
        COMPREPLY=($(compgen -W "$commands" -- "$cur"))
    elif _toka_asks "$at"; then
        _toka_ask  # arguments: sessions, agents, words
    else
        COMPREPLY=($(compgen -f -- "$cur"))  # arguments: paths, text
    fi
}

complete -o filenames -F _toka toka
