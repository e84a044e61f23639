#!/bin/bash
# stack redis: hopbench builds a private redis-server, measures it and removes it.
#   - list and --help say what it builds, measures and how long it takes; a bad name or
#     option exits 64 with one line
#   - --short --hold: the requests the evidence says were sent equal redis-server's own
#     INFO commandstats (SET and GET calls); redis-server is measured as the service
#     "redis" (run --service redis=cgroup:DIR): the runs' CPU of it is at most the cgroup's
#     own cpuacct.usage (read while held), which agrees with redis-server's own getrusage
#     (INFO used_cpu_*); its working set is the memory cgroup's own figure's order; the
#     table's rows (client, redis, sum, system, PSS, working set, TIME_WAIT per side) are
#     the medians of the runs' figures
#   - a second --short run, on its own port and socket path, compares with the first cell by
#     cell: every endpoint is labelled by its cell and arm (set-pipeline-1.tcp); cost
#     computes each SET/GET and pipeline cell
#   - --html: the measurements' evidence drawn as one report, a section per measurement; in
#     headless Chromium the bottom line is in the first 1400x900 viewport and is the one the
#     stack printed, figure for figure, the arms are
#     named by their labels, redis's CPU per request is drawn and in the bottom line, no
#     n/a stands for the measured service nor for open-loop runs not asked, nothing is called
#     a file, and nothing links to the files the stack removed;
#   - --csv: one row per run of every measurement in one file, its source the measurement
#     (the cell), its label the run's; a --csv path that cannot be written: exit 1 before
#     anything starts
#   - on a terminal the run children draw their progress line, naming the stack's
#     measurement k/n, with the whole stack's time left; with -q/--quiet none
#   - redis-server missing (hidden in a private mount namespace): one line naming the
#     apt-get command, exit 1
#   - Ctrl-C as soon as the private directory exists (the server starting): exit 130,
#     nothing left
#   - the cost section at the end covers each cell
#   - another local user (nobody) gets nothing from redis-server: it runs as the user redis,
#     with a password made for the stack (requirepass; the run children get its file): PING,
#     CONFIG SET and a wrong password are refused over TCP, the socket is not theirs, the
#     private directory not theirs to list nor the password file and the configuration to
#     read; no process of the stack is root; the password is in no evidence
#   - Ctrl-C while held: exit 0 (the measurement was done), nothing left
#   - Ctrl-C in the middle of a measurement: exit 130 within seconds, nothing left
# shellcheck disable=SC2016 # jq programs in single quotes
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/stack_lib.sh
. "$(dirname "$0")/stack_lib.sh"

need redis-server redis-cli unshare mount script setpriv chromium python3
CHECK="python3 $(cd "$(dirname "$0")" && pwd)/report_check.py"

# --- list, help, usage errors -------------------------------------------------------------

expect_rc "stack list: exit 0" 0 list stack list
check "stack list: names redis" grep -q '^  redis ' "$T/list.out"
expect_rc "stack redis --help: exit 0" 0 help stack redis --help
check "stack redis --help: what it builds" grep -q '^Builds: ' "$T/help.out"
check "stack redis --help: what it measures" grep -q '^Measures: ' "$T/help.out"
check "stack redis --help: how long it takes" grep -q '^Takes: ' "$T/help.out"
expect_rc "stack nosuch: exit 64" 64 nosuch stack nosuch
one_line "stack nosuch: one line" "$T/nosuch.err" "no stack 'nosuch'"
expect_rc "stack redis --reps 0: exit 64" 64 reps0 stack redis --reps 0
one_line "stack redis --reps 0: one line" "$T/reps0.err" '--reps'

# --- a missing server: one line naming the apt-get command, exit 1 -----------------------
# In a private mount namespace /usr/bin/redis-server is hidden under /dev/null (no execute bit).

if unshare -m true 2>/dev/null; then
    RC=0
    (cd "$T" && exec timeout -k 5 60 unshare -m sh -c \
        'mount --bind /dev/null /usr/bin/redis-server && exec "$0" "$@"' \
        "$HOPBENCH" stack redis --short) >"$T/missing.out" 2>"$T/missing.err" || RC=$?
    check_eq "missing redis-server: exit 1" 1 "$RC"
    one_line "missing redis-server: one line naming the apt-get command" "$T/missing.err" \
        '^hopbench stack: redis-server is not installed .*: apt-get install -y redis-server$'
