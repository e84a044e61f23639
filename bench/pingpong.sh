#!/bin/sh
# pingpong.sh: one 64-byte request/response in flight, hopbench vs its peers,
# and whether hopbench's overhead sits in its client or in its server.
#
#   bench/pingpong.sh HOPBENCH FLOOR [SECONDS]
#
# Cells, each one connection playing ping-pong for about SECONDS:
#   sockperf  sockperf ping-pong --full-rtt against sockperf server (tcp only)
#   self      FLOOR's self-contained run: its client and a forked blocking echo
#             child on a pair it set up itself (tcp, unix, socketpair)
#   and, per transport (tcp, unix), the 2x2 of client x server:
#   ff        floor client  -> floor serve       (both blocking, no event loop)
#   hf        hopbench run  -> floor serve       (hopbench's client alone)
#   fh        floor client  -> hopbench serve    (hopbench's server alone)
#   hh        hopbench run  -> hopbench serve    (hopbench end to end)
#   hfb, fhb, hhb  the same three with hopbench's --wait block (a blocking recv
#             instead of epoll_wait + recv, as the floor and sockperf wait)
# hopbench runs as `run echo EP -c 1 -t 1 --mode reuse --size 64 --wait W` and
# `serve echo --threads 1 --wait W`, W = epoll (hf, fh, hh) or block (hfb, fhb, hhb). Placements: same (client and server on CPU 0) and split
# (client on CPU 0, server on CPU 1).
#
# Each rep runs every cell of both placements; even reps run them in reverse
# order (ABBA), so slow drift in the machine's speed hits both sides of a ratio
# alike. Reported per placement: each cell's p50 as the median over the reps
# [min-max], and each ratio as the median of the per-rep ratios (the two cells
# of a ratio paired within one rep) [min-max]. Ratios:
#   client overhead: hf/ff (floor server), hh/fh (hopbench server)
#   server overhead: fh/ff (floor client), hh/hf (hopbench client)
#   end to end: hh/self (target <= 1.15), hh/sockperf (tcp, target <= 1.10),
#   and the same for the --wait block cells (hfb/ff, fhb/ff, hhb/self, hhb/sockperf)
# PASS/MISS is informational: the exit status is 0 unless a tool failed.
#
#   SECONDS          per cell (default 5)
#   REPS=N           repetitions (default 3); medians are reported
#   HOPBENCH_SKIP=1  skip the hopbench cells (hf, fh, hh, ...b); HOPBENCH must still
#                    be given but is not run
#   FLOOR_ITER=N     floor iterations per cell; default: calibrated to ~SECONDS
#   PLACES="same split"            the placements to run (either or both)
#   TRANSPORTS="tcp unix socketpair"  the transports whose cells run (sockperf is tcp)
#
# All traffic stays on 127.0.0.1 or Unix sockets in a mktemp -d directory.
# Every process started is killed by PID on exit, INT or TERM, and every wait is
# bounded. Needs: sockperf, jq, ss (iproute2), taskset (util-linux), 2 CPUs.
set -eu

PROG=pingpong
SIZE=64
READY_TRIES=100 # x 0.05 s: how long a server may take to listen
STOP_TRIES=50   # x 0.1 s: how long a server may take to exit on SIGTERM
MAX_FLOOR_PCT=115
MAX_SOCKPERF_PCT=110

# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"

usage() {
    echo "usage: bench/pingpong.sh HOPBENCH FLOOR [SECONDS]   (env: REPS=3 HOPBENCH_SKIP=1 FLOOR_ITER=N PLACES=... TRANSPORTS=...)" >&2
    exit 64
}

# ---- arguments and environment --------------------------------------------

if [ $# -lt 2 ] || [ $# -gt 3 ]; then usage; fi
HOPBENCH=$1
FLOOR=$2
SECS=${3:-5}
REPS=${REPS:-3}
HOPBENCH_SKIP=${HOPBENCH_SKIP:-0}
FLOOR_ITER=${FLOOR_ITER:-}
PLACES=${PLACES:-same split}
TRANSPORTS=${TRANSPORTS:-tcp unix socketpair}
is_count "$SECS" || { echo "$PROG: SECONDS must be a positive integer, got '$SECS'" >&2; usage; }
is_count "$REPS" || { echo "$PROG: REPS must be a positive integer, got '$REPS'" >&2; usage; }
[ -z "$FLOOR_ITER" ] || is_count "$FLOOR_ITER" || usage
case "$HOPBENCH_SKIP" in 0 | 1) ;; *) usage ;; esac
for p in $PLACES; do
    case "$p" in same | split) ;; *) echo "$PROG: PLACES: unknown placement '$p' (same, split)" >&2; usage ;; esac
