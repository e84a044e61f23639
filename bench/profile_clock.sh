#!/bin/sh
# profile_clock: how much of each side's CPU do `run --profile`'s samples see, and does perf's
# own clock see more? Against the built-in echo server (kept connections), for each connection
# count in CONNS (1 16 64), each transport (tcp unix) and each sampling rate in HZ (809 4000),
# REPS (3) runs of SECONDS (2) with --profile:
#
#   sampled/clock   a side's samples x the period over its clock over the same window (the
#                   load threads' CPU clocks, the server's process clock), client and server;
#
# and at each connection count over the socket, once without --profile, `perf stat -e
# task-clock -p SERVER` over 2 s of a run against the sum of the server's threads' run time
# in /proc/PID/task/*/schedstat over the same 2 s (perf_clock/schedstat): the time perf's own
# software clock counts for the process against what the scheduler ran it.
#
# usage: bench/profile_clock.sh HOPBENCH [SECONDS] [REPS]   (root; perf from scripts/deps.sh bench)
#        CONNS="1 16 64" HZ="809 4000"
# Take the exclusive lock (flock -x /tmp/hb-machine.lock) and a quiet machine. Traffic:
# 127.0.0.1 and a socket in a temporary directory only; the server is stopped on every exit.
set -eu
PROG=profile_clock

# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"

if [ $# -lt 1 ] || [ $# -gt 3 ]; then die "usage: bench/profile_clock.sh HOPBENCH [SECONDS] [REPS]"; fi
HB=$1
SECS=${2:-2}
REPS=${3:-3}
CONNS=${CONNS:-1 16 64}
HZ=${HZ:-809 4000}
is_count "$SECS" || die "SECONDS must be a whole number above 0"
is_count "$REPS" || die "REPS must be a whole number above 0"
command -v perf >/dev/null || die "no perf (scripts/deps.sh bench installs linux-perf)"
command -v jq >/dev/null || die "no jq"

D=$(mktemp -d)
SRV=""
cleanup() {
    [ -n "$SRV" ] && stop_pid TERM "$SRV"
    rm -rf "$D"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

PORT=$(pick_port 1)
"$HB" serve echo --listen "tcp://127.0.0.1:$PORT" --listen "unix:$D/s.sock" >"$D/srv.out" 2>&1 &
SRV=$!
i=0
while ! port_listening "$PORT" && [ $i -lt 50 ]; do
    sleep 0.1
    i=$((i + 1))
done
port_listening "$PORT" || die "serve echo did not listen"

# threads_ns : the server's threads' run time so far (schedstat's first field, ns), summed.
threads_ns() { cat /proc/"$SRV"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { printf "%.0f\n", s }'; }

echo "$PROG: $(date -u '+%Y-%m-%d %H:%M:%S') UTC, kernel $(uname -r), $(nproc) CPUs, $(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "per run: conns transport hz rep client-sampled/clock server-sampled/clock ops"
for rep in $(seq 1 "$REPS"); do
    for c in $CONNS; do
        for hz in $HZ; do
            j=$D/r.json
            "$HB" run echo "tcp://127.0.0.1:$PORT" "unix:$D/s.sock" -c "$c" -d "$SECS" --warmup 0.5 -q \
                --server-pid "$SRV" --profile --profile-hz "$hz" --json "$j" >/dev/null 2>"$D/run.err" ||
                die "run failed: $(head -c 300 "$D/run.err")"
            jq -r --arg c "$c" --arg hz "$hz" --arg rep "$rep" '
                def side($n): .profile.sides[] | select(.name == $n);
                .runs[] | "\($c) \(.transport) \($hz) \($rep) \(side("client").samples * .profile.period_ns / .client_cpu_ns | . * 1000 | round / 1000) \(side("server").samples * .profile.period_ns / .observed.cpu.server_ns | . * 1000 | round / 1000) \(.ops)"' "$j"
        done
    done
done | tee "$D/runs.txt"

echo
echo "median [min-max] of sampled/clock over the reps"
echo "conns transport hz client server"
sort -k1,1n -k2,2 -k3,3n "$D/runs.txt" | awk '
    function med(v, n,   i, j, t) {
        for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j - 1] > v[j]; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
        return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
    }
    function flush(   a, b) {
        if (n == 0) return
        for (i = 1; i <= n; i++) { a[i] = cl[i]; b[i] = sv[i] }
        printf "%s %.3f [%.3f-%.3f] %.3f [%.3f-%.3f]\n", key, med(a, n), a[1], a[n], med(b, n), b[1], b[n]
        n = 0
    }
    { k = $1 " " $2 " " $3; if (k != key) { flush(); key = k } n++; cl[n] = $5; sv[n] = $6 }
    END { flush() }'

echo
echo "perf stat -e task-clock -p SERVER against its threads' schedstat, over the socket, 2 s"
echo "conns perf_clock_ms schedstat_ms ratio"
for c in $CONNS; do
    "$HB" run echo "unix:$D/s.sock" -c "$c" -d 5 --warmup 0 -q >/dev/null 2>&1 &
    load=$!
    sleep 1
    a=$(threads_ns)
    perf stat -x, -e task-clock -p "$SRV" -o "$D/stat.txt" -- sleep 2 >/dev/null 2>&1 || true
    b=$(threads_ns)
    wait "$load" || true
    ms=$(awk -F, '$3 == "task-clock" || $3 ~ /^task-clock/ { print $1; exit }' "$D/stat.txt")
    awk -v c="$c" -v p="${ms:-0}" -v s="$(((b - a) / 1000))" \
        'BEGIN { s /= 1000; printf "%s %.1f %.1f %.3f\n", c, p, s, (s > 0 ? p / s : 0) }'
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
