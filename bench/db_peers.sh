#!/bin/sh
# db_peers.sh: hopbench's pg and mysql clients against the database peers, each pair
# loading the same private server with the same query: pgbench against PostgreSQL,
# sysbench against MariaDB.
#
#   bench/db_peers.sh HOPBENCH [SECONDS]
#
# Servers (private data directories in a mktemp -d directory, started once as their own
# users, stopped by PID at the end): PostgreSQL (trust on 127.0.0.1 and its socket,
# fsync off, a pgbench -i database of scale 1) and MariaDB (root without a password over
# its socket, a sysbench oltp table of 10 000 rows). The query is fixed, so both tools
# do the same work: SELECT abalance FROM pgbench_accounts WHERE aid = 1 (pgbench -f with
# that line; -M simple or extended), SELECT c FROM sbtest1 WHERE id = 1 (sysbench's
# select_random_points would differ; it runs a one-line Lua script with the text
# protocol, --db-ps-mode=disable).
#
# Cases, each rep running both tools on every case, even reps in reverse (ABBA):
#   pg-simple     pgbench -c 1 -n -M simple -f q.sql -T S   hopbench run pg --sql Q -d S --wait epoll
#   pg-extended   ... -M extended                           ... --extended --wait epoll
#   pg-connect    pgbench -C ... (a backend per query)      ... --mode connect
#   mysql         sysbench (1 thread, the Lua script)       hopbench run mysql --sql Q --wait epoll
#   pg-block      as pg-simple                              ... --wait block
#   mysql-block   as mysql                                  ... --wait block
# (the -block cases, not in the default CASES, tell the cost of hopbench's epoll wait: a
# blocking client sleeps in recv, one syscall less per query, as pgbench and sysbench do;
# run's own default is block here, so the other cases name epoll)
# over the Unix socket (TRANSPORT=tcp for 127.0.0.1). Throughput is each tool's own
# figure (pgbench's tps, without the initial connection time, or with -C including the
# reconnections, as hopbench's connect mode counts them; sysbench's queries/s;
# hopbench's ops/s); client CPU per query is the whole client process's utime+stime, as
# wait4() returns them to perf stat, its parent (microseconds; the kernel scales them to
# its own run-time count), over every query it made in its life (pgbench's "number of
# transactions actually processed", sysbench's total queries, hopbench's .requests).
# Each client is the direct child of perf stat (pgbench runs as root, not under
# runuser), so no wrapper's CPU is counted. perf's task-clock of the same process is a
# second reading (it leaves out part of every context switch). Reported per case: each
# tool's median [min-max], and hopbench/peer as the median of the per-rep ratios
# [min-max]. Targets (informational): ops/s ratio >= 1.0, client CPU per query <= 0.8x.
# The load average is printed before the first and after the last run.
#
# FLOOR=build/release/bench/floor adds, once per rep, the floor of a client's CPU on this
# machine: bench/floor's client (a blocking write and read of 64 B, no event loop, no
# parsing) against floor's own echo server, on the same transport and CPUs. Its CPU per
# round trip over a peer's is the lowest ratio any client could reach against that peer,
# were the server as quick as the echo.
#
#   SECONDS   per run (default 5)      REPS=N (default 5)     TRANSPORT=unix|tcp
#   PIN=split (default with 2 CPUs or more: the servers on CPU 0, every client on CPU 1)
#       or none                        FLOOR=PATH (bench/floor)      FLOOR_N=20000 round trips
#
# All traffic stays on 127.0.0.1 or the sockets in the mktemp directory; every server
# and client is bounded (timeout) and stopped by PID. Needs (scripts/deps.sh bench):
# postgresql (pgbench), mariadb-server, mariadb-client, sysbench, linux-perf, jq, taskset.
set -eu

PROG=db_peers
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"

