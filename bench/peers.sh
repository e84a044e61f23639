#!/bin/sh
# peers.sh: hopbench's load client against the standard peer clients, each pair
# loading the same real server: wrk and hopbench on nginx (http), redis-benchmark
# and hopbench on redis-server (redis).
#
#   bench/peers.sh HOPBENCH [SECONDS]
#
# Servers (private instances in a mktemp -d directory, started once, stopped by
# PID at the end): nginx, worker_processes 1, `return 200 "hello\n"`, access_log
# off, keepalive_requests 1000000 (no reconnects); redis-server --save ''
# --appendonly no, a 127.0.0.1 port and a Unix socket. Both pinned to CPU 1;
# every client (and the perf stat around it) to CPU 0.
#
# Cases, each run by both tools in every rep:
#   http-c1, -c16, -c64   wrk -t1 -c C -d SECONDS+1 --latency  against
#                         hopbench run http -c C -t 1 -d SECONDS --warmup 1
#   http-cC-W             the same with hopbench run http --wait W (epoll, block or
#                         uring), e.g. http-c16-uring: its own wrk cell beside it in
#                         every rep, so hopbench's waits can be set against one
#                         another and wrk in one interleaved window
#   ping|set|get-cC-pP    redis-benchmark -c C -n N -P P -t ping_mbulk|set|get -d 64
#                         -r 1000 --csv  against  hopbench run redis -c C -t 1 -n N
#                         --warmup 0 --pipeline P --command ping|set|get (set, get:
#                         --keys 1000; set: --value-size 64); C/P = 16/1, 16/16, and 1/1 (ping), plus
#                         ping-c16-p1-unix over redis's Unix socket
# Throughput is each tool's own figure (wrk "Requests/sec", redis-benchmark's
# csv rps, hopbench .runs[0].ops_per_s). Client CPU per request is perf stat's
# task-clock for the whole client process divided by all the requests it made
# in its life: wrk's "N requests in", redis-benchmark's N, hopbench's .requests
# (which include the warm-up). wrk runs SECONDS+1 so that both http clients live
# equally long (hopbench: 1 s warm-up + SECONDS). A second reading of the same,
# from the rusage of /usr/bin/time around the client (utime + stime, which the
# kernel scales to its own run-time count), checks the first: perf's task-clock
# leaves out part of every context switch (see bench/README.md, cpu_crosscheck).
#
# Each rep runs every cell (case x tool); even reps run them in reverse order
# (ABBA), so slow drift hits both sides of a ratio alike. Reported per case: each
# tool's median [min-max] over the reps, and hopbench/peer as the median of the
# per-rep ratios [min-max]. Targets (informational; the exit status is 0 unless
# a tool failed): ops/s ratio >= 1.00 everywhere; http client CPU per request
# ratio <= 1.00; the server's CPU per request ratio <= 1.00 everywhere.
#
# The server's CPU per request: utime + stime of the server process (nginx's
# worker; redis-server, all its threads) from /proc/PID/stat, read right before
# the client starts and right after it exits, divided by the same requests as
# the client's CPU. The servers sit idle between cells, so the difference is what
# that client's load cost them. /proc/PID/stat counts in clock ticks (CLK_TCK,
# usually 10 ms): a cell gives a server 0.2-2 s of CPU, so that is 0.5-5 %
# of a cell; the median over the reps and the per-rep ratios carry it.
#
#   SECONDS      http measuring time per cell (default 4)
#   REPS=N       repetitions (default 5)
#   N_P1=N       redis requests per cell at -P 1 -c 16 (default 150000)
#   N_P16=N      redis requests per cell at -P 16 -c 16 (default 1500000)
#   N_C1=N       redis requests per cell at -P 1 -c 1 (default 50000)
#   BUDGET=S     start no new rep once the next would likely end past S seconds
#                (default 840); the report covers the reps done
#   CASES="..."  the cases to run (default: all of the above), e.g. "http-c1 http-c16";
#                a redis case CMD-cC-pP[-unix] takes N_C1 requests if C is 1, else
#                N_P1 if P is 1, else N_P16
#   NICE=N       nice value for the servers and the clients (default -19 as root,
#                else 0): on a shared 2-CPU machine anything else runnable on
#                CPU 0 or 1 delays the wake-ups of whichever tool is running;
#                a high priority for both sides reduces that, but cannot stop the
#                host or another pinned benchmark from moving a cell by 2-4x
#
# All traffic stays on 127.0.0.1 or Unix sockets in the mktemp directory. Every
# process started is killed by PID (clients: by the process group their setsid
# made) on exit, INT or TERM; every client runs under timeout. Needs (scripts/deps.sh
# bench installs them): wrk, redis-benchmark, redis-server, redis-cli, nginx, perf
# (root or perf_event_paranoid <= 1), /usr/bin/time (GNU time), jq, ss, taskset,
# setsid, timeout, 2 CPUs.
set -eu

