#!/bin/bash
# hopbench cost: what the Unix socket saves per request and per month, checked
# against the same arithmetic done here with jq on fixed evidence
# (tests/fixtures/cost/), then on evidence a short live run writes; only a
# significant difference is priced (5 runs a side in the fixture's priced
# cells, a cell whose sides interleave and a stack's 2 runs a side not), and
# the one key figure comes first, as the output's bottom line; labelled runs
# name their sides (and NAME.tcp / NAME.unix their cell); bad input gets one
# line and its exit code.
# shellcheck disable=SC2016 # $vars in single quotes are jq variables
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

DATA=$(cd "$(dirname "$0")/../fixtures/cost" && pwd)

# jq: the figures of a run record by the names cost prints, the median, closeness.
COST_DEFS='
def fig($n): . as $r | $n | if . == "client" then $r.client_cpu_ns_per_op
  elif . == "server" then $r.observed.cpu.server_ns_per_op
  elif . == "client+server" then $r.observed.cpu.client_plus_server_ns_per_op
  elif . == "system" then $r.observed.cpu.system_ns_per_op
  elif . == "p50" then $r.latency_ns.p50 elif . == "mean" then $r.latency_ns.mean else null end;
def med: sort | if length % 2 == 1 then .[length / 2 | floor]
  else (.[length / 2 - 1] + .[length / 2]) / 2 end;
def close(a; b): ((a - b) | fabs) <= 1e-9 * ((b | fabs) + 1e-12);
def counted($c): [$ev[0].runs[] | select(.mode == $c.mode and .size == $c.size
  and .valid and (.interrupted | not))];
def side($c; $t; $n): [counted($c)[] | select(.transport == $t) | fig($n)] | med;
'

# hand NAME COSTJSON EVIDENCE EXPR : EXPR is true with $ev the evidence (for JSONL, its run lines).
hand() {
    local name=$1 out=$2 evidence=$3 expr=$4 got ev=$T/ev.$$.json
    if [[ $evidence == *.jsonl ]]; then
        jq -s '{runs: [.[] | select(.record == "run")]}' "$evidence" >"$ev"
    else
        cp "$evidence" "$ev"
    fi
    if jq -e --slurpfile ev "$ev" "$COST_DEFS $expr" "$out" >/dev/null 2>&1; then
        ok "$name"
    else
        got=$(jq -c --slurpfile ev "$ev" "$COST_DEFS $expr" "$out" 2>&1 | head -c 300)
        not_ok "$name" "jq '$(echo "$expr" | tr -s ' \n' ' ')' gave: $got"
    fi
}

# --- fixed evidence: every figure recomputed here ---------------------------------------

c=$T/reps.cost.json
expect_rc "cost on fixed evidence: exit 0" 0 reps \
    cost "$DATA/reps.json" --traffic 100k/month,1M/day,40k/s --price 30 --app-work 1ms,10ms \
    --json "$c"
jcheck "three cells compared, the tcp-only cell not" "$c" \
    '[.cells[] | select(.compared)] | length == 3 and
     ([.[] | "\(.mode) \(.size)"] | sort) == ["connect 64", "reuse 1024", "reuse 64"]'
jcheck "the 4 KiB cell: one tcp run, no unix run, not compared" "$c" \
    '.cells[] | select(.size == 4096) | .compared == false and .tcp.runs == 1 and .unix.runs == 0'
jcheck "the invalid unix run is read but not counted" "$c" \
    '.cells[] | select(.mode == "reuse" and .size == 64) | .unix.runs == 6 and .unix.counted == 5'
jcheck "price and month as given: 30 USD, not assumed; 2592000 s" "$c" \
    '.price_usd_per_vcpu_month == 30 and .price_assumed == false and .month_s == 2592000'
hand "every figure's medians and saving match the evidence's runs" "$c" "$DATA/reps.json" \
    '[.cells[] | select(.compared) | . as $c | .figures[] |
      close(.tcp_ns; side($c; "tcp"; .name)) and close(.unix_ns; side($c; "unix"; .name))
      and close(.saved_ns.value; side($c; "tcp"; .name) - side($c; "unix"; .name))
      and .n_tcp == ([counted($c)[] | select(.transport == "tcp")] | length)]
     | length == 18 and all'
