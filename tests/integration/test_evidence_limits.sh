#!/bin/bash
# compare and merge on evidence that is hostile or huge: sums that wrap
# around 2^64, files over the size cap, /dev/zero, control characters in
# strings, and 20,000 cells, each read in bounded time and memory. The files
# are written here (jq, printf): no server is needed.
# shellcheck disable=SC2016 # $vars in single quotes are jq variables
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

need time

# hist JSON of three values in counters 100, 200 and 400 (a value below 2048 is its own index)
hist='{"unit":"ns","lowest":1,"highest":60000000000,"significant_digits":3,"total":3,"min":100,"max":400,"overflow":0,"counts":[[100,1],[200,1],[400,1]]}'
lat='{"min":100,"p50":200,"p90":400,"p95":400,"p99":400,"p999":400,"p9999":400,"max":400,"mean":233.3}'
# run REP HIST LAT : a run record of 3 ops with that histogram and latency.
run() {
    printf '{"cell":0,"rep":%s,"proto":"echo","endpoint":"tcp://127.0.0.1:9","mode":"reuse","size":64,"connections":1,"threads":1,"pipeline":1,"ops":3,"window_s":1,"connects":0,"errors_total":0,"client_cpu_ns":3000,"errors":{"other":0},"valid":true,"interrupted":false,"ops_per_s":3,"client_cpu_ns_per_op":1000,"latency_ns":%s,"histogram":%s,"phases":{},"open_loop":null}' \
        "$1" "$3" "$2"
}
doc() { printf '{"schema":"hopbench.evidence/1","runs":[%s]}\n' "$1"; }

doc "$(run 0 "$hist" "$lat"),$(run 1 "$hist" "$lat")" >"$T/good.json"
expect_rc "merge two well-formed synthetic files: exit 0" 0 mgood merge "$T/good.json" "$T/good.json"
rcheck "merge synthetic: the counts doubled" "$T/mgood.out" \
    '[.runs[] | .histogram.total] == [6, 6] and [.runs[] | .latency_ns.min] == [100, 100]'

# --- sums that wrap -------------------------------------------------------------------

# Two counts of 2^63-1 and 7 more add up to 2^64 + 5: 5 in uint64, so the counts seemed to
# match a total of 5, and the merged percentiles came out below the run's own minimum.
max=9223372036854775807
wrap='{"unit":"ns","lowest":1,"highest":60000000000,"significant_digits":3,"total":5,"min":100,"max":400,"overflow":0,"counts":[[100,'$max'],[200,'$max'],[300,2],[400,5]]}'
doc "$(run 0 "$hist" "$lat"),$(run 1 "$wrap" "$lat" | sed 's/"ops":3/"ops":5/; s/"ops_per_s":3/"ops_per_s":5/')" \
    >"$T/wrap.json"
expect_rc "merge counts that wrap around 2^64: exit 1" 1 mwrap merge "$T/good.json" "$T/wrap.json"
one_line "merge wrapping counts: one line naming the file and the run" "$T/mwrap.err" \
    '^hopbench merge: .*wrap\.json: run 1: histogram counts overflow when added up'
check_eq "merge wrapping counts: nothing on stdout" 0 "$(wc -c <"$T/mwrap.out")"

# Totals that each fit but not their sum: the merge refuses rather than wrap.
big='{"unit":"ns","lowest":1,"highest":60000000000,"significant_digits":3,"total":'$max',"min":100,"max":100,"overflow":0,"counts":[[100,'$max']]}'
blat='{"min":100,"p50":100,"p90":100,"p95":100,"p99":100,"p999":100,"p9999":100,"max":100,"mean":100}'
doc "$(run 0 "$big" "$blat" | sed 's/"ops":3/"ops":'$max'/; s/"ops_per_s":3/"ops_per_s":'$max'/')" \
    >"$T/big.json"
expect_rc "merge histogram totals whose sum overflows: exit 1" 1 mbig merge "$T/big.json" "$T/big.json" \
    -o "$T/mbig.json"
one_line "merge totals overflow: one line naming the file and the run" "$T/mbig.err" \
    '^hopbench merge: .*big\.json: run 0: (histogram totals overflow when added|"ops" overflows when added)'
check "merge totals overflow: no output file" test ! -e "$T/mbig.json"

# Impossible figures: percentiles out of order, negative ops/s.
doc "$(run 0 "$hist" "${lat/\"p99\":400/\"p99\":150}")" >"$T/order.json"
expect_rc "compare percentiles out of order: exit 1" 1 corder compare "$T/good.json" "$T/order.json"
one_line "compare percentiles out of order: one line naming file, run, figures" "$T/corder.err" \
    'order\.json: not valid evidence: run 0: latency_ns\.p99 is 150, below latency_ns\.p95 400'
