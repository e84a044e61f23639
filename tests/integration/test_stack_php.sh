#!/bin/bash
# stack php-method in short mode against the real servers (nginx -> php8.2-fpm), held after
# measuring so that their own counters can be read:
#   - --help says what it builds, measures and how long it takes; `stack list` names it
#   - every run is valid (or an open-loop run saturated, without errors: the stack then exits
#     2): the three workloads (hello.php, the static file, cpu.php) over both backends,
#     closed loop (one child of both endpoints, --reps runs) then open loop (one child per
#     run, one endpoint each)
#   - nginx's own request count (stub_status "requests") is what the evidence says hopbench
#     sent, plus the two readiness requests (and the status request itself)
#   - php-fpm's unix pool (its status page, "accepted conn") saw the hello.php and cpu.php
#     requests through the unix front, plus at most hopbench's own (two readiness requests,
#     the status request): the static file's thousands never reached it
#   - each open-loop run asked for 60 % of the closed-loop median of the same endpoint and
#     workload (computed here from the JSONL), never achieved above 101 % of it, is flagged
#     saturated exactly when it kept up with less than 99 % of what its schedule intended
#     (open_loop.kept_ops_per_s), and at least one run achieved its rate within 1 %
#   - the cost section names the three workloads, and each of its lines is what `hopbench
#     cost` prints on that closed-loop measurement's runs from --jsonl as they are (the
#     labels hello-php.tcp, hello-php.unix name each run's backend, both fronts being TCP);
#     it states the traffic and price a month assumes, and prices a month (at 1k/s, cost's row
#     for it) for the key figure only, exactly when cost prices its month (--short: never)
#   - Ctrl-C while held: exit 0, nothing left (process, cgroup, file)
#   - the gate: cpu.php removed from the docroot while the static file is measured: its
#     requests are 404s: exit 2, a gate line naming cpu.php, each backend and the status
#     class; no open loop for it; the other workloads' runs valid; nothing left
#   - Ctrl-C in the middle of a measurement: exit 130 within seconds, nothing left
# shellcheck disable=SC2016 # jq programs in single quotes
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/stack_lib.sh
. "$(dirname "$0")/stack_lib.sh"

need nginx php-fpm8.2 cgi-fcgi curl pgrep

# runs_of JSONL : one object per run record: its child (1-based, counted by header lines),
# the child's --path, whether the child ran an open loop, and the run's own fields.
runs_of() {
    jq -s '[foreach .[] as $r ({k: 0, path: null, open: false};
        if $r.record == "header" then
            {k: (.k + 1), path: $r.argv[($r.argv | index("--path")) + 1],
             open: ($r.argv | index("--rate") != null)}
        else . end;
        if $r.record == "run" then
            {child: .k, path: .path, open: .open, endpoint: $r.endpoint, cell: $r.cell,
             requests: $r.requests, ops: $r.ops_per_s, valid: $r.valid,
             errors: $r.errors_total, status4: $r.status["4xx"],
             rate: $r.open_loop.rate, saturated: $r.open_loop.saturated,
             kept: $r.open_loop.kept_ops_per_s, intended: $r.open_loop.intended_ops_per_s}
        else empty end)]' "$1"
}

# fpm_status SOCKET : php-fpm's status page of the pool on SOCKET.
fpm_status() {
    SCRIPT_NAME=/status SCRIPT_FILENAME=/status REQUEST_METHOD=GET QUERY_STRING='' \
        cgi-fcgi -bind -connect "$1" 2>/dev/null | tr -d '\r'
}

# --- help and list -------------------------------------------------------------------------

expect_rc "help: exit 0" 0 help stack php-method --help
check "help: says what it builds, measures and how long it takes" \
    grep -q "closed-loop maximum" "$T/help.out"
check "help: the open loop at 60 % of each backend's own maximum" \
    grep -q "60 % of that backend's own closed-loop median" "$T/help.out"
check "help: how long" grep -q '^Takes: ' "$T/help.out"
expect_rc "list: exit 0" 0 list stack list
check "list: names php-method" grep -q '^  php-method ' "$T/list.out"

# --- held: counts, rates, cost -------------------------------------------------------------

