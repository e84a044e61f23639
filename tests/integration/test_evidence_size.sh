#!/bin/bash
# Evidence stays small and lossless: histogram counts are written as runs of
# consecutive counters, each histogram's on one line, and a lab's evidence is
# well under 1 MB; evidence written with [index, count] pairs
# (tests/fixtures/evidence: two files of the same cells, closed and open loop,
# connect mode, written before the runs encoding) is still read, and compare
# and merge give the same output on it as on the same runs written as runs.
# shellcheck disable=SC2016 # $vars in single quotes are jq variables
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

FX=$(cd "$(dirname "$0")/../fixtures/evidence" && pwd)

# in_dir DIR OUT ARGS... : hopbench ARGS run in DIR (so the files are named alike in
# every directory), its stdout, stderr and exit code in DIR/OUT.{out,err,rc}.
in_dir() {
    local dir=$1 out=$2 rc=0
    shift 2
    (cd "$dir" && exec timeout -k 5 60 "$HOPBENCH" "$@") >"$dir/$out.out" 2>"$dir/$out.err" || rc=$?
    echo "$rc" >"$dir/$out.rc"
}

# --- the old encoding, read as before ----------------------------------------------

mkdir -p "$T/old" "$T/new"
for k in closed open; do
    for x in a b; do
        cp "$FX/pairs-$x-$k.json" "$T/old/$x-$k.json"
        # A merge with a file of no runs writes the same runs again, in this build's encoding.
        jq '.runs = []' "$FX/pairs-$x-$k.json" >"$T/none.json"
        expect_rc "$k $x: re-encoding the pairs fixture: exit 0" 0 "re-$x-$k" \
            merge "$T/old/$x-$k.json" "$T/none.json" -o "$T/new/$x-$k.json"
        check "$k $x: the runs hold every counter the pairs did, histograms and phases" \
            jtrue --slurpfile old "$T/old/$x-$k.json" "$JQ_DEFS"'
            def hists: [.histogram, (.phases[] | .histogram), (.open_loop.service_histogram // empty)]
              | map(counters);
            [.runs[] | hists] == [$old[0].runs[] | hists]' "$T/new/$x-$k.json"
    done
    jcheck "$k: the fixture is written with [index, count] pairs" "$T/old/a-$k.json" \
        '[.runs[] | .histogram.counts[] | .[1] | type] | unique == ["number"]'
    jcheck "$k: the re-encoded file is written with runs" "$T/new/a-$k.json" \
        '[.runs[] | .histogram.counts[] | .[1] | type] | unique == ["array"]'
    for d in old new; do
        in_dir "$T/$d" "c-$k" compare "a-$k.json" "b-$k.json"
        in_dir "$T/$d" "m-$k" merge "a-$k.json" "b-$k.json"
    done
    check_eq "$k: compare and merge exit 0 on both encodings" "0 0 0 0" \
        "$(cat "$T/old/c-$k.rc" "$T/old/m-$k.rc" "$T/new/c-$k.rc" "$T/new/m-$k.rc" | tr '\n' ' ' |
            sed 's/ $//')"
    check "$k: compare prints the same on pairs and on runs" cmp "$T/old/c-$k.out" "$T/new/c-$k.out"
    check "$k: merge writes the same on pairs and on runs (but the second it started)" \
        cmp <(grep -v '^ *"started_unix_s":' "$T/old/m-$k.out") \
        <(grep -v '^ *"started_unix_s":' "$T/new/m-$k.out")
    rcheck "$k: the merge adds up both files' ops" "$T/new/m-$k.out" \
        '(.runs | length) == 2 and all(.runs[]; .merged_runs == 2 and .ops == 400 and hist_ok)'
done

# --- a lab's evidence ---------------------------------------------------------------

# One size of the default lab's three, each cell one 3-s run (the warm-up, discarded,
# shortened): three times this document bounds a lab of 12 such runs. (The default lab runs
# each cell 5 x 0.6 s: 60 runs, about 2 MB; docs/evidence.md.)
lab=$T/lab.json
expect_rc "lab, one size, 3 s cells: exit 0" 0 lab lab --sizes 64 -d 3 --warmup 0.2 --json "$lab"
bytes=$(wc -c <"$lab")
hists=$(jq '[.runs[] | .histogram, (.phases[] | .histogram)] | length' "$lab")
check_eq "lab: four cells, 16 histograms (5 a connect run, 3 a reuse run)" "4 16" "$(jq '.runs | length' "$lab") $hists"
check "lab: three times the document is under 1 MB ($bytes bytes)" test $((3 * bytes)) -lt 1000000
check_eq "lab: each histogram's counts on one line" "$hists" "$(grep -c '^ *"counts":\[.*\],*$' "$lab")"
check_eq "lab: the rest of the document one member per line" 4 \
    "$(grep -c '^ *"ops":[0-9]*,$' "$lab")"
rcheck "lab: every run's histogram adds up to its ops" "$lab" 'all(.runs[]; hist_ok)'

done_testing
