#!/bin/bash
# lab: the default experiment. Its child server and private directory must be
# gone after every exit, Ctrl-C included; the evidence covers every cell.
# shellcheck disable=SC2016 # $vars in single quotes are jq variables
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

# Each lab runs in its own cwd ($T/NAME.cwd) with TMPDIR=$T/NAME.tmp, so that
# what it leaves behind can be listed.
lab_dirs() {
    mkdir -p "$T/$1.cwd" "$T/$1.tmp"
}

# lab_fg NAME LAB-ARGS... : runs the lab in the foreground (time-limited); sets RC.
lab_fg() {
    local name=$1
    shift
    lab_dirs "$name"
    RC=0
    (cd "$T/$name.cwd" && TMPDIR=$T/$name.tmp exec timeout -k 5 90 "$HOPBENCH" lab "$@") \
        >"$T/$name.out" 2>"$T/$name.err" || RC=$?
}

# lab_server_pid NAME : the server pid from the lab's header line.
lab_server_pid() {
    sed -n 's/^hopbench .* lab: echo over .*; server pid \([0-9][0-9]*\)$/\1/p' "$T/$1.out" | head -n 1
}

# check_lab_gone NAME
check_lab_gone() {
    local name=$1 spid
    spid=$(lab_server_pid "$name")
    if [ -z "$spid" ]; then
        not_ok "$name: header names the server pid" "no 'server pid N' in $T/$name.out"
    else
        ok "$name: header names the server pid ($spid)"
        check "$name: server pid $spid gone afterwards" sh -c "! kill -0 $spid 2>/dev/null"
    fi
    check "$name: no hopbench process left in the lab's cwd" no_hopbench_in "$T/$name.cwd"
    check "$name: private temporary directory removed" \
        sh -c "[ -z \"\$(ls -A '$T/$name.tmp')\" ]"
}

# wait_jsonl FILE N PID : waits (at most 10 s) until FILE has N lines or PID is gone.
wait_jsonl() {
    local i
    for ((i = 0; i < 200; i++)); do
        [ "$(wc -l 2>/dev/null <"$1" || echo 0)" -ge "$2" ] && return 0
        alive "$3" || return 1
        sleep 0.05
    done
    return 1
}

cpus=$(nproc)
if [ "$cpus" -ge 2 ]; then want_pin="split"; else want_pin="same"; fi
# Cells of 0.25 s where the checks want every run valid (an op done, no error): SAN times that
# under a sanitizer, where a TSan lab on a busy 2-CPU box finished a cell of 0.2-0.3 s with no
# op done in 1 of 4-7 tries.
CELL_S=$(san_s 0.25)

# --- the quick lab, two sizes ---------------------------------------------------

j=$T/quick.json
lab_fg quick --quick --sizes 64,4KiB --json "$j"
check_eq "lab --quick: exit 0" 0 "$RC"
[ "$RC" = 0 ] || sed 's/^/# /' "$T/quick.err"
check "lab --quick: evidence path printed" grep -qx "evidence: $j" "$T/quick.out"
rcheck "lab --quick: 8 runs, all valid" "$j" \
    '.schema == "hopbench.evidence/1" and .command == "lab" and .valid == true
     and .interrupted == false and (.runs | length) == 8 and all(.runs[]; .valid == true)'
rcheck "lab --quick: every transport x mode x size cell exactly once" "$j" \
    '[.runs[] | [.transport, .mode, .size]] | sort ==
     ([["tcp","unix"][] as $t | ["connect","reuse"][] as $m | [64,4096][] as $s | [$t,$m,$s]] | sort)'
rcheck "lab --quick: cells measured cleanly" "$j" \
    'all(.runs[]; .proto == "echo" and .ops > 0 and errors_zero and hist_ok and lat_ok
         and .connections == 1 and .threads == 1 and .pipeline == 1)'
rcheck "lab --quick: cells are 0.75 s after 0.25 s" "$j" \
    'all(.runs[]; .duration_s == 0.75 and .warmup_s == 0.25 and .window_s >= 0.7 and .window_s < 1.2)'
rcheck "lab --quick: connect cells connect per op" "$j" \
    'all(.runs[] | select(.mode == "connect"); .connects >= .ops and .connects <= .ops + 1)'
rcheck "lab --quick: endpoints are loopback TCP and a socket in TMPDIR" "$j" \
    'all(.runs[] | select(.transport == "tcp"); .endpoint | test("^tcp://127\\.0\\.0\\.1:[1-9][0-9]*$"))
     and all(.runs[] | select(.transport == "unix");
             .endpoint | startswith("unix:'"$T"'/quick.tmp/hopbench-lab."))'
rcheck "lab --quick: placement.pin $want_pin recorded" "$j" ".placement.pin == \"$want_pin\""
if [ $want_pin = split ]; then
    rcheck "lab --quick: split CPUs are pinned and disjoint" "$j" \
        '.placement | .client_cpus != "any" and .server_cpus != "any"
         and .client_cpus != .server_cpus'
