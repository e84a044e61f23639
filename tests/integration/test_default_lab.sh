#!/bin/bash
# Bare `hopbench`, as a user types it: the default lab, {tcp, unix} x {connect, reuse} x
# {64 B, 4 KiB, 64 KiB}, in a fresh working directory and with a private TMPDIR. Its
# tables, its evidence (written to the cwd, the path printed), the cleanup, and the wall
# time README gives: "about 50 s in all" (and "--quick ... about 13 s").
# shellcheck disable=SC2016 # $vars in single quotes are jq variables
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

# README's figures, and the bounds that keep them honest. A cell is 3 s after a 1 s warm-up
# (--quick: 0.75 s after 0.25 s), 12 cells, so the cells alone take 48 s (12 s); what the lab
# adds (the server, each cell's start and counters, the tables) must keep the whole "about"
# README's figure. Measured on the 2-vCPU VM: 49.0 s and 12.7 s (release), 49.5 s and 13.1 s
# (ASan), 14.0 s for --quick under TSan. So: at most 60 s for "about 50 s", 16 s for
# "about 13 s".
LAB_MIN_S=48
LAB_MAX_S=60
QUICK_MIN_S=12
QUICK_MAX_S=16

cpus=$(nproc)
if [ "$cpus" -ge 2 ]; then want_pin="split"; else want_pin="same"; fi

# lab_as_user NAME ARGS... : runs "hopbench ARGS..." in $T/NAME.cwd with TMPDIR=$T/NAME.tmp
# (both empty at first), time-limited; sets RC and WALL_MS.
lab_as_user() {
    local name=$1 t0
    shift
    mkdir -p "$T/$name.cwd" "$T/$name.tmp"
    RC=0
    t0=$(now_ms)
    (cd "$T/$name.cwd" && TMPDIR=$T/$name.tmp exec timeout -k 5 150 "$HOPBENCH" "$@") \
        >"$T/$name.out" 2>"$T/$name.err" || RC=$?
    WALL_MS=$(($(now_ms) - t0))
}

# size_table NAME TITLE : the lines of the table titled "TITLE echo round trips", up to the
# first blank line after it.
size_table() {
    awk -v t="$2 echo round trips" 'index($0, t) == 1 { on = 1 } on && $0 == "" { exit } on' \
        "$T/$1.out"
}

