#!/bin/sh
# floors.sh: per protocol, the floor (bench/protofloor: a client that makes only the system
# calls a request needs), hopbench and the protocol's peer client, on the same private
# server, in one interleaved window: one table per protocol.
#
#   bench/floors.sh HOPBENCH PROTOFLOOR [SECONDS]
#
# Servers (private, in a mktemp -d directory, each in a cpuacct cgroup of its own, on CPU 1;
# every client on CPU 0): nginx (worker_processes 1, access_log off, keepalive_requests
# 1000000, return 200 "hello\n", stub_status at /status) on 127.0.0.1; redis-server (no
# persistence) on 127.0.0.1; php-fpm (pm static, 16 children, ping.path /ping, the status
# page at /status) on a Unix socket in the private directory (FastCGI has no authentication:
# the socket is root's, 0600); PostgreSQL (trust, fsync off, a pgbench -i database of scale
# 1) on its Unix socket (PG_TRANSPORT=tcp: 127.0.0.1).
#
# Cases (PROTOS picks the protocols, CASES the cases):
#   http-c1 http-c16 http-c64      GET / (nginx)             peer: wrk -t1 -c C -d S
#   set-c1 set-c16 set-c16-p16     SET key:0..999, 64 B      peer: redis-benchmark -t set -d 64
#                                  (redis)                         -r 1000 -c C -P P -n N
#   fcgi-c1 fcgi-c16               /ping (php-fpm, no PHP)   no peer: no load client speaks
#                                                            FastCGI (cgi-fcgi forks per request)
#   pg-c1                          SELECT abalance FROM pgbench_accounts WHERE aid = 1
#                                                            peer: pgbench -n -M simple -c 1 -T S
# Each case's tools: floor-W and hb-W for W = block (only at -c 1 without pipelining),
# epoll and uring, and the peer. floor-W: PROTOFLOOR PROTO W ...; hb-W: hopbench run PROTO
# ... -t 1 --warmup 0 --wait W -d S. redis-benchmark has no duration: its N is the last
# rep's ops/s x S (the first rep: a guess), so it runs about as long.
#
# Per run: ops/s (each tool's own figure; the floor's requests over its time); the client's
# CPU per request, the whole process's user + system time as wait4() gives them to its
# parent (`PROTOFLOOR cpu`: nothing attached to the client, no perf), over every request it
# made (the floor's and hopbench's .requests, wrk's "requests in", redis-benchmark's N,
# pgbench's transactions); the server's CPU per request, its cgroup's cpuacct.usage (ns)
# around the client, over the same requests. Correctness: for the floor and hopbench the
# server's own count must equal the client's (nginx's stub_status requests, redis's
# cmdstat_set calls, php-fpm's accepted conn, PostgreSQL's xact_commit; less the reads'
# own), else the script stops; the peers' differences are printed.
#
# Each rep runs every cell (case x tool), even reps in reverse order (ABBA). Reported per
# protocol: per case and tool the median [min-max] of ops/s, client and server CPU per
# request; then the ratios, each the median of the per-rep ratios [min-max]: hb-W/floor-W
# client CPU (target <= 1.05), hb-W/peer client CPU (target <= 1.00), floor-W/peer client
# CPU (the lowest any client could reach; 0.8 is the target where it is below 0.8) and
# ops/s, hb-W/peer server CPU (target <= 1.00). The load average before and after.
#
#   SECONDS   per run (default 3)       REPS=N (default 5)     NICE=-19 (root; else 0)
#   PROTOS="http redis fcgi pg"         CASES="..." (default: every case of PROTOS)
#   WAITS="block epoll uring"           TOOLS="floor hb peer"
#   PG_TRANSPORT=unix|tcp
#
# All traffic stays on 127.0.0.1 or sockets in the private directory; every process it
# starts is stopped by PID (clients by their process group) and every cgroup removed, on
# every exit. Needs root (cgroups, the servers' users), 2 CPUs, cgroup v1 cpuacct or v2,
# and (scripts/deps.sh bench) nginx, redis-server, redis-cli, redis-benchmark, wrk,
# php-fpm, cgi-fcgi, postgresql (pgbench, psql), curl, jq, taskset, setsid, timeout.
set -eu

