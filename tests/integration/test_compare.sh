#!/bin/bash
# compare and merge: evidence files read back. compare matches cells and
# prints benchstat-style deltas; merge adds up runs of the same cell and rep
# from processes that loaded one server at the same time, histograms exactly. Both place
# a labelled run by its label: two runs on other ports and socket paths, labelled the same,
# match; unlabelled ones do not.
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
# Not significant: "~", then the ratio of medians with its interval all the same.
NS_RE='  ~ [0-9.]+× \[[0-9.]+×, [0-9.]+×\] \(p='
check_eq "compare with itself: a row per metric, n=4+4" 6 "$(grep -c 'n=4+4)$' "$T/self.out")"
check_eq "compare with itself: ~ and the ratio with its interval everywhere" "" \
    "$(grep 'n=4+4)$' "$T/self.out" | grep -Ev "$NS_RE")"

expect_rc "compare two runs of one endpoint: exit 0" 0 ab compare "$a" "$b"
# The runs are not pinned: where the two files' runs shared a CPU with the server in shares
# more than half apart (a loaded machine), compare says so in place of the delta, rightly.
MOVED='placement differed: new shared a CPU with its server in'
check "compare: the cell is listed" \
    grep -Eq "^echo $tcp reuse 64 B c=1 p=1 +[0-9,]+ ±[0-9.]+ % \(n=4\) +[0-9,]+ ±[0-9.]+ % \(n=4\) +((~ )?[0-9.]+× |$MOVED)" \
    "$T/ab.out"
check_eq "compare: n=4+4 in each metric's table" 6 \
    "$(grep -cE "n=4\+4\)\$|\(n=4\) +[0-9,.]+ ±[0-9.]+ % \(n=4\) +$MOVED" "$T/ab.out")"
check "compare: every metric has a table" \
    sh -c "grep -q '^ops/s ' '$T/ab.out' && grep -q '^p50 µs ' '$T/ab.out' &&
           grep -q '^mean µs ' '$T/ab.out' && grep -q '^p99.9 µs ' '$T/ab.out' &&
           grep -q '^client cpu µs/op ' '$T/ab.out'"

# Runs of one cell that waited differently: the cell names both waits, old then new, in every
# metric's table; the same wait, or a file from before the record had one, adds nothing.
check "compare: the runs waited blocking (run's default at -c 1)" \
    jq -e 'all(.runs[]; .wait == "block")' "$a"
check_eq "compare: one wait on both sides adds nothing to the cell" "" \
    "$(grep -F '[wait ' "$T/ab.out")"
jq '.runs[].wait = "epoll"' "$b" >"$T/epoll.json"
expect_rc "compare block against epoll: exit 0" 0 waits compare "$a" "$T/epoll.json"
check_eq "compare: the cell names both waits in every metric's table" 6 \
    "$(grep -c "^echo $tcp reuse 64 B c=1 p=1 \[wait block -> epoll\] " "$T/waits.out")"
jq 'del(.runs[].wait)' "$b" >"$T/nowait.json"
expect_rc "compare against runs with no wait recorded: exit 0" 0 nowait compare "$a" "$T/nowait.json"
check_eq "compare: a side with no wait recorded adds nothing to the cell" "" \
    "$(grep -F '[wait ' "$T/nowait.out")"

# merge and report say it the same way: merge adds the runs and names the cell on stderr, one
# line per output run, its wait null (as a rate_share the parts do not share); report's tables
# name the cell with both waits, for a file against the first and within a merged cell.
expect_rc "merge block with epoll: exit 0" 0 mwaits merge "$a" "$T/epoll.json" -o "$T/mwaits.json"
check_eq "merge: a line per merged run naming both waits as compare does" 4 \
    "$(grep -Ec "^hopbench merge: echo $tcp reuse 64 B c=2 p=1 \[wait block -> epoll\] rep [0-3]: runs that waited differently added as one" "$T/mwaits.err")"
