#!/bin/sh
# soak: does hopbench leak over a long run? It starts `hopbench serve echo` on a
# Unix socket and on TCP 127.0.0.1 (port 0), measures the closed-loop maximum of
# each transport with a short `hopbench run` (all transports at once, as they
# will run), then loads each transport open loop (`run --rate`) at RATE_PCT of
# its maximum for SECONDS, one client per transport, all at the same time. Every
# INTERVAL seconds it samples the server's and each client's resident memory
# (VmRSS, and its anonymous part RssAnon), open fds (/proc/PID/fd) and threads (Threads) into samples.tsv. At the
# end it prints, per series, the samples after the warm-up (the first WARMUP_PCT
# of SECONDS): first, last, min, max, the band (max / min - 1) and the linear
# trend (least-squares slope x the span, over the mean), and a verdict:
#   flat           band <= 1 %
#   flat (trend)   band > 1 %, but the trend grows by less than 1 % over the span
#   GROWS          neither
# and each client's own evidence (ops, achieved rate, errors, saturated).
#
# usage: bench/soak.sh HOPBENCH [SECONDS [OUTDIR]]   (SECONDS default 3600)
# env: INTERVAL=10  RATE_PCT=50  WARMUP_PCT=5  MAX_S=3  CONNS=2
#      TRANSPORTS="unix tcp"
# OUTDIR (default: a new ${TMPDIR:-/tmp}/hopbench-soak.XXXXXX) keeps samples.tsv,
# each client's evidence (client-TRANSPORT.json) and the server's output; it is
# kept at the end. Exit status: 0 every series flat and every client valid, 1 a
# tool failed, 2 a series grew or a client run was invalid, 130 interrupted.
# Every process it starts is stopped by PID on every exit path, and its socket
# directory removed. Needs jq and awk. Traffic: 127.0.0.1 and a Unix socket only.
set -eu
PROG=soak
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
STOP_TRIES=50      # x 0.1 s: how long a process may take to exit after SIGTERM (stop_pid)
READY_TRIES=100    # x 0.05 s: how long the server may take to listen
CLIENT_WARMUP_S=1  # run --warmup: load before the client's measured window
FLAT_PCT=1
SAMPLE_MARGIN_S=5  # the last sample starts this long before the clients' window ends

usage() {
    echo "usage: bench/soak.sh HOPBENCH [SECONDS [OUTDIR]]   (env: INTERVAL RATE_PCT WARMUP_PCT MAX_S CONNS TRANSPORTS)" >&2
    exit 64
}
if [ $# -lt 1 ] || [ $# -gt 3 ]; then usage; fi
HB=$1
SECS=${2:-3600}
OUT=${3:-}
INTERVAL=${INTERVAL:-10}
RATE_PCT=${RATE_PCT:-50}
WARMUP_PCT=${WARMUP_PCT:-5}
MAX_S=${MAX_S:-3}
CONNS=${CONNS:-2}
TRANSPORTS=${TRANSPORTS:-unix tcp}
val=""
for v in SECS INTERVAL RATE_PCT MAX_S CONNS; do
    eval "val=\$$v"
    is_count "$val" || { echo "$PROG: $v must be a whole number above 0, not '$val'" >&2; usage; }
done
case "$WARMUP_PCT" in '' | *[!0-9]*) echo "$PROG: WARMUP_PCT must be a whole number" >&2; usage ;; esac
[ "$WARMUP_PCT" -lt 100 ] || { echo "$PROG: WARMUP_PCT must be below 100" >&2; usage; }
[ "$RATE_PCT" -le 100 ] || { echo "$PROG: RATE_PCT must be at most 100" >&2; usage; }
[ -n "$TRANSPORTS" ] || usage
for t in $TRANSPORTS; do
    case "$t" in unix | tcp) ;; *) echo "$PROG: TRANSPORTS: unknown transport '$t' (unix, tcp)" >&2; usage ;; esac
done
[ -x "$HB" ] || die "not executable: $HB"
for tool in jq awk; do
    command -v "$tool" >/dev/null 2>&1 || die "$tool not found"
done

