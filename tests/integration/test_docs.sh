#!/bin/bash
# README.md and docs/*.md stay short, linked and true to the binary:
# - README.md is under 12 KiB (the pitch, the set-up, a quick start and links: the rest is in
#   docs/, a page per command and per topic), and keeps the two set-up commands;
# - every relative link of README.md and docs/*.md names a file of the tree, and a #fragment
#   a heading of the page it names (tests/integration/docs_check.py links);
# - every `hopbench ...` command line their code blocks show (docs_check.py commands) is either
#   run here or taken by the option parser, so that none can go stale:
#     run: help, --version, `X --help`, `stack list`; `serve` (on endpoints of the test's own,
#     stopped by SIGTERM: exit 0); README's `run` lines against the test's own `hopbench serve`
#     of their protocol with a short -d (exit 0; a line that needs a real server's answer,
#     --expect-body, --script, a password, a redis command, or a count, is parsed instead); `compare`, `merge`, `report`, `cost` on
#     evidence the test makes (each file a command reads made first, unless an earlier command
#     made it);
#     parsed: any other `run` with its endpoints replaced by a socket nothing listens on (the
#     only failure must be that endpoint: exit 1, "cannot connect"); `lab`, `stack`, `agent`
#     and a `run` that starts its own server or reads the host (--netns, --agent, --service)
#     with --help appended (exit 0: every option and value before it taken), the lab's word
#     `overload` or none, a stack's name one `stack list` gives, a stack's --profile one its
#     --help names, a run's protocol one `hopbench help` lists.
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

need python3
CHECK=$(dirname "$0")/docs_check.py
DOCS=(README.md docs/*.md)

# --- README's size and set-up ---------------------------------------------------------------

size=$(wc -c <README.md)
if [ "$size" -lt 12288 ]; then
    ok "README.md is under 12 KiB ($size bytes)"
else
    not_ok "README.md is under 12 KiB" "$size bytes: move the detail into docs/"
fi
for cmd in 'make lab' 'make test'; do
    check "README.md's set-up: apt-get update && apt-get install -y make && $cmd" \
        grep -qxF "    apt-get update && apt-get install -y make && $cmd" README.md
done

# --- links ------------------------------------------------------------------------------------

tap_from python3 "$CHECK" links "${DOCS[@]}"
# The check can tell: a page with a link to no file, and one to no heading, is found out.
mkdir "$T/bad"
printf '# A\n\n[x](missing.md) [y](ok.md#nowhere) [z](ok.md#a-b)\n' >"$T/bad/page.md"
printf '# A b\n' >"$T/bad/ok.md"
python3 "$CHECK" links "$T/bad/page.md" >"$T/bad.out"
if grep -q '^not ok .*missing.md # no file' "$T/bad.out" &&
    grep -q '^not ok .*ok.md#nowhere # ' "$T/bad.out" && grep -q '^ok .*ok.md#a-b$' "$T/bad.out"; then
    ok "a link to no file and one to no heading are found (the check can tell)"
else
    not_ok "a link to no file and one to no heading are found" "$(tr '\n' '|' <"$T/bad.out")"
fi

# --- command lines ----------------------------------------------------------------------------

python3 "$CHECK" commands "${DOCS[@]}" >"$T/commands"
n=$(wc -l <"$T/commands")
if [ "$n" -ge 40 ]; then
    ok "the command lines of README.md and docs/ were found ($n)"
else
    not_ok "the command lines of README.md and docs/ were found" "only $n"
fi

W=$T/w # the working directory of every command run here: what they write stays in $T
mkdir "$W"
(umask 077 && echo secret >"$W/pw" && echo secret >"$W/token")
none=$T/none.sock
protos=$("$HOPBENCH" help | sed -n 's/^PROTO: *//p' | tr -d ' ' | tr '|' ' ')
stacks=$("$HOPBENCH" stack list | awk '{ print $1 }')
check "hopbench help lists the protocols ($protos)" test -n "$protos"

# takes CMD OPT : the option table of CMD (`help --options`) says OPT takes a value.
takes() { "$HOPBENCH" help --options "$1" | grep -qE "^[a-z]? $2 [^ ]"; }
# positional CMD WORDS... : the words of a command line that are not options or their values.
positional() {
    local cmd=$1 w skip=0
    shift
    for w in "$@"; do
        if [ "$skip" = 1 ]; then
            skip=0
        elif [[ $w == --*=* ]]; then
            :
        elif [[ $w == -* ]]; then
            case $w in
            --*) takes "$cmd" "$w" && skip=1 ;;
            -?) "$HOPBENCH" help --options "$cmd" | grep -qE "^${w#-} --[a-z-]+ [^ ]" && skip=1 ;;
            esac
        else
            printf '%s\n' "$w"
        fi
    done
}

