#!/bin/bash
# The study's cases of stack nginx-fpm and apache-fpm (and lighttpd-fpm's overload), each in
# short mode against the real servers, held after measuring so that the servers' own counters
# and logs can be read:
#   - the options: one case at a time, only where the stack has it, not with --profile,
#     --pool sizes checked (exit 64, one line)
#   - --ablation: one fresh stack per step (nginx: 5 steps, Apache 6 with AllowOverride
#     None), each measured tcp and unix; the table and the change table name every step;
#     every run valid; the last step's request count in front is the web server's own
#   - at the pod study's 96 connections by default; kept connections really kept, one per
#     php-fpm worker (Apache 2 x 8 for pm static 16, the study's 16 for 16; nginx up to one
#     per client connection on each worker, its reuse step with a php-fpm worker for each):
#     the reuse step's tcp-backend runs leave TIME_WAIT for under 5 % of their requests, the
#     step before for at least a quarter; the lifecycle in CPU per request across them
#   - --pool 4,8: each size a fresh stack; php-fpm's own status page of the last one says
#     8 processes; the table names both sizes
#   - --overload (the three stacks): Apache runs a request worker for every connection (its
#     apache2.conf), as the limits line says, so its client timeouts are not the excess of
#     connections over its workers; per transport a "limit hit" line that does not name the
#     front's slots, and names php-fpm's backlog when its status page says it filled
#   - --overload (the three stacks): exit 0 whatever fails; per transport the 5xx it prints are
#     the lines of the front's own status log; the client's 5xx are no more than those (a
#     reply in flight at the end is logged but not counted); the backend errors it prints
#     by kind are the web server's own log lines of that kind on that backend; the failure
#     mode it names follows from those logs (EAGAIN named only with EAGAIN lines, "none"
#     only without a 5xx)
#     php-fpm's listen queue printed per pool (max listen queue, listen queue len) is its
#     own status page's, read again while held; the kernel's ListenOverflows printed for
#     tcp is the run's evidence's; both ways, unix against tcp: what succeeded (p50, p99,
#     p99.9, mean) and what failed (errors of requests, 5xx, client timeouts), and TCP's SYN
#     retransmits, each the runs' own
#   - --starve (nginx): the warning line before measuring; the output names the
#     starvation ("pool starved: 16 kept FastCGI connections for 4 workers") and its 504s
#     are the lines of nginx's status log
#   - every process, cgroup and directory of every step is gone afterwards
# shellcheck disable=SC2016 # jq programs in single quotes
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/stack_lib.sh
. "$(dirname "$0")/stack_lib.sh"

fpm_need

# --- usage -----------------------------------------------------------------------------------

expect_rc "two cases: exit 64" 64 two stack nginx-fpm --ablation --overload
one_line "two cases: one line" "$T/two.err" 'one at a time'
expect_rc "apache --starve: exit 64" 64 astarve stack apache-fpm --starve
one_line "apache --starve: one line" "$T/astarve.err" 'stack apache-fpm: --starve: not a case'
expect_rc "lighttpd --starve (it keeps no FastCGI connection): exit 64" 64 lstarve stack \
    lighttpd-fpm --starve
expect_rc "redis --overload: exit 64" 64 rover stack redis --overload
expect_rc "--pool 0: exit 64" 64 pool0 stack nginx-fpm --pool 4,0
expect_rc "--pool x: exit 64" 64 poolx stack nginx-fpm --pool 4,x
expect_rc "a case with --profile: exit 64" 64 cprof stack nginx-fpm --pool 4 --profile baseline
one_line "a case with --profile: one line" "$T/cprof.err" 'the case sets its own'

# --- the ablation ----------------------------------------------------------------------------