# ---- cleanup: every PID we start is listed in $PIDS ------------------------

PIDS=""
SOCKDIR=$(mktemp -d "${TMPDIR:-/tmp}/soak-sock.XXXXXX")
if [ -z "$OUT" ]; then
    OUT=$(mktemp -d "${TMPDIR:-/tmp}/hopbench-soak.XXXXXX")
else
    mkdir -p "$OUT"
fi

cleanup() {
    for pid in $PIDS; do stop_pid TERM "$pid"; done
    PIDS=""
    rm -rf "$SOCKDIR"
}
trap cleanup EXIT
trap 'note "interrupted; samples so far: $OUT/samples.tsv"; exit 130' INT
trap 'note "stopped; samples so far: $OUT/samples.tsv"; exit 143' TERM HUP

# ---- the server --------------------------------------------------------------

"$HB" serve echo --listen "unix:$SOCKDIR/s.sock" --listen tcp://127.0.0.1:0 >"$OUT/server.out" 2>&1 &
SRV=$!
PIDS="$SRV"
i=0
until grep -qs 'echo server, .* pid ' "$OUT/server.out"; do
    kill -0 "$SRV" 2>/dev/null || die "the server exited: $(cat "$OUT/server.out")"
    [ "$i" -lt "$READY_TRIES" ] || die "the server did not start: $(cat "$OUT/server.out")"
    sleep 0.05
    i=$((i + 1))
done
TCP_EP=$(sed -n 's/^hopbench: listening on \(tcp:.*\)$/\1/p' "$OUT/server.out")
[ -n "$TCP_EP" ] || die "no TCP listener in: $(cat "$OUT/server.out")"
endpoint() {
    if [ "$1" = unix ]; then echo "unix:$SOCKDIR/s.sock"; else echo "$TCP_EP"; fi
}

echo "soak: $(date -u '+%Y-%m-%d %H:%M:%S UTC'), kernel $(uname -r), $(nproc) CPUs," \
    "$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
echo "load average at start: $(cut -d ' ' -f 1-3 /proc/loadavg)"
echo "hopbench: $("$HB" --version 2>&1)"
echo "command: bench/soak.sh $HB $SECS $OUT   (INTERVAL=$INTERVAL RATE_PCT=$RATE_PCT WARMUP_PCT=$WARMUP_PCT MAX_S=$MAX_S CONNS=$CONNS TRANSPORTS=\"$TRANSPORTS\")"
echo "server: pid $SRV, $(grep 'echo server' "$OUT/server.out" | sed 's/^hopbench: //')"

# ---- the closed-loop maximum, every transport at once -------------------------

note "closed loop for ${MAX_S} s: the maximum of $TRANSPORTS"
MAXPIDS=""
for t in $TRANSPORTS; do
    "$HB" run echo "$(endpoint "$t")" -c "$CONNS" -d "$MAX_S" --warmup 0.5 \
        --json "$OUT/max-$t.json" >"$OUT/max-$t.out" 2>&1 &
    MAXPIDS="$MAXPIDS $!"
    PIDS="$PIDS $!"
done
for p in $MAXPIDS; do
    wait "$p" || die "the closed-loop run failed (pid $p); see $OUT/max-*.out"
done
PIDS="$SRV"
for t in $TRANSPORTS; do
    max=$(json_number "$OUT/max-$t.json" '.runs[0].ops_per_s')
    rate=$(awk -v m="$max" -v p="$RATE_PCT" 'BEGIN { r = int(m * p / 100); print (r > 0 ? r : 1) }')
    eval "RATE_$t=$rate"
    echo "$t: closed-loop maximum $(printf '%.0f' "$max") ops/s (-c $CONNS, $MAX_S s); soak rate $rate ops/s ($RATE_PCT %)"
done

# ---- the soak ----------------------------------------------------------------

