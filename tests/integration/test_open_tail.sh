#!/usr/bin/env bash
# test_open_tail: the open loop's window ends inside a server stall, and nothing intended
# inside it is dropped.
#  - Constant arrivals, 4 connections at 1000 ops/s for 1.6 s, no warm-up, against a server
#    whose one worker stalls 300 ms at its 1500th request: ops = rate x window exactly
#    (1600), every request written was answered, and the server received exactly 1600
#    requests (its own byte count), so none intended after the window's end was sent. The
#    drain is reported as open_loop.drain_s and is part of window_s; the stall is in the max.
#    The run is not saturated: the drain is the stalled op's own service time, not a backlog
#    (ops / window_s is below 99 % of the rate, the rate kept up with is not).
#  - A stall longer than --timeout: what is unanswered --timeout after the window's end
#    is a timeout, so ops + timeouts = 1600 and the drain lasts about --timeout.
#  - Poisson arrivals: the same seeded schedule without a warm-up against a server that
#    does not stall gives the number intended; against the stall every one of them is
#    answered or timed out.
#  - Ctrl-C during the drain ends the run at once, marked interrupted.
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

size=64
load=(--rate 1000 -c 4 -t 1 -d 1.6 --warmup 0 --size "$size")

if start_server stall --listen "unix:$T/stall.sock" --threads 1 --stall-every 1500 --stall-ms 300; then
    s_pid=$SRV_PID s_out=$SRV_OUT
    expect_rc "open loop, window ending inside a 300 ms stall: exit 0" 0 c \
        run echo "unix:$T/stall.sock" "${load[@]}" --json "$T/c.json"
    rcheck "not saturated: the drain past the slowest op's service time is under 1 %" \
        "$T/c.json" '.runs[0] | .open_loop as $o | $o.saturated == false and .valid
         and .ops / .window_s < 990 and $o.kept_ops_per_s >= 0.99 * $o.intended_ops_per_s
         and ($o.kept_ops_per_s - .ops / (.window_s - ([$o.drain_s,
              $o.service_latency_ns.max / 1e9] | min)) | fabs) < 1e-3'
    check "the text shows the rate kept up with" \
        grep -Eq "achieved [0-9,]+, kept up with [0-9,]+ \((99\.[0-9]|100\.[0-9]) %\)$" "$T/c.out"
    rcheck "every op intended inside the window answered: ops = 1000/s x 1.6 s = 1600" \
        "$T/c.json" '.runs[0] | .ops == 1600 and .histogram.total == 1600 and errors_zero'
    rcheck "every request written was answered, none after the window (requests = 1600)" \
        "$T/c.json" '.runs[0] | .requests == 1600 and .replies == 1600'
    rcheck "the drain is reported and part of window_s; the stall is in the max" "$T/c.json" \
        '.runs[0] | .open_loop.drain_s > 0 and .open_loop.drain_s < 1
         and (.window_s - .duration_s - .open_loop.drain_s | fabs) < 1e-6
         and .latency_ns.max >= 100000000'
    stop_server "$s_pid" "$s_out"
    check_eq "the server received exactly 1600 requests (bytes in = 1600 x $size)" \
        $((1600 * size)) "$(stopped_field "bytes in")"
fi

# The stall starts at the 1500th request, 1.5 s or more after the command starts, and lasts
# 4 s: a run that waited for it would take 5.5 s or more. One that does not ends after its
# window and drain (1.9 s) plus its start and teardown: 2.5-2.7 s measured under TSan on a
# busy 2-core box, so a 2 s stall left too little between the two.
if start_server long --listen "unix:$T/long.sock" --threads 1 --stall-every 1500 --stall-ms 4000; then
    s_pid=$SRV_PID s_out=$SRV_OUT
    t0=$(now_ms)
    expect_rc "a stall longer than --timeout 0.3 at the window's end: exit 2 (timeouts, invalid)" 2 to \
        run echo "unix:$T/long.sock" "${load[@]}" --timeout 0.3 --json "$T/to.json"
    dt=$(($(now_ms) - t0))
    rcheck "each op intended inside the window is answered or a timeout: ops + timeouts = 1600" \
        "$T/to.json" '.runs[0] | .errors.timeout > 0 and .errors_total == .errors.timeout
         and .ops + .errors.timeout == 1600 and .requests <= 1600'
    rcheck "the drain lasts --timeout, no more" "$T/to.json" \
        '.runs[0].open_loop.drain_s >= 0.3 and .runs[0].open_loop.drain_s < 0.6'
    check "the run did not wait for the stall to end (${dt} ms < 5 s)" test "$dt" -lt 5000
    stop_server "$s_pid" "$s_out"
fi

poisson=(--rate 1000 -c 4 -t 1 -d 1.6 --warmup 0 --arrivals poisson --seed 11)
if start_server fast --listen "unix:$T/fast.sock" --threads 1; then
    expect_rc "poisson against a server that does not stall: exit 0" 0 pf \
        run echo "unix:$T/fast.sock" "${poisson[@]}" --json "$T/pf.json"
    rcheck "poisson: saturated is judged against the schedule's own count, not the mean rate" \
        "$T/pf.json" '.runs[0] | .open_loop.saturated == false and .errors_total == 0
         and (.open_loop.intended_ops_per_s - .ops / .duration_s | fabs) < 1e-6'
    stop_server "$SRV_PID" "$SRV_OUT"
fi
if start_server pstall --listen "unix:$T/pstall.sock" --threads 1 --stall-every 1500 --stall-ms 300; then
    expect_rc "poisson, the same schedule, window ending inside the stall: exit 0" 0 ps \
        run echo "unix:$T/pstall.sock" "${poisson[@]}" --json "$T/ps.json"
    intended=$(jq '.runs[0].ops' "$T/pf.json" 2>/dev/null)
    rcheck "poisson: the schedule's own count without a stall (${intended:-?}), all answered" \
        "$T/pf.json" '.runs[0] | errors_zero and .requests == .ops and .ops > 1300 and .ops < 1900'
    rcheck "poisson: every intended op accounted for, answered or timed out (${intended:-?})" \
        "$T/ps.json" ".runs[0] | .ops + .errors.timeout == ${intended:-0} and errors_sum
         and .errors_total == .errors.timeout and .requests <= ${intended:-0}"
    stop_server "$SRV_PID" "$SRV_OUT"
fi

# Ctrl-C while the drain waits for a 3 s stall to end: the run ends at once, interrupted.
if start_server intr --listen "unix:$T/intr.sock" --threads 1 --stall-every 1500 --stall-ms 3000; then
    s_pid=$SRV_PID s_out=$SRV_OUT
    spawn int_run run echo "unix:$T/intr.sock" "${load[@]}" --json "$T/int.json"
    run_pid=$SPAWNED
    sleep 2.5
    t0=$(now_ms)
    kill -INT "$run_pid"
    reap "$run_pid" 5
    dt=$(($(now_ms) - t0))
    check_eq "Ctrl-C in the drain: exit 130" 130 "$RC"
    check "Ctrl-C in the drain: exits at once (${dt} ms < 1 s)" test "$dt" -lt 1000
    rcheck "Ctrl-C in the drain: the run is marked interrupted" "$T/int.json" \
        '.interrupted == true and .runs[0].interrupted == true and .runs[0].ops < 1600'
    stop_server "$s_pid" "$s_out"
fi

done_testing
