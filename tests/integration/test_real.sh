#!/bin/bash
# real: hopbench against real servers from Debian 12 (nginx, php8.2-fpm, redis-server),
# each a private instance started by real/servers.sh: its own config in $T (templates in
# tests/integration/real/), free high ports on 127.0.0.1, Unix sockets in $T, in the
# foreground with its PID in PIDS, stopped by PID. No system service is used or touched:
# a system nginx/php-fpm/redis that the packages' postinst may have started listens on
# other ports and sockets and is left alone. scripts/deps.sh test installs the packages.
#
# What it proves, over TCP and a Unix socket, in reuse and connect mode:
#   http   hopbench's count of requests equals the lines nginx's access log gained; every
#          reply was 2xx and --expect-body matched nginx's bytes (fixed, static file,
#          chunked from php-fpm via nginx, POST); nginx received each GET as exactly the
#          request http.h documents (its $request_length): the line and Host on a kept
#          connection, plus "Connection: close" in connect mode, nothing else. With
#          keepalive_requests 100 nginx closes every kept connection after 100
#          requests: a reuse run of 1000 over 2 connections reconnects without an
#          error, and no logged connection carried more than 100 requests. A wrong --expect-body and a 404 exit 2 and are
#          counted as body and status errors.
#   fcgi   php-fpm answers /ping with pong; the pool's access log gained .requests lines;
#          its status page's "accepted conn" grew by exactly what php-fpm counts for the
#          run (see fpm_expect in real/servers.sh). --script/--docroot/--query/--param reach PHP,
#          which runs bench.php and params.php. A missing script is a 404 whose
#          FastCGI stderr ("Primary script unknown") is counted: exit 2.
#   redis  INFO's total_commands_processed grew by exactly .requests for PING, SET, GET
#          and pipelined PING; SET wrote --keys keys of --value-size bytes; GET reads
#          them back and --expect-body checks the value.
# With --warmup 0 and -n N and no errors, requests == replies == ops == N.
# shellcheck disable=SC2016 # $vars in single quotes are jq variables
# shellcheck disable=SC2317 # readiness probes are called through wait_ready and check
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

# shellcheck source=tests/integration/real/servers.sh
. "$(dirname "$0")/real/servers.sh"

# --- nginx: http -------------------------------------------------------------------