# 5 runs a side whose CPU figures do not overlap: p = 0.0079 (0.011 with the reuse cell's
# ties), below 0.05, each such figure priced; the 1 KiB cell's sides interleave: p = 0.69
jcheck "priced: every CPU figure of the reuse and connect cells (p < 0.05, 5+5 runs)" "$c" \
    '[.cells[] | select(.compared and .size == 64) | .figures[] | select(.kind == "cpu")
      | .priced and .significant and .p < 0.05 and .n_tcp == 5 and .n_unix == 5
        and (.per_month | length) == 3 and .vcpu_saved_at_requests_per_s.value > 0]
     | length == 8 and all'
jcheck "not significant: the 1 KiB cell's CPU figures said to be so, with p and n, never priced" \
    "$c" \
    '[.cells[] | select(.size == 1024) | .figures[] | select(.kind == "cpu")
      | (.priced | not) and (.significant | not) and .p > 0.05
        and .not_priced == "no significant difference (p=0.69, n=5+5): not priced"
        and .per_month == null and .vcpu_saved_at_requests_per_s == null and .app_work == null]
     | length == 4 and all'
hand "CPU per month, vCPU share and price at 100k/month, 1M/day, 40k/s" "$c" "$DATA/reps.json" \
    '{"100k/month": 1e5, "1M/day": 3e7, "40k/s": (40000 * 86400 * 30)} as $vol
     | [.cells[] | select(.compared) | .figures[] | select(.kind == "cpu" and .priced)
        | .saved_ns.value as $s
        | .per_month[] | ($s * $vol[.traffic] / 1e9) as $cpu
        | close(.requests_per_month; $vol[.traffic]) and close(.cpu_saved_s.value; $cpu)
          and close(.vcpu_share.value; $cpu / 2592000)
          and close(.usd.value; $cpu / 2592000 * 30)]
     | length == 24 and all'
hand "one vCPU saved at 1e9 / saved req/s; dilution saved / (tcp + app work)" "$c" \
    "$DATA/reps.json" \
    '[.cells[] | select(.compared) | .figures[] | select(.kind == "cpu" and .priced) | . as $f
      | close(.vcpu_saved_at_requests_per_s.value; 1e9 / (.saved_ns.value | fabs))
        and ([.app_work[] | .app_ns] == [0, 1e6, 1e7])
        and all(.app_work[]; close(.saved_share.value; $f.saved_ns.value / ($f.tcp_ns + .app_ns)))]
     | length == 8 and all'
jcheck "the study's server figures: 24.5 us saved, 2.45 s per 100k, 40,816 req/s, 2.23 % at 1 ms" \
    "$c" \
    '.cells[] | select(.mode == "reuse" and .size == 64) | .figures[] | select(.name == "server")
     | .saved_ns.value == 24500 and (.per_month[0].cpu_saved_s.value - 2.45 | fabs) < 1e-9
     and (.vcpu_saved_at_requests_per_s.value | floor) == 40816
     and (.app_work[1].saved_share.value * 10000 | round) == 223'
jcheck "unix costs more on the connect cell's server: the saving is negative everywhere" "$c" \
    '.cells[] | select(.mode == "connect") | .figures[] | select(.name == "server")
     | .saved_ns.value == -5000 and all(.per_month[]; .cpu_saved_s.value < 0 and .usd.value < 0)
     and all(.app_work[]; .saved_share.value < 0)'
jcheck "reps: every figure has an interval around its point, carried linearly" "$c" \
    '[.cells[] | select(.mode == "reuse" and .size == 64) | .figures[] | .saved_ns as $s
      | ($s.lo <= $s.value and $s.value <= $s.hi and $s.lo < $s.hi)
        and (.kind == "latency" or all(.per_month[];
             ((.cpu_saved_s.lo / .cpu_saved_s.value) - ($s.lo / $s.value) | fabs) < 1e-9
             and ((.usd.hi / .usd.value) - ($s.hi / $s.value) | fabs) < 1e-9))]
     | length == 6 and all'

o=$T/reps.out
check "table: the study's server row, 97.20 72.70 saved 24.5 (25.2 %)" \
    grep -Eq '^ +cpu server +97\.20 +72\.70 +24\.5 \[[0-9.]+, [0-9.]+\] +25\.2 % +saves \(p=0\.011, n=5\+5\)$' \
    "$o"