fi
check "lab --quick: placement line printed" grep -q "^placement: --pin $want_pin " "$T/quick.out"
spid=$(lab_server_pid quick)
rcheck "lab --quick: server recorded as the built-in child" "$j" \
    ".server == \"built-in echo (pid ${spid:-?})\""
check_eq "lab --quick: no line per run without -v" 0 \
    "$(grep -Ec '^  (connect|reuse) +(tcp|unix) +[0-9]+ B: ' "$T/quick.out")"
check "lab --quick: ends with the bottom line, then the evidence" \
    sh -c "tail -n 2 '$T/quick.out' | head -n 1 | grep -Eq '^  [0-9]+ of 8 runs noisy' &&
           tail -n 1 '$T/quick.out' | grep -q '^evidence: '"
# One run per transport: no verdict is possible (Mann-Whitney's smallest p with 1+1 runs is 1):
# one line says so, then per size and mode the ratios unix/tcp of the medians alone.
check "lab --quick: the bottom line says no verdict is possible with n=1+1, nothing priced" \
    grep -qx "bottom line: no verdict is possible with n=1+1: Mann-Whitney's smallest p is then 1, and a difference needs p < 0.05 (4 runs a side can reach 0.029); the ratios unix/tcp of the medians only, nothing priced" \
    "$T/quick.out"
check_eq "lab --quick: the bottom line's grid, a row of 5 ratios per size and mode" 4 \
    "$(sed -n '/^bottom line: no verdict/,/^evidence: /p' "$T/quick.out" |
        grep -Ec '^  (64 B|4 KiB) (connect|reuse) +([0-9.]+× +){4}[0-9.]+×$')"
check "lab --quick: no verdict, no cost sentence in the bottom line" \
    sh -c "! sed -n '/^bottom line: /,\$p' '$T/quick.out' | grep -q 'significant\|^  cost'"
check "lab --quick: a table per size" \
    sh -c "grep -q '^64 B echo round trips' '$T/quick.out' &&
           grep -q '^4 KiB echo round trips' '$T/quick.out'"
check_eq "lab --quick: unix÷tcp rows (2 sizes x 2 modes)" 4 \
    "$(grep -Ec '^ +unix÷tcp +[0-9.]+×' "$T/quick.out")"
check "lab --quick: --json given, nothing else written to cwd" \
    sh -c "[ -z \"\$(ls -A '$T/quick.cwd')\" ]"
check_lab_gone quick

# --- without --json: hopbench-lab-DATE.json in the cwd ------------------------------

lab_fg nojson --sizes 64 -d "$CELL_S" --warmup 0.15
check_eq "lab (no --json): exit 0" 0 "$RC"
files=("$T"/nojson.cwd/hopbench-lab-*.json)
if [ "${#files[@]}" -eq 1 ] && [ -f "${files[0]}" ]; then
    ok "lab (no --json): one hopbench-lab-*.json in the cwd"
    f=$(basename "${files[0]}")
    check "lab (no --json): name is hopbench-lab-DATE-TIME.json" \
        sh -c "echo '$f' | grep -Eqx 'hopbench-lab-[0-9]{8}-[0-9]{6}\.json'"
    check "lab (no --json): 'evidence: $f' printed" grep -qx "evidence: $f" "$T/nojson.out"
    rcheck "lab (no --json): 4 valid runs" "${files[0]}" \
        '(.runs | length) == 4 and .valid == true and all(.runs[]; .size == 64 and .ops > 0)'
    check "lab (no --json): no temporary evidence file left" \
        sh -c "[ \$(ls -A '$T/nojson.cwd' | wc -l) -eq 1 ]"
else
    not_ok "lab (no --json): one hopbench-lab-*.json in the cwd" "found: $(ls -A "$T/nojson.cwd")"
fi
check_lab_gone nojson

# --- --wait block: client and lab server both wait in recv, on both transports ----------

j=$T/lab_block.json
lab_fg lab_block --wait block --sizes 64 -d "$CELL_S" --warmup 0.15 --json "$j"
check_eq "lab --wait block: exit 0" 0 "$RC"
rcheck "lab --wait block: 4 valid runs, reuse recorded as wait block, connect as epoll" "$j" \
    '.valid == true and (.runs | length) == 4 and all(.runs[]; .ops > 0)
     and all(.runs[]; .wait == (if .mode == "reuse" then "block" else "epoll" end))'
check "lab --wait block: printed with the placement" \
    grep -q '^placement: --pin .*; --wait block$' "$T/lab_block.out"
check_lab_gone lab_block

# --- the default wait: block in the reuse cells with one kept connection per thread ------
# (the quick lab above ran with the default: -c 1 -t 1, no --pipeline, no --rates)

rcheck "lab default: reuse cells wait as --wait block, connect cells poll" "$T/quick.json" \
    'all(.runs[]; .wait == (if .mode == "reuse" then "block" else "epoll" end))'
check "lab default: the placement line says which cells block" \
    grep -q '^placement: --pin .*; --wait block in the reuse cells .*, epoll in the connect cells$' \
    "$T/quick.out"
