#!/bin/bash
# run --procs and --source: one run's load made by several load processes, over TCP from
# several 127.x source addresses and over a Unix socket, against hopbench serve (over TCP two
# of them, serve --reuseport on one port) and nginx (docs/connections.md). For each run:
#   - the limits lines (fds, ports, accept queue, memory, which binds first) before it runs;
#   - during the window: the load processes are the run's children, one per --procs, and
#     the server has every connection, each source address its share (ss);
#   - the counts the run gives equal the server's own, exactly (hopbench serve's stopped:
#     line, nginx's access log), and the merged figures equal the sum of the processes':
#     ops, requests, the histogram's total;
#   - the client memory per connection, the load processes' PSS growth from the fork to
#     the window's end (evidence) and their private memory read here during the window,
#     is at most 4 KiB;
#   - after: the load processes are gone, and so is every connection of the run.
# A run short of connections names why, counted over the whole run (the accept queue); a plan
# the machine cannot hold is refused before anything runs (one line, exit 71).
# shellcheck disable=SC2016 # $vars in single quotes are jq variables
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
need nginx pgrep

REAL=$(cd "$(dirname "$0")/real" && pwd)
SRC_PORT="" SOCK=""
N=3000 # connections: a few seconds on a loaded 2-core machine
P=3    # load processes
# client memory a connection: 4 KiB (release: 2.4-3.1 KiB measured); under a sanitizer its
# allocator and shadow memory are the client's too (ASan: 4.9 KiB for 3.0 in release), 8 KiB
MEM_MAX=$((SAN > 1 ? 8192 : 4096))

# children_of PID : the pids of PID's children, one a line.
children_of() { pgrep -P "$1" | sort -n; }

# private_kib PID... : the sum of their Private_Clean + Private_Dirty (smaps_rollup), KiB.
private_kib() {
    local p sum=0 v
    for p in "$@"; do
        v=$(awk '/^Private_(Clean|Dirty):/ { s += $2 } END { print s + 0 }' \
            "/proc/$p/smaps_rollup" 2>/dev/null)
        sum=$((sum + ${v:-0}))
    done
    echo "$sum"
}

# tcp_by_source PORT : "ADDR COUNT" per source address of the established connections to
# 127.0.0.1:PORT, sorted.
tcp_by_source() {
    ss -Htn state established "( dport = :$1 )" 2>/dev/null |
        awk '{ a = $3; sub(/:[0-9]+$/, "", a); n[a]++ } END { for (k in n) print k, n[k] }' | sort
}

# unix_conns PATH : connected sockets on the server's side of PATH (the listener not counted).
unix_conns() { ss -Hx state connected src "$1" 2>/dev/null | wc -l; }

# now_conns : the connections the server has now: to 127.0.0.1:$SRC_PORT over TCP, else to
# the Unix socket $SOCK.
now_conns() {
    if [ -n "$SRC_PORT" ]; then
        ss -Htn state established "( dport = :$SRC_PORT )" 2>/dev/null | wc -l
    else
        unix_conns "$SOCK"
    fi
}

# watch_run NAME HB-ARGS... : spawns "hopbench run HB-ARGS" (stdout $T/NAME.out) and, while
# it runs, samples its children and their private memory, and the connections (now_conns),
# keeping the sample with the most.
# Sets RUN_RC, KIDS (the children seen, one a line), PEAK (the most connections seen),
# PEAK_KIB (the children's private memory then), PEAK_SRC (tcp_by_source then; TCP only).
watch_run() {
    local name=$1 pid i kids c
    shift
    spawn "$name" run "$@"
    pid=$SPAWNED
    KIDS="" PEAK=0 PEAK_KIB=0 PEAK_SRC=""
    for ((i = 0; i < 1200; i++)); do
        alive "$pid" || break
        kids=$(children_of "$pid")
        c=$(now_conns)
        # children counted only while the server has the run's connections: at its exit a
        # sanitizer build's run gets one more child, LeakSanitizer's tracer (a clone without
        # CLONE_THREAD), after its load processes and their connections are gone
        if [ -n "$kids" ] && [ "$c" -gt 0 ]; then
            KIDS=$(printf '%s\n%s\n' "$KIDS" "$kids" | sed '/^$/d' | sort -nu)
            if [ "$c" -gt "$PEAK" ]; then
                PEAK=$c
                # shellcheck disable=SC2086 # one pid a word
                PEAK_KIB=$(private_kib $kids)
                [ -n "$SRC_PORT" ] && PEAK_SRC=$(tcp_by_source "$SRC_PORT")
            fi
        fi
        sleep 0.1
    done
    reap "$pid" 60
    RUN_RC=$RC
}

