# Private instances of the real servers from Debian 12 (nginx, php8.2-fpm, redis-server),
# sourced after lib.sh by test_real.sh and test_invariants.sh. Each instance has its own
# config in $T (templates beside this file), free high ports on 127.0.0.1, Unix sockets
# in $T; it runs in the foreground with its PID in PIDS and is stopped by PID (stop_real).
# No system service is used or touched. Sets NG_PORT, FPM_PORT, RD_PORT, NG_PID, FPM_PID,
# RD_PID, FPM_TCP, FPM_UDS, NG_LOG and the helpers below; a missing tool or a server
# that does not come up fails the script (done_testing).
# shellcheck disable=SC2317 # readiness probes are called through wait_ready and check
# shellcheck disable=SC2034 # NG_LOG, FPM_TCP, ... are read by the scripts that source this
# shellcheck shell=bash

REAL=$(cd "$(dirname "$0")/real" && pwd)

# --- tools: installed by scripts/deps.sh test; missing means fail, not skip (need) ----------

need nginx php-fpm8.2 redis-server redis-cli cgi-fcgi curl ps

# clean: no error of any kind (the kinds are whatever the build reports).
CLEAN='def clean: .errors_total == 0 and all(.errors[]; . == 0);'
# xcheck NAME FILE EXPR : rcheck with `clean` defined too.
xcheck() { jcheck "$1" "$2" "$3" "$JQ_DEFS $CLEAN"; }

# jget FILE EXPR : one value from a JSON file ("" when unreadable).
jget() { jq -r "$2" "$1" 2>/dev/null; }

# nlines FILE : its line count, 0 when it does not exist.
nlines() {
    if [ -f "$1" ]; then wc -l <"$1"; else echo 0; fi
}

# ngrep FILE FIXED : lines of FILE containing FIXED, 0 when none or no file.
ngrep() { grep -cF -- "$2" "$1" 2>/dev/null || true; }

# settle WANT CMD... : servers log a request after its reply went out, so a count may
# lag hopbench's exit a little. Runs CMD (it prints a number) every 50 ms for up to
# 3 s until it reaches WANT, then once more after 200 ms (to catch an overshoot);
# prints the last value.
settle() {
    local want=$1 got i
    shift
    for ((i = 0; i < 60; i++)); do
        got=$("$@")
        [ "${got:-0}" -ge "$want" ] 2>/dev/null && break
        sleep 0.05
    done
    sleep 0.2
    "$@"
}

# render TEMPLATE DEST PORT : the template with @T@ and @PORT@ filled in.
render() {
    sed -e "s|@T@|$T|g" -e "s|@PORT@|$3|g" "$REAL/$1" >"$2"
}

# wait_ready LABEL NAME PID CMD... : polls CMD (quietly) every 100 ms for up to 10 s
# while PID (server NAME, output $T/NAME.err, log LOGS[NAME]) lives. Fails loudly
# (not_ok, with the server's logs) and returns 1 otherwise.
wait_ready() {
    local label=$1 name=$2 pid=$3 i
    shift 3
    for ((i = 0; i < 100; i++)); do
        if "$@" >/dev/null 2>&1; then
            ok "$label: ready"
            return 0
        fi
        alive "$pid" || break
        sleep 0.1
    done
    not_ok "$label: ready" "not ready after 10 s (alive: $(alive "$pid" && echo yes || echo no));" \
        "stderr: $(tail -c 400 "$T/$name.err" 2>/dev/null | tr '\n' '|')" \
        "log: $(tail -c 400 "${LOGS[$name]:-/dev/null}" 2>/dev/null | tr '\n' '|')"
    return 1
}
declare -A LOGS

# stop_real NAME PID : SIGTERM (by PID); checks it exits 0 within 3 s and that the
# processes it had forked (workers) are gone too.
stop_real() {
    local name=$1 pid=$2 kids k p left=
    kids=$(ps -o pid= --ppid "$pid" 2>/dev/null)
    stop_pid "$pid"
    check_eq "$name: exits 0 on SIGTERM" 0 "$RC"
    for ((k = 0; k < 40; k++)); do
        left=
        for p in $kids; do alive "$p" && left="$left $p"; done
        [ -z "$left" ] && break
        sleep 0.05
    done
    if [ -z "$left" ]; then
        ok "$name: its workers are gone"
    else
        not_ok "$name: its workers are gone" "still alive:$left"
        for p in $left; do kill -KILL "$p" 2>/dev/null; done
    fi
}

# --- the private instances ---------------------------------------------------------

mkdir -p "$T/nginx/tmp" "$T/fpm" "$T/redis" "$T/www/static"
printf 'static file\n' >"$T/www/static/hello.txt"
cp "$REAL/bench.php" "$REAL/params.php" "$T/www/"

free_port
NG_PORT=$PORT
free_port
FPM_PORT=$PORT
free_port
RD_PORT=$PORT

# php-fpm first: nginx's /fpm location passes to its Unix pool.
render php-fpm.conf "$T/fpm/php-fpm.conf" "$FPM_PORT"
LOGS[fpm]=$T/fpm/error.log
spawn_cmd fpm php-fpm8.2 -n -F -R -p "$T/fpm" -y "$T/fpm/php-fpm.conf"
FPM_PID=$SPAWNED

render nginx.conf "$T/nginx/nginx.conf" "$NG_PORT"
LOGS[nginx]=$T/nginx/error.log
spawn_cmd nginx nginx -p "$T/nginx/" -e "$T/nginx/error.log" -c "$T/nginx/nginx.conf"
NG_PID=$SPAWNED