rcheck "merge: the runs added, their wait null" "$T/mwaits.json" \
    '(.runs | length) == 4 and all(.runs[]; .merged_runs == 2 and .wait == null)'
expect_rc "merge of one wait: exit 0" 0 msame merge "$a" "$b" -o "$T/msame.json"
check_eq "merge of one wait: nothing on stderr, the wait kept" "0 true" \
    "$(wc -c <"$T/msame.err") $(jq 'all(.runs[]; .wait == "block")' "$T/msame.json")"
expect_rc "merge of runs with no wait recorded with epoll: exit 0" 0 mnone merge "$T/nowait.json" \
    "$T/epoll.json" -o "$T/mnone.json"
check_eq "merge: a part from before the wait was recorded takes the other's, nothing on stderr" \
    "0 true" "$(wc -c <"$T/mnone.err") $(jq 'all(.runs[]; .wait == "epoll")' "$T/mnone.json")"
expect_rc "merge of a merge whose waits differed with epoll: exit 0" 0 mnull merge \
    "$T/mwaits.json" "$T/epoll.json" -o "$T/mnull.json"
rcheck "merge: a part whose wait is null keeps the merged run's null" "$T/mnull.json" \
    'all(.runs[]; .wait == null and has("wait"))'
expect_rc "report block against epoll: exit 0" 0 rwaits report "$a" "$T/epoll.json" \
    -o "$T/rwaits.html"
check_eq "report: each metric's delta row names both waits" 6 \
    "$(grep -c "<tr><td>echo $tcp reuse 64 B c=1 p=1 \[wait block -&gt; epoll\]</td>" "$T/rwaits.html")"
expect_rc "report of one wait: exit 0" 0 rsame report "$a" "$b" -o "$T/rsame.html"
check_eq "report of one wait: no cell names a wait" 0 "$(grep -c '\[wait ' "$T/rsame.html")"
jq -s '.[0].runs += .[1].runs | .[0]' "$a" "$T/epoll.json" >"$T/mixed.json"
expect_rc "report of a file whose cell waited both ways: exit 0" 0 rmixed report \
    "$T/mixed.json" -o "$T/rmixed.html"
check "report: the cell of one file names both its waits" \
    grep -q "echo $tcp reuse 64 B c=1 p=1 \[wait block -&gt; epoll\]" "$T/rmixed.html"
expect_rc "report of that file against one of epoll: exit 0" 0 rmixed2 report \
    "$T/mixed.json" "$T/epoll.json" -o "$T/rmixed2.html"
check_eq "report: a cell whose own runs differ names the waits once" 0 \
    "$(grep -c '\[wait [a-z]* -&gt; [a-z]*\] \[wait ' "$T/rmixed2.html")"
expect_rc "report of block against a file whose first run blocked, its others polled: exit 0" 0 \
    rmixed3 report "$a" "$T/mixed.json" -o "$T/rmixed3.html"
check_eq "report: the later file's other wait is named, not only its first run's" 6 \
    "$(awk '/<table class="deltas">/ { d = 1 } d && /<\/table>/ { d = 0 } d' "$T/rmixed3.html" |
        grep -c "<tr><td>echo $tcp reuse 64 B c=1 p=1 \[wait block -&gt; epoll\]</td>")"

# Nothing comparable: exit 2 with one line on stderr, the tables' headers still printed.
jq '.runs = []' "$a" >"$T/noruns.json"
expect_rc "compare with a file of no runs: exit 2" 2 cnone compare "$a" "$T/noruns.json"
one_line "compare with no runs: one line on stderr" "$T/cnone.err" \
    '^hopbench compare: nothing comparable: no cell is in both files$'
check "compare with no runs: the only-in cells still listed" \
    grep -q "^only in OLD: echo $tcp reuse 64 B c=1 p=1 (4 valid of 4 runs)" "$T/cnone.out"