done
for t in $TRANSPORTS; do
    case "$t" in tcp | unix | socketpair) ;; *) echo "$PROG: TRANSPORTS: unknown transport '$t' (tcp, unix, socketpair)" >&2; usage ;; esac
done
if [ -z "$PLACES" ] || [ -z "$TRANSPORTS" ]; then usage; fi

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
    stop_pid TERM "$pid"
    forget_pid "$pid"
}

# ---- small helpers ---------------------------------------------------------

# Server CPU for a placement (the client is always on CPU 0).
server_cpu() {
    if [ "$1" = split ]; then echo 1; else echo 0; fi
}

# All samples go to one file, a line per cell and rep: PLACE REP CELL TRANSPORT P50_NS CPU_NS
# (CPU_NS: client CPU per round trip, "-" if not measured). The report reads it with awk.
DATA="$TMP/data"
record() {
    echo "$1 $2 $3 $4 $5 $6" >>"$DATA"
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
    rep=$2
    start_sockperf_server "$place"
    out="$TMP/sockperf-client.out"
    if ! timeout "$RUN_LIMIT" taskset -c 0 sockperf ping-pong -i 127.0.0.1 -p "$SP_PORT" --tcp \
        -m "$SIZE" -t "$SECS" --full-rtt >"$out" 2>&1; then
        die "sockperf ping-pong failed: $(tail -n 3 "$out")"
    fi
    stop_server "$SP_PID"
    p50=$(parse_sockperf "$out")
    record "$place" "$rep" sockperf tcp "$p50" -
    note "  $place sockperf tcp: p50 $p50 ns"
}

# ---- servers: floor serve (tcp, unix) and hopbench serve (both) ------------

# wait_listening PID LOG WHAT: waits for 'WHAT: listening on EP' lines in LOG; dies if
# PID exits or time runs out. For hopbench, which prints one line per listener, it
# waits until both tcp and unix are there.
wait_listening() {
    i=0
    while [ "$i" -lt "$READY_TRIES" ] && kill -0 "$1" 2>/dev/null; do
        if [ "$3" = floor ]; then
            grep -qs "^floor: listening on " "$2" && return 0
        elif grep -qs "^$3: listening on tcp://" "$2" && grep -qs "^$3: listening on unix:" "$2"; then
            return 0
        fi
        sleep 0.05
        i=$((i + 1))
    done
    kill -0 "$1" 2>/dev/null && why="did not report its listener(s) in time" || why="exited early"
    die "$3 serve $why: $(cat "$2" "$2.err" 2>/dev/null | tail -n 5)"
}

# listened_on LOG WHAT TRANSPORT: the endpoint reported, e.g. tcp://127.0.0.1:4711, unix:/p
listened_on() {
    sed -n "s|^$2: listening on \\($3[:][^ ]*\\).*|\\1|p" "$1" | head -n 1
}

# The address part for floor client: the port of tcp://127.0.0.1:PORT, the path of unix:PATH.
endpoint_addr() {
    case "$1" in
    tcp://127.0.0.1:*) echo "${1#tcp://127.0.0.1:}" ;;
    unix:*) echo "${1#unix:}" ;;
    *) die "unexpected endpoint '$1'" ;;
    esac
}

# Sets FL_TCP_PID and FL_TCP_EP, or FL_UNIX_PID and FL_UNIX_EP.
start_floor_server() {
    place=$1
    transport=$2
    log="$TMP/floor-serve-$transport.out"
    if [ "$transport" = tcp ]; then addr=0; else addr="$TMP/floor.sock"; fi
    rm -f "$log" "$log.err" # else the wait below may read the last server's line
    "$FLOOR" serve "$transport" "$addr" --pin-cpu "$(server_cpu "$place")" >"$log" 2>"$log.err" &
    pid=$!
    PIDS="$PIDS $pid"
    wait_listening "$pid" "$log" floor
    ep=$(listened_on "$log" floor "$transport")
    [ -n "$ep" ] || die "floor serve $transport: no endpoint in: $(cat "$log")"
    if [ "$transport" = tcp ]; then
        FL_TCP_PID=$pid FL_TCP_EP=$ep
    else
        FL_UNIX_PID=$pid FL_UNIX_EP=$ep
    fi
}

