#!/bin/bash
# What is tried again, and what is an error.
#
# A Unix-socket connect that finds the listener's backlog full (EAGAIN) waits, as a blocking
# connect would: tests/tools/slowaccept listens with a backlog of 1 and accepts one
# connection every 5 ms, so 8 connections opening at once find the queue full. Every op
# completes with no error, the connects tried again are counted (connect_retries), the wait
# is in the connect phase and the op's latency, and the server accepted exactly one
# connection per op. With a backlog of 0 that is never drained, the op is an error (a
# timeout) only once --timeout has passed.
#
# A kept connection the server closes (serve --close-after: after 3 echo replies of 64 B):
# with --retry once (the default) the unanswered request is sent again on a new connection,
# counted as retried, and shown in the run table; with --retry none each such close is an
# error of that op, as wrk counts it; with the blocking wait and with --wait uring alike.
# Either way the counts equal the server's closes, which
# its own "stopped:" line gives: connections accepted less the pre-flight probe and the
# connection the client closed at the end.
# shellcheck disable=SC2016 # $vars in single quotes are jq variables
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

TOOLS=${TOOLS:-build/release/tools}
case $TOOLS in /*) ;; *) TOOLS=$PWD/$TOOLS ;; esac
if [ ! -x "$TOOLS/slowaccept" ]; then
    not_ok "setup" "$TOOLS/slowaccept is not built (make $TOOLS/slowaccept)"
    done_testing
fi

# start_slow NAME PATH BACKLOG EVERY_MS : slowaccept in the background; sets SLOW_PID.
start_slow() {
    local i
    spawn_cmd "$1" "$TOOLS/slowaccept" "$2" "$3" "$4"
    SLOW_PID=$SPAWNED
    for ((i = 0; i < 100; i++)); do
        grep -q '^slowaccept: listening on ' "$T/$1.out" && return 0
        alive "$SLOW_PID" || break
        sleep 0.05
    done
    not_ok "slowaccept $1 listening" "$(head -c 300 "$T/$1.out" "$T/$1.err" | tr '\n' '|')"
    return 1
}

# --- a full backlog: slow connects, counted retries, no error ---------------------------
n="connect mode, 8 connections, a backlog of 1 accepted every 5 ms"
if start_slow slow "$T/slow.sock" 1 5; then
    j=$T/slow.json
    hb slow-run run echo "unix:$T/slow.sock" --mode connect -c 8 -n 60 --warmup 0 --timeout 5 \
        --json "$j"
    check_eq "$n: exit 0 (no error)" 0 "$RC"
    rcheck "$n: 60 ops, 60 connects, no error" "$j" \
        '.valid and (.runs[0] | .ops == 60 and .connects == 60 and errors_zero)'
    rcheck "$n: connects to the full backlog were tried again" "$j" '.runs[0].connect_retries > 0'
    rcheck "$n: the wait is in the connect phase (>= 1 ms) and in the latency" "$j" \
        '.runs[0] | .phases.connect.latency_ns.max >= 1000000
         and .latency_ns.max >= .phases.connect.latency_ns.max'
    retries=$(jq -r '.runs[0].connect_retries' "$j" | grouped)
    check "$n: the text gives the connect retries ($retries)" \
        grep -q "^connect retries: unix:.* connect 64 B: $retries connects found the backlog full" \
        "$T/slow-run.out"
    check "$n: no errors line" test "$(grep -c '^errors:' "$T/slow-run.out")" -eq 0
    stop_pid "$SLOW_PID"
    # One connection per op, and the pre-flight probe: a retry makes no extra connection.
    check_eq "$n: the server accepted 61 connections" "slowaccept: accepted 61" \
        "$(grep '^slowaccept: accepted' "$T/slow.out")"
fi

# --- a backlog never drained: an error only at --timeout --------------------------------
n="one connect to a full backlog never drained, --timeout 0.3"
if start_slow never "$T/never.sock" 0 0; then
    j=$T/never.json
    t0=$(now_ms)
    # The pre-flight probe takes the one place in the queue; it stays there, never accepted.
    hb never-run run echo "unix:$T/never.sock" --mode connect -c 1 -n 1 --warmup 0 \
        --timeout 0.3 --json "$j"
    dt=$(($(now_ms) - t0))
    check_eq "$n: exit 2 (an error)" 2 "$RC"
    rcheck "$n: one error, a timeout; no connect" "$j" \
        '.runs[0] | .errors.timeout == 1 and .errors_total == 1 and .connects == 0 and .ops == 0'
    check "$n: not before --timeout (${dt} ms)" test "$dt" -ge 300
    rcheck "$n: the attempts before it were retries, at most one per ms" "$j" \
        '.runs[0] | .connect_retries >= 1 and .connect_retries <= 300'
    stop_pid "$SLOW_PID"
fi

# --- a kept connection the server closes: retried, or an error with --retry none ---------
# serve_closes : the server's closes from $STOPPED: accepted less 2 probes and the 2
# connections the client closed at the end (10 ops, 3 per connection: the last one has 1).
serve_closes() {
    echo $(($(stopped_field connections) - 4))
}

# Each with the run's default wait (block: one kept connection) and with --wait uring, whose
# 2nd and 3rd replies on each connection, and the close, come through its ring.
for spec in "once block" "none block" "once uring" "none uring"; do
    read -r retry wait <<<"$spec"
    n="--retry $retry --wait $wait, a server that closes after 3 replies, -n 10 per transport"
    retry=$retry-$wait
    start_server "close-$retry" --listen tcp://127.0.0.1:0 --listen "unix:$T/close-$retry.sock" \
        --close-after 192 || continue
    j=$T/close-$retry.json
    hb "run-$retry" run echo "tcp://127.0.0.1:$SRV_PORT" "unix:$T/close-$retry.sock" -c 1 \
        -n 10 --warmup 0 --retry "${retry%-*}" --wait "$wait" --json "$j"
    run_rc=$RC
    stop_server "$SRV_PID" "$SRV_OUT"
    closes=$(serve_closes)
    if [ "${retry%-*}" = once ]; then
        check_eq "$n: exit 0" 0 "$run_rc"
        rcheck "$n: 10 ops each, no error, 3 retried requests on 3 reconnects each" "$j" \
            'all(.runs[]; .ops == 10 and errors_zero and .retried == 3 and .reconnects == 3
                 and .retry == "once" and .wait == "'"$wait"'")'
        check_eq "$n: retried requests equal the server's closes" "$closes" \
            "$(jq '[.runs[].retried] | add' "$j")"
        check_eq "$n: requests, each counted once, equal the server's" \
            "$(stopped_field requests)" "$(jq '[.runs[].requests] | add' "$j")"
        check "$n: the run table has a retried column" \
            grep -Eq '^endpoint .* errors +retried +vs first$' "$T/run-$retry.out"
        check "$n: each row shows 3 retried" \
            test "$(grep -Ec '^(tcp://|unix:)[^ ]+ +reuse .* 0 +3 +([0-9.]+×|-)$' \
                "$T/run-$retry.out")" -eq 2
        check "$n: a retried line per run" \
            test "$(grep -c '^retried: .* 3 requests sent again after the server closed' \
                "$T/run-$retry.out")" -eq 2
    else
        check_eq "$n: exit 2 (errors)" 2 "$run_rc"
        rcheck "$n: 8 ops and 2 errors each (short or reset), nothing retried" "$j" \
            'all(.runs[]; .ops == 8 and .errors_total == 2 and errors_sum
                 and .errors.short + .errors.reset == 2 and .retried == 0 and .reconnects == 0
                 and .retry == "none" and .wait == "'"$wait"'")'
        check_eq "$n: errors equal the server's closes" "$closes" \
            "$(jq '[.runs[].errors_total] | add' "$j")"
        check "$n: no retried column" \
            grep -Eq '^endpoint .* errors +vs first$' "$T/run-$retry.out"
    fi
done

# --- --retry none counts a close as wrk does ---------------------------------------------
# wrk (if installed) reconnects after such a close and counts it as a read error (the
# server's reset of the next request) or a write error. Against an http server that closes
# after 3 replies of 70 B, for 1 s each: wrk's socket errors and hopbench --retry none's
# errors each equal the server's connections (less hopbench's pre-flight probe), all but
# the last closed by the server, less at most 2: the last one, if the client closed it at
# the end, and the close of the op in flight then.
for client in wrk hopbench; do
    n="--retry none against wrk: $client, 1 s against a server closing after 3 replies"
    PROTO=http start_server "wrk-$client" --listen tcp://127.0.0.1:0 --close-after 210 ||
        continue
    if [ "$client" = wrk ]; then
        (cd "$T" && timeout -k 5 30 wrk -t1 -c1 -d1 "http://127.0.0.1:$SRV_PORT/") \
            >"$T/wrk.out" 2>&1
        errs=$(sed -n 's/.*Socket errors: connect \([0-9]*\), read \([0-9]*\), write \([0-9]*\),.*/\1 \2 \3/p' \
            "$T/wrk.out" | awk '{ print $1 + $2 + $3 }')
        probes=0
    else
        hb wrk-hb run http "tcp://127.0.0.1:$SRV_PORT" -c 1 -d 1 --warmup 0 --retry none \
            --json "$T/wrk-hb.json"
        errs=$(jq '.runs[0].errors_total' "$T/wrk-hb.json" 2>/dev/null)
        probes=1
    fi
    stop_server "$SRV_PID" "$SRV_OUT"
    conns=$(($(stopped_field connections) - probes))
    check "$n: errors (${errs:-none}) = the server's connections ($conns), less at most 2" \
        test "${errs:-0}" -ge $((conns - 2)) -a "${errs:-0}" -le "$conns" -a "$conns" -gt 10
done

expect_rc "--retry bogus: exit 64" 64 bad run echo "unix:$T/x.sock" --retry twice
check "--retry bogus: says what is wrong" grep -q "retry: 'twice' is not one of once, none" "$T/bad.err"

done_testing