expect_rc "merge percentiles out of order: exit 1" 1 morder merge "$T/good.json" "$T/order.json"
one_line "merge percentiles out of order: one line naming file and run" "$T/morder.err" \
    'order\.json: run 0: latency_ns\.p99 is 150, below'
doc "$(run 0 "$hist" "$lat" | sed 's/"ops_per_s":3/"ops_per_s":-3/')" >"$T/neg.json"
expect_rc "compare negative ops/s: exit 1" 1 cneg compare "$T/neg.json" "$T/good.json"
one_line "compare negative ops/s: one line naming file and run" "$T/cneg.err" \
    'neg\.json: not valid evidence: run 0: ops_per_s is -3, not a number >= 0$'
doc "$(run 0 "$hist" "$lat" | sed 's/"ops_per_s":3/"ops_per_s":1e999/')" >"$T/inf.json"
expect_rc "compare ops/s beyond a double: exit 1 (not JSON jansson reads)" 1 cinf \
    compare "$T/inf.json" "$T/good.json"
one_line "compare ops/s beyond a double: one line" "$T/cinf.err" 'inf\.json: not JSON: real number overflow'
# A finite rate no run could have: 1e308 ops/s for 3 ops in 1 s. compare, merge and report refuse
# it (compare once printed a median of hundreds of digits).
doc "$(run 0 "$hist" "$lat" | sed 's/"ops_per_s":3/"ops_per_s":1e308/')" >"$T/huge_rate.json"
for cmd in compare merge report; do
    more=("$T/good.json")
    [ "$cmd" != report ] || more=(-o "$T/huge_rate.html")
    expect_rc "$cmd an impossible finite ops/s: exit 1" 1 "c_rate_$cmd" "$cmd" "$T/huge_rate.json" \
        "${more[@]}"
    one_line "$cmd an impossible finite ops/s: one line naming file, run and key" \
        "$T/c_rate_$cmd.err" \
        'huge_rate\.json: (not valid evidence: )?run 0: ops_per_s is 1e\+308, not ops / window_s \(3 / 1 = 3\)$'
done
check "report an impossible finite ops/s: no page written" test ! -e "$T/huge_rate.html"

# --- size cap -------------------------------------------------------------------------

# A sparse file past the 256 MiB cap costs no disk; it is refused before it is read.
truncate -s 300M "$T/huge.json"
t0=$(now_ms)
expect_rc "compare a file over the cap: exit 1" 1 chuge compare "$T/huge.json" "$T/good.json"
one_line "compare over the cap: one line saying so" "$T/chuge.err" \
    '^hopbench compare: .*huge\.json: cannot read: larger than 256 MiB, the cap on an evidence file$'
expect_rc "merge a file over the cap: exit 1" 1 mhuge merge "$T/good.json" "$T/huge.json"
one_line "merge over the cap: one line saying so" "$T/mhuge.err" 'huge\.json: cannot read: larger than 256 MiB'
check "over the cap: refused without reading it (under 5 s for both)" test $(($(now_ms) - t0)) -lt 5000
rm -f "$T/huge.json"

# /dev/zero never ends: refused once the cap is read, not read until killed.
RC=0
timeout -k 5 60 "$HOPBENCH" compare /dev/zero "$T/good.json" >"$T/zero.out" 2>"$T/zero.err" || RC=$?
check_eq "compare /dev/zero: exit 1 within the timeout" 1 "$RC"
one_line "compare /dev/zero: one line saying so" "$T/zero.err" \
    '^hopbench compare: /dev/zero: cannot read: larger than 256 MiB, the cap on an evidence file$'
# A pipe under the cap is read like a file.
expect_rc "compare a pipe under the cap: exit 0" 0 cpipe compare /dev/stdin "$T/good.json" \
    < <(cat "$T/good.json")

# --- control characters ---------------------------------------------------------------

esc=$(printf '\033')
jq -c '.runs[].endpoint = "tcp://\u001b[2J\u0007evil\nline"' "$T/good.json" >"$T/esc.json"
expect_rc "compare an endpoint with control characters: exit 0" 0 cesc compare "$T/esc.json" "$T/esc.json"
check_eq "compare: no raw ESC, BEL or line break from the file on stdout" 0 \
    "$(grep -c "$esc\|$(printf '\007')\|^line" "$T/cesc.out")"
