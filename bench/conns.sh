#!/bin/sh
# conns.sh: many kept connections as one run (issue 31): `hopbench run --procs` over TCP
# from several 127.x source addresses and over a Unix socket, against the built-in server
# and nginx, each connection a 64-byte echo (built-in) or GET / (nginx) at a time, closed
# loop. One process may hold at most its hard RLIMIT_NOFILE of fds, so each side is
# several processes: the client --procs P, the built-in server SERVERS `serve --reuseport`
# on one TCP port (a Unix socket has one listener: one serve process, at most its own fds),
# nginx WORKERS workers (reuseport over TCP; the Unix listener shared).
#
#   bench/conns.sh HOPBENCH
#
# Per case, after its limits lines: the run's table row, the connections open at both ends
# of the window, the client memory a connection (the load processes' PSS growth from the
# fork to the window's end), the requests the run sent against what the server counted
# (hopbench serve's stopped: lines; nginx's access log lines), and the load average before
# and after. Evidence: $OUT/NAME.json when OUT is set.
#
#   CONNS=N       connections (default 50000)
#   PROCS=P       load processes (default 4)
#   SOURCES=LIST  --source for the TCP runs (default 127.0.0.2-127.0.0.6: 10,000 connections
#                 each, under the even half of the port range that connect() takes first)
#   SERVERS=N     built-in serve processes on the TCP port (default 3)
#   WORKERS=N     nginx workers (default 4)
#   DURATION=S    measured seconds (default 5); WARMUP=S (default 10: the connects)
#   CASES="..."   of serve-tcp serve-unix nginx-tcp nginx-unix (default all four)
#   RUN_ARGS="..." more options for every run (e.g. "--timeout 30": a TCP connect whose SYN
#                 a full accept queue dropped is sent again after 1 s, 3 s, 7 s, 15 s, ...)
#
# All traffic stays on 127.0.0.1 and sockets in a private directory. Every process started
# is stopped by PID on exit, INT or TERM; every client runs under timeout.
# Needs: jq, awk, ss, timeout, nginx.
set -eu
PROG=conns.sh
. "$(dirname "$0")/lib.sh"

[ $# -eq 1 ] || {
    echo "usage: bench/conns.sh HOPBENCH" >&2
    exit 64
}
HB=$1
[ -x "$HB" ] || die "$HB is not an executable"
CONNS=${CONNS:-50000}
PROCS=${PROCS:-4}
SOURCES=${SOURCES:-127.0.0.2-127.0.0.6}
SERVERS=${SERVERS:-3}
WORKERS=${WORKERS:-4}
DURATION=${DURATION:-5}
WARMUP=${WARMUP:-10}
CASES=${CASES:-serve-tcp serve-unix nginx-tcp nginx-unix}
for v in "$CONNS" "$PROCS" "$SERVERS" "$WORKERS"; do
    is_count "$v" || die "CONNS, PROCS, SERVERS and WORKERS must be whole numbers above 0"
done
command -v jq >/dev/null || die "jq is not installed"
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
CONF=$(cd "$(dirname "$0")/../tests/integration/real" && pwd)/nginx_many.conf

private_tmp hopbench-conns
HARD=$(awk '/^Max open files/ { print $5 }' /proc/self/limits)

# wait_line FILE TEXT: until FILE has TEXT (10 s at most).
wait_line() {
    i=0
    until grep -q "$2" "$1" 2>/dev/null; do
        i=$((i + 1))
        [ "$i" -lt 200 ] || die "no '$2' in $1 after 10 s: $(head -c 300 "$1")"
        sleep 0.05
    done
}

# measure NAME PROTO ENDPOINT RUN-ARGS...: one run, its figures printed.
measure() {
    name=$1 proto=$2 ep=$3
    shift 3
    echo "== $name: $CONNS connections, $PROCS load processes; load before: $(cat /proc/loadavg)"
    rc=0
    # shellcheck disable=SC2086 # RUN_ARGS: words
    timeout -k 5 $((WARMUP + DURATION + 120)) "$HB" run "$proto" "$ep" -c "$CONNS" \
        --procs "$PROCS" --warmup "$WARMUP" -d "$DURATION" --json "$TMP/$name.json" "$@" \
        ${RUN_ARGS:-} \
        >"$TMP/$name.out" 2>"$TMP/$name.err" || rc=$?
    grep -E '^(limits|run):' "$TMP/$name.out" || true
    grep -E '^(tcp|unix):' "$TMP/$name.out" | head -n 1 || true
    grep -E '^(connections|client memory):' "$TMP/$name.out" || true
    [ -s "$TMP/$name.err" ] && sed 's/^/stderr: /' "$TMP/$name.err" | head -n 5
    echo "exit $rc; load after: $(cat /proc/loadavg)"
    [ -z "${OUT:-}" ] || cp "$TMP/$name.json" "$OUT/$name.json" 2>/dev/null || true
    REQ=$(jq -r '.runs[0].requests // 0' "$TMP/$name.json" 2>/dev/null || echo 0)
}

