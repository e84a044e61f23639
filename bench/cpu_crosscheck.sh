#!/bin/sh
# cpu_crosscheck: is hopbench's server CPU figure right? It loads the built-in
# echo server for SECONDS with `run --server-pid` and, over the same interval,
# reads the server's CPU time independently: `perf stat -e task-clock -p PID`
# and /proc/PID/stat (utime + stime, 10 ms ticks). Prints the three figures and
# the ratios; the target is agreement within 5 %.
#
# usage: bench/cpu_crosscheck.sh HOPBENCH [SECONDS]   (MODE=reuse|connect, default both)
set -eu
HB=${1:?usage: cpu_crosscheck.sh HOPBENCH [SECONDS]}
SECS=${2:-10}
T=$(mktemp -d)
SRV=""
PERF=""
cleanup() {
    for p in $PERF $SRV; do kill "$p" 2>/dev/null || true; done
    rm -rf "$T"
}
trap cleanup EXIT INT TERM

proc_cpu_ticks() { # utime + stime of $1, in clock ticks
    sed 's/^.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }'
}

"$HB" serve echo --listen tcp://127.0.0.1:0 --threads 1 --pin split >"$T/srv.out" &
SRV=$!
i=0
while ! grep -q 'listening on tcp' "$T/srv.out"; do
    i=$((i + 1)); [ $i -gt 100 ] && { echo "server did not start" >&2; exit 1; }
    sleep 0.05
done
EP=$(sed -n 's/^hopbench: listening on //p' "$T/srv.out")
HZ=$(getconf CLK_TCK)
echo "cpu_crosscheck: $(date -u '+%F %T') UTC, $(uname -r), server pid $SRV, $SECS s per mode, $EP"
printf '%-8s %14s %14s %14s %10s %10s\n' mode hopbench_ms perf_ms procstat_ms hb/perf hb/proc
for mode in ${MODE:-reuse connect}; do
    t0=$(proc_cpu_ticks "$SRV")
    perf stat -e task-clock -p "$SRV" -x, -o "$T/perf.$mode" &
    PERF=$!
    sleep 0.2
    "$HB" run echo "$EP" -c 1 -t 1 -d "$SECS" --warmup 0 --mode "$mode" --pin split \
        --server-pid "$SRV" --sample-ms 0 --json "$T/run.$mode.json" >/dev/null
    sleep 0.2
    kill -INT "$PERF"; wait "$PERF" 2>/dev/null || true; PERF=""
    t1=$(proc_cpu_ticks "$SRV")
    hb=$(jq '.runs[0].observed.cpu.server_ns / 1e6' "$T/run.$mode.json")
    pf=$(awk -F, '/task-clock/ { print $1 }' "$T/perf.$mode")
    pc=$(awk -v a="$t0" -v b="$t1" -v hz="$HZ" 'BEGIN { print (b - a) * 1000 / hz }')
    awk -v m="$mode" -v h="$hb" -v p="$pf" -v c="$pc" 'BEGIN {
        printf "%-8s %14.1f %14.1f %14.1f %10.3f %10.3f\n", m, h, p, c, h / p, (c > 0 ? h / c : 0) }'
done