spawn pm stack php-method --short --hold --jsonl "$T/pm.jsonl"
PID=$SPAWNED
OUT=$T/pm.out
if wait_line "$OUT" '^holding: ' 150 "$PID"; then
    ok "php-method: measured and holding"
    runs_of "$T/pm.jsonl" >"$T/runs.json"
    check "php-method: 24 runs (3 workloads x 2 backends x 2 reps x closed, open), all valid or saturated" \
        jtrue 'length == 24 and all(.[]; (.valid or (.open and .saturated)) and .errors == 0)' \
        "$T/runs.json"
    check "php-method: each workload has its closed and open runs" \
        jtrue '[group_by(.path)[] | [(map(select(.open | not)) | length),
            (map(select(.open)) | length)]] == [[4, 4], [4, 4], [4, 4]]' "$T/runs.json"
    FRONT_UNIX=$(sed -n 's|.* and tcp://127.0.0.1:\([0-9]*\) (backend unix).*|\1|p' "$OUT")
    SOCK=$(sed -n 's|.* and unix:\(/[^,]*fpm.sock\), pm .*|\1|p' "$OUT")
    sent=$(jq '[.[].requests] | add' "$T/runs.json")
    nginx_pid=$(sed -n 's|.*: nginx pid \([0-9]*\) on .*|\1|p' "$OUT")
    got=$(nsenter -t "$nginx_pid" -n curl -s "http://127.0.0.1:$FRONT_UNIX/nginx_status" |
        sed -n 's/^ *[0-9]* [0-9]* \([0-9]*\) *$/\1/p')
    check "php-method: nginx counted $got requests: hopbench sent $sent + 2 readiness (+ the status request)" \
        test "${got:-0}" -ge $((sent + 2)) -a "${got:-0}" -le $((sent + 3))
    php_unix=$(jq --arg ep "tcp://127.0.0.1:$FRONT_UNIX" \
        '[.[] | select(.endpoint == $ep and .path != "/static.txt") | .requests] | add' \
        "$T/runs.json")
    static_unix=$(jq --arg ep "tcp://127.0.0.1:$FRONT_UNIX" \
        '[.[] | select(.endpoint == $ep and .path == "/static.txt") | .requests] | add' \
        "$T/runs.json")
    accepted=$(fpm_status "$SOCK" | sed -n 's/^accepted conn: *//p')
    check "php-method: php-fpm's unix pool accepted $accepted = $php_unix hello.php and cpu.php requests (+ at most 3 of hopbench's own; the static file's $static_unix never reached it)" \
        test "${accepted:-0}" -ge "$php_unix" -a "${accepted:-0}" -le $((php_unix + 3)) \
        -a "${static_unix:-0}" -gt 3
    # The open loop's rate: 60 % of the median of the same endpoint's and path's closed loop.
    jq '[group_by([.path, .endpoint])[] |
            (map(select(.open | not) | .ops) | sort) as $c |
            (if ($c | length) % 2 == 1 then $c[($c | length - 1) / 2]
             else ($c[($c | length) / 2 - 1] + $c[($c | length) / 2]) / 2 end) as $m |
            .[] | select(.open) | . + {want: (0.6 * $m), share: (.ops / .rate)}]' \
        "$T/runs.json" >"$T/open.json"
    check "php-method: 12 open-loop runs, each asked 60 % of its endpoint's closed-loop median" \
        jtrue 'length == 12 and all(.[]; (.rate - .want | fabs) < 0.01)' "$T/open.json"
    check "php-method: no open-loop run above 101 % of its rate" \
        jtrue 'all(.[]; .share <= 1.01)' "$T/open.json"
    check "php-method: an open-loop run is flagged saturated exactly when it kept up with less than 99 % of its rate" \
        jtrue 'all(.[]; (.kept < 0.99 * .intended) == .saturated)' "$T/open.json"
    within=$(jq '[.[] | select(.share >= 0.99 and .share <= 1.01)] | length' "$T/open.json")
    check "php-method: $within of 12 open-loop runs achieved their rate within 1 % (at least one)" \
        test "$within" -ge 1
    check "php-method: the saturated runs are counted in the table" test \
        "$(jq '[.[] | select(.saturated)] | length' "$T/open.json")" = \
        "$(sed -n 's/.*  \([0-9]*\) saturated (below 99 % of the rate).*/\1/p' "$OUT" |
            awk '{s += $1} END {print s + 0}')"
    # The cost section: each closed-loop measurement's lines against `hopbench cost` on the
    # same runs (cut from --jsonl as they are: their labels name their backends).
    check "php-method: the cost section covers the three workloads" \
        grep -q "^cost' on that measurement's part of --jsonl). Covers: hello.php, static, cpu.php.$" "$OUT"
    check "php-method: the cost section states the traffic and price a month assumes" \
        grep -q "^is significant, as 'hopbench cost' prices it in full, at a stated traffic of 1k/s\$" "$OUT"
    for child in $(jq '[.[] | select(.open | not) | .child] | unique | .[]' "$T/runs.json"); do
        path=$(jq -r --argjson k "$child" '[.[] | select(.child == $k)][0].path' "$T/runs.json")
        label=${path#/}
        [ "$label" = static.txt ] && label=static
        jq -nc --argjson k "$child" 'foreach inputs as $r (0;
            if $r.record == "header" then . + 1 else . end;
            if . != $k then empty
            else $r end)' "$T/pm.jsonl" >"$T/child-$child.jsonl"
        hb "cost-$child" cost "$T/child-$child.jsonl"
        sed -n "/^$label\$/,/^[^ ]/p" "$OUT" | grep '^   cpu ' >"$T/brief-$child.txt"
        bad=""
        months=0
        while IFS= read -r line; do
            name=$(sed -n 's/^   cpu \(.*\): saved .*/\1/p' <<<"$line")
            saved=$(sed -n 's/.*: saved \(.*\) µs per request .*/\1/p' <<<"$line")
            share=$(sed -n 's/.* µs per request (\(.*\)); .*/\1/p' <<<"$line")
            phrase=$(sed -n 's/.* µs per request ([^)]*); //p' <<<"$line")
            # the key figure's month at the stated traffic: cost's row for 1k/s, its CPU and $
            month=$(sed -n 's/.*; at 1k\/s: \(.*\) of CPU a month, .*/\1/p' <<<"$line")
            usd=$(sed -n 's/.* of CPU a month, \(.*\) a month at \$25\/vCPU-month$/\1/p' <<<"$line")
            phrase=${phrase%%; at 1k/s: *}
            if [ -n "$month$usd" ]; then
                months=$((months + 1))
                sed -n "/^   cpu $name: saved per month/,/^\$/p" "$T/cost-$child.out" |
                    grep '^   1k/s ' | grep -F -- "$month" | grep -qF -- " $usd" ||
                    bad="$bad [$name: month $month, $usd]"
            fi
            grep "^   cpu $name  " "$T/cost-$child.out" | grep -F -- "$saved" |
                grep -qF -- "$share" || bad="$bad [$name: $saved, $share]"
            # the key figure's rate under its month, each other figure's on its own line
            grep -qxF -- "   $phrase" "$T/cost-$child.out" ||
                grep -qxF -- "   cpu $name: $phrase" "$T/cost-$child.out" ||
                bad="$bad [$name: $phrase]"
        done <"$T/brief-$child.txt"
        n=$(wc -l <"$T/brief-$child.txt")
        # a month only for the key figure, and only when cost prices its month too
        want_months=$(grep -c '^   cpu .*: saved per month' "$T/cost-$child.out")
        [ "$months" = "$want_months" ] || bad="$bad [$months months, cost prices $want_months]"
        if [ "$RC" = 0 ] && [ "$n" -ge 3 ] && [ -z "$bad" ]; then
            ok "php-method: $label: the $n cost lines are hopbench cost's on the same runs ($months priced a month)"
        else
            not_ok "php-method: $label: cost lines match hopbench cost" \
                "cost exit $RC, $n lines, unmatched:$bad"
        fi
    done
    # the method's 16 connections by default; each closed loop's readings against its runs
    check "php-method: the method's 16 connections in every run" \
        jtrue -s '[.[] | select(.record == "run") | .connections] | unique == [16]' "$T/pm.jsonl"
    for path in /hello.php /static.txt /cpu.php; do
        k=$(jq --arg p "$path" '[.[] | select(.path == $p and (.open | not))][0].child' "$T/runs.json")
        cell=${path#/}
        [ "$cell" = static.txt ] && cell=static
        stack_readings php-method "$cell" "$k" "$T/pm.jsonl"
    done
    check "php-method: the closed and open tables print p99.9 and the mean" test \
        "$(grep -c '^workload .* p99 µs *p99.9 µs *mean µs *n$' "$OUT")" = 2
    kill -INT "$PID"
    reap "$PID" 20
    # A saturated open-loop run is invalid, which makes the stack's exit 2.
    want=$(jq 'if any(.[]; .saturated == true) then 2 else 0 end' "$T/runs.json")
    check_eq "php-method: Ctrl-C while held: exit 0, or 2 when a run was saturated (here $want)" \
        "$want" "$RC"
else
    not_ok "php-method: measured and holding" "stdout: $(tail -c 600 "$OUT" | tr '\n' '|')" \
        "stderr: $(tail -c 300 "$T/pm.err" | tr '\n' '|')"
    stop_pid "$PID"
fi
stack_nothing_left "php-method" "$OUT"

# --- the keepalive profile at the method's load ---------------------------------------------
# nginx keeps a FastCGI connection per client connection on each of its workers: php-fpm gets
# a worker for each, so kept connections never outnumber the workers (no refusal at -c 16, no
# starvation); an open-loop run may saturate on a loaded machine (exit 2), never fail.

hb keep stack php-method --short --profile optimized-reuse --jsonl "$T/keep.jsonl"
check "keepalive: exit 0, or 2 for a saturated open-loop run (got $RC)" test "$RC" = 0 -o "$RC" = 2
check "keepalive: the web server keeps 2 x 16 for pm static 32, said so" grep -q \
    '^check: the web server keeps at most 2 x 16 (.*) = 32 FastCGI connections per backend, each holding one of pm.max_children 32: no starvation$' \
    "$T/keep.out"
runs_of "$T/keep.jsonl" >"$T/keep-runs.json"
check "keepalive: 24 runs, no error (valid, or an open loop saturated)" \
    jtrue 'length == 24 and all(.[]; (.valid or (.open and .saturated)) and .errors == 0)' \
    "$T/keep-runs.json"
stack_nothing_left "keepalive" "$T/keep.out"

# --- the gate: a workload that fails ------------------------------------------------------

spawn gate stack php-method --short --jsonl "$T/gate.jsonl"
GATE=$SPAWNED
if wait_line "$T/gate.out" '^measuring static: closed' 60 "$GATE"; then
    DIR=$(sed -n 's|^hopbench stack php-method: directory ||p' "$T/gate.out")
    rm -f "$DIR/www/cpu.php"
    reap "$GATE" 90
    check_eq "gate: cpu.php missing: exit 2" 2 "$RC"
    for backend in tcp unix; do
        check "gate: named: cpu.php over $backend, status 4xx" grep -q \
            "^gate: cpu.php over $backend: 2 run(s) failed with [0-9]* error(s) (status, status 4xx): the result is invalid$" \
            "$T/gate.out"
        check "gate: no open loop for cpu.php over $backend" grep -q \
            "^cpu.php over $backend: no open loop: no valid closed-loop run" "$T/gate.out"
    done
    check "gate: stderr says the results are invalid" grep -q 'results are invalid' "$T/gate.err"
    runs_of "$T/gate.jsonl" >"$T/gate-runs.json"
    if jtrue '(map(select(.path == "/cpu.php")) | length == 4 and
                all(.[]; (.valid | not) and .status4 > 0)) and
               (map(select(.path != "/cpu.php")) | length == 16
                and all(.[]; .valid or (.open and .saturated)))' \
        "$T/gate-runs.json"; then
        ok "gate: cpu.php's 4 runs invalid with 4xx, the other workloads' 16 valid"
    else
        not_ok "gate: cpu.php's 4 runs invalid with 4xx, the other workloads' 16 valid" \
            "$(jq -c 'map({path, open, valid, errors, status4})' "$T/gate-runs.json")"
    fi
else
    not_ok "gate: started measuring" "$(tail -c 300 "$T/gate.err" | tr '\n' '|')"
    stop_pid "$GATE"
fi
stack_nothing_left "gate" "$T/gate.out"

# --- Ctrl-C in the middle of a measurement: exit 130, nothing left -------------------------

stack_cut '^measuring hello.php: closed' php-method -d 5 --reps 2
check "cut: no cost section after Ctrl-C" test "$(grep -c 'What the Unix socket saves' "$T/cut.out")" = 0

done_testing