for args in "--wait epoll" "-c 2 -t 1" "--pipeline 2"; do
    name=lab_epoll_${args//[^a-z0-9]/_}
    # shellcheck disable=SC2086 # $args is a list of options
    lab_fg "$name" $args --sizes 64 -d "$CELL_S" --warmup 0.15 --json "$T/$name.json"
    check_eq "lab $args: exit 0" 0 "$RC"
    rcheck "lab $args: every cell polls (wait epoll)" "$T/$name.json" \
        '(.runs | length) == 4 and all(.runs[]; .wait == "epoll" and .ops > 0)'
    check "lab $args: printed with the placement" \
        grep -q '^placement: --pin .*; --wait epoll$' "$T/$name.out"
    check_lab_gone "$name"
done

# --- --pin same / --pin none ------------------------------------------------------

for pin in same none; do
    j=$T/pin_$pin.json
    lab_fg "pin_$pin" --pin $pin --sizes 64 -d "$CELL_S" --warmup 0.15 --json "$j"
    check_eq "lab --pin $pin: exit 0" 0 "$RC"
    rcheck "lab --pin $pin: placement.pin recorded, 4 valid runs" "$j" \
        ".placement.pin == \"$pin\" and .valid == true and (.runs | length) == 4"
    check "lab --pin $pin: placement line printed" grep -q "^placement: --pin $pin " "$T/pin_$pin.out"
    if [ $pin = same ]; then
        rcheck "lab --pin same: client and server on one CPU" "$j" \
            '.placement | .client_cpus == .server_cpus and (.client_cpus | test("^[0-9]+$"))'
    else
        rcheck "lab --pin none: nothing pinned" "$j" \
            '.placement | .client_cpus == "any" and .server_cpus == "any"'
    fi
    check_lab_gone "pin_$pin"
done

# --- Ctrl-C -----------------------------------------------------------------------

# lab_interrupt NAME HOW : starts "lab --duration 5" in the background, sends SIGINT
# after ~2 s (HOW = pid: to the lab alone; group: to its whole process group, as a
# terminal's Ctrl-C does, the child server included) and checks what is left.
lab_interrupt() {
    local name=$1 how=$2 j=$T/$1.json pid i spid t0 dt
    lab_dirs "$name"
    if [ "$how" = group ]; then
        spawn_cmd "$name" env -C "$T/$name.cwd" TMPDIR="$T/$name.tmp" \
            setsid "$HOPBENCH" lab --duration 5 --json "$j"
    else
        spawn_cmd "$name" env -C "$T/$name.cwd" TMPDIR="$T/$name.tmp" \
            "$HOPBENCH" lab --duration 5 --json "$j"
    fi
    pid=$SPAWNED
    for ((i = 0; i < 100; i++)); do
        spid=$(lab_server_pid "$name")
        [ -n "$spid" ] && break
        alive "$pid" || break
        sleep 0.05
    done
    if [ -z "$spid" ]; then
        not_ok "$name: lab started" "no header: $(head -c 300 "$T/$name.out" "$T/$name.err")"
        stop_pid "$pid"
        return
    fi
    check "$name: server child running while the lab runs" alive "$spid"
    sleep 2
    t0=$(now_ms)
    if [ "$how" = group ]; then
        if [ "$(ps -o pgid= -p "$pid" | tr -d ' ')" = "$pid" ]; then
            kill -INT -- "-$pid"
        else
            not_ok "$name: lab leads its own process group" "setsid did not exec in place"
            kill -INT "$pid"
        fi
    else
        kill -INT "$pid"
    fi
    reap "$pid" 10
    dt=$(($(now_ms) - t0))
    check_eq "$name: exit 130" 130 "$RC"
    check "$name: exits promptly (${dt} ms < 5 s)" test "$dt" -lt 5000
    check "$name: evidence path printed" grep -qx "evidence: $j" "$T/$name.out"
    rcheck "$name: JSON interrupted, at least 1 run, fewer than 12" "$j" \
        '.interrupted == true and (.runs | length) >= 1 and (.runs | length) < 12
         and .runs[-1].interrupted == true and .valid == true and all(.runs[]; errors_zero)'
    rcheck "$name: the first cell kept its ops" "$j" '.runs[0] | .ops > 0 and hist_ok'
    check "$name: table printed" grep -q '^64 B echo round trips' "$T/$name.out"
    check_lab_gone "$name"
}

lab_interrupt lab_int pid
lab_interrupt lab_int_group group

# Ctrl-C with --jsonl: every finished cell is already on disk, and in the evidence.
mkdir -p "$T/lj.cwd" "$T/lj.tmp"
spawn_cmd lj env -C "$T/lj.cwd" TMPDIR="$T/lj.tmp" "$HOPBENCH" lab --quick --sizes 64,4KiB \
    --jsonl "$T/lj.jsonl" --json "$T/lj.json"
lj_pid=$SPAWNED
# Two cells on disk while the lab runs (a header and two run lines), then Ctrl-C. (A fixed
# 3.5 s held two cells of 1 s with little to spare under TSan, whose quick lab took 16 s.)
check "lab --jsonl: finished cells streamed while it ran" wait_jsonl "$T/lj.jsonl" 3 "$lj_pid"
kill -INT "$lj_pid"
reap "$lj_pid" 10
check_eq "lab --jsonl Ctrl-C: exit 130" 130 "$RC"
lj_lines=$(jq -s 'map(select(.record == "run")) | length' "$T/lj.jsonl" 2>/dev/null || echo 0)
check "lab --jsonl: finished cells streamed (>= 2 lines)" test "$lj_lines" -ge 2
rcheck "lab --jsonl: the evidence holds the same runs as the JSONL" "$T/lj.json" \
    '.interrupted == true and (.runs | length) == '"$lj_lines"
check "lab --jsonl: a header line, then run records" \
    jtrue -s '.[0].record == "header" and .[0].command == "lab" and (.[0].server | test("^built-in echo"))
      and (.[1:] | all(.[]; .record == "run" and has("cell") and has("histogram")))' "$T/lj.jsonl"

# The unix connect cell cut short: shown and marked, but no unix÷tcp ratio is drawn from it.
lab_dirs lc
spawn_cmd lc env -C "$T/lc.cwd" TMPDIR="$T/lc.tmp" "$HOPBENCH" lab --sizes 64 -d 1.5 --warmup 0.1 \
    --jsonl "$T/lc.jsonl" --json "$T/lc.json"
lc_pid=$SPAWNED
wait_jsonl "$T/lc.jsonl" 2 "$lc_pid"
sleep 0.5
kill -INT "$lc_pid"
reap "$lc_pid" 10
check_eq "lab, a cell cut short: exit 130" 130 "$RC"
rcheck "lab, a cell cut short: tcp connect whole, unix connect cut short" "$T/lc.json" \
    '[.runs[] | [.transport, .mode, .interrupted]] == [["tcp","connect",false],["unix","connect",true]]'
check "lab, a cell cut short: marked" \
    grep -Eq '^cut short: unix connect 64 B: Ctrl-C ended it after [0-9.]+ s' "$T/lc.out"
check "lab, a cell cut short: no unix÷tcp ratio from it" \
    grep -Eq '^ +unix÷tcp +- +\(no ratio: a run is invalid or was cut short\)$' "$T/lc.out"
check_lab_gone lc

# GNU timeout signals the lab and then its process group (the server child ignores SIGINT):
# one interrupt, so the evidence and the JSONL hold every finished cell and nothing is left.
for i in 1 2 3; do
    lab_dirs "to$i"
    RC=0
    (cd "$T/to$i.cwd" && TMPDIR=$T/to$i.tmp exec timeout -k 5 --preserve-status -s INT 2.5 \
        "$HOPBENCH" lab --sizes 64,4KiB -d 0.3 --warmup 0.1 --jsonl "$T/to$i.jsonl" \
        --json "$T/to$i.json") >"$T/to$i.out" 2>"$T/to$i.err" || RC=$?
    check_eq "lab timeout -s INT ($i): exit 130" 130 "$RC"
    rcheck "lab timeout -s INT ($i): evidence written, interrupted (at most the last run cut short)" "$T/to$i.json" \
        '.interrupted == true and (.runs | length) >= 2 and all(.runs[:-1][]; .interrupted == false)'
    check_eq "lab timeout -s INT ($i): the JSONL holds the evidence's runs" \
        "$(jq -c '[.runs[] | [.cell, .rep, .ops]]' "$T/to$i.json" 2>&1)" \
        "$(jq -c -s '[.[] | select(.record == "run") | [.cell, .rep, .ops]]' "$T/to$i.jsonl" 2>&1)"
    check "lab timeout -s INT ($i): the table and the evidence path printed" \
        sh -c "grep -q '^64 B echo round trips' '$T/to$i.out' &&
               grep -qx 'evidence: $T/to$i.json' '$T/to$i.out'"
    check_lab_gone "to$i"
done

# A second Ctrl-C more than 250 ms after the first aborts at once. The server child is
# frozen (SIGSTOP) in the middle of a cell, so the first Ctrl-C's orderly path (which ends
# with stopping the server) cannot finish; the second exits 130 at once, the JSONL stays
# whole, and the server and the private directory are gone.
lab_dirs ab
spawn_cmd ab env -C "$T/ab.cwd" TMPDIR="$T/ab.tmp" "$HOPBENCH" lab --sizes 64,4KiB -d 0.4 \
    --warmup 0.1 --jsonl "$T/ab.jsonl" --json "$T/ab.json"
ab_pid=$SPAWNED
wait_jsonl "$T/ab.jsonl" 3 "$ab_pid"
ab_spid=$(lab_server_pid ab)
if [ -n "$ab_spid" ] && alive "$ab_pid"; then
    kill -STOP "$ab_spid"
    sleep 0.2
    kill -INT "$ab_pid"
    sleep 0.5
    check "second Ctrl-C: the first one left the lab waiting for its frozen server" alive "$ab_pid"
    t0=$(now_ms)
    kill -INT "$ab_pid"
    reap "$ab_pid" 5
    dt=$(($(now_ms) - t0))
    check_eq "second Ctrl-C: exit 130" 130 "$RC"
    # at once: under 1 s (SAN s: a TSan build took 378 ms to exit on a busy box), where the
    # first Ctrl-C's path waits for the frozen server for good
    check "second Ctrl-C: at once (${dt} ms < $((1000 * SAN)))" test "$dt" -lt $((1000 * SAN))
    check "second Ctrl-C: every JSONL line whole" \
        jtrue -s 'length >= 2 and .[0].record == "header" and all(.[1:][]; has("histogram"))' "$T/ab.jsonl"
    check "second Ctrl-C: the frozen server is gone" wait_gone "$ab_spid" 3
    check_lab_gone ab
else
    not_ok "second Ctrl-C: lab started" "$(head -c 300 "$T/ab.out" "$T/ab.err")"
fi
[ -n "$ab_spid" ] && kill -CONT "$ab_spid" 2>/dev/null

# --- Ctrl-C while the lab sets up -----------------------------------------------------------
# strace holds the lab's fork of its server for 1.5 s, when its directory and socket already
# exist. A SIGINT then (its default disposition restored, as from a terminal) must not leak
# them: the handler is in place and the signal held until the lab knows what to clean up,
# so the lab stops before its first cell, writes the evidence (no runs) and removes its
# directory. (It used to die there by default action, leaving the directory.)
if ! strace_usable child; then
    ok "Ctrl-C while setting up # SKIP strace cannot run here (not installed, or ptrace denied)"
else
    lab_dirs setup
    spawn_cmd setup env ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
        strace -f -qq -o /dev/null -e trace=clone -e inject=clone:delay_exit=1500000:when=1 \
        env -C "$T/setup.cwd" --default-signal=INT TMPDIR="$T/setup.tmp" "$HOPBENCH" lab \
        --sizes 64 -d 0.1 --warmup 0.05 --json "$T/setup.json"
    setup_st=$SPAWNED
    for ((i = 0; i < 100; i++)); do
        compgen -G "$T/setup.tmp/hopbench-lab.*/echo.sock" >/dev/null && break
        alive "$setup_st" || break
        sleep 0.05
    done
    setup_pid=$(pgrep -P "$setup_st")
    check "Ctrl-C while setting up: signalled after the socket exists, before the header" \
        sh -c "[ -n '$setup_pid' ] && [ ! -s '$T/setup.out' ] &&
               ls '$T/setup.tmp'/hopbench-lab.*/echo.sock >/dev/null 2>&1"
    [ -n "$setup_pid" ] && kill -INT "$setup_pid"
    reap "$setup_st" 10
    check_eq "Ctrl-C while setting up: exit 130" 130 "$RC"
    rcheck "Ctrl-C while setting up: evidence written, interrupted, no runs" "$T/setup.json" \
        '.interrupted == true and (.runs | length) == 0'
    check_lab_gone setup
fi

# --- stdout's reader goes away: hopbench lab | head -n 1 ----------------------------------
# SIGPIPE is ignored, and the lab looks for a gone reader (POLLERR on fd 1) before each cell:
# it stops as interrupted, writes the evidence, stops its server and removes its directory.
# (SIGPIPE used to kill it, and its directory stayed.)
lab_dirs pipe
RC=0
(cd "$T/pipe.cwd" || exit 1
    TMPDIR=$T/pipe.tmp timeout -k 5 60 "$HOPBENCH" lab --quick --sizes 64 --json "$T/pipe.json" \
        2>"$T/pipe.err" | head -n 1 >"$T/pipe.out"
    exit "${PIPESTATUS[0]}") || RC=$?
check_eq "lab | head -n 1: exit 130" 130 "$RC"
check "lab | head -n 1: the header got through" grep -q '^hopbench .* lab: echo over ' "$T/pipe.out"
check "lab | head -n 1: nothing on stderr" test ! -s "$T/pipe.err"
rcheck "lab | head -n 1: evidence written, interrupted, what was measured whole" "$T/pipe.json" \
    '.command == "lab" and .interrupted == true and (.runs | length) < 4
     and all(.runs[]; .ops > 0 and .interrupted == false and errors_zero)'
check_lab_gone pipe

# --- stdout cannot be written, but has a reader: hopbench lab >/dev/full -------------------
# Only a reader that is gone stops the work: a write error such as ENOSPC does not. Every cell
# is measured, the evidence is complete (not interrupted), stderr says so once, and the exit
# is 1. (Any write error used to count as a gone reader: exit 130 after the first cell.)
lab_dirs full
RC=0
(cd "$T/full.cwd" && TMPDIR=$T/full.tmp exec timeout -k 5 60 "$HOPBENCH" lab --quick --sizes 64 \
    --json "$T/full.json") >/dev/full 2>"$T/full.err" || RC=$?
check_eq "lab >/dev/full: exit 1" 1 "$RC"
check "lab >/dev/full: stderr says once that stdout could not be written, and where the evidence is" \
    sh -c "[ \"\$(cat '$T/full.err')\" = 'hopbench: stdout could not be written; evidence: $T/full.json' ]"
rcheck "lab >/dev/full: evidence complete, every cell measured, not interrupted" "$T/full.json" \
    '.command == "lab" and .interrupted == false and (.runs | length) == 4
     and all(.runs[]; .ops > 0 and .interrupted == false and errors_zero)'
check "lab >/dev/full: private temporary directory removed" \
    sh -c "[ -z \"\$(ls -A '$T/full.tmp')\" ]"

# --- SIGHUP (the terminal went away) and SIGQUIT end the lab as Ctrl-C does ----------------
# Sent once the first cell is on disk (--jsonl): exit 130, the evidence holds what was
# measured, the server and the directory are gone. (Their default actions used to kill the
# lab with no evidence written, and leave its directory.) SIGHUP at its default in the lab: a
# suite run under nohup hands it down ignored, and the lab keeps it so (below). The first cell
# must have done ops: 0.3 s, SAN times that under a sanitizer (a TSan lab on a busy box
# finished a cell of 0.3 s with none, as CELL_S above says).
for sig in HUP QUIT; do
    name=sig_$sig
    lab_dirs "$name"
    spawn_cmd "$name" env -C "$T/$name.cwd" --default-signal=HUP TMPDIR="$T/$name.tmp" \
        "$HOPBENCH" lab --sizes 64 -d "$(san_s 0.3)" --warmup 0.1 --jsonl "$T/$name.jsonl" \
        --json "$T/$name.json"
    sig_pid=$SPAWNED
    wait_jsonl "$T/$name.jsonl" 2 "$sig_pid"
    kill -"$sig" "$sig_pid"
    reap "$sig_pid" 10
    check_eq "lab SIG$sig: exit 130" 130 "$RC"
    check "lab SIG$sig: table and evidence path printed" \
        sh -c "grep -q '^64 B echo round trips' '$T/$name.out' &&
               grep -qx 'evidence: $T/$name.json' '$T/$name.out'"
    rcheck "lab SIG$sig: evidence interrupted, holding the cells measured" "$T/$name.json" \
        '.interrupted == true and (.runs | length) >= 1 and (.runs | length) < 4
         and (.runs[0] | .ops > 0 and .interrupted == false and hist_ok) and all(.runs[]; errors_zero)'
    check_eq "lab SIG$sig: the JSONL holds the evidence's runs" \
        "$(jq -c '[.runs[] | [.cell, .rep, .ops]]' "$T/$name.json" 2>&1)" \
        "$(jq -c -s '[.[] | select(.record == "run") | [.cell, .rep, .ops]]' "$T/$name.jsonl" 2>&1)"
    check_lab_gone "$name"
done

# A SIGHUP ignored from the start (nohup) stays ignored: the lab goes on to its end.
lab_dirs nohup
spawn_cmd nohup env -C "$T/nohup.cwd" --ignore-signal=HUP TMPDIR="$T/nohup.tmp" "$HOPBENCH" lab \
    --sizes 64 -d "$CELL_S" --warmup 0.05 --jsonl "$T/nohup.jsonl" --json "$T/nohup.json"
nohup_pid=$SPAWNED
wait_jsonl "$T/nohup.jsonl" 2 "$nohup_pid"
kill -HUP "$nohup_pid"
reap "$nohup_pid" 10
check_eq "lab under nohup, SIGHUP: exit 0" 0 "$RC"
rcheck "lab under nohup, SIGHUP: every cell measured, not interrupted" "$T/nohup.json" \
    '.interrupted == false and (.runs | length) == 4 and .valid == true'
check_lab_gone nohup

# --- the lab's server exits on its own -----------------------------------------------------
# The lab watches its server child (SIGCHLD, and waitpid before each cell): killed in the middle
# of a cell, it ends that cell at once instead of counting refused connections, says how the
# server ended in one line, writes the evidence (that cell kept, cut short) and exits 1.

# lab_server_exit NAME SIGNAL WANT-ERE LAB-ARGS... : starts the lab with --jsonl, waits until
# its first cell is on disk and 0.5 s more, sends SIGNAL to the server child, and checks the
# exit, the one stderr line (WANT-ERE, after "hopbench lab: the echo server (pid N) ") and
# that the evidence holds the runs finished before. Sets SPID.
lab_server_exit() {
    local name=$1 sig=$2 want=$3 j=$T/$1.json pid
    shift 3
    lab_dirs "$name"
    spawn_cmd "$name" env -C "$T/$name.cwd" TMPDIR="$T/$name.tmp" "$HOPBENCH" lab "$@" \
        --jsonl "$T/$name.jsonl" --json "$j"
    pid=$SPAWNED
    wait_jsonl "$T/$name.jsonl" 2 "$pid"
    sleep 0.5
    SPID=$(lab_server_pid "$name")
    if [ -z "$SPID" ] || ! alive "$pid"; then
        not_ok "$name: lab running with a server" "$(head -c 300 "$T/$name.out" "$T/$name.err")"
        stop_pid "$pid"
        return 1
    fi
    # The server is the lab's only child besides its watcher: the one the header names.
    check_eq "$name: the header's server pid is the lab's child" "$SPID" \
        "$(pgrep -P "$pid" | grep -vx "$(pgrep -P "$pid" -x hopbench-watch)")"
    kill "-$sig" "$SPID"
    reap "$pid" 20
    check_eq "$name: exit 1" 1 "$RC"
    one_line "$name: one stderr line naming the server's exit" "$T/$name.err" \
        "^hopbench lab: the echo server \(pid $SPID\) $want$"
    check "$name: evidence path printed" grep -qx "evidence: $j" "$T/$name.out"
    rcheck "$name: evidence interrupted, holding the runs finished before, each whole" "$j" \
        '.interrupted == true and (.runs | length) >= 1
         and all(.runs[] | select(.interrupted == false); .valid == true and errors_zero and .ops > 0)'
    check_eq "$name: the evidence holds the JSONL's runs" \
        "$(jq -c '[.runs[] | [.cell, .rep, .ops]]' "$j" 2>&1)" \
        "$(jq -c -s '[.[] | select(.record == "run") | [.cell, .rep, .ops]]' "$T/$name.jsonl" 2>&1)"
    check_lab_gone "$name"
}

# Killed (SIGKILL) during a 3 s cell: that cell is the last run, cut short, and named.
if lab_server_exit skill KILL 'was killed by SIGKILL during cell (tcp|unix)/(connect|reuse)/64 B' \
    --sizes 64 -d 3 --warmup 0.1; then
    cell=$(sed -n 's#.* during cell \([a-z]*/[a-z]*\)/64 B$#\1#p' "$T/skill.err")
    rcheck "SIGKILL: the cell named is the last run, cut short, the others not" "$T/skill.json" \
        '(.runs | length) >= 2 and (.runs[-1] | "\(.transport)/\(.mode)" == "'"$cell"'"
         and .interrupted == true and .window_s < 3) and all(.runs[:-1][]; .interrupted == false)'
    check "SIGKILL: a 'cut short:' line names the server's exit" \
        grep -Eq "^cut short: .* 64 B: the server's exit ended it after [0-9.]+ s of its window" \
        "$T/skill.out"
