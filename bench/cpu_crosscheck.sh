#!/bin/sh
# cpu_crosscheck: is hopbench's server CPU figure right? It loads the built-in
# echo server (--threads 1, --pin split) for SECONDS with `run --server-pid` and,
# around the same run, reads the server's CPU time independently:
#   perf     `perf stat -e task-clock,context-switches -p PID`, attached (its
#            perf_event fds open) before the run starts, stopped after it ends
#   procstat /proc/PID/stat utime + stime (CLK_TCK ticks, usually 10 ms), read
#            after perf attached and after the run ended, before perf stops
# so the intervals nest: perf's contains procstat's, which contains hopbench's
# (hopbench counts from its start of measurement to its end). The server is
# idle (blocked in epoll_wait) outside the run, so the extra time costs nothing.
# Prints the three figures in ms, the ratios hopbench/perf and hopbench/procstat,
# PASS when both are within 5 % of 1, the server's context switches, and the
# gap to perf per switch: perf's task-clock stops at the scheduler's switch-out
# hook and restarts at switch-in, so it leaves out part of every context switch
# that the scheduler's own count (behind both hopbench's clock_gettime of the
# process CPU clock and /proc's utime+stime) includes.
#
#
# Modes: reuse and connect are one connection with one request in flight (the
# server sleeps and wakes for every request); pipelined is reuse with 8
# connections of 16 requests in flight each, so the server's thread rarely
# sleeps: few context switches per CPU-second. If the perf gap is the part of
# each switch that task-clock leaves out, pipelined agrees closely and the
# gap per switch is about the same in every mode.
#
# usage: bench/cpu_crosscheck.sh HOPBENCH [SECONDS]   (MODE="reuse connect pipelined" by default)
# Needs perf (scripts/deps.sh bench: linux-perf) allowed to attach to the server
# (root, or kernel.perf_event_paranoid <= 1), jq, 2 CPUs. Traffic: 127.0.0.1 only.
set -eu
PROG=cpu_crosscheck
TOLERANCE_PCT=5
ATTACH_TRIES=100 # x 0.05 s: how long perf may take to open its events
STOP_TRIES=50    # x 0.1 s: how long perf or the server may take to exit

# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
    echo "usage: bench/cpu_crosscheck.sh HOPBENCH [SECONDS]   (env: MODE=\"reuse connect pipelined\")" >&2
    exit 64
fi
HB=$1
SECS=${2:-10}
case "$SECS" in '' | *[!0-9]* | 0) echo "$PROG: SECONDS must be a positive integer" >&2; exit 64 ;; esac
[ -x "$HB" ] || die "not executable: $HB"
for tool in perf jq awk timeout; do
    command -v "$tool" >/dev/null 2>&1 || die "$tool not found (scripts/deps.sh bench installs it)"
done
perf stat -e task-clock true >/dev/null 2>&1 || die "perf stat -e task-clock does not work here (perf_event_paranoid?)"

T=$(mktemp -d "${TMPDIR:-/tmp}/cpu_crosscheck.XXXXXX")
SRV=""
PERF=""

# stop PID: SIGINT (perf prints its counts on it; the server exits on it too),
# a bounded wait, then SIGKILL; reaps it.
stop() {
    stop_pid INT "$1"
}

