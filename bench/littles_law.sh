#!/bin/sh
# littles_law.sh: two figures every closed-loop client can be held to without a reference:
# Little's law (a closed loop keeps `connections` requests in the system, so its mean
# latency should be connections / its own throughput) and its request count against the
# server's own. Run for wrk and hopbench on nginx (http), redis-benchmark and hopbench on
# redis-server (PING), interleaved and repeated.
#
#   bench/littles_law.sh HOPBENCH [SECONDS]
#
# Servers (private instances in a mktemp -d directory, started once, stopped by PID at
# the end): nginx, worker_processes 1, `return 200 "hello\n"`, one access log line per
# request, keepalive_requests 1000000 (no reconnects); redis-server --save ''
# --appendonly no on a 127.0.0.1 port. No pinning: the figures compared are each
# tool's own, from one run.
#
# Cells, each rep running all of them, even reps in reverse order (ABBA):
#   http-cC    wrk -t1 -c C -d SECONDS  and  hopbench run http -c C -d SECONDS --warmup 0
#   ping-cC    redis-benchmark -c C -n N -t ping_mbulk --csv  and
#              hopbench run redis -c C -n N --warmup 0 --command ping
# with C = 1 and 16 (CONNS). Per cell and rep it prints the tool's reported mean latency
# (wrk's "Latency Avg", redis-benchmark's avg_latency_ms, hopbench's latency_ns.mean),
# connections / the tool's own ops/s, their ratio, the requests the tool says it made
# (wrk's "N requests in", redis-benchmark's -n, hopbench's .requests) and the server's
# count over the same run (nginx's access log lines; INFO commandstats' cmdstat_ping
# calls), and the difference; then, per cell, the median over the reps.
#
#   SECONDS   http measuring time per cell (default 3)
#   REPS=N    repetitions (default 3)
#   N=N       redis requests per cell (default 100000; at -c 1 a third of it)
#   CONNS="1 16"
#
# All traffic stays on 127.0.0.1. Every process started is killed by PID on exit, INT
# or TERM; every client runs under timeout. Needs (scripts/deps.sh bench): wrk,
# redis-benchmark, redis-server, redis-cli, nginx, jq, ss, timeout, awk.
set -eu

PROG=littles_law
READY_TRIES=100 # x 0.05 s: how long a server may take to listen
CLIENT_LIMIT=120
PATH=$PATH:/usr/sbin:/sbin

# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"

usage() {
    echo "usage: bench/littles_law.sh HOPBENCH [SECONDS]   (env: REPS=3 N=100000 CONNS=\"1 16\")" >&2
    exit 64
}