# The run matrix: the fixed "hello\n" reply, every request checked.
for tr in tcp unix; do
    ep=$(ep_of $tr "tcp://127.0.0.1:$NG_PORT" "unix:$T/nginx.sock")
    for mode in reuse connect; do
        if [ $mode = reuse ]; then nreq=1000 c=2; else nreq=600 c=3; fi
        n="http $tr $mode -n $nreq -c $c"
        j=$T/ng_${tr}_$mode.json
        l0=$(nlines "$NG_LOG")
        expect_rc "$n: exit 0" 0 "ng_${tr}_$mode" run http "$ep" --mode $mode -n $nreq -c $c -t 2 \
            --warmup 0 --expect-body $'hello\n' --json "$j" || continue
        xcheck "$n: requests == replies == ops == $nreq, no errors" "$j" \
            '.runs[0] | .proto == "http" and .ops == '$nreq' and .requests == '$nreq'
             and .replies == '$nreq' and clean and hist_ok'
        xcheck "$n: every reply 2xx" "$j" \
            '.runs[0] | .status["2xx"] == .ops and ([.status[]] | add) == .status["2xx"]'
        req=$(jget "$j" '.runs[0].requests')
        l1=$(settle $((l0 + req)) nlines "$NG_LOG")
        check_eq "$n: nginx access log gained .requests lines" "$req" $((l1 - l0))
        new=$T/ng_${tr}_$mode.log
        tail -n +$((l0 + 1)) "$NG_LOG" >"$new"
        check_eq "$n: every logged request is GET / -> 200" 0 \
            "$(grep -vcF '"GET / HTTP/1.1" 200 6 ' "$new")"
        # Fields: addr "request" status bytes request_length connection connection_requests
        if [ $mode = reuse ]; then
            want=$'GET / HTTP/1.1\r\nHost: localhost\r\n\r\n'
        else
            want=$'GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n'
        fi
        check_eq "$n: nginx received every request as ${#want} bytes (line, Host$([ $mode = reuse ] || echo ', Connection: close'))" \
            "${#want} $req" "$(awk '{print $(NF-2)}' "$new" | sort | uniq -c | awk '{print $2, $1}' | paste -sd' ')"
        conns=$(awk '{print $(NF-1)}' "$new" | sort -u | wc -l)
        maxper=$(awk '{print $NF}' "$new" | sort -n | tail -n 1)
        if [ $mode = reuse ]; then
            # keepalive_requests 100: 1000 requests need >= 10 nginx connections.
            xcheck "$n: nginx closed kept connections, hopbench reconnected (>= 8)" "$j" \
                '.runs[0] | .reconnects >= 8'
            check "$n: nginx saw >= 10 connections (got $conns)" test "$conns" -ge 10
            rc_plus=$(jget "$j" '.runs[0] | .reconnects + .connections')
            check "$n: nginx connections ($conns) <= reconnects + connections ($rc_plus)" \
                test "$conns" -le "${rc_plus:-0}"
            xcheck "$n: connects >= nginx connections ($conns)" "$j" \
                '.runs[0] | .connects >= '"$conns"
            check_eq "$n: at most 100 requests on one nginx connection" 100 "$maxper"
        else
            xcheck "$n: one connect per request" "$j" '.runs[0] | .connects == .requests'
            check_eq "$n: nginx saw one connection per request" "$req" "$conns"
            check_eq "$n: every nginx connection carried 1 request" 1 "$maxper"
        fi
    done
done

