#!/usr/bin/env bash
# test_open: open-loop load (--rate) and overload.
#  - Against a server that stalls 100 ms once a second, the open-loop latency
#    (from each op's intended send time) shows the stall at p99, while a
#    closed-loop run's p99 hides it (coordinated omission), and the ops
#    completed match rate x duration within 2 %.
#  - A rate the server cannot sustain is flagged saturated, and invalid (exit 2);
#    --rate N% measures the closed-loop maximum first; Poisson arrivals keep the
#    mean rate.
#  - Overload (a 1-slot backlog, one slow worker, many connections): TCP shows
#    ListenOverflows and SYN retransmits, AF_UNIX connects fail with EAGAIN.
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

if start_server stall --listen "unix:$T/stall.sock" --threads 1 --stall-every 1000 --stall-ms 100; then
    s_pid=$SRV_PID s_out=$SRV_OUT
    expect_rc "open loop 1000 ops/s against a 100 ms stall every 1000 requests: exit 0" 0 ol \
        run echo "unix:$T/stall.sock" --rate 1000 -d 4 --warmup 0.5 --json "$T/ol.json"
    rcheck "open loop: p99 from the intended time shows the stall (>= 20 ms)" "$T/ol.json" \
        '.runs[0].latency_ns.p99 >= 20000000'
    rcheck "open loop: the service time's p99 does not (< 20 ms)" "$T/ol.json" \
        '.runs[0].open_loop.service_latency_ns.p99 < 20000000'
    rcheck "open loop: ops = rate x duration within 2 %, not saturated" "$T/ol.json" \
        '.runs[0] | (.ops - 4000 | fabs) <= 80 and .open_loop.saturated == false
         and .open_loop.rate == 1000 and .open_loop.arrivals == "constant" and errors_zero'
    rcheck "open loop: both histograms kept, service <= intended at every percentile" "$T/ol.json" \
        '.runs[0] | .open_loop.service_histogram.total == .ops and .histogram.total == .ops
         and .open_loop.service_latency_ns.p50 <= .latency_ns.p50
         and .open_loop.service_latency_ns.p99 <= .latency_ns.p99'
    check "open loop: the table shows both latencies and p99.99" \
        grep -q "from the intended send time" "$T/ol.out"
    expect_rc "closed loop against the same stall: exit 0" 0 cl \
        run echo "unix:$T/stall.sock" -d 2 --warmup 0.5 --json "$T/cl.json"
    rcheck "closed loop: p99 hides the stall (< 20 ms), though max shows it" "$T/cl.json" \
        '.runs[0].latency_ns.p99 < 20000000 and .runs[0].latency_ns.max >= 50000000
         and .runs[0].open_loop == null'
    expect_rc "poisson arrivals: exit 0" 0 po run echo "unix:$T/stall.sock" --rate 2000 \
        --arrivals poisson --seed 7 -c 4 -d 2 --warmup 0.2 --json "$T/po.json"
    rcheck "poisson: the mean rate holds (within 10 %)" "$T/po.json" \
        '.runs[0] | (.ops - 4000 | fabs) <= 400 and .open_loop.arrivals == "poisson"'
    hb pct run echo "unix:$T/stall.sock" --rate 50% -d 1 --warmup 0.2 --json "$T/pct.json"
    # A window that ends while the server is still catching up a stall's backlog is saturated.
    want=$(jq 'if .runs[0].open_loop.saturated == true then 2 else 0 end' "$T/pct.json")
    check_eq "--rate 50%: exit 0, or 2 when saturated (here $want)" "$want" "$RC"
    rcheck "--rate 50%: half the measured closed-loop maximum" "$T/pct.json" \
        '.runs[0].open_loop | .rate_share == 0.5 and .rate_basis_ops_per_s > 0
         and (.rate - .rate_basis_ops_per_s / 2 | fabs) < 1'
    stop_server "$s_pid" "$s_out"
fi

if start_server slow --listen "unix:$T/slow.sock" --threads 1 --delay-us 2000; then
    expect_rc "a rate the server cannot sustain: exit 2 (saturated: invalid)" 2 sat run echo "unix:$T/slow.sock" \
        --rate 2000 -c 4 -d 1 --warmup 0.2 --json "$T/sat.json"
    rcheck "a rate the server cannot sustain: flagged saturated" "$T/sat.json" \
        '.runs[0] | .open_loop.saturated == true and .open_loop.achieved_ops_per_s < 1000'
    check "saturated: said in the table" grep -q "SATURATED" "$T/sat.out"
    stop_server "$SRV_PID" "$SRV_OUT"
fi

# A connection's gap longer than --timeout is not a timeout: it waits, it is not late.
if start_server idle --listen "unix:$T/idle.sock"; then
    expect_rc "open loop, 2 ops/s with --timeout 0.2: exit 0" 0 idle run echo "unix:$T/idle.sock" \
        --rate 2 -c 1 --timeout 0.2 -d 2 --warmup 0 --json "$T/idle.json"
    rcheck "open loop, gap > --timeout: 4 ops, no timeout" "$T/idle.json" \
        '.runs[0] | .ops == 4 and errors_zero'
    # Count mode: the count is split as the connections are, so the rate is met.
    expect_rc "open loop -n 300 -c 3 -t 2 --rate 300: exit 0" 0 cnt run echo "unix:$T/idle.sock" \
        --rate 300 -c 3 -t 2 -n 300 --warmup 0 --json "$T/cnt.json"
    rcheck "open loop in count mode: 300 ops, not saturated" "$T/cnt.json" \
        '.runs[0] | .ops == 300 and .open_loop.saturated == false'
    stop_server "$SRV_PID" "$SRV_OUT"
fi