PROG=floors
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"

usage() {
    echo "usage: bench/floors.sh HOPBENCH PROTOFLOOR [SECONDS]   (env: REPS=5 PROTOS=... CASES=... WAITS=... TOOLS=... NICE=-19)" >&2
    exit 64
}

[ $# -ge 2 ] && [ $# -le 3 ] || usage
HOPBENCH=$1
FLOOR=$2
SECS=${3:-3}
REPS=${REPS:-5}
PROTOS=${PROTOS:-http redis fcgi pg}
WAITS=${WAITS:-block epoll uring}
TOOLS=${TOOLS:-floor hb peer}
PG_TRANSPORT=${PG_TRANSPORT:-unix}
if [ "$(id -u)" = 0 ]; then NICE=${NICE:--19}; else NICE=${NICE:-0}; fi
is_count "$SECS" || usage
is_count "$REPS" || usage
case $PG_TRANSPORT in unix | tcp) ;; *) die "PG_TRANSPORT is unix or tcp" ;; esac
[ -x "$HOPBENCH" ] || die "not executable: $HOPBENCH"
[ -x "$FLOOR" ] || die "not executable: $FLOOR (make build/release/bench/protofloor)"
[ "$(id -u)" = 0 ] || die "run as root: the servers' cgroups and users"
taskset -c 1 true 2>/dev/null || die "CPU 1 is not available: the placement needs 2 CPUs"
PATH=$PATH:/usr/sbin:/sbin
PG_BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
FPM=$(command -v php-fpm || ls /usr/sbin/php-fpm* 2>/dev/null | sort -V | tail -n 1 || true)

CASES_ALL=""
for p in $PROTOS; do
    case $p in
    http) CASES_ALL="$CASES_ALL http-c1 http-c16 http-c64" ;;
    redis) CASES_ALL="$CASES_ALL set-c1 set-c16 set-c16-p16" ;;
    fcgi) CASES_ALL="$CASES_ALL fcgi-c1 fcgi-c16" ;;
    pg) CASES_ALL="$CASES_ALL pg-c1" ;;
    *) die "unknown protocol '$p' (http, redis, fcgi, pg)" ;;
    esac
done
CASES=${CASES:-$CASES_ALL}
NEED="jq taskset setsid timeout awk"
for c in $CASES; do
    case $c in
    http-c[0-9]*) NEED="$NEED nginx wrk curl" ;;
    set-c[0-9]*) NEED="$NEED redis-server redis-cli redis-benchmark" ;;
    fcgi-c[0-9]*) NEED="$NEED cgi-fcgi" ;;
    pg-c1) ;;
    *) die "unknown case '$c'" ;;
    esac
done
for tool in $NEED; do
    command -v "$tool" >/dev/null 2>&1 || die "$tool not found (scripts/deps.sh bench installs it)"
done

# ---- private directory, processes, cgroups ------------------------------------------

TMP=$(mktemp -d "${TMPDIR:-/tmp}/floors.XXXXXX")
chmod 711 "$TMP"
PIDS=""
GROUPS_=""
CGROUPS=""
if [ -d /sys/fs/cgroup/cpuacct ]; then
    CG_ROOT=/sys/fs/cgroup/cpuacct CG_USAGE=cpuacct.usage
elif [ -f /sys/fs/cgroup/cgroup.controllers ]; then
    CG_ROOT=/sys/fs/cgroup CG_USAGE=cpu.stat
else
    die "no cgroup cpuacct (v1) or cgroup v2 here"
fi

