#!/bin/sh
# pingpong.sh: one 64-byte request/response in flight, hopbench vs its peers.
#
#   bench/pingpong.sh HOPBENCH FLOOR [SECONDS]
#
# For each CPU placement (same: everything on CPU 0; split: client on CPU 0,
# server on CPU 1), REPS times, it measures the p50 round trip of
#   - sockperf ping-pong over TCP loopback (the reference peer tool),
#   - hopbench run echo against hopbench serve echo, over tcp and unix,
#   - FLOOR (bench/floor.c), a blocking two-process ping-pong: the kernel floor,
# and prints, per placement, the median over the reps with the ratios the issue
# sets as targets: hopbench within 10% of sockperf (tcp) and within 15% of the
# floor. PASS/MISS is informational: the exit status is 0 unless a tool failed.
#
#   SECONDS          per measurement (default 5)
#   REPS=N           repetitions per placement (default 3); medians are reported
#   HOPBENCH_SKIP=1  skip hopbench (measure only sockperf and the floor);
#                    HOPBENCH is then not run, but must still be given
#   FLOOR_ITER=N     floor iterations per run; default: calibrated to last ~SECONDS
#
# All traffic stays on 127.0.0.1 or Unix sockets in a mktemp -d directory.
# Every server started is killed by PID on exit, INT or TERM, and every wait is
# bounded. Needs: sockperf, jq, ss (iproute2), taskset (util-linux), 2 CPUs.
set -eu

PROG=pingpong
SIZE=64
READY_TRIES=100 # x 0.05 s: how long a server may take to listen
STOP_TRIES=50   # x 0.1 s: how long a server may take to exit on SIGTERM
MAX_FLOOR_PCT=115
MAX_SOCKPERF_PCT=110

die() {
    echo "$PROG: $*" >&2
    exit 1
}

usage() {
    echo "usage: bench/pingpong.sh HOPBENCH FLOOR [SECONDS]   (env: REPS=3 HOPBENCH_SKIP=1 FLOOR_ITER=N)" >&2
    exit 64
}

is_count() {
    case "$1" in
    '' | *[!0-9]*) return 1 ;;
    esac
    [ "$1" -gt 0 ]
}

note() {
    echo "$PROG: $*" >&2
}

# ---- arguments and environment --------------------------------------------

if [ $# -lt 2 ] || [ $# -gt 3 ]; then usage; fi
HOPBENCH=$1
FLOOR=$2
SECS=${3:-5}
REPS=${REPS:-3}
HOPBENCH_SKIP=${HOPBENCH_SKIP:-0}
FLOOR_ITER=${FLOOR_ITER:-}
is_count "$SECS" || { echo "$PROG: SECONDS must be a positive integer, got '$SECS'" >&2; usage; }
is_count "$REPS" || { echo "$PROG: REPS must be a positive integer, got '$REPS'" >&2; usage; }
[ -z "$FLOOR_ITER" ] || is_count "$FLOOR_ITER" || usage
case "$HOPBENCH_SKIP" in 0 | 1) ;; *) usage ;; esac

for tool in sockperf jq ss taskset awk timeout; do
    command -v "$tool" >/dev/null 2>&1 || die "$tool not found (scripts/deps.sh bench installs it)"
done
[ -x "$FLOOR" ] || die "floor binary not executable: $FLOOR (make build/release/bench/floor)"
if [ "$HOPBENCH_SKIP" = 0 ]; then
    [ -x "$HOPBENCH" ] || die "hopbench binary not executable: $HOPBENCH (or set HOPBENCH_SKIP=1)"
fi
taskset -c 1 true 2>/dev/null || die "CPU 1 is not available: the split placement needs 2 CPUs"

# Generous per-command limits: a hung tool fails the run instead of hanging it.
RUN_LIMIT=$((SECS * 3 + 30))

# ---- cleanup: every PID we start is listed in $PIDS ------------------------

PIDS=""
TMP=$(mktemp -d "${TMPDIR:-/tmp}/pingpong.XXXXXX")

