#!/bin/sh
# stacks.sh: runs every `hopbench stack` case behind the stacks section of bench/JOURNAL.md
# (a loaded window; the quiet figures at the studies' loads are studies.sh's, in bench/RESULTS.md),
# one after the other in one window, and keeps each one's output, evidence and the TIME_WAIT
# sockets held on its web server -> php-fpm TCP hop.
#
#   bench/stacks.sh [HOPBENCH [OUTDIR]]
#
# HOPBENCH defaults to build/release/hopbench, OUTDIR to a new private temporary directory.
# Environment: REPS (default 6) and DUR (seconds, default 2) for every case that takes them;
# OVERLOADS (default 3) runs of each --overload; SHORT=1 runs every case with --short instead
# (a check of this script, not a result). Writes into OUTDIR, per case NAME: NAME.txt (the
# stack's stdout and stderr, and its exit code), NAME.jsonl (its --jsonl evidence, when it
# takes --jsonl), NAME.runs.tsv (one line per run from that evidence) and NAME.tw.tsv (the
# TIME_WAIT samples: time, php-fpm's TCP port, sockets on php-fpm's side, on the web
# server's side); then summary.txt: per cell, the web server's and php-fpm's CPU per request
# together, unix/tcp; and what a new FastCGI connection per request costs over a kept one,
# per transport. A stack that fails is reported and the next case runs. Needs jq and awk.
set -eu
PROG=stacks
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"

HB=${1:-build/release/hopbench}
OUT=${2:-}
REPS=${REPS:-6}
DUR=${DUR:-2}
OVERLOADS=${OVERLOADS:-3}
SHORT=${SHORT:-0}

[ -x "$HB" ] || die "no hopbench at $HB (make -j2 build/release/hopbench)"
is_count "$REPS" || die "REPS must be a whole number above 0: $REPS"
is_count "$OVERLOADS" || die "OVERLOADS must be a whole number above 0: $OVERLOADS"
command -v jq >/dev/null || die "jq is needed (apt-get install jq)"
if [ -z "$OUT" ]; then
    OUT=$(mktemp -d "${TMPDIR:-/tmp}/stacks.XXXXXX")
else
    mkdir -p "$OUT"
fi

stack_pid=
sampler_pid=
cleanup() {
    [ -n "$stack_pid" ] && stop_pid INT "$stack_pid"
    [ -n "$sampler_pid" ] && stop_pid TERM "$sampler_pid"
    stack_pid=
    sampler_pid=
}
trap 'cleanup; exit 130' INT TERM
trap cleanup EXIT

if [ "$SHORT" = 1 ]; then
    MEASURE="--short"
else
    MEASURE="--reps $REPS -d $DUR"
fi

# Samples, every 0.5 s while PID lives, the TIME_WAIT sockets on the php-fpm TCP port that
# the stack's output names last (each ablation step is a fresh stack with its own port).
sample_time_wait() {
    while kill -0 "$1" 2>/dev/null; do
        port=$(sed -n 's#.*php-fpm pid [0-9]* on tcp://127\.0\.0\.1:\([0-9]*\).*#\1#p' "$2" | tail -n 1)
        if [ -n "$port" ]; then
            fpm_side=$(ss -Htan state time-wait "sport = :$port" 2>/dev/null | wc -l)
            web_side=$(ss -Htan state time-wait "dport = :$port" 2>/dev/null | wc -l)
            printf '%s\t%s\t%s\t%s\n' "$(date -u +%T.%N | cut -c1-12)" "$port" "$fpm_side" "$web_side" >>"$3"
        fi
        sleep 0.5
    done
}