cleanup() {
    for g in $GROUPS_; do kill -KILL -- "-$g" 2>/dev/null || true; done
    for pid in $PIDS; do stop_pid TERM "$pid"; done
    for cg in $CGROUPS; do
        # the servers' other processes (nginx's worker, php-fpm's and postgres's children)
        for p in $(cat "$cg/cgroup.procs" 2>/dev/null); do kill -KILL "$p" 2>/dev/null || true; done
        i=0
        while [ -n "$(cat "$cg/cgroup.procs" 2>/dev/null)" ] && [ "$i" -lt 50 ]; do
            sleep 0.1
            i=$((i + 1))
        done
        rmdir "$cg" 2>/dev/null || echo "$PROG: could not remove cgroup $cg" >&2
    done
    rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# new_cgroup NAME VAR: a cgroup for one server, its directory into VAR. Not in a command
# substitution: that subshell's CGROUPS was lost, and every cgroup left behind on exit.
new_cgroup() {
    cg=$CG_ROOT/floors.$$.$1
    mkdir "$cg" || die "cannot make cgroup $cg"
    CGROUPS="$CGROUPS $cg"
    eval "$2=\$cg"
}

# The CPU time (ns) of every process that ran in cgroup $1.
cg_ns() {
    if [ "$CG_USAGE" = cpuacct.usage ]; then
        cat "$1/cpuacct.usage"
    else
        awk '$1 == "usage_usec" { printf "%.0f\n", $2 * 1000 }' "$1/cpu.stat"
    fi
}

# server CGROUP OUT CMD...: CMD in CGROUP (joined before exec, so its children are in it
# too), on CPU 1 at nice $NICE, in the background; its PID is added to PIDS.
server() {
    cg=$1 out=$2
    shift 2
    # shellcheck disable=SC2016 # $$ is the inner shell's
    sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$cg" nice -n "$NICE" taskset -c 1 "$@" \
        >"$out" 2>&1 &
    PIDS="$PIDS $!"
}

# ---- servers -------------------------------------------------------------------------

start_nginx() {
    NG_PORT=$(pick_port 1)
    nginx_conf "$TMP/nginx" "$NG_PORT" off 'location = /status { stub_status; }'
    new_cgroup nginx NG_CG
    server "$NG_CG" "$TMP/nginx.out" nginx -p "$TMP/nginx/" -e "$TMP/nginx/error.log" -c "$TMP/nginx/nginx.conf"
    wait_for "nginx" port_listening "$NG_PORT"
}

start_redis() {
    RD_PORT=$(pick_port 2)
    [ "$RD_PORT" != "${NG_PORT:-}" ] || RD_PORT=$((RD_PORT + 1))
    new_cgroup redis RD_CG
    server "$RD_CG" "$TMP/redis.out" redis-server --bind 127.0.0.1 --port "$RD_PORT" --save '' \
        --appendonly no --dir "$TMP" --daemonize no --logfile "$TMP/redis.log"
    wait_for "redis-server" port_listening "$RD_PORT"
}

start_fpm() {
    [ -n "$FPM" ] && [ -x "$FPM" ] || die "php-fpm not found (scripts/deps.sh bench installs it)"
    FPM_SOCK=$TMP/fpm.sock
    cat >"$TMP/fpm.conf" <<EOF
[global]
pid = $TMP/fpm.pid
error_log = $TMP/fpm.log
daemonize = no
[floors]
user = www-data
group = www-data
listen = $FPM_SOCK
listen.owner = root
listen.group = root
listen.mode = 0600
listen.backlog = 1024
pm = static
pm.max_children = 16
ping.path = /ping
pm.status_path = /status
EOF
    new_cgroup fpm FPM_CG
    server "$FPM_CG" "$TMP/fpm.out" "$FPM" -n -y "$TMP/fpm.conf" -F -R
    wait_for "php-fpm" test -S "$FPM_SOCK"
}

start_pg() {
    [ -x "$PG_BIN/pgbench" ] || die "PostgreSQL not found (scripts/deps.sh bench installs it)"
    PG_PORT=$(pick_port 3)
    mkdir -p "$TMP/pg"
    chown postgres "$TMP/pg"
    runuser -u postgres -- "$PG_BIN/initdb" -D "$TMP/pg/data" -A trust -U postgres >"$TMP/initdb.log" 2>&1 ||
        die "initdb failed: $(tail -n 3 "$TMP/initdb.log")"
    printf "listen_addresses = '127.0.0.1'\nport = %s\nunix_socket_directories = '%s'\nfsync = off\nautovacuum = off\n" \
        "$PG_PORT" "$TMP/pg" >>"$TMP/pg/data/postgresql.conf"
    new_cgroup pg PG_CG
    server "$PG_CG" "$TMP/pg.out" runuser -u postgres -- "$PG_BIN/postgres" -D "$TMP/pg/data"
    wait_for "postgres" test -S "$TMP/pg/.s.PGSQL.$PG_PORT"
    sleep 0.5
    "$PG_BIN/pgbench" -h "$TMP/pg" -p "$PG_PORT" -U postgres -i -s 1 -q postgres >"$TMP/pgbench-init.log" 2>&1 ||
        die "pgbench -i failed: $(tail -n 3 "$TMP/pgbench-init.log")"
    if [ "$PG_TRANSPORT" = unix ]; then
        PG_EP=unix:$TMP/pg/.s.PGSQL.$PG_PORT PG_HOST=$TMP/pg
    else
        PG_EP=tcp://127.0.0.1:$PG_PORT PG_HOST=127.0.0.1
    fi
    PGQ="SELECT abalance FROM pgbench_accounts WHERE aid = 1"
    printf '%s;\n' "$PGQ" >"$TMP/q.sql"
}

# wait_for NAME CMD...: until CMD succeeds (5 s at most).
wait_for() {
    name=$1
    shift
    i=0
    until "$@"; do
        i=$((i + 1))
        [ "$i" -lt 100 ] || die "$name did not start: $(tail -n 5 "$TMP"/*.out "$TMP"/*.log 2>/dev/null)"
        sleep 0.05
    done
}

# ---- the servers' own counts -------------------------------------------------------

# count_of FAMILY: prints "COUNT READS", the server's own count of requests and how many
# reads of it that took; each read but redis's counts itself (nginx's status request,
# php-fpm's, a psql session's transaction).
count_of() {
    case $1 in
    http) echo "$(curl -s "http://127.0.0.1:$NG_PORT/status" | awk 'NR == 3 { print $3 }') 1" ;;
    set) echo "$(timeout 5 redis-cli -p "$RD_PORT" info commandstats |
        awk -F'[=,:]' '$1 == "cmdstat_set" { print $3; f = 1 } END { if (!f) print 0 }') 0" ;;
    fcgi) fpm_count ;;
    pg) pg_count ;;
    esac
}

