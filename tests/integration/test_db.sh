#!/bin/bash
# pg and mysql against Debian's PostgreSQL and MariaDB (db_lib.sh: private data
# directories, 127.0.0.1 and a private socket, stopped by PID): over TCP and the Unix
# socket, kept connections and a connection per query, every way of logging in the
# servers here offer (trust, MD5 with --auth-method md5 and SCRAM-SHA-256;
# mysql_native_password; MD5 without --auth-method md5 refused, exit 3), a wrong
# password refused as an error reply, --expect-body, pipelined extended queries; each
# count equals the server's own (pg_stat_statements' calls of the query; MariaDB's
# Com_select and Connections), and no password reaches the evidence; a
# --password-file others may read is refused.
# shellcheck disable=SC2016 # $vars in single quotes are jq variables
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/db_lib.sh
. "$(dirname "$0")/db_lib.sh"

[ "$(id -u)" = 0 ] || {
    ok "databases # SKIP needs root (the servers run as their own users)"
    done_testing
}
need initdb postgres psql mariadbd mariadb-install-db mariadb runuser

# sum FILE JQ : the sum over the runs of a figure.
sum() { jq "[.runs[] | $2] | add" "$1"; }

# runs_clean NAME FILE : every run valid, no error.
runs_clean() {
    jcheck "$1: every run valid, no error" "$2" 'all(.runs[]; .valid and .errors_total == 0 and .ops > 0)'
}

free_port
PG_PORT=$PORT
if ! pg_start "$PG_PORT"; then
    not_ok "PostgreSQL starts" "$(tail -n 5 "$T/pg.log" "$T/pg.initdb" 2>/dev/null | tr '\n' '|')"
else
    ok "PostgreSQL starts (pid $PG_PID, port $PG_PORT)"
    pg_tcp=tcp://127.0.0.1:$PG_PORT
    pg_unix=unix:$PG_SOCK
    Q="SELECT 42 AS hopbench_probe"
    calls() {
        pg_sql "SELECT coalesce(sum(calls), 0) FROM pg_stat_statements WHERE query LIKE '%hopbench_probe%'"
    }

    pg_sql "SELECT pg_stat_statements_reset()" >/dev/null
    expect_rc "pg reuse, trust, tcp and unix: exit 0" 0 pg1 run pg "$pg_tcp" "$pg_unix" \
        --sql "$Q" --expect-body 42 -n 2000 --warmup 0 --json "$T/pg1.json"
    runs_clean "pg reuse" "$T/pg1.json"
    check_eq "pg reuse: the server ran the query as often as hopbench sent it" \
        "$(sum "$T/pg1.json" .requests)" "$(calls)"

    pg_sql "SELECT pg_stat_statements_reset()" >/dev/null
    s0=$(pg_sql "SELECT sessions FROM pg_stat_database WHERE datname = 'postgres'")
    expect_rc "pg connect mode (a backend per query): exit 0" 0 pg2 run pg "$pg_tcp" "$pg_unix" \
        --sql "$Q" --mode connect -n 200 --warmup 0 --json "$T/pg2.json"
    runs_clean "pg connect" "$T/pg2.json"
    check_eq "pg connect: one query per session, as the server counts them" \
        "$(sum "$T/pg2.json" .requests)" "$(calls)"
    sleep 1.2 # backends report their sessions as they exit
    s1=$(pg_sql "SELECT sessions FROM pg_stat_database WHERE datname = 'postgres'")
    check "pg connect: the server counted at least one session per query ($((s1 - s0)) for $(sum "$T/pg2.json" .connects))" \
        test $((s1 - s0)) -ge "$(sum "$T/pg2.json" .connects)"

    for login in "md5u secret md5" "scram pencil scram-sha-256"; do
        set -- $login
        expect_rc "pg $1: the right password logs in, exit 0" 0 "pg_$1" run pg "$pg_tcp" "$pg_unix" \
            --user "$1" --password "$2" --auth-method "$3" --database postgres --mode connect \
            -n 50 --warmup 0 --json "$T/pg_$1.json"
        runs_clean "pg $1" "$T/pg_$1.json"
        check "pg $1: the password is not in the evidence" bash -c "! grep -q '$2' '$T/pg_$1.json'"
        expect_rc "pg $1: a wrong password, exit 2" 2 "pg_$1_bad" run pg "$pg_tcp" --user "$1" \
            --password wrong --auth-method "$3" --database postgres -d 0.3 --warmup 0 \
            --json "$T/pg_$1_bad.json"
        jcheck "pg $1: a wrong password is refused (error replies, no op)" "$T/pg_$1_bad.json" \
            '.runs[0].ops == 0 and .runs[0].errors.error_reply > 0'
    done
    # MD5 is not taken unless named: over either transport, exit 3 before any run
    for ep in "$pg_tcp" "$pg_unix"; do
        expect_rc "pg md5u at ${ep%%:*} without --auth-method md5: exit 3" 3 pg_md5_refused run pg \
            "$ep" --user md5u --password secret --database postgres -n 10 --warmup 0 \
            --json "$T/pg_md5_refused.json"
        one_line "pg md5u at ${ep%%:*} without --auth-method md5: one line" "$T/pg_md5_refused.err" \
            'refused to log in: the server asked for an MD5 hash of the password.*--auth-method md5'
    done
    # while it runs, other users' ps sees no password: the argument memory was overwritten
    spawn pwps run pg "$pg_unix" --user scram --password pencil --database postgres -d 2 \
        --warmup 0 --json "$T/pwps.json"
    sleep 0.5 # well into its 2-s run
    cmdline=$(tr '\0' ' ' <"/proc/$SPAWNED/cmdline" 2>/dev/null)
    check "pg: a running hopbench's command line hides the password ($cmdline)" \
        bash -c "[[ '$cmdline' == *'--password xxxxxx'* ]]"
    reap "$SPAWNED" 10
    check_eq "pg: the run with the hidden password still logged in (exit 0)" 0 "$RC"
    jcheck "pg: its evidence's command line says (hidden)" "$T/pwps.json" \
        '.argv | index("(hidden)") != null and index("pencil") == null'
    printf 'pencil\n' >"$T/pw"
    chmod 644 "$T/pw"
    expect_rc "pg --password-file others may read: exit 64" 64 pg_pwopen run pg "$pg_unix" \
        --user scram --password-file "$T/pw" --database postgres -n 20 --warmup 0
    one_line "pg --password-file others may read: one line saying why" "$T/pg_pwopen.err" \
        "^hopbench: --password-file: $T/pw may be read or written by its group or others \(mode 0644\): chmod 600 it"
    chmod 600 "$T/pw"
    expect_rc "pg --password-file: exit 0" 0 pg_pwfile run pg "$pg_unix" --user scram \
        --password-file "$T/pw" --database postgres -n 20 --warmup 0 --json "$T/pg_pwfile.json"
    HOPBENCH_PASSWORD=pencil expect_rc "pg HOPBENCH_PASSWORD: exit 0" 0 pg_pwenv run pg "$pg_unix" \
        --user scram --database postgres -n 20 --warmup 0 --json "$T/pg_pwenv.json"

    pg_sql "SELECT pg_stat_statements_reset()" >/dev/null
    expect_rc "pg extended, --pipeline 8: exit 0" 0 pg3 run pg "$pg_tcp" "$pg_unix" --extended \
        --pipeline 8 -c 2 --sql "$Q" --expect-body 42 -n 4000 --warmup 0 --json "$T/pg3.json"
    runs_clean "pg extended pipelined" "$T/pg3.json"
    check_eq "pg extended: the server ran every pipelined query" \
        "$(sum "$T/pg3.json" .requests)" "$(calls)"

    expect_rc "pg --expect-body that differs: exit 2" 2 pg4 run pg "$pg_unix" --sql "$Q" \
        --expect-body 43 -n 10 --warmup 0 --json "$T/pg4.json"
    jcheck "pg --expect-body that differs: counted as body errors" "$T/pg4.json" \
        '.runs[0].errors.body > 0'
    expect_rc "pg a query the server refuses: exit 2" 2 pg5 run pg "$pg_unix" --sql "SELEC 1" \
        -n 10 --warmup 0 --json "$T/pg5.json"
    jcheck "pg a refused query: error replies, the connection goes on" "$T/pg5.json" \
        '.runs[0].errors.error_reply == 10 and .runs[0].connects <= 1'
    pg_stop
    check "PostgreSQL stopped" bash -c "! kill -0 $PG_PID 2>/dev/null"