for stack in nginx-fpm apache-fpm; do
    web=${stack%-fpm}
    name=ablation-$web
    held "$name" "$stack" --ablation || continue
    steps=5
    [ "$web" = apache ] && steps=6
    check_eq "$name: one directory per step" "$steps" \
        "$(grep -c '^hopbench stack [a-z-]*: directory ' "$OUT")"
    for label in baseline '+fpm static' "+lean $web" '+php.ini' '+reuse'; do
        check "$name: '$label' in the table and the change table" \
            test "$(grep -c -- "^$label" "$OUT")" -ge 2
    done
    [ "$web" = apache ] && check "$name: the .htaccess step" grep -q '^+no .htaccess' "$OUT"
    # kept FastCGI connections are kept: the reuse step's tcp-backend runs leave TIME_WAIT
    # sockets on the backend for under 5 % of their requests, the step before (a connection
    # per request) for at least a quarter (loopback's tcp_tw_reuse recycles some: a lower
    # bound of the connections opened)
    conns=$(sed -n 's/^ablation.*http keep-alive load with \([0-9]*\) connection.*/\1/p' "$OUT")
    check "$name: kept connections kept, one per request before" jtrue -s '
        def tw: .observed.watch[0] | .time_wait_client.peak + .time_wait_server.peak;
        [.[] | select(.record == "run")] | .[-8:] | map(select(.label | endswith(".tcp"))) |
        length == 4 and
        all(.[:2][]; tw >= .requests / 4) and
        all(.[2:][]; tw < .requests / 20)' \
        "$T/$name.jsonl"
    [ "$web" = nginx ] && check "$name: nginx's reuse step has a worker for every kept connection" \
        grep -q "^+reuse, pm $((2 * conns)): .*pm static $((2 * conns)), listen.backlog 1024, kept per process [0-9]*\$" "$OUT"
    [ "$web" = apache ] && check "$name: Apache's reuse step keeps one connection per worker, as the pod study (16 for 16)" \
        grep -q "^+reuse: .*pm static 16, listen.backlog 1024, kept per process 8\$" "$OUT"
    check_eq "$name: the study's load by default" 96 "$conns"
    check "$name: the lifecycle in CPU per request across the step that keeps connections" grep -q \
        "^lifecycle in CPU per request (the services, medians: +php.ini less +reuse" "$OUT"
    # every step priced, though each step's directory (its evidence) is gone by the end
    check_eq "$name: no step that cannot be priced" 0 "$(grep -c 'cannot be priced' "$OUT")"
    measured=$(sed -n 's/^measuring \(.*\) \.\.\.$/\1/p' "$OUT")
    priced=$(sed -n '/^What the Unix socket saves/,$p' "$OUT" |
        awk 'prev != "" && /^   cpu [^:]*: saved / { print prev } { prev = ($0 ~ /^ / ? "" : $0) }')
    check_eq "$name: each step's saving printed, in order" "$measured" "$priced"
    check "$name: every run valid, 4 per step" jtrue -s --argjson n $((steps * 4)) \
        '[.[] | select(.record == "run")] | length == $n and all(.[]; .valid and .errors_total == 0)' \
        "$T/$name.jsonl"
    # the last step's front (backend unix) against the web server's own count
    FRONT_UNIX=$(grep '^+reuse[^:]*: ' "$OUT" | sed -n 's|.* and tcp://127.0.0.1:\([0-9]*\) (backend unix).*|\1|p')
    sent=$(jq -s '[.[] | select(.record == "run")] | .[-4:] | map(.requests) | add' "$T/$name.jsonl")
    web_pid=$(grep '^+reuse[^:]*: ' "$OUT" | sed -n "s|.*: $web pid \([0-9]*\) on .*|\1|p")
    got=$(web_requests "$web" "$FRONT_UNIX" "$web_pid")
    flight=$(jq -s '[.[] | select(.record == "run")] | .[-4:] | map(.connections) | add' "$T/$name.jsonl")
    check "$name: the last step's $web counted $got requests: hopbench sent $sent + 2 readiness (+ the status request; - at most $flight in flight when a run stopped)" \
        test "${got:-0}" -ge $((sent + 2 - flight)) -a "${got:-0}" -le $((sent + 3))
    release "$name"
done

# --- the pool sweep --------------------------------------------------------------------------

if held pool nginx-fpm --pool 4,8; then
    check "pool: both sizes in the table" \
        test "$(grep -c '^pm static 4 \|^pm static 8 ' "$OUT")" -ge 4
    procs=$(fpm_status "$DIR/fpm.sock" | sed -n 's/^total processes: *//p')
    check_eq "pool: php-fpm's own status page of the last step: 8 processes" 8 "$procs"
    release pool
fi

# --- the overload ----------------------------------------------------------------------------

# report_field T FIELD : the value after "FIELD" in transport T's block of the report.
report_field() {
    sed -n "/^$1:\$/,/failure mode/p" "$OUT" | sed -n "s/^  $2//p" | head -n 1
}