# One line per run of an evidence file: label, rep, loop (closed, or open at a fixed rate), ops/s,
# p50 us, p99 us, errors, client CPU us per op, the --server-pid tree's (php-fpm's, or
# redis-server's) and the --server-cgroup's (the web server's; php-fpm's for the bare hop), the
# run's TcpExt.TW delta (TIME_WAIT sockets the whole machine entered over the run) and the share
# of the machine's CPUs other processes used in the run's window (the evidence's other_ns counts
# the --server-cgroup's CPU as other processes' when it is not the --server-pid tree's: it is
# taken out here).
runs_tsv() {
    jq -r 'def us: (. // 0) / 1000 | . * 100 | round / 100;
        select(.record == "run") | [(.label // .endpoint), .rep,
        (if .open_loop == null then "closed" else "open" end), (.ops_per_s | floor),
        (.latency_ns.p50 | us), (.latency_ns.p99 | us), .errors_total,
        (.observed.cpu.client_ns_per_op | us), (.observed.cpu.server_ns_per_op | us),
        (.observed.cpu.cgroup_ns_per_op | us), (.observed.net_delta["TcpExt.TW"] // ""),
        (.observed as $o | if $o.other_cpu.window_ns == null then "" else
            ($o.other_cpu.other_ns - ([($o.cpu.cgroup_ns // 0) - ($o.cpu.server_ns // 0), 0] | max))
            / ($o.other_cpu.window_ns * $o.other_cpu.cpus_allowed) * 100 | round / 100 end)] | @tsv' "$1"
}

# awk functions for the summaries: the median of a[1..n]; a bootstrap resample's median of group
# g's n values (v[g, 1..n]); the p-quantile of a[1..n] (sorts a).
AWK_STATS='
function sorted(a, n,    i, j, x) {
    for (i = 2; i <= n; i++) {
        x = a[i]
        for (j = i - 1; j >= 1 && a[j] > x; j--) a[j + 1] = a[j]
        a[j + 1] = x
    }
}
function median(a, n,    i, s) {
    for (i = 1; i <= n; i++) s[i] = a[i]
    sorted(s, n)
    return n % 2 ? s[(n + 1) / 2] : (s[n / 2] + s[n / 2 + 1]) / 2
}
function group(g,    i, a) {
    for (i = 1; i <= cnt[g]; i++) a[i] = v[g, i]
    return median(a, cnt[g])
}
function resampled(g,    i, r) {
    for (i = 1; i <= cnt[g]; i++) r[i] = v[g, 1 + int(rand() * cnt[g])]
    return median(r, cnt[g])
}
function pct(a, n, p) {
    sorted(a, n)
    return a[int(p * (n - 1)) + 1]
}
function transport(label,    t) {
    t = label; sub(/.*\./, "", t); return t
}
function cell(label) {
    return substr(label, 1, length(label) - length(transport(label)) - 1)
}
'

# combined TSV: per cell of the closed-loop runs, the web server's cgroup plus php-fpm's tree in
# CPU us per request (the bare hop: php-fpm alone), median per transport, and unix/tcp with a
# 95 % bootstrap interval (2000 resamples of each side's runs, seed 1).
combined() {
    awk -F '\t' "$AWK_STATS"'
    $3 == "closed" {
        c = cell($1); g = c SUBSEP transport($1)
        if (!(c in seen)) { seen[c] = 1; order[++cells] = c }
        v[g, ++cnt[g]] = $1 ~ /^fcgi-fpm\./ ? $9 : $9 + $10
    }
    END {
        srand(1)
        for (k = 1; k <= cells; k++) {
            c = order[k]; t = c SUBSEP "tcp"; u = c SUBSEP "unix"
            if (!cnt[t] || !cnt[u]) continue
            for (b = 1; b <= 2000; b++) r[b] = resampled(u) / resampled(t)
            printf "%-16s CPU us per request, web server + php-fpm: tcp %.1f, unix %.1f, unix/tcp %.2f [%.2f, %.2f] (n=%d+%d)\n",
                c, group(t), group(u), group(u) / group(t), pct(r, 2000, 0.025), pct(r, 2000, 0.975), cnt[t], cnt[u]
        }
    }' "$1"
}

# lifecycle NEW.tsv NEWCELL KEPT.tsv KEPTCELL: the CPU a new FastCGI connection per request
# costs the web server and php-fpm together, per transport: the median over NEWCELL's closed-loop
# runs (a new connection per request) minus the median over KEPTCELL's (connections kept), of the
# web server's cgroup plus php-fpm's tree in us per request, and tcp's minus unix's; each with a
# 95 % bootstrap interval (2000 resamples of each side's runs, seed 1).
lifecycle() {
    awk -F '\t' -v nc="$2" -v kc="$4" "$AWK_STATS"'
    FNR == 1 { file++ }
    $3 == "closed" {
        side = (file == 1 && cell($1) == nc) ? "new" : (file == 2 && cell($1) == kc) ? "kept" : ""
        if (side != "") { g = side "." transport($1); v[g, ++cnt[g]] = $9 + $10 }
    }
    END {
        if (!cnt["new.tcp"] || !cnt["new.unix"] || !cnt["kept.tcp"] || !cnt["kept.unix"]) {
            print "n/a (a cell has no closed-loop run)"; exit
        }
        srand(1)
        for (b = 1; b <= 2000; b++) {
            lt[b] = resampled("new.tcp") - resampled("kept.tcp")
            lu[b] = resampled("new.unix") - resampled("kept.unix")
            ld[b] = lt[b] - lu[b]
        }
        t = group("new.tcp") - group("kept.tcp"); u = group("new.unix") - group("kept.unix")
        printf "tcp %.1f [%.1f, %.1f], unix %.1f [%.1f, %.1f], tcp - unix %.1f [%.1f, %.1f] us per request (n=%d+%d new, %d+%d kept)\n",
            t, pct(lt, 2000, 0.025), pct(lt, 2000, 0.975), u, pct(lu, 2000, 0.025), pct(lu, 2000, 0.975),
            t - u, pct(ld, 2000, 0.025), pct(ld, 2000, 0.975),
            cnt["new.tcp"], cnt["new.unix"], cnt["kept.tcp"], cnt["kept.unix"]
    }' "$1" "$3"
}

# run_case NAME ARGS...: hopbench stack ARGS, with the TIME_WAIT sampler beside it.
run_case() {
    name=$1
    shift
    note "$name: hopbench stack $*"
    : >"$OUT/$name.tw.tsv"
    : >"$OUT/$name.txt"
    "$HB" stack "$@" >>"$OUT/$name.txt" 2>&1 &
    stack_pid=$!
    sample_time_wait "$stack_pid" "$OUT/$name.txt" "$OUT/$name.tw.tsv" &
    sampler_pid=$!
    rc=0
    wait "$stack_pid" || rc=$?
    stack_pid=
    wait "$sampler_pid" || true
    sampler_pid=
    echo "exit code $rc" >>"$OUT/$name.txt"
    [ "$rc" = 0 ] || note "$name: exit code $rc (see $OUT/$name.txt)"
    if [ -s "$OUT/$name.jsonl" ]; then
        runs_tsv "$OUT/$name.jsonl" >"$OUT/$name.runs.tsv" || note "$name: evidence unreadable"
    fi
    if [ -s "$OUT/$name.tw.tsv" ]; then
        awk -F '\t' '$3 > f { f = $3 } $4 > w { w = $4 } END {
            printf "TIME_WAIT on the php-fpm TCP port, peak over the run: php-fpm side %d, web server side %d\n", f, w }' \
            "$OUT/$name.tw.tsv" >>"$OUT/$name.txt"
    fi
}

note "output in $OUT"
"$HB" stack list >"$OUT/list.txt" 2>&1
# shellcheck disable=SC2086 # MEASURE is several words on purpose
{
    for web in apache-fpm nginx-fpm; do
        for profile in baseline optimized optimized-reuse; do
            run_case "$web-$profile" "$web" --profile "$profile" $MEASURE --jsonl "$OUT/$web-$profile.jsonl"
        done
    done
    for web in apache-fpm nginx-fpm; do
        run_case "$web-ablation" "$web" --ablation $MEASURE --jsonl "$OUT/$web-ablation.jsonl"
    done
    i=1
    while [ "$i" -le "$OVERLOADS" ]; do
        run_case "apache-fpm-overload-$i" apache-fpm --overload
        run_case "nginx-fpm-overload-$i" nginx-fpm --overload
        i=$((i + 1))
    done
    run_case nginx-fpm-starve nginx-fpm --starve
    run_case redis redis $MEASURE --jsonl "$OUT/redis.jsonl"
    run_case php-method php-method $MEASURE --jsonl "$OUT/php-method.jsonl"
    run_case redis-mariadb redis-mariadb $MEASURE --jsonl "$OUT/redis-mariadb.jsonl"
    run_case postgres postgres $MEASURE --jsonl "$OUT/postgres.jsonl"
}
summaries() {
    for web in apache-fpm nginx-fpm; do
        for case in baseline optimized optimized-reuse ablation; do
            [ -s "$OUT/$web-$case.runs.tsv" ] || continue
            echo "$web-$case:"
            combined "$OUT/$web-$case.runs.tsv"
        done
    done
    if [ -s "$OUT/php-method.runs.tsv" ]; then
        echo "php-method (nginx-fpm, optimized, -c 16):"
        combined "$OUT/php-method.runs.tsv"
    fi
    echo "the connection lifecycle, web server + php-fpm CPU per request, new connection - kept:"
    for web in apache-fpm nginx-fpm; do
        printf '%s, profile optimized against optimized-reuse (the pod study -c 96): ' "$web"
        lifecycle "$OUT/$web-optimized.runs.tsv" "$web" "$OUT/$web-optimized-reuse.runs.tsv" "$web"
        printf '%s, ablation step +php.ini against +reuse (the pod study -c 96): ' "$web"
        lifecycle "$OUT/$web-ablation.runs.tsv" php.ini "$OUT/$web-ablation.runs.tsv" reuse
    done
}
summaries >"$OUT/summary.txt" 2>&1
cat "$OUT/summary.txt"
note "done; output in $OUT"