jq '.runs[].valid = false' "$b" >"$T/allbad.json"
expect_rc "compare with a file of no valid run: exit 2" 2 cbad compare "$a" "$T/allbad.json"
one_line "compare with no valid run: one line on stderr" "$T/cbad.err" \
    '^hopbench compare: nothing comparable: no cell has a valid run in both files$'

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
check_eq "compare merged with itself: ~ with n=2+2" "6 0" \
    "$(grep -c 'n=2+2)$' "$T/cm.out") $(grep 'n=2+2)$' "$T/cm.out" | grep -Evc "$NS_RE")"
expect_rc "compare a run with the merge (no cell in both): exit 2" 2 am compare "$p1" "$m"
one_line "compare with no cell in both: one line on stderr" "$T/am.err" \
    '^hopbench compare: nothing comparable: no cell is in both files$'
check "compare: cells of other connections are listed apart" \
    grep -q "^only in NEW: echo $tcp reuse 64 B c=2 p=1 (" "$T/am.out"

expect_rc "merge a file with itself to stdout: exit 0" 0 twice merge "$a" "$a"
mcheck "merge with itself: ops and histograms doubled exactly" "$T/twice.out" "$a" "$a" \
    '[.runs[] | .ops] == [$a[0].runs[] | .ops * 2]
     and [.runs[] | .histogram.total] == [$a[0].runs[] | .histogram.total * 2]
     and [.runs[] | .histogram | counters]
         == [$a[0].runs[] | .histogram | counters | map([.[0], .[1] * 2])]
     and [.runs[] | .histogram | .min, .max] == [$a[0].runs[] | .histogram | .min, .max]'
mcheck "merge with itself: phases doubled too" "$T/twice.out" "$a" "$a" \
    '[.runs[] | .phases.ttfb.histogram.total] == [$a[0].runs[] | .phases.ttfb.histogram.total * 2]'

# Open loop: two processes at --rate 2000 each are 4000 ops/s asked in all.
o1=$T/o1.json
o2=$T/o2.json
spawn o1 run echo "$tcp" --rate 2000 -d 0.3 --warmup 0.05 --json "$o1"
pid1=$SPAWNED
spawn o2 run echo "$tcp" --rate 2000 -d 0.3 --warmup 0.05 --json "$o2"
pid2=$SPAWNED
reap "$pid1" 20
rc1=$RC
reap "$pid2" 20
# open_rc FILE RC : "ok" when RC is the one the run's evidence calls for: no error, and 0, or 2
# when it says saturated. Three processes on a busy 2-CPU box can starve one of the runs for
# more than 1 % of its 0.3 s (a sanitizer build did, at 500/s too): that is what it says.
open_rc() {
    jq -e --argjson rc "$2" '.runs[0] | .errors_total == 0
        and $rc == (if .open_loop.saturated then 2 else 0 end)' "$1" >/dev/null 2>&1 &&
        echo ok || echo "exit $2"
}
check_eq "two concurrent open-loop runs: each exit 0, or 2 as saturated" "ok ok" \
    "$(open_rc "$o1" "$rc1") $(open_rc "$o2" "$RC")"
expect_rc "merge open-loop runs: exit 0" 0 mo merge "$o1" "$o2" -o "$T/mo.json"
mcheck "merge open loop: rate summed, achieved is the merged ops/s" "$T/mo.json" "$o1" "$o2" \
    '(.runs | length) == 1 and .runs[0] as $r | $r.open_loop as $o
     | $o.rate == 4000 and $o.achieved_ops_per_s == $r.ops_per_s and $o.arrivals == "constant"
     and $o.rate_share == null and $o.rate_basis_ops_per_s == null
     and $o.saturated == ($a[0].runs[0].open_loop.saturated or $b[0].runs[0].open_loop.saturated)'