check "table: one whole vCPU saved at 40,816 req/s (server)" \
    grep -Eq '^ +cpu server: one whole vCPU is saved at 40,816 \[' "$o"
check "table: the loss is shown as one, significant" \
    grep -Eq '^ +cpu server +40\.00 +45\.00 +-5\.00 \[-5\.[0-9]+, -4\.[0-9]+\] +-12\.5 % +costs more \(p=0\.0079, n=5\+5\)$' "$o"
check "table: the Unix socket costs one whole vCPU more at 200,000 req/s" \
    grep -Eq '^ +cpu server: the Unix socket costs one whole vCPU more at 200,000 \[' "$o"
check "table: the month is 30 days, the price is --price's" \
    grep -q 'A month is 30 days (2,592,000 s)' "$o"
check "table: \$30 from --price" grep -q 'Price: \$30 per vCPU-month (--price)' "$o"
# the key figure, client+server: 108.2 - 81.0 = 27.2 us; 40k/s * 86400 * 30 * 27.2 us
check "table: 40k/s saves 40k * 86400 * 30 * 27.2 us = 32.6 days of CPU, 109 % of a vCPU" \
    grep -Eq '^ +40k/s +103,680,000,000 +40,000 +32\.6 \[[0-9.]+, [0-9.]+\] days +109 \[' "$o"
check "table: the month in full for the key figure only, client+server, in each priced cell" \
    sh -c "[ \$(grep -c 'saved per month' '$o') = 2 ] &&
           [ \$(grep -c '^   cpu client+server: saved per month' '$o') = 2 ]"
check "table: a figure that is not significant says so, with p and n, and is not priced" \
    grep -qx '   cpu server: no significant difference (p=0.69, n=5+5): not priced' "$o"
check "table: nothing of the 1 KiB cell is priced" \
    sh -c "! sed -n '/^== echo reuse 1 KiB/,/^cpu /p' '$o' | grep -q 'vCPU\|per month\|dilutes'"
check "table: in the per-request table each figure's verdict, with p and n" \
    grep -Eq '^ +cpu client\+server +108\.20 +81\.00 +27\.2 \[[0-9.]+, [0-9.]+\] +25\.1 % +saves \(p=0\.011, n=5\+5\)$' "$o"
# the bottom line, second: the largest significant saving of CPU per request of client and
# server together, the reuse cell's 27.2 us, and the rate at which it is one vCPU
jcheck "--json bottom line: the reuse cell's client+server, 1e9 / 27.2 us, 2 of 3 cells priced" \
    "$c" \
    '.bottom_line | .priced and .cell == "echo reuse 64 B c=1 p=1" and .figure == "client+server"
     and .saved_ns.value == 27200 and (.vcpu_saved_at_requests_per_s.value | floor) == 36764
     and .cells_priced == 2 and .cells_compared == 3 and .n_tcp == 5 and .n_unix == 5'
check "table: the bottom line is its second line, the --json's words" \
    test "$(sed -n 2p "$o")" = "bottom line: $(jq -r .bottom_line.text "$c")"
check "table: the bottom line's words" \
    grep -Eqx 'bottom line: unix saves 27\.2 µs \[[0-9.]+, [0-9.]+\] of CPU per request \(client\+server\): one vCPU saved at 36,800 \[[0-9,]+, [0-9,]+\] requests/s, in echo reuse 64 B c=1 p=1 \(p=0\.011, n=5\+5\); 2 of 3 cells priced' "$o"
# only the cell whose difference is not significant: nothing priced, and the bottom line says so
jq '.runs |= map(select(.size == 1024))' "$DATA/reps.json" >"$T/same.json"
expect_rc "cost on a cell without a significant difference: exit 0" 0 same cost "$T/same.json" \
    --json "$T/same.cost.json"
check "no significant difference anywhere: the bottom line says nothing is priced" \
    grep -qx 'bottom line: no significant difference in CPU per request in the 1 compared cell: nothing priced' \
    "$T/same.out"
check "no significant difference anywhere: no price, no vCPU rate, no dilution" \
    sh -c "! grep -q 'value at\|vCPU is saved\|per month\|dilutes' '$T/same.out'"