# run_in OUT WORDS... : hopbench WORDS in $W, bounded; stdout/stderr to $T/OUT.{out,err}; RC.
run_in() {
    local out=$1
    shift
    RC=0
    (cd "$W" && exec timeout -k 5 60 "$HOPBENCH" "$@") >"$T/$out.out" 2>"$T/$out.err" || RC=$?
}

# The evidence the reading commands are given: two short runs of a server of the test's own,
# tcp and unix, as a document and as --jsonl.
start_server ev --listen tcp://127.0.0.1:0 --listen "unix:$T/ev.sock" || done_testing
expect_rc "evidence to read: run echo tcp and unix, 2 reps" 0 ev-run run echo \
    "tcp://127.0.0.1:$SRV_PORT" "unix:$T/ev.sock" --reps 2 -d 0.2 --warmup 0.05 \
    --json "$T/ev.json" --jsonl "$T/ev.jsonl"
stop_pid "$SRV_PID"

# A server of each protocol a README `run` line names, on a socket of the test's own.
declare -A SRV_SOCK
serve_for() {
    local proto=$1
    [ -n "${SRV_SOCK[$proto]:-}" ] && return 0
    PROTO=$proto start_server "srv-$proto" --listen "unix:$T/srv-$proto.sock" || return 1
    SRV_SOCK[$proto]=$T/srv-$proto.sock
}