mcheck "merge open loop: service histograms added exactly" "$T/mo.json" "$o1" "$o2" \
    '.runs[0].open_loop as $o | $o.service_histogram.total == .runs[0].ops
     and $o.service_histogram.total == ($a[0].runs[0].open_loop.service_histogram.total
                                        + $b[0].runs[0].open_loop.service_histogram.total)
     and $o.service_latency_ns.max == ([$a[0], $b[0]] | map(.runs[0].open_loop.service_histogram.max) | max)
     and ({runs: [.runs[0] | .histogram = .open_loop.service_histogram
                           | .latency_ns = .open_loop.service_latency_ns]} | .runs[0] | hist_ok)'
jq '.runs[0].open_loop.saturated = false' "$o1" >"$T/o1ok.json"
jq '.runs[0].open_loop.saturated = true' "$o2" >"$T/o2sat.json"
expect_rc "merge with one saturated part: exit 0" 0 mos merge "$T/o1ok.json" "$T/o2sat.json" -o "$T/mos.json"
rcheck "merge open loop: saturated if any part was" "$T/mos.json" '.runs[0].open_loop.saturated == true'
jq '.runs[0].open_loop.drain_s = 0.25' "$o1" >"$T/o1dr.json"
jq '.runs[0].open_loop.drain_s = 0.01' "$o2" >"$T/o2dr.json"
expect_rc "merge parts with different drains: exit 0" 0 mod merge "$T/o2dr.json" "$T/o1dr.json" \
    -o "$T/mod.json"
rcheck "merge open loop: the longest drain, as the longest window" "$T/mod.json" \
    '.runs[0].open_loop.drain_s == 0.25'
jq '.runs[0].open_loop |= (.rate_share = 0.5 | .rate_basis_ops_per_s = 4000)' "$o1" >"$T/o1s.json"
jq '.runs[0].open_loop |= (.rate_share = 0.5 | .rate_basis_ops_per_s = 3000)' "$o2" >"$T/o2s.json"
expect_rc "merge open-loop runs at one share: exit 0" 0 mss merge "$T/o1s.json" "$T/o2s.json" -o "$T/mss.json"
rcheck "merge open loop at one share: the share kept, the maxima summed" "$T/mss.json" \
    '(.runs | length) == 1 and (.runs[0].open_loop | .rate_share == 0.5 and .rate_basis_ops_per_s == 7000)'

jq '.runs[0].open_loop.arrivals = "poisson"' "$o2" >"$T/o2poi.json"
expect_rc "merge open-loop runs of two arrival kinds: exit 0" 0 mpoi merge "$o1" "$T/o2poi.json" \
    -o "$T/mpoi.json"
rcheck "merge open loop: arrivals null when the parts differ" "$T/mpoi.json" \
    '(.runs | length) == 1 and .runs[0].open_loop.arrivals == null and .runs[0].open_loop.rate == 4000'

# Runs at different rates, or of different protocols, are different cells: listed apart, by key.
spawn o3 run echo "$tcp" --rate 1000 -d 0.3 --warmup 0.05 --json "$T/o3.json"
reap "$SPAWNED" 20
expect_rc "compare runs at two rates: exit 2 (nothing comparable)" 2 crate compare "$o1" "$T/o3.json"
v1=$(jq '[.runs[] | select(.valid)] | length' "$o1") # 0 when saturated (above)
v3=$(jq '[.runs[] | select(.valid)] | length' "$T/o3.json")
check "compare: the only-in lines carry the rate" \
    sh -c "grep -qx 'only in OLD: echo $tcp reuse 64 B c=1 p=1 rate=2000/s ($v1 valid of 1 runs)' '$T/crate.out' &&
           grep -qx 'only in NEW: echo $tcp reuse 64 B c=1 p=1 rate=1000/s ($v3 valid of 1 runs)' '$T/crate.out'"
expect_rc "merge runs at two rates: exit 0" 0 mrate merge "$o1" "$T/o3.json" -o "$T/mrate.json"
rcheck "merge: runs at two rates stay apart" "$T/mrate.json" \
    '[.runs[] | .open_loop.rate] == [2000, 1000] and all(.runs[]; has("merged_runs") | not)'