[ $# -ge 1 ] && [ $# -le 2 ] || {
    echo "usage: bench/db_peers.sh HOPBENCH [SECONDS]   (env: REPS=5 TRANSPORT=unix|tcp PIN=split|none)" >&2
    exit 64
}
HOPBENCH=$1
SECS=${2:-5}
REPS=${REPS:-5}
TRANSPORT=${TRANSPORT:-unix}
CASES=${CASES:-pg-simple pg-extended pg-connect mysql}
FLOOR=${FLOOR:-}
FLOOR_N=${FLOOR_N:-20000}
for v in "$SECS" "$REPS" "$FLOOR_N"; do is_count "$v" || die "not a positive integer: '$v'"; done
[ -z "$FLOOR" ] || [ -x "$FLOOR" ] || die "FLOOR is not executable: $FLOOR (make build/release/bench/floor)"
case $TRANSPORT in unix | tcp) ;; *) die "TRANSPORT is unix or tcp" ;; esac
PIN=${PIN:-$([ "$(nproc)" -ge 2 ] && echo split || echo none)}
case $PIN in
split) SERVER_CPU="taskset -c 0" CLIENT_CPU="taskset -c 1" ;;
none) SERVER_CPU="" CLIENT_CPU="" ;;
*) die "PIN is split or none" ;;
esac
PG_BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
for tool in "$PG_BIN/pgbench" "$PG_BIN/initdb" /usr/sbin/mariadbd; do
    [ -x "$tool" ] || die "$tool not found (scripts/deps.sh bench installs it)"
done
for tool in sysbench mariadb mariadb-install-db jq runuser timeout perf taskset; do
    command -v "$tool" >/dev/null 2>&1 || die "$tool not found (scripts/deps.sh bench installs it)"
done
[ -x "$HOPBENCH" ] || die "hopbench binary not executable: $HOPBENCH"
[ "$(id -u)" = 0 ] || die "run as root: the servers run as their own users"
perf stat -e task-clock -o /dev/null -- true 2>/dev/null || die "perf stat does not work here"