PROG=peers
READY_TRIES=100 # x 0.05 s: how long a server may take to listen
STOP_TRIES=50   # x 0.1 s: how long a server may take to exit on SIGTERM
CLIENT_LIMIT=120
PATH=$PATH:/usr/sbin:/sbin

# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"

usage() {
    echo "usage: bench/peers.sh HOPBENCH [SECONDS]   (env: REPS=5 N_P1=150000 N_P16=1500000 N_C1=50000 BUDGET=840)" >&2
    exit 64
}

# ---- arguments and environment --------------------------------------------

if [ $# -lt 1 ] || [ $# -gt 2 ]; then usage; fi
HOPBENCH=$1
SECS=${2:-4}
REPS=${REPS:-5}
N_P1=${N_P1:-150000}
N_P16=${N_P16:-1500000}
N_C1=${N_C1:-50000}
BUDGET=${BUDGET:-840}
if [ "$(id -u)" = 0 ]; then NICE=${NICE:--19}; else NICE=${NICE:-0}; fi
for v in "$SECS" "$REPS" "$N_P1" "$N_P16" "$N_C1" "$BUDGET"; do
    is_count "$v" || { echo "$PROG: not a positive integer: '$v'" >&2; usage; }
done

for tool in wrk redis-benchmark redis-server redis-cli nginx perf jq ss taskset setsid timeout awk; do
    command -v "$tool" >/dev/null 2>&1 || die "$tool not found (scripts/deps.sh bench installs it)"
done
[ -x /usr/bin/time ] || die "/usr/bin/time not found (Debian package time)"
[ -x "$HOPBENCH" ] || die "hopbench binary not executable: $HOPBENCH"
taskset -c 1 true 2>/dev/null || die "CPU 1 is not available: the placement needs 2 CPUs"
case "$NICE" in -[0-9]* | [0-9]*) ;; *) usage ;; esac
nice -n "$NICE" true 2>/dev/null || die "cannot run at nice $NICE (not root? set NICE=0)"
perf stat -x, -e task-clock -o /dev/null -- true 2>/dev/null ||
    die "perf stat -e task-clock does not work here (root, or kernel.perf_event_paranoid <= 1)"

# ---- cleanup: every server PID is in $PIDS, every client's process group in $GROUPS

PIDS=""
GROUPS_=""
TMP=$(mktemp -d "${TMPDIR:-/tmp}/peers.XXXXXX")