fi

# SIGTERM: the server shuts down cleanly, so it exits with a status, not by a signal.
lab_server_exit sterm TERM 'exited with status 0 during cell (tcp|unix)/(connect|reuse)/64 B' \
    --sizes 64 -d 3 --warmup 0.1

# Between cells (in a 4 s --cooldown): named after the last cell, which is whole.
if lab_server_exit sgap KILL 'was killed by SIGKILL after cell tcp/connect/64 B' \
    --sizes 64 -d 0.3 --warmup 0.1 --cooldown 4; then
    rcheck "between cells: the one cell measured is whole" "$T/sgap.json" \
        '[.runs[] | [.transport, .mode, .interrupted]] == [["tcp","connect",false]]'
fi

# A stop signal that reaches the server too (timeout -s TERM signals the lab, then its process
# group; the server exits on SIGTERM) is an interrupt, not the server dying: exit 130, no line
# about the server. (Exit 2 if the stopping server failed an op before the load threads saw
# the stop flag: the cut cell then counts errors, as it always did.)
lab_dirs stg
RC=0
(cd "$T/stg.cwd" && TMPDIR=$T/stg.tmp exec timeout -k 5 --preserve-status -s TERM 2.5 \
    "$HOPBENCH" lab --sizes 64,4KiB -d 0.3 --warmup 0.1 --json "$T/stg.json") \
    >"$T/stg.out" 2>"$T/stg.err" || RC=$?