# check_default_lab NAME MIN_S MAX_S DURATION_S WARMUP_S [ARGS...] : everything a user relies
# on, for "hopbench ARGS...".
check_default_lab() {
    local name=$1 min_s=$2 max_s=$3 dur=$4 warm=$5 n f j spid title tab wall_s
    shift 5
    wall_s=$(awk -v ms="$WALL_MS" 'BEGIN { printf "%.1f", ms / 1000 }')
    check_eq "$name: exit 0" 0 "$RC"
    [ "$RC" = 0 ] || sed 's/^/# /' "$T/$name.err" | head -n 20
    check "$name: nothing on stderr" test ! -s "$T/$name.err"

    # The tables: one per size, each with tcp and unix rows for connect and reuse, and the
    # unix÷tcp ratio of each mode.
    for title in "64 B" "4 KiB" "64 KiB"; do
        tab=$(size_table "$name" "$title")
        if [ -z "$tab" ]; then
            not_ok "$name: a table for $title" "no '$title echo round trips' in $name.out"
            continue
        fi
        ok "$name: a table for $title"
        for mode in connect reuse; do
            for tr in tcp unix; do
                n=$(printf '%s\n' "$tab" | grep -Ec "^  $mode +$tr +[0-9][0-9,]* +[0-9.]+ ")
                check_eq "$name: $title table: one $mode $tr row" 1 "$n"
            done
        done
        n=$(printf '%s\n' "$tab" | grep -Ec '^ +unix÷tcp +[0-9.]+x +[0-9.]+x')
        check_eq "$name: $title table: a unix÷tcp ratio row per mode" 2 "$n"
        n=$(printf '%s\n' "$tab" | grep -Ec '^  (connect|reuse) +(tcp|unix) .* 0$')
        check_eq "$name: $title table: every row shows 0 errors" 4 "$n"
    done

    # The evidence: written to the cwd, the path printed relative to it.
    f=$(sed -n 's/^evidence: //p' "$T/$name.out")
    j=$T/$name.cwd/$f
    if [ -n "$f" ] && [ -f "$j" ]; then
        ok "$name: the printed evidence path exists ($f)"
    else
        not_ok "$name: the printed evidence path exists" "evidence line '$f'; cwd holds: $(ls -A "$T/$name.cwd")"
        return
    fi
    check "$name: evidence named hopbench-lab-DATE-TIME.json" \
        sh -c "echo '$f' | grep -Eqx 'hopbench-lab-[0-9]{8}-[0-9]{6}\.json'"
    check_eq "$name: the cwd holds the evidence and nothing else" "$f" "$(ls -A "$T/$name.cwd")"
    rcheck "$name: a lab document, valid, not interrupted" "$j" \
        '.schema == "hopbench.evidence/1" and .command == "lab" and .valid == true
         and .interrupted == false'
    rcheck "$name: 12 runs, each transport x mode x size once" "$j" \
        '(.runs | length) == 12 and ([.runs[] | [.transport, .mode, .size]] | sort) ==
         ([["tcp","unix"][] as $t | ["connect","reuse"][] as $m | [64,4096,65536][] as $s
           | [$t,$m,$s]] | sort)'
    rcheck "$name: every run valid, with zero errors, measured cleanly" "$j" \
        'all(.runs[]; .valid == true and .interrupted == false and errors_zero and .ops > 0
             and hist_ok and lat_ok and .proto == "echo" and .size_of == "request")'
    rcheck "$name: one connection, one thread, no pipelining" "$j" \
        'all(.runs[]; .connections == 1 and .threads == 1 and .pipeline == 1 and .count == 0)'
    rcheck "$name: cells are ${dur} s after ${warm} s" "$j" \
        "all(.runs[]; .duration_s == $dur and .warmup_s == $warm
             and .window_s >= $dur * 0.95 and .window_s < $dur + 0.5)"
    rcheck "$name: connect cells connect per op" "$j" \
        'all(.runs[] | select(.mode == "connect"); .connects >= .ops and .connects <= .ops + 1)'
    rcheck "$name: loopback TCP and a socket in TMPDIR" "$j" \
        'all(.runs[] | select(.transport == "tcp"); .endpoint | test("^tcp://127\\.0\\.0\\.1:[1-9][0-9]*$"))
         and all(.runs[] | select(.transport == "unix");
                 .endpoint | startswith("unix:'"$T/$name"'.tmp/hopbench-lab."))'
    rcheck "$name: placement --pin $want_pin, the server's CPUs set by the lab" "$j" \
        ".placement.pin == \"$want_pin\" and .placement.server_cpus_source == \"set\""
    rcheck "$name: the argv as typed" "$j" \
        "(.argv | length) == $(($# + 1)) and (.argv[0] | endswith(\"hopbench\"))"

    # The wall time: measured from outside, and as the lab records it.
    check "$name: took ${wall_s} s, within README's figure (${min_s}..${max_s} s)" \
        test "$WALL_MS" -ge $((min_s * 1000)) -a "$WALL_MS" -le $((max_s * 1000))
    rcheck "$name: elapsed_s recorded, within ${min_s}..${max_s} s and the wall time" "$j" \
        ".elapsed_s >= $min_s and .elapsed_s <= $max_s and .elapsed_s <= $WALL_MS / 1000 + 0.05"
    echo "# $name: wall ${wall_s} s, elapsed_s $(jq -r '.elapsed_s' "$j" 2>/dev/null)"

    # Nothing left behind: the server child, its socket directory.
    spid=$(sed -n 's/^hopbench .* lab: echo over .*; server pid \([0-9][0-9]*\)$/\1/p' "$T/$name.out")
    if [ -z "$spid" ]; then
        not_ok "$name: the header names the server pid" "no 'server pid N' in $name.out"
    else
        rcheck "$name: the evidence names the same server" "$j" \
            ".server == \"built-in echo (pid $spid)\""
        check "$name: server pid $spid gone" sh -c "! kill -0 $spid 2>/dev/null"
    fi
    check "$name: no hopbench process left in its cwd" no_hopbench_in "$T/$name.cwd"
    check "$name: the private temporary directory removed" \
        sh -c "[ -z \"\$(ls -A '$T/$name.tmp')\" ]"
}

# The whole default lab: a user types `hopbench` and nothing else.
lab_as_user default
check_default_lab default "$LAB_MIN_S" "$LAB_MAX_S" 3 1

# `hopbench --quick`, the same matrix with shorter cells.
lab_as_user quick --quick
check_default_lab quick "$QUICK_MIN_S" "$QUICK_MAX_S" 0.75 0.25 --quick

done_testing