cleanup() {
    for pid in $PIDS; do
        kill -KILL "$pid" 2>/dev/null || true
    done
    for pid in $PIDS; do
        wait "$pid" 2>/dev/null || true
    done
    rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

forget_pid() {
    rest=""
    for p in $PIDS; do
        [ "$p" = "$1" ] || rest="$rest $p"
    done
    PIDS=$rest
}

# SIGTERM, bounded wait, then SIGKILL; reaps the process.
stop_server() {
    pid=$1
    kill -TERM "$pid" 2>/dev/null || true
    i=0
    while kill -0 "$pid" 2>/dev/null && [ "$i" -lt "$STOP_TRIES" ]; do
        sleep 0.1
        i=$((i + 1))
    done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    forget_pid "$pid"
}

# ---- small helpers ---------------------------------------------------------

# Server CPU for a placement (the client is always on CPU 0).
server_cpu() {
    if [ "$1" = split ]; then echo 1; else echo 0; fi
}

# Appends one sample (ns) to the series file for placement/tool/transport/metric.
record() {
    echo "$5" >>"$TMP/series.$1.$2.$3.$4"
}

# Median of a series, or "-" if it was not measured.
median() {
    f="$TMP/series.$1.$2.$3.$4"
    [ -s "$f" ] || { echo -; return; }
    sort -n "$f" | awk '{ v[NR] = $1 } END {
        if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# Reads a number from a JSON file with jq; dies if it is missing.
json_number() {
    jq -er "$2 | numbers" "$1" 2>/dev/null || die "no number at $2 in $1: $(head -c 300 "$1")"
}

port_free() {
    [ -z "$(ss -Hltn "sport = :$1" 2>/dev/null)" ]
}

port_listening() {
    ss -Hltn "sport = :$1" 2>/dev/null | grep -q "127.0.0.1:$1"
}

# A port for sockperf (it needs an explicit one): free now, in 20000..29999.
pick_port() {
    p=$((20000 + ($$ * 7 + $1 * 131) % 10000))
    i=0
    while ! port_free "$p" && [ "$i" -lt 100 ]; do
        p=$((20000 + (p - 20000 + 1) % 10000))
        i=$((i + 1))
    done
    echo "$p"
}

# ---- (a) sockperf over TCP loopback ----------------------------------------

# Starts sockperf server; sets SP_PID and SP_PORT, retrying a few ports.
start_sockperf_server() {
    place=$1
    attempt=0
    while [ "$attempt" -lt 5 ]; do
        SP_PORT=$(pick_port "$attempt")
        taskset -c "$(server_cpu "$place")" sockperf server -i 127.0.0.1 -p "$SP_PORT" --tcp \
            >"$TMP/sockperf-server.log" 2>&1 &
        SP_PID=$!
        PIDS="$PIDS $SP_PID"
        i=0
        while [ "$i" -lt "$READY_TRIES" ] && kill -0 "$SP_PID" 2>/dev/null; do
            port_listening "$SP_PORT" && return 0
            sleep 0.05
            i=$((i + 1))
        done
        stop_server "$SP_PID"
        attempt=$((attempt + 1))
    done
    die "sockperf server did not listen on 127.0.0.1 (last port $SP_PORT): $(tail -n 3 "$TMP/sockperf-server.log")"
}

# sockperf 3.7 prints (on stdout, with ANSI colour codes around some lines):
#   sockperf: Summary: Round trip is 27.408 usec      (only with --full-rtt;
#   sockperf: Summary: Latency is 13.704 usec          this one without it)
#   sockperf: Total 56485 observations; ...
#   sockperf: ---> percentile 50.000 =   25.838       (usec, here full RTT)
# Prints the p50 in ns.
parse_sockperf() {
    out=$1
    clean="$out.clean"
    sed 's/\x1b\[[0-9;]*m//g' "$out" >"$clean"
    grep -q 'Summary: Round trip is' "$clean" ||
        die "sockperf did not report full round trips (no 'Round trip is' line); see $(tail -n 5 "$clean")"
    obs=$(sed -n 's/.*Total \([0-9][0-9]*\) observations.*/\1/p' "$clean")
    if [ -z "$obs" ] || [ "$obs" -eq 0 ]; then
        die "sockperf made no observations: $(tail -n 5 "$clean")"
    fi
    p50=$(sed -n 's/.*---> percentile 50\.000 = *\([0-9.][0-9.]*\).*/\1/p' "$clean")
    [ -n "$p50" ] || die "no 'percentile 50.000' line in sockperf output: $(tail -n 5 "$clean")"
    awk -v us="$p50" 'BEGIN { printf "%.0f\n", us * 1000 }'
}

measure_sockperf() {
    place=$1
    start_sockperf_server "$place"
    out="$TMP/sockperf-client.out"
    if ! timeout "$RUN_LIMIT" taskset -c 0 sockperf ping-pong -i 127.0.0.1 -p "$SP_PORT" --tcp \
        -m "$SIZE" -t "$SECS" --full-rtt >"$out" 2>&1; then
        die "sockperf ping-pong failed: $(tail -n 3 "$out")"
    fi
    stop_server "$SP_PID"
    p50=$(parse_sockperf "$out")
    record "$place" sockperf tcp p50 "$p50"
    note "  sockperf tcp p50 $p50 ns"
}

# ---- (b) hopbench over tcp and unix ----------------------------------------

# Starts hopbench serve echo on both listeners; sets HB_PID and HB_TCP_PORT.
start_hopbench_server() {
    place=$1
    log="$TMP/hopbench-serve.out"
    rm -f "$TMP/echo.sock"
    "$HOPBENCH" serve echo --listen tcp://127.0.0.1:0 --listen "unix:$TMP/echo.sock" --pin "$place" \
        >"$log" 2>"$TMP/hopbench-serve.err" &
    HB_PID=$!
    PIDS="$PIDS $HB_PID"
    i=0
    HB_TCP_PORT=""
    while [ "$i" -lt "$READY_TRIES" ] && kill -0 "$HB_PID" 2>/dev/null; do
        HB_TCP_PORT=$(sed -n 's|^hopbench: listening on tcp://127\.0\.0\.1:\([0-9][0-9]*\).*|\1|p' "$log")
        if [ -n "$HB_TCP_PORT" ] && grep -q '^hopbench: listening on unix:' "$log"; then
            return 0
        fi
        sleep 0.05
        i=$((i + 1))
    done
    kill -0 "$HB_PID" 2>/dev/null && why="did not report both listeners in time" || why="exited early"
    die "hopbench serve $why: $(cat "$log" "$TMP/hopbench-serve.err" | tail -n 5)"
}

hopbench_run() {
    place=$1
    transport=$2
    endpoint=$3
    json="$TMP/hopbench-$transport.json"
    rm -f "$json"
    if ! timeout "$RUN_LIMIT" "$HOPBENCH" run echo "$endpoint" -c 1 -t 1 -d "$SECS" --warmup 1 \
        --mode reuse --size "$SIZE" --pin "$place" --json "$json" >"$TMP/hopbench-run.out" 2>&1; then
        die "hopbench run $endpoint failed: $(tail -n 3 "$TMP/hopbench-run.out")"
    fi
    p50=$(json_number "$json" '.runs[0].latency_ns.p50')
    cpu=$(json_number "$json" '.runs[0].client_cpu_ns_per_op')
    record "$place" hopbench "$transport" p50 "$p50"
    record "$place" hopbench "$transport" cpu "$cpu"
    note "  hopbench $transport p50 $p50 ns, client CPU $(printf '%.0f' "$cpu") ns/op"
}

measure_hopbench() {
    place=$1
    start_hopbench_server "$place"
    hopbench_run "$place" tcp "tcp://127.0.0.1:$HB_TCP_PORT"
    hopbench_run "$place" unix "unix:$TMP/echo.sock"
    stop_server "$HB_PID"
}

# ---- (c) the floor ---------------------------------------------------------

# Iterations that last about SECS for this transport and placement (cached).
floor_iterations() {
    cache="$TMP/iter.$1.$2"
    if [ -n "$FLOOR_ITER" ]; then
        echo "$FLOOR_ITER"
    elif [ -s "$cache" ]; then
        cat "$cache"
    else
        timeout "$RUN_LIMIT" "$FLOOR" "$2" "$SIZE" 20000 --pin "$1" >"$TMP/floor-cal.json" ||
            die "floor $2 calibration failed"
        mean=$(json_number "$TMP/floor-cal.json" .mean_ns)
        awk -v s="$SECS" -v m="$mean" 'BEGIN {
            n = int(s * 1e9 / (m > 0 ? m : 1)); if (n < 20000) n = 20000; if (n > 5000000) n = 5000000
            print n }' | tee "$cache"
    fi
}

measure_floor() {
    place=$1
    for transport in tcp unix socketpair; do
        iter=$(floor_iterations "$place" "$transport")
        json="$TMP/floor-$transport.json"
        timeout "$RUN_LIMIT" "$FLOOR" "$transport" "$SIZE" "$iter" --pin "$place" >"$json" ||
            die "floor $transport failed"
        p50=$(json_number "$json" .p50_ns)
        cpu=$(json_number "$json" .client_cpu_ns_per_op)
        record "$place" floor "$transport" p50 "$p50"
        record "$place" floor "$transport" cpu "$cpu"
        note "  floor $transport p50 $p50 ns, client CPU $cpu ns/op ($iter iterations)"
    done
}

# ---- report ----------------------------------------------------------------

# us VALUE_NS: microseconds with 2 decimals, or "-".
us() {
    case "$1" in -) echo - ;; *) awk -v v="$1" 'BEGIN { printf "%.2f\n", v / 1000 }' ;; esac
}