# serve_counts PIDS: stops each and sums its stopped: line's "bytes in" and connections.
serve_counts() {
    bytes=0 conns=0
    for pid in $1; do stop_pid TERM "$pid"; done
    for f in "$TMP"/serve.*.out; do
        line=$(grep '^hopbench: stopped:' "$f" | tail -n 1)
        b=$(echo "$line" | sed -n 's/.* \([0-9][0-9]*\) bytes in.*/\1/p')
        c=$(echo "$line" | sed -n 's/^hopbench: stopped: \([0-9][0-9]*\) connections.*/\1/p')
        bytes=$((bytes + ${b:-0}))
        conns=$((conns + ${c:-0}))
        echo "server $(basename "$f" .out): $line"
    done
    rm -f "$TMP"/serve.*.out
    echo "counts: run requests x 64 = $((REQ * 64)), servers' bytes in = $bytes; servers' connections $conns"
}

for case in $CASES; do
    case $case in
    serve-tcp)
        port=$(pick_port 1)
        pids=
        for k in $(seq 1 "$SERVERS"); do
            "$HB" serve echo --reuseport --listen "tcp://127.0.0.1:$port" \
                >"$TMP/serve.$k.out" 2>&1 &
            PIDS="$PIDS $!" pids="$pids $!"
            wait_line "$TMP/serve.$k.out" 'server,'
        done
        grep -h '^hopbench: limits' "$TMP/serve.1.out"
        measure serve-tcp echo "tcp://127.0.0.1:$port" --source "$SOURCES"
        serve_counts "$pids"
        ;;
    serve-unix)
        "$HB" serve echo --listen "unix:$TMP/echo.sock" >"$TMP/serve.1.out" 2>&1 &
        PIDS="$PIDS $!" pids=$!
        wait_line "$TMP/serve.1.out" 'server,'
        grep -h '^hopbench: limits' "$TMP/serve.1.out"
        measure serve-unix echo "unix:$TMP/echo.sock"
        serve_counts "$pids"
        ;;
    nginx-tcp | nginx-unix)
        port=$(pick_port 2)
        ng=$TMP/nginx-$case
        mkdir -p "$ng/tmp"
        sed -e "s|@T@|$ng|g" -e "s|@PORT@|$port|g" -e "s|@WORKERS@|$WORKERS|g" \
            -e "s|@CONNS@|$(((HARD - 100) < 65000 ? HARD - 100 : 65000))|g" \
            -e "s|@NOFILE@|$HARD|g" "$CONF" >"$ng/nginx.conf"
        "$NGINX" -p "$ng/" -e "$ng/error.log" -c "$ng/nginx.conf" >"$TMP/$case.nginx.out" 2>&1 &
        PIDS="$PIDS $!" ngpid=$!
        i=0
        until [ -S "$ng/nginx.sock" ] && port_listening "$port"; do
            i=$((i + 1))
            [ "$i" -lt 200 ] || die "nginx did not start: $(tail -c 300 "$ng/error.log")"
            sleep 0.05
        done
        echo "nginx: $WORKERS workers, worker_connections $(((HARD - 100) < 65000 ? HARD - 100 : 65000)), worker_rlimit_nofile $HARD"
        if [ "$case" = nginx-tcp ]; then
            measure "$case" http "tcp://127.0.0.1:$port" --source "$SOURCES"
        else
            measure "$case" http "unix:$ng/nginx.sock"
        fi
        stop_pid TERM "$ngpid"
        echo "counts: run requests = $REQ, nginx access log lines = $(wc -l <"$ng/access.log")"
        grep -E 'worker_connections|alert|emerg' "$ng/error.log" | sort | uniq -c | head -n 3 || true
        ;;
    *) die "unknown case '$case' (serve-tcp serve-unix nginx-tcp nginx-unix)" ;;
    esac
done