TMP=$(mktemp -d "${TMPDIR:-/tmp}/dbpeers.XXXXXX")
chmod 711 "$TMP"
PIDS=""
cleanup() {
    for pid in $PIDS; do stop_pid TERM "$pid"; done
    rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ---- servers ----------------------------------------------------------------

PG_PORT=$(pick_port 3)
MY_PORT=$(pick_port 11)
[ "$MY_PORT" != "$PG_PORT" ] || MY_PORT=$((PG_PORT + 1))
mkdir -p "$TMP/pg" "$TMP/my"
chown postgres "$TMP/pg"
chown mysql "$TMP/my"
runuser -u postgres -- "$PG_BIN/initdb" -D "$TMP/pg/data" -A trust -U postgres >"$TMP/initdb.log" 2>&1 ||
    die "initdb failed: $(tail -n 3 "$TMP/initdb.log")"
printf "listen_addresses = '127.0.0.1'\nport = %s\nunix_socket_directories = '%s'\nfsync = off\n" \
    "$PG_PORT" "$TMP/pg" >>"$TMP/pg/data/postgresql.conf"
# shellcheck disable=SC2086 # SERVER_CPU is empty or a taskset command
$SERVER_CPU runuser -u postgres -- "$PG_BIN/postgres" -D "$TMP/pg/data" >"$TMP/pg.log" 2>&1 &
PIDS="$PIDS $!"
mariadb-install-db --no-defaults --datadir="$TMP/my/data" --user=mysql \
    --auth-root-authentication-method=normal --skip-test-db >"$TMP/my.install" 2>&1 ||
    die "mariadb-install-db failed: $(tail -n 3 "$TMP/my.install")"
# shellcheck disable=SC2086 # SERVER_CPU is empty or a taskset command
$SERVER_CPU /usr/sbin/mariadbd --no-defaults --datadir="$TMP/my/data" --user=mysql --socket="$TMP/my/sock" \
    --port="$MY_PORT" --bind-address=127.0.0.1 --skip-name-resolve --log-error="$TMP/my.log" \
    --innodb-buffer-pool-size=32M >/dev/null 2>&1 &
PIDS="$PIDS $!"
i=0
until [ -S "$TMP/pg/.s.PGSQL.$PG_PORT" ] && [ -S "$TMP/my/sock" ]; do
    i=$((i + 1))
    [ "$i" -lt 400 ] || die "the servers did not start: $(tail -n 2 "$TMP/pg.log" "$TMP/my.log")"
    sleep 0.05
done
sleep 0.5
note "initialising: pgbench -i (scale 1), sysbench oltp prepare (10 000 rows)"
runuser -u postgres -- "$PG_BIN/pgbench" -h "$TMP/pg" -p "$PG_PORT" -U postgres -i -s 1 -q postgres \
    >"$TMP/pgbench-init.log" 2>&1 || die "pgbench -i failed: $(tail -n 3 "$TMP/pgbench-init.log")"
mariadb --no-defaults -S "$TMP/my/sock" -u root -e "CREATE DATABASE sbtest" ||
    die "CREATE DATABASE failed"
SB="sysbench --db-driver=mysql --mysql-socket=$TMP/my/sock --mysql-user=root --mysql-db=sbtest"
# shellcheck disable=SC2086 # SB is a command with its options
timeout 300 $SB --tables=1 --table-size=10000 oltp_point_select prepare >"$TMP/sb-prepare.log" 2>&1 ||
    die "sysbench prepare failed: $(tail -n 3 "$TMP/sb-prepare.log")"
PGQ="SELECT abalance FROM pgbench_accounts WHERE aid = 1"
MYQ="SELECT c FROM sbtest1 WHERE id = 1"
printf '%s;\n' "$PGQ" >"$TMP/q.sql"
chmod 644 "$TMP/q.sql"
cat >"$TMP/point.lua" <<EOF
function thread_init()
    drv = sysbench.sql.driver()
    con = drv:connect()
end
function event()
    con:query("$MYQ")
end
function thread_done()
    con:disconnect()
end
EOF

if [ -n "$FLOOR" ]; then
    floor_cpu=""
    [ "$PIN" = split ] && floor_cpu="--pin-cpu 0"
    if [ "$TRANSPORT" = unix ]; then set -- unix "$TMP/echo.sock"; else set -- tcp 0; fi
    # shellcheck disable=SC2086 # floor_cpu is empty or one option and its value
    "$FLOOR" serve "$@" $floor_cpu >"$TMP/floor.serve" 2>&1 &
    PIDS="$PIDS $!"
    i=0
    until FLOOR_ADDR=$(sed -n 's/^floor: listening on \(tcp:\/\/127\.0\.0\.1:\|unix:\)//p' "$TMP/floor.serve") &&
        [ -n "$FLOOR_ADDR" ]; do
        i=$((i + 1))
        [ "$i" -lt 100 ] || die "floor serve did not start: $(cat "$TMP/floor.serve")"
        sleep 0.05
    done
fi

if [ "$TRANSPORT" = unix ]; then
    PG_EP=unix:$TMP/pg/.s.PGSQL.$PG_PORT PG_HOST=$TMP/pg
    MY_EP=unix:$TMP/my/sock SB_CONN="--mysql-socket=$TMP/my/sock"
else
    PG_EP=tcp://127.0.0.1:$PG_PORT PG_HOST=127.0.0.1
    MY_EP=tcp://127.0.0.1:$MY_PORT SB_CONN="--mysql-host=127.0.0.1 --mysql-port=$MY_PORT"
fi

# ---- one run: sets OPS (per second) and the client's CPU per query (us, cpu_per) --------

timed() { # OUT CMD...: the command on the client CPU, the direct child of perf stat (OUT.perf)
    out=$1
    shift
    # shellcheck disable=SC2086 # CLIENT_CPU is empty or a taskset command
    timeout $((SECS * 3 + 60)) $CLIENT_CPU perf stat -e task-clock -o "$out.perf" -- "$@" \
        >"$out" 2>"$out.err" || die "failed: $*: $(tail -n 3 "$out" "$out.err")"
}

cpu_per() { # PERFFILE QUERIES: sets CPU_US (utime+stime), USER_US, SYS_US, TASK_US per query
    USER_US=$(awk -v q="$2" '$2 == "seconds" && $3 == "user" { printf "%.3f", $1 * 1e6 / q }' "$1")
    SYS_US=$(awk -v q="$2" '$2 == "seconds" && $3 == "sys" { printf "%.3f", $1 * 1e6 / q }' "$1")
    TASK_US=$(awk -v q="$2" '$3 == "task-clock" { printf "%.3f", $1 * 1e3 / q }' "$1")
    if [ -z "$USER_US" ] || [ -z "$SYS_US" ] || [ -z "$TASK_US" ]; then
        die "no CPU times from perf stat: $(cat "$1")"
    fi
    CPU_US=$(awk -v u="$USER_US" -v s="$SYS_US" 'BEGIN { printf "%.3f", u + s }')
}

peer() { # CASE
    case $1 in
    pg-*)
        mode=simple conn=""
        [ "$1" = pg-extended ] && mode=extended
        [ "$1" = pg-connect ] && conn=-C
        # shellcheck disable=SC2086 # conn is empty or -C
        timed "$TMP/peer.out" "$PG_BIN/pgbench" -h "$PG_HOST" -p "$PG_PORT" \
            -U postgres -n -c 1 -M "$mode" $conn -f "$TMP/q.sql" -T "$SECS" postgres
        # -C: tps "including reconnection times", as hopbench's connect mode counts them
        OPS=$(sed -n 's/^tps = \([0-9.]*\) (\(without initial connection time\|including reconnection times\))$/\1/p' \
            "$TMP/peer.out")
        q=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$TMP/peer.out")
        ;;
    mysql*)
        # shellcheck disable=SC2086 # SB_CONN holds two options over TCP
        timed "$TMP/peer.out" sysbench --db-driver=mysql $SB_CONN --mysql-user=root \
            --mysql-db=sbtest --db-ps-mode=disable --threads=1 --time="$SECS" --report-interval=0 \
            "$TMP/point.lua" run
        OPS=$(sed -n 's/^ *queries: *[0-9]* *(\([0-9.]*\) per sec\.)$/\1/p' "$TMP/peer.out")
        q=$(sed -n 's/^ *queries: *\([0-9]*\) .*/\1/p' "$TMP/peer.out")
        ;;
    esac
    [ -n "$OPS" ] && [ -n "$q" ] && [ "$q" -gt 0 ] || die "no figures from the peer: $(tail -n 5 "$TMP/peer.out")"
    cpu_per "$TMP/peer.out.perf" "$q"
}