# verdict NUM DEN MAX_PCT: "1.07 PASS" / "1.21 MISS", or "-".
verdict() {
    if [ "$1" = - ] || [ "$2" = - ]; then
        echo -
        return
    fi
    awk -v a="$1" -v b="$2" -v max="$3" 'BEGIN {
        if (b <= 0) { print "-"; exit }
        r = a / b; printf "%.2f %s\n", r, (r * 100 <= max ? "PASS" : "MISS") }'
}

print_table() {
    place=$1
    echo
    echo "placement: $place (client CPU 0, server CPU $(server_cpu "$place")), $SIZE-byte ping-pong, median of $REPS x ${SECS}s"
    printf '%-11s %10s %12s %12s %12s %14s %13s %14s\n' transport "floor p50" "sockperf p50" \
        "hopbench p50" "hb/floor" "hb/sockperf" "hb cpu us/op" "floor cpu us/op"
    for transport in tcp unix socketpair; do
        floor_p50=$(median "$place" floor "$transport" p50)
        sp_p50=$(median "$place" sockperf "$transport" p50)
        hb_p50=$(median "$place" hopbench "$transport" p50)
        printf '%-11s %10s %12s %12s %12s %14s %13s %14s\n' "$transport" \
            "$(us "$floor_p50")" "$(us "$sp_p50")" "$(us "$hb_p50")" \
            "$(verdict "$hb_p50" "$floor_p50" "$MAX_FLOOR_PCT")" \
            "$(verdict "$hb_p50" "$sp_p50" "$MAX_SOCKPERF_PCT")" \
            "$(us "$(median "$place" hopbench "$transport" cpu)")" \
            "$(us "$(median "$place" floor "$transport" cpu)")"
    done
}

print_header() {
    echo "pingpong: $(date -u '+%Y-%m-%d %H:%M:%S UTC'), kernel $(uname -r), $(nproc) CPUs," \
        "$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
    echo "command: REPS=$REPS HOPBENCH_SKIP=$HOPBENCH_SKIP bench/pingpong.sh $HOPBENCH $FLOOR $SECS"
    sockperf --version 2>&1 | head -n 1
    echo "load average at start: $(cut -d ' ' -f 1-3 /proc/loadavg) (anything else running skews every column)"
    echo "targets: hopbench/sockperf <= $MAX_SOCKPERF_PCT%, hopbench/floor <= $MAX_FLOOR_PCT% (p50; informational)"
    echo "columns in microseconds; 'us/op' is client CPU time per round trip"
}

# ---- main ------------------------------------------------------------------

print_header
for place in same split; do
    rep=1
    while [ "$rep" -le "$REPS" ]; do
        note "placement $place, rep $rep/$REPS"
        measure_sockperf "$place"
        if [ "$HOPBENCH_SKIP" = 0 ]; then
            measure_hopbench "$place"
        fi
        measure_floor "$place"
        rep=$((rep + 1))
    done
done

for place in same split; do
    print_table "$place"
done