if [ $# -lt 1 ] || [ $# -gt 2 ]; then usage; fi
HOPBENCH=$1
SECS=${2:-3}
REPS=${REPS:-3}
N=${N:-100000}
CONNS=${CONNS:-1 16}
for v in "$SECS" "$REPS" "$N" $CONNS; do
    is_count "$v" || { echo "$PROG: not a positive integer: '$v'" >&2; usage; }
done
for tool in wrk redis-benchmark redis-server redis-cli nginx jq ss timeout awk; do
    command -v "$tool" >/dev/null 2>&1 || die "$tool not found (scripts/deps.sh bench installs it)"
done
[ -x "$HOPBENCH" ] || die "hopbench binary not executable: $HOPBENCH"

private_tmp littles

# ---- servers ----------------------------------------------------------------

# Sets NG_PID and NG_PORT.
start_nginx() {
    NG_PORT=$(pick_port 0)
    nginx_conf "$TMP/nginx" "$NG_PORT" "$TMP/nginx/access.log bench"
    nginx -p "$TMP/nginx/" -e "$TMP/nginx/error.log" -c "$TMP/nginx/nginx.conf" \
        >"$TMP/nginx.out" 2>&1 &
    NG_PID=$!
    PIDS="$PIDS $NG_PID"
    i=0
    while [ "$i" -lt "$READY_TRIES" ] && kill -0 "$NG_PID" 2>/dev/null; do
        port_listening "$NG_PORT" && return 0
        sleep 0.05
        i=$((i + 1))
    done
    die "nginx did not listen on 127.0.0.1:$NG_PORT: $(tail -n 5 "$TMP/nginx/error.log" 2>/dev/null)"
}

# Sets RD_PID and RD_PORT.
start_redis() {
    RD_PORT=$(pick_port 7)
    [ "$RD_PORT" != "$NG_PORT" ] || RD_PORT=$((RD_PORT + 1))
    redis-server --bind 127.0.0.1 --port "$RD_PORT" --save '' --appendonly no --dir "$TMP" \
        --daemonize no --logfile "$TMP/redis.log" >"$TMP/redis.out" 2>&1 &
    RD_PID=$!
    PIDS="$PIDS $RD_PID"
    i=0
    while [ "$i" -lt "$READY_TRIES" ] && kill -0 "$RD_PID" 2>/dev/null; do
        [ "$(timeout 5 redis-cli -p "$RD_PORT" ping 2>/dev/null)" = PONG ] && return 0
        sleep 0.05
        i=$((i + 1))
    done
    die "redis-server did not answer on 127.0.0.1:$RD_PORT: $(tail -n 5 "$TMP/redis.log" 2>/dev/null)"
}

# The server's own count: nginx's access log lines; redis's PING calls.
ng_count() {
    if [ -f "$TMP/nginx/access.log" ]; then wc -l <"$TMP/nginx/access.log"; else echo 0; fi
}
rd_count() {
    timeout 5 redis-cli -p "$RD_PORT" info commandstats | tr -d '\r' |
        sed -n 's/^cmdstat_ping:calls=\([0-9]*\),.*/\1/p' | grep . || echo 0
}

# server_count WHICH WANT: the count, read again for up to 1 s until it reaches WANT
# (nginx logs a request after its reply went out), then once more 300 ms later, so that
# requests the tool left uncounted have time to show.
server_count() {
    i=0
    while :; do
        got=$("$1")
        [ "$got" -ge "$2" ] || [ "$i" -ge 20 ] && break
        sleep 0.05
        i=$((i + 1))
    done
    sleep 0.3
    "$1"
}

# ---- clients: each sets MEAN_US, OPS, REQ --------------------------------------

run() { # OUT CMD...: bounded, dies on failure
    out=$1
    shift
    timeout "$CLIENT_LIMIT" "$@" >"$out" 2>"$out.err" || die "failed: $*: $(tail -n 3 "$out" "$out.err")"
}

# A wrk duration in us ("103.50us", "1.20ms", "2.00s").
wrk_us() {
    echo "$1" | awk '{ v = $1 + 0; if ($1 ~ /ms$/) v *= 1000; else if ($1 ~ /[0-9]s$/) v *= 1e6; print v }'
}

wrk_cell() { # C
    run "$TMP/wrk.out" wrk -t1 -c "$1" -d "$SECS" "http://127.0.0.1:$NG_PORT/"
    grep -qE 'Socket errors|Non-2xx' "$TMP/wrk.out" && die "wrk reported errors: $(cat "$TMP/wrk.out")"
    MEAN_US=$(wrk_us "$(awk '$1 == "Latency" { print $2; exit }' "$TMP/wrk.out")")
    OPS=$(awk '/^Requests\/sec:/ { print $2; exit }' "$TMP/wrk.out")
    REQ=$(awk '/ requests in / { print $1; exit }' "$TMP/wrk.out")
}

rb_cell() { # C
    run "$TMP/rb.out" redis-benchmark -h 127.0.0.1 -p "$RD_PORT" -c "$1" -n "$(n_of "$1")" \
        -t ping_mbulk --csv
    OPS=$(awk -F'"' '$2 == "PING_MBULK" { print $4; exit }' "$TMP/rb.out")
    MEAN_US=$(awk -F'"' '$2 == "PING_MBULK" { print $6 * 1000; exit }' "$TMP/rb.out")
    REQ=$(n_of "$1")
}

hb_cell() { # C PROTO ARGS...
    c=$1
    shift
    rm -f "$TMP/hb.json"
    run "$TMP/hb.out" "$HOPBENCH" run "$@" -c "$c" --warmup 0 --json "$TMP/hb.json"
    [ "$(json_number "$TMP/hb.json" '.runs[0].errors_total')" = 0 ] ||
        die "hopbench had errors: $(jq -c '.runs[0].errors' "$TMP/hb.json")"
    MEAN_US=$(json_number "$TMP/hb.json" '.runs[0].latency_ns.mean / 1000')
    OPS=$(json_number "$TMP/hb.json" '.runs[0].ops_per_s')
    REQ=$(json_number "$TMP/hb.json" '.runs[0].requests')
}

n_of() { # C: redis requests per cell
    if [ "$1" = 1 ]; then echo $((N / 3)); else echo "$N"; fi
}

# ---- cells -------------------------------------------------------------------

DATA=$TMP/data
CELLS=""
for c in $CONNS; do
    CELLS="$CELLS http-c$c:wrk http-c$c:hopbench ping-c$c:redis-benchmark ping-c$c:hopbench"
done

cell() { # REP CASE:TOOL
    case_=${2%%:*} tool=${2#*:}
    c=${case_#*-c}
    case $case_ in
    http-*)
        before=$(ng_count)
        if [ "$tool" = wrk ]; then
            wrk_cell "$c"
        else
            hb_cell "$c" http "tcp://127.0.0.1:$NG_PORT" -d "$SECS"
        fi
        after=$(server_count ng_count $((before + REQ)))
        ;;
    *)
        before=$(rd_count)
        if [ "$tool" = redis-benchmark ]; then
            rb_cell "$c"
        else
            hb_cell "$c" redis "tcp://127.0.0.1:$RD_PORT" -n "$(n_of "$c")" --command ping
        fi
        after=$(server_count rd_count $((before + REQ)))
        ;;
    esac
    line=$(awk -v r="$1" -v k="$case_" -v t="$tool" -v c="$c" -v m="$MEAN_US" -v o="$OPS" \
        -v q="$REQ" -v s=$((after - before)) 'BEGIN {
        implied = c / o * 1e6
        printf "%s %s %s %.1f %.1f %.3f %d %d %d\n", r, k, t, m, implied, m / implied, q, s, s - q }')
    echo "$line" >>"$DATA"
    echo "$line" | awk '{ printf "%-4s %-9s %-16s %10s %12s %7s %10s %10s %6s\n", $1, $2, $3, $4, $5, $6, $7, $8, $9 }'
}

start_nginx
start_redis
note "nginx 127.0.0.1:$NG_PORT, redis-server 127.0.0.1:$RD_PORT; $REPS reps, http ${SECS} s, redis N=$N"
printf '%-4s %-9s %-16s %10s %12s %7s %10s %10s %6s\n' rep cell tool mean_us conns/ops_us ratio \
    requests server diff
rep=1
while [ "$rep" -le "$REPS" ]; do
    if [ $((rep % 2)) = 1 ]; then order=$CELLS; else order=$(echo "$CELLS" | tr ' ' '\n' | sed '/^$/d' | tac | tr '\n' ' '); fi
    for ct in $order; do
        cell "$rep" "$ct"
    done
    rep=$((rep + 1))
done

echo
echo "median over $REPS reps: mean latency (us), connections / ops/s (us), their ratio;"
echo "requests by the tool and by the server, and server - tool (min..max)"
sort -k2,2 -k3,3 -k1,1n "$DATA" | awk '
function med(s,    a, n, i, j, t) {
    n = split(s, a, " ")
    for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
    return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
function flush() {
    if (key == "") return
    printf "%-9s %-16s %10.1f %12.1f %7.3f   diff %d..%d\n", cell, tool, med(m), med(im), med(r), dmin, dmax
}
{
    k = $2 " " $3
    if (k != key) { flush(); key = k; cell = $2; tool = $3; m = im = r = ""; dmin = dmax = $9 }
    m = m " " $4; im = im " " $5; r = r " " $6
    if ($9 < dmin) dmin = $9
    if ($9 > dmax) dmax = $9
}
END { flush() }'