note "open loop for $SECS s, sampling every $INTERVAL s into $OUT/samples.tsv"
CLIENTS=""
for t in $TRANSPORTS; do
    eval "rate=\$RATE_$t"
    "$HB" run echo "$(endpoint "$t")" -c "$CONNS" -d "$SECS" --warmup "$CLIENT_WARMUP_S" \
        --rate "$rate" --server-pid "$SRV" --json "$OUT/client-$t.json" >"$OUT/client-$t.out" 2>&1 &
    eval "PID_$t=$!"
    CLIENTS="$CLIENTS $!"
    PIDS="$PIDS $!"
done

# The process's fds, one line each: "NUMBER TARGET" (socket:[INODE], a path...).
fd_list() {
    find "/proc/$1/fd" -mindepth 1 -maxdepth 1 -printf '%f %l\n' 2>/dev/null
}

# One line per process: t_s proc pid rss_kib anon_kib fds threads; fails if
# the process is gone. rss_kib is VmRSS; anon_kib its anonymous part (RssAnon:
# the heap and stacks, without the pages of the binary and libraries, which
# come in as code runs for the first time). fds counts the fds held, with the
# same target, through three listings 0.3 s apart: the client opens a
# sock_diag socket for each of its socket samples (every 10 s) and closes it
# when the dump is done, which with many TCP sockets on the machine can take
# longer than a listing; each time it is a new socket (a new inode), while a
# leaked fd is the same one in all three.
sample() { # t name pid
    rss=$(sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\) kB$/\1/p' "/proc/$3/status" 2>/dev/null) || return 1
    anon=$(sed -n 's/^RssAnon:[[:space:]]*\([0-9]*\) kB$/\1/p' "/proc/$3/status" 2>/dev/null) || return 1
    thr=$(sed -n 's/^Threads:[[:space:]]*\([0-9]*\)$/\1/p' "/proc/$3/status" 2>/dev/null) || return 1
    l1=$(fd_list "$3")
    sleep 0.3
    l2=$(fd_list "$3")
    sleep 0.3
    l3=$(fd_list "$3")
    fds=$(printf '%s\n%s\n%s\n' "$l1" "$l2" "$l3" | awk NF | sort | uniq -c | awk '$1 == 3' | wc -l)
    [ -n "$rss" ] && [ -n "$anon" ] && [ -n "$thr" ] || return 1
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$rss" "$anon" "$fds" "$thr"
}

now() { date +%s.%N; }
printf 't_s\tproc\tpid\trss_kib\tanon_kib\tfds\tthreads\n' >"$OUT/samples.tsv"
T0=$(now)
k=0
# Samples at 0, INTERVAL, ... up to SECONDS - SAMPLE_MARGIN_S after the clients
# started: a round (three fd counts per process) ends inside the clients'
# measured window, so their final report and evidence writing is not sampled.
while :; do
    t=$(awk -v a="$T0" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }')
    {
        sample "$t" server "$SRV" || die "the server (pid $SRV) is gone at t=$t s; see $OUT/server.out"
        for tr in $TRANSPORTS; do
            eval "p=\$PID_$tr"
            sample "$t" "client-$tr" "$p" || die "the $tr client (pid $p) ended at t=$t s; see $OUT/client-$tr.out"
        done
    } >>"$OUT/samples.tsv"
    k=$((k + 1))
    [ $((k * INTERVAL)) -le $((SECS - SAMPLE_MARGIN_S)) ] || break
    wait_s=$(awk -v a="$T0" -v b="$(now)" -v n=$((k * INTERVAL)) 'BEGIN { w = a + n - b; printf "%.2f", (w > 0 ? w : 0) }')
    sleep "$wait_s"
    if [ $((k % (300 / INTERVAL + 1))) -eq 0 ]; then note "t=$((k * INTERVAL)) s"; fi
done

note "waiting for the clients to finish"
RC=0
for tr in $TRANSPORTS; do
    eval "p=\$PID_$tr"
    crc=0
    wait "$p" || crc=$?
    eval "CRC_$tr=$crc"
done
PIDS="$SRV"
stop_pid TERM "$SRV"
PIDS=""
echo "load average at end: $(cut -d ' ' -f 1-3 /proc/loadavg)"

# ---- the clients' own evidence -------------------------------------------------