else
    ok "missing redis-server # SKIP unshare -m is not allowed here"
fi

# --- Ctrl-C while the server starts: exit 130, nothing left --------------------------------

spawn early stack redis --short
EARLY=$SPAWNED
wait_line "$T/early.out" '^hopbench stack redis: directory ' 20 "$EARLY"
kill -INT "$EARLY"
reap "$EARLY" 20
check "early: Ctrl-C as it starts: exit 130 (or 0 if it was already done)" test "$RC" = 130 -o "$RC" = 0
stack_nothing_left "early" "$T/early.out"

# Ctrl-C the moment the first run child starts: the child may not have its handler yet and
# die of the SIGINT the stack passes on; that is a stopped stack (130), not a failed run.
for i in 1 2 3 4; do
    spawn "child$i" stack redis --short
    pid=$SPAWNED
    for ((k = 0; k < 10000; k++)); do
        grep -q '^measuring ' "$T/child$i.out" 2>/dev/null && break
        alive "$pid" || break
        sleep 0.002
    done
    kill -INT "$pid"
    reap "$pid" 20
    check "child$i: Ctrl-C as the first run child starts: exit 130 (or 0 if it was done)" \
        test "$RC" = 130 -o "$RC" = 0
    stack_nothing_left "child$i" "$T/child$i.out"
done

# --- a short run, held: counts and CPU against the server's own ---------------------------

spawn held stack redis --short --hold --jsonl "$T/held.jsonl"
HELD=$SPAWNED
if ! wait_line "$T/held.out" '^holding: ' 90 "$HELD"; then
    not_ok "held: measured and holding" "stdout: $(tail -c 600 "$T/held.out" | tr '\n' '|')" \
        "stderr: $(tail -c 300 "$T/held.err" | tr '\n' '|')"
    done_testing
fi
ok "held: measured and holding"
SOCK=$(sed -n 's|^hopbench stack redis: .* and unix:\(/.*\.sock\)$|\1|p' "$T/held.out")
PORT=$(sed -n 's|^hopbench stack redis: .* on tcp://127.0.0.1:\([0-9]*\) and .*|\1|p' "$T/held.out")
PWFILE=$(dirname "$SOCK")/pw
CG=$(sed -n 's/^cgroup: //p' "$T/held.out")
# redis-server is no one's but the stack's: run as the user redis, a password made for the stack
check "held: the stack says how redis-server authenticates its runs" grep -q \
    "^redis: authentication requirepass " "$T/held.out"
check "held: the stack says who redis-server runs as and its password's file" grep -q \
    "^redis: user redis; a password made for the stack in $PWFILE (0600, in a 0700 directory of redis's)" \
    "$T/held.out"
check_eq "held: no process of the stack runs as root" "" \
    "$(stack_root_procs "$T/held.out" "" | tr '\n' '|')"
check_eq "held: its password file is 0600, redis's, in its 0700 directory" "600 redis 700 redis" \
    "$(stat -c '%a %U' "$PWFILE" "$(dirname "$PWFILE")" | tr '\n' ' ' | sed 's/ $//')"
redis_attack held "$PORT" "$SOCK" "$PWFILE"
private_refused held "$(dirname "$(dirname "$SOCK")")" "$PWFILE" "$(dirname "$SOCK")/redis.conf"
check "held: the password is in no evidence (the runs were given its file)" \
    sh -c "! grep -qF '$(cat "$PWFILE")' '$T/held.jsonl' '$T/held.out' '$T/held.err'"
export REDISCLI_AUTH
REDISCLI_AUTH=$(cat "$PWFILE")
INFO=$(redis-cli -s "$SOCK" INFO commandstats | tr -d '\r')
CPUINFO=$(redis-cli -s "$SOCK" INFO cpu | tr -d '\r')
unset REDISCLI_AUTH
USAGE=$(cat "$CG/cpuacct.usage" 2>/dev/null || sed -n 's/^usage_usec \([0-9]*\)/\1000/p' "$CG/cpu.stat")