hop() { # CASE
    case $1 in
    pg-simple) set -- pg "$PG_EP" --sql "$PGQ" --wait epoll ;;
    pg-extended) set -- pg "$PG_EP" --sql "$PGQ" --extended --wait epoll ;;
    pg-connect) set -- pg "$PG_EP" --sql "$PGQ" --mode connect ;;
    mysql) set -- mysql "$MY_EP" --user root --database sbtest --sql "$MYQ" --wait epoll ;;
    pg-block) set -- pg "$PG_EP" --sql "$PGQ" --wait block ;;
    mysql-block) set -- mysql "$MY_EP" --user root --database sbtest --sql "$MYQ" --wait block ;;
    esac
    rm -f "$TMP/hb.json"
    timed "$TMP/hb.out" "$HOPBENCH" run "$@" -d "$SECS" --warmup 0 -q --json "$TMP/hb.json"
    OPS=$(json_number "$TMP/hb.json" '.runs[0].ops_per_s')
    [ "$(json_number "$TMP/hb.json" '.runs[0].errors_total')" = 0 ] || die "hopbench saw errors"
    cpu_per "$TMP/hb.out.perf" "$(json_number "$TMP/hb.json" '.requests // .runs[0].requests')"
}

floor_run() { # one round of the floor client: a row of its own, case and tool "floor"
    timed "$TMP/floor.out" "$FLOOR" client "$TRANSPORT" "$FLOOR_ADDR" 64 "$FLOOR_N" --warmup 0
    cpu_per "$TMP/floor.out.perf" "$FLOOR_N"
    OPS=$(jq -r '1e9 / .mean_ns' "$TMP/floor.out") || die "no figures from floor: $(cat "$TMP/floor.out")"
    echo "floor floor $1 $OPS $CPU_US $TASK_US $USER_US $SYS_US" >>"$TMP/rows"
    note "rep $1 floor: client $CPU_US us/round trip (task-clock $TASK_US)"
}