jq '.runs[].proto = "http"' "$a" >"$T/ahttp.json"
expect_rc "compare runs of two protocols: exit 2 (nothing comparable)" 2 cproto \
    compare "$a" "$T/ahttp.json"
check "compare: the only-in lines carry the protocol" \
    sh -c "grep -qx 'only in OLD: echo $tcp reuse 64 B c=1 p=1 (4 valid of 4 runs)' '$T/cproto.out' &&
           grep -qx 'only in NEW: http $tcp reuse 64 B c=1 p=1 (4 valid of 4 runs)' '$T/cproto.out'"

jq '.runs[1].histogram.significant_digits = 2' "$a" >"$T/layout.json"
expect_rc "merge histograms of another layout: exit 1" 1 layout merge "$a" "$T/layout.json"
one_line "merge another layout: one line naming file and run" "$T/layout.err" \
    'layout\.json: run 1: histogram layout differs'
# merge checks every run record it would copy or add, and names the file and the run.
jq '.runs = [1, "x", null, {}]' "$a" >"$T/junk.json"
expect_rc "merge runs that are not records: exit 1" 1 mjunk merge "$a" "$T/junk.json" -o "$T/mj.json"
one_line "merge junk: one line naming file and run" "$T/mjunk.err" \
    'junk\.json: run 0: not a run record but a number$'
check "merge junk: no output file" test ! -e "$T/mj.json"
jq '.runs = [{}]' "$a" >"$T/empty-run.json"
expect_rc "merge an empty record: exit 1" 1 mempty merge "$T/empty-run.json" "$a"
one_line "merge an empty record: one line naming file and run" "$T/mempty.err" \
    'empty-run\.json: run 0: lacks endpoint, mode, size, connections, pipeline or rep'
jq '.runs[2].histogram |= (.total = 0 | .counts = "" | .min = 0 | .max = 0)' "$a" >"$T/nohist.json"
expect_rc "merge a run whose histogram is not its ops: exit 1" 1 mnohist merge "$b" "$T/nohist.json"
one_line "merge histogram.total != ops: one line naming file and run" "$T/mnohist.err" \
    'nohist\.json: run 2: histogram\.total is 0, but ops is [1-9][0-9]*$'
# The counts as older evidence lists them, and as a string: one counter past the last index
# (a step of 27649 from -1, then a count of 1).
jq '.runs[0].histogram |= (del(.counts_encoding) | .counts = [[99999999, .total]])' "$a" \
    >"$T/index.json"
expect_rc "merge a histogram index out of range: exit 1" 1 mindex merge "$a" "$T/index.json"
one_line "merge index out of range: one line saying so" "$T/mindex.err" \
    'index\.json: run 0: histogram counts\[0\]: index 99999999 is outside 0\.\.27647$'
jq '.runs[0].histogram.counts = "AANgCA=="' "$a" >"$T/index2.json"
expect_rc "merge an encoded histogram index out of range: exit 1" 1 mindex2 merge "$a" "$T/index2.json"
one_line "merge encoded index out of range: one line saying so" "$T/mindex2.err" \
    'index2\.json: run 0: histogram counts: counter 0: index outside 0\.\.27647$'
jq '.runs[0].histogram.counts_encoding = "gamma-rice/9"' "$a" >"$T/enc.json"
expect_rc "merge a histogram of an unknown encoding: exit 1" 1 menc merge "$a" "$T/enc.json"
one_line "merge unknown encoding: one line naming it" "$T/menc.err" \
    'enc\.json: run 0: histogram counts_encoding is not "gamma-rice/1", the one this build reads$'
jq '.runs[0].open_loop.service_histogram.total += 1' "$o1" >"$T/svc.json"
expect_rc "merge an open-loop run whose service histogram is not its ops: exit 1" 1 msvc \
    merge "$T/svc.json" "$o2"
