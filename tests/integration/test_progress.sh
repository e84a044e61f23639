#!/bin/bash
# The live progress line, under a pseudo-terminal (script(1) from util-linux):
# drawn on stderr only when it is a terminal, redrawn in place ("\r" ... "ESC[K")
# at most 10 times a second, never wider than the terminal, cleared at the end of
# every run; it names the run, rep k/n, ops/s, errors and the time left; nothing
# with --quiet, nothing when stderr is a file, and never an escape on stdout.
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

need script
start_server srv --listen tcp://127.0.0.1:0 --listen "unix:$T/s.sock" || done_testing
tcp=tcp://127.0.0.1:$SRV_PORT

# on_tty NAME COLS CMD-ARGS... : hopbench CMD-ARGS with stderr on a pseudo-terminal COLS
# wide (stdout to $T/NAME.out); what the terminal got in $T/NAME.tty, the seconds it
# took in $T/NAME.secs.
on_tty() {
    local name=$1 cols=$2 t0 t1
    shift 2
    printf '%q ' "$HOPBENCH" "$@" >"$T/$name.cmd"
    t0=$(now_ms)
    timeout -k 5 120 script -qec "stty cols $cols rows 24; $(cat "$T/$name.cmd") >$T/$name.out" \
        "$T/$name.raw" >/dev/null 2>&1 </dev/null
    RC=$?
    t1=$(now_ms)
    echo $(((t1 - t0 + 999) / 1000)) >"$T/$name.secs"
    # script's own first and last lines ("Script started/done") are not the program's
    sed -e '/^Script started on/d' -e '/^Script done on/d' "$T/$name.raw" >"$T/$name.tty"
}

# The drawn lines of a tty file: each text between a "\r" and its "ESC[K", one per line.
drawn() {
    tr '\r' '\n' <"$1" | grep -a $'\033\\[K' | sed $'s/\033\\[K.*//' | grep -a .
}

on_tty run 70 run echo "$tcp" "unix:$T/s.sock" --label tcp-a --label uds -d 0.6 --warmup 0.2 \
    --reps 2 --json "$T/run.json"
check_eq "run on a terminal: exit 0" 0 "$RC"
drawn "$T/run.tty" >"$T/run.lines"
check "run on a terminal: a progress line is drawn" test -s "$T/run.lines"
check "run: the line names the endpoint's label and rep k/n" grep -aq 'echo uds  rep 2/2' "$T/run.lines"
check "run: the line has ops/s, errors and the time left" \
    grep -aqE '[0-9]+ ops/s  [0-9]+ errors?  ~[0-9]+ s left' "$T/run.lines"
check "run: the warm-up is shown as such" grep -aq 'warm-up' "$T/run.lines"
n=$(wc -l <"$T/run.lines")
secs=$(cat "$T/run.secs")
check "run: at most 10 redraws a second ($n in ${secs} s)" test "$n" -le $((10 * secs + 4))
widest=$(awk '{ if (length($0) > w) w = length($0) } END { print w + 0 }' "$T/run.lines")
check "run: no line wider than the terminal less one (widest $widest of 70)" test "$widest" -le 69
check "run: the line is cleared at the end (the terminal's last bytes are CR ESC[K)" \
    test "$(tr -d '\n' <"$T/run.tty" | tail -c 4 | od -An -tx1 | tr -d ' \n')" = "0d1b5b4b"
check "run: stdout holds no escape" bash -c "! grep -q $'\033' '$T/run.out'"
check "run: stdout has the table" grep -q 'ops/s' "$T/run.out"

# A stack's run child: HOPBENCH_PROGRESS=K/N+MS names its measurement k/n, and the time
# planned after it (ms) is added to its own time left. The run alone plans 0.8 s (2 endpoints
# x 1 rep x 0.4 s), so a time left of at least the stack's share proves the addition.
after_s=20
HOPBENCH_PROGRESS="3/7+$((after_s * 1000))" on_tty outer 100 run echo "$tcp" "unix:$T/s.sock" \
    --label tcp-a --label uds -d 0.3 --warmup 0.1 --json "$T/outer.json"
check_eq "run as a stack's measurement: exit 0" 0 "$RC"
drawn "$T/outer.tty" >"$T/outer.lines"
check "outer: the line names the stack's measurement k/n before the run's" \
    grep -aq '^measurement 3/7 echo uds  rep 1/1  ' "$T/outer.lines"
least=$(grep -aoE '~[0-9]+ s left' "$T/outer.lines" | tr -dc '0-9\n' | sort -n | head -1)
check "outer: the time left holds the stack's ${after_s} s after this run (least ${least:-none})" \
    test "${least:-0}" -ge "$after_s"
HOPBENCH_PROGRESS="9/7+100" on_tty badouter 100 run echo "$tcp" -d 0.3 --warmup 0 \
    --json "$T/badouter.json"
check_eq "run with a malformed HOPBENCH_PROGRESS (k > n): exit 0" 0 "$RC"
drawn "$T/badouter.tty" >"$T/badouter.lines"
check "badouter: ignored, the run's own line is drawn" grep -aq '^echo tcp' "$T/badouter.lines"
check "badouter: no measurement named" bash -c "! grep -aq measurement '$T/badouter.lines'"

on_tty quiet 70 run echo "$tcp" -d 0.3 --warmup 0 --quiet --json "$T/quiet.json"
check_eq "run --quiet on a terminal: exit 0" 0 "$RC"
check "run --quiet: no line, no escape on the terminal" \
    bash -c "! grep -aq $'[\r\033]' '$T/quiet.tty'"

expect_rc "run with stderr to a file: exit 0" 0 file run echo "$tcp" -d 0.3 --warmup 0 \
    --json "$T/file.json"
check "stderr a file: no line, no escape" bash -c "! grep -aq $'[\r\033]' '$T/file.err'"

on_tty lab 50 lab --quick --sizes 64 --json "$T/lab.json"
check_eq "lab on a terminal: exit 0" 0 "$RC"
drawn "$T/lab.tty" >"$T/lab.lines"
check "lab: the line names the cell" grep -aq 'echo 64 B reuse unix  rep 1/1' "$T/lab.lines"
widest=$(awk '{ if (length($0) > w) w = length($0) } END { print w + 0 }' "$T/lab.lines")
check "lab: cut to a 50-column terminal (widest $widest)" test "$widest" -le 49
check "lab: stdout holds no escape" bash -c "! grep -q $'\033' '$T/lab.out'"

done_testing
