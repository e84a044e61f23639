#!/bin/bash
# A connect that never completes: a TCP listener whose accept queue is full and never drained
# (tests/tools/fullq: backlog 0, no accept). hopbench run's pre-flight probe takes the one
# place in the queue (a connection reset while queued stays queued until accepted); from then
# on the kernel drops every SYN, SYN cookies or not (tcp_conn_request drops a SYN at a full
# accept queue even when it would answer with a cookie), so each connect stays pending until
# --timeout: counted as a timeout, with no connect completed, and the run ends on time with
# exit 2. The reply timeouts are in test_errors.sh (a SIGSTOPped server).
# shellcheck disable=SC2016 # $vars in single quotes are jq variables
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

TOOLS=${TOOLS:-build/release/tools}
case $TOOLS in /*) ;; *) TOOLS=$PWD/$TOOLS ;; esac

# With tcp_abort_on_overflow a handshake whose last ACK meets a full queue is answered with a
# RST (a reset connect) instead of being left pending: this test needs the default, 0.
abort=$(cat /proc/sys/net/ipv4/tcp_abort_on_overflow 2>/dev/null)
if [ "$abort" != 0 ]; then
    ok "connect timeout # SKIP net.ipv4.tcp_abort_on_overflow is '${abort:-unreadable}', not 0"
    done_testing
fi
if [ ! -x "$TOOLS/fullq" ]; then
    not_ok "setup" "$TOOLS/fullq is not built (make $TOOLS/fullq)"
    done_testing
fi
echo "# net.ipv4.tcp_syncookies = $(cat /proc/sys/net/ipv4/tcp_syncookies 2>/dev/null)"

spawn_cmd fullq "$TOOLS/fullq"
fq_pid=$SPAWNED
port=
for ((i = 0; i < 100; i++)); do
    port=$(sed -n 's|^fullq: listening on tcp://127\.0\.0\.1:\([0-9][0-9]*\)$|\1|p' "$T/fullq.out")
    [ -n "$port" ] && break
    alive "$fq_pid" || break
    sleep 0.05
done
if [ -z "$port" ]; then
    not_ok "fullq listening" "$(head -c 300 "$T/fullq.out" "$T/fullq.err" | tr '\n' '|')"
    done_testing
fi
ep=tcp://127.0.0.1:$port

# -d 2.5 with --timeout 1: a connect times out at 1 s, the next (1 ms later) at 2 s, the third
# is still pending when the window ends.
n="run --mode connect --timeout 1 against a full accept queue"
j=$T/cto.json
t0=$(now_ms)
hb cto run echo "$ep" --mode connect --timeout 1 -d 2.5 --warmup 0 --json "$j"
dt=$(($(now_ms) - t0))
check_eq "$n: exit 2 (errors: the results are invalid)" 2 "$RC"
check "$n: ends on time (${dt} ms: the 2.5 s window, < 5 s)" test "$dt" -lt 5000
rcheck "$n: no connect completed, no op" "$j" \
    '.valid == false and (.runs[0] | .connects == 0 and .ops == 0 and (.phases | has("connect") | not))'
rcheck "$n: every error a timeout, 2 of them" "$j" \
    '.runs[0] | .errors.timeout == 2 and .errors_total == .errors.timeout and errors_sum'
rcheck "$n: the kernel dropped the SYNs at the full queue" "$j" \
    '.runs[0].observed | .net_delta["TcpExt.ListenOverflows"] >= 2
     and .net_delta["Tcp.ActiveOpens"] >= 2 and .sockets.established.peak == 0
     and .sockets.listen_queue.peak == 1 and .sockets.listen_backlog == 0'
check "$n: the kernel evidence shows the full queue" \
    grep -Eq "^  $ep connect 64 B sockets: established 0, accept queue 1 of 0," "$T/cto.out"
check "$n: the errors line names the timeouts" \
    grep -Eq "^errors: $ep connect 64 B: timeout=2\$" "$T/cto.out"
check "$n: 'invalid' on stderr" grep -q "invalid" "$T/cto.err"

# fullq's own view at the end: the probe's connection still in its queue, which stayed full.
stop_pid "$fq_pid"
check_eq "fullq: its accept queue full to the end" "fullq: queue 1, backlog 0" \
    "$(grep '^fullq: queue ' "$T/fullq.out")"

done_testing
