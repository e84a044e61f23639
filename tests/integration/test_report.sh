#!/bin/bash
# hopbench report and --html: reports drawn from a short real lab (with open-loop rates),
# a real run against a built-in server, and the fixtures, opened in headless Chromium
# (Debian's chromium). Checks: each chart's SVG elements in the DOM Chromium dumped, each
# chart's screenshot not blank, no console error, the figures on the page the evidence's
# (medians, the p99 of the added histograms, CPU, phases, the summary's verdicts, each run's
# ops/s and p99 per interval), nothing fetched, markup in the evidence's strings shown as
# text; a run against a server that stalls shows the stall in its evidence and on its page.
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

CHECK="python3 $(cd "$(dirname "$0")" && pwd)/report_check.py"
FIX=$(cd "$(dirname "$0")/../fixtures/evidence" && pwd)
need chromium python3 hostname

# pycheck ARGS... : runs report_check.py, whose "ok"/"not ok" lines count here.
pycheck() {
    # shellcheck disable=SC2086 # CHECK is a command and its script
    tap_from $CHECK "$@"
}

# page_checks NAME REPORT EVIDENCE... : the DOM against the evidence, no console error, and
# each chart kind's own screenshot not blank.
page_checks() {
    local name=$1 report=$2 kind page w h n
    shift 2
    if ! chrome "$T/$name-dom" --dump-dom "file://$report"; then
        not_ok "$name: chromium --dump-dom" "$(head -c 300 "$T/$name-dom.err")"
        return
    fi
    ok "$name: chromium --dump-dom"
    check_eq "$name: no console message" "" "$(grep ':CONSOLE' "$T/$name-dom.err")"
    pycheck dom "$T/$name-dom.out" "$@"
    mkdir -p "$T/$name-charts"
    $CHECK split "$report" "$T/$name-charts" >"$T/$name-charts.list"
    while read -r kind page w h; do
        if ! chrome "$T/$name-$kind" --screenshot="$T/$name-$kind.png" --window-size="$w,$h" \
            "file://$page"; then
            not_ok "$name: $kind chart: screenshot" "$(head -c 300 "$T/$name-$kind.err")"
            continue
        fi
        check_eq "$name: $kind chart: no console message" "" \
            "$(grep ':CONSOLE' "$T/$name-$kind.err")"
        # white, greys of the axes and text, the series' colours: a drawn chart has many,
        # and pixels of a series' own colour: tcp's blue or unix's orange (a cell is drawn
        # in its transport's colour in every chart, whichever comes first)
        read -r n first < <($CHECK colours "$T/$name-$kind.png" 0 0 100000 100000 1f77b4,ff7f0e)
        if [ "${n:-0}" -ge 8 ] && [ "${first:-0}" -ge 10 ]; then
            ok "$name: $kind chart: drawn ($n colours, $first pixels of tcp's or unix's colour)"
        else
            not_ok "$name: $kind chart: drawn" "$n distinct colours, $first pixels of #1f77b4 or #ff7f0e"
        fi
        [ -z "${REPORT_SHOTS:-}" ] || cp "$T/$name-$kind.png" "$REPORT_SHOTS/report-$kind.png"
    done <"$T/$name-charts.list"
}

# --- the checks can fail: a console error, a blank page -------------------------------

printf '<!DOCTYPE html><meta charset="utf-8"><script>console.error("x")</script>\n' >"$T/ctl.html"
chrome "$T/ctl" --dump-dom "file://$T/ctl.html"
check "control: a console error shows in Chromium's log" grep -q ':CONSOLE' "$T/ctl.err"
printf '<!DOCTYPE html><meta charset="utf-8"><svg width="300" height="200"></svg>\n' \
    >"$T/blank.html"
chrome "$T/blank" --screenshot="$T/blank.png" --window-size=300,200 "file://$T/blank.html"
read -r n first < <($CHECK colours "$T/blank.png")
check "control: a blank page has fewer than 8 colours ($n) and no series colour ($first)" \
    test "${n:-99}" -lt 8 -a "${first:-99}" -eq 0

# --- a short real lab with open-loop rates, --html --------------------------------------

lab=$T/lab.json
# exit 2 when a run saw an error or completed no op (a machine too busy): the report is
# written all the same, with those runs drawn hollow
hb lab lab --sizes 64 --reps 2 -d 0.3 --warmup 0.05 --rates 50% --json "$lab" \
    --html "$T/lab.html"
check "lab --html: exit 0, or 2 for a run that does not count (exit $RC)" \
    test "$RC" = 0 -o "$RC" = 2
check "lab --html: says where the report is" grep -qx "report: $T/lab.html" "$T/lab.out"
page_checks lab "$T/lab.html" "$lab"
# The lab's arms are named by their transports, as its own tables name them: never by the free
# port or the temporary socket path that each lab picks anew
check "lab --html: the arms named tcp and unix (echo tcp reuse 64 B, echo unix reuse 64 B)" \
    sh -c "grep -q '>echo tcp reuse 64 B c=1 p=1<' '$T/lab.html' &&
        grep -q '>echo unix reuse 64 B c=1 p=1<' '$T/lab.html'"