fi

free_port
MY_PORT=$PORT
if ! my_start "$MY_PORT"; then
    not_ok "MariaDB starts" "$(tail -n 5 "$T/my.log" "$T/my.install" 2>/dev/null | tr '\n' '|')"
else
    ok "MariaDB starts (pid $MY_PID, port $MY_PORT)"
    my_tcp=tcp://127.0.0.1:$MY_PORT
    my_unix=unix:$MY_SOCK
    status() { my_sql "SHOW GLOBAL STATUS LIKE '$1'" | awk '{ print $2 }'; }

    c0=$(status Com_select)
    expect_rc "mysql reuse, tcp and unix: exit 0" 0 my1 run mysql "$my_tcp" "$my_unix" --user bench \
        --password pw --expect-body 1 -n 2000 --warmup 0 --json "$T/my1.json"
    runs_clean "mysql reuse" "$T/my1.json"
    c1=$(status Com_select)
    # the status query itself is no SELECT; my_sql's own connection adds none
    check_eq "mysql reuse: Com_select moved by the queries hopbench sent" \
        "$(sum "$T/my1.json" .requests)" $((c1 - c0))

    n0=$(status Connections)
    expect_rc "mysql connect mode: exit 0" 0 my2 run mysql "$my_tcp" "$my_unix" --user bench \
        --password=pw --mode connect -n 300 --warmup 0 --json "$T/my2.json"
    runs_clean "mysql connect" "$T/my2.json"
    n1=$(status Connections)
    # Connections also counts the probe each endpoint gets first and the status query's own
    check "mysql connect: the server saw a connection per query ($((n1 - n0)) for $(sum "$T/my2.json" .connects))" \
        test $((n1 - n0)) -ge "$(sum "$T/my2.json" .connects)" -a $((n1 - n0)) -le $(($(sum "$T/my2.json" .connects) + 4))
    check "mysql: the password is not in the evidence" bash -c "! grep -q '\"pw\"' '$T/my2.json'"
    jcheck "mysql: --password=VAL is shown as --password=(hidden) in the evidence" "$T/my2.json" \
        'any(.argv[]; . == "--password=(hidden)") and all(.argv[]; endswith("=pw") | not)'

    expect_rc "mysql a wrong password: exit 2" 2 my3 run mysql "$my_tcp" --user bench \
        --password wrong -d 0.3 --warmup 0 --json "$T/my3.json"
    jcheck "mysql a wrong password: error replies, no op" "$T/my3.json" \
        '.runs[0].ops == 0 and .runs[0].errors.error_reply > 0'
    expect_rc "mysql --ping: exit 0" 0 my4 run mysql "$my_unix" --user bench --password pw --ping \
        -n 100 --warmup 0 --json "$T/my4.json"
    runs_clean "mysql --ping" "$T/my4.json"
    my_stop
    check "MariaDB stopped" bash -c "! kill -0 $MY_PID 2>/dev/null"
fi

done_testing