for tr in tcp unix; do
    ep=$(ep_of $tr "tcp://127.0.0.1:$NG_PORT" "unix:$T/nginx.sock")

    # A static file from disk.
    j=$T/ng_static_$tr.json
    expect_rc "http $tr static file --expect-body: exit 0" 0 "ng_static_$tr" \
        run http "$ep" --path /static/hello.txt --expect-body $'static file\n' -n 300 -c 2 \
        --warmup 0 --json "$j" &&
        xcheck "http $tr static file: 300 ops, all 2xx, no errors" "$j" \
            '.runs[0] | .ops == 300 and .status["2xx"] == 300 and clean'

    # PHP through nginx: a chunked reply. (php-fpm logs SCRIPT_NAME, which nginx sets.)
    j=$T/ng_fpm_$tr.json
    f0=$(ngrep "$T/fpm/access-unix.log" 'GET /bench.php 200')
    if expect_rc "http $tr /fpm (nginx -> php-fpm, chunked) --expect-body bench: exit 0" 0 \
        "ng_fpm_$tr" run http "$ep" --path /fpm --expect-body bench -n 300 -c 2 --warmup 0 \
        --json "$j"; then
        xcheck "http $tr /fpm: 300 ops, all 2xx, no errors" "$j" \
            '.runs[0] | .ops == 300 and .status["2xx"] == 300 and clean'
        f1=$(settle $((f0 + 300)) ngrep "$T/fpm/access-unix.log" 'GET /bench.php 200')
        check_eq "http $tr /fpm: php-fpm ran the script 300 times" 300 $((f1 - f0))
    fi

    # POST with a body nginx reads and discards.
    j=$T/ng_post_$tr.json
    l0=$(nlines "$NG_LOG")
    if expect_rc "http $tr POST --size 1000: exit 0" 0 "ng_post_$tr" \
        run http "$ep" --method POST --size 1000 --expect-body $'hello\n' -n 300 -c 2 --warmup 0 \
        --json "$j"; then
        xcheck "http $tr POST: 300 ops, all 2xx, no errors" "$j" \
            '.runs[0] | .ops == 300 and .requests == 300 and .status["2xx"] == 300 and clean'
        l1=$(settle $((l0 + 300)) nlines "$NG_LOG")
        check_eq "http $tr POST: nginx logged 300 POSTs" 300 \
            "$(tail -n +$((l0 + 1)) "$NG_LOG" | grep -cF '"POST / HTTP/1.1" 200 ')"
    fi

    # A wrong --expect-body: nginx answers 200 "hello\n" to every request (its log says
    # so); hopbench counts each as a body error.
    j=$T/ng_body_$tr.json
    l0=$(nlines "$NG_LOG")
    if expect_rc "http $tr wrong --expect-body: exit 2" 2 "ng_body_$tr" \
        run http "$ep" --expect-body $'goodbye\n' -n 200 -c 2 --warmup 0 --json "$j"; then
        xcheck "http $tr wrong --expect-body: body errors > 0, nothing else" "$j" \
            '.runs[0] | .errors.body > 0 and .errors_total == .errors.body and errors_sum
             and .ops == 0'
        jcheck "http $tr wrong --expect-body: document not valid" "$j" '.valid == false'
        req=$(jget "$j" '.runs[0].requests')
        l1=$(settle $((l0 + req)) nlines "$NG_LOG")
        check_eq "http $tr wrong --expect-body: nginx logged .requests 200s" "$req" \
            "$(tail -n +$((l0 + 1)) "$NG_LOG" | grep -cF '"GET / HTTP/1.1" 200 6 ')"
    fi

    # A 404: counted by class and as status errors; nginx logged each one.
    j=$T/ng_404_$tr.json
    l0=$(nlines "$NG_LOG")
    if expect_rc "http $tr --path /nope (404): exit 2" 2 "ng_404_$tr" \
        run http "$ep" --path /nope -n 200 -c 2 --warmup 0 --json "$j"; then
        xcheck "http $tr 404: status.4xx > 0, no 2xx, status errors only" "$j" \
            '.runs[0] | .status["4xx"] > 0 and .status["2xx"] == 0 and .errors.status > 0
             and .errors_total == .errors.status and errors_sum'
        req=$(jget "$j" '.runs[0].requests')
        l1=$(settle $((l0 + req)) nlines "$NG_LOG")
        check_eq "http $tr 404: nginx access log gained .requests lines, all 404" "$req" \
            "$(tail -n +$((l0 + 1)) "$NG_LOG" | grep -cF '"GET /nope HTTP/1.1" 404 ')"
    fi
done

# --- php-fpm: fcgi -------------------------------------------------------------------

