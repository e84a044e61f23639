#!/bin/bash
# Repetitions: ABBA or seeded order, one record per run, --jsonl streamed as
# runs finish (Ctrl-C keeps them), the summary with medians and comparisons.
# shellcheck disable=SC2016 # $vars in single quotes are jq variables
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

sock=$T/r.sock
start_server r --listen tcp://127.0.0.1:0 --listen "unix:$sock" || done_testing
r_pid=$SRV_PID
tcp=tcp://127.0.0.1:$SRV_PORT
uds=unix:$sock

j=$T/abba.json
expect_rc "run --reps 4: exit 0" 0 abba \
    run echo "$tcp" "$uds" -d 0.2 --warmup 0.05 --reps 4 --jsonl "$T/abba.jsonl" --json "$j"
rcheck "ABBA order recorded run by run" "$j" '[.runs[].cell] == [0,1,1,0,0,1,1,0]'
rcheck "reps numbered per cell" "$j" '[.runs[] | select(.cell == 1) | .rep] == [0,1,2,3]'
rcheck "plan recorded" "$j" '.plan | .reps == 4 and .order == "abba" and .seed == 1'
rcheck "summary: n, median within min-max, per cell" "$j" \
    '[.summary.cells[] | .valid == 4 and (.metrics.ops_per_s | .n == 4 and .min <= .median
      and .median <= .max and .sd >= 0)] | all'
rcheck "summary: the second cell against the first, with interval and p" "$j" \
    '.summary.cells[1].metrics.p50_ns.vs_first | (.p > 0 and .p <= 1 and .ci_lo <= .ratio
      and .ratio <= .ci_hi and (.text | test("^~|^[+-]")))'
rcheck "summary: medians are the runs' medians" "$j" \
    '([.runs[] | select(.cell == 0) | .ops_per_s] | sort | (.[1] + .[2]) / 2) as $m
     | (.summary.cells[0].metrics.ops_per_s.median - $m | fabs) < 1e-6 * $m'
check_eq "--jsonl: one line per run" 8 "$(wc -l <"$T/abba.jsonl")"
check "--jsonl: every line is a run record" \
    sh -c "jq -e -s 'length == 8 and all(.[]; has(\"cell\") and has(\"histogram\"))' '$T/abba.jsonl' >/dev/null"
check "table: summary printed" grep -q "^summary over repetitions" "$T/abba.out"
check "table: comparison printed" grep -Eq "vs first: (~|[+-][0-9])" "$T/abba.out"

hb rnd1 run echo "$tcp" "$uds" -d 0.1 --warmup 0 --reps 3 --order random --seed 7 --json "$T/rnd1.json"
hb rnd2 run echo "$tcp" "$uds" -d 0.1 --warmup 0 --reps 3 --order random --seed 7 --json "$T/rnd2.json"
check_eq "--order random --seed 7: the same order twice" \
    "$(jq -c '[.runs[].cell]' "$T/rnd1.json")" "$(jq -c '[.runs[].cell]' "$T/rnd2.json")"
rcheck "--order random: each cell 3 times" "$T/rnd1.json" \
    '([.runs[] | select(.cell == 0)] | length) == 3 and ([.runs[] | select(.cell == 1)] | length) == 3'
expect_rc "--order bogus: exit 64" 64 bad run echo "$tcp" --order bogus
expect_rc "--reps 0: exit 64" 64 bad0 run echo "$tcp" --reps 0

# --cooldown: 3 pauses of 0.4 s between 4 runs of 0.1 s
t0=$(now_ms)
expect_rc "--cooldown 0.4: exit 0" 0 cool run echo "$tcp" "$uds" -d 0.1 --warmup 0 --reps 2 \
    --cooldown 0.4 --sample-ms 0
check "--cooldown 0.4: the pauses happen (>= 1.6 s in all)" test $(($(now_ms) - t0)) -ge 1600

# Ctrl-C in the middle: the finished runs are in the JSONL and in the evidence.
spawn int run echo "$tcp" "$uds" -d 0.4 --warmup 0 --reps 20 --jsonl "$T/int.jsonl" \
    --json "$T/int.json"
int_pid=$SPAWNED
sleep 2
kill -INT "$int_pid"
reap "$int_pid" 10
check_eq "Ctrl-C during --reps: exit 130" 130 "$RC"
lines=$(wc -l <"$T/int.jsonl")
check "Ctrl-C: the JSONL holds the finished runs" test "$lines" -ge 2
rcheck "Ctrl-C: the evidence holds the JSONL's runs and the cut one" "$T/int.json" \
    '.interrupted == true and (.runs | length) >= '"$lines"' and (.runs | length) <= '"$lines"' + 1'
# GNU timeout sends SIGINT to hopbench and then to its process group: two signals at once
# are one interrupt, never the abort. Six tries: the race hit about 1 in 3.
for i in 1 2 3 4 5 6; do
    RC=0
    timeout -k 5 --preserve-status -s INT 1.2 "$HOPBENCH" run echo "$tcp" "$uds" -d 0.3 \
        --warmup 0 --reps 20 --jsonl "$T/to$i.jsonl" --json "$T/to$i.json" \
        >"$T/to$i.out" 2>"$T/to$i.err" || RC=$?
    check_eq "timeout -s INT ($i): exit 130" 130 "$RC"
    rcheck "timeout -s INT ($i): evidence written, interrupted, every run" "$T/to$i.json" \
        '.interrupted == true and (.runs | length) >= 2 and .runs[-1].interrupted == true'
    check_eq "timeout -s INT ($i): the JSONL holds the evidence's runs" \
        "$(jq -c '[.runs[] | [.cell, .rep, .ops]]' "$T/to$i.json" 2>&1)" \
        "$(jq -c -s '[.[] | [.cell, .rep, .ops]]' "$T/to$i.jsonl" 2>&1)"
    check "timeout -s INT ($i): the table and the evidence path printed" \
        sh -c "grep -q '^endpoint ' '$T/to$i.out' && grep -qx 'evidence: $T/to$i.json' '$T/to$i.out'"
done

stop_pid "$r_pid"
done_testing
