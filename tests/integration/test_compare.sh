#!/bin/bash
# compare and merge: evidence files read back. compare matches cells and
# prints benchstat-style deltas; merge adds up runs of the same cell and rep
# from processes that loaded one server at the same time, histograms exactly.
# shellcheck disable=SC2016 # $vars in single quotes are jq variables
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

start_server c --listen tcp://127.0.0.1:0 || done_testing
c_pid=$SRV_PID
tcp=tcp://127.0.0.1:$SRV_PORT
a=$T/a.json
b=$T/b.json

# mcheck NAME MERGED A B EXPR : EXPR is true for MERGED, with the inputs as $a and $b.
mcheck() {
    local name=$1 m=$2 fa=$3 fb=$4 expr=$5 got
    if jq -e --slurpfile a "$fa" --slurpfile b "$fb" "$JQ_DEFS $expr" "$m" >/dev/null 2>&1; then
        ok "$name"
    else
        got=$(jq -c --slurpfile a "$fa" --slurpfile b "$fb" "$JQ_DEFS $expr" "$m" 2>&1 | head -c 300)
        not_ok "$name" "jq '$(echo "$expr" | tr -s ' \n' ' ')' on $(basename "$m") gave: $got"
    fi
}

# --- compare ------------------------------------------------------------------------

expect_rc "run --reps 4 (old): exit 0" 0 a run echo "$tcp" --reps 4 -d 0.2 --warmup 0.05 --json "$a"
expect_rc "run --reps 4 (new): exit 0" 0 b run echo "$tcp" --reps 4 -d 0.2 --warmup 0.05 --json "$b"

expect_rc "compare a file with itself: exit 0" 0 self compare "$a" "$a"
check_eq "compare with itself: a row per metric, n=4+4" 5 "$(grep -c 'n=4+4)$' "$T/self.out")"
check_eq "compare with itself: ~ everywhere" "" "$(grep 'n=4+4)$' "$T/self.out" | grep -v '  ~ (p=')"

expect_rc "compare two runs of one endpoint: exit 0" 0 ab compare "$a" "$b"
check "compare: the cell is listed" \
    grep -Eq "^$tcp reuse 64 B c=1 p=1 +[0-9]+ ±[0-9.]+ % \(n=4\) +[0-9]+ ±[0-9.]+ % \(n=4\) +(~|[+-][0-9])" \
    "$T/ab.out"
check_eq "compare: n=4+4 in each metric's table" 5 "$(grep -c 'n=4+4)$' "$T/ab.out")"
check "compare: every metric has a table" \
    sh -c "grep -q '^ops/s ' '$T/ab.out' && grep -q '^p50 µs ' '$T/ab.out' &&
           grep -q '^p99.9 µs ' '$T/ab.out' && grep -q '^client cpu µs/op ' '$T/ab.out'"

expect_rc "compare a missing file: exit 1" 1 miss compare "$a" "$T/nope.json"
one_line "compare a missing file: one line naming it" "$T/miss.err" 'nope\.json: cannot read'
mkdir -p "$T/adir"
expect_rc "compare a directory: exit 1" 1 cdir compare "$a" "$T/adir"
one_line "compare a directory: one line saying so" "$T/cdir.err" 'adir: cannot read: Is a directory$'
expect_rc "merge a directory: exit 1" 1 mdir merge "$T/adir" "$a"
one_line "merge a directory: one line saying so" "$T/mdir.err" 'adir: cannot read: Is a directory$'
echo '{"hello": 1}' >"$T/plain.json"
expect_rc "compare a JSON file that is not evidence: exit 1" 1 plain compare "$T/plain.json" "$a"
one_line "compare non-evidence: one line naming it" "$T/plain.err" 'plain\.json: not hopbench evidence'
jq '.schema = "hopbench.evidence/9"' "$a" >"$T/other.json"
expect_rc "compare another schema: exit 1" 1 other compare "$a" "$T/other.json"
one_line "compare another schema: one line" "$T/other.err" 'other\.json: .*schema'
echo '{"schema": "hopbench.evid' >"$T/cut.json"
expect_rc "compare a cut-off file: exit 1" 1 cut compare "$T/cut.json" "$a"
one_line "compare a cut-off file: one line" "$T/cut.err" 'cut\.json: not JSON'
expect_rc "compare with one file: exit 64" 64 one compare "$a"
expect_rc "compare with three files: exit 64" 64 three compare "$a" "$a" "$a"
expect_rc "compare with no file: exit 64" 64 none compare
expect_rc "compare --help: exit 0" 0 chelp compare --help
check "compare --help: usage printed" grep -q '^usage: hopbench compare OLD.json NEW.json' \
    "$T/chelp.out"

# --- merge --------------------------------------------------------------------------

# Two processes loading the same server at the same time, as two hosts would.
p1=$T/p1.json
p2=$T/p2.json
spawn p1 run echo "$tcp" --reps 2 -d 0.3 --warmup 0.05 --json "$p1"
pid1=$SPAWNED
spawn p2 run echo "$tcp" --reps 2 -d 0.3 --warmup 0.05 --json "$p2"
pid2=$SPAWNED
reap "$pid1" 20
rc1=$RC
reap "$pid2" 20
check_eq "two concurrent runs: both exit 0" "0 0" "$rc1 $RC"

