#!/bin/bash
# Failures: nothing listening, a server killed or stopped mid-run, bad usage,
# unwritable evidence, and Ctrl-C.
# shellcheck disable=SC2016 # $vars in single quotes are jq variables
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

# --- nothing listening --------------------------------------------------------------

# A free TCP port: one the kernel just gave a server that is now stopped.
if start_server portpick --listen tcp://127.0.0.1:0; then
    port=$SRV_PORT
    stop_server "$SRV_PID" "$SRV_OUT"
    expect_rc "run: closed TCP port -> exit 1" 1 refused_tcp \
        run echo "tcp://127.0.0.1:$port" -n 10 --json "$T/refused_tcp.json"
    one_line "run: closed TCP port -> one stderr line 'cannot connect'" "$T/refused_tcp.err" \
        "cannot connect to tcp://127\.0\.0\.1:$port"
    check "run: closed TCP port -> no table" test ! -s "$T/refused_tcp.out"
    check "run: closed TCP port -> no evidence file" test ! -e "$T/refused_tcp.json"
fi
expect_rc "run: missing unix socket -> exit 1" 1 refused_unix \
    run echo "unix:$T/nobody.sock" -d 0.3
one_line "run: missing unix socket -> one stderr line 'cannot connect'" "$T/refused_unix.err" \
    "cannot connect to unix:$T/nobody\.sock"
expect_rc "run: missing abstract socket -> exit 1" 1 refused_abs \
    run echo "unix:@hopbench-test-nobody-$$" -d 0.3
one_line "run: missing abstract socket -> one stderr line 'cannot connect'" "$T/refused_abs.err" \
    "cannot connect"
# The second endpoint is checked before anything is measured.
if start_server pre --listen "unix:$T/pre.sock"; then
    t0=$(now_ms)
    expect_rc "run: second endpoint missing -> exit 1 before measuring" 1 refused_second \
        run echo "unix:$T/pre.sock" "unix:$T/nobody.sock" -d 3
    check "run: second endpoint missing -> fails fast (< 2 s)" test $(($(now_ms) - t0)) -lt 2000
    one_line "run: second endpoint missing -> one stderr line" "$T/refused_second.err" \
        "cannot connect to unix:$T/nobody\.sock"
    stop_server "$SRV_PID" "$SRV_OUT"
fi

# --- server killed mid-run -----------------------------------------------------

for tr in unix tcp; do
    if [ $tr = unix ]; then
        start_server "kill_$tr" --listen "unix:$T/kill.sock" || continue
        ep=unix:$T/kill.sock
    else
        start_server "kill_$tr" --listen tcp://127.0.0.1:0 || continue
        ep=tcp://127.0.0.1:$SRV_PORT
    fi
    n="run $tr, server killed mid-run"
    j=$T/kill_$tr.json
    t0=$(now_ms)
    spawn "kill_run_$tr" run echo "$ep" -d 3 --warmup 0.1 --json "$j"
    run_pid=$SPAWNED
    sleep 1
    kill -KILL "$SRV_PID"
    reap "$SRV_PID" 5
    reap "$run_pid" 15
    dt=$(($(now_ms) - t0))
    check_eq "$n: exit 2" 2 "$RC"
    check "$n: ends on time (${dt} ms < 10 s)" test "$dt" -lt 10000
    check_eq "$n: table printed" 1 "$(table_rows "$T/kill_run_$tr.out")"
    check "$n: errors line printed" grep -Eq "^errors: $ep " "$T/kill_run_$tr.out"
    check "$n: 'invalid' on stderr" grep -q "invalid" "$T/kill_run_$tr.err"
    rcheck "$n: JSON invalid" "$j" '.valid == false and .interrupted == false and (.runs | length) == 1'
    rcheck "$n: errors_total > 0, as refused/reset/short" "$j" \
        '.runs[0] | .errors_total > 0 and errors_sum and .valid == false
         and (.errors.refused + .errors.reset + .errors.short) > 0'
    rcheck "$n: ops before the kill kept" "$j" '.runs[0] | .ops > 0 and hist_ok and lat_ok'
    rcheck "$n: window is the whole -d 3" "$j" '.runs[0] | .window_s >= 2.9 and .window_s < 4'