LOGS[redis]=$T/redis.log
spawn_cmd redis redis-server --port "$RD_PORT" --bind 127.0.0.1 --unixsocket "$T/redis.sock" \
    --unixsocketperm 700 --save '' --appendonly no --daemonize no --dir "$T/redis" \
    --logfile "$T/redis.log"
RD_PID=$SPAWNED

FPM_TCP=127.0.0.1:$FPM_PORT
FPM_UDS=$T/fpm.sock

# fcgi_get ADDR SCRIPT_NAME [SCRIPT_FILENAME] : a GET through cgi-fcgi (libfcgi);
# prints the CGI headers and body. ADDR is HOST:PORT or a socket path.
fcgi_get() {
    SCRIPT_NAME=$2 SCRIPT_FILENAME=${3:-$2} REQUEST_URI=$2 REQUEST_METHOD=GET QUERY_STRING='' \
        DOCUMENT_ROOT=$T/www timeout 5 cgi-fcgi -bind -connect "$1"
}
fpm_ping() { fcgi_get "$1" /ping | tr -d '\r' | tail -n 1 | grep -qx pong; }

# fpm_accepted ADDR : the pool's "accepted conn" from its status page.
fpm_accepted() { fcgi_get "$1" /status | sed -n 's/^accepted conn: *\([0-9][0-9]*\).*/\1/p'; }

rd_cli() {
    if [ "$1" = unix ]; then
        shift
        timeout 5 redis-cli -s "$T/redis.sock" "$@"
    else
        shift
        timeout 5 redis-cli -h 127.0.0.1 -p "$RD_PORT" "$@"
    fi
}
rd_ping() { [ "$(rd_cli "$1" ping)" = PONG ]; }
# rd_total TR : INFO's total_commands_processed (the INFO itself is counted after it).
rd_total() { rd_cli "$1" info stats | tr -d '\r' | sed -n 's/^total_commands_processed://p'; }

ng_ok_tcp() { [ "$(curl -sS --max-time 2 "http://127.0.0.1:$NG_PORT/")" = hello ]; }
ng_ok_uds() { [ "$(curl -sS --max-time 2 --unix-socket "$T/nginx.sock" http://localhost/)" = hello ]; }

up=1
wait_ready "php-fpm tcp (cgi-fcgi /ping)" fpm "$FPM_PID" fpm_ping "$FPM_TCP" || up=0
wait_ready "php-fpm unix (cgi-fcgi /ping)" fpm "$FPM_PID" fpm_ping "$FPM_UDS" || up=0
wait_ready "nginx tcp (curl)" nginx "$NG_PID" ng_ok_tcp || up=0
wait_ready "nginx unix (curl)" nginx "$NG_PID" ng_ok_uds || up=0
wait_ready "redis tcp (redis-cli ping)" redis "$RD_PID" rd_ping tcp || up=0
wait_ready "redis unix (redis-cli ping)" redis "$RD_PID" rd_ping unix || up=0
[ $up = 1 ] || done_testing

# The servers themselves, before hopbench is trusted with them.
check_eq "nginx: curl gets the static file" "static file" \
    "$(curl -sS --max-time 2 "http://127.0.0.1:$NG_PORT/static/hello.txt")"
check_eq "nginx: curl gets php-fpm's bench.php through /fpm" bench \
    "$(curl -sS --max-time 2 --unix-socket "$T/nginx.sock" http://localhost/fpm)"
check_eq "php-fpm: cgi-fcgi runs bench.php" bench \
    "$(fcgi_get "$FPM_UDS" /bench.php "$T/www/bench.php" | tr -d '\r' | tail -n 1)"
fpm_pool_is() { fcgi_get "$1" /status | tr -d '\r' | grep -Eq "^pool: +$2\$"; }
check "php-fpm: tcp port serves pool tcp's status page" fpm_pool_is "$FPM_TCP" tcp
check "php-fpm: unix socket serves pool unix's status page" fpm_pool_is "$FPM_UDS" unix

NG_LOG=$T/nginx/access.log
ep_of() { # ep_of TR TCP-EP UNIX-EP
    if [ "$1" = tcp ]; then echo "$2"; else echo "$3"; fi
}

# --- php-fpm's counters ----------------------------------------------------------------

# What php-fpm's "accepted conn" counts (measured with libfcgi and a raw client on
# php-fpm 8.2): +1 whenever a worker starts reading a request on a connection, so
#   every request, +1 per connection that ends without one: hopbench's pre-flight
#   connect (one per endpoint and run), and in reuse mode (FCGI_KEEP_CONN) each kept
#   connection's close; +1 for the status request itself.
# fpm_expect JSON MODE : what the run added to "accepted conn".
fpm_expect() {
    if [ "$2" = reuse ]; then
        jget "$1" '.runs[0] | .requests + 1 + .connects'
    else
        jget "$1" '.runs[0] | .requests + 1'
    fi
}

# fpm_delta ADDR BEFORE WANT : reads "accepted conn" until the run's share (the value
# less BEFORE less one per status read) reaches WANT (3 s at most); prints that share.
fpm_delta() {
    local addr=$1 before=$2 want=$3 i now share=
    for ((i = 1; i <= 30; i++)); do
        now=$(fpm_accepted "$addr")
        share=$((${now:-0} - before - i))
        [ "$share" -ge "$want" ] && break
        sleep 0.1
    done
    echo "$share"
}
