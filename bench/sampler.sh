#!/bin/sh
# sampler.sh: what hopbench's socket sampler costs the run it observes. Default
# sampler against --sample-ms 0 (one sock_diag sample at each end of the window,
# none between), in pairs, interleaved, against hopbench's own servers.
#
#   bench/sampler.sh HOPBENCH [HOPBENCH...]
#
# Cases (each run as `hopbench run ... -t 1 -d DURATION --warmup WARMUP --pin PIN`):
#   http-c16   run http EP -c 16              against  serve http --threads 1
#   echo-c16   run echo EP -c 16 --size 64    against  serve echo --threads 1
#   echo-c1    run echo EP -c 1 --size 64     against  serve echo --threads 1
# The servers are started once, from the first HOPBENCH, with --pin PIN, and serve
# every run. Each pair is two runs of one case by one binary, back to back: `default`
# (no --sample-ms) and `off` (--sample-ms 0). Every rep runs each case's pair for each
# binary; even reps run the binaries in reverse order and each pair `off` first (ABBA),
# so slow drift hits both sides of a ratio alike. Several binaries (main's and a
# branch's) are so measured in the same window.
#
# Per run, from its evidence: ops/s (.runs[0].ops_per_s); the load threads' CPU per
# op (.client_cpu_ns_per_op); the whole process's CPU per op over the window, every
# thread, the sampler's included (.observed.other_cpu.client_process_ns / .ops); the
# samples taken; other processes' share of the machine (.observed.other_cpu.
# other_share: what else ran); the CPU of the threads other than the load's over the
# window (client_process_ns - client_cpu_ns: the main thread and the sampler), whose
# default - off difference is what the sampler's samples between the window's ends
# cost, also per extra sample. Printed per binary and case: each figure's default/off
# ratio as the median of the per-pair ratios [min-max] and its spread (max − min),
# and the `off` runs' own spread ((max − min) / median of their ops/s): a ratio within
# that of 1.00 is not told apart from noise.
#
#   PAIRS=N       reps (default 5)
#   DURATION=S    measured seconds per run (default 3)
#   WARMUP=S      warm-up seconds per run (default 1)
#   CASES="..."   the cases to run (default "http-c16 echo-c1"; echo-c16 also)
#   PIN=P         --pin of the servers and the clients: split (default: client on the
#                 first half of the CPUs, server on the rest), same or none
#
# All traffic stays on 127.0.0.1. Every process started is stopped by PID on exit,
# INT or TERM; every client runs under timeout. Needs: jq, awk, timeout.
set -eu

PROG=sampler
READY_TRIES=100 # x 0.05 s: how long a server may take to listen
# shellcheck disable=SC2034 # read by stop_pid in lib.sh
STOP_TRIES=50 # x 0.1 s: how long a server may take to exit on SIGTERM

# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"

usage() {
    echo "usage: bench/sampler.sh HOPBENCH [HOPBENCH...]   (env: PAIRS=5 DURATION=3 WARMUP=1 CASES=\"http-c16 echo-c1\" PIN=split)" >&2
    exit 64
}

[ $# -ge 1 ] || usage
PAIRS=${PAIRS:-5}
DURATION=${DURATION:-3}
WARMUP=${WARMUP:-1}
CASES=${CASES:-http-c16 echo-c1}
PIN=${PIN:-split}
for v in "$PAIRS" "$DURATION"; do
    is_count "$v" || { echo "$PROG: not a positive integer: '$v'" >&2; usage; }
done
case "$WARMUP" in '' | *[!0-9]*) usage ;; esac
case "$PIN" in split | same | none) ;; *) usage ;; esac
for c in $CASES; do
    case "$c" in http-c16 | echo-c16 | echo-c1) ;; *) echo "$PROG: unknown case '$c'" >&2; usage ;; esac
done
for b in "$@"; do
    [ -x "$b" ] || die "not an executable: $b"