for tr in tcp unix; do
    ep=$(ep_of $tr "tcp://$FPM_TCP" "unix:$FPM_UDS")
    addr=$(ep_of $tr "$FPM_TCP" "$FPM_UDS")
    alog=$T/fpm/access-$tr.log
    for mode in reuse connect; do
        if [ $mode = reuse ]; then nreq=1000 c=4; else nreq=500 c=3; fi
        n="fcgi $tr $mode /ping -n $nreq -c $c"
        j=$T/fpm_${tr}_$mode.json
        a0=$(fpm_accepted "$addr")
        g0=$(ngrep "$alog" 'GET /ping 200')
        expect_rc "$n: exit 0" 0 "fpm_${tr}_$mode" run fcgi "$ep" --path /ping --expect-body pong \
            --mode $mode -n $nreq -c $c -t 2 --warmup 0 --json "$j" || continue
        xcheck "$n: requests == replies == ops == $nreq, no errors" "$j" \
            '.runs[0] | .proto == "fcgi" and .ops == '$nreq' and .requests == '$nreq'
             and .replies == '$nreq' and clean and hist_ok'
        xcheck "$n: every reply 2xx, no stderr" "$j" \
            '.runs[0] | .status["2xx"] == .ops and ([.status[]] | add) == .status["2xx"]
             and .stderr_replies == 0'
        if [ $mode = reuse ]; then
            xcheck "$n: php-fpm kept the connections (no reconnects)" "$j" \
                '.runs[0] | .reconnects == 0 and .connects <= .connections'
        else
            xcheck "$n: one connect per request" "$j" '.runs[0] | .connects == .requests'
        fi
        req=$(jget "$j" '.runs[0].requests')
        g1=$(settle $((g0 + req)) ngrep "$alog" 'GET /ping 200')
        check_eq "$n: pool's access log gained .requests /ping lines" "$req" $((g1 - g0))
        want=$(fpm_expect "$j" $mode)
        check_eq "$n: status 'accepted conn' grew by requests + pre-flight$(
            [ $mode = reuse ] && echo ' + kept connections')" "$want" \
            "$(fpm_delta "$addr" "${a0:-0}" "${want:-0}")"
    done

    # PHP executes: --script names the file, --path the SCRIPT_NAME.
    j=$T/fpm_bench_$tr.json
    g0=$(ngrep "$alog" 'GET /bench.php 200')
    if expect_rc "fcgi $tr --script bench.php --expect-body bench: exit 0" 0 "fpm_bench_$tr" \
        run fcgi "$ep" --script "$T/www/bench.php" --path /bench.php --expect-body bench \
        -n 400 -c 2 --warmup 0 --json "$j"; then
        xcheck "fcgi $tr bench.php: 400 ops, all 2xx, no errors, no stderr" "$j" \
            '.runs[0] | .ops == 400 and .requests == 400 and .status["2xx"] == 400 and clean
             and .stderr_replies == 0'
        g1=$(settle $((g0 + 400)) ngrep "$alog" 'GET /bench.php 200')
        check_eq "fcgi $tr bench.php: pool's access log gained 400 lines" 400 $((g1 - g0))
    fi

    # --docroot (SCRIPT_FILENAME = docroot + path), --query and --param reach PHP.
    j=$T/fpm_params_$tr.json
    expect_rc "fcgi $tr --docroot --query --param: PHP sees them (exit 0)" 0 "fpm_params_$tr" \
        run fcgi "$ep" --docroot "$T/www" --path /params.php --query 'a=1&b=2' \
        --param HB_TAG=tagged --expect-body "1:tagged:$T/www" -n 200 -c 2 --warmup 0 \
        --json "$j" &&
        xcheck "fcgi $tr params.php: 200 ops, no errors" "$j" \
            '.runs[0] | .ops == 200 and .status["2xx"] == 200 and clean'

    # A missing script: php-fpm answers "Status: 404" with "Primary script unknown" on
    # FCGI_STDERR.
    j=$T/fpm_missing_$tr.json
    if expect_rc "fcgi $tr missing script: exit 2" 2 "fpm_missing_$tr" \
        run fcgi "$ep" --script "$T/www/missing.php" --path /missing.php -n 100 -c 2 \
        --warmup 0 --json "$j"; then
        xcheck "fcgi $tr missing script: 404s, status errors, stderr on every reply" "$j" \
            '.runs[0] | .status["4xx"] > 0 and .status["4xx"] == .replies and .status["2xx"] == 0
             and .errors.status > 0 and .errors_total == .errors.status and errors_sum
             and .stderr_replies == .replies'
    fi
done
check "php-fpm: its error log has no WARNING or ERROR" \
    sh -c "! grep -E 'WARNING|ERROR' '$T/fpm/error.log'"

# --- redis ---------------------------------------------------------------------------

# rd_run NAME OUT TR WANT-RC ARGS... : runs hopbench with ARGS and checks that INFO's
# total_commands_processed grew by .requests (less the INFO before it).
rd_run() {
    local name=$1 out=$2 tr=$3 want=$4 t0 t1 req
    shift 4
    t0=$(rd_total "$tr")
    expect_rc "$name: exit $want" "$want" "$out" run redis "$@" --json "$T/$out.json" || return 1
    t1=$(rd_total "$tr")
    req=$(jget "$T/$out.json" '.runs[0].requests')
    check_eq "$name: redis processed .requests commands" "$req" $((${t1:-0} - ${t0:-0} - 1))
}