m=$T/m.json
expect_rc "merge -o: exit 0" 0 merge merge "$p1" "$p2" -o "$m"
rcheck "merge: a valid evidence document" "$m" \
    '.schema == "hopbench.evidence/1" and .command == "merge" and .valid == true
     and .argv[1] == "merge" and (.machine | has("hostname")) and (.runs | length) == 2'
mcheck "merge: merged_from names the inputs" "$m" "$p1" "$p2" \
    '.merged_from == [$a[0].argv[-1], $b[0].argv[-1]]'
mcheck "merge: ops per rep are the sum of the two files'" "$m" "$p1" "$p2" \
    '[.runs[] | . as $r | ([$a[0].runs[], $b[0].runs[]] | map(select(.rep == $r.rep) | .ops)
      | add) == $r.ops and $r.merged_runs == 2] | all'
rcheck "merge: histogram.total == ops, histogram consistent" "$m" \
    '[.runs[] | .histogram.total == .ops and .ops > 0 and hist_ok and lat_ok] | all'
rcheck "merge: connections and threads summed" "$m" \
    'all(.runs[]; .connections == 2 and .threads == 2)'
rcheck "merge: ops_per_s is ops over the longest window" "$m" \
    'all(.runs[]; (.ops_per_s - .ops / .window_s | fabs) < 1e-6 * .ops_per_s)'
mcheck "merge: p50 between the inputs' p50s" "$m" "$p1" "$p2" \
    '[.runs[] | . as $r | [$a[0].runs[], $b[0].runs[]] | map(select(.rep == $r.rep)
      | .latency_ns.p50) | min <= $r.latency_ns.p50 and $r.latency_ns.p50 <= max] | all'
mcheck "merge: errors and client CPU summed" "$m" "$p1" "$p2" \
    '([.runs[] | . as $r | [$a[0].runs[], $b[0].runs[]] | map(select(.rep == $r.rep))
      | (map(.client_cpu_ns) | add) == $r.client_cpu_ns
        and (map(.errors_total) | add) == $r.errors_total] | all) and all(.runs[]; errors_sum)'
check "merge -o: prints where the evidence is" grep -q "^evidence: $m\$" "$T/merge.out"
expect_rc "compare accepts the merged file" 0 cm compare "$m" "$m"
check_eq "compare merged with itself: ~ with n=2+2" "5 0" \
    "$(grep -c 'n=2+2)$' "$T/cm.out") $(grep 'n=2+2)$' "$T/cm.out" | grep -vc '  ~ (p=')"
expect_rc "compare a run with the merge: exit 0" 0 am compare "$p1" "$m"
check "compare: cells of other connections are listed apart" \
    grep -q "^only in NEW: $tcp reuse 64 B c=2 p=1" "$T/am.out"

expect_rc "merge a file with itself to stdout: exit 0" 0 twice merge "$a" "$a"
mcheck "merge with itself: ops and histograms doubled exactly" "$T/twice.out" "$a" "$a" \
    '[.runs[] | .ops] == [$a[0].runs[] | .ops * 2]
     and [.runs[] | .histogram.total] == [$a[0].runs[] | .histogram.total * 2]
     and [.runs[] | .histogram.counts] == [$a[0].runs[] | .histogram.counts | map([.[0], .[1] * 2])]
     and [.runs[] | .histogram | .min, .max] == [$a[0].runs[] | .histogram | .min, .max]'
mcheck "merge with itself: phases doubled too" "$T/twice.out" "$a" "$a" \
    '[.runs[] | .phases.ttfb.histogram.total] == [$a[0].runs[] | .phases.ttfb.histogram.total * 2]'

jq '.runs[1].histogram.significant_digits = 2' "$a" >"$T/layout.json"
expect_rc "merge histograms of another layout: exit 1" 1 layout merge "$a" "$T/layout.json"
one_line "merge another layout: one line naming file and run" "$T/layout.err" \
    'layout\.json: run 1: histogram layout differs'
expect_rc "merge a non-evidence file: exit 1" 1 mplain merge "$a" "$T/plain.json"
one_line "merge non-evidence: one line" "$T/mplain.err" 'plain\.json: not hopbench evidence'
expect_rc "merge a missing file: exit 1" 1 mmiss merge "$a" "$T/nope.json" -o "$T/x.json"
check "merge failure: no output file" test ! -e "$T/x.json"
expect_rc "merge one file: exit 64" 64 mone merge "$a"
expect_rc "merge -o without a file: exit 64" 64 mo merge "$a" "$b" -o
expect_rc "merge --help: exit 0" 0 mhelp merge --help
check "merge --help: usage printed" grep -q '^usage: hopbench merge A.json B.json' "$T/mhelp.out"

stop_pid "$c_pid"
done_testing
