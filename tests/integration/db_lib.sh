# shellcheck shell=bash
# Helpers of the database tests (sourced after lib.sh, bash): Debian's PostgreSQL and
# MariaDB servers, each in a private data directory under $T, on a 127.0.0.1 port and a
# private Unix socket, started by the test and stopped by PID (their processes run as
# the servers' own users, postgres and mysql, which the Debian packages create).
#
#   pg_start PORT     sets PG_SOCK (the socket file), PG_PID; roles: postgres (trust),
#                     md5u / "secret" (MD5), scram / "pencil" (SCRAM-SHA-256);
#                     pg_stat_statements loaded
#   pg_sql SQL        runs SQL as postgres over the socket, prints the rows (psql -At)
#   pg_stop           SIGTERM (a fast shutdown) to the postmaster, bounded wait
#   my_start PORT     sets MY_SOCK, MY_PID; users: root (no password, over the socket),
#                     bench / "pw" (mysql_native_password) at localhost and 127.0.0.1
#   my_sql SQL        runs SQL as root over the socket
#   my_stop           SIGTERM to mariadbd, bounded wait

# PostgreSQL's programs: where scripts/programs.txt has initdb, as stack postgres does (Debian
# 12's PostgreSQL 15), not whichever version a search finds first
PG_BIN=$(dirname "$(program_path initdb)")

# $T must be traversable by the servers' users (the data directories are theirs alone).
db_dir() {
    chmod 711 "$T"
    mkdir -p "$T/$1"
    chown "$2" "$T/$1"
    chmod 700 "$T/$1"
}

pg_start() {
    local port=$1 i
    [ -x "$PG_BIN/initdb" ] || return 1
    db_dir pg postgres
    runuser -u postgres -- "$PG_BIN/initdb" -D "$T/pg/data" -A trust -U postgres \
        >"$T/pg.initdb" 2>&1 || return 1
    cat >>"$T/pg/data/postgresql.conf" <<EOF
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$T/pg'
shared_preload_libraries = 'pg_stat_statements'
max_connections = 200
fsync = off
EOF
    cat >"$T/pg/data/pg_hba.conf" <<EOF
local all postgres trust
local all md5u md5
local all scram scram-sha-256
host all postgres 127.0.0.1/32 trust
host all md5u 127.0.0.1/32 md5
host all scram 127.0.0.1/32 scram-sha-256
EOF
    runuser -u postgres -- "$PG_BIN/postgres" -D "$T/pg/data" >"$T/pg.log" 2>&1 &
    PG_PID=$!
    PIDS+=("$PG_PID")
    PG_SOCK=$T/pg/.s.PGSQL.$port
    for ((i = 0; i < 200; i++)); do
        [ -S "$PG_SOCK" ] && pg_sql "SELECT 1" >/dev/null 2>&1 && break
        alive "$PG_PID" || return 1
        sleep 0.05
    done
    pg_sql "CREATE EXTENSION pg_stat_statements;
            SET password_encryption = 'md5'; CREATE ROLE md5u LOGIN PASSWORD 'secret';
            SET password_encryption = 'scram-sha-256'; CREATE ROLE scram LOGIN PASSWORD 'pencil';" \
        >/dev/null
}

pg_sql() {
    runuser -u postgres -- psql -X -qAt -h "$T/pg" -p "${PG_SOCK##*.}" -U postgres -d postgres \
        -c "$1"
}

pg_stop() {
    [ -n "${PG_PID:-}" ] || return 0
    kill -TERM "$PG_PID" 2>/dev/null
    reap "$PG_PID" 20
    PG_PID=
}

my_start() {
    local port=$1 i
    command -v mariadbd >/dev/null 2>&1 || [ -x /usr/sbin/mariadbd ] || return 1
    db_dir my mysql
    mariadb-install-db --no-defaults --datadir="$T/my/data" --user=mysql \
        --auth-root-authentication-method=normal --skip-test-db >"$T/my.install" 2>&1 || return 1
    /usr/sbin/mariadbd --no-defaults --datadir="$T/my/data" --user=mysql \
        --socket="$T/my/sock" --port="$port" --bind-address=127.0.0.1 --pid-file="$T/my/pid" \
        --log-error="$T/my.log" --skip-name-resolve --innodb-buffer-pool-size=16M \
        --max-connections=300 >"$T/my.out" 2>&1 &
    MY_PID=$!
    PIDS+=("$MY_PID")
    MY_SOCK=$T/my/sock
    for ((i = 0; i < 400; i++)); do
        [ -S "$MY_SOCK" ] && my_sql "SELECT 1" >/dev/null 2>&1 && break
        alive "$MY_PID" || return 1
        sleep 0.05
    done
    my_sql "CREATE USER 'bench'@'localhost' IDENTIFIED VIA mysql_native_password USING PASSWORD('pw');
            CREATE USER 'bench'@'127.0.0.1' IDENTIFIED VIA mysql_native_password USING PASSWORD('pw');
            GRANT SELECT ON *.* TO 'bench'@'localhost'; GRANT SELECT ON *.* TO 'bench'@'127.0.0.1';"
}

my_sql() {
    mariadb --no-defaults -S "$MY_SOCK" -u root -N -B -e "$1"
}

my_stop() {
    [ -n "${MY_PID:-}" ] || return 0
    kill -TERM "$MY_PID" 2>/dev/null
    reap "$MY_PID" 30
    MY_PID=
}