calls() { printf '%s\n' "$INFO" | sed -n "s/^cmdstat_$1:calls=\([0-9]*\),.*/\1/p"; }
# sent CMD : the requests the runs of --command CMD sent (the header before them names it).
sent() {
    jq -s --arg c "$1" '[foreach .[] as $r (null;
        if $r.record == "header" then ($r.argv | index("--command")) as $i | $r.argv[$i + 1]
        else . end; if $r.record == "run" and . == $c then $r.requests else empty end)] | add' \
        "$T/held.jsonl"
}
check_eq "held: SET requests sent = redis-server's cmdstat_set calls" "$(sent set)" "$(calls set)"
check_eq "held: GET requests sent = redis-server's cmdstat_get calls" "$(sent get)" "$(calls get)"
check "held: the cost section covers the four cells, redis-server's CPU among its figures" \
    grep -q "Covers: set pipeline 1, set pipeline 16, get pipeline 1, get pipeline 16.$" \
    "$T/held.out"
check "held: the cost section prices redis-server's CPU (the service redis) in each cell" test \
    "$(grep -c '^   cpu redis: saved .* µs per request' "$T/held.out")" = 4
check "held: every run measured the one service redis from its cgroup" jtrue -s \
    --arg cg "$CG" '[.[] | select(.record == "run") | .observed.services] |
    all(.[]; length == 1 and .[0].name == "redis" and .[0].source == "cgroup " + $cg)' \
    "$T/held.jsonl"
check "held: runs are valid, 2 per transport and cell" jtrue -s \
    '[.[] | select(.record == "run")] | length == 16 and all(.[]; .valid and .errors_total == 0)' \
    "$T/held.jsonl"

# The runs' windows are within the cgroup's life: their CPU is at most its whole usage,
# and it is most of it (the windows are 3/4 of each run); the usage is redis-server's own.
WIN=$(jq -s '[.[] | select(.record == "run") | .observed.services[0].cpu_ns] | add' "$T/held.jsonl")
RUSAGE=$(printf '%s\n' "$CPUINFO" | awk -F: '/^used_cpu_(sys|user):/ { s += $2 } END { printf "%.0f", s * 1e9 }')
check "held: runs' cgroup CPU ($WIN ns) <= the cgroup's cpuacct.usage ($USAGE ns)" \
    test "$WIN" -le "$USAGE"
check "held: runs' cgroup CPU ($WIN ns) >= 40 % of the cgroup's usage ($USAGE ns)" \
    test "$((WIN * 10))" -ge "$((USAGE * 4))"
check "held: cgroup usage ($USAGE ns) within 10 % of redis-server's getrusage ($RUSAGE ns)" \
    test "$((USAGE * 10))" -ge "$((RUSAGE * 9))" -a "$((USAGE * 10))" -le "$((RUSAGE * 11))"
# The table's rows of "set pipeline 1": each the median of its 2 runs per transport (the
# mean of two), as the evidence gives them.
# row NAME : the tcp and unix figures of row NAME in the block of "set pipeline 1".
row() {
    sed -n '/^set pipeline 1 /,/^$/p' "$T/held.out" | grep -- "^  $1 " |
        sed -e "s|^  $1 *||" -e 's/ ([+-][0-9,]*)//g' -e 's/,//g' | awk '{ print $1, $2 }'
}
# want JQ-FIGURE T : the mean of the figure over the 2 runs of transport T of set pipeline 1.
want() {
    jq -s --arg t "$2" "[.[] | select(.record == \"run\")][0:4] | map(select(.label ==
        \"set-pipeline-1.\" + \$t) | $1) | add / length" "$T/held.jsonl"
}
# close A B ULP : |A - B| <= ULP (the table rounds).
close() { awk -v a="$1" -v b="$2" -v u="$3" 'BEGIN { d = a - b; exit !(d <= u && d >= -u) }'; }
for spec in 'CPU µs/req client:.client_cpu_ns_per_op / 1000:0.011' \
    'CPU µs/req redis:.observed.services[0].cpu_ns_per_op / 1000:0.011' \
    'CPU µs/req sum:.observed.services_total.sum_ns_per_op / 1000:0.011' \
    'CPU µs/req system:.observed.cpu.system_ns_per_op / 1000:0.011' \
    'PSS MiB redis:.observed.services[0].pss_end / 1048576:0.051' \
    'working set MiB redis:.observed.services[0].working_set_end / 1048576:0.051' \
    'TIME_WAIT front, client side:.observed.sockets.time_wait_client.peak:0.51'; do
    IFS=: read -r name fig ulp <<<"$spec"
    read -r tcp unix <<<"$(row "$name")"
    wt=$(want "$fig" tcp)
    check "held: the table's '$name' over tcp ($tcp) is the runs' median ($wt)" close "$tcp" "$wt" "$ulp"
    if [ "${name#TIME_WAIT}" = "$name" ]; then
        wu=$(want "$fig" unix)
        check "held: the table's '$name' over unix ($unix) is the runs' median ($wu)" \
            close "$unix" "$wu" "$ulp"
    else
        check_eq "held: the table's '$name' over unix: a Unix socket has none" 0 "$unix"
    fi
