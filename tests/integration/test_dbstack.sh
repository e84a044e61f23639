#!/bin/bash
# stack postgres and stack redis-mariadb: hopbench builds Debian's PostgreSQL, MariaDB and
# redis-server in a private directory, measures them over tcp and their sockets, removes them.
#   - list and --help name them and say what they build, measure and how long it takes
#   - each server's way of authenticating its runs is said (postgres: password, in clear,
#     which the runs name with --auth-method; mariadb: mysql_native_password; redis:
#     requirepass), and its user and the file of the password made for the stack
#   - postgres --short --hold: the table has tcp and unix columns for the point select, the
#     read/write mix and the connection-per-query cell, with PostgreSQL's CPU per op (the
#     service postgres, every run); postgres runs as the user postgres, not root; the server's
#     own counters agree with the requests sent: sbtest1's index scans (one per statement)
#     are the requests of every run, its updated rows the mix's UPDATEs answered and at most
#     one in flight per connection when a run stopped (the study's 16 connections), and the
#     sessions at least the connects; the mix's
#     statements take a random id ({id:1-10000}): the rows whose k moved are many (at least
#     half of the UPDATEs, up to the 10,000 rows), their k moved by the UPDATEs in all
#   - each server's table block's readings against its runs (stack_readings.py), at the
#     study's load by default: postgres 16 connections, redis 50, mariadb 16
#   - redis-mariadb --short --hold: the same for MariaDB (user mysql; Com_update the mix's
#     UPDATEs as above, Com_select + Com_update the statements sent and the stack's two
#     readiness queries) and
#     redis-server (cmdstat_set and cmdstat_get calls), each server's CPU per op, and the
#     rows the mix updated spread over the table as for postgres
#   - another local user (nobody) gets nothing: no process of either stack is root (redis-server
#     runs as redis), each says its user and auth; PostgreSQL and MariaDB's bench over TCP
#     refuse a missing or wrong password (no anonymous account), redis-server refuses PING,
#     CONFIG SET and a wrong password, no socket is nobody's; the private directory is not
#     nobody's to list, nor the password files and redis.conf to read
#   - Ctrl-C while held: exit 0; no process, cgroup or file of either stack is left; Ctrl-C
#     while PostgreSQL's data directory is being made: exit 130, nothing left
# shellcheck disable=SC2016 # jq programs in single quotes
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/stack_lib.sh
. "$(dirname "$0")/stack_lib.sh"

[ "$(id -u)" = 0 ] || {
    ok "database stacks # SKIP needs root (cgroups; the servers run as their own users)"
    done_testing
}
need redis-server redis-cli mariadbd mariadb-install-db mariadb initdb postgres psql runuser setpriv

expect_rc "stack list: exit 0" 0 list stack list
check "stack list: names postgres and redis-mariadb" \
    bash -c "grep -q '^  postgres ' '$T/list.out' && grep -q '^  redis-mariadb ' '$T/list.out'"
for s in postgres redis-mariadb; do
    expect_rc "stack $s --help: exit 0" 0 "help-$s" stack "$s" --help
    check "stack $s --help: what it builds, measures, how long it takes" \
        bash -c "grep -q '^Builds: ' '$T/help-$s.out' && grep -q '^Measures: ' '$T/help-$s.out' &&
                 grep -q '^Takes: ' '$T/help-$s.out'"
done

# hold NAME STACK [ARGS...] : starts STACK --short --hold ARGS with its --jsonl; returns 1 unless it
# holds.
hold() {
    spawn "$1" stack "$2" --short --hold -q --jsonl "$T/$1.jsonl" "${@:3}"
    HELD=$SPAWNED
    if ! wait_line "$T/$1.out" '^holding: ' 100 "$HELD"; then
        not_ok "$1: measured and holding" "stdout: $(tail -c 600 "$T/$1.out" | tr '\n' '|')" \
            "stderr: $(tail -c 400 "$T/$1.err" | tr '\n' '|')"
        kill -INT "$HELD" 2>/dev/null
        reap "$HELD" 30
        return 1
    fi
    ok "$1: measured and holding"
}