# run_checks NAME JSON : what every --procs run holds (see the top).
run_checks() {
    local name=$1 j=$2 p
    if [ "$RUN_RC" != 0 ] || [ ! -s "$j" ]; then
        not_ok "$name: exits 0 with its evidence" "exit $RUN_RC; stderr: $(head -c 300 "$T/$name.err" | tr '\n' '|')"
        return 1
    fi
    ok "$name: exits 0 with its evidence"
    for p in fds ports 'accept queue' memory 'binds first'; do
        [ "$p" = ports ] && [ -z "$SRC_PORT" ] && continue
        check "$name: a limits line for $p before the run" grep -q "^limits: $p: " "$T/$name.out"
    done
    check_eq "$name: $P load processes, children of the run" "$P" \
        "$(printf '%s\n' "$KIDS" | sed '/^$/d' | wc -l)"
    check_eq "$name: the evidence names those processes" "$(printf '%s\n' "$KIDS" | sed '/^$/d')" \
        "$(jq -r '.runs[0].procs.children[].pid' "$j" | sort -n)"
    check_eq "$name: the server had every connection at once" "$N" "$PEAK"
    rcheck "$name: clean, every connection open at both ends of the window" "$j" \
        '.runs[0] | errors_zero and .connections == '"$N"' and .connections_open.start == '"$N"'
         and .connections_open.end == '"$N"' and .procs.n == '"$P"'
         and ([.procs.children[].connections] | add) == '"$N"''
    rcheck "$name: merged ops, requests and histogram equal the sum of the processes'" "$j" \
        '.runs[0] | . as $r | .ops > 0 and .histogram.total == .ops and hist_ok
         and ([.procs.children[].ops] | add) == .ops
         and ([.procs.children[].requests] | add) == .requests
         and ([.procs.children[].replies] | add) == .replies'
    rcheck "$name: client memory (PSS growth) at most $MEM_MAX B a connection" "$j" \
        '.runs[0].procs | .memory_bytes > 0 and .memory_bytes_per_connection <= '"$MEM_MAX"
    echo "# $name: PSS growth $(jq -r '.runs[0].procs.memory_bytes_per_connection | round' "$j") B a connection; private memory during the window $((PEAK_KIB * 1024 / N)) B a connection"
    check "$name: private memory of the load processes during the window at most $MEM_MAX B a connection" \
        test $((PEAK_KIB * 1024)) -le $((MEM_MAX * N))
    for p in $KIDS; do
        if alive "$p"; then
            not_ok "$name: the load processes are gone" "pid $p alive"
            return
        fi
    done
    ok "$name: the load processes are gone"
}

# conns_left : no connection of the run is left (the client's ends closed, so the server
# closed its own).
# shellcheck disable=SC2317 # called through check
conns_left() { [ "$(now_conns)" = 0 ]; }

# --- two hopbench serve --reuseport on one port, TCP from 3 source addresses --------------
# (several servers for more connections than one process has fds for)
start_server srv_tcp --reuseport -l tcp://127.0.0.1:0 || done_testing
SRC_PORT=$SRV_PORT
SRV1=$SRV_PID
start_server srv_tcp2 --reuseport -l "tcp://127.0.0.1:$SRC_PORT" || done_testing
SRV2=$SRV_PID
expect_rc "serve without --reuseport on a port two servers share: exit 1" 1 srv_no \
    serve echo -l "tcp://127.0.0.1:$SRC_PORT"
one_line "its error is one line" "$T/srv_no.err" 'already in use'
watch_run tcp echo "tcp://127.0.0.1:$SRC_PORT" -c $N --procs $P --source 127.0.0.2-127.0.0.4 \
    --warmup 0.5 -d 1 --json "$T/tcp.json"