one_line "merge service histogram: one line naming file and run" "$T/msvc.err" \
    'svc\.json: run 0: open_loop\.service_histogram: histogram counts add up to'
jq '.runs[1].phases.ttfb.histogram.unit = "us"' "$a" >"$T/phase.json"
expect_rc "merge a phase histogram of another layout: exit 1" 1 mphase merge "$T/phase.json" "$b"
one_line "merge phase layout: one line naming file, run and phase" "$T/mphase.err" \
    'phase\.json: run 1: phases\.ttfb\.histogram: histogram layout differs'
jq '.runs[1] = {"error": "this run could not be encoded as JSON"}' "$a" >"$T/ph.json"
expect_rc "merge a file with the writer's placeholder for a run: exit 0" 0 mph merge "$T/ph.json" "$b"
rcheck "merge: the placeholder is copied as it is" "$T/mph.out" \
    '(.runs | length) == 5 and ([.runs[] | select(.error)] | length) == 1'
expect_rc "compare a file with the placeholder: exit 0" 0 cph compare "$T/ph.json" "$b"
check_eq "compare: the placeholder is skipped (n=3+4)" 6 \
    "$(grep -cE "n=3\+4\)\$|\(n=3\) +[0-9,.]+ ±[0-9.]+ % \(n=4\) +$MOVED" "$T/cph.out")"
expect_rc "compare runs that are not records: exit 1" 1 cjunk compare "$a" "$T/junk.json"
one_line "compare junk: one line naming file and run" "$T/cjunk.err" \
    'junk\.json: not valid evidence: run 0 is not a run record but a number$'

expect_rc "merge a non-evidence file: exit 1" 1 mplain merge "$a" "$T/plain.json"
one_line "merge non-evidence: one line" "$T/mplain.err" 'plain\.json: not hopbench evidence'
expect_rc "merge a missing file: exit 1" 1 mmiss merge "$a" "$T/nope.json" -o "$T/x.json"
check "merge failure: no output file" test ! -e "$T/x.json"
expect_rc "merge one file: exit 64" 64 mone merge "$a"
expect_rc "merge -o without a file: exit 64" 64 mo merge "$a" "$b" -o
expect_rc "merge --help: exit 0" 0 mhelp merge --help
check "merge --help: usage printed" grep -q '^usage: hopbench merge A.json B.json' "$T/mhelp.out"

# --- labels -------------------------------------------------------------------------
# Two invocations, each against its own server on its own free port and socket path (as two
# `hopbench stack` runs are): labelled the same, their runs match cell by cell; unlabelled,
# they do not, as before.

start_server d --listen tcp://127.0.0.1:0 --listen "unix:$T/d.sock" || done_testing
d_pid=$SRV_PID
d_tcp=tcp://127.0.0.1:$SRV_PORT
start_server e --listen tcp://127.0.0.1:0 --listen "unix:$T/e.sock" || done_testing
e_pid=$SRV_PID
e_tcp=tcp://127.0.0.1:$SRV_PORT
check "two servers on two ports" test "$d_tcp" != "$e_tcp"
l1=$T/l1.json
l2=$T/l2.json
expect_rc "labelled run on the first server (NAME=ENDPOINT): exit 0" 0 l1 \
    run echo "hop=$d_tcp" "hop.unix=unix:$T/d.sock" --reps 2 -d 0.2 --warmup 0.05 --json "$l1"
expect_rc "labelled run on the second server (--label): exit 0" 0 l2 \
    run echo "$e_tcp" "unix:$T/e.sock" --label hop --label hop.unix --reps 2 -d 0.2 --warmup 0.05 \
    --json "$l2"
jcheck "the evidence holds each run's label and its own address" "$l2" \
    "[.runs[] | [.label, .endpoint]] | unique == [[\"hop\", \"$e_tcp\"], [\"hop.unix\", \"unix:$T/e.sock\"]]"
