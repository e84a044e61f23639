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
t_start=$(date +%s)
expect_rc "run --reps 4: exit 0" 0 abba \
    run echo "$tcp" "$uds" -d 0.2 --warmup 0.05 --reps 4 --jsonl "$T/abba.jsonl" --json "$j"
rcheck "ABBA order recorded run by run" "$j" '[.runs[].cell] == [0,1,1,0,0,1,1,0]'
rcheck "reps numbered per cell" "$j" '[.runs[] | select(.cell == 1) | .rep] == [0,1,2,3]'
rcheck "plan recorded" "$j" '.plan | .reps == 4 and .order == "abba" and .seed == 1'
# 8 runs of 0.25 s: a document stamped when it was written would say >= t_start + 2.
rcheck "started_unix_s: when the invocation started" "$j" \
    ".started_unix_s >= $t_start and .started_unix_s <= $t_start + 1"
rcheck "summary: n, median within min-max, per cell" "$j" \
    '[.summary.cells[] | .valid == 4 and (.metrics.ops_per_s | .n == 4 and .min <= .median
      and .median <= .max and .sd >= 0)] | all'
rcheck "summary: the second cell against the first, with interval and p" "$j" \
    '.summary.cells[1].metrics.p50_ns.vs_first | (.p > 0 and .p <= 1 and .ci_lo <= .ratio
      and .ratio <= .ci_hi and (.text | test("^(~ )?[0-9.]+× \\[")))'
rcheck "summary: medians are the runs' medians" "$j" \
    '([.runs[] | select(.cell == 0) | .ops_per_s] | sort | (.[1] + .[2]) / 2) as $m
     | (.summary.cells[0].metrics.ops_per_s.median - $m | fabs) < 1e-6 * $m'
check_eq "--jsonl: a header line, then one line per run" 9 "$(wc -l <"$T/abba.jsonl")"
check "--jsonl: the header: schema, tool, command line, machine, start, plan" \
    jtrue -s --slurpfile d "$j" '.[0] | .record == "header" and .schema == "hopbench.evidence/1"
      and .tool == $d[0].tool and .command == "run" and .argv == $d[0].argv
      and .machine == $d[0].machine and .placement == $d[0].placement
      and .started_unix_s == $d[0].started_unix_s and .plan == $d[0].plan' "$T/abba.jsonl"
check "--jsonl: then the runs, each {record: run} and the evidence's run record" \
    jtrue -s --slurpfile d "$j" '.[1:] | all(.[]; .record == "run")
      and map(del(.record)) == $d[0].runs' "$T/abba.jsonl"

# A second invocation appends its own header and runs; compare and merge read the JSONL.
expect_rc "run --jsonl again (appends): exit 0" 0 abba2 \
    run echo "$tcp" "$uds" -d 0.2 --warmup 0.05 --reps 2 --jsonl "$T/abba.jsonl" --json "$T/abba2.json"
check "--jsonl appended: two headers, 8 + 4 runs" \
    jtrue -s '(map(select(.record == "header")) | length) == 2 and .[9].record == "header"
      and (map(select(.record == "run")) | length) == 12' "$T/abba.jsonl"
expect_rc "compare reads a JSONL: exit 0" 0 cj compare "$j" "$T/abba.jsonl"
check_eq "compare JSONL: every run of both invocations (n=4+6 per metric and cell)" 12 \
    "$(grep -c 'n=4+6)$' "$T/cj.out")"
check "compare JSONL: the header names the file and its 12 runs" \
    grep -q "^new: $T/abba.jsonl (12 runs, 12 valid)" "$T/cj.out"
expect_rc "merge reads a JSONL: exit 0" 0 mj merge "$j" "$T/abba.jsonl" -o "$T/mj.json"
rcheck "merge JSONL: the same cell and rep added up across the files" "$T/mj.json" \
    '(.runs | length) == 12 and ([.runs[] | select(.merged_runs == 2)] | length) == 8
     and .machine.hostname != null and all(.runs[]; has("record") | not)'