cleanup() {
    for g in $GROUPS_; do
        kill -s KILL -- "-$g" 2>/dev/null || true
    done
    for pid in $PIDS; do
        kill -KILL "$pid" 2>/dev/null || true
    done
    for pid in $GROUPS_ $PIDS; do
        wait "$pid" 2>/dev/null || true
    done
    rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

forget() { # VAR PID: removes PID from the list in VAR (PIDS or GROUPS_)
    rest=""
    list=""
    eval "list=\$$1"
    for p in $list; do
        [ "$p" = "$2" ] || rest="$rest $p"
    done
    eval "$1=\$rest"
}

# SIGTERM, bounded wait, then SIGKILL; reaps the process.
stop_server() {
    pid=$1
    stop_pid TERM "$pid"
    forget PIDS "$pid"
}

# ---- small helpers ---------------------------------------------------------


# ---- servers ----------------------------------------------------------------

# Sets NG_PID (the master), NG_WORKER and NG_PORT.
start_nginx() {
    attempt=0
    while [ "$attempt" -lt 5 ]; do
        NG_PORT=$(pick_port "$attempt")
        nginx_conf "$TMP/nginx" "$NG_PORT"
        nice -n "$NICE" taskset -c 1 nginx -p "$TMP/nginx/" -e "$TMP/nginx/error.log" -c "$TMP/nginx/nginx.conf" \
            >"$TMP/nginx.out" 2>&1 &
        NG_PID=$!
        PIDS="$PIDS $NG_PID"
        i=0
        NG_WORKER=""
        while [ "$i" -lt "$READY_TRIES" ] && kill -0 "$NG_PID" 2>/dev/null; do
            NG_WORKER=$(pgrep -P "$NG_PID" 2>/dev/null | head -n 1 || true)
            if [ -n "$NG_WORKER" ] && port_listening "$NG_PORT"; then
                PIDS="$PIDS $NG_WORKER"
                return 0
            fi
            sleep 0.05
            i=$((i + 1))
        done
        stop_server "$NG_PID"
        attempt=$((attempt + 1))
    done
    die "nginx did not listen on 127.0.0.1 (last port $NG_PORT): $(cat "$TMP/nginx.out" "$TMP/nginx/error.log" 2>/dev/null | tail -n 5)"
}

stop_nginx() {
    stop_server "$NG_PID" # SIGTERM: fast shutdown, the master stops its worker
    if kill -0 "$NG_WORKER" 2>/dev/null; then
        kill -KILL "$NG_WORKER" 2>/dev/null || true
    fi
    forget PIDS "$NG_WORKER"
}

# Sets RD_PID, RD_PORT and RD_SOCK.
start_redis() {
    RD_SOCK="$TMP/redis.sock"
    attempt=0
    while [ "$attempt" -lt 5 ]; do
        RD_PORT=$(pick_port $((attempt + 7)))
        [ "$RD_PORT" != "$NG_PORT" ] || RD_PORT=$((RD_PORT + 1))
        nice -n "$NICE" taskset -c 1 redis-server --bind 127.0.0.1 --port "$RD_PORT" --unixsocket "$RD_SOCK" \
            --unixsocketperm 700 --save '' --appendonly no --dir "$TMP" --daemonize no \
            --logfile "$TMP/redis.log" >"$TMP/redis.out" 2>&1 &
        RD_PID=$!
        PIDS="$PIDS $RD_PID"
        i=0
        while [ "$i" -lt "$READY_TRIES" ] && kill -0 "$RD_PID" 2>/dev/null; do
            if port_listening "$RD_PORT" && [ -S "$RD_SOCK" ] &&
                [ "$(timeout 5 redis-cli -p "$RD_PORT" ping 2>/dev/null)" = PONG ]; then
                return 0
            fi
            sleep 0.05
            i=$((i + 1))
        done
        stop_server "$RD_PID"
        attempt=$((attempt + 1))
    done
    die "redis-server did not listen on 127.0.0.1 (last port $RD_PORT): $(cat "$TMP/redis.out" "$TMP/redis.log" 2>/dev/null | tail -n 5)"
}

servers_alive() {
    kill -0 "$NG_PID" 2>/dev/null || die "nginx (pid $NG_PID) died: $(tail -n 5 "$TMP/nginx/error.log")"
    kill -0 "$NG_WORKER" 2>/dev/null || die "nginx worker (pid $NG_WORKER) died"
    kill -0 "$RD_PID" 2>/dev/null || die "redis-server (pid $RD_PID) died: $(tail -n 5 "$TMP/redis.log")"
}

# ---- clients -----------------------------------------------------------------

CLK_TCK=$(getconf CLK_TCK)

# The CPU time SRV_PID has used so far, in clock ticks: utime + stime, fields 14
# and 15 of /proc/PID/stat (counted after the ")" that ends the command name).
server_ticks() {
    sed 's/.*) //' "/proc/$SRV_PID/stat" | awk '{ print $12 + $13 }'
}

# client OUT CMD...: CMD on CPU 0 at nice $NICE under perf stat (task-clock of CMD
# and its children), bounded by timeout, in its own session so that cleanup can
# kill the whole group (timeout --foreground keeps CMD in it). stdout to OUT,
# stderr to OUT.err, perf's figures to OUT.perf, /usr/bin/time's to OUT.time.
# Sets TASK_NS (task-clock in ns), RUSAGE_NS (utime + stime in ns) and SERVER_NS
# (the CPU time SRV_PID used meanwhile, ns). Dies if
# CMD fails. (dash runs a trap only after a foreground command ends, so clients
# run in the background and are waited for: INT/TERM then act at once.)
client() {
    out=$1
    shift
    rm -f "$out" "$out.err" "$out.perf" "$out.time"
    srv0=$(server_ticks)
    setsid nice -n "$NICE" taskset -c 0 perf stat -x, -e task-clock -o "$out.perf" -- \
        /usr/bin/time -f '%U %S' -o "$out.time" timeout --foreground "$CLIENT_LIMIT" "$@" \
        >"$out" 2>"$out.err" &
    cl=$!
    GROUPS_="$GROUPS_ $cl"
    rc=0
    wait "$cl" || rc=$?
    srv1=$(server_ticks)
    forget GROUPS_ "$cl"
    [ "$rc" = 0 ] || die "client failed (exit $rc): $*: $(tail -n 3 "$out" "$out.err" 2>/dev/null)"
    # perf -x, line: 1007.86,msec,task-clock,...
    TASK_NS=$(awk -F, '$3 ~ /^task-clock/ && $1 ~ /^[0-9.]+$/ { printf "%.0f\n", $1 * 1e6 }' "$out.perf")
    [ -n "$TASK_NS" ] || die "no task-clock from perf stat for $*: $(cat "$out.perf")"
    RUSAGE_NS=$(awk 'NF == 2 && $1 ~ /^[0-9.]+$/ && $2 ~ /^[0-9.]+$/ { printf "%.0f\n", ($1 + $2) * 1e9 }' "$out.time")
    [ -n "$RUSAGE_NS" ] || die "no utime/stime from /usr/bin/time for $*: $(cat "$out.time")"
    SERVER_NS=$(awk -v a="$srv0" -v b="$srv1" -v hz="$CLK_TCK" 'BEGIN { printf "%.0f\n", (b - a) * 1e9 / hz }')
}

# Each tool sets OPS (ops/s by its own report), REQ (requests over its life),
# CPU (client task-clock ns per request) and SELF (hopbench's own client CPU ns
# per measured op, "-" for the peers).

run_wrk() { # CONNECTIONS
    out="$TMP/wrk.out"
    client "$out" wrk -t1 -c "$1" -d "$((SECS + 1))" --latency "http://127.0.0.1:$NG_PORT/"
    if grep -qE 'Socket errors|Non-2xx' "$out"; then
        die "wrk reported errors: $(grep -E 'Socket errors|Non-2xx' "$out")"
    fi
    REQ=$(awk '/ requests in / { print $1; exit }' "$out")
    OPS=$(awk '/^Requests\/sec:/ { print $2; exit }' "$out")
    if ! is_count "$REQ" || [ -z "$OPS" ]; then die "cannot parse wrk output: $(cat "$out")"; fi
    SELF=-
}

# hopbench_run JSON ARGS...: a hopbench run, checked for errors.
hopbench_run() {
    json=$1
    shift
    rm -f "$json"
    client "$TMP/hopbench.out" "$HOPBENCH" run "$@" --json "$json"
    [ "$(json_number "$json" '.runs[0].errors_total')" = 0 ] ||
        die "hopbench run $* had errors: $(jq -c '.runs[0].errors' "$json")"
    OPS=$(json_number "$json" '.runs[0].ops_per_s')
    REQ=$(json_number "$json" '.runs[0].requests')
    SELF=$(json_number "$json" '.runs[0].client_cpu_ns_per_op')
}

run_hopbench_http() { # CONNECTIONS [WAIT]
    if [ -n "${2:-}" ]; then
        hopbench_run "$TMP/hb-http.json" http "tcp://127.0.0.1:$NG_PORT" -c "$1" -t 1 -d "$SECS" \
            --warmup 1 --wait "$2"
        [ "$2" = block ] || [ "$(jq -r '.runs[0].wait' "$TMP/hb-http.json")" = "$2" ] ||
            die "hopbench run http --wait $2 waited with $(jq -r '.runs[0].wait' "$TMP/hb-http.json")"
    else
        hopbench_run "$TMP/hb-http.json" http "tcp://127.0.0.1:$NG_PORT" -c "$1" -t 1 -d "$SECS" \
            --warmup 1
    fi
}

# redis_n CONNECTIONS PIPELINE: requests per cell.
redis_n() {
    if [ "$1" = 1 ]; then
        echo "$N_C1"
    elif [ "$2" = 1 ]; then
        echo "$N_P1"
    else
        echo "$N_P16"
    fi
}

run_redis_benchmark() { # COMMAND CONNECTIONS PIPELINE TRANSPORT
    test=$1
    [ "$1" = ping ] && test=ping_mbulk
    if [ "$4" = unix ]; then where="-s $RD_SOCK"; else where="-h 127.0.0.1 -p $RD_PORT"; fi
    n=$(redis_n "$2" "$3")
    out="$TMP/rb.out"
    # shellcheck disable=SC2086 # $where is two words on purpose
    client "$out" redis-benchmark $where -c "$2" -n "$n" -P "$3" -t "$test" -d 64 -r 1000 --csv
    want=$(echo "$test" | tr '[:lower:]' '[:upper:]')
    OPS=$(awk -F'"' -v t="$want" '$2 == t { print $4; exit }' "$out")
    [ -n "$OPS" ] || die "cannot parse redis-benchmark output: $(cat "$out" "$out.err")"
    REQ=$n
    SELF=-
}

run_hopbench_redis() { # COMMAND CONNECTIONS PIPELINE TRANSPORT
    if [ "$4" = unix ]; then ep="unix:$RD_SOCK"; else ep="tcp://127.0.0.1:$RD_PORT"; fi
    # As redis-benchmark -r 1000 -d 64: keys for set and get, the 64-byte value for set.
    case "$1" in
    set) shape="--keys 1000 --value-size 64" ;;
    get) shape="--keys 1000" ;;
    *) shape="" ;;
    esac
    # shellcheck disable=SC2086 # shape is a list of options
    hopbench_run "$TMP/hb-redis.json" redis "$ep" -c "$2" -t 1 -n "$(redis_n "$2" "$3")" \
        --warmup 0 --pipeline "$3" --command "$1" $shape
}

