#!/bin/bash
# The formats other programs read (docs/evidence.md, docs/csv.md, docs/report.md):
#   - every kind of evidence the suite's commands write here (run, run --jsonl, an open loop,
#     lab --quick, stack redis --short --jsonl, merge, cost --json) is valid against
#     docs/evidence.schema.json, checked by Debian's python3-jsonschema, and broken copies of
#     them (a wait no run has, a histogram without its total, a run line's ops as text, a cost
#     figure as text) are not;
#   - report --hgrm and --hdr-log: hdr-histogram-js (npm, an HdrHistogram apart from hopbench's)
#     reads the log, and each histogram's window, total, min and max (within their counters) and
#     p50, p90, p99, p99.9 are the evidence's; each .hgrm is what the library's own
#     outputPercentileDistribution prints for it, byte for byte; bad --hgrm-ratio and --hgrm
#     paths are refused in one line;
#   - a stack's --csv names the hop under test in transport, with wait, pin and start.
# One small run of each kind serves every check.
# shellcheck disable=SC2016 # $vars in single quotes are jq variables
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

need python3 jsonschema node redis-server
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SCHEMA=$ROOT/docs/evidence.schema.json
HDR_JS_DIR=${HDR_JS_DIR:-$ROOT/build/npm}
if [ ! -f "$HDR_JS_DIR/node_modules/hdr-histogram-js/package.json" ]; then
    not_ok "setup: hdr-histogram-js" "test_formats.sh needs hdr-histogram-js (npm package," \
        "scripts/deps.sh test installs it into build/npm): no $HDR_JS_DIR/node_modules/hdr-histogram-js"
    done_testing
fi

start_server srv --listen tcp://127.0.0.1:0 --listen "unix:$T/s.sock" || done_testing
tcp=tcp://127.0.0.1:$SRV_PORT

# --- the evidence -------------------------------------------------------------------
expect_rc "run, connect mode, two transports, --reps 2: exit 0" 0 run run echo "$tcp" \
    "unix:$T/s.sock" --mode connect --reps 2 -d 0.2 --warmup 0.05 --json "$T/run.json" \
    --jsonl "$T/run.jsonl" --service "srv=pid:$SRV_PID"
hb open run echo "unix:$T/s.sock" --rate 2000 -d 0.2 --warmup 0.05 --json "$T/open.json"
# a loaded machine may not keep up with the rate: saturated, exit 2, still evidence
check "an open loop: exit 0, or 2 when saturated (here $RC)" test "$RC" = 0 -o "$RC" = 2
stop_pid "$SRV_PID"
mkdir -p "$T/lab.tmp"
RC=0
(cd "$T" && TMPDIR=$T/lab.tmp exec timeout -k 5 60 "$HOPBENCH" lab --quick --sizes 64 \
    --json "$T/lab.json") >"$T/lab.out" 2>"$T/lab.err" || RC=$?
check "lab --quick: exit 0, or 2 when a run went wrong on a loaded machine (here $RC)" \
    test "$RC" = 0 -o "$RC" = 2
RC=0
(cd "$T" && exec timeout -k 5 120 "$HOPBENCH" stack redis --short -q --jsonl "$T/stack.jsonl" \
    --csv "$T/stack.csv") >"$T/stack.out" 2>"$T/stack.err" || RC=$?
check_eq "stack redis --short --jsonl --csv: exit 0" 0 "$RC"
expect_rc "merge: exit 0" 0 merge merge "$T/run.json" "$T/run.json" -o "$T/merged.json"
expect_rc "cost --json: exit 0" 0 cost cost "$T/run.json" --json "$T/cost.json"

# --- the schema -----------------------------------------------------------------------
tap_from python3 "$ROOT/tests/integration/schema_check.py" "$SCHEMA" "$T/run.json" \
    "$T/run.jsonl" "$T/open.json" "$T/lab.json" "$T/stack.jsonl" "$T/merged.json" "$T/cost.json"
jq '.runs[0].wait = "spin"' "$T/run.json" >"$T/bad-wait.json"
jq '.runs[1].histogram |= del(.total)' "$T/run.json" >"$T/bad-hist.json"
jq -c 'if .record == "run" then .ops = "many" else . end' "$T/run.jsonl" >"$T/bad-ops.jsonl"
jq '.cells[0].figures[0].saved_ns.value = "x"' "$T/cost.json" >"$T/bad-cost.json"
tap_from python3 "$ROOT/tests/integration/schema_check.py" "$SCHEMA" --invalid \
    "$T/bad-wait.json" "$T/bad-hist.json" "$T/bad-ops.jsonl" "$T/bad-cost.json"