done

# --- server stopped (SIGSTOP): timeouts -------------------------------------------

for spec in "unix reuse" "tcp connect"; do
    read -r tr mode <<<"$spec"
    if [ "$tr" = unix ]; then
        start_server "stop_$tr" --listen "unix:$T/stop.sock" || continue
        ep=unix:$T/stop.sock
    else
        start_server "stop_$tr" --listen tcp://127.0.0.1:0 || continue
        ep=tcp://127.0.0.1:$SRV_PORT
    fi
    stop_srv=$SRV_PID stop_out=$SRV_OUT
    n="run $tr $mode, server stopped"
    j=$T/stop_$tr.json
    kill -STOP "$stop_srv"
    t0=$(now_ms)
    hb "stop_run_$tr" run echo "$ep" --mode "$mode" --timeout 0.3 -d 1 --warmup 0 --json "$j"
    dt=$(($(now_ms) - t0))
    check_eq "$n: exit 2" 2 "$RC"
    check "$n: ends in bounded time (${dt} ms < 10 s)" test "$dt" -lt 10000
    rcheck "$n: errors.timeout > 0, invalid" "$j" \
        '.valid == false and (.runs[0] | .errors.timeout > 0 and errors_sum and .valid == false)'
    check "$n: errors line names timeouts" grep -Eq "^errors: .*timeout=[1-9]" "$T/stop_run_$tr.out"
    kill -CONT "$stop_srv"
    expect_rc "$n: server answers again after SIGCONT" 0 "stop_again_$tr" \
        run echo "$ep" --mode "$mode" -n 100 --warmup 0
    stop_server "$stop_srv" "$stop_out"
    check_eq "$n: server exits 0" 0 "$RC"
done

# --- bad usage: exit 64, one stderr line, nothing on stdout -------------------------

