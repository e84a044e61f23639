#!/bin/bash
# --csv on run and lab: one row per run of the evidence written beside it, in the
# same order, with the evidence's own figures (ops, ops/s, p99, the named service's
# CPU per op and PSS in bytes), the endpoint's label, how each run waited, the
# document's pin, each window's start in UTC, and an empty field for a figure the run
# does not have; the columns docs/csv.md lists, in its order; a --csv path that cannot
# be written is refused before any run, exit 1.
# shellcheck disable=SC2016 # $vars in single quotes are jq variables
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

start_server srv --listen tcp://127.0.0.1:0 --listen "unix:$T/s.sock" || done_testing
tcp=tcp://127.0.0.1:$SRV_PORT

# csv_col FILE NAME : the column NAME of every data row of FILE (no quoted fields here).
csv_col() {
    tr -d '\r' <"$1" | awk -F, -v want="$2" '
        NR == 1 { for (i = 1; i <= NF; i++) if ($i == want) c = i; next }
        c { print $c }'
}

# same_col NAME CSV JSON CSV-COLUMN JQ-PATH : the column equals the runs' figures, in order.
same_col() {
    local name=$1 csv=$2 json=$3 col=$4 path=$5 a b
    a=$(csv_col "$csv" "$col")
    b=$(jq -r ".runs[] | $path // \"\"" "$json")
    if [ -n "$a" ] && [ "$a" = "$b" ]; then
        ok "$name"
    else
        not_ok "$name" "csv: $(echo $a) evidence: $(echo $b)"
    fi
}

# same_num NAME CSV JSON CSV-COLUMN JQ-PATH : equal as numbers (a real's text may differ).
same_num() {
    local name=$1 csv=$2 json=$3 col=$4 path=$5 bad
    bad=$(paste -d' ' <(csv_col "$csv" "$col") <(jq -r ".runs[] | $path" "$json") |
        awk '$1 == "" || $2 == "" || ($1 - $2) * ($1 - $2) > ($2 * 1e-12) ^ 2 { n++ } END { print n + 0 }')
    check_eq "$name" 0 "$bad"
}

expect_rc "run --csv: exit 0" 0 run run echo "$tcp" "unix:$T/s.sock" --label tcp-a --label uds \
    -d 0.2 --warmup 0 --reps 2 --json "$T/run.json" --csv "$T/run.csv" \
    --service "srv=pid:$SRV_PID"
check "run --csv: says where the CSV is" grep -qx "csv: $T/run.csv" "$T/run.out"
nruns=$(jq '.runs | length' "$T/run.json")
check_eq "run --csv: one row per run, and a header" $((nruns + 1)) "$(wc -l <"$T/run.csv")"
check "run --csv: CRLF line ends" test "$(grep -c $'\r$' "$T/run.csv")" -eq $((nruns + 1))
same_col "run --csv: ops are the evidence's" "$T/run.csv" "$T/run.json" ops .ops
same_col "run --csv: labels are the evidence's" "$T/run.csv" "$T/run.json" label .label
same_col "run --csv: transports" "$T/run.csv" "$T/run.json" transport .transport
same_num "run --csv: ops/s equal the evidence's" "$T/run.csv" "$T/run.json" ops_per_s .ops_per_s
same_num "run --csv: p99 equals the evidence's" "$T/run.csv" "$T/run.json" latency_p99_ns \
    .latency_ns.p99
same_num "run --csv: the service's CPU per op is the evidence's" "$T/run.csv" "$T/run.json" \
    service_srv_cpu_ns_per_op '.observed.services[0].cpu_ns_per_op'
same_col "run --csv: how each run waited" "$T/run.csv" "$T/run.json" wait .wait
check_eq "run --csv: pin is the document's placement.pin, on every row" \
    "$(jq -r '.placement.pin as $p | .runs[] | $p' "$T/run.json")" "$(csv_col "$T/run.csv" pin)"
# start: window_start_unix_s as ISO 8601 UTC, to the millisecond
same_col "run --csv: start is the run's window start, ISO 8601 UTC" "$T/run.csv" "$T/run.json" start \
    '(.window_start_unix_s * 1000 | round) as $ms | ($ms / 1000 | floor | todate | rtrimstr("Z"))
     + "." + (1000 + $ms % 1000 | tostring | .[1:]) + "Z"'
