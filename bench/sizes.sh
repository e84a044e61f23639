#!/bin/sh
# sizes.sh: the echo round trip over TCP loopback and a Unix socket, for every message
# size from 64 B to 1 MiB, with each wait of the client and the server. hopbench's own
# client and server; a transport difference that one wait shows and the other does not is
# the tool's, not the transport's (bench/RESULTS.md, issue 26).
#
#   bench/sizes.sh HOPBENCH
#
# Per wait (epoll, then block): `hopbench serve echo --listen tcp://127.0.0.1:PORT
# --listen unix:SOCK --pin PIN --wait W`, then per size one `hopbench run echo TCP UNIX
# --size S --mode reuse -c 1 -t 1 -d DURATION --warmup WARMUP --reps REPS --pin PIN
# --wait W` (the two endpoints in ABBA order). Printed per size, transport and wait: n
# valid runs, the median [min-max] of their p50 in µs and the median of their ops/s;
# then per size the unix/tcp ratio of the median p50 under each wait and, per transport,
# epoll/block. The load average is printed before and after.
#
#   SIZES="..."   bytes (default "64 1024 4096 16384 65536 262144 1048576")
#   REPS=N        runs per endpoint and cell (default 5)
#   DURATION=S    measured seconds per run (default 0.5)
#   WARMUP=S      warm-up seconds per run (default 0.2)
#   PIN=P         --pin of server and client: split (default), same or none
#
# All traffic stays on 127.0.0.1 and a socket in a private directory. Every process
# started is stopped by PID on exit, INT or TERM; every client runs under timeout.
# Needs: jq, awk, ss, timeout.
set -eu
PROG=sizes.sh
. "$(dirname "$0")/lib.sh"

[ $# -eq 1 ] || {
    echo "usage: bench/sizes.sh HOPBENCH" >&2
    exit 64
}
HB=$1
[ -x "$HB" ] || die "$HB is not an executable"
SIZES=${SIZES:-64 1024 4096 16384 65536 262144 1048576}
REPS=${REPS:-5}
DURATION=${DURATION:-0.5}
WARMUP=${WARMUP:-0.2}
PIN=${PIN:-split}
is_count "$REPS" || die "REPS must be a whole number above 0"
command -v jq >/dev/null || die "jq is not installed"

private_tmp hopbench-sizes
echo "load before: $(cat /proc/loadavg)"
echo "size transport wait n p50_us[min-max] ops_s"
for wait in epoll block; do
    port=$(pick_port 1)
    sock=$TMP/echo.sock
    "$HB" serve echo --listen "tcp://127.0.0.1:$port" --listen "unix:$sock" --pin "$PIN" \
        --wait "$wait" >"$TMP/serve.out" 2>&1 &
    PIDS="$PIDS $!"
    srv=$!
    i=0
    until grep -q 'server,' "$TMP/serve.out" 2>/dev/null; do
        i=$((i + 1))
        [ "$i" -lt 100 ] || die "the server did not start: $(head -c 300 "$TMP/serve.out")"
        sleep 0.05
    done
    for size in $SIZES; do
        json=$TMP/run-$wait-$size.json
        timeout -k 5 300 "$HB" run echo "tcp://127.0.0.1:$port" "unix:$sock" --size "$size" \
            --mode reuse -c 1 -t 1 -d "$DURATION" --warmup "$WARMUP" --reps "$REPS" \
            --pin "$PIN" --wait "$wait" -q --json "$json" >"$TMP/run.out" 2>&1 ||
            die "run of $size B ($wait) failed: $(head -c 300 "$TMP/run.out")"
        for tr in tcp unix; do
            jq -r --arg tr "$tr" '.runs[] | select(.transport == $tr and .valid)
                | "\(.latency_ns.p50) \(.ops_per_s)"' "$json" >"$TMP/cell"
            ops=$(sort -n -k2 "$TMP/cell" | awk '{ o[NR] = $2 }
                END { if (NR) printf "%.0f", NR % 2 ? o[(NR + 1) / 2] : (o[NR / 2] + o[NR / 2 + 1]) / 2 }')
            sort -n -k1 "$TMP/cell" | awk -v s="$size" -v tr="$tr" -v w="$wait" -v ops="${ops:--}" '
                { p[NR] = $1 / 1000 }
                END {
                    if (NR == 0) { print s, tr, w, 0, "-", "-"; exit }
                    med = NR % 2 ? p[(NR + 1) / 2] : (p[NR / 2] + p[NR / 2 + 1]) / 2
                    printf "%s %s %s %d %.1f[%.1f-%.1f] %s\n", s, tr, w, NR, med, p[1], p[NR], ops
                }'
        done
    done
    stop_pid TERM "$srv"
    PIDS=
done | tee "$TMP/table"
echo "load after: $(cat /proc/loadavg)"
echo
echo "size unix/tcp(epoll) unix/tcp(block) tcp:epoll/block unix:epoll/block  (median p50)"
awk '{ split($5, a, "["); p[$1, $2, $3] = a[1]; if (!($1 in seen)) { seen[$1] = 1; order[++n] = $1 } }
    function r(x, y) { return (x == "-" || y == "-" || y == 0) ? "-" : sprintf("%.2f", x / y) }
    END {
        for (i = 1; i <= n; i++) {
            s = order[i]
            print s, r(p[s, "unix", "epoll"], p[s, "tcp", "epoll"]), r(p[s, "unix", "block"], p[s, "tcp", "block"]),
                r(p[s, "tcp", "epoll"], p[s, "tcp", "block"]), r(p[s, "unix", "epoll"], p[s, "unix", "block"])
        }
    }' "$TMP/table"