jq -c '.schema = "hopbench.evidence/9"' <<<"$(head -n 1 "$T/abba.jsonl")" >"$T/bad.jsonl"
tail -n +2 "$T/abba.jsonl" >>"$T/bad.jsonl"
expect_rc "compare a JSONL of another schema: exit 1" 1 cbad compare "$j" "$T/bad.jsonl"
one_line "compare JSONL of another schema: one line naming file and line" "$T/cbad.err" \
    'bad\.jsonl: line 1: .*schema "hopbench.evidence/9"'
{ head -n 9 "$T/abba.jsonl"; jq -c '.schema = "hopbench.evidence/9"' <<<"$(sed -n 10p "$T/abba.jsonl")"; } \
    >"$T/bad2.jsonl"
expect_rc "merge a JSONL whose second header has another schema: exit 1" 1 mbad \
    merge "$j" "$T/bad2.jsonl"
one_line "merge JSONL schema mismatch: one line naming file and line" "$T/mbad.err" \
    'bad2\.jsonl: line 10: .*schema'
{ head -n 3 "$T/abba.jsonl"; echo '{"record": "other"}'; } >"$T/bad3.jsonl"
expect_rc "compare a JSONL with an unknown record: exit 1" 1 cbad3 compare "$j" "$T/bad3.jsonl"
one_line "compare JSONL unknown record: one line naming file and line" "$T/cbad3.err" \
    'bad3\.jsonl: line 4: not hopbench JSONL'
check "table: summary printed" grep -q "^summary over repetitions" "$T/abba.out"
check "table: comparison printed" grep -Eq "vs first: (~ )?[0-9.]+× " "$T/abba.out"
# Each figure, the mean latency beside p50 included, against the first endpoint: the ratio of
# medians with its interval whether or not it is significant ("~" before it when not).
check_eq "table: every figure's ratio with its interval, n=4+4" 6 "$(grep -Ec \
    '^  (ops/s|p50 µs|mean µs|p99 µs|p99\.9 µs|cpu µs/op) .*   vs first: (~ )?[0-9.]+× \[[0-9.]+×, [0-9.]+×\] \(p=[0-9.e-]+ n=4\+4\)$' \
    "$T/abba.out")"
check "table: the mean latency right after p50" \
    sh -c "grep -A1 '^  p50 µs ' '$T/abba.out' | grep -q '^  mean µs '"
rcheck "summary: the mean latency per cell, the median of the runs' means" "$j" \
    '.summary.cells[1].metrics.mean_ns.median as $got
     | [.runs[] | select(.cell == 1) | .latency_ns.mean] | sort | ((.[1] + .[2]) / 2) as $m
     | ($got - $m | fabs) <= 1e-6 * $m'

hb rnd1 run echo "$tcp" "$uds" -d 0.1 --warmup 0 --reps 3 --order random --seed 7 --json "$T/rnd1.json"
hb rnd2 run echo "$tcp" "$uds" -d 0.1 --warmup 0 --reps 3 --order random --seed 7 --json "$T/rnd2.json"
check_eq "--order random --seed 7: the same order twice" \
    "$(jq -c '[.runs[].cell]' "$T/rnd1.json")" "$(jq -c '[.runs[].cell]' "$T/rnd2.json")"
rcheck "--order random: each cell 3 times" "$T/rnd1.json" \
    '([.runs[] | select(.cell == 0)] | length) == 3 and ([.runs[] | select(.cell == 1)] | length) == 3'
# Seeds up to 2^53-1, the largest every JSON reader (jq: a double) keeps exact.
expect_rc "--seed 2^53-1: exit 0" 0 bigseed run echo "$tcp" "$uds" -d 0.05 --warmup 0 --reps 2 \
    --order random --seed 9007199254740991 --json "$T/bigseed.json" --jsonl "$T/bigseed.jsonl"
check_eq "--seed 2^53-1: recorded exactly in the evidence and the JSONL header" \
    "9007199254740991 9007199254740991" \
    "$(jq '.plan.seed' "$T/bigseed.json") $(head -n 1 "$T/bigseed.jsonl" | jq '.plan.seed')"