expect_rc "compare labelled runs on other ports and socket paths: exit 0" 0 clab compare "$l1" "$l2"
check_eq "compare labelled: both cells in each metric's table (n=2+2)" 12 \
    "$(grep -cE "n=2\+2\)\$|\(n=2\) +[0-9,.]+ ±[0-9.]+ % \(n=2\) +$MOVED" "$T/clab.out")"
check "compare labelled: the cells are named by label" \
    sh -c "grep -Eq '^echo hop reuse 64 B c=1 p=1 +[0-9]' '$T/clab.out' &&
           grep -Eq '^echo hop\.unix reuse 64 B c=1 p=1 +[0-9]' '$T/clab.out'"
check "compare labelled: no address in the tables, no cell in one file only" \
    sh -c "! grep -Eq '127\.0\.0\.1|\.sock|^only in' '$T/clab.out'"

u1=$T/u1.json
u2=$T/u2.json
expect_rc "unlabelled run on the first server: exit 0" 0 u1 \
    run echo "$d_tcp" --reps 2 -d 0.2 --warmup 0.05 --json "$u1"
expect_rc "unlabelled run on the second server: exit 0" 0 u2 \
    run echo "$e_tcp" --reps 2 -d 0.2 --warmup 0.05 --json "$u2"
expect_rc "compare unlabelled runs on two ports: exit 2 (nothing comparable)" 2 cunl compare "$u1" "$u2"
check "compare unlabelled: each cell named by its address, in one file only" \
    sh -c "grep -qx 'only in OLD: echo $d_tcp reuse 64 B c=1 p=1 (2 valid of 2 runs)' '$T/cunl.out' &&
           grep -qx 'only in NEW: echo $e_tcp reuse 64 B c=1 p=1 (2 valid of 2 runs)' '$T/cunl.out'"
expect_rc "compare a labelled and an unlabelled run of one endpoint: exit 2" 2 cmix \
    compare "$u1" "$l1"
check "compare labelled against unlabelled: apart" \
    sh -c "grep -q '^only in OLD: echo $d_tcp reuse' '$T/cmix.out' &&
           grep -q '^only in NEW: echo hop reuse' '$T/cmix.out'"
jq '.runs[].label = "x\u001b[2J"' "$l1" >"$T/lesc1.json"
jq '.runs[].label = "x\u001b[2J"' "$l2" >"$T/lesc2.json"
expect_rc "compare runs whose label holds an escape: exit 0" 0 clesc compare "$T/lesc1.json" \
    "$T/lesc2.json"
check "compare: a label from a file is printed escaped" \
    sh -c "grep -Fq 'echo x\\x1b[2J reuse 64 B' '$T/clesc.out' && ! grep -q \"\$(printf '\\033')\" '$T/clesc.out'"

# merge: one label names one hop, whatever address each process had.
expect_rc "merge labelled runs of two addresses: exit 0" 0 mlab merge "$l1" "$l2" -o "$T/mlab.json"
mcheck "merge labelled: each label and rep merged from both files" "$T/mlab.json" "$l1" "$l2" \
    '(.runs | length) == 4 and all(.runs[]; .merged_runs == 2)
     and ([.runs[] | . as $r | ([$a[0].runs[], $b[0].runs[]]
           | map(select(.label == $r.label and .rep == $r.rep) | .ops) | add) == $r.ops] | all)
     and ([.runs[] | .label] | sort) == ["hop", "hop", "hop.unix", "hop.unix"]'
expect_rc "merge unlabelled runs of two addresses: exit 0" 0 munl merge "$u1" "$u2" -o "$T/munl.json"
rcheck "merge unlabelled: two addresses stay apart, as before" "$T/munl.json" \
    '(.runs | length) == 4 and all(.runs[]; has("merged_runs") | not)'

stop_pid "$d_pid"
stop_pid "$e_pid"
stop_pid "$c_pid"
done_testing