check "timeout -s TERM: an interrupt (exit 130, or 2 with errors), not 1 (exit $RC)" \
    test "$RC" = 130 -o "$RC" = 2
check "timeout -s TERM: no line about the server's exit" \
    sh -c "! grep -q 'server' '$T/stg.err'"
rcheck "timeout -s TERM: evidence interrupted" "$T/stg.json" '.interrupted == true'
check_lab_gone stg

# --reps: every cell repeated, tcp and unix alternating ABBA, summaries per size and mode.
mkdir -p "$T/lr.cwd" "$T/lr.tmp"
(cd "$T/lr.cwd" && TMPDIR="$T/lr.tmp" timeout 60 "$HOPBENCH" lab --sizes 64 --reps 2 -d "$CELL_S" \
    --warmup 0.05 --json "$T/lr.json" >"$T/lr.out" 2>"$T/lr.err")
check_eq "lab --reps 2: exit 0" 0 "$?"
rcheck "lab --reps 2: 8 runs, ABBA within each mode" "$T/lr.json" \
    '[.runs[] | .transport] == ["tcp","unix","unix","tcp","tcp","unix","unix","tcp"]
     and [.runs[] | .rep] == [0,0,1,1,0,0,1,1] and .plan.reps == 2'
rcheck "lab --reps 2: a summary per size and mode, unix against tcp" "$T/lr.json" \
    '(.summary | length) == 2 and all(.summary[]; .summary.cells[1].metrics.ops_per_s.vs_first.n == 2)'
