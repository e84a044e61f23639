#!/usr/bin/env bash
# test_rate_base: the base of `run --rate N%`, and saturated open-loop runs.
#  - Two endpoints, each its own server (one worker, 200 µs per request: a maximum of about
#    5,000 ops/s), --reps 3 at 20 %: each endpoint's base is measured once, before the
#    open-loop runs: the evidence records 3 probes per endpoint, whose median is the base,
#    every run of an endpoint asks 20 % of that same base, the text has one "rate base:"
#    line per endpoint, and each server accepted exactly 1 (the preflight) + 3 probes x 2
#    + 3 runs x 2 connections: no probe more than the reps.
#  - --rate-base skips the probes and sets the target exactly: 50 % of 2000 and of 4000
#    ops/s, 4 connections, 1.6 s, no warm-up: ops = rate x window (1600 and 3200), and each
#    server accepted 1 + 4 connections (no probe).
#  - A rate far above what the server can do (a 2 ms delay per request, one worker: at most
#    500 ops/s; asked 2000) is flagged saturated in the text and the evidence, is not valid
#    (the run's and the document's valid), is counted in the summary as saturated and left
#    out of it, and the exit code is 2 (invalid run) with one line on stderr saying so.
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

# --- probed once per endpoint, with reps ------------------------------------------------

if start_server pa --listen "unix:$T/a.sock" --threads 1 --delay-us 200; then
    a_pid=$SRV_PID a_out=$SRV_OUT
    if start_server pb --listen "unix:$T/b.sock" --threads 1 --delay-us 200; then
        b_pid=$SRV_PID b_out=$SRV_OUT
        expect_rc "--rate 20% --reps 3 over two endpoints: exit 0" 0 pr run echo \
            "unix:$T/a.sock" "unix:$T/b.sock" --rate 20% --reps 3 -c 2 -d 0.4 --warmup 0.1 \
            --json "$T/pr.json"
        rcheck "3 probes per endpoint, their median the base, recorded on every run" "$T/pr.json" \
            '.runs | length == 6 and all(.[]; .open_loop |
               .rate_basis_from == "probes" and .rate_basis_probes.runs == 3
               and (.rate_basis_probes.ops_per_s | length) == 3
               and (.rate_basis_probes.ops_per_s | sort | .[1]) == .rate_basis_ops_per_s
               and .rate_basis_probes.median == .rate_basis_ops_per_s
               and .rate_basis_probes.min == (.rate_basis_probes.ops_per_s | min)
               and .rate_basis_probes.max == (.rate_basis_probes.ops_per_s | max)
               and .rate_basis_probes.duration_s == 0.4)'
        rcheck "every run of an endpoint asks 20 % of the same base" "$T/pr.json" \
            '[.runs | group_by(.cell)[] | [.[].open_loop | [.rate_basis_probes, .rate]] | unique
              | length] == [1, 1]
             and all(.runs[]; (.open_loop.rate - 0.2 * .open_loop.rate_basis_ops_per_s | fabs) < 1e-6)'
        check_eq "the text: one rate base line per endpoint, with its 3 probes" 2 \
            "$(grep -c '^rate base: unix:.* ops/s, median of 3 closed-loop probes of 0.40 s \[.* – .*\] ±.* %; open loop at 20 %: [0-9,]* ops/s$' "$T/pr.out")"
        stop_server "$b_pid" "$b_out"
        check_eq "server b accepted 1 + 3 probes x 2 + 3 runs x 2 connections" 13 \
            "$(stopped_field connections)"
    fi
    stop_server "$a_pid" "$a_out"
    check_eq "server a accepted 1 + 3 probes x 2 + 3 runs x 2 connections" 13 \
        "$(stopped_field connections)"
fi

# --- --rate-base: no probe, the target exactly ------------------------------------------

load=(-c 4 -t 1 -d 1.6 --warmup 0)
if start_server ga --listen "unix:$T/ga.sock" --threads 1; then
    a_pid=$SRV_PID a_out=$SRV_OUT
    if start_server gb --listen "unix:$T/gb.sock" --threads 1; then
        b_pid=$SRV_PID b_out=$SRV_OUT
        expect_rc "--rate 50% --rate-base 2000,4000: exit 0" 0 given run echo "unix:$T/ga.sock" \
            "unix:$T/gb.sock" --rate 50% --rate-base 2000,4000 "${load[@]}" --json "$T/given.json"
        rcheck "--rate-base: rate = 50 % of each endpoint's base, ops = rate x window exactly" \
            "$T/given.json" '[.runs[] | {cell, ops, rate: .open_loop.rate,
                basis: .open_loop.rate_basis_ops_per_s, from: .open_loop.rate_basis_from,
                probes: .open_loop.rate_basis_probes, ok: (.valid and errors_zero)}]
             == [{cell: 0, ops: 1600, rate: 1000, basis: 2000, from: "given", probes: null, ok: true},
                 {cell: 1, ops: 3200, rate: 2000, basis: 4000, from: "given", probes: null, ok: true}]'
        check "--rate-base: the text says where each base comes from" \
            grep -q '^rate base: unix:.*gb.sock 4,000 ops/s (--rate-base); open loop at 50 %: 2,000 ops/s$' \
            "$T/given.out"
        stop_server "$b_pid" "$b_out"
        check_eq "--rate-base: server b accepted 1 + 4 connections (no probe)" 5 \
            "$(stopped_field connections)"
    fi
    stop_server "$a_pid" "$a_out"
    check_eq "--rate-base: server a accepted 1 + 4 connections (no probe)" 5 \
        "$(stopped_field connections)"
fi

# --- saturated: invalid, exit 2 ---------------------------------------------------------

if start_server slow --listen "unix:$T/slow.sock" --threads 1 --delay-us 2000; then
    expect_rc "2000 ops/s asked of a server that does 500: exit 2 (invalid run)" 2 sat run echo \
        "unix:$T/slow.sock" --rate 50% --rate-base 4000 --reps 2 -c 4 -d 0.5 --warmup 0.1 \
        --json "$T/sat.json"
    rcheck "saturated: flagged, not valid, the document not valid" "$T/sat.json" \
        '.valid == false and (.runs | length) == 2 and all(.runs[]; .open_loop.saturated
           and .open_loop.rate == 2000 and .open_loop.achieved_ops_per_s < 1000
           and .valid == false and errors_zero)'
    rcheck "saturated: counted in the summary, left out of its figures" "$T/sat.json" \
        '.summary.cells[0] | .runs == 2 and .valid == 0 and .saturated == 2
           and .metrics.ops_per_s.n == 0'
    one_line "saturated: one stderr line saying why the results are invalid" "$T/sat.err" \
        '^hopbench: results are invalid: 2 open-loop runs saturated \(below 99 % of the rate'
    check_eq "saturated: a line per run in the text" 2 \
        "$(grep -c '^saturated: unix:.*slow.sock reuse 64 B #[12]: kept up with .* of 2,000 ops/s (.*, below 99 %): invalid' "$T/sat.out")"
    check "saturated: the summary counts them" \
        grep -q '(n=0 valid of 2; 2 saturated (below 99 % of the rate))' "$T/sat.out"
    stop_server "$SRV_PID" "$SRV_OUT"
fi

done_testing