# start_hopbench_server PLACE WAIT: sets HB_PID, HB_TCP_EP and HB_UNIX_EP (WAIT = epoll) or
# HBB_PID, HBB_TCP_EP and HBB_UNIX_EP (WAIT = block).
start_hopbench_server() {
    place=$1
    log="$TMP/hopbench-serve-$2.out"
    rm -f "$log" "$log.err" # else the wait below may read the last server's lines
    "$HOPBENCH" serve echo --listen tcp://127.0.0.1:0 --listen "unix:$TMP/hopbench-$2.sock" \
        --threads 1 --pin "$place" --wait "$2" >"$log" 2>"$log.err" &
    pid=$!
    PIDS="$PIDS $pid"
    wait_listening "$pid" "$log" hopbench
    tcp_ep=$(listened_on "$log" hopbench tcp)
    unix_ep=$(listened_on "$log" hopbench unix)
    if [ -z "$tcp_ep" ] || [ -z "$unix_ep" ]; then
        die "hopbench serve: no endpoints in: $(cat "$log")"
    fi
    if [ "$2" = epoll ]; then
        HB_PID=$pid HB_TCP_EP=$tcp_ep HB_UNIX_EP=$unix_ep
    else
        HBB_PID=$pid HBB_TCP_EP=$tcp_ep HBB_UNIX_EP=$unix_ep
    fi
}

start_servers() {
    start_floor_server "$1" tcp
    start_floor_server "$1" unix
    [ "$HOPBENCH_SKIP" = 1 ] || start_hopbench_server "$1" epoll
    [ "$HOPBENCH_SKIP" = 1 ] || start_hopbench_server "$1" block
}

stop_servers() {
    stop_server "$FL_TCP_PID"
    stop_server "$FL_UNIX_PID"
    [ "$HOPBENCH_SKIP" = 1 ] || stop_server "$HB_PID"
    [ "$HOPBENCH_SKIP" = 1 ] || stop_server "$HBB_PID"
}

# ---- clients ---------------------------------------------------------------

# Iterations of MEAN_NS each that last about SECS, within 20000..5000000.
iterations_for() {
    awk -v s="$SECS" -v m="$1" 'BEGIN {
        n = int(s * 1e9 / (m > 0 ? m : 1)); if (n < 20000) n = 20000; if (n > 5000000) n = 5000000
        print n }'
}

# Iterations that last about SECS for this placement and transport: first from a
# short self-contained floor run (before the first rep), then from the last floor
# cell of the same placement and transport (see recalibrate).
floor_iterations() {
    cache="$TMP/iter.$1.$2"
    if [ -n "$FLOOR_ITER" ]; then
        echo "$FLOOR_ITER"
    elif [ -s "$cache" ]; then
        cat "$cache"
    else
        timeout "$RUN_LIMIT" "$FLOOR" "$2" "$SIZE" 20000 --pin "$1" >"$TMP/floor-cal.json" ||
            die "floor $2 calibration failed"
        iterations_for "$(json_number "$TMP/floor-cal.json" .mean_ns)" | tee "$cache"
    fi
}

# PLACE TRANSPORT JSON: after a floor cell, aim the next one at SECS from this
# cell's mean, so a calibration made at a busy moment does not stick.
recalibrate() {
    [ -z "$FLOOR_ITER" ] || return 0
    iterations_for "$(json_number "$3" .mean_ns)" >"$TMP/iter.$1.$2"
}

# Each client sets P50 and CPU (ns; CPU is client CPU per round trip).

floor_self() { # PLACE TRANSPORT
    json="$TMP/floor.json"
    timeout "$RUN_LIMIT" "$FLOOR" "$2" "$SIZE" "$(floor_iterations "$1" "$2")" --pin "$1" >"$json" ||
        die "floor $2 --pin $1 failed"
    P50=$(json_number "$json" .p50_ns)
    CPU=$(json_number "$json" .client_cpu_ns_per_op)
    recalibrate "$1" "$2" "$json"
}