check "lab --html: no arm named by its port or its socket's path" \
    sh -c "! grep -Eq 'tcp://127\.0\.0\.1:[0-9]|unix:[^<]*echo\.sock' '$T/lab.html'"
# The answer first: the bottom line is the text's, before any chart, and on screen in the
# first 1400x900 viewport. 2 runs a side can have no verdict: the text's sentence in an amber
# card and its grid of ratios, cell by cell.
pycheck bottom "$T/lab-dom.out" "$T/lab.out"
chrome "$T/lab-viewport" --screenshot="$T/lab-viewport.png" --window-size=1400,900 \
    "file://$T/lab.html"
read -r n amber < <($CHECK colours "$T/lab-viewport.png" 0 0 1400 900 8a5a00)
check "lab --html: the no-verdict card and grid in the first 1400x900 viewport ($amber amber pixels)" \
    test "${amber:-0}" -ge 20
echo "# screenshot of the first viewport: $T/lab-viewport.png"
[ -z "${REPORT_SHOTS:-}" ] || cp "$T/lab-viewport.png" "$REPORT_SHOTS/report-viewport.png"

# the same evidence through `hopbench report`: the same page
expect_rc "report of the lab's evidence: exit 0" 0 rep report "$lab" -o "$T/lab2.html"
check "report and lab --html write the same page" cmp -s "$T/lab.html" "$T/lab2.html"
# and prints the bottom line the page shows first, as the lab ended with it (less its -v hint)
bottom_text() { # OUT-FILE: the bottom line's lines of a run's, lab's or report's stdout
    sed -n '/^bottom line: /,$p' "$1" | grep -vE '^(evidence|report|csv|hdr-log): ' |
        sed 's/; -v lists them$//'
}
check "report prints a bottom line" grep -q '^bottom line: ' "$T/rep.out"
check_eq "report prints the lab's own bottom line" "$(bottom_text "$T/lab.out")" \
    "$(bottom_text "$T/rep.out")"

# --- a real run against a built-in server, with its --jsonl -----------------------------

if start_server s --listen tcp://127.0.0.1:0 --listen "unix:$T/s.sock"; then
    # 4 runs a side: a verdict is possible (Mann-Whitney's smallest p 0.029), drawn as cards
    hb run run echo "tcp://127.0.0.1:$SRV_PORT" "unix:$T/s.sock" --reps 4 -d 0.2 \
        --warmup 0.05 --mode connect --server-pid "$SRV_PID" --json "$T/run.json" \
        --jsonl "$T/run.jsonl" --html "$T/run.html"
    check "run --html: exit 0, or 2 for a run that does not count (exit $RC)" \
        test "$RC" = 0 -o "$RC" = 2
    page_checks run "$T/run.html" "$T/run.json"
    pycheck bottom "$T/run-dom.out" "$T/run.out"
    chrome "$T/run-viewport" --screenshot="$T/run-viewport.png" --window-size=1400,900 \
        "file://$T/run.html"
    read -r n green < <($CHECK colours "$T/run-viewport.png" 0 0 1400 900 1a7f37)
    check "run --html: the bottom line's cards in the first 1400x900 viewport ($green green pixels)" \
        test "${green:-0}" -ge 20
    expect_rc "report of a --jsonl file: exit 0" 0 jl report "$T/run.jsonl" -o "$T/jl.html"
    # (a --jsonl file's header is written before the runs: it has no bottom line)
    expect_rc "report of the run's evidence: exit 0" 0 rj report run.json -o rj.html
    check_eq "report of the run's evidence prints the run's bottom line, its verdicts" \
        "$(bottom_text "$T/run.out")" "$(bottom_text "$T/rj.out")"
    # two files: each file's cells named by its path, as on the page
    expect_rc "report of the run's and the lab's evidence: exit 0" 0 rl report run.json \
        lab.json -o rl.html
    check "report of two files: the bottom line names each file's cells by its path" \
        bash -c "grep -q '^  run.json  *ops/s  ' '$T/rl.out' &&
            grep -q '^  lab.json: 64 B reuse  ' '$T/rl.out'"
    page_checks jsonl "$T/jl.html" "$T/run.jsonl"
    pycheck deltas "$T/jsonl-dom.out" "$T/run.json"
    stop_server "$SRV_PID" "$SRV_OUT"
fi

# --- a stall shows: ops and p99 per interval across the run -------------------------------