fpm_read() {
    SCRIPT_NAME=/status SCRIPT_FILENAME=/status REQUEST_METHOD=GET QUERY_STRING='' \
        timeout 5 cgi-fcgi -bind -connect "$FPM_SOCK" | awk -F: '$1 == "accepted conn" { print $2 + 0 }'
}

# php-fpm's children may still be reading the last requests and the ends of the connections
# (each an "accepted conn" too) when the client has exited: read until only the read itself
# moved the count.
fpm_count() {
    last=$(fpm_read)
    reads=1
    while [ "$reads" -lt 100 ]; do
        sleep 0.02
        now=$(fpm_read)
        reads=$((reads + 1))
        if [ "$now" = $((last + 1)) ]; then
            echo "$now $reads"
            return
        fi
        last=$now
    done
    die "php-fpm's count did not settle"
}

# PostgreSQL counts a backend's transactions when it exits (before it leaves
# pg_stat_activity), after its client did: xact_commit is read once no other client backend
# is left.
pg_count() {
    reads=0
    while [ "$reads" -lt 100 ]; do
        reads=$((reads + 1))
        line=$(timeout 5 "$PG_BIN/psql" -h "$TMP/pg" -p "$PG_PORT" -U postgres -AtF ' ' -c \
            "SELECT (SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend'
                     AND pid <> pg_backend_pid()), xact_commit
             FROM pg_stat_database WHERE datname = 'postgres'" postgres) || die "psql failed"
        if [ "${line%% *}" = 0 ]; then
            echo "${line#* } $reads"
            return
        fi
        sleep 0.05
    done
    die "PostgreSQL still had other client backends after 100 reads"
}