check "--seed 2^53-1: written as that integer" grep -q '"seed": *9007199254740991[,}]' "$T/bigseed.json"
expect_rc "run --seed 2^53: exit 64" 64 seed53 run echo "$tcp" --seed 9007199254740992
one_line "run --seed 2^53: one line naming the limit" "$T/seed53.err" \
    "^hopbench: --seed: '9007199254740992' is not a whole number in 0\.\.9007199254740991$"
expect_rc "lab --seed 2^64-1: exit 64" 64 seed64 lab --seed 18446744073709551615
one_line "lab --seed 2^64-1: one line" "$T/seed64.err" "^hopbench: --seed: .* in 0\.\.9007199254740991$"

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
lines=$(jq -s 'map(select(.record == "run")) | length' "$T/int.jsonl")
check "Ctrl-C: the JSONL holds the finished runs" test "$lines" -ge 2
rcheck "Ctrl-C: the evidence holds the JSONL's runs and the cut one" "$T/int.json" \
    '.interrupted == true and (.runs | length) >= '"$lines"' and (.runs | length) <= '"$lines"' + 1'
# Invalid runs among repetitions: a server that stalls 400 ms after every 1000th request,
# with --timeout 0.1, fails the reps of 600 requests that cross the 1000th and the 2000th
# (reps 1 and 3 of cell 1); reps 0 and 2 are valid. They count; the others are shown, left out.
start_server st --listen tcp://127.0.0.1:0 --threads 1 --stall-every 1000 --stall-ms 400 ||
    done_testing
st_pid=$SRV_PID
stall=tcp://127.0.0.1:$SRV_PORT
expect_rc "--reps with invalid runs: exit 2" 2 inv \
    run echo "$tcp" "$stall" -n 600 --warmup 0 --reps 4 --timeout 0.1 --json "$T/inv.json"
rcheck "--reps with invalid runs: cell 1's reps 1 and 3 invalid, 0 and 2 valid" "$T/inv.json" \
    '[.runs[] | select(.cell == 1) | [.rep, .valid]] == [[0,true],[1,false],[2,true],[3,false]]
     and all(.runs[] | select(.cell == 1 and .valid == false); .errors.timeout > 0)'
rcheck "--reps with invalid runs: the summary counts the valid ones (2 of 4)" "$T/inv.json" \
    '.summary.cells[1] | .runs == 4 and .valid == 2 and .metrics.ops_per_s.n == 2
     and .metrics.p99_ns.vs_first.n == 2 and .metrics.p99_ns.vs_first.n_first == 4'
rcheck "--reps with invalid runs: medians over the valid runs only" "$T/inv.json" \
    '([.runs[] | select(.cell == 1 and .valid) | .ops_per_s] | add / 2) as $m
     | (.summary.cells[1].metrics.ops_per_s.median - $m | fabs) < 1e-6 * $m'
check "--reps with invalid runs: 'n=2 valid of 4' printed" \
    grep -q "^$stall reuse (n=2 valid of 4)$" "$T/inv.out"
check "--reps with invalid runs: the comparison is over 4+2 runs" \
    grep -Eq "^  ops/s .*vs first: (~|[+-][0-9]).*n=4\+2\)$" "$T/inv.out"
check_eq "--reps with invalid runs: their rows show '-' for vs first" 2 \
    "$(grep -Ec "^$stall +reuse .* -$" "$T/inv.out")"
check_eq "--reps with invalid runs: an errors line per invalid run" 2 \
    "$(grep -c "^errors: $stall reuse 64 B: timeout=" "$T/inv.out")"
expect_rc "compare with invalid runs: exit 0" 0 cinv compare "$T/inv.json" "$T/inv.json"
check_eq "compare: the invalid runs dropped (cell 1: n=2+2, cell 0: n=4+4)" "6 6" \
    "$(grep -c "^echo $stall .*n=2+2)$" "$T/cinv.out") $(grep -c "^echo $tcp .*n=4+4)$" "$T/cinv.out")"
check "compare: the side's header counts 6 valid of 8" \
    grep -q "^old: $T/inv.json (8 runs, 6 valid)" "$T/cinv.out"
stop_pid "$st_pid"