# readme_run LOC WORDS... : README's run line against the test's own server: exit 0.
readme_run() {
    local loc=$1 i words
    shift
    words=("$@")
    if ! serve_for "${words[1]}"; then
        not_ok "$loc: hopbench ${words[*]}: runs" "no server for ${words[1]}"
        return
    fi
    for i in "${!words[@]}"; do
        if [[ ${words[$i]} =~ ^([a-z]+=)?(tcp://|unix:) ]]; then
            words[i]=${BASH_REMATCH[1]}unix:${SRV_SOCK[${words[1]}]}
        fi
    done
    run_in readme-run "${words[@]}" -d 0.2 --warmup 0.05
    if [ "$RC" = 0 ]; then
        ok "$loc: hopbench $* (runs against hopbench serve ${words[1]}: exit 0)"
    else
        not_ok "$loc: hopbench $*: runs" "exit $RC: $(tail -n 2 "$T/readme-run.err" | tr '\n' '|')"
    fi
}

# parse_run LOC WORDS... : a run line, its endpoints replaced by one nothing listens on,
# fails only there (the command line is taken).
parse_run() {
    local loc=$1 i words
    shift
    words=("$@")
    for i in "${!words[@]}"; do
        if [[ ${words[$i]} =~ ^([a-z]+=)?(tcp://|unix:) ]]; then words[i]=${BASH_REMATCH[1]}unix:$none; fi
    done
    run_in parse "${words[@]}"
    if [ "$RC" = 1 ] && grep -qF "cannot connect to unix:$none" "$T/parse.err"; then
        ok "$loc: hopbench $* (taken: fails only at an endpoint nothing listens on)"
    else
        not_ok "$loc: hopbench $*: taken" "exit $RC: $(tail -n 1 "$T/parse.err")"
    fi
}

# A cgroup directory of this host (v2, or v1's cpuacct), for a --service line's cgroup:DIR.
cg_dir=$(awk '{ for (i = 7; i < NF; i++) if ($i == "-") {
                    if ($(i + 1) == "cgroup2" || ($(i + 1) == "cgroup" && $NF ~ /cpuacct/)) { print $5; exit }
                    break } }' /proc/self/mountinfo)
check "a cgroup directory to name in --service lines: $cg_dir" test -d "$cg_dir"

# parse_help LOC WORDS... : WORDS --help exits 0 (every option and value before it taken),
# and the command's words are ones the binary knows. A --service's process or cgroup, which
# the parser reads, is the test's own (pid:, tree: this script; cgroup: $cg_dir).
parse_help() {
    local loc=$1 cmd why="" pos w prof i j
    shift
    local shown="$*" args=("$@")
    for ((i = 1; i < ${#args[@]}; i++)); do
        if [ "${args[i - 1]}" = --service ]; then
            case ${args[i]} in
            *=pid:* | *=tree:*) args[i]=${args[i]%%:*}:$$ ;;
            *=cgroup:*) args[i]=${args[i]%%:*}:$cg_dir ;;
            esac
        fi
    done
    set -- "${args[@]}"
    case ${1:-} in lab | run | stack | agent) cmd=$1 pos=$(positional "$1" "${@:2}") ;;
    *) cmd=lab pos=$(positional lab "$@") ;; # hopbench alone, or its options, is the lab
    esac
    run_in parse "$@" --help
    [ "$RC" = 0 ] || why="--help appended: exit $RC: $(head -n 1 "$T/parse.err")"
    w=$(head -n 1 <<<"$pos")
    case $cmd in
    lab) [ -z "$w" ] || [ "$w" = overload ] || why="$why; lab takes 'overload' or nothing, not '$w'" ;;
    stack)
        grep -qxF -- "$w" <<<"$stacks" || why="$why; '$w' is not a stack (stack list)"
        for ((i = 1; i < $#; i++)); do
            j=$((i + 1))
            prof=${!j}
            if [ "${!i}" = --profile ] && [[ $prof != -* ]]; then
                "$HOPBENCH" stack "$w" --help | grep -qw -- "$prof" ||
                    why="$why; stack $w --help names no profile '$prof'"
            fi
        done
        ;;
    run) grep -qw -- "$w" <<<"$protos" || why="$why; '$w' is not a protocol ($protos)" ;;
    esac
    if [ -z "$why" ]; then
        ok "$loc: hopbench $shown (taken by the parser)"
    else
        not_ok "$loc: hopbench $shown: taken by the parser" "${why#; }"
    fi
}

# serve_check LOC WORDS... : the serve line on endpoints of the test's own comes up, and
# stops at SIGTERM with exit 0.
serve_check() {
    local loc=$1 i words k=0
    shift
    words=("$@")
    for i in "${!words[@]}"; do
        case ${words[$i]} in
        tcp://*) words[i]=tcp://127.0.0.1:0 ;;
        unix:*)
            k=$((k + 1))
            words[i]=unix:$T/serve-$k.sock
            ;;
        esac
    done
    spawn serve "${words[@]}"
    eventually 10 grep -q '^hopbench: .* server, .*pid' "$T/serve.out" 2>/dev/null
    local up=$?
    kill -TERM "$SPAWNED" 2>/dev/null
    reap "$SPAWNED" 10
    if [ "$up" = 0 ] && [ "$RC" = 0 ]; then
        ok "$loc: hopbench $* (serves, and stops at SIGTERM: exit 0)"
    else
        not_ok "$loc: hopbench $*: serves" "up $up, exit $RC: $(tail -n 1 "$T/serve.err")"
    fi
}

# reads LOC WORDS... : compare, merge, report or cost on the test's evidence, each file it
# reads (a positional *.json or *.jsonl) made first when missing: exit 0.
reads() {
    local loc=$1 f
    shift
    while read -r f; do
        case $f in
        *.jsonl) [ -e "$W/$f" ] || cp "$T/ev.jsonl" "$W/$f" ;;
        *.json) [ -e "$W/$f" ] || cp "$T/ev.json" "$W/$f" ;;
        esac
    done < <(positional "$1" "${@:2}")
    run_in reads "$@"
    if [ "$RC" = 0 ]; then
        ok "$loc: hopbench $* (runs on the test's evidence: exit 0)"
    else
        not_ok "$loc: hopbench $*: runs" "exit $RC: $(tail -n 1 "$T/reads.err")"
    fi
}