# What the server counted of the client's between two count_of lines K0 and K1: less the
# reads after K0 (nginx and php-fpm count each read once; PostgreSQL twice, the log-in's
# transaction and the query's; the last read before K0 is in K0 already, but for its
# session's query, whose count comes with its end), and one per connection: php-fpm's read
# that finds its end, PostgreSQL's log-in (hopbench opens one more: its pre-flight probe).
counted() { # FAMILY K0 K1 CONNECTIONS
    n=$((${3%% *} - ${2%% *}))
    case $1 in
    http) n=$((n - ${3#* })) ;;
    fcgi) n=$((n - ${3#* } - $4)) ;;
    pg) n=$((n - 2 * ${3#* } - $4)) ;;
    esac
    echo "$n"
}

# ---- one run ---------------------------------------------------------------------------

# client OUT CMD...: CMD on CPU 0 at nice $NICE, its rusage in OUT.cpu, bounded by timeout,
# in a session of its own (cleanup kills the group). Dies if it fails.
client() {
    out=$1
    shift
    rm -f "$out" "$out.cpu"
    setsid nice -n "$NICE" taskset -c 0 "$FLOOR" cpu "$out.cpu" timeout $((SECS * 3 + 30)) "$@" \
        >"$out" 2>"$out.err" &
    cl=$!
    GROUPS_="$GROUPS_ $cl"
    rc=0
    wait "$cl" || rc=$?
    rest=""
    for g in $GROUPS_; do [ "$g" = "$cl" ] || rest="$rest $g"; done
    GROUPS_=$rest
    [ "$rc" = 0 ] || die "failed (exit $rc): $*: $(tail -n 3 "$out" "$out.err" 2>/dev/null)"
    read -r CPU_USER CPU_SYS <"$out.cpu" || die "no rusage for $*"
}

# parse_case CASE: sets FAM (http, set, fcgi, pg), C and P.
parse_case() {
    FAM=${1%%-*}
    rest=${1#*-c}
    C=${rest%%-*}
    P=1
    case $rest in *-p*) P=${rest#*-p} ;; esac
}

# run_tool CASE TOOL: one run; sets OPS and REQ.
run_tool() {
    parse_case "$1"
    tool=$2
    w=${tool#*-}
    case $FAM in
    http) fproto=http ep=tcp://127.0.0.1:$NG_PORT fargs="" hargs="" ;;
    set) fproto=redis ep=tcp://127.0.0.1:$RD_PORT fargs="--command set --keys 1000 --size 64 -P $P"
        hargs="--command set --keys 1000 --value-size 64 --pipeline $P" ;;
    fcgi) fproto=fcgi ep=unix:$FPM_SOCK fargs="--path /ping" hargs="--path /ping" ;;
    pg) fproto=pg ep=$PG_EP fargs="" hargs="" ;;
    esac
    case $tool in
    floor-*)
        if [ "$FAM" = pg ]; then
            client "$TMP/run.out" "$FLOOR" pg "$w" "$ep" -c "$C" -d "$SECS" --sql "$PGQ"
        else
            # shellcheck disable=SC2086 # fargs is a list of options
            client "$TMP/run.out" "$FLOOR" "$fproto" "$w" "$ep" -c "$C" -d "$SECS" $fargs
        fi
        OPS=$(json_number "$TMP/run.out" .ops_per_s)
        REQ=$(json_number "$TMP/run.out" .requests)
        ;;
    hb-*)
        rm -f "$TMP/hb.json"
        if [ "$FAM" = pg ]; then
            client "$TMP/run.out" "$HOPBENCH" run pg "$ep" --sql "$PGQ" -c "$C" -t 1 -d "$SECS" \
                --warmup 0 --wait "$w" -q --json "$TMP/hb.json"
        else
            # shellcheck disable=SC2086 # hargs is a list of options
            client "$TMP/run.out" "$HOPBENCH" run "$fproto" "$ep" -c "$C" -t 1 -d "$SECS" --warmup 0 \
                --wait "$w" -q --json "$TMP/hb.json" $hargs
        fi
        [ "$(json_number "$TMP/hb.json" '.runs[0].errors_total')" = 0 ] || die "hopbench saw errors: $tool $1"
        [ "$w" = block ] || [ "$(jq -r '.runs[0].wait' "$TMP/hb.json")" = "$w" ] ||
            die "hopbench run --wait $w waited with $(jq -r '.runs[0].wait' "$TMP/hb.json")"
        OPS=$(json_number "$TMP/hb.json" '.runs[0].ops_per_s')
        REQ=$(json_number "$TMP/hb.json" '.runs[0].requests')
        ;;
    peer)
        case $FAM in
        http)
            client "$TMP/run.out" wrk -t1 -c "$C" -d "$SECS" "http://127.0.0.1:$NG_PORT/"
            ! grep -qE 'Socket errors|Non-2xx' "$TMP/run.out" || die "wrk reported errors: $(cat "$TMP/run.out")"
            REQ=$(awk '/ requests in / { print $1; exit }' "$TMP/run.out")
            OPS=$(awk '/^Requests\/sec:/ { print $2; exit }' "$TMP/run.out")
            ;;
        set)
            eval "last=\${RB_OPS_${C}_$P:-}"
            n=$(awk -v o="${last:-20000}" -v s="$SECS" 'BEGIN { printf "%d\n", o * s }')
            client "$TMP/run.out" redis-benchmark -h 127.0.0.1 -p "$RD_PORT" -c "$C" -n "$n" -P "$P" \
                -t set -d 64 -r 1000 --csv
            OPS=$(awk -F'"' '$2 == "SET" { print $4; exit }' "$TMP/run.out")
            REQ=$n
            ;;
        pg)
            client "$TMP/run.out" "$PG_BIN/pgbench" -h "$PG_HOST" -p "$PG_PORT" -U postgres -n -c "$C" \
                -M simple -f "$TMP/q.sql" -T "$SECS" postgres
            OPS=$(sed -n 's/^tps = \([0-9.]*\) (without initial connection time)$/\1/p' "$TMP/run.out")
            REQ=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$TMP/run.out")
            ;;
        esac
        [ -n "$OPS" ] && is_count "$REQ" || die "no figures from the peer of $1: $(tail -n 5 "$TMP/run.out")"
        ;;
    esac
}