# All samples go to one file, a line per cell and rep:
#   REP CASE TOOL OPS CPU_NS SELF_NS RUSAGE_NS SERVER_NS   (all but OPS: ns per request)
DATA="$TMP/data"

# run_cell REP CASE TOOL; CASE: http-cC[-WAIT] or CMD-cC-pP[-unix]; TOOL: peer or hb.
run_cell() {
    rep=$1
    case_=$2
    tool=$3
    servers_alive
    case "$case_" in
    http-c*)
        c=${case_#http-c}
        wait_=
        case "$c" in *-*)
            wait_=${c#*-}
            c=${c%%-*}
            ;;
        esac
        SRV_PID=$NG_WORKER
        if [ "$tool" = peer ]; then run_wrk "$c"; else run_hopbench_http "$c" "$wait_"; fi
        ;;
    *)
        # ping-c16-p1[-unix]
        cmd=${case_%%-*}
        rest=${case_#*-c}
        c=${rest%%-*}
        rest=${rest#*-p}
        p=${rest%%-*}
        tr=tcp
        case "$case_" in *-unix) tr=unix ;; esac
        SRV_PID=$RD_PID
        if [ "$tool" = peer ]; then
            run_redis_benchmark "$cmd" "$c" "$p" "$tr"
        else
            run_hopbench_redis "$cmd" "$c" "$p" "$tr"
        fi
        ;;
    esac
    CPU=$(awk -v t="$TASK_NS" -v r="$REQ" 'BEGIN { printf "%.0f\n", t / r }')
    RU=$(awk -v t="$RUSAGE_NS" -v r="$REQ" 'BEGIN { printf "%.0f\n", t / r }')
    SRV=$(awk -v t="$SERVER_NS" -v r="$REQ" 'BEGIN { printf "%.0f\n", t / r }')
    SELF_R=$SELF
    [ "$SELF" = - ] || SELF_R=$(printf '%.0f' "$SELF")
    echo "$rep $case_ $tool $OPS $CPU $SELF_R $RU $SRV" >>"$DATA"
    note "  $case_ $tool: $(printf '%.0f' "$OPS") ops/s, $REQ requests, client CPU $CPU ns/request (rusage $RU), server CPU $SRV ns/request"
}