# kind_of T KIND : the count of KIND among the backend errors printed for transport T (0 if not).
kind_of() {
    report_field "$1" "$web log, backend errors: " | tr ',' '\n' |
        sed -n "s/^ *$2 \([0-9]*\)\$/\1/p" | grep . || echo 0
}

for stack in nginx-fpm apache-fpm lighttpd-fpm; do
    web=${stack%-fpm}
    name=overload-$web
    held "$name" "$stack" --overload || continue
    for t in tcp unix; do
        log5xx=$(grep -c '^5' "$DIR/status-$t.log")
        said=$(report_field "$t" "$web status log: " | sed -n 's/.*(5xx \([0-9,]*\))$/\1/p' | tr -d ,)
        check_eq "$name $t: the 5xx printed are the status log's" "$log5xx" "$said"
        client=$(jq -s --arg ep "$t" '[.[] | select(.record == "run" and .proto == "http")] |
            if $ep == "tcp" then .[0] else .[1] end | .status["5xx"] // 0' "$T/$name.jsonl")
        check "$name $t: the client's 5xx ($client) within the status log's ($log5xx)" \
            test "$client" -le "$log5xx"
        mode=$(report_field "$t" "failure mode: ")
        if echo "$mode" | grep -q EAGAIN; then
            check "$name $t: '$mode' with EAGAIN lines counted" \
                test "$(kind_of "$t" 'connect EAGAIN (backlog full)')" -gt 0
        fi
        if echo "$mode" | grep -q '^none'; then
            check_eq "$name $t: '$mode' with no 5xx in the status log" 0 "$log5xx"
        fi
        if [ "$log5xx" -gt 0 ] && [ "${mode#none}" != "$mode" ]; then
            # what the block said, and the log now, to tell a log written after the stack read it
            not_ok "$name $t: 5xx logged, a failure mode named ($mode)" \
                "$log5xx 5xx in the log now; the block: $(sed -n "/^$t:\$/,/failure mode/p" "$OUT" | tr '\n' '|')"
        elif [ "$log5xx" -gt 0 ]; then
            ok "$name $t: 5xx logged, a failure mode named ($mode)"
        fi
    done
    # a request slot in front for every connection, so that the limit is php-fpm's pool: the
    # client's timeouts cannot be the excess of connections over the web server's workers
    conns=$(sed -n 's/^overload: limits: \([0-9]*\) client connection.*/\1/p' "$OUT")
    if [ "$web" = apache ]; then
        workers=$(sed -n 's/^MaxRequestWorkers \([0-9]*\)$/\1/p' "$DIR/apache2.conf")
        check "$name: Apache runs ${workers:-?} request workers for ${conns:-?} connections" \
            test "${workers:-0}" -ge "${conns:-1}" -a "${conns:-0}" -gt 8
        check "$name: the limits line says so" \
            grep -q "^overload: limits: $conns client connection(s); apache holds $workers request(s) at once; php-fpm 4 worker(s), listen.backlog 4\$" "$OUT"
    fi
    for t in tcp unix; do
        hit=$(report_field "$t" "limit hit: ")
        check "$name $t: where the limit was hit is said ($hit), not the front's slots" \
            test -n "$hit" -a "${hit#*request slots}" = "$hit"
    done
    # php-fpm's own listen-queue figures, as its status page says them while held
    port=$(sed -n 's|^overload: .* php-fpm pid [0-9]* on tcp://\(127.0.0.1:[0-9]*\) and .*|\1|p' "$OUT")
    fpm_pid=$(sed -n 's|^overload: .* php-fpm pid \([0-9]*\) on tcp://.*|\1|p' "$OUT")
    for t in tcp unix; do
        if [ "$t" = tcp ]; then page=$(fpm_status "$port" "$fpm_pid"); else page=$(fpm_status "$DIR/fpm.sock"); fi
        max=$(printf '%s\n' "$page" | sed -n 's/^max listen queue: *//p')
        len=$(printf '%s\n' "$page" | sed -n 's/^listen queue len: *//p')
        said=$(report_field "$t" "php-fpm status page (pool $t): ")
        check "$name $t: php-fpm's max listen queue $max and listen queue len $len as printed ($said)" \
            sh -c "printf '%s' '$said' | grep -q '^listen queue [0-9]*, max listen queue ${max:-x}, listen queue len ${len:-x}'"
        if [ "${len:-0}" -gt 0 ] && [ "${max:-0}" -ge "$len" ]; then
            hit=$(report_field "$t" "limit hit: ")
            named="php-fpm's listen backlog (max listen queue $max of $len)"
            check "$name $t: the backlog filled (max listen queue $max of $len): the limit hit names it" \
                test "${hit#*"$named"}" != "$hit"
        fi
    done
    # both ways: what succeeded (the run's own percentiles and mean, ms) and what failed (its
    # errors, of its requests), unix against tcp, and TCP's SYN retransmits over its run
    want=$(jq -rs 'def ms: . / 1e6 * 100 | round / 100;
        [.[] | select(.record == "run")] as $r |
        ($r | map(select(.label == "overload.tcp"))[0]) as $t |
        ($r | map(select(.label == "overload.unix"))[0]) as $u |
        "p50 \($u.latency_ns.p50 | ms) against \($t.latency_ns.p50 | ms), p99 \($u.latency_ns.p99 | ms) against \($t.latency_ns.p99 | ms), p99.9 \($u.latency_ns.p999 | ms) against \($t.latency_ns.p999 | ms), mean \($u.latency_ns.mean | ms) against \($t.latency_ns.mean | ms)|unix \($u.errors_total) of \($u.requests) (5xx \($u.status["5xx"]), client timeouts \($u.errors.timeout)), tcp \($t.errors_total) of \($t.requests) (5xx \($t.status["5xx"]), client timeouts \($t.errors.timeout)); SYN retransmits over the tcp run: \($t.observed.net_delta["TcpExt.TCPSynRetrans"])"' \
        "$T/$name.jsonl")
    got=$(sed -n '/^both ways, unix against tcp:$/,/^  unix lower at/p' "$OUT" |
        sed -n -e 's/^  what succeeded, ms: //p' -e 's/^  what failed: //p' | tr '\n' '|' | sed 's/|$//')
    # the percentiles printed to 2 decimals: compare what jq rounds the same way, as numbers
    check "$name: both ways, unix against tcp: what succeeded and what failed, the runs' own" \
        python3 -c 'import re, sys
num = lambda s: [float(x) for x in re.findall(r"-?[0-9]+(?:\.[0-9]+)?", s)]
a, b = num(sys.argv[1]), num(sys.argv[2])
sys.exit(0 if len(a) == len(b) > 10 and all(abs(x - y) <= 0.0051 for x, y in zip(a, b)) else 1)' \
        "$want" "$got"
    ovf=$(jq -s '[.[] | select(.record == "run" and .label == "overload.tcp")][0] |
        .observed.net_delta["TcpExt.ListenOverflows"]' "$T/$name.jsonl")
    check "$name tcp: the kernel's ListenOverflows printed is the run's (+$ovf)" \
        sh -c "printf '%s' '$(report_field tcp "kernel: ")' | grep -q '^ListenOverflows +$ovf,'"
    # the kinds printed for the two runs are the web server's own error lines of that kind
    for kind in 'connect EAGAIN (backlog full):Resource temporarily unavailable' \
        'reset:Connection reset by peer' 'timed out:timed out\|timeout specified has expired'; do
        label=${kind%%:*}
        logged=$(grep -F -- "$(web_error_mark "$web")" "$DIR/$web.log" | grep -c "${kind#*:}")
        check_eq "$name: '$label' printed (tcp + unix) as in $web's log" "$logged" \
            $(($(kind_of tcp "$label") + $(kind_of unix "$label")))
    done
    release "$name"
done

# --- the starvation --------------------------------------------------------------------------

if held starve nginx-fpm --starve; then
    check "starve: the warning line before measuring" grep -q \
        '^warning: the starvation case, deliberately: .* 16 FastCGI connections per backend for pm.max_children 4' \
        "$OUT"
    check "starve: the output names it" grep -q \
        '^pool starved: 16 kept FastCGI connections for 4 workers' "$OUT"
    for t in tcp unix; do
        line=$(grep "^pool starved: .*(backend $t)" "$OUT")
        [ -n "$line" ] || continue
        said=$(echo "$line" | sed -n "s/.*504 in nginx's status log: \([0-9]*\);.*/\1/p")
        check_eq "starve $t: the 504s named are nginx's status log's" \
            "$(grep -c '^504$' "$DIR/status-$t.log")" "$said"
    done
    release starve
fi

done_testing