cleanup() {
    for p in $PERF $SRV; do stop "$p"; done
    rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

proc_cpu_ticks() { # utime + stime of $1 (all its threads), in clock ticks
    sed 's/^.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }'
}

# Waits until perf ($1) has its perf_event fds open: from then on it counts.
wait_attached() {
    i=0
    while [ "$i" -lt "$ATTACH_TRIES" ]; do
        kill -0 "$1" 2>/dev/null || die "perf stat exited early: $(cat "$2")"
        for fd in /proc/"$1"/fd/*; do
            case "$(readlink "$fd" 2>/dev/null)" in *perf_event*) return 0 ;; esac
        done
        sleep 0.05
        i=$((i + 1))
    done
    die "perf stat did not attach within $((ATTACH_TRIES / 20)) s"
}

# perf_value FILE EVENT: the count from perf stat -x, output; dies on <not counted>.
perf_value() {
    v=$(awk -F, -v e="$2" '$3 == e { print $1 }' "$1")
    case "$v" in
    '' | *[!0-9.]*) die "perf stat: no count for $2 in: $(cat "$1")" ;;
    esac
    echo "$v"
}

"$HB" serve echo --listen tcp://127.0.0.1:0 --threads 1 --pin split >"$T/srv.out" 2>"$T/srv.err" &
SRV=$!
i=0
while ! grep -q '^hopbench: listening on tcp://' "$T/srv.out"; do
    kill -0 "$SRV" 2>/dev/null || die "server exited: $(cat "$T/srv.err")"
    i=$((i + 1))
    [ "$i" -gt 100 ] && die "server did not start: $(cat "$T/srv.err")"
    sleep 0.05
done
EP=$(sed -n 's|^hopbench: listening on \(tcp://[^ ]*\).*|\1|p' "$T/srv.out")
HZ=$(getconf CLK_TCK)
THREADS=$(find "/proc/$SRV/task" -mindepth 1 -maxdepth 1 | wc -l)
echo "cpu_crosscheck: $(date -u '+%F %T') UTC, kernel $(uname -r), $(nproc) CPUs, load average $(cut -d ' ' -f 1-3 /proc/loadavg)"
echo "command: MODE=\"${MODE:-reuse connect pipelined}\" bench/cpu_crosscheck.sh $HB $SECS; server pid $SRV on $EP, $THREADS threads"
echo "target: hopbench's server CPU within $TOLERANCE_PCT % of each independent reading"
printf '%-8s %12s %10s %12s %8s %8s %6s %10s %12s\n' mode hopbench_ms perf_ms procstat_ms hb/perf hb/proc agree ctx_sw "gap_ns/sw"
for mode in ${MODE:-reuse connect pipelined}; do
    perf stat -e task-clock,context-switches -p "$SRV" -x, -o "$T/perf.$mode" &
    PERF=$!
    wait_attached "$PERF" "$T/perf.$mode"
    sleep 0.1
    t0=$(proc_cpu_ticks "$SRV")
    case $mode in
    pipelined) load="-c 8 -t 1 --pipeline 16 --mode reuse" ;;
    *) load="-c 1 -t 1 --mode $mode" ;;
    esac
    # shellcheck disable=SC2086 # $load is words on purpose
    timeout $((SECS * 3 + 30)) "$HB" run echo "$EP" $load -d "$SECS" --warmup 0 \
        --pin split --server-pid "$SRV" --sample-ms 0 --json "$T/run.$mode.json" >"$T/run.out" 2>&1 ||
        die "hopbench run --mode $mode failed: $(tail -n 3 "$T/run.out")"
    t1=$(proc_cpu_ticks "$SRV")
    sleep 0.1
    stop "$PERF"
    PERF=""
    hb=$(jq -er '.runs[0].observed.cpu.server_ns | numbers' "$T/run.$mode.json") ||
        die "no number at .runs[0].observed.cpu.server_ns in $T/run.$mode.json"
    pf=$(perf_value "$T/perf.$mode" task-clock)
    cs=$(perf_value "$T/perf.$mode" context-switches)
    awk -v m="$mode" -v h="$hb" -v p="$pf" -v t="$((t1 - t0))" -v hz="$HZ" -v cs="$cs" \
        -v tol="$TOLERANCE_PCT" 'BEGIN {
        h /= 1e6; c = t * 1000 / hz
        rp = h / p; rc = (c > 0 ? h / c : 0)
        ok = (rp >= 1 - tol / 100 && rp <= 1 + tol / 100 && rc >= 1 - tol / 100 && rc <= 1 + tol / 100)
        printf "%-8s %12.1f %10.1f %12.1f %8.3f %8.3f %6s %10d %12.0f\n", m, h, p, c, rp, rc,
            ok ? "PASS" : "MISS", cs, (cs > 0 ? (h - p) * 1e6 / cs : 0) }'
done