check "lab --reps 2: no summary printed without -v" sh -c "! grep -q 'unix against tcp: median' '$T/lr.out'"
check "lab --reps 2: the tables say which run they show" grep -qx \
    "The tables show each cell's run of median ops/s; the bottom line after them covers all 2 runs." \
    "$T/lr.out"
check "lab --reps 2: no line per run, no noisy: line without -v" \
    sh -c "! grep -Eq '^  (connect|reuse) +(tcp|unix) +64 B: |^noisy: ' '$T/lr.out'"
# The bottom line, last before the evidence: 2 + 2 runs can never be significant (the
# smallest p is 1/3), so it says no verdict is possible and gives per mode the ratios of
# ops/s, p50, p99, client and server CPU alone, each the summary's; the evidence's rows say
# "too few runs", and the grid's values are their ratios.
check "lab --reps 2: the bottom line says no verdict is possible with n=2+2" grep -qx \
    "bottom line: no verdict is possible with n=2+2: Mann-Whitney's smallest p is then 0.33, and a difference needs p < 0.05 (4 runs a side can reach 0.029); the ratios unix/tcp of the medians only, nothing priced" \
    "$T/lr.out"
sed -n '/^bottom line: no verdict/,/^evidence: /p' "$T/lr.out" |
    awk 'NR == 2 { n = split($0, h, /  +/); next }
         NR > 2 && /^  [0-9]+ (B|KiB) / { k = split($0, v, /  +/)
             for (i = 2; i <= n; i++) print v[2] "|" h[i] "|" v[k - n + i] }' >"$T/lr.grid"