# ---- report ----------------------------------------------------------------

report() {
    awk -v reps="$1" -v cases="$CASES" '
    function sortv(a, n,    i, j, t) {
        for (i = 2; i <= n; i++) {
            t = a[i]
            for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]
            a[j + 1] = t
        }
    }
    # Sets MED, MIN, MAX, N over the reps of key k in array v; N = 0 if none.
    function stats(v, k,    a, n, r) {
        n = 0
        for (r = 1; r <= reps; r++) if ((k, r) in v) a[++n] = v[k, r] + 0
        N = n
        if (n == 0) return
        sortv(a, n)
        MED = (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
        MIN = a[1]; MAX = a[n]
    }
    # Per-rep ratios hb/peer of array v for case c; then stats.
    function ratio(v, c,    r) {
        delete rat
        for (r = 1; r <= reps; r++)
            if (((c SUBSEP "hb"), r) in v && ((c SUBSEP "peer"), r) in v && v[c, "peer", r] > 0)
                rat["x", r] = v[c, "hb", r] / v[c, "peer", r]
        stats(rat, "x")
    }
    # Each case'"'"'s hb/peer ratio of array v in every rep, a line per case.
    function per_rep(v, nc,    i, c, r, line) {
        for (i = 1; i <= nc; i++) {
            c = cs[i]; line = ""
            for (r = 1; r <= reps; r++)
                line = line sprintf(" %5s", ((c, "hb", r) in v && (c, "peer", r) in v && v[c, "peer", r] > 0) ? \
                    sprintf("%.2f", v[c, "hb", r] / v[c, "peer", r]) : "-")
            printf "%-18s%s\n", c, line
        }
    }
    function kops(x) { return sprintf("%.1f", x / 1000) }
    function cell(unit) {
        if (unit == "k") return sprintf("%7s [%s-%s]", kops(MED), kops(MIN), kops(MAX))
        return sprintf("%5s [%s-%s]", us(MED), us(MIN), us(MAX))
    }
    # Sets A and B, the peer'"'"'s and hopbench'"'"'s "median [min-max]" of array v for case c
    # (unit k: thousands, else ns shown as us); 0 if either has no sample.
    function both(v, c, unit) {
        stats(v, c SUBSEP "peer"); if (!N) return 0
        A = cell(unit)
        stats(v, c SUBSEP "hb"); if (!N) return 0
        B = cell(unit)
        return 1
    }
    # A table row: case c, who, both medians (columns w wide), the ratio and its verdict (ge).
    function row(v, c, who, unit, ge, w,    r) {
        if (!both(v, c, unit)) return
        ratio(v, c)
        r = N ? sprintf("%.2f%s [%.2f-%.2f]", MED, verdict(ge), MIN, MAX) : "-"
        printf "%-18s %-16s %-" w "s %-" w "s %s\n", c, who, A, B, r
    }
    function us(x) { return sprintf("%.2f", x / 1000) }
    function verdict(ge) {
        if (ge == "") return ""
        if (ge == ">=") return MED >= 1 ? " PASS" : " MISS"
        return MED <= 1 ? " PASS" : " MISS"
    }
    {
        ops[$2, $3, $1] = $4
        cpu[$2, $3, $1] = $5
        if ($6 != "-") self[$2, $3, $1] = $6
        ru[$2, $3, $1] = $7
        srv[$2, $3, $1] = $8
    }
    END {
        nc = split(cases, cs, " ")
        printf "\nthroughput: k ops/s, median over %d reps [min-max]; hb/peer = median of the per-rep ratios [min-max]\n", reps
        printf "%-18s %-16s %-22s %-22s %s\n", "case", "peer", "peer k ops/s", "hopbench k ops/s", "hb/peer ops/s (target >= 1.00)"
        for (i = 1; i <= nc; i++) {
            c = cs[i]
            peer = (c ~ /^http/) ? "wrk" : "redis-benchmark"
            row(ops, c, peer, "k", ">=", 22)
        }
        printf "\nclient CPU per request: perf task-clock of the whole client process / all its requests, us,\n"
        printf "median [min-max]; hb self = hopbench'"'"'s own client_cpu_ns_per_op (measured window only);\n"
        printf "hb/peer cpu = median of the per-rep ratios [min-max]; rusage = the same ratio from utime+stime\n"
        printf "%-18s %-20s %-20s %-7s %-34s %s\n", "case", "peer cpu us/req", "hopbench cpu us/req", "hb self",
            "hb/peer cpu (http target <= 1.00)", "rusage"
        for (i = 1; i <= nc; i++) {
            c = cs[i]
            if (!both(cpu, c, "u")) continue
            stats(self, c SUBSEP "hb"); s = N ? us(MED) : "-"
            ratio(cpu, c)
            r = N ? sprintf("%.2f%s [%.2f-%.2f]", MED, verdict(c ~ /^http/ ? "<=" : ""), MIN, MAX) : "-"
            ratio(ru, c)
            q = N ? sprintf("%.2f [%.2f-%.2f]", MED, MIN, MAX) : "-"
            printf "%-18s %-20s %-20s %-7s %-34s %s\n", c, A, B, s, r, q
        }
        printf "\nserver CPU per request: utime+stime of the server process (nginx worker, redis-server) over the\n"
        printf "client'"'"'s life / the client'"'"'s requests, us, median [min-max]; hb/peer = median of the per-rep ratios\n"
        printf "%-18s %-16s %-20s %-20s %s\n", "case", "server", "under peer us/req", "under hopbench", "hb/peer server cpu (target <= 1.00)"
        for (i = 1; i <= nc; i++) {
            c = cs[i]
            server = (c ~ /^http/) ? "nginx" : "redis-server"
            row(srv, c, server, "u", "<=", 20)
        }
        printf "\nper-rep hb/peer server CPU per request ratio, rep 1..%d\n", reps
        per_rep(srv, nc)
        printf "\nper-rep hb/peer ops/s ratio, rep 1..%d (even reps ran in reverse order)\n", reps
        per_rep(ops, nc)
    }' "$DATA"
}