# cell REP CASE TOOL: a run with its server's CPU and count around it; appends a row.
cell() {
    parse_case "$2"
    case $FAM in http) cg=$NG_CG ;; set) cg=$RD_CG ;; fcgi) cg=$FPM_CG ;; pg) cg=$PG_CG ;; esac
    k0=$(count_of "$FAM")
    s0=$(cg_ns "$cg")
    run_tool "$2" "$3"
    s1=$(cg_ns "$cg")
    k1=$(count_of "$FAM")
    conns=$C
    case $3 in hb-*) conns=$((C + 1)) ;; esac
    seen=$(counted "$FAM" "$k0" "$k1" "$conns")
    diff=$((seen - REQ))
    # hopbench closes its connections with their last requests in flight (the floor reads
    # them first): php-fpm answers each but never reads that connection's end, -1 for each.
    lo=0
    [ "$FAM" != fcgi ] || [ "${3%%-*}" != hb ] || lo=$((-C))
    case $3 in
    floor-* | hb-*) [ "$diff" -le 0 ] && [ "$diff" -ge "$lo" ] ||
        die "$2 $3: the client made $REQ requests, the server counted $seen" ;;
    esac
    [ "$3" != peer ] || [ "$FAM" != set ] || eval "RB_OPS_${C}_$P=\$OPS"
    awk -v rep="$1" -v c="$2" -v t="$3" -v ops="$OPS" -v req="$REQ" -v u="$CPU_USER" -v s="$CPU_SYS" \
        -v srv="$((s1 - s0))" -v d="$diff" 'BEGIN {
        printf "%s %s %s %.1f %d %.1f %.1f %d\n", rep, c, t, ops, req, (u + s) / req, srv / req, d }' >>"$TMP/rows"
    note "rep $1 $2 $3: $(printf '%.0f' "$OPS") ops/s, client $(tail -n 1 "$TMP/rows" | cut -d' ' -f6) ns/req, server $(tail -n 1 "$TMP/rows" | cut -d' ' -f7) ns/req, count diff $diff"
}

