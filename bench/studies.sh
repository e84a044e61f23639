#!/bin/sh
# studies.sh: the stacks at the load of the studies they reproduce, for bench/RESULTS.md's
# table per study: the pod study (Apache -> php-fpm: optimized, optimized-reuse, the ablation,
# the overload), the Redis-MariaDB study (redis-mariadb) and the PHP image method (php-method,
# optimized and its keepalive profile optimized-reuse); and the kernel's share of the backend hop (--profile alone:
# root) for Apache and nginx with new FastCGI connections and Apache's kept ones, apart from the
# cases above so that the sampling costs none of their figures; the pod study's baseline
# profile, its pool sweep and its one-request-at-a-time response time (-c 1); and the echo
# lab study's cells (the default lab, its own 5 runs a cell). Each at its default -c (the study's
# load: the stack's --help says it). WINDOWS windows one after the other, each running every
# case, the second in the reverse order, so that a figure can be read as one a re-run
# reproduces. Take the machine first: flock -x /tmp/hb-machine.lock bench/studies.sh ...
#
#   bench/studies.sh [HOPBENCH [OUTDIR]]
#
# HOPBENCH defaults to build/release/hopbench, OUTDIR to a new private temporary directory.
# Environment: REPS (default 5), DUR (seconds, default 2), WINDOWS (default 2), ONLY (the
# names of the cases to run, space-separated; default all). Writes, per
# window W and case NAME, OUTDIR/W-NAME.txt (the stack's stdout and stderr, its exit code, the
# load average before and after) and OUTDIR/W-NAME.jsonl (its --jsonl evidence); and
# OUTDIR/machine.txt (CPU, kernel, the servers' versions). A stack that fails is reported
# and the next case runs.
set -eu
PROG=studies
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"

HB=${1:-build/release/hopbench}
OUT=${2:-}
REPS=${REPS:-5}
DUR=${DUR:-2}
WINDOWS=${WINDOWS:-2}
ONLY=${ONLY:-}

[ -x "$HB" ] || die "no hopbench at $HB (make -j2 build/release/hopbench)"
is_count "$REPS" || die "REPS must be a whole number above 0: $REPS"
is_count "$WINDOWS" || die "WINDOWS must be a whole number above 0: $WINDOWS"
if [ -z "$OUT" ]; then
    OUT=$(mktemp -d "${TMPDIR:-/tmp}/studies.XXXXXX")
else
    mkdir -p "$OUT"
fi

CASES="apache-fpm:apache-fpm
apache-reuse:apache-fpm --profile optimized-reuse
apache-ablation:apache-fpm --ablation
apache-overload:apache-fpm --overload
redis-mariadb:redis-mariadb
php-method:php-method
php-keepalive:php-method --profile optimized-reuse
apache-kernel:apache-fpm --profile
apache-reuse-kernel:apache-fpm --profile optimized-reuse --profile
nginx-kernel:nginx-fpm --profile
apache-baseline:apache-fpm --profile baseline
apache-pool:apache-fpm --pool 4,8,16,32,64
apache-one:apache-fpm -c 1
echo-lab:lab"

# run_case W NAME ARGS...: one stack, its output, evidence, exit code and load averages.
run_case() {
    w=$1
    name=$2
    shift 2
    f=$OUT/$w-$name
    case "$*" in lab) what="hopbench lab" ;; *) what="hopbench stack $*" ;; esac
    note "window $w: $name: $what"
    {
        echo "loadavg before: $(cat /proc/loadavg)"
        echo "started: $(date -u +%FT%TZ)"
    } >"$f.txt"
    rc=0
    case "$*" in
    lab) "$HB" lab -q --json "$f.json" </dev/null >>"$f.txt" 2>&1 || rc=$? ;;
    *--overload*) "$HB" stack "$@" -q --jsonl "$f.jsonl" </dev/null >>"$f.txt" 2>&1 || rc=$? ;;
    *) "$HB" stack "$@" -q --reps "$REPS" -d "$DUR" --jsonl "$f.jsonl" </dev/null >>"$f.txt" 2>&1 || rc=$? ;;
    esac
    {
        echo "exit: $rc"
        echo "ended: $(date -u +%FT%TZ)"
        echo "loadavg after: $(cat /proc/loadavg)"
    } >>"$f.txt"
    [ "$rc" = 0 ] || note "window $w: $name exited $rc (see $f.txt)"
}

{
    echo "cpu: $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n 1), $(nproc) CPUs"
    echo "kernel: $(uname -r)"
    echo "hopbench: $("$HB" --version 2>&1 | head -n 1)"
    # the servers' Debian packages: php-fpm's is named by its version (php8.2-fpm)
    dpkg-query -W -f '${Package}: ${Version}\n' apache2 nginx 'php*-fpm' redis-server \
        mariadb-server 2>/dev/null || echo "servers: dpkg-query found not all of them"
} >"$OUT/machine.txt"

note "output in $OUT"
w=1
while [ "$w" -le "$WINDOWS" ]; do
    if [ $((w % 2)) = 1 ]; then order=$CASES; else order=$(printf '%s\n' "$CASES" | tac); fi
    printf '%s\n' "$order" | while IFS=: read -r name args; do
        if [ -n "$ONLY" ]; then
            case " $ONLY " in *" $name "*) ;; *) continue ;; esac
        fi
        # shellcheck disable=SC2086 # args is several words on purpose
        run_case "$w" "$name" $args
    done
    w=$((w + 1))
done
note "done; output in $OUT"