jcheck "no significant difference anywhere: --json bottom line not priced, no figure" \
    "$T/same.cost.json" \
    '.bottom_line | (.priced | not) and .cells_priced == 0 and .cells_compared == 1
     and has("saved_ns") == false'

check "table: each cell is named by compare's key without an endpoint" \
    grep -qx '== echo reuse 64 B c=1 p=1' "$o"
check "table: the tcp-only cell is named and skipped" \
    grep -q 'skipped: no run that counts over both tcp and unix' "$o"

expect_rc "cost without --price: exit 0" 0 dflt cost "$DATA/reps.json"
check "default price: \$25, said to be an assumption" \
    grep -q 'Price: \$25 per vCPU-month, an assumption' "$T/dflt.out"
expect_rc "cost again: exit 0" 0 dflt2 cost "$DATA/reps.json"
check "seeded: the same evidence prints the same, intervals included" \
    cmp -s "$T/dflt.out" "$T/dflt2.out"

c1=$T/single.cost.json
expect_rc "cost on a --jsonl file: exit 0" 0 single cost "$DATA/single.jsonl" --json "$c1"
hand "jsonl: the connect cell's figures match its run lines" "$c1" "$DATA/single.jsonl" \
    '[.cells[] | . as $c | .figures[]
      | close(.saved_ns.value; side($c; "tcp"; .name) - side($c; "unix"; .name))]
     | length == 6 and all'
jcheck "one run per transport: no interval, no p, nothing priced" "$c1" \
    '([.cells[] | .figures[] | .saved_ns.lo, .saved_ns.hi, .p, (.per_month[]? | .usd.lo)]
      | all(. == null))
     and all(.cells[].figures[] | select(.kind == "cpu"); (.priced | not)
             and .not_priced == "no interval (n=1+1: fewer than two runs a side): not priced")'
check "one run per transport: the table says there is no interval, nothing priced" \
    sh -c "grep -q 'fewer than two runs on a side give no interval' '$T/single.out' &&
           grep -qx '   cpu client: no interval (n=1+1: fewer than two runs a side): not priced' \
               '$T/single.out' && ! grep -q 'per month' '$T/single.out'"

# a second tcp endpoint in the reuse cell: the cell is named and skipped, the others computed
jq '(.runs[] | select(.mode == "reuse" and .size == 64 and .rep == 1 and .transport == "tcp")
    | .endpoint) = "tcp://127.0.0.1:9001"' "$DATA/reps.json" >"$T/mixed.json"
expect_rc "two tcp endpoints in a cell: exit 0 (the other cell is computed)" 0 mixed \
    cost "$T/mixed.json" --json "$T/mixed.cost.json"
check "two tcp endpoints: the cell is skipped and says why" \
    grep -q 'skipped: a transport has runs of several endpoints in this cell' "$T/mixed.out"
jcheck "two tcp endpoints: not compared, no figures; the connect cell is" "$T/mixed.cost.json" \
    '(.cells[] | select(.mode == "reuse" and .size == 64)
      | .compared == false and .tcp.several_endpoints and .figures == [])
     and (.cells[] | select(.mode == "connect") | .compared)'
# Labelled runs: each side is named by its label, and runs of one label on two addresses (two
# invocations, each with its own free port and socket path, appended to one --jsonl) are one
# side, computed as if they had had one address. NAME.tcp and NAME.unix (as the stacks label
# a cell's arms) are the two sides of cell NAME.
jq '.runs[] |= (.label = "front." + .transport
                | if .rep >= 2 then .endpoint |= sub("9000$"; "9001") | .endpoint |= sub("fixture"; "other")
                  else . end)' "$DATA/reps.json" >"$T/labelled.json"
expect_rc "labelled runs on two addresses: exit 0" 0 lab1 \
    cost "$T/labelled.json" --traffic 100k/month,1M/day,40k/s --price 30 --app-work 1ms,10ms \
    --json "$T/labelled.cost.json"
check "labelled: the cell named NAME, each side by its label, then its address" \
    sh -c "grep -qx '== echo front reuse 64 B c=1 p=1' '$T/lab1.out' &&
           grep -Eq '^   tcp   front\.tcp \(tcp://127\.0\.0\.1:9000 and others\): [0-9]+ runs' '$T/lab1.out' &&
           grep -Eq '^   unix  front\.unix \(unix:/run/fixture\.sock and others\): [0-9]+ runs' '$T/lab1.out'"