run_checks tcp "$T/tcp.json"
check_eq "tcp: each source address had its third of the connections" \
    "$(printf '127.0.0.%d %d\n' 2 $((N / 3)) 3 $((N / 3)) 4 $((N / 3)))" "$PEAK_SRC"
rcheck "tcp: the evidence names the source addresses" "$T/tcp.json" \
    '.runs[0].source_addresses == "127.0.0.2-127.0.0.4"'
check "tcp: no connection left after the run" eventually 5 conns_left
stop_server "$SRV1" "$T/srv_tcp.out"
in1=$(stopped_field 'bytes in') c1=$(stopped_field connections)
stop_server "$SRV2" "$T/srv_tcp2.out"
in2=$(stopped_field 'bytes in') c2=$(stopped_field connections)
echo "# tcp: the two servers had $c1 and $c2 connections"
req=$(jq -r '.runs[0].requests' "$T/tcp.json")
check_eq "tcp: the two servers read requests x 64 bytes (warm-up included)" $((req * 64)) \
    $((${in1:-0} + ${in2:-0}))
check_eq "tcp: they had the run's connections and the pre-flight one" $((N + 1)) \
    $((${c1:-0} + ${c2:-0}))
check "tcp: each of them had a share (more than a quarter)" \
    test "${c1:-0}" -gt $((N / 4)) -a "${c2:-0}" -gt $((N / 4))

# --- hopbench serve, a Unix socket ---------------------------------------------------------
SRC_PORT=
start_server srv_unix -l "unix:$T/s.sock" || done_testing
SOCK=$T/s.sock
watch_run unix echo "unix:$T/s.sock" -c $N --procs $P --warmup 0.5 -d 1 --json "$T/unix.json"
run_checks unix "$T/unix.json"
check "unix: no connection left after the run" eventually 5 conns_left
stop_server "$SRV_PID" "$T/srv_unix.out"
req=$(jq -r '.runs[0].requests' "$T/unix.json")
check_eq "unix: the server read requests x 64 bytes (warm-up included)" $((req * 64)) \
    "$(stopped_field 'bytes in')"

# --- nginx, 2 workers, over TCP from 2 source addresses and a Unix socket ----------------
free_port
NG=$T/ng
mkdir -p "$NG/tmp"
sed -e "s|@T@|$NG|g" -e "s|@PORT@|$PORT|g" -e "s|@WORKERS@|2|g" -e "s|@CONNS@|4096|g" \
    -e "s|@NOFILE@|8192|g" "$REAL/nginx_many.conf" >"$NG/nginx.conf"
spawn_cmd nginx nginx -p "$NG/" -e "$NG/error.log" -c "$NG/nginx.conf"
NG_PID=$SPAWNED
# shellcheck disable=SC2317 # called through eventually
ng_up() { [ -S "$NG/nginx.sock" ] && [ -n "$(ss -Hltn "( sport = :$PORT )")" ]; }
if ! eventually 10 ng_up; then
    not_ok "nginx: up" "$(tail -c 300 "$NG/error.log" 2>/dev/null | tr '\n' '|')"
    done_testing
fi
NG_N=2000
n_saved=$N
N=$NG_N P=2
SRC_PORT=$PORT
watch_run ng_tcp http "tcp://127.0.0.1:$PORT" -c $N --procs $P --source 127.0.0.2,127.0.0.3 \
    --warmup 0.5 -d 1 --json "$T/ng_tcp.json"
run_checks ng_tcp "$T/ng_tcp.json"
check "ng_tcp: no connection left after the run" eventually 5 conns_left
SRC_PORT=
SOCK=$NG/nginx.sock
watch_run ng_unix http "unix:$NG/nginx.sock" -c $N --procs $P --warmup 0.5 -d 1 \
    --json "$T/ng_unix.json"