while IFS=$'\t' read -r loc json; do
    mapfile -t words < <(jq -r '.[]' <<<"$json")
    has() { printf '%s\n' "${words[@]}" | grep -qxE -- "$1"; }
    case ${words[0]:-lab} in
    help | --version | -h | --help) kind=asis ;;
    stack) if [ "${words[1]:-}" = list ] || has '--help|-h'; then kind=asis; else kind=help; fi ;;
    serve) if has '--help|-h'; then kind=asis; else kind=serve; fi ;;
    compare | merge | report | cost) if has '--help|-h'; then kind=asis; else kind=reads; fi ;;
    run)
        if has '--help|-h'; then
            kind=asis
        elif has '--netns|--agent|--service'; then
            kind=help
        elif [[ $loc == README.md:* ]] && [[ " echo http fcgi redis memcached " == *" ${words[1]:-} "* ]] &&
            ! has '--expect-body|--script|--password|--password-file|--command|-n|--count'; then
            kind=readme # a built-in server of its protocol answers it as the real one would
        else
            kind=parse
        fi
        ;;
    *) if has '--help|-h'; then kind=asis; else kind=help; fi ;;
    esac
    case $kind in
    asis)
        run_in exec "${words[@]}"
        if [ "$RC" = 0 ]; then
            ok "$loc: hopbench ${words[*]} (runs: exit 0)"
        else
            not_ok "$loc: hopbench ${words[*]}: runs" "exit $RC: $(tail -n 1 "$T/exec.err")"
        fi
        ;;
    help) parse_help "$loc" "${words[@]}" ;;
    serve) serve_check "$loc" "${words[@]}" ;;
    reads) reads "$loc" "${words[@]}" ;;
    readme) readme_run "$loc" "${words[@]}" ;;
    parse) parse_run "$loc" "${words[@]}" ;;
    esac
done <"$T/commands"

# The checks can tell: a stale option, a stack or protocol that is not, a lab word that is not.
for bad in "lab --no-such-option" "stack no-such-stack --short" "stack nginx-fpm --profile no-such" \
    "lab nonsense" "agent --listen nonsense"; do
    read -r -a words <<<"$bad"
    parse_help "stale" "${words[@]}" >"$T/stale.tap" 2>&1
    NFAIL=$((NFAIL - $(grep -c '^not ok' "$T/stale.tap")))
    NPASS=$((NPASS - $(grep -c '^ok' "$T/stale.tap")))
    if grep -q '^not ok' "$T/stale.tap"; then
        ok "a stale line is found: hopbench $bad (the check can tell)"
    else
        not_ok "a stale line is found: hopbench $bad" "$(cat "$T/stale.tap")"
    fi
done
parse_run "stale" run echo unix:/x --no-such-option >"$T/stale.tap" 2>&1
NFAIL=$((NFAIL - $(grep -c '^not ok' "$T/stale.tap")))
NPASS=$((NPASS - $(grep -c '^ok' "$T/stale.tap")))
check "a stale run line is found: hopbench run echo unix:/x --no-such-option (the check can tell)" \
    grep -q '^not ok' "$T/stale.tap"

done_testing