floor_client() { # PLACE TRANSPORT ENDPOINT
    json="$TMP/floor.json"
    timeout "$RUN_LIMIT" "$FLOOR" client "$2" "$(endpoint_addr "$3")" "$SIZE" \
        "$(floor_iterations "$1" "$2")" --pin-cpu 0 >"$json" || die "floor client $3 failed"
    P50=$(json_number "$json" .p50_ns)
    CPU=$(json_number "$json" .client_cpu_ns_per_op)
    recalibrate "$1" "$2" "$json"
}

hopbench_client() { # PLACE TRANSPORT ENDPOINT WAIT
    json="$TMP/hopbench-run.json"
    rm -f "$json"
    if ! timeout "$RUN_LIMIT" "$HOPBENCH" run echo "$3" -c 1 -t 1 -d "$SECS" --warmup 1 \
        --mode reuse --size "$SIZE" --pin "$1" --wait "$4" --json "$json" \
        >"$TMP/hopbench-run.out" 2>&1; then
        die "hopbench run $3 failed: $(tail -n 3 "$TMP/hopbench-run.out")"
    fi
    P50=$(json_number "$json" '.runs[0].latency_ns.p50')
    CPU=$(json_number "$json" '.runs[0].client_cpu_ns_per_op')
}

floor_endpoint() {
    if [ "$1" = tcp ]; then echo "$FL_TCP_EP"; else echo "$FL_UNIX_EP"; fi
}

hopbench_endpoint() { # TRANSPORT WAIT
    if [ "$2" = block ]; then
        if [ "$1" = tcp ]; then echo "$HBB_TCP_EP"; else echo "$HBB_UNIX_EP"; fi
    elif [ "$1" = tcp ]; then echo "$HB_TCP_EP"; else echo "$HB_UNIX_EP"; fi
}

# run_cell PLACE REP CELL TRANSPORT
run_cell() {
    place=$1
    rep=$2
    cell=$3
    transport=$4
    case "$cell" in
    sockperf)
        measure_sockperf "$place" "$rep"
        return
        ;;
    self) floor_self "$place" "$transport" ;;
    ff) floor_client "$place" "$transport" "$(floor_endpoint "$transport")" ;;
    hf) hopbench_client "$place" "$transport" "$(floor_endpoint "$transport")" epoll ;;
    fh) floor_client "$place" "$transport" "$(hopbench_endpoint "$transport" epoll)" ;;
    hh) hopbench_client "$place" "$transport" "$(hopbench_endpoint "$transport" epoll)" epoll ;;
    hfb) hopbench_client "$place" "$transport" "$(floor_endpoint "$transport")" block ;;
    fhb) floor_client "$place" "$transport" "$(hopbench_endpoint "$transport" block)" ;;
    hhb) hopbench_client "$place" "$transport" "$(hopbench_endpoint "$transport" block)" block ;;
    *) die "unknown cell $cell" ;;
    esac
    CPU=$(printf '%.0f' "$CPU")
    record "$place" "$rep" "$cell" "$transport" "$P50" "$CPU"
    note "  $place $cell $transport: p50 $P50 ns, client CPU $CPU ns/op"
}

# ---- report ----------------------------------------------------------------