jcheck "labelled: the --json cell and sides carry the labels; two addresses, one side" \
    "$T/labelled.cost.json" \
    '(.cells[] | select(.mode == "reuse" and .size == 64)
      | .compared and .label == "front" and .tcp.label == "front.tcp" and .unix.label == "front.unix"
        and (.tcp.several_endpoints | not) and (.unix.several_endpoints | not))'
check "labelled: the same figures as the same runs on one address" \
    jtrue -n --slurpfile a "$c" --slurpfile b "$T/labelled.cost.json" \
    '[$a[0].cells[] | select(.mode == "reuse" and .size == 64) | .figures]
     == [$b[0].cells[] | select(.mode == "reuse" and .size == 64) | .figures]
     and ([$b[0].cells[] | select(.compared)] | length) == 3'
# other labels ("a" on tcp, "u" on unix): the cell is grouped as unlabelled runs are
jq '.runs[] |= (.label = (if .transport == "tcp" then "a" else "u" end)
                | if .rep >= 2 then .endpoint |= sub("9000$"; "9001") else . end)' \
    "$DATA/reps.json" >"$T/plain-labels.json"
expect_rc "runs labelled a and u: exit 0" 0 lab3 cost "$T/plain-labels.json" \
    --json "$T/plain-labels.cost.json"
check "labelled a and u: one cell, its sides named a and u" \
    sh -c "grep -qx '== echo reuse 64 B c=1 p=1' '$T/lab3.out' &&
           grep -Eq '^   tcp   a \(tcp://127\.0\.0\.1:9000 and others\): ' '$T/lab3.out' &&
           grep -Eq '^   unix  u \(unix:/run/fixture\.sock\): ' '$T/lab3.out'"
jcheck "labelled a and u: compared, the cell without a label" "$T/plain-labels.cost.json" \
    '.cells[] | select(.mode == "reuse" and .size == 64) | .compared and .label == null'
jq '(.runs[] | select(.mode == "reuse" and .size == 64 and .rep == 1 and .transport == "tcp")
    | .label) = "b"' "$T/plain-labels.json" >"$T/twolabels.json"
expect_rc "two labels on the tcp side of a cell: exit 0" 0 lab2 \
    cost "$T/twolabels.json" --json "$T/twolabels.cost.json"
check "two labels on a side: the cell is skipped and says why" \
    grep -q 'skipped: a transport has runs of several labels' "$T/lab2.out"
jcheck "two labels on a side: not compared" "$T/twolabels.cost.json" \
    '.cells[] | select(.mode == "reuse" and .size == 64) | .compared == false and .tcp.several_endpoints'
# A stack's evidence: the front measurement of a real `stack apache-fpm --short` run (its
# histograms, phases, other CPU and network counters left out). Both of the client's
# endpoints are TCP; the backend differs, and the labels apache-fpm.tcp and apache-fpm.unix
# name the sides. Each --service (apache, php-fpm) is a figure, their sum with the client's
# another; every figure recomputed here from the runs by label.
SF=$DATA/stack-apache-fpm.jsonl
expect_rc "cost on a stack's front evidence: exit 0" 0 stackfront cost "$SF" --traffic 1M/day \
    --json "$T/stackfront.cost.json"
jcheck "stack front: the cell apache-fpm is compared, two runs a side, the unix side on TCP" \
    "$T/stackfront.cost.json" \
    '.cells[] | select(.label == "apache-fpm") | .compared and .tcp.runs == 2 and .unix.runs == 2
     and .tcp.label == "apache-fpm.tcp" and .unix.label == "apache-fpm.unix"
     and (.unix.endpoint | startswith("tcp://"))'
STACK_DEFS='
def sfig($n): if $n == "client" then .client_cpu_ns_per_op
  elif $n == "system" then .observed.cpu.system_ns_per_op
  elif $n == "client+services" then .observed.services_total.sum_ns_per_op
  elif $n == "p50" then .latency_ns.p50 elif $n == "mean" then .latency_ns.mean
  else [.observed.services[] | select(.name == $n) | .cpu_ns_per_op][0] end;