# The tools of a case: floor-W and hb-W for each wait that applies, then the peer.
tools_of() {
    parse_case "$1"
    list=""
    for t in $TOOLS; do
        case $t in
        floor | hb)
            for w in $WAITS; do
                [ "$w" != block ] || { [ "$C" = 1 ] && [ "$P" = 1 ]; } || continue
                list="$list $t-$w"
            done
            ;;
        peer) [ "$FAM" = fcgi ] || list="$list peer" ;;
        esac
    done
    echo "$list"
}

# ---- the window ------------------------------------------------------------------------

echo "floors: $(date -u '+%Y-%m-%d %H:%M:%S UTC'), kernel $(uname -r), $(nproc) CPUs, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
echo "command: PROTOS=\"$PROTOS\" CASES=\"$CASES\" WAITS=\"$WAITS\" TOOLS=\"$TOOLS\" REPS=$REPS NICE=$NICE PG_TRANSPORT=$PG_TRANSPORT bench/floors.sh $HOPBENCH $FLOOR $SECS"
echo "versions: $("$HOPBENCH" --version 2>/dev/null)"
for c in $CASES; do
    case $c in
    http-*) [ -n "${NG_CG:-}" ] || start_nginx ;;
    set-*) [ -n "${RD_CG:-}" ] || start_redis ;;
    fcgi-*) [ -n "${FPM_CG:-}" ] || start_fpm ;;
    pg-*) [ -n "${PG_CG:-}" ] || start_pg ;;
    esac
done
CELLS=""
for c in $CASES; do
    for t in $(tools_of "$c"); do CELLS="$CELLS $c:$t"; done
done
REVERSED=""
for x in $CELLS; do REVERSED="$x $REVERSED"; done
: >"$TMP/rows"
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
echo "load average before the first run: $LOAD0"
rep=1
while [ "$rep" -le "$REPS" ]; do
    if [ $((rep % 2)) = 1 ]; then cells=$CELLS; else cells=$REVERSED; fi
    for x in $cells; do cell "$rep" "${x%%:*}" "${x#*:}"; done
    rep=$((rep + 1))
done
echo "load average after the last run: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "per run: rep case tool ops/s requests client-ns/req server-ns/req server-count-minus-client"
sed 's/^/  /' "$TMP/rows"

# ---- the tables -------------------------------------------------------------------------