# report PLACE: the three tables for one placement, from $DATA.
report() {
    awk -v place="$1" -v reps="$REPS" -v secs="$SECS" -v size="$SIZE" -v scpu="$(server_cpu "$1")" \
        -v max_floor="$MAX_FLOOR_PCT" -v max_sp="$MAX_SOCKPERF_PCT" '
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
        for (r = 1; r <= reps; r++) if ((k, r) in v) a[++n] = v[k, r]
        N = n
        if (n == 0) return
        sortv(a, n)
        MED = (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
        MIN = a[1]; MAX = a[n]
    }
    # Per-rep ratios of cell num over cell den (same transport), into rat[]; then stats.
    function ratio(num, den, t,    r) {
        delete rat
        for (r = 1; r <= reps; r++)
            if (((num SUBSEP t), r) in p50 && ((den SUBSEP t), r) in p50 && p50[den, t, r] > 0)
                rat["x", r] = p50[num, t, r] / p50[den, t, r]
        stats(rat, "x")
    }
    function us(ns) { return sprintf("%.2f", ns / 1000) }
    function rtext(max) {
        if (N == 0) return "-"
        return sprintf("%.2f%s [%.2f-%.2f]", MED, max ? (MED * 100 <= max ? " PASS" : " MISS") : "", MIN, MAX)
    }
    $1 == place {
        p50[$3, $4, $2] = $5
        if ($6 != "-") cpu[$3, $4, $2] = $6
    }
    END {
        nc = split("self ff hf fh hh hfb fhb hhb sockperf", cells, " ")
        split("tcp unix socketpair", trs, " ")
        label["self"] = "floor     floor (fork)"; label["ff"] = "floor     floor serve"
        label["hf"] = "hopbench  floor serve"; label["fh"] = "floor     hopbench serve"
        label["hh"] = "hopbench  hopbench serve"; label["sockperf"] = "sockperf  sockperf"
        label["hfb"] = "hb block  floor serve"; label["fhb"] = "floor     hb serve block"
        label["hhb"] = "hb block  hb serve block"
        printf "\nplacement: %s (client CPU 0, server CPU %s), %d-byte ping-pong, %d reps x %ds\n", place, scpu, size, reps, secs
        printf "p50 round trip in us, median over the reps [min-max]; spread = (max-min)/median;\n"
        printf "client cpu = client CPU time per round trip in us (median)\n"
        printf "%-16s %-9s %-15s %8s %17s %7s %11s\n", "cell", "client", "server", "p50", "[min-max]", "spread", "client cpu"
        for (i = 1; i <= 3; i++) for (j = 1; j <= nc; j++) {
            t = trs[i]; c = cells[j]
            stats(p50, c SUBSEP t)
            if (N == 0) continue
            m = MED; lo = MIN; hi = MAX
            stats(cpu, c SUBSEP t)
            spread = (m > 0) ? (hi - lo) * 100 / m : 0
            printf "%-16s %-25s %8s %17s %6.1f%% %11s\n", t " " c, label[c], us(m),
                sprintf("[%s-%s]", us(lo), us(hi)), spread, N ? us(MED) : "-"
        }
        printf "\nratios of p50: median of the per-rep ratios [min-max]; targets (in parentheses) as bench/README.md states them\n"
        printf "%-50s %-24s %s\n", "ratio", "tcp", "unix"
        nr = split("hf ff 115 client overhead, floor serve: hf/ff (<=1.15)|" \
                   "hh fh 115 client overhead, hopbench serve: hh/fh (<=1.15)|" \
                   "fh ff 0 server overhead, floor client: fh/ff|" \
                   "hh hf 0 server overhead, hopbench client: hh/hf|" \
                   "ff self 0 check: floor pair / self-contained: ff/self|" \
                   "hh self 115 end to end vs floor: hh/self (<=1.15)|" \
                   "hh sockperf 110 end to end vs sockperf: hh/sockperf (<=1.10)|" \
                   "hfb ff 115 --wait block client, floor serve: hfb/ff|" \
                   "fhb ff 0 --wait block server, floor client: fhb/ff|" \
                   "hhb self 115 --wait block end to end vs floor: hhb/self|" \
                   "hhb sockperf 110 --wait block end to end vs sockperf: hhb/sock|" \
                   "hhb hh 0 block / epoll, end to end: hhb/hh", rows, "|")
        for (k = 1; k <= nr; k++) {
            split(rows[k], f, " ")
            name = rows[k]; sub(/^[^ ]+ [^ ]+ [^ ]+ /, "", name)
            max = f[3] + 0
            ratio(f[1], f[2], "tcp"); a = rtext(max)
            ratio(f[1], f[2], "unix"); b = rtext(max)
            printf "%-50s %-24s %s\n", name, a, b
        }
        printf "\nthe original summary (floor = self-contained; hopbench = end to end, hh)\n"
        printf "%-11s %-6s %10s %12s %12s %12s %14s %13s %14s\n", "transport", "wait", "floor p50",
            "sockperf p50", "hopbench p50", "hb/floor", "hb/sockperf", "hb cpu us/op", "floor cpu us/op"
        for (i = 1; i <= 3; i++) for (w = 1; w <= 2; w++) {
            t = trs[i]; hc = (w == 1) ? "hh" : "hhb"
            stats(p50, "self" SUBSEP t); fl = N ? us(MED) : "-"
            stats(p50, "sockperf" SUBSEP t); sp = N ? us(MED) : "-"
            stats(p50, hc SUBSEP t); hb = N ? us(MED) : "-"
            if (hb == "-" && w == 2) continue
            ratio(hc, "self", t); r1 = N ? sprintf("%.2f %s", MED, MED * 100 <= max_floor ? "PASS" : "MISS") : "-"
            ratio(hc, "sockperf", t); r2 = N ? sprintf("%.2f %s", MED, MED * 100 <= max_sp ? "PASS" : "MISS") : "-"
            stats(cpu, hc SUBSEP t); hcpu = N ? us(MED) : "-"
            stats(cpu, "self" SUBSEP t); fc = N ? us(MED) : "-"
            printf "%-11s %-6s %10s %12s %12s %12s %14s %13s %14s\n", t, hb == "-" ? "-" : (w == 1) ? "epoll" : "block",
                fl, sp, hb, r1, r2, hcpu, fc
        }
        printf "\nper-rep p50 in us, rep 1..%d (even reps ran in reverse order)\n", reps
        for (i = 1; i <= 3; i++) for (j = 1; j <= nc; j++) {
            t = trs[i]; c = cells[j]; line = ""
            for (r = 1; r <= reps; r++) line = line sprintf(" %7s", ((c, t, r) in p50) ? sprintf("%.2f", p50[c, t, r] / 1000) : "-")
            stats(p50, c SUBSEP t)
            if (N) printf "%-11s %-9s%s\n", t, c, line
        }
    }' "$DATA"
}