check "the schema's kinds are the evidence's: every run key docs/evidence.md lists is in it" \
    jtrue -n --slurpfile s "$SCHEMA" --rawfile d "$ROOT/docs/evidence.md" '
    ($s[0]["$defs"].run_keys.properties | keys) as $k
    | [$d | scan("(?m)^runs\\[\\]\\.\\{?([a-z_,]+)") | .[0] | split(",")[]] | unique
    | all(.[]; . as $x | $k | index($x))'

# --- HdrHistogram -----------------------------------------------------------------------
expect_rc "report --hgrm --hdr-log of two files: exit 0" 0 hdr report "$T/run.json" \
    "$T/open.json" --hgrm "$T/hgrm" --hdr-log "$T/run.hlog"
nhist=$(jq -s '[.[].runs[] | 1 + (.phases | length) + (if .open_loop then 1 else 0 end)] | add' \
    "$T/run.json" "$T/open.json")
check "report --hgrm: one .hgrm per histogram ($nhist), and one line says so" \
    grep -qx "hgrm: $T/hgrm ($nhist histogram(s), values / 1000)" "$T/hdr.out"
check_eq "report --hgrm: as many files" "$nhist" "$(find "$T/hgrm" -name '*.hgrm' | wc -l)"
# each histogram's tag, window and figures, as the evidence has them
jq -s '[to_entries[] | .key as $f | .value.runs | to_entries[] | .key as $i | .value as $r
  | ("f\($f + 1)-run\($i)-" + ($r.label // "c\($r.cell)-\($r.transport)") + "-rep\($r.rep)-") as $pre
  | ([{k: "latency", h: $r.histogram, l: $r.latency_ns}]
     + (if $r.open_loop then [{k: "service", h: $r.open_loop.service_histogram,
                               l: $r.open_loop.service_latency_ns}] else [] end)
     + [($r.phases // {}) | to_entries[] | {k: "phase-\(.key)", h: .value.histogram,
                                             l: .value.latency_ns}])[]
  | {tag: ($pre + .k), start: $r.window_start_unix_s, length: $r.window_s, total: .h.total,
     min: .l.min, max: .l.max, p50: .l.p50, p90: .l.p90, p99: .l.p99, p999: .l.p999}]' \
    "$T/run.json" "$T/open.json" >"$T/expected.json"
tap_from node "$ROOT/tests/integration/hdr_check.js" "$HDR_JS_DIR" "$T/run.hlog" "$T/hgrm" \
    1000 "$T/expected.json"
check "hdr-log: its head is HdrHistogram's (version, StartTime, BaseTime, the legend)" \
    test "$(sed -n '1p;3s/ (seconds.*//p;4s/ (seconds.*//p;5p' "$T/run.hlog" | sed 's/[0-9.]*$//' |
        paste -sd'|')" = '#[Histogram log format version 1.3]|#[StartTime: |#[BaseTime: |"StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"'
expect_rc "report --hgrm-ratio 1 (ns): exit 0" 0 ns report "$T/run.json" --hgrm "$T/ns" \
    --hgrm-ratio 1
check "report --hgrm-ratio 1: values in ns (the 100 % line is the max's counter's top)" \
    test "$(awk '$2 == "1.000000000000" { print $1 }' "$T/ns/run0-c0-tcp-rep0-latency.hgrm")" \
    = "$(awk '$2 == "1.000000000000" { printf "%.3f", $1 * 1000 }' \
        "$T/hgrm/f1-run0-c0-tcp-rep0-latency.hgrm")"
expect_rc "report --hgrm-ratio 0: refused, exit 64" 64 ratio report "$T/run.json" --hgrm "$T/x" \
    --hgrm-ratio 0
one_line "report --hgrm-ratio 0: one line" "$T/ratio.err" 'hgrm-ratio'
touch "$T/afile"
expect_rc "report --hgrm FILE: refused, exit 1" 1 notdir report "$T/run.json" --hgrm "$T/afile"
one_line "report --hgrm FILE: one line naming it" "$T/notdir.err" "afile.*not a directory"

# --- a stack's CSV ----------------------------------------------------------------------
# csv_col FILE NAME : the column NAME of every data row of FILE (no quoted fields here).
csv_col() {
    tr -d '\r' <"$1" | awk -F, -v want="$2" '
        NR == 1 { for (i = 1; i <= NF; i++) if ($i == want) c = i; next }
        c { print $c }'
}
check_eq "stack --csv: transport is the arm the label names, on every row" \
    "$(csv_col "$T/stack.csv" label | sed 's/.*\.//')" "$(csv_col "$T/stack.csv" transport)"
check "stack --csv: every row has its wait, pin and start" \
    test -z "$(paste -d, <(csv_col "$T/stack.csv" wait) <(csv_col "$T/stack.csv" pin) \
        <(csv_col "$T/stack.csv" start) | grep -vE '^(epoll|block|uring),(none|same|split),20[0-9-]{8}T[0-9:]{8}\.[0-9]{3}Z$')"

done_testing