awk -v cases="$CASES" -v reps="$REPS" '
function sortv(a, n,    i, j, t) {
    for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
}
# MED MIN MAX N of v[k, r] over the reps
function stats(v, k,    a, n, r) {
    n = 0
    for (r = 1; r <= reps; r++) if ((k, r) in v) a[++n] = v[k, r] + 0
    N = n
    if (!n) return
    sortv(a, n)
    MED = (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    MIN = a[1]; MAX = a[n]
}
# the per-rep ratios v[a]/v[b] of case c
function ratio(v, c, a, b,    r, q) {
    delete q
    for (r = 1; r <= reps; r++)
        if (((c SUBSEP a), r) in v && ((c SUBSEP b), r) in v && v[c, b, r] > 0) q["x", r] = v[c, a, r] / v[c, b, r]
    stats(q, "x")
}
function show(unit) {
    if (unit == "k") return sprintf("%.1f [%.1f-%.1f]", MED / 1000, MIN / 1000, MAX / 1000)
    if (unit == "u") return sprintf("%.2f [%.2f-%.2f]", MED / 1000, MIN / 1000, MAX / 1000)
    return sprintf("%.2f [%.2f-%.2f]", MED, MIN, MAX)
}
function verdict(limit, le) {
    if (limit == "") return ""
    return (le ? MED <= limit : MED >= limit) ? " PASS" : " MISS"
}
function rrow(what, v, c, a, b, limit, le) {
    if (!(c in has) || !((c, a) in tool) || !((c, b) in tool)) return
    ratio(v, c, a, b)
    if (N) printf "  %-34s %s%s\n", what, show(""), verdict(limit, le)
}
{ ops[$2, $3, $1] = $4; cpu[$2, $3, $1] = $6; srv[$2, $3, $1] = $7; has[$2] = 1; tool[$2, $3] = 1
  if (!(($2, $3) in seen)) { seen[$2, $3] = 1; order[$2] = order[$2] " " $3 } }
END {
    nc = split(cases, cs, " ")
    for (i = 1; i <= nc; i++) {
        c = cs[i]
        if (!(c in has)) continue
        printf "\n%s: median [min-max] over the reps\n", c
        printf "  %-12s %-26s %-24s %-24s\n", "tool", "k ops/s", "client cpu us/req", "server cpu us/req"
        nt = split(order[c], ts, " ")
        for (j = 1; j <= nt; j++) {
            t = ts[j]
            stats(ops, c SUBSEP t); o = show("k")
            stats(cpu, c SUBSEP t); u = show("u")
            stats(srv, c SUBSEP t); s = show("u")
            printf "  %-12s %-26s %-24s %-24s\n", t, o, u, s
        }
        printf "  ratios, median of the per-rep ratios [min-max]:\n"
        split("block epoll uring", ws, " ")
        for (k = 1; k <= 3; k++) {
            w = ws[k]
            rrow("hb-" w "/floor-" w " client cpu", cpu, c, "hb-" w, "floor-" w, 1.05, 1)
            rrow("hb-" w "/peer client cpu", cpu, c, "hb-" w, "peer", 1.00, 1)
            rrow("floor-" w "/peer client cpu", cpu, c, "floor-" w, "peer", "", 1)
            rrow("hb-" w "/peer ops/s", ops, c, "hb-" w, "peer", "", 0)
            rrow("floor-" w "/peer ops/s", ops, c, "floor-" w, "peer", "", 0)
            rrow("hb-" w "/peer server cpu", srv, c, "hb-" w, "peer", 1.00, 1)
            rrow("hb-" w "/floor-" w " server cpu", srv, c, "hb-" w, "floor-" w, "", 1)
        }
        rrow("floor-uring/floor-epoll client cpu", cpu, c, "floor-uring", "floor-epoll", "", 1)
        rrow("floor-uring/floor-epoll server cpu", srv, c, "floor-uring", "floor-epoll", "", 1)
        rrow("floor-block/floor-epoll client cpu", cpu, c, "floor-block", "floor-epoll", "", 1)
    }
}' "$TMP/rows"
exit 0