run_checks ng_unix "$T/ng_unix.json"
check "ng_unix: no connection left after the run" eventually 5 conns_left
stop_pid "$NG_PID"
want=$(($(jq -r '.runs[0].requests' "$T/ng_tcp.json") + $(jq -r '.runs[0].requests' "$T/ng_unix.json")))
check_eq "nginx: its access log has a line per request of both runs" "$want" \
    "$(wc -l <"$NG/access.log")"
# a thread's count is its connections', not each connection's: a share each, not an equal one
check_eq "nginx: the TCP run's lines came from its two source addresses, both" \
    "127.0.0.2 127.0.0.3 $(jq -r '.runs[0].requests' "$T/ng_tcp.json")" \
    "$(awk '$1 ~ /^127/ { n[$1]++; t++ } END { for (k in n) printf "%s ", k; print t }' \
        "$NG/access.log" | tr ' ' '\n' | sort | tr '\n' ' ' | sed 's/^ *//; s/ *$//')"
N=$n_saved P=3

# --- what kept connections shut, over the whole run ---------------------------------------
# The server stopped (SIGSTOP) while the connects go out: past its backlog of 2 the SYNs are
# dropped and sent again 1 s later, after the 0.3 s warm-up, so connections are not open when
# the window begins; the cause is counted over the run (the window's counters miss it).
start_server srv_stop --backlog 2 -l tcp://127.0.0.1:0 || done_testing
kill -STOP "$SRV_PID"
spawn shut run echo "tcp://127.0.0.1:$SRV_PORT" -c 1000 --procs 2 --warmup 0.3 -d 0.5 \
    --json "$T/shut.json"
shut_pid=$SPAWNED
sleep 0.5
kill -CONT "$SRV_PID"
reap "$shut_pid" 60
check "a run short of connections names the accept queue over the run, with its counters" \
    grep -Eq '^connections: .* short by [0-9]+: the accept queue \(over the run, its connects included: TcpExt.ListenOverflows \+[1-9]' \
    "$T/shut.out"
stop_server "$SRV_PID" "$T/srv_stop.out"

# --- refused before anything runs ----------------------------------------------------------
expect_rc "more connections than one source address has ports: exit 71" 71 refuse \
    run echo tcp://127.0.0.1:9 -c 30000 --procs 2 --source 127.0.0.2 -d 1
one_line "the refusal is one line naming the ports" "$T/refuse.err" 'ephemeral ports.*--source'
check "refused: nothing on stdout" test ! -s "$T/refuse.out"
# more connections than one process has fds for, without --procs: refused, the line says how
# many processes would do; with them it runs
start_server srv_lim -l "unix:$T/lim.sock" || done_testing
for procs in "" 2; do
    RC=0
    (ulimit -n 600 && cd "$T" && exec timeout -k 5 60 "$HOPBENCH" run echo "unix:$T/lim.sock" \
        -c 1000 ${procs:+--procs $procs} --warmup 0.3 -d 0.3 --json "$T/lim$procs.json") \
        >"$T/lim$procs.out" 2>"$T/lim$procs.err" || RC=$?
    if [ -z "$procs" ]; then
        check_eq "1000 connections under a hard fd limit of 600: exit 71" 71 "$RC"
        one_line "its line says raise the limit or split the load" "$T/lim.err" \
            'needs [0-9]+ file descriptors, the hard limit is 600: raise it \(ulimit -n [0-9]+, .*\) or split the load \(--procs 2\)'
        check "refused: nothing on stdout" test ! -s "$T/lim.out"
    else
        check_eq "with --procs 2 under that limit: exit 0" 0 "$RC"
        rcheck "with --procs 2: every connection open through the window" "$T/lim2.json" \
            '.runs[0] | errors_zero and .connections_open.start == 1000 and .connections_open.end == 1000'
    fi
done
stop_server "$SRV_PID" "$T/srv_lim.out"
expect_rc "--procs over --connections: exit 64" 64 procs_usage run echo tcp://127.0.0.1:9 -c 2 --procs 3
one_line "its error is one line" "$T/procs_usage.err" 'procs 3 is more than --connections 2'
expect_rc "--source to a Unix socket: exit 64" 64 src_usage run echo unix:/nonexistent -c 2 --source 127.0.0.2
one_line "its error is one line" "$T/src_usage.err" 'for TCP endpoints'

done_testing