expect_rc "--rate 0: exit 64" 64 r0 run echo "unix:$T/x.sock" --rate 0
expect_rc "--rate with --pipeline: exit 64" 64 rp run echo "unix:$T/x.sock" --rate 10 --pipeline 2
expect_rc "--arrivals without --rate: exit 64" 64 ar run echo "unix:$T/x.sock" --arrivals poisson
expect_rc "--stall-every without --stall-ms: exit 64" 64 se serve echo --listen "unix:$T/y.sock" \
    --stall-every 10

# Overload: backlog 1, one worker busy 20 ms per request, 32 connections connecting at once.
# Count mode, so every op begun is waited for (a duration-bound run drops the ops still in
# flight at its end, which are the ones waiting out a SYN retransmit). A connect to the full
# backlog waits on both transports (TCP retransmits its SYN, AF_UNIX tries again after
# EAGAIN) and fails only at --timeout. The unix run's 150 x 20 ms of work never makes a
# connect wait 5 s; a TCP connect whose SYN was dropped three times would (1 + 2 + 4 s).
if start_server over --listen tcp://127.0.0.1:0 --listen "unix:$T/over.sock" --threads 1 \
    --backlog 1 --delay-us 20000; then
    hb ov run echo "tcp://127.0.0.1:$SRV_PORT" "unix:$T/over.sock" --mode connect -c 32 -n 150 \
        --warmup 0 --timeout 5 --json "$T/ov.json"
    want=$(jq 'if .runs[0].errors_total > 0 then 2 else 0 end' "$T/ov.json" 2>/dev/null)
    check_eq "overload: exit 0, or 2 when a tcp connect's SYN waits reached --timeout" \
        "${want:-no evidence}" "$RC"
    rcheck "overload over tcp: ListenOverflows > 0, SYNs retransmitted" "$T/ov.json" \
        '.runs[0].observed.net_delta | .["TcpExt.ListenOverflows"] > 0 and .["TcpExt.TCPSynRetrans"] > 0'
    rcheck "overload: softnet_stat drops read (host-wide, an integer >= 0)" "$T/ov.json" \
        'all(.runs[]; (.observed.net_delta["Softnet.Dropped"] | type) == "number"
             and .observed.net_delta["Softnet.Dropped"] >= 0
             and .observed.net_delta["Softnet.TimeSqueeze"] >= 0)'
    rcheck "overload over tcp: second-long stalls (SYN retransmit) in the tail" "$T/ov.json" \
        '.runs[0].latency_ns.max >= 900000000'
    rcheck "overload over unix: EAGAIN connects retried, not errors" \
        "$T/ov.json" '.runs[1] | errors_zero and .connect_retries > 0 and .ops == 150'
    rcheck "overload over unix: the wait for backlog room is in the connect phase and latency" \
        "$T/ov.json" '.runs[1] | .phases.connect.latency_ns.max >= 1000000
                      and .latency_ns.max >= .phases.connect.latency_ns.max'
    stop_server "$SRV_PID" "$SRV_OUT"
fi

# The lab: open-loop shares of each cell's maximum, and the overload preset.
mkdir -p "$T/lr"
(cd "$T/lr" && TMPDIR="$T/lr" timeout 60 "$HOPBENCH" lab --sizes 64 --rates 30%,60% -d 0.3 \
    --warmup 0.1 --json "$T/lr.json" >"$T/lr.out" 2>"$T/lr.err")
RC=$?
# The lab's base is one short closed-loop run per cell: on a loaded machine an open-loop run
# may not keep up with its share of it, and is then saturated, which makes the exit 2.
want=$(jq 'if any(.runs[]; .open_loop.saturated == true) then 2 else 0 end' "$T/lr.json")
check_eq "lab --rates 30%,60%: exit 0, or 2 when a run was saturated (here $want)" "$want" "$RC"
rcheck "lab --rates: 4 closed-loop and 8 open-loop runs, each at its share of its cell's max" \
    "$T/lr.json" '(.runs | length) == 12 and ([.runs[] | select(.open_loop == null)] | length) == 4
     and all(.runs[] | select(.open_loop != null); .open_loop.rate_share as $s
       | ($s == 0.3 or $s == 0.6) and (.open_loop.rate - $s * .open_loop.rate_basis_ops_per_s | fabs) < 1)'
check "lab --rates: the open-loop table is printed" grep -q "open loop (latency" "$T/lr.out"
check "lab --rates: the 60 % headline, unix against tcp, per mode" \
    test "$(grep -c '^  headline, .* at 60 % of each one.s maximum: unix÷tcp p99' "$T/lr.out")" -eq 2
mkdir -p "$T/lo"
(cd "$T/lo" && TMPDIR="$T/lo" timeout 60 "$HOPBENCH" lab overload -c 32 -d 2 --json "$T/lo.json" \
    >"$T/lo.out" 2>"$T/lo.err")
check_eq "lab overload: exit 0 (connects wait for room; none reaches --timeout)" 0 "$?"
rcheck "lab overload: connect mode only, tcp drops SYNs, unix retries EAGAIN, no errors" \
    "$T/lo.json" '(.runs | length) == 2 and all(.runs[]; .mode == "connect" and .connections == 32)
     and (.runs[0].observed.net_delta["TcpExt.ListenOverflows"] > 0)
     and (.runs[1].connect_retries > 0) and all(.runs[]; errors_zero)'
check "lab overload: the overload table is printed" grep -q "^overload: how each transport fails" \
    "$T/lo.out"
check "lab overload: unix's row shows its connect retries" \
    grep -Eq "^  unix .* $(jq -r '.runs[1].connect_retries' "$T/lo.json" | grouped) +[0-9,]+\$" "$T/lo.out"

done_testing