print_header() {
    echo "pingpong: $(date -u '+%Y-%m-%d %H:%M:%S UTC'), kernel $(uname -r), $(nproc) CPUs," \
        "$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
    echo "command: REPS=$REPS HOPBENCH_SKIP=$HOPBENCH_SKIP PLACES=\"$PLACES\" TRANSPORTS=\"$TRANSPORTS\" bench/pingpong.sh $HOPBENCH $FLOOR $SECS"
    echo "$(sockperf --version 2>&1 | head -n 1); $("$HOPBENCH" --version 2>/dev/null || echo "hopbench ?")"
    echo "load average at start: $(cut -d ' ' -f 1-3 /proc/loadavg) (anything else running skews every column)"
    echo "targets: hopbench/sockperf <= $MAX_SOCKPERF_PCT%, hopbench/floor <= $MAX_FLOOR_PCT% (p50; informational)"
    echo "cells: self = floor's self-contained run; ff/hf/fh/hh = client (floor|hopbench) -> server (floor|hopbench); hfb/fhb/hhb = the same with hopbench --wait block"
}

# ---- main ------------------------------------------------------------------

# One rep's cells, in forward order; even reps run them reversed.
CELLS="sockperf:tcp self:tcp ff:tcp hf:tcp fh:tcp hh:tcp hfb:tcp fhb:tcp hhb:tcp"
CELLS="$CELLS self:unix ff:unix hf:unix fh:unix hh:unix hfb:unix fhb:unix hhb:unix self:socketpair"
if [ "$HOPBENCH_SKIP" = 1 ]; then
    CELLS="sockperf:tcp self:tcp ff:tcp self:unix ff:unix self:socketpair"
fi
KEPT=""
for c in $CELLS; do
    case " $TRANSPORTS " in *" ${c#*:} "*) KEPT="$KEPT $c" ;; esac
done
CELLS=$KEPT
REVERSED=""
for c in $CELLS; do REVERSED="$c $REVERSED"; done
FORWARD_PLACES=$PLACES
BACKWARD_PLACES=""
for p in $PLACES; do BACKWARD_PLACES="$p $BACKWARD_PLACES"; done

print_header
for place in $PLACES; do
    for transport in $TRANSPORTS; do
        iter=$(floor_iterations "$place" "$transport")
        note "calibrated: floor $transport --pin $place: $iter iterations per cell"
    done
done

rep=1
while [ "$rep" -le "$REPS" ]; do
    if [ $((rep % 2)) = 1 ]; then places=$FORWARD_PLACES cells=$CELLS; else places=$BACKWARD_PLACES cells=$REVERSED; fi
    for place in $places; do
        note "rep $rep/$REPS, placement $place"
        start_servers "$place"
        for c in $cells; do
            run_cell "$place" "$rep" "${c%%:*}" "${c#*:}"
        done
        stop_servers
    done
    rep=$((rep + 1))
done

for place in $PLACES; do
    report "$place"
done
echo
echo "load average at end: $(cut -d ' ' -f 1-3 /proc/loadavg)"