# A run cut short is shown and marked, but left out of the summary; by itself it gives 130, not 2.
spawn cut run echo "$tcp" "$uds" -d 1.5 --warmup 0 --reps 2 --jsonl "$T/cut.jsonl" --json "$T/cut.json"
cut_pid=$SPAWNED
for ((i = 0; i < 200; i++)); do
    [ "$(wc -l 2>/dev/null <"$T/cut.jsonl" || echo 0)" -ge 2 ] && break
    sleep 0.05
done
sleep 0.3
kill -INT "$cut_pid"
reap "$cut_pid" 10
check_eq "a run cut short: exit 130" 130 "$RC"
rcheck "a run cut short: recorded as interrupted, both runs kept" "$T/cut.json" \
    '(.runs | length) == 2 and .runs[0].interrupted == false and .runs[1].interrupted == true
     and .runs[1].valid == true and .runs[1].cell == 1'
rcheck "a run cut short: left out of the summary (cell 1: n=0 valid of 1)" "$T/cut.json" \
    '.summary.cells[1] | .runs == 1 and .valid == 0 and .metrics.ops_per_s.n == 0
     and .metrics.ops_per_s.vs_first.text == "n/a (n=1+0)"'
check "a run cut short: marked in the summary" \
    grep -q "^$uds reuse (n=0 valid of 1; 1 cut short by Ctrl-C)$" "$T/cut.out"
check "a run cut short: a 'cut short:' line names it" \
    grep -Eq "^cut short: $uds reuse 64 B: Ctrl-C ended it after 0\.[0-9]+ s of its window; left out" \
    "$T/cut.out"
check "a run cut short: no 'invalid' verdict" sh -c "! grep -q 'results are invalid' '$T/cut.err'"
check "a run cut short: its row shows '-' for vs first" grep -Eq "^$uds +reuse .* -$" "$T/cut.out"
jq '.runs[0].interrupted = true' "$j" >"$T/abba-cut.json"
expect_rc "compare with a run cut short: exit 0" 0 ccut compare "$j" "$T/abba-cut.json"
check_eq "compare: the run cut short is left out (n=4+3)" 6 "$(grep -c 'n=4+3)$' "$T/ccut.out")"
check "compare: the side's header counts it out" \
    grep -q "^new: $T/abba-cut.json (8 runs, 7 valid)" "$T/ccut.out"

# GNU timeout sends SIGINT to hopbench and then to its process group: two signals at once
# are one interrupt, never the abort. Six tries: the race hit about 1 in 3. The signal comes
# after two runs of 0.3 s at least: 1.2 s, SAN times that under a sanitizer (a TSan run's start
# and exit took about 1 s on a busy box, and one run or none had ended by 1.2 s).
to_s=$(san_s 1.2)
for i in 1 2 3 4 5 6; do
    RC=0
    timeout -k 5 --preserve-status -s INT "$to_s" "$HOPBENCH" run echo "$tcp" "$uds" -d 0.3 \
        --warmup 0 --reps 20 --jsonl "$T/to$i.jsonl" --json "$T/to$i.json" \
        >"$T/to$i.out" 2>"$T/to$i.err" || RC=$?
    check_eq "timeout -s INT ($i): exit 130" 130 "$RC"
    rcheck "timeout -s INT ($i): evidence written, interrupted (at most the last run cut short)" "$T/to$i.json" \
        '.interrupted == true and (.runs | length) >= 2 and all(.runs[:-1][]; .interrupted == false)'
    check_eq "timeout -s INT ($i): the JSONL holds the evidence's runs" \
        "$(jq -c '[.runs[] | [.cell, .rep, .ops]]' "$T/to$i.json" 2>&1)" \
        "$(jq -c -s '[.[] | select(.record == "run") | [.cell, .rep, .ops]]' "$T/to$i.jsonl" 2>&1)"
    check "timeout -s INT ($i): the table and the evidence path printed" \
        sh -c "grep -q '^endpoint ' '$T/to$i.out' && grep -qx 'evidence: $T/to$i.json' '$T/to$i.out'"
done

stop_pid "$r_pid"
done_testing