def lside($l; $n): [$ev[0].runs[] | select(.label == $l and .valid) | sfig($n)] | med;
'
hand "stack front: each figure's medians and saving are the runs' by label" \
    "$T/stackfront.cost.json" "$SF" "$STACK_DEFS"'
    [.cells[] | select(.label == "apache-fpm") | .figures[]
      | close(.tcp_ns; lside("apache-fpm.tcp"; .name))
        and close(.unix_ns; lside("apache-fpm.unix"; .name))
        and close(.saved_ns.value; lside("apache-fpm.tcp"; .name) - lside("apache-fpm.unix"; .name))]
    | length == 7 and all'
# 2 runs a side: the smallest p Mann-Whitney can give is 1/3: too few runs for a verdict,
# never priced
jcheck "stack front: 2 runs a side, the services apache and php-fpm not priced (too few runs)" \
    "$T/stackfront.cost.json" \
    '[.cells[] | select(.label == "apache-fpm") | .figures[]
      | select(.name == "apache" or .name == "php-fpm" or .name == "client+services")
      | (.priced | not) and .p >= 0.33 and .per_month == null
        and .not_priced == "too few runs for a verdict (n=2+2): not priced"]
     | length == 3 and all'
check "stack front: the bottom line prices nothing" \
    grep -q '^bottom line: no significant difference in CPU per request in the 1 compared cell: nothing priced$' \
    "$T/stackfront.out"
# an endpoint with an escape sequence in it is printed escaped, as compare prints it
jq '(.runs[] | select(.transport == "unix") | .endpoint) = "unix:/x\u001b[2J.sock"' \
    "$DATA/reps.json" >"$T/esc.json"
expect_rc "an endpoint with ESC in it: exit 0" 0 esc cost "$T/esc.json"
check "the endpoint is printed with ESC escaped" grep -qF 'unix:/x\x1b[2J.sock: 6 runs' "$T/esc.out"
check "no raw ESC reaches the terminal" bash -c "! grep -q \$'\\x1b' '$T/esc.out'"
jcheck "the --json document names its schema and evidence" "$c" \
    '.schema == "hopbench.cost/1" and (.evidence | endswith("reps.json")) and .interval_level == 0.95'

# --- what is refused ----------------------------------------------------------------------

expect_rc "only tcp runs: exit 2" 2 tonly cost "$DATA/tcp_only.json"
one_line "only tcp runs: one line" "$T/tonly.err" 'no cell has a counted run over both tcp and unix'
expect_rc "a missing file: exit 1" 1 missing cost "$T/nothing.json"
one_line "a missing file: one line" "$T/missing.err" '^hopbench cost: .*nothing\.json'
echo 'not json' >"$T/junk.json"
expect_rc "not evidence: exit 1" 1 junk cost "$T/junk.json"
one_line "not evidence: one line" "$T/junk.err" 'junk\.json'
expect_rc "a directory: exit 1" 1 dir cost "$T"
one_line "a directory: one line" "$T/dir.err"
expect_rc "--json into a directory: exit 1" 1 jdir cost "$DATA/reps.json" --json "$T"
one_line "--json into a directory: one line" "$T/jdir.err"