check_eq "run --csv: the windows start in the order the runs ran" \
    "$(csv_col "$T/run.csv" start)" "$(csv_col "$T/run.csv" start | sort)"
same_col "run --csv: the service's PSS in bytes, as the evidence's" "$T/run.csv" "$T/run.json" \
    service_srv_pss_end_bytes '.observed.services[0].pss_end'
same_col "run --csv: client_transport is the run's own" "$T/run.csv" "$T/run.json" \
    client_transport .transport
check_eq "run --csv: a closed loop's rate fields are there and empty" "$nruns 0" \
    "$(csv_col "$T/run.csv" rate | awk 'NF { n++ } END { print NR, n + 0 }')"
check_eq "run --csv: every row has the header's field count" 1 \
    "$(tr -d '\r' <"$T/run.csv" | awk -F, '{ print NF }' | sort -u | wc -l)"
# docs/csv.md: the columns always present, in its order (latency_min_ns … latency_max_ns
# stands for the percentiles between), then the optional ones (errors_, phase_, service_).
awk '/^Always present/ { on = 1 } /^Then the columns only some/ { on = 0 }
    on && /^\| `/ { split($0, f, "|"); print f[2] }' docs/csv.md | grep -oE '`[a-z0-9_]+`' | tr -d '`' >"$T/doc.cols"
head -n 1 "$T/run.csv" | tr -d '\r' | tr , '\n' | grep -vx 'latency_p[0-9]*_ns' >"$T/cols"
head -n "$(wc -l <"$T/doc.cols")" "$T/cols" >"$T/fixed.cols"
if [ "$(wc -l <"$T/doc.cols")" -ge 40 ] && cmp -s "$T/doc.cols" "$T/fixed.cols"; then
    ok "run --csv: the columns always present are docs/csv.md's, in its order"
else
    not_ok "run --csv: the columns always present are docs/csv.md's, in its order" \
        "$(diff "$T/doc.cols" "$T/fixed.cols" | grep '^[<>]' | tr '\n' ' ')"
fi
check_eq "run --csv: then the error kinds, phases and services docs/csv.md names" "errors phase service" \
    "$(tail -n +"$(($(wc -l <"$T/doc.cols") + 1))" "$T/cols" | sed -E 's/_.*//' | uniq | paste -sd' ')"

mkdir "$T/adir"
expect_rc "run --csv DIR: refused, exit 1" 1 dir run echo "$tcp" -n 10 --json "$T/d.json" \
    --csv "$T/adir"
one_line "run --csv DIR: one line" "$T/dir.err" 'csv|adir'
check "run --csv DIR: refused before any run (no evidence)" test ! -e "$T/d.json"

expect_rc "lab --quick --csv: exit 0" 0 lab lab --quick --sizes 64 --json "$T/lab.json" \
    --csv "$T/lab.csv"
nlab=$(jq '.runs | length' "$T/lab.json")
check_eq "lab --csv: one row per run, and a header" $((nlab + 1)) "$(wc -l <"$T/lab.csv")"
same_col "lab --csv: ops are the evidence's" "$T/lab.csv" "$T/lab.json" ops .ops
same_col "lab --csv: modes" "$T/lab.csv" "$T/lab.json" mode .mode

# report --csv: every run of several files, each file's rows named by its path
expect_rc "report --csv of two files: exit 0" 0 rep report "$T/run.json" "$T/lab.json" \
    --csv "$T/both.csv"
check_eq "report --csv: one row per run of both files, and a header" \
    $((nruns + nlab + 1)) "$(wc -l <"$T/both.csv")"
check_eq "report --csv: the source column names each file" \
    "$nruns $T/run.json|$nlab $T/lab.json" \
    "$(csv_col "$T/both.csv" source | uniq -c | awk '{ print $1, $2 }' | paste -sd'|')"
expect_rc "report without -o or --csv: exit 64" 64 rep2 report "$T/run.json"

done_testing