done
# The service's working set is its memory cgroup's: the cgroup of redis-server in the memory
# hierarchy (which may nest elsewhere than cpuacct), read while held, within the runs' range.
MEMCG=$(sed -n 's/^[0-9]*:memory:\(.*\)/\1/p' "/proc/$(sed -n 's/.*redis-server pid \([0-9]*\) .*/\1/p' "$T/held.out")/cgroup")
if [ -n "$MEMCG" ] && [ -r "/sys/fs/cgroup/memory$MEMCG/memory.stat" ]; then
    NOW=$(awk '/^total_inactive_file / { i = $2 } END { print i }' "/sys/fs/cgroup/memory$MEMCG/memory.stat")
    USE=$(cat "/sys/fs/cgroup/memory$MEMCG/memory.usage_in_bytes")
    WS=$(jq -s '[.[] | select(.record == "run") | .observed.services[0].working_set_end] | max' "$T/held.jsonl")
    check "held: redis's working set in the evidence ($WS) within 2x of its memory cgroup's now ($((USE - NOW)))" \
        test "$WS" -gt 0 -a "$((WS * 2))" -ge "$((USE - NOW))" -a "$WS" -le "$(((USE - NOW) * 2))"
fi

# The study's load by default, redis-benchmark's 50 clients; beside each table the readings
# the evidence gives (p99.9, mean, the noisy runs, TIME_WAIT's (+added), system never below its
# parts unsaid, the lifecycle: every connection kept, the load and what saturated).
check "held: 50 connections in every run, the stack's line says so" sh -c \
    "grep -q ' 50 connection(s)\$' '$T/held.out' && jq -se '[.[] | select(.record == \"run\") |
     .connections] | unique == [50]' '$T/held.jsonl' >/dev/null"
OUT=$T/held.out
k=0
for cell in "set pipeline 1" "set pipeline 16" "get pipeline 1" "get pipeline 16"; do
    k=$((k + 1))
    stack_readings held "$cell" "$k" "$T/held.jsonl"
done

kill -INT "$HELD"
reap "$HELD" 20
check_eq "held: Ctrl-C while held: exit 0" 0 "$RC"
stack_nothing_left "held" "$T/held.out"

# --- two stack runs compared: each endpoint labelled by its cell and arm ------------------
# The second run has its own free port and socket path; the labels match its runs to the
# first's cell by cell, and keep SET and GET apart.

expect_rc "second: stack redis --short --jsonl --csv: exit 0" 0 second \
    stack redis --short --jsonl "$T/second.jsonl" --csv "$T/second.csv" --html "$T/second.html"
stack_nothing_left "second" "$T/second.out"
# --csv: every run of every measurement, one row each, in the evidence's order; the source
# column names the measurement (the cell), the label column the run's endpoint
check_eq "second --csv: one row per run, a header" \
    $(($(jq -s '[.[] | select(.record == "run")] | length' "$T/second.jsonl") + 1)) \
    "$(wc -l <"$T/second.csv")"
check_eq "second --csv: the source and label of each row are its measurement and run's" \
    "$(jq -r 'select(.record == "run") | (.label | sub("-"; " "; "g") | sub("\\.(tcp|unix)$"; "")) + "," + .label' "$T/second.jsonl")" \
    "$(tr -d '\r' <"$T/second.csv" | awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
        { print $col["source"] "," $col["label"] }')"
check "second --csv: one line on stdout names it" grep -q "^csv: $T/second.csv (4 measurement(s))\$" \
    "$T/second.out"
# --html: the measurements' evidence drawn as one report, a section per measurement
check "second --html: one line on stdout names it" \
    grep -q "^html: $T/second.html (4 of 4 measurement(s))\$" "$T/second.out"
check_eq "second --html: a file section per measurement" 4 \
    "$(grep -o '<section class="file"' "$T/second.html" | wc -l)"