print_header() {
    echo "peers: $(date -u '+%Y-%m-%d %H:%M:%S UTC'), kernel $(uname -r), $(nproc) CPUs," \
        "$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
    echo "command: CASES=\"$CASES\" REPS=$REPS N_P1=$N_P1 N_P16=$N_P16 N_C1=$N_C1 BUDGET=$BUDGET NICE=$NICE bench/peers.sh $HOPBENCH $SECS"
    echo "versions: $("$HOPBENCH" --version 2>/dev/null || echo "hopbench ?"); $(wrk -v 2>&1 | head -n 1 | cut -d ' ' -f 1-2);" \
        "$(redis-benchmark --version 2>&1 | head -n 1); $(nginx -v 2>&1 | head -n 1); $(redis-server --version | cut -d ' ' -f 1-3)"
    echo "pinning: servers (nginx master+worker, redis-server) on CPU 1; every client (under perf stat) on CPU 0; all at nice $NICE"
    echo "server CPU: utime+stime of the nginx worker or redis-server from /proc/PID/stat around each client (CLK_TCK $CLK_TCK)"
    printf '%s\n' "servers: nginx worker_processes 1, access_log off, keepalive_requests 1000000, return 200 \"hello\\n\"; redis-server --save '' --appendonly no (tcp 127.0.0.1 + unix socket)"
    echo "http: wrk -t1 -c C -d $((SECS + 1)) --latency  vs  hopbench run http -c C -t 1 -d $SECS --warmup 1 (both live ~$((SECS + 1)) s)"
    echo "redis: redis-benchmark -c C -n N -P P -t T -d 64 -r 1000 --csv  vs  hopbench run redis -c C -t 1 -n N --warmup 0" \
        "--pipeline P --command T --keys 1000 --value-size 64; N = $N_P1 (c16 p1), $N_P16 (c16 p16), $N_C1 (c1 p1)"
    echo "load average at start: $(cut -d ' ' -f 1-3 /proc/loadavg) (anything else running skews every column)"
}