usage_cases=(
    "threads > connections|run echo unix:/x --threads 4 -c 2|--threads 4"
    "unknown option|run echo unix:/x --bogus|--bogus"
    "--pin bogus|run echo unix:/x --pin bogus|bogus"
    "-d and -n|run echo unix:/x -d 1 -n 10|--count|-n|not both"
    "unknown protocol|run gopher unix:/x|gopher"
    "--size with an http GET|run http unix:/x --size 100|--size|POST"
    "--command for echo|run echo unix:/x --command get|--command"
    "--keys with redis ping|run redis unix:/x --keys 10|--keys"
    "--value-size with redis get|run redis unix:/x --command get --value-size 10|--value-size"
    "--param without =|run fcgi unix:/x --param FOO|--param"
    "--method PUT|run http unix:/x --method PUT|--method"
    "--path without /|run http unix:/x --path x|--path"
    "http connect with --pipeline|run http unix:/x --mode connect --pipeline 4|--pipeline"
    "--rate 5x|run echo unix:/x --rate 5x|--rate"
    "--rate-base without --rate N%|run echo unix:/x --rate-base 1000|--rate-base needs --rate N%"
    "--rate-base with an absolute --rate|run echo unix:/x --rate 100 --rate-base 1000|--rate-base needs --rate N%"
    "--rate-base abc|run echo unix:/x --rate 50% --rate-base abc|--rate-base: 'abc' is not"
    "--rate-base 0|run echo unix:/x --rate 50% --rate-base 0|--rate-base: '0' is not"
    "--rate-base with an empty item|run echo unix:/x unix:/y --rate 50% --rate-base 100,|--rate-base: '100,' is not"
    "--rate-base: 3 bases for 2 endpoints|run echo unix:/x unix:/y --rate 50% --rate-base 1,2,3|--rate-base gives 3 bases for 2 endpoints"
    "--wait spin|run echo unix:/x --wait spin|--wait|spin"
    "--wait block with connect|run echo unix:/x --wait block --mode connect|--wait block"
    "--wait block with --pipeline|run echo unix:/x --wait block --pipeline 2|--wait block"
    "--wait block with --rate|run echo unix:/x --wait block --rate 100|--wait block"
    "--wait block with -c 2 -t 1|run echo unix:/x --wait block -c 2|--wait block"
    "--wait uring with connect|run echo unix:/x --wait uring --mode connect|--wait uring"
    "--wait uring with --rate|run echo unix:/x --wait uring --rate 100|--wait uring"
    "serve --wait uring|serve echo --listen unix:/x --wait uring|--wait|uring"
    "lab --wait uring|lab --wait uring|--wait uring"
    "serve --wait spin|serve echo --listen unix:/x --wait spin|--wait"
    "lab --wait spin|lab --wait spin|--wait"
    "--rates 100|lab --rates 100|--rates"
    "--rates with an empty item|lab --rates 30%,,60%|--rates|empty"
    "--sizes with an empty item|lab --sizes 64,|--sizes|empty"
    "--arrivals constant without --rate|run echo unix:/x --arrivals constant|--arrivals"
    "lab overload --sizes|lab overload --sizes 4KiB|overload|--sizes"
    "lab overload --rates|lab --rates 50% overload|overload|--rates"
    "--proto gopher|lab --proto gopher|--proto"
    "--body-size for echo|serve echo --listen unix:/x --body-size 10|--body-size"
    "missing endpoint|run echo|ENDPOINT"
    "port 0|run echo tcp://127.0.0.1:0|port 0"
    "--mode bogus|run echo unix:/x --mode bogus|bogus"
    "--size 0|run echo unix:/x --size 0|--size"
    "--duration -1|run echo unix:/x -d -1|--duration|-d"
    "--duration 0|run echo unix:/x -d 0|--duration: '0' is not a duration in \\(0, 1 day\\] \\(seconds, or with a unit: 500ms, 10s, 2m, 1h\\)$"
    "--warmup -1|run echo unix:/x --warmup -1|--warmup: '-1' is not a duration in \\[0, 1 day\\]"
    "--duration 10x|run echo unix:/x -d 10x|--duration: '10x' is not a duration"
    "lab --cooldown x|lab --cooldown x|--cooldown: 'x' is not a duration in \\[0, 1 day\\]"
    "--connections 0|run echo unix:/x -c 0|--connections|-c"
    "non-loopback run|run echo tcp://10.0.0.1:80|--allow-remote"
    "--server-pid that does not exist|run echo unix:/x --server-pid 4194000|--server-pid 4194000: no such process"
    "--server-tree without --server-pid|run echo unix:/x --server-tree|--server-tree needs a --server-pid"
    "serve unknown option|serve echo --listen unix:/x --bogus|--bogus"
    "serve without --listen|serve echo|--listen"
    "serve --pin bogus|serve echo --listen unix:/x --pin bogus|bogus"
    "lab --pin bogus|lab --pin bogus|bogus"
    "lab --sizes bogus|lab --sizes 64,lots|--sizes"
    "lab unknown option|lab --bogus|--bogus"
    "unknown subcommand|frobnicate|frobnicate"
    "mistyped option|run echo unix:/x --duraton 3|unknown option '--duraton'; did you mean --duration\\?$"
    "mistyped protocol|run ehco unix:/x|unknown protocol 'ehco' .*; did you mean 'echo'\\?$"
    "a stack's first word|stack nginx|no stack 'nginx' .*; did you mean 'nginx-fpm'\\?$"
    "mistyped subcommand|rn|unknown subcommand 'rn' .*; did you mean 'run'\\?$"
    "help of a mistyped command|help rn|no command 'rn' .*; did you mean 'run'\\?$"
)
for c in "${usage_cases[@]}"; do
    name=${c%%|*}
    rest=${c#*|}
    args=${rest%%|*}
    re=${rest#*|}
    # shellcheck disable=SC2086 # the arguments are words on purpose
    expect_rc "usage: $name -> exit 64" 64 usage $args
    one_line "usage: $name -> one stderr line" "$T/usage.err" "$re"
    check "usage: $name -> nothing on stdout" test ! -s "$T/usage.out"
done
check "usage: no stray files (unix:/x never created)" test ! -e /x

# --- evidence that cannot be written ---------------------------------------------

if start_server nojson --listen "unix:$T/nojson.sock"; then
    expect_rc "run --json in a missing directory -> exit 1" 1 nojson_run \
        run echo "unix:$T/nojson.sock" -n 50 --warmup 0 --json "$T/missing/dir/e.json"
    # Found before the first run (a write that fails at the end: test_outfile.sh).
    check_eq "run --json unwritable: refused before any run" 0 "$(table_rows "$T/nojson_run.out")"
    one_line "run --json unwritable: one stderr line naming the path" "$T/nojson_run.err" \
        "$T/missing/dir/e\.json"
    stop_server "$SRV_PID" "$SRV_OUT"
fi

# --- Ctrl-C ----------------------------------------------------------------------

if start_server int --listen tcp://127.0.0.1:0 --listen "unix:$T/int.sock"; then
    int_srv=$SRV_PID int_out=$SRV_OUT
    j=$T/int.json
    spawn int_run run echo "tcp://127.0.0.1:$SRV_PORT" "unix:$T/int.sock" -d 10 --warmup 0.1 \
        --json "$j"
    run_pid=$SPAWNED
    sleep 1
    t0=$(now_ms)
    kill -INT "$run_pid"
    reap "$run_pid" 5
    dt=$(($(now_ms) - t0))
    check_eq "run Ctrl-C: exit 130" 130 "$RC"
    check "run Ctrl-C: exits promptly (${dt} ms < 3 s)" test "$dt" -lt 3000
    check_eq "run Ctrl-C: table printed with the one run measured" 1 "$(table_rows "$T/int_run.out")"
    check "run Ctrl-C: evidence path printed" grep -qx "evidence: $j" "$T/int_run.out"
    rcheck "run Ctrl-C: JSON interrupted, valid, one run" "$j" \
        '.interrupted == true and .valid == true and (.runs | length) == 1'
    rcheck "run Ctrl-C: the run kept its ops" "$j" \
        '.runs[0] | .interrupted == true and .ops > 0 and errors_zero and hist_ok and lat_ok
         and .window_s > 0.5 and .window_s < 2.5'
    # Ctrl-C in the warm-up: nothing measured, nothing observed, and still a clean 130
    # (under ASan this also proves the half-built evidence frees what it allocated).
    j=$T/intw.json
    spawn intw_run run echo "unix:$T/int.sock" -d 5 --warmup 5 --json "$j"
    run_pid=$SPAWNED
    sleep 0.5
    kill -INT "$run_pid"
    reap "$run_pid" 5
    check_eq "run Ctrl-C in the warm-up: exit 130" 130 "$RC"
    rcheck "run Ctrl-C in the warm-up: the run is kept, with no ops and no observation" "$j" \
        '.interrupted == true and (.runs | length) == 1
         and (.runs[0] | .ops == 0 and .observed == null and .interrupted == true)'
    check "run Ctrl-C: server still up" alive "$int_srv"
    stop_server "$int_srv" "$int_out"
    check_eq "run Ctrl-C: server exits 0" 0 "$RC"
fi

# --- --wait block: one kept connection per thread waits for replies in a blocking recv() ---
# A server that stops answering a kept connection still makes a timeout, and Ctrl-C during
# such a wait still ends the run at once (each wait lasts at most min(--timeout, 50 ms)),
# over either transport.

if start_server blk --listen tcp://127.0.0.1:0 --listen "unix:$T/blk.sock" --wait block; then
    blk_srv=$SRV_PID blk_out=$SRV_OUT
    for blk_ep in "tcp://127.0.0.1:$SRV_PORT" "unix:$T/blk.sock"; do
        tr=${blk_ep%%:*}
        j=$T/blk_to_$tr.json
        spawn "blk_to_$tr" run echo "$blk_ep" -c 1 -t 1 --mode reuse --wait block --timeout 0.2 \
            -d 2 --warmup 0 --json "$j"
        run_pid=$SPAWNED
        sleep 0.5
        kill -STOP "$blk_srv"
        sleep 0.5
        kill -CONT "$blk_srv"
        reap "$run_pid" 10
        check_eq "--wait block $tr, server stopped mid-run: exit 2" 2 "$RC"
        rcheck "--wait block $tr, server stopped mid-run: timeouts counted, ops kept" "$j" \
            '.runs[0] | .wait == "block" and .errors.timeout > 0 and errors_sum and .ops > 0 and
             .interrupted == false'
        j=$T/blk_int_$tr.json
        spawn "blk_int_$tr" run echo "$blk_ep" -c 1 -t 1 --mode reuse --wait block --timeout 10 \
            -d 10 --warmup 0 --json "$j"
        run_pid=$SPAWNED
        sleep 0.5
        kill -STOP "$blk_srv"
        sleep 0.3
        t0=$(now_ms)
        kill -INT "$run_pid"
        reap "$run_pid" 5
        dt=$(($(now_ms) - t0))
        kill -CONT "$blk_srv"
        check_eq "--wait block $tr, Ctrl-C while waiting for a reply: exit 130" 130 "$RC"
        # at once: under 1 s (SAN s: a TSan build took 300-384 ms to exit on a busy box), where
        # a wait for the reply would last the --timeout of 10 s
        check "--wait block $tr, Ctrl-C while waiting for a reply: ends at once (${dt} ms < $SAN s)" \
            test "$dt" -lt $((1000 * SAN))
        rcheck "--wait block $tr, Ctrl-C while waiting for a reply: interrupted, ops kept" "$j" \
            '.interrupted == true and (.runs[0] | .ops > 0 and errors_zero and hist_ok)'
    done
    stop_server "$blk_srv" "$blk_out"
    check_eq "--wait block: server exits 0" 0 "$RC"
fi

# --- a server that closes mid-reply: classified "short" at once, not a timeout ---
if start_server mid --listen tcp://127.0.0.1:0 --close-after 16KiB; then
    mid_pid=$SRV_PID
    j=$T/mid.json
    t0=$(now_ms)
    expect_rc "server closing mid-reply: exit 2" 2 mid \
        run echo "tcp://127.0.0.1:$SRV_PORT" --size 64KiB -n 5 --warmup 0 --timeout 3 --json "$j"
    check "server closing mid-reply: no wait for --timeout (< 2.5 s)" \
        test $(($(now_ms) - t0)) -lt 2500
    # It closes with request bytes unread, so the kernel sends an RST: "reset" (a clean FIN
    # would be "short"); either way at once, never a timeout.
    rcheck "server closing mid-reply: counted as reset or short, not timeout" "$j" \
        '.runs[0].errors | .short + .reset == 5 and .timeout == 0'
    stop_pid "$mid_pid"
fi

# --- count mode where a connection or a thread gets no share of the count ---
if start_server cnt --listen tcp://127.0.0.1:0; then
    cnt_pid=$SRV_PID
    t0=$(now_ms)
    expect_rc "run -n 1 -c 2 --warmup 0: ends" 0 cnt1 \
        run echo "tcp://127.0.0.1:$SRV_PORT" -n 1 -c 2 --warmup 0 --json "$T/cnt1.json"
    expect_rc "run -n 1 -c 2 -t 2 --warmup 0: ends" 0 cnt2 \
        run echo "tcp://127.0.0.1:$SRV_PORT" -n 1 -c 2 -t 2 --warmup 0 --json "$T/cnt2.json"
    check "count mode with idle connections ends at once (< 5 s)" test $(($(now_ms) - t0)) -lt 5000
    rcheck "run -n 1: exactly one op" "$T/cnt2.json" '.runs[0].ops == 1'
    stop_pid "$cnt_pid"
fi

done_testing