# One server thread that stops 300 ms after every 1,500 requests, loaded at 2,000 ops/s: every
# 100 ms interval inside a stall has no op, and the ops that waited through it end in the next
# with a p99 of the stall (an open loop counts from each op's intended time). A run that could
# not keep up on a loaded machine is saturated (exit 2): its series is drawn all the same.
if start_server st --listen "unix:$T/st.sock" -t 1 --stall-every 1500 --stall-ms 300; then
    hb stall run echo "unix:$T/st.sock" -c 4 --rate 2000 -d 2 --warmup 0.1 --sample-ms 0 \
        --json "$T/stall.json" --html "$T/stall.html"
    check "run against a stalling server: exit 0, or 2 for a run that does not count (exit $RC)" \
        test "$RC" = 0 -o "$RC" = 2
    if chrome "$T/stall-dom" --dump-dom "file://$T/stall.html"; then
        pycheck stall "$T/stall-dom.out" "$T/stall.json"
    else
        not_ok "stall: chromium --dump-dom" "$(head -c 300 "$T/stall-dom.err")"
    fi
    stop_server "$SRV_PID" "$SRV_OUT"
fi

# --- files side by side: the fixtures (histograms as pairs), before and after -----------

expect_rc "report of two files: exit 0" 0 two report "$FIX/pairs-a-open.json" \
    "$FIX/pairs-b-open.json" -o "$T/two.html"
page_checks two "$T/two.html" "$FIX/pairs-a-open.json" "$FIX/pairs-b-open.json"
check "two files: each against the first as compare prints it" \
    grep -q '~ 1.003× \[1.003×, 1.003×\] (p=1 n=1+1)' "$T/two.html"

# --- a service one colour on the whole page ----------------------------------------------
# The fixtures given services as a stack's measurements have them: php-fpm alone (the bare
# FastCGI hop), then nginx and php-fpm (nginx -> php-fpm). php-fpm is the same colour in both
# files' CPU charts, and no two parts share one.

services() { # FILE OUT NAME... : FILE's runs given each NAME as a measured service
    python3 - "$@" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
for r in doc["runs"]:
    r["observed"]["services"] = [{"name": n, "kind": "pid", "cpu_ns_per_op": 1000.0 * (k + 2)}
                                 for k, n in enumerate(sys.argv[3:])]
json.dump(doc, open(sys.argv[2], "w"))
PY
}
services "$FIX/pairs-a-closed.json" "$T/bare.json" php-fpm
services "$FIX/pairs-b-closed.json" "$T/front.json" nginx php-fpm
expect_rc "report of two files with services: exit 0" 0 who report "$T/bare.json" \
    "$T/front.json" -o "$T/who.html"
if chrome "$T/who-dom" --dump-dom "file://$T/who.html"; then
    pycheck who "$T/who-dom.out"
else
    not_ok "services: chromium --dump-dom" "$(head -c 300 "$T/who-dom.err")"
fi

# --- markup in the evidence is text -----------------------------------------------------

$CHECK inject "$FIX/pairs-a-closed.json" "$T/inject.json"
expect_rc "report of evidence with markup in its strings: exit 0" 0 inj report \
    "$T/inject.json" -o "$T/inject.html"
chrome "$T/inject-dom" --dump-dom "file://$T/inject.html"
check_eq "markup in labels, argv and hostname adds no element" "0" \
    "$(grep -c '<img\|<b id' "$T/inject-dom.out")"
check "the markup is in the DOM as text" grep -q '&lt;b id="injected"&gt;' "$T/inject-dom.out"
check "markup in the evidence is shown as text" \
    grep -q 'lbl&lt;img src=x onerror=alert(1)&gt;&lt;b id=&quot;injected&quot;&gt;&amp;amp;' \
    "$T/inject.html"

# --- bad input --------------------------------------------------------------------------

expect_rc "report without -o: exit 64" 64 noo report "$lab"
expect_rc "report of a file that is not evidence: exit 1" 1 bad report /etc/hostname \
    -o "$T/bad.html"
check "report of a file that is not evidence: no page" test ! -e "$T/bad.html"
one_line "report of a file that is not evidence: one line" "$T/bad.err" \
    'hopbench report: /etc/hostname: '
# 1 to 16 files (docs/report.md): the 16th is drawn, a 17th refused before any page.
sixteen=()
for _ in $(seq 16); do sixteen+=("$lab"); done
expect_rc "report of 16 files: exit 0" 0 r16 report "${sixteen[@]}" -o "$T/16.html"
expect_rc "report of 17 files: exit 64" 64 r17 report "${sixteen[@]}" "$lab" -o "$T/17.html"
one_line "report of 17 files: one line" "$T/r17.err" 'at most 16 evidence files, got 17'
check "report of 17 files: no page" test ! -e "$T/17.html"
expect_rc "run --html into a directory: exit 1 before any run" 1 dir run echo \
    "tcp://127.0.0.1:1" --html "$T" --json "$T/x.json"
check "run --html into a directory: the line names it" grep -q "$T" "$T/dir.err"
check "run --html into a directory: no run, no evidence" test ! -e "$T/x.json"

done_testing