check "second --html: charts drawn (SVG), no script" \
    bash -c "grep -q '<svg' '$T/second.html' && ! grep -qi '<script' '$T/second.html'"
# what the stack printed, its tables and what it reads beside them, in the page as on stdout
check "second --html: what the stack printed is in the page, its tables and readings" \
    python3 -c '
import html, re, sys
page = open(sys.argv[1], encoding="utf-8").read()
m = re.search(r"<section class=\"stack\" id=\"stack-text\">.*?<pre>(.*?)</pre>", page, re.S)
out = open(sys.argv[2], encoding="utf-8").read()
text = html.unescape(m.group(1)) if m else ""
sys.exit(0 if text and text in out and all(w in text for w in
    ("latency p99.9 µs", "latency mean µs", "noisy runs", "  lifecycle: ", "  load tcp: ",
     "TIME_WAIT front, client side", "What the Unix socket saves",
     "at a stated traffic of 1k/s")) else 1)' \
    "$T/second.html" "$T/second.out"
check "second --html: the stack's directory holds no copy afterwards" \
    bash -c "! ls /tmp/hopbench-stack.*/[0-9]*-*.json 2>/dev/null | grep -q ."
# The page in headless Chromium: the DOM it builds, and the first 1400x900 viewport, where
# the bottom line must be (2 runs a side: no verdict, its amber card and grid of ratios).
if chrome "$T/second-dom" --dump-dom "file://$T/second.html"; then
    # shellcheck disable=SC2086 # CHECK is a command and its script
    tap_from $CHECK stack "$T/second-dom.out" "$T/second.jsonl"
    # the page's bottom line is the one the stack printed, figure for figure
    # shellcheck disable=SC2086
    tap_from $CHECK bottom "$T/second-dom.out" "$T/second.out"
else
    not_ok "second --html: chromium --dump-dom" "$(head -c 300 "$T/second-dom.err")"
fi
if chrome "$T/second-view" --screenshot="$T/second-view.png" --window-size=1400,900 \
    "file://$T/second.html"; then
    # shellcheck disable=SC2086
    read -r _ amber < <($CHECK colours "$T/second-view.png" 0 0 1400 900 8a5a00)
    check "second --html: the bottom line in the first 1400x900 viewport ($amber amber pixels)" \
        test "${amber:-0}" -ge 20
    echo "# screenshot of the first viewport: $T/second-view.png"
    [ -z "${REPORT_SHOTS:-}" ] || cp "$T/second-view.png" "$REPORT_SHOTS/stack-redis-viewport.png"
else
    not_ok "second --html: chromium --screenshot" "$(head -c 300 "$T/second-view.err")"
fi
# What the stack printed wraps within the page (1360 px and its margin): in a 2400 px wide
# window no text (#222) right of x 1400, where its long lines ran before.
if chrome "$T/second-wide" --screenshot="$T/second-wide.png" --window-size=2400,900 \
    "file://$T/second.html"; then
    # shellcheck disable=SC2086
    read -r _ beyond < <($CHECK colours "$T/second-wide.png" 1400 0 1000 900 222222)
    check_eq "second --html: what the stack printed wraps within the page (text pixels right of 1400 px)" \
        0 "${beyond:-x}"
else
    not_ok "second --html: chromium --screenshot, 2400 px wide" "$(head -c 300 "$T/second-wide.err")"
fi
expect_rc "--csv a directory: exit 1" 1 csvdir stack redis --short --csv "$T"
one_line "--csv a directory: one line" "$T/csvdir.err" 'stack: '
check "--csv a directory: refused before starting anything" test ! -s "$T/csvdir.out"

# --- the run children's progress line on a terminal, and --quiet -------------------------
# Under a pseudo-terminal (script(1)) each run child draws its live progress line on the
# stack's stderr ("\r" ... "ESC[K"); with --quiet (passed on to them) none is drawn.