for tr in tcp unix; do
    ep=$(ep_of $tr "tcp://127.0.0.1:$RD_PORT" "unix:$T/redis.sock")
    for mode in reuse connect; do
        if [ $mode = reuse ]; then nreq=2000 c=4; else nreq=500 c=3; fi
        n="redis $tr $mode ping -n $nreq -c $c"
        rd_run "$n" "rd_ping_${tr}_$mode" $tr 0 "$ep" --command ping --mode $mode -n $nreq \
            -c $c -t 2 --warmup 0 &&
            xcheck "$n: requests == replies == ops == $nreq, no errors" "$T/rd_ping_${tr}_$mode.json" \
                '.runs[0] | .proto == "redis" and .ops == '$nreq' and .requests == '$nreq'
                 and .replies == '$nreq' and clean and hist_ok'
    done

    rd_cli $tr flushall >/dev/null
    n="redis $tr set --keys 100 --value-size 64"
    if rd_run "$n" "rd_set_$tr" $tr 0 "$ep" --command set --keys 100 --value-size 64 -n 1000 \
        -c 2 --warmup 0; then
        xcheck "$n: 1000 ops, no errors" "$T/rd_set_$tr.json" \
            '.runs[0] | .ops == 1000 and .requests == 1000 and .replies == 1000 and clean'
        check_eq "$n: redis holds 100 keys" 100 "$(rd_cli $tr dbsize)"
        key=$(rd_cli $tr randomkey)
        check_eq "$n: a value ($key) is 64 bytes" 64 "$(rd_cli $tr strlen "$key")"
    fi
    value=$(rd_cli $tr --raw get "${key:-none}")

    n="redis $tr get --keys 100"
    rd_run "$n" "rd_get_$tr" $tr 0 "$ep" --command get --keys 100 -n 1000 -c 2 --warmup 0 &&
        xcheck "$n: 1000 ops, no errors" "$T/rd_get_$tr.json" \
            '.runs[0] | .ops == 1000 and .replies == 1000 and clean'
    rd_run "$n --expect-body (the value SET wrote)" "rd_getx_$tr" $tr 0 "$ep" --command get \
        --keys 100 --expect-body "$value" -n 500 -c 2 --warmup 0 &&
        xcheck "$n --expect-body: 500 ops, no errors" "$T/rd_getx_$tr.json" \
            '.runs[0] | .ops == 500 and clean'
    j=$T/rd_getbad_$tr.json
    rd_run "$n wrong --expect-body" "rd_getbad_$tr" $tr 2 "$ep" --command get --keys 100 \
        --expect-body "not-the-value" -n 200 -c 2 --warmup 0 &&
        xcheck "$n wrong --expect-body: body errors only" "$j" \
            '.runs[0] | .errors.body > 0 and .errors_total == .errors.body and errors_sum'

    n="redis $tr ping --pipeline 16 -n 1600 -c 2"
    rd_run "$n" "rd_pipe_$tr" $tr 0 "$ep" --command ping --pipeline 16 -n 1600 -c 2 --warmup 0 &&
        xcheck "$n: 1600 ops, pipeline 16, no errors" "$T/rd_pipe_$tr.json" \
            '.runs[0] | .ops == 1600 and .requests == 1600 and .replies == 1600 and .pipeline == 16
             and clean and hist_ok'
done

# --- stop them, by PID ---------------------------------------------------------------

stop_real nginx "$NG_PID"
stop_real php-fpm "$FPM_PID"
stop_real redis "$RD_PID"
check "nginx: error log has no [alert] or [emerg]" \
    sh -c "! grep -E '\[(alert|emerg|crit)\]' '$T/nginx/error.log'"

done_testing