# ---- main ------------------------------------------------------------------

ALL_CASES="http-c1 http-c16 http-c64 ping-c1-p1 ping-c16-p1 set-c16-p1 get-c16-p1 ping-c16-p16 set-c16-p16 get-c16-p16 ping-c16-p1-unix"
CASES=${CASES:-$ALL_CASES}
for c in $CASES; do
    if ! echo "$c" | grep -Eqx 'http-c[1-9][0-9]*(-(epoll|block|uring))?|(ping|set|get)-c[1-9][0-9]*-p[1-9][0-9]*(-unix)?'; then
        echo "$PROG: unknown case '$c' (http-cC[-epoll|block|uring] or ping|set|get-cC-pP[-unix])" >&2
        usage
    fi
done
CELLS=""
for c in $CASES; do CELLS="$CELLS $c:peer $c:hb"; done
REVERSED=""
for c in $CELLS; do REVERSED="$c $REVERSED"; done

print_header
start_nginx
start_redis
note "nginx pid $NG_PID (worker $NG_WORKER) on 127.0.0.1:$NG_PORT; redis-server pid $RD_PID on 127.0.0.1:$RD_PORT and $RD_SOCK"

SRV_PID=$RD_PID
# Fill both tools' key sets (redis-benchmark: key:000000000NNN; hopbench: key:N) so
# that every GET finds a 64-byte value whatever the cell order. Not measured.
client "$TMP/fill-rb.out" redis-benchmark -h 127.0.0.1 -p "$RD_PORT" -c 16 -n 20000 -t set -d 64 -r 1000 -q
client "$TMP/fill-hb.out" "$HOPBENCH" run redis "tcp://127.0.0.1:$RD_PORT" -c 16 -t 1 -n 20000 --warmup 0 \
    --command set --keys 1000 --value-size 64 --json "$TMP/fill-hb.json"
note "filled: $(timeout 5 redis-cli -p "$RD_PORT" dbsize) keys"

START=$(date +%s)
DONE=0
rep=1
while [ "$rep" -le "$REPS" ]; do
    now=$(date +%s)
    if [ "$DONE" -gt 0 ] && [ $((now - START + (now - START) / DONE)) -gt "$BUDGET" ]; then
        note "stopping after $DONE reps: another would end past BUDGET=$BUDGET s"
        break
    fi
    if [ $((rep % 2)) = 1 ]; then cells=$CELLS; else cells=$REVERSED; fi
    note "rep $rep/$REPS"
    for cell in $cells; do
        run_cell "$rep" "${cell%%:*}" "${cell#*:}"
    done
    DONE=$rep
    rep=$((rep + 1))
done

stop_nginx
stop_server "$RD_PID"

echo
echo "reps done: $DONE of $REPS in $(($(date +%s) - START)) s"
report "$DONE"
echo
echo "load average at end: $(cut -d ' ' -f 1-3 /proc/loadavg)"