# The lines of a stack's children name the stack's measurement k/4 in order, and the time
# left while measurement 1 runs is the whole stack's: more than that child's own planned time
# (2 transports x --reps 1 x (-d 0.3 + --warmup 0.1) of --short, 0.8 s), which a child's own
# estimate never exceeds (nor its display, rounded to whole seconds, by more than 0.5 s), and
# more than any time left shown during measurement 4.
stack_progress_checks() {
    local name=$1 raw=$2 own first last
    tr '\r' '\n' <"$raw" | grep -a $'\033\\[K' | sed $'s/\033\\[K.*//' | grep -a . >"$T/$name.lines"
    check_eq "$name: the lines name measurements 1/4 to 4/4, in order" "1/4 2/4 3/4 4/4" \
        "$(grep -aoE '^measurement [0-9]+/[0-9]+ redis ' "$T/$name.lines" | awk '{ print $2 }' |
            uniq | tr '\n' ' ' | sed 's/ $//')"
    check "$name: each names its measurement's cell" \
        grep -aqE '^measurement 4/4 redis get-pipeline-16\.(tcp|unix)  rep 1/1  ' "$T/$name.lines"
    own=$(awk 'BEGIN { print 2 * 1 * (0.3 + 0.1) }')
    first=$(grep -a '^measurement 1/4 ' "$T/$name.lines" | grep -aoE '~[0-9]+ s left' |
        tr -dc '0-9\n' | sort -n | head -1)
    last=$(grep -a '^measurement 4/4 ' "$T/$name.lines" | grep -aoE '~[0-9]+ s left' |
        tr -dc '0-9\n' | sort -n | tail -1)
    check "$name: during measurement 1 the time left (least ${first:-none} s) exceeds one child's own ($own s)" \
        awk -v f="${first:--1}" -v o="$own" 'BEGIN { exit !(f > o + 0.5) }'
    check "$name: ... and any shown during measurement 4 (most ${last:-none} s)" \
        test "${first:--1}" -gt "${last:-999}"
}

for q in "" -q; do
    name=tty${q:+-quiet}
    printf '%q ' "$HOPBENCH" stack redis --short --reps 1 ${q:+"$q"} >"$T/$name.cmd"
    (cd "$T" && timeout -k 5 120 script -qec "stty cols 100 rows 24; $(cat "$T/$name.cmd") >$T/$name.out" \
        "$T/$name.raw" >/dev/null 2>&1 </dev/null)
    RC=$?
    check_eq "$name: exit 0" 0 "$RC"
    drawn=$(tr '\r' '\n' <"$T/$name.raw" | grep -ac $'\033\\[K')
    if [ -z "$q" ]; then
        check "$name: the run children draw their progress line ($drawn drawn)" test "$drawn" -gt 0
        stack_progress_checks "$name" "$T/$name.raw"
    else
        check_eq "$name: --quiet: no progress line drawn" 0 "$drawn"
    fi
    check_eq "$name: never an escape on stdout" 0 "$(grep -c $'\033' "$T/$name.out")"
    stack_nothing_left "$name" "$T/$name.out"
done
check "second: another port and socket path than the first" jtrue -n \
    --slurpfile a "$T/held.jsonl" --slurpfile b "$T/second.jsonl" \
    '[$a[], $b[] | select(.record == "run") | .endpoint] | unique | length == 4'
check "held: 8 labels, one per cell and transport, each naming its transport" jtrue -s \
    '[.[] | select(.record == "run") | [.label, .transport]] | unique
     | length == 8 and all(.[]; .[0] as $l | .[1] as $t
       | ($l | test("^(set|get)-pipeline-(1|16)\\.(tcp|unix)$")) and ($l | endswith("." + $t)))' \
    "$T/held.jsonl"
expect_rc "compare the two stack runs: exit 0" 0 cstack compare "$T/held.jsonl" "$T/second.jsonl"
check_eq "compare the two stack runs: 8 cells matched in each of 6 metrics (n=2+2)" 48 \
    "$(grep -c 'n=2+2)$' "$T/cstack.out")"
check "compare the two stack runs: no cell in one file only" \
    sh -c "! grep -q '^only in' '$T/cstack.out'"
check "compare the two stack runs: cells named by label" \
    grep -Eq '^redis set-pipeline-16\.unix [a-z]+ .* p=16 ' "$T/cstack.out"
expect_rc "cost on a stack run: exit 0" 0 sc cost "$T/second.jsonl" --json "$T/second.cost.json"
jcheck "cost on a stack run: one cell per SET/GET and pipeline, tcp against unix" \
    "$T/second.cost.json" \
    '([.cells[] | select(.compared) | .label] | sort)
     == ["get-pipeline-1", "get-pipeline-16", "set-pipeline-1", "set-pipeline-16"]'

# --- Ctrl-C in the middle of a measurement ------------------------------------------------

stack_cut '^measuring set pipeline 1' redis -d 5 --reps 2

done_testing