echo
echo "clients (their own evidence):"
printf '%-6s %6s %12s %12s %12s %8s %7s %10s %10s %s\n' transport exit ops "rate" achieved saturated errors "p50 µs" "p99 µs" valid
for tr in $TRANSPORTS; do
    eval "crc=\$CRC_$tr"
    f="$OUT/client-$tr.json"
    if [ ! -s "$f" ]; then
        echo "$tr: no evidence written (exit $crc); see $OUT/client-$tr.out"
        RC=2
        continue
    fi
    jq -r --arg tr "$tr" --arg rc "$crc" '.runs[0] | [$tr, $rc, .ops, .open_loop.rate,
        (.open_loop.achieved_ops_per_s | floor), .open_loop.saturated, .errors_total,
        (.latency_ns.p50 / 1000 | . * 100 | round / 100),
        (.latency_ns.p99 / 1000 | . * 100 | round / 100), .valid] | @tsv' "$f" |
        awk -F '\t' '{ printf "%-6s %6s %12s %12s %12s %8s %7s %10s %10s %s\n", $1, $2, $3, $4, $5, $6, $7, $8, $9, $10 }'
    ok=$(jq -r '.runs[0] | .valid and .errors_total == 0' "$f")
    [ "$crc" = 0 ] && [ "$ok" = true ] || RC=2
done
echo "(p50, p99: latency from each op's intended send time; see client-TRANSPORT.out for the full report)"

# ---- the verdict ---------------------------------------------------------------

echo
echo "series after the warm-up (t >= $WARMUP_PCT % of $SECS s); band = max/min - 1; trend = least-squares growth over the span / mean"
awk -F '\t' -v warm="$(awk -v s="$SECS" -v p="$WARMUP_PCT" 'BEGIN { print s * p / 100 }')" -v flat="$FLAT_PCT" '
    NR == 1 { next }
    $1 + 0 >= warm {
        for (m = 4; m <= 7; m++) {
            k = $2 SUBSEP m
            if (!(k in n)) { order[++ns] = k; first[k] = $m; min[k] = $m; max[k] = $m; t0[k] = $1 }
            n[k]++; last[k] = $m; t1[k] = $1
            if ($m + 0 < min[k]) min[k] = $m
            if ($m + 0 > max[k]) max[k] = $m
            sx[k] += $1; sy[k] += $m; sxx[k] += $1 * $1; sxy[k] += $1 * $m
        }
    }
    END {
        split("x x x rss_kib anon_kib fds threads", name, " ")
        printf "%-24s %5s %10s %10s %10s %10s %8s %8s  %s\n", "series", "n", "first", "last", "min", "max", "band %", "trend %", "verdict"
        bad = 0
        for (i = 1; i <= ns; i++) {
            k = order[i]; split(k, kp, SUBSEP)
            c = n[k]; mean = sy[k] / c
            den = c * sxx[k] - sx[k] * sx[k]
            slope = den > 0 ? (c * sxy[k] - sx[k] * sy[k]) / den : 0
            trend = mean > 0 ? 100 * slope * (t1[k] - t0[k]) / mean : 0
            band = min[k] > 0 ? 100 * (max[k] / min[k] - 1) : (max[k] > 0 ? 100 : 0)
            if (c < 3) v = "TOO FEW SAMPLES"
            else if (band <= flat) v = "flat"
            else if (trend < flat) v = "flat (trend)"
            else v = "GROWS"
            if (v != "flat" && v != "flat (trend)") bad = 1
            printf "%-24s %5d %10d %10d %10d %10d %8.2f %8.2f  %s\n", kp[1] "." name[kp[2]], c, first[k], last[k], min[k], max[k], band, trend, v
        }
        if (ns == 0) { print "no samples after the warm-up"; bad = 1 }
        exit bad
    }' "$OUT/samples.tsv" || RC=2

echo
if [ "$RC" = 0 ]; then
    echo "verdict: every series flat within $FLAT_PCT % after the warm-up; every client run valid"
else
    echo "verdict: NOT FLAT or a client run invalid (see above)"
fi
echo "kept: $OUT (samples.tsv, client-*.json, client-*.out, server.out)"
exit "$RC"