done
for tool in jq awk timeout; do
    command -v "$tool" >/dev/null 2>&1 || die "$tool not found"
done
CLIENT_LIMIT=$((DURATION + WARMUP + 60))

private_tmp sampler

# start_server PROTO: starts `serve PROTO` on a free port; sets EP_<PROTO>.
start_server() {
    log="$TMP/serve-$1.out"
    "$FIRST" serve "$1" --listen tcp://127.0.0.1:0 --threads 1 --pin "$PIN" >"$log" 2>"$log.err" &
    pid=$!
    PIDS="$PIDS $pid"
    i=0
    while [ "$i" -lt "$READY_TRIES" ] && kill -0 "$pid" 2>/dev/null; do
        grep -qs "server, .* pid " "$log" && break
        sleep 0.05
        i=$((i + 1))
    done
    ep=$(sed -n 's|^hopbench: listening on \(tcp://[^ ]*\).*|\1|p' "$log" | head -n 1)
    [ -n "$ep" ] || die "serve $1 did not listen: $(cat "$log" "$log.err" | tail -n 5)"
    eval "EP_$1=\$ep"
}

# run_one BIN_INDEX BIN CASE PAIR ARM: one run; appends its row to $TMP/rows.
run_one() {
    case "$3" in
    http-c16) proto=http ep=$EP_http set="-c 16" ;;
    echo-c16) proto=echo ep=$EP_echo set="-c 16 --size 64" ;;
    echo-c1) proto=echo ep=$EP_echo set="-c 1 --size 64" ;;
    esac
    arm_opt=""
    [ "$5" = off ] && arm_opt="--sample-ms 0"
    out="$TMP/run-$1-$3-$4-$5"
    # shellcheck disable=SC2086 # $set and $arm_opt are lists of options
    if ! timeout "$CLIENT_LIMIT" "$2" run "$proto" "$ep" $set -t 1 -d "$DURATION" \
        --warmup "$WARMUP" --pin "$PIN" $arm_opt --json "$out.json" >"$out.txt" 2>&1; then
        die "run failed ($2 $3 $5): $(tail -n 5 "$out.txt")"
    fi
    jq -er --arg b "$1" --arg c "$3" --arg p "$4" --arg a "$5" \
        '.runs[0] | [$b, $c, $p, $a, .ops_per_s, .client_cpu_ns_per_op,
          (.observed.other_cpu.client_process_ns / .ops), .observed.sockets.samples,
          (.observed.other_cpu.other_share | numbers // -1),
          ((.observed.other_cpu.client_process_ns - .client_cpu_ns) / 1e6)] | @tsv' \
        "$out.json" >>"$TMP/rows" || die "no figures in $out.json"
    note "$3 pair $4 bin $1 $5: $(tail -n 1 "$TMP/rows" | cut -f5-)"
}

FIRST=$1
for c in $CASES; do
    case "$c" in
    http-c16) [ -n "${EP_http:-}" ] || start_server http ;;
    echo-c16 | echo-c1) [ -n "${EP_echo:-}" ] || start_server echo ;;
    esac
done

echo "# bench/sampler.sh: default sampler vs --sample-ms 0"
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), kernel $(uname -r), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# PAIRS=$PAIRS DURATION=$DURATION WARMUP=$WARMUP PIN=$PIN CASES=\"$CASES\""
n=0
for b in "$@"; do
    n=$((n + 1))
    echo "# binary $n: $b ($("$b" --version 2>/dev/null | head -n 1))"