check_eq "lab --reps 2: the grid, 2 modes x 5 ratios" 10 "$(wc -l <"$T/lr.grid")"
check "lab --reps 2: every grid value is the evidence's ratio; its rows too few runs, not priced" \
    jtrue -n --slurpfile ev "$T/lr.json" --rawfile g "$T/lr.grid" '
    [$g | split("\n")[] | select(length > 0) | split("|")
     | {cell: .[0], col: .[1], v: (.[2] | rtrimstr("×") | tonumber)}] as $t
    | [$ev[0].bottom_line.rows[] | {cell, r: .ratio, verdict, text, n_base, n_arm,
        col: (if .figure == "ops_per_s" then "ops/s" elif .figure == "p50_ns" then "p50"
              elif .figure == "p99_ns" then "p99" else "CPU " + .who end)}] as $e
    | ($t | length) == ($e | length)
      and all($t[]; . as $x | any($e[]; .cell == $x.cell and .col == $x.col
                                      and ((.r - $x.v) | fabs) <= 0.006 * (1 + .r)))
      and all($e[]; .verdict == "too few runs" and .n_base == 2 and .n_arm == 2
                    and (.text | startswith("too few runs for a verdict (n=2+2): ratio ")))
      and ($ev[0].bottom_line | .verdict_possible == false and all(.cost[]; .priced == false))'