bad=(
    "--traffic 100/week:unknown unit 'week'"
    "--traffic 100k:then /UNIT"
    "--traffic 0/s:above 0"
    "--traffic -5/s:not a traffic volume"
    "--traffic 1/s,,2/s:empty item"
    "--price -3:--price"
    "--price abc:--price"
    "--price 0:--price"
    "--app-work 5:needs a unit"
    "--app-work 1parsec:unknown unit"
    "--seed x:--seed"
    "--bogus:unknown option"
)
for b in "${bad[@]}"; do
    args=${b%%:*}
    want=${b#*:}
    # shellcheck disable=SC2086 # the option and its value are two words
    expect_rc "cost $args: exit 64" 64 bad cost "$DATA/reps.json" $args
    one_line "cost $args: one line naming the problem" "$T/bad.err" "$want"
done
expect_rc "no EVIDENCE: exit 64" 64 none cost
one_line "no EVIDENCE: one line" "$T/none.err" 'missing EVIDENCE'
expect_rc "two files: exit 64" 64 two cost "$DATA/reps.json" "$DATA/single.jsonl"
one_line "two files: one line" "$T/two.err" 'unexpected argument'
expect_rc "cost --help: exit 0" 0 help cost --help
check "cost --help: the usage" grep -q '^usage: hopbench cost EVIDENCE' "$T/help.out"
expect_rc "hopbench --help: exit 0" 0 top --help
check "hopbench --help lists cost" grep -Eq '^  cost +what the Unix socket saves' "$T/top.out"

# --- live evidence: a short run over tcp and unix -------------------------------------------

sock=$T/s.sock
start_server srv --listen tcp://127.0.0.1:0 --listen "unix:$sock" || done_testing
e=$T/live.json
l=$T/live.jsonl
expect_rc "run tcp and unix, 2 reps: exit 0" 0 live \
    run echo "tcp://127.0.0.1:$SRV_PORT" "unix:$sock" -n 2000 --warmup 0 --reps 2 \
    --server-pid "$SRV_PID" --json "$e" --jsonl "$l"
stop_server "$SRV_PID" "$SRV_OUT"
c2=$T/live.cost.json
expect_rc "cost on live evidence: exit 0" 0 lcost cost "$e" --json "$c2"
jcheck "live: one cell, both endpoints, 2 counted runs each" "$c2" \
    '(.cells | length) == 1 and .cells[0].compared and .cells[0].tcp.counted == 2
     and .cells[0].unix.counted == 2 and (.cells[0].unix.endpoint | startswith("unix:"))'
jcheck "live: client, server, their sum, system, p50 and mean" "$c2" \
    '[.cells[0].figures[] | .name] == ["client", "server", "client+server", "system", "p50", "mean"]'
hand "live: medians and savings match the evidence's runs" "$c2" "$e" \
    '[.cells[0] as $c | .cells[0].figures[] | close(.tcp_ns; side($c; "tcp"; .name))
      and close(.saved_ns.value; side($c; "tcp"; .name) - side($c; "unix"; .name))]
     | length == 6 and all'
# system CPU comes from /proc/stat in 10 ms ticks: a short run may read 0, which has no ratio
hand "live: an interval around every saving whose values are all above 0, none otherwise" \
    "$c2" "$e" \
    '[.cells[0] as $c | .cells[0].figures[] | .name as $n | .saved_ns as $s
      | if all(counted($c)[]; fig($n) > 0)
        then $s.lo != null and $s.lo <= $s.value and $s.value <= $s.hi
        else $s.lo == null and $s.hi == null end]
     | length == 6 and all'
c3=$T/live.jsonl.cost.json
expect_rc "cost on the same run's --jsonl: exit 0" 0 lcostl cost "$l" --json "$c3"
check "the --jsonl file gives the same figures as the document" \
    jtrue -n --slurpfile a "$c2" --slurpfile b "$c3" '$a[0].cells == $b[0].cells'
check "live table: a per-request row per CPU figure" \
    grep -Eq '^ +cpu client\+server +[0-9.,]+ +[0-9.,]+ +-?[0-9.,]+ \[' "$T/lcost.out"

# merged evidence: observed is null after merge, so the client's CPU and latency remain
expect_rc "merge the live evidence with itself: exit 0" 0 merge merge "$e" "$e" -o "$T/merged.json"
expect_rc "cost on merged evidence: exit 0" 0 mcost cost "$T/merged.json" --json "$T/merged.cost.json"
jcheck "merged: client, p50 and mean, with 2 runs a side" "$T/merged.cost.json" \
    '[.cells[0].figures[] | .name] == ["client", "p50", "mean"] and .cells[0].tcp.counted == 2'

# lab evidence: its own echo server over tcp and unix, connect and reuse
expect_rc "lab --quick --sizes 64: exit 0" 0 lab lab --quick --sizes 64 --json "$T/lab.json"
expect_rc "cost on lab evidence: exit 0" 0 labcost cost "$T/lab.json" --json "$T/lab.cost.json"
jcheck "lab: connect and reuse compared, each with the server's CPU" "$T/lab.cost.json" \
    '([.cells[] | select(.compared) | .mode] | sort) == ["connect", "reuse"]
     and all(.cells[]; [.figures[] | .name] | index("server") != null)'
hand "lab: medians and savings match the evidence's runs" "$T/lab.cost.json" "$T/lab.json" \
    '[.cells[] | . as $c | .figures[]
      | close(.saved_ns.value; side($c; "tcp"; .name) - side($c; "unix"; .name))]
     | length >= 12 and all'

done_testing