# sock NAME SVC / pid NAME SVC : the service's socket and pid from the stack's lines.
sock() { sed -n "s|^$2: .* and unix:\(/.*\)\$|\1|p" "$T/$1.out"; }
pid() { sed -n "s|^$2: [a-z-]* pid \([0-9]*\) .*|\1|p" "$T/$1.out"; }
refused() { ! "$@" >/dev/null 2>&1; }
port() { sed -n "s|^$2: .* on tcp://127.0.0.1:\([0-9]*\) .*|\1|p" "$T/$1.out"; }

# label_sum NAME LABEL JQ : the sum over the runs labelled LABEL (both arms) of a figure.
label_sum() {
    jq -s --arg l "$2" "[.[] | select(.record == \"run\" and (.label | startswith(\$l + \".\"))) | $3] | add // 0" \
        "$T/$1.jsonl"
}

# updates_within NAME LABEL GOT WHAT : GOT, the server's count of the UPDATEs the runs of LABEL
# sent, is at least those answered (replies_by_kind.sql2) and at most one more per connection of
# each run: at the study's 16 connections each may have had one in flight when its run stopped
# (sent, executed by the server, never answered), so the exact count is no longer known.
updates_within() {
    local range
    range=$(jq -rs --arg l "$2" '[.[] | select(.record == "run" and (.label | startswith($l + ".")))]
        | "\(map(.replies_by_kind.sql2) | add) \(map(.replies_by_kind.sql2 + .connections) | add)"' \
        "$T/$1.jsonl")
    check "$1: $4 ($3) = the UPDATEs the mix's runs sent: those answered and at most one in flight per connection ($range)" \
        test "$3" -ge "${range% *}" -a "$3" -le "${range#* }"
}

# spread NAME UPDATES "ROWS MOVED" : the mix's UPDATEs (k = k + 1 of a random id; k starts as
# id % 1000) touched many rows: ROWS (those whose k moved) at least half of the UPDATEs, up to
# the table's 10,000 (one row, as a fixed id would, fails), and MOVED (the sum of k's moves)
# is every UPDATE.
spread() {
    local rows=${3% *} moved=${3#* } want=$(($2 < 10000 ? $2 / 2 : 5000))
    check "$1: the mix's $2 UPDATEs touched $rows rows (>= $want), k moved by $moved in all" \
        test "$2" -ge 10 -a "$rows" -ge "$want" -a "$moved" = "$2"
}
# table_has NAME CELL SVC : the table's block of CELL has tcp and unix columns and a CPU row
# for SVC with two figures.
table_has() {
    local block
    block=$(sed -n "/^$2  *tcp  *unix /,/^\$/p" "$T/$1.out")
    check "$1: the table's '$2' has tcp and unix columns and $3's CPU per op" \
        grep -Eq "^  CPU µs/req $3 +[0-9.,]+ +[0-9.,]+ " <<<"$block"
}

# services NAME LABEL SVC : every run of LABEL measured the one service SVC, with CPU per op.
services() {
    check "$1: every '$2' run measured $3's CPU per op (its cgroup)" jtrue -s --arg l "$2" \
        --arg s "$3" '[.[] | select(.record == "run" and (.label | startswith($l + ".")))]
        | length == 4 and all(.[]; .valid and .errors_total == 0
            and (.observed.services | length == 1 and .[0].name == $s
                 and .[0].cpu_ns_per_op > 0))' "$T/$1.jsonl"
}

# runs_as NAME SVC USER : the service's process runs as USER.
runs_as() {
    local p uid
    p=$(pid "$1" "$2")
    uid=$(awk '/^Uid:/ { print $2 }' "/proc/$p/status" 2>/dev/null)
    check_eq "$1: $2 (pid $p) runs as the user $3, not root" "$(id -u "$3")" "$uid"
}

# release NAME : Ctrl-C while held: exit 0, nothing left.
release() {
    kill -INT "$HELD"
    reap "$HELD" 40
    check_eq "$1: Ctrl-C while held: exit 0" 0 "$RC"
    # its cgroups are removed only once empty: no server process (backends included) is left
    stack_nothing_left "$1" "$T/$1.out"
}

# --- Ctrl-C while initdb runs: exit 130, nothing left (initdb's processes included) ----------

spawn early stack postgres --short -q
EARLY=$SPAWNED
wait_line "$T/early.out" '^hopbench stack postgres: directory ' 20 "$EARLY"
kill -INT "$EARLY"
reap "$EARLY" 30
check "early: Ctrl-C as the database is made: exit 130 (or 0 if it was already done)" \
    test "$RC" = 130 -o "$RC" = 0
stack_nothing_left "early" "$T/early.out"

# --- postgres -------------------------------------------------------------------------------

# -d 1: a connection per query forks a backend; on a loaded box (load 12 on 2 CPUs) a connect
# took 140-220 ms and a 0.3 s run once completed none (rightly invalid: exit 2)
if hold pg postgres -d 1; then
    PGSOCK=$(sock pg postgres)
    PGPW=$(cat "$(dirname "$PGSOCK")/pw")
    pgq() {
        PGPASSWORD=$PGPW psql -X -qAt -h "$(dirname "$PGSOCK")" -p "${PGSOCK##*.}" -U postgres \
            -d postgres -c "$1"
    }
    runs_as pg postgres postgres
    # the way PostgreSQL asks for the password (in clear) is said, and named by each run
    check "pg: the stack says how PostgreSQL authenticates its runs" grep -q \
        '^postgres: authentication password: the password in clear on both transports, to the stack.s own server (the runs name it: --auth-method password)$' \
        "$T/pg.out"
    check "pg: the stack says its user and its password's file" grep -q \
        "^postgres: user postgres; a password made for the stack in $(dirname "$PGSOCK")/pw (0600, in a 0700 directory of postgres's)" \
        "$T/pg.out"
    check_eq "pg: no process of the stack runs as root" "" \
        "$(stack_root_procs "$T/pg.out" "" | tr '\n' '|')"
    private_refused pg "$(dirname "$(dirname "$PGSOCK")")" "$(dirname "$PGSOCK")/pw"
    # a password made for the stack: without it no login, over TCP or the socket
    check "pg: its password file is 0600, the server user's" \
        test "$(stat -c '%a %U' "$(dirname "$PGSOCK")/pw")" = "600 postgres"
    check "pg: no login over TCP without the password" refused env -u PGPASSWORD psql -X -w \
        -h 127.0.0.1 -p "$(port pg postgres)" -U postgres -d postgres -c 'SELECT 1'
    check "pg: nobody's login over TCP with a wrong password is refused" refused as_nobody \
        env PGPASSWORD=wrong psql -X -w -h 127.0.0.1 -p "$(port pg postgres)" -U postgres \
        -d postgres -c 'SELECT 1'
    check "pg: the password logs in over TCP" env PGPASSWORD="$PGPW" psql -X -w -qAt \
        -h 127.0.0.1 -p "$(port pg postgres)" -U postgres -d postgres -c 'SELECT 1'
    check "pg: the password is in no evidence (the runs were given its file)" \
        refused grep -qF "$PGPW" "$T/pg.jsonl"
    OUT=$T/pg.out
    k=0
    for cell in "point select" "read-write mix" "point select connect"; do
        table_has pg "$cell" postgres
        services pg "${cell// /-}" postgres
        k=$((k + 1))
        stack_readings pg "$cell" "$k" "$T/pg.jsonl"
    done
    # sysbench's 16 threads by default
    check "pg: the study's 16 connections in every run" \
        jtrue -s '[.[] | select(.record == "run") | .connections] | unique == [16]' "$T/pg.jsonl"
    sent=$(jq -s '[.[] | select(.record == "run") | .requests] | add' "$T/pg.jsonl")
    check_eq "pg: sbtest1's index scans = the statements every run sent" "$sent" \
        "$(pgq "SELECT idx_scan FROM pg_stat_user_tables WHERE relname = 'sbtest1'")"
    upd=$(pgq "SELECT n_tup_upd FROM pg_stat_user_tables WHERE relname = 'sbtest1'")
    updates_within pg read-write-mix "$upd" "sbtest1's updated rows"
    spread pg "$upd" "$(pgq "SELECT count(*) || ' ' ||
        coalesce(sum(k - id % 1000), 0) FROM sbtest1 WHERE k <> id % 1000")"
    check "pg: the mix's replies are counted by statement (sql1 the selects, sql2 the updates)" \
        jtrue -s '[.[] | select(.record == "run" and (.label | startswith("read-write-mix.")))]
        | all(.[]; .replies_by_kind.sql1 > 0 and .replies_by_kind.sql2 > 0
              and .replies_by_kind.sql1 >= 3 * .replies_by_kind.sql2)' "$T/pg.jsonl"
    conns=$(label_sum pg point-select-connect .connects)
    sessions=$(pgq "SELECT sessions FROM pg_stat_database WHERE datname = 'postgres'")
    check "pg: a session per query in connect mode ($sessions sessions for $conns connects)" \
        test "$conns" -gt 0 -a "$sessions" -ge "$conns"
    release pg
fi

# --- redis-mariadb --------------------------------------------------------------------------

if hold rm redis-mariadb; then
    MYSOCK=$(sock rm mariadb)
    status() { mariadb --no-defaults -S "$MYSOCK" -u root -N -B -e "SHOW GLOBAL STATUS LIKE '$1'" | awk '{ print $2 }'; }
    runs_as rm mariadb mysql
    runs_as rm redis redis
    check_eq "rm: no process of the stack runs as root" "" \
        "$(stack_root_procs "$T/rm.out" "" | tr '\n' '|')"
    MYPW=$(dirname "$MYSOCK")/pw
    RDSOCK=$(sock rm redis)
    for line in "mariadb: authentication mysql_native_password (user bench; root, which has no password, over the socket only)$" \
        "mariadb: user mysql; a password made for the stack in $MYPW (0600, in a 0700 directory of mysql's)" \
        "redis: authentication requirepass " \
        "redis: user redis; a password made for the stack in $(dirname "$RDSOCK")/pw (0600, in a 0700 directory of redis's)"; do
        check "rm: the stack says: ${line:0:60}" grep -q "^$line" "$T/rm.out"
    done
    private_refused rm "$(dirname "$(dirname "$MYSOCK")")" "$MYPW" "$(dirname "$RDSOCK")/pw" \
        "$(dirname "$RDSOCK")/redis.conf"
    redis_attack rm "$(port rm redis)" "$RDSOCK" "$(dirname "$RDSOCK")/pw"
    OUT=$T/rm.out
    k=0
    for cell in "redis set pipeline 16:redis" "redis get pipeline 16:redis" \
        "mariadb point select:mariadb" "mariadb read-write mix:mariadb"; do
        table_has rm "${cell%:*}" "${cell#*:}"
        label=${cell%:*}
        services rm "${label// /-}" "${cell#*:}"
        k=$((k + 1))
        stack_readings rm "${cell%:*}" "$k" "$T/rm.jsonl"
    done
    # the study's load: redis-benchmark's 50 clients, sysbench's 16 threads
    check "rm: redis at 50 connections, mariadb at 16, as the study" jtrue -s '
        [.[] | select(.record == "run")] |
        (map(select(.proto == "redis") | .connections) | unique == [50]) and
        (map(select(.proto == "mysql") | .connections) | unique == [16])' "$T/rm.jsonl"
    upd=$(status Com_update)
    updates_within rm mariadb-read-write-mix "$upd" "mariadb's Com_update"
    sent=$(($(label_sum rm mariadb-point-select .requests) + $(label_sum rm mariadb-read-write-mix .requests)))
    # the stack's readiness queries: SELECT 1 as root over the socket, as bench over tcp
    check_eq "mariadb: Com_select + Com_update = the statements sent and the stack's 2 readiness queries" \
        $((sent + 2)) $(($(status Com_select) + upd))
    # after Com_select was read: this SELECT is one more
    spread mariadb "$upd" "$(mariadb --no-defaults -S "$MYSOCK" -u root -N -B -e "SELECT
        COUNT(*), COALESCE(SUM(k - id % 1000), 0) FROM sbtest.sbtest1 WHERE k <> id % 1000" |
        tr '\t' ' ')"
    # bench over TCP needs the password made for the stack; no other account logs in over TCP
    # (after Com_select was read: these are SELECTs too)
    mytcp=(timeout 10 mariadb --no-defaults -h 127.0.0.1 -P "$(port rm mariadb)" -N -B)
    check "mariadb: nobody's login as bench over TCP without the password is refused" \
        refused as_nobody "${mytcp[@]}" -u bench -e "UPDATE sbtest.sbtest1 SET k = 0 WHERE id = 1"
    check "mariadb: nobody's login as bench with a wrong password is refused" \
        refused as_nobody "${mytcp[@]}" -u bench -pwrong -e 'SELECT 1'
    check "mariadb: no anonymous login over TCP" refused as_nobody "${mytcp[@]}" -u nobody \
        -e 'SELECT 1'
    check "mariadb: bench logs in over TCP with the password (mysql_native_password)" \
        "${mytcp[@]}" -u bench "-p$(cat "$MYPW")" -e 'SELECT 1' sbtest
    check_eq "mariadb: bench's accounts are mysql_native_password ones" \
        "127.0.0.1 mysql_native_password|localhost mysql_native_password|" \
        "$(mariadb --no-defaults -S "$MYSOCK" -u root -N -B -e "SELECT host, plugin FROM
            mysql.user WHERE user = 'bench' ORDER BY host" | tr '\t\n' ' |')"
    check_eq "mariadb: every account but bench@127.0.0.1 is socket-only (localhost), none anonymous" \
        "bench 127.0.0.1|" "$(mariadb --no-defaults -S "$MYSOCK" -u root -N -B -e "SELECT user,
            host FROM mysql.user WHERE host <> 'localhost' OR user = ''" | tr '\t\n' ' |')"
    # root has no password: it logs in over the socket (0700 directory) only, never over TCP
    check "mariadb: root cannot log in over TCP (127.0.0.1)" refused mariadb --no-defaults \
        -h 127.0.0.1 -P "$(port rm mariadb)" -u root -N -B -e 'SELECT 1'
    check "mariadb: root logs in over the socket" mariadb --no-defaults -S "$MYSOCK" -u root \
        -N -B -e 'SELECT 1'
    INFO=$(REDISCLI_AUTH=$(cat "$(dirname "$RDSOCK")/pw") redis-cli -s "$RDSOCK" INFO commandstats |
        tr -d '\r')
    calls() { printf '%s\n' "$INFO" | sed -n "s/^cmdstat_$1:calls=\([0-9]*\),.*/\1/p"; }
    check_eq "redis: SET requests sent = cmdstat_set calls" \
        "$(label_sum rm redis-set-pipeline-16 .requests)" "$(calls set)"
    check_eq "redis: GET requests sent = cmdstat_get calls" \
        "$(label_sum rm redis-get-pipeline-16 .requests)" "$(calls get)"
    release rm
fi

done_testing