# ---- the reps ---------------------------------------------------------------------

: >"$TMP/rows"
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
rep=1
while [ "$rep" -le "$REPS" ]; do
    [ -z "$FLOOR" ] || floor_run "$rep"
    order=$CASES
    [ $((rep % 2)) -eq 0 ] && order=$(echo "$CASES" | tr ' ' '\n' | tac | tr '\n' ' ')
    for c in $order; do
        for tool in peer hop; do
            [ $((rep % 2)) -eq 0 ] && tool=$([ $tool = peer ] && echo hop || echo peer)
            "$tool" "$c"
            echo "$c $tool $rep $OPS $CPU_US $TASK_US $USER_US $SYS_US" >>"$TMP/rows"
            note "rep $rep $c $tool: $OPS ops/s, client $CPU_US us/query (task-clock $TASK_US)"
        done
    done
    rep=$((rep + 1))
done

echo "db_peers: $REPS reps of ${SECS} s, $TRANSPORT, PIN=$PIN, $(nproc) CPUs, $(date -u +%FT%TZ)"
echo "load average before the first run: $LOAD_START; after the last: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "per run: case tool rep ops/s client-us/query task-clock-us/query user-us/query sys-us/query"
sed 's/^/  /' "$TMP/rows"
echo "per case: median [min-max] over the reps; ratios hopbench/peer, the median of the per-rep ratios"
printf '%-12s %-20s %-20s %-18s %-18s %-18s %-18s\n' case "peer ops/s" "hopbench ops/s" \
    "ops ratio" "peer cpu us/q" "hopbench cpu us/q" "cpu ratio"
for c in $CASES; do
    awk -v c="$c" '
        function sort(a, n,   i, j, t) { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
            if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t } }
        function med(a, n) { sort(a, n); return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
        function show(a, n, f) { m = med(a, n); return sprintf(f " [" f "-" f "]", m, a[1], a[n]) }
        $1 == c { ops[$2, $3] = $4; cpu[$2, $3] = $5; task[$2, $3] = $6; if ($3 > n) n = $3 }
        END {
            for (r = 1; r <= n; r++) {
                po[r] = ops["peer", r]; ho[r] = ops["hop", r]
                pc[r] = cpu["peer", r]; hc[r] = cpu["hop", r]
                ro[r] = ops["hop", r] / ops["peer", r]; rc[r] = cpu["hop", r] / cpu["peer", r]
                rt[r] = task["hop", r] / task["peer", r]
            }
            printf "%-12s %-20s %-20s %-18s %-18s %-18s %-18s\n", c, show(po, n, "%.0f"),
                show(ho, n, "%.0f"), show(ro, n, "%.2f"), show(pc, n, "%.1f"), show(hc, n, "%.1f"),
                show(rc, n, "%.2f")
            printf "%-12s task-clock ratio (second reading) %s\n", "", show(rt, n, "%.2f")
        }' "$TMP/rows"
done
[ -n "$FLOOR" ] && awk '
    function sort(a, n,   i, j, t) { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
        if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t } }
    function show(a, n) { sort(a, n)
        return sprintf("%.2f [%.2f-%.2f]", n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2,
                       a[1], a[n]) }
    $1 == "floor" { f[$3] = $5; if ($3 > n) n = $3; next }
    $2 == "peer" { p[$1, $3] = $5; if (!($1 in seen)) { seen[$1] = 1; cases[++nc] = $1 } }
    END {
        for (r = 1; r <= n; r++) fl[r] = f[r]
        printf "floor (bench/floor client, 64 B, its own echo server): %s us/round trip\n", show(fl, n)
        for (k = 1; k <= nc; k++) {
            if (cases[k] == "pg-connect") continue # a connection per query: no round-trip floor
            for (r = 1; r <= n; r++) q[r] = f[r] / p[cases[k], r]
            printf "  floor / %s peer: %s\n", cases[k], show(q, n)
        }
    }' "$TMP/rows"
exit 0