done
: >"$TMP/rows"
p=1
while [ "$p" -le "$PAIRS" ]; do
    for c in $CASES; do
        if [ $((p % 2)) -eq 1 ]; then arms="default off" order=$(seq 1 $#); else
            arms="off default" order=$(seq $# -1 1)
        fi
        for i in $order; do
            bin=""
            eval "bin=\${$i}"
            for a in $arms; do
                run_one "$i" "$bin" "$c" "$p" "$a"
            done
        done
    done
    p=$((p + 1))
done
echo "# load average at the end $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# runs: binary case pair arm ops/s load-CPU/op-ns process-CPU/op-ns samples other-share outside-load-CPU-ms"
sort -t "$(printf '\t')" -k1,1n -k2,2 -k3,3n -k4,4 "$TMP/rows" | sed 's/^/#   /'

# Per binary and case: per-pair ratios default/off, then their median [min-max] and spread.
sort -t "$(printf '\t')" -k1,1n -k2,2 -k3,3n "$TMP/rows" | awk -F'\t' '
function median(a, n,    i, j, t) {
    for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
function minmax(a, n,    i) { lo = a[1]; hi = a[1]; for (i = 2; i <= n; i++) { if (a[i] < lo) lo = a[i]; if (a[i] > hi) hi = a[i] } }
function row(name, a, n,    m) {
    m = median(a, n); minmax(a, n)
    printf "  %-26s %6.4f [%6.4f-%6.4f]  spread %6.4f\n", name, m, lo, hi, hi - lo
}
{
    k = $1 SUBSEP $2
    if (!(k in seen)) { seen[k] = 1; keys[++nk] = k }
    v[k, $3, $4, "ops"] = $5; v[k, $3, $4, "load"] = $6; v[k, $3, $4, "proc"] = $7
    v[k, $3, $4, "samples"] = $8; v[k, $3, $4, "other"] = $9; v[k, $3, $4, "outside"] = $10
    if ($3 > np[k]) np[k] = $3
}
END {
    printf "\nratios default/off: median of the per-pair ratios [min-max], spread = max - min\n"
    for (x = 1; x <= nk; x++) {
        k = keys[x]; split(k, kb, SUBSEP); n = 0
        delete r1; delete r2; delete r3; delete offops; delete d1; delete sd; delete ot; delete xs; delete xp
        m2 = 0
        for (p = 1; p <= np[k]; p++) {
            if (!((k, p, "default", "ops") in v) || !((k, p, "off", "ops") in v)) continue
            n++
            r1[n] = v[k, p, "default", "ops"] / v[k, p, "off", "ops"]
            r2[n] = v[k, p, "default", "load"] / v[k, p, "off", "load"]
            r3[n] = v[k, p, "default", "proc"] / v[k, p, "off", "proc"]
            offops[n] = v[k, p, "off", "ops"]; d1[n] = v[k, p, "default", "ops"]
            sd[n] = v[k, p, "default", "samples"]; ot[n] = v[k, p, "off", "other"] + v[k, p, "default", "other"]
            xs[n] = v[k, p, "default", "outside"] - v[k, p, "off", "outside"]
            extra = v[k, p, "default", "samples"] - v[k, p, "off", "samples"]
            if (extra > 0) xp[++m2] = xs[n] / extra
        }
        if (n == 0) continue
        printf "\nbinary %s, %s (%d pairs)\n", kb[1], kb[2], n
        row("ops/s", r1, n)
        row("CPU/op, load threads", r2, n)
        row("CPU/op, whole process", r3, n)
        m = median(d1, n); minmax(d1, n)
        printf "  default ops/s   median %.0f [%.0f-%.0f]\n", m, lo, hi
        m = median(offops, n); minmax(offops, n)
        printf "  off ops/s       median %.0f [%.0f-%.0f]  own spread (max-min)/median %.4f\n", m, lo, hi, (hi - lo) / m
        t = 0; for (i = 1; i <= n; i++) t += ot[i]
        printf "  default samples median %d; other processes, mean share of the machine %.3f\n", median(sd, n), t / (2 * n)
        m = median(xs, n); minmax(xs, n)
        printf "  CPU outside the load threads, default - off: median %.1f ms a run [%.1f-%.1f]", m, lo, hi
        if (m2 > 0) { m = median(xp, m2); minmax(xp, m2); printf "; per extra sample %.2f ms [%.2f-%.2f]", m, lo, hi }
        printf "\n"
    }
}'