check "compare: the endpoint is printed escaped" \
    grep -qF 'echo tcp://\x1b[2J\x07evil\nline reuse 64 B c=1 p=1' "$T/cesc.out"
cp "$T/good.json" "$T/bad${esc}[31mname.json"
jq '.runs[0].ops_per_s = -1' "$T/good.json" >"$T/bad${esc}[31mname.json"
expect_rc "compare a file named with ESC: exit 1" 1 cescname compare "$T/bad${esc}[31mname.json" "$T/good.json"
one_line "compare a file named with ESC: the name escaped in its one line" "$T/cescname.err" \
    'bad\\x1b\[31mname\.json: not valid evidence: run 0: ops_per_s is -1'
check_eq "compare a file named with ESC: no raw ESC on stderr" 0 "$(grep -c "$esc" "$T/cescname.err")"
expect_rc "merge an option with ESC: exit 64" 64 mescopt merge "$T/good.json" "--x${esc}[2J"
check "merge an option with ESC: escaped in the usage line" grep -qF "unknown option '--x\\x1b[2J'" "$T/mescopt.err"

# --- 20,000 cells ---------------------------------------------------------------------

# OLD: 20,000 cells as one document; NEW: the same cells as --jsonl, all but one invalid (so
# the tables need no bootstrap for them). compare once held two arrays of every run per cell.
jq -n -c --argjson n 20000 '{schema: "hopbench.evidence/1", runs: [range(0; $n) as $i
    | {endpoint: "tcp://127.0.0.1:\(1000 + ($i % 50))", mode: "reuse", size: (64 + ($i / 50 | floor)),
       connections: 1, pipeline: 1, rep: 0, valid: true, interrupted: false,
       ops_per_s: (1000 + $i), client_cpu_ns_per_op: 2000,
       latency_ns: {min: 10, p50: 20, p90: 30, p95: 40, p99: 50, p999: 60, p9999: 70, max: 80, mean: 25}}]}' \
    >"$T/cells.json"
jq -c '(del(.runs) + {record: "header"}),
       (.runs | to_entries[] | .value + {record: "run", valid: (.key == 0)})' "$T/cells.json" \
    >"$T/cells.jsonl"
# cells20k NAME OLD NEW WHAT : compare OLD NEW, its 20,000 cells' rows, and its peak RSS bounded
cells20k() {
    local bytes rss_kb bound_kb RC=0
    bytes=$(($(stat -c %s "$2") + $(stat -c %s "$3")))
    # An ASan build keeps freed memory in a quarantine (256 MiB) the bound would count: none here
    # (a release build ignores ASAN_OPTIONS).
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0:thread_local_quarantine_size_kb=0" \
        timeout -k 5 120 /usr/bin/time -f '%M' -o "$T/$1.rss" "$HOPBENCH" compare "$2" "$3" \
        >"$T/$1.out" 2>"$T/$1.err" || RC=$?
    check_eq "compare 20,000 cells$4: exit 0 within 120 s" 0 "$RC"
    check_eq "compare 20,000 cells$4: a row per cell and metric (6)" 120000 \
        "$(grep -c '^tcp://127.0.0.1:1[0-9]* reuse [0-9]* B c=1 p=1 ' "$T/$1.out")"
    rss_kb=$(tail -n 1 "$T/$1.rss")
    # Both are read a run at a time: the text of one file, and a few figures a run, are held.
    bound_kb=$((4 * bytes / 1024 + 32 * 1024))
    check "compare 20,000 cells$4: max RSS ${rss_kb} KiB within 4 x the files + 32 MiB (${bound_kb} KiB)" \
        test "$rss_kb" -le "$bound_kb"
}
cells20k cells "$T/cells.json" "$T/cells.jsonl" ""
# The same files placed in a pod (as a run with the downward API's HOPBENCH_* variables is):
# every run is named by its pod, a label shared by the runs rather than a copy each.
pod='{kind: "pod", pod: "web-0", namespace: "default", node: "n1", container: "load"}'
jq -c ".placement = $pod" "$T/cells.json" >"$T/pod.json"
jq -c "if .record == \"header\" then .placement = $pod else . end" "$T/cells.jsonl" >"$T/pod.jsonl"
cells20k pod "$T/pod.json" "$T/pod.jsonl" " placed in a pod"
check_eq "compare 20,000 cells placed in a pod: both headers name the pod" 2 \
    "$(grep -c '^\(old\|new\): .*; placement pod web-0 on node n1$' "$T/pod.out")"

done_testing