rcheck "lab --reps 2: the bottom line's ratios are the summary's" "$T/lr.json" '
    . as $d | [.summary[] | .mode as $m | .summary.cells[1].metrics | to_entries[]
     | select(.key == "ops_per_s" or .key == "p50_ns" or .key == "p99_ns" or .key == "client_cpu_ns_per_op")
     | {cell: ("64 B " + $m), f: (if .key == "client_cpu_ns_per_op" then "cpu_ns_per_op" else .key end),
        r: .value.vs_first.ratio, lo: .value.vs_first.ci_lo, p: .value.vs_first.p}] | sort
    == ([$d.bottom_line.rows[] | select(.who == null or .who == "client")
         | {cell, f: .figure, r: .ratio, lo: .ci_lo, p}] | sort)'
# -v: each run's line and the summaries as before
mkdir -p "$T/lv.cwd" "$T/lv.tmp"
(cd "$T/lv.cwd" && TMPDIR="$T/lv.tmp" timeout 60 "$HOPBENCH" lab -v --sizes 64 --reps 2 -d "$CELL_S" \
    --warmup 0.05 --json "$T/lv.json" >"$T/lv.out" 2>"$T/lv.err")
check_eq "lab -v --reps 2: exit 0" 0 "$?"
check_eq "lab -v: a line per run" 8 "$(grep -Ec '^  (connect|reuse) +(tcp|unix) +64 B: ' "$T/lv.out")"
check "lab -v: summaries printed" grep -q "unix against tcp: median" "$T/lv.out"
# The lab's endpoints (a free port, a socket in a temporary directory) are named once, in its
# first line; every other line names an arm by its transport, as the tables do.
check_eq "lab -v: each summary names its arm by transport (tcp, unix x connect, reuse)" 4 \
    "$(grep -Ec '^(tcp|unix) (connect|reuse) \(n=2 valid of 2' "$T/lv.out")"
check_eq "lab -v: the endpoints' addresses only in the first line" 1 \
    "$(grep -Ec '127\.0\.0\.1:[0-9]|unix:/' "$T/lv.out")"
# 2 + 2 runs can never be significant: "~", and still each ratio of medians with its interval.
check_eq "lab -v --reps 2: every figure's ratio with its interval, '~' (2 modes x 6 figures)" 12 \
    "$(grep -Ec '^  (ops/s|p50 µs|mean µs|p99 µs|p99\.9 µs|cpu µs/op) .*   vs first: ~ [0-9.]+× \[[0-9.]+×, [0-9.]+×\] \(p=[0-9.e-]+ n=2\+2\)$' \
        "$T/lv.out")"

done_testing
