#!/bin/bash
# Evidence stays small and lossless: each histogram's counters are written as
# one gamma-rice/1 string (docs/evidence.md), decoded here by lib.sh's own jq
# decoder, and a lab's evidence is well under 1 MB; evidence written with the
# JSON lists of older builds ([index, count] pairs: tests/fixtures/evidence, two
# files of the same cells, closed and open loop, connect mode; runs [start,
# [count, ...]]: fresh runs rewritten here) is still read, and compare and merge
# give the same output on it as on the same runs written as strings.
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

# same_both_ways NAME OLD NEW A B : compare and merge of files A and B, run in directory
# OLD (the lists an older build wrote) and in NEW (the same runs as strings), exit 0 and
# print the same; the merges (as NAME.out in NEW) differ only in the second they started.
same_both_ways() {
    local name=$1 old=$2 new=$3 a=$4 b=$5 d
    for d in "$old" "$new"; do
        in_dir "$d" "c-$name" compare "$a" "$b"
        in_dir "$d" "m-$name" merge "$a" "$b"
    done
    check_eq "$name: compare and merge exit 0 on both encodings" "0 0 0 0" \
        "$(cat "$old/c-$name.rc" "$old/m-$name.rc" "$new/c-$name.rc" "$new/m-$name.rc" |
            tr '\n' ' ' | sed 's/ $//')"
    check "$name: compare prints the same on lists and on strings" \
        cmp "$old/c-$name.out" "$new/c-$name.out"
    check "$name: merge writes the same on lists and on strings (but the second it started)" \
        cmp <(grep -v '^ *"started_unix_s":' "$old/m-$name.out") \
        <(grep -v '^ *"started_unix_s":' "$new/m-$name.out")
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
        check "$k $x: the strings hold every counter the pairs did, histograms and phases" \
            jtrue --slurpfile old "$T/old/$x-$k.json" "$JQ_DEFS"'
            def hists: [.histogram, (.phases[] | .histogram), (.open_loop.service_histogram // empty)]
              | map(counters);
            [.runs[] | hists] == [$old[0].runs[] | hists]' "$T/new/$x-$k.json"
    done
    jcheck "$k: the fixture is written with [index, count] pairs" "$T/old/a-$k.json" \
        '[.runs[] | .histogram.counts[] | .[1] | type] | unique == ["number"]'
    jcheck "$k: the re-encoded file is written with strings" "$T/new/a-$k.json" \
        '[.runs[] | .histogram, (.phases[] | .histogram), (.open_loop.service_histogram // empty)
          | [.counts_encoding, (.counts | type)]] | unique == [["gamma-rice/1", "string"]]'
    same_both_ways "$k" "$T/old" "$T/new" "a-$k.json" "b-$k.json"
    rcheck "$k: the merge adds up both files' ops" "$T/new/m-$k.out" \
        '(.runs | length) == 2 and all(.runs[]; .merged_runs == 2 and .ops == 400 and hist_ok)'
done

# --- fresh runs, written as strings and as runs ----------------------------------------

# Two files of the same cells, each with every kind of histogram (an open loop's service
# histogram, the four phases of connect mode, the two of reuse mode); then the same files
# passed through jq as they are (str/: jq writes some numbers otherwise, 5 for 5.0, and
# merge copies them) and with every histogram's counts rewritten as the runs an older build
# wrote (runs/). What is checked here is the evidence, not the rate: a 0.15 s open loop on a
# box at load 9 fell behind by a stall (79 % of 2,000/s; 96 % of 500/s), exit 2, its evidence
# written all the same.
start_server f --listen tcp://127.0.0.1:0 --listen "unix:$T/f.sock" || done_testing
ep=(echo "tcp://127.0.0.1:$SRV_PORT" "unix:$T/f.sock")
mkdir -p "$T/raw" "$T/str" "$T/runs"
for x in a b; do
    hb "fc-$x" run "${ep[@]}" --mode connect -n 300 --rate 2000 --warmup 0.05 \
        --json "$T/raw/c-$x.json"
    check "fresh $x: connect, open loop: exit 0, or 2 for a run that fell behind (got $RC)" \
        bash -c '[ "$1" = 0 ] || { [ "$1" = 2 ] && grep -q "open-loop run saturated" "$2"; }' _ \
        "$RC" "$T/fc-$x.err"
    expect_rc "fresh $x: reuse, closed loop, 3 reps: exit 0" 0 "fr-$x" run "${ep[@]}" --reps 3 \
        -d 0.2 --warmup 0.05 --json "$T/raw/r-$x.json"
done
for f in "$T"/raw/*.json; do
    jq . "$f" >"$T/str/$(basename "$f")"
    jq "$JQ_DEFS"'
        def as_runs: reduce .[] as [$i, $c] ([];
            if length > 0 and .[-1][0] + (.[-1][1] | length) == $i then .[-1][1] += [$c]
            else . + [[$i, [$c]]] end);
        def listed: .counts = (counters | as_runs) | del(.counts_encoding);
        .runs[] |= (.histogram |= listed | .phases[] |= (.histogram |= listed)
                    | if .open_loop then .open_loop.service_histogram |= listed else . end)' \
        "$f" >"$T/runs/$(basename "$f")"
done
jcheck "fresh: the rewritten file has runs, no counts_encoding" "$T/runs/c-a.json" \
    '[.runs[] | .histogram, (.phases[] | .histogram), .open_loop.service_histogram
      | [has("counts_encoding"), (.counts[0][1] | type)]] | unique == [[false, "array"]]'
rcheck "fresh: every histogram's strings decode to its total, phases and service too" \
    "$T/str/c-a.json" 'all(.runs[]; hist_ok and all(.phases[], .open_loop; .histogram // .service_histogram
        | (counters | map(.[1]) | add) == .total) and (.phases | length) == 4)'
for k in c r; do
    same_both_ways "fresh-$k" "$T/runs" "$T/str" "$k-a.json" "$k-b.json"
    rcheck "fresh $k: the merge's histograms hold both files' ops" "$T/str/m-fresh-$k.out" \
        'all(.runs[]; .merged_runs == 2 and hist_ok)'
done
check "fresh: the documents with strings take less than half the room of those with runs" \
    test $((2 * $(jq -c . "$T"/str/*.json | wc -c))) -lt "$(jq -c . "$T"/runs/*.json | wc -c)"

# --- a lab's evidence ---------------------------------------------------------------

# One size of the default lab's three, its defaults otherwise (each cell 5 x 0.6 s): the
# 64 B cells, the fastest, have the most ops and so the most counters, and three times this
# document bounds the default lab's (docs/evidence.md gives that lab's real size).
lab=$T/lab.json
expect_rc "lab, one size: exit 0" 0 lab lab --sizes 64 --json "$lab"
bytes=$(wc -c <"$lab")
hists=$(jq '[.runs[] | .histogram, (.phases[] | .histogram)] | length' "$lab")
check_eq "lab: 20 runs, 80 histograms (5 a connect run, 3 a reuse run)" "20 80" \
    "$(jq '.runs | length' "$lab") $hists"
check "lab: three times the document is under 1 MB ($bytes bytes)" test $((3 * bytes)) -lt 1000000
check_eq "lab: each histogram's counts one string on one line" "$hists" \
    "$(grep -c '^ *"counts":"[A-Za-z0-9+/]*=*",*$' "$lab")"
check_eq "lab: the rest of the document one member per line" 20 \
    "$(grep -c '^ *"ops":[0-9]*,$' "$lab")"
rcheck "lab: every run's histogram adds up to its ops" "$lab" 'all(.runs[]; hist_ok)'

done_testing
