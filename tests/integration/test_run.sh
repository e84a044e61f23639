#!/bin/bash
# run: echo over TCP loopback and a Unix socket, both modes, counts, several
# endpoints, pipelining, sizes, and the server's own accounting.
# shellcheck disable=SC2016 # $vars in single quotes are jq variables
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

sock=$T/echo.sock
start_server srv --listen tcp://127.0.0.1:0 --listen "unix:$sock" || done_testing
srv_pid=$SRV_PID srv_out=$SRV_OUT
if [ -z "$SRV_PORT" ]; then
    not_ok "serve: TCP port parsed" "no tcp:// listening line in $(cat "$SRV_OUT")"
    done_testing
fi
check "serve: port 0 replaced by the kernel's port" test "$SRV_PORT" -gt 0
tcp=tcp://127.0.0.1:$SRV_PORT
uds=unix:$sock

# --- duration runs: tcp/unix x connect/reuse ----------------------------------------

for tr in tcp unix; do
    if [ $tr = tcp ]; then ep=$tcp; else ep=$uds; fi
    for mode in connect reuse; do
        n="run $tr $mode -d 0.5"
        j=$T/d_${tr}_$mode.json
        expect_rc "$n: exit 0" 0 "d_${tr}_$mode" \
            run echo "$ep" --mode $mode -d 0.5 --warmup 0.1 --json "$j" || continue
        out=$T/d_${tr}_$mode.out
        check "$n: evidence path printed" grep -qx "evidence: $j" "$out"
        check_eq "$n: table has 1 row" 1 "$(table_rows "$out")"
        check "$n: table row names the endpoint and mode" grep -Eq "^$ep +$mode +64 B " "$out"
        rcheck "$n: document valid, not interrupted, 1 run" "$j" \
            '.schema == "hopbench.evidence/1" and .command == "run" and .valid == true
             and .interrupted == false and (.runs | length) == 1'
        rcheck "$n: transport, mode, endpoint, shape" "$j" \
            '.runs[0] | .proto == "echo" and .transport == "'$tr'" and .mode == "'$mode'"
             and .endpoint == "'"$ep"'" and .size == 64 and .connections == 1 and .threads == 1
             and .pipeline == 1 and .count == 0'
        rcheck "$n: ops > 0, no errors, valid" "$j" \
            '.runs[0] | .ops > 0 and errors_zero and .valid == true and .interrupted == false'
        rcheck "$n: window ~0.5 s, ops_per_s = ops / window_s" "$j" \
            '.runs[0] | .window_s >= 0.45 and .window_s <= 0.75
             and ((.ops_per_s - .ops / .window_s) | fabs) <= 0.001 * .ops_per_s'
        rcheck "$n: histogram total == ops == sum of counts" "$j" '.runs[0] | hist_ok'
        rcheck "$n: latency p50 > 0, p50 <= p99 <= max" "$j" '.runs[0] | lat_ok'
        rcheck "$n: client CPU measured" "$j" \
            '.runs[0] | .client_cpu_ns > 0 and .client_cpu_ns_per_op > 0'
        if [ $mode = connect ]; then
            rcheck "$n: connects >= ops (one per op)" "$j" \
                '.runs[0] | .connects >= .ops and .connects <= .ops + .connections'
        else
            rcheck "$n: reuse: at most one connect per connection" "$j" \
                '.runs[0] | .connects <= .connections'
        fi
    done
done

j=$T/d_tcp_reuse.json
# The command line exactly as typed (getopt_long permutes argv; the evidence must not).
rcheck "run: argv recorded as typed" "$j" \
    '.argv[1:] == ["run", "echo", "'"$tcp"'", "--mode", "reuse", "-d", "0.5", "--warmup", "0.1",
     "--json", "'"$j"'"] and (.argv[0] | endswith("hopbench"))'
rcheck "run: tool, server, placement recorded" "$j" \
    '.tool.name == "hopbench" and (.tool.version | type) == "string"
     and (.server | test("^hopbench \\(pid [0-9]+, found by its listening socket tcp://"))
     and .placement.pin == "none" and (.placement.client_cpus | type) == "string"
     and (.placement.server_cpus | type) == "string"'
rcheck "run: machine facts recorded" "$j" \
    '.machine | .cpus_online >= 1 and .cpus_allowed >= 1 and .cpus_allowed <= .cpus_online
     and (.kernel | type) == "string" and has("cpu_model") and has("clocksource")
     and (.sysctl | has("net.ipv4.ip_local_port_range") and has("net.core.somaxconn"))'

# --- count runs: exactly N ops ----------------------------------------------------

for mode in reuse connect; do
    for tr in tcp unix; do
        if [ $tr = tcp ]; then ep=$tcp; else ep=$uds; fi
        n="run $tr $mode -n 1000"
        j=$T/n_${tr}_$mode.json
        expect_rc "$n: exit 0" 0 "n_${tr}_$mode" \
            run echo "$ep" --mode $mode -n 1000 --warmup 0.05 --json "$j" || continue
        rcheck "$n: exactly 1000 ops, no errors" "$j" \
            '.runs[0] | .ops == 1000 and .count == 1000 and errors_zero and .valid'
        rcheck "$n: histogram holds all 1000" "$j" '.runs[0] | hist_ok and .histogram.total == 1000'
        if [ $mode = connect ]; then
            rcheck "$n: exactly 1000 connects" "$j" '.runs[0] | .connects == 1000'
        fi
    done
done

# Count split over threads and pipelined batches must still add up exactly.
j=$T/n_split.json
expect_rc "run -n 1003 -c 3 -t 2 --pipeline 8: exit 0" 0 n_split \
    run echo "$uds" -n 1003 -c 3 -t 2 --pipeline 8 --warmup 0 --json "$j" &&
    rcheck "run -n 1003 -c 3 -t 2 --pipeline 8: exactly 1003 ops" "$j" \
        '.runs[0] | .ops == 1003 and hist_ok and errors_zero and .pipeline == 8
         and .connections == 3 and .threads == 2'

# --- two endpoints in one run -------------------------------------------------

j=$T/two.json
if expect_rc "run two endpoints: exit 0" 0 two \
    run echo "$tcp" "$uds" -d 0.3 --warmup 0.05 --json "$j"; then
    check_eq "run two endpoints: table has 2 rows" 2 "$(table_rows "$T/two.out")"
    check "run two endpoints: rows in order, first is 1.00x" \
        sh -c "grep -E '^(tcp://|unix:)[^ ]+ +(connect|reuse) ' '$T/two.out' | head -n 1 | grep -q '^$tcp .* 1\.00×\$' &&
               grep -E '^(tcp://|unix:)[^ ]+ +(connect|reuse) ' '$T/two.out' | tail -n 1 | grep -Eq '^$uds .* [0-9.]+×\$'"
    rcheck "run two endpoints: two runs in JSON, in order" "$j" \
        '(.runs | length) == 2 and .runs[0].endpoint == "'"$tcp"'" and .runs[0].transport == "tcp"
         and .runs[1].endpoint == "'"$uds"'" and .runs[1].transport == "unix" and .valid'
    rcheck "run two endpoints: both measured cleanly" "$j" \
        'all(.runs[]; .ops > 0 and errors_zero and hist_ok and lat_ok)'
fi

# "vs first": each row against the first endpoint's run of the same repetition.
j=$T/vs.json
if expect_rc "run two endpoints --reps 2: exit 0" 0 vs \
    run echo "$tcp" "$uds" -d 0.15 --warmup 0 --reps 2 --json "$j"; then
    want=$(jq -r '.runs as $r | .runs[] | . as $x | ($r[] | select(.cell == 0 and .rep == $x.rep)
        | .ops_per_s) as $b | "\($x.ops_per_s / $b)"' "$j" | while read -r v; do
        printf '%.2f×\n' "$v"
    done | tr '\n' ' ')
    got=$(grep -E '^(tcp://|unix:)[^ ]+ +(connect|reuse) +64 B ' "$T/vs.out" | awk '{print $NF}' | tr '\n' ' ')
    check_eq "run --reps 2: vs first is against the first endpoint's run of the same rep" \
        "$want" "$got"
    rcheck "run --reps 2: ABBA, so rep 1 of the first endpoint is not its first run" "$j" \
        '[.runs[] | [.cell, .rep]] == [[0,0],[1,0],[1,1],[0,1]]'
fi

# --- where the evidence goes ------------------------------------------------------

# Without --json, run writes hopbench-run-DATE-TIME.json in the current directory.
mkdir -p "$T/nj" "$T/wj"
RC=0
(cd "$T/nj" && exec timeout -k 5 60 "$HOPBENCH" run echo "$tcp" -d 0.1 --warmup 0) \
    >"$T/nj.out" 2>"$T/nj.err" || RC=$?
check_eq "run (no --json): exit 0" 0 "$RC"
files=("$T"/nj/hopbench-run-*.json)
if [ "${#files[@]}" -eq 1 ] && [ -f "${files[0]}" ]; then
    f=$(basename "${files[0]}")
    check "run (no --json): named hopbench-run-DATE-TIME.json" \
        sh -c "echo '$f' | grep -Eqx 'hopbench-run-[0-9]{8}-[0-9]{6}\.json'"
    check "run (no --json): 'evidence: $f' printed" grep -qx "evidence: $f" "$T/nj.out"
    rcheck "run (no --json): the evidence document, 1 run" "${files[0]}" \
        '.schema == "hopbench.evidence/1" and .command == "run" and (.runs | length) == 1'
    check_eq "run (no --json): nothing else in the cwd" 1 "$(ls -A "$T/nj" | wc -l)"
else
    not_ok "run (no --json): one hopbench-run-*.json in the cwd" "found: $(ls -A "$T/nj")"
fi
RC=0
(cd "$T/wj" && exec timeout -k 5 60 "$HOPBENCH" run echo "$tcp" -d 0.1 --warmup 0.0 \
    --json "$T/wj.json") >"$T/wj.out" 2>"$T/wj.err" || RC=$?
check_eq "run --json FILE --warmup 0.0: exit 0" 0 "$RC"
check "run --json FILE: written there, nothing in the cwd" \
    sh -c "[ -s '$T/wj.json' ] && [ -z \"\$(ls -A '$T/wj')\" ]"
rcheck "run --warmup 0.0: no warm-up" "$T/wj.json" '.runs[0].warmup_s == 0'

# stdout closed (>&-): fd 1 is /dev/null from the start, so the --jsonl file opened later
# does not become stdout. (It used to: the placement and sysctl lines went into it.)
RC=0
(cd "$T/wj" && exec timeout -k 5 60 "$HOPBENCH" run echo "$uds" -d 0.1 --warmup 0.0 \
    --json "$T/cl.json" --jsonl "$T/cl.jsonl" >&- 2>"$T/cl.err") || RC=$?
check_eq "run >&- --jsonl: exit 0" 0 "$RC"
check "run >&- --jsonl: nothing on stderr" test ! -s "$T/cl.err"
check "run >&- --jsonl: only JSON lines, the header and the run" \
    jtrue -s 'length == 2 and .[0].record == "header" and (.[1] | has("histogram"))' "$T/cl.jsonl"
rcheck "run >&-: evidence complete, not interrupted" "$T/cl.json" \
    '.interrupted == false and (.runs | length) == 1 and .runs[0].ops > 0'

# stdout's reader goes away (head reads the two lines printed before the runs, then exits):
# SIGPIPE is ignored, and run looks for a gone reader before each run, so it stops early as
# for an interrupt: the evidence holds the runs measured, says interrupted, and the exit is
# 130. If head is slow to exit, every run may be done by then: nothing was cut short, so the
# evidence is not interrupted and the exit is 0 (the tables' reader being gone is no error).
# Either order must be consistent. (Every run used to be done, and then marked interrupted.)
RC=0
(cd "$T/wj" || exit 1
    timeout -k 5 60 "$HOPBENCH" run echo "$uds" -d 0.3 --warmup 0.1 --reps 4 --cooldown 0 \
        --json "$T/rp.json" 2>"$T/rp.err" | head -n 3 >"$T/rp.out"
    exit "${PIPESTATUS[0]}") || RC=$?
check "run --reps 4 | head -n 3: exit 130 (runs left undone) or 0 (all done) (exit $RC)" \
    jtrue --argjson rc "$RC" \
    'if .interrupted then $rc == 130 and (.runs | length) < 4
     else $rc == 0 and (.runs | length) == 4 end' "$T/rp.json"
check "run | head -n 3: the lines before the run got through" \
    sh -c "grep -q '^server: hopbench ' '$T/rp.out' && grep -q '^placement: ' '$T/rp.out' &&
           grep -q '^sysctl: ' '$T/rp.out'"
check "run | head -n 3: nothing on stderr" test ! -s "$T/rp.err"
rcheck "run | head -n 3: each run measured is whole" "$T/rp.json" \
    'all(.runs[]; .ops > 0 and .valid == true and .interrupted == false and errors_zero)'

# stdout has a reader but cannot be written (ENOSPC): that is no interrupt, every run is
# measured, stderr says it once, and the exit is 1. (It used to stop before the first run.)
RC=0
(cd "$T/wj" && exec timeout -k 5 60 "$HOPBENCH" run echo "$uds" -d 0.1 --warmup 0.0 --reps 2 \
    --cooldown 0 --json "$T/full.json" >/dev/full 2>"$T/full.err") || RC=$?
check_eq "run >/dev/full: exit 1" 1 "$RC"
check "run >/dev/full: stderr says once that stdout could not be written" \
    sh -c "[ \"\$(cat '$T/full.err')\" = 'hopbench: stdout could not be written; evidence: $T/full.json' ]"
rcheck "run >/dev/full: every run measured, not interrupted" "$T/full.json" \
    '.interrupted == false and (.runs | length) == 2 and all(.runs[]; .ops > 0 and errors_zero)'

# --- pipelining ---------------------------------------------------------------

for tr in tcp unix; do
    if [ $tr = tcp ]; then ep=$tcp; else ep=$uds; fi
    j=$T/pipe_$tr.json
    expect_rc "run $tr --pipeline 8: exit 0" 0 "pipe_$tr" \
        run echo "$ep" --pipeline 8 -d 0.3 --warmup 0.05 --json "$j" &&
        rcheck "run $tr --pipeline 8: ops > 0, no errors" "$j" \
            '.runs[0] | .pipeline == 8 and .ops > 0 and errors_zero and hist_ok and lat_ok'
done

# --- sizes ----------------------------------------------------------------------

for spec in "1:1" "4KiB:4096" "64KiB:65536"; do
    sz=${spec%%:*}
    bytes=${spec#*:}
    j=$T/size_$sz.json
    expect_rc "run --size $sz (tcp, unix): exit 0" 0 "size_$sz" \
        run echo "$tcp" "$uds" --size "$sz" -d 0.3 --warmup 0.05 --json "$j" &&
        rcheck "run --size $sz: both runs size $bytes, ops > 0, no errors" "$j" \
            '(.runs | length) == 2 and all(.runs[]; .size == '"$bytes"' and .ops > 0 and errors_zero
             and hist_ok and lat_ok)'
done
j=$T/size_64k_c4.json
expect_rc "run --size 64KiB -c 4 -t 2 (tcp, unix): exit 0" 0 size_64k_c4 \
    run echo "$tcp" "$uds" --size 64KiB -c 4 -t 2 -d 0.3 --warmup 0.05 --json "$j" &&
    rcheck "run --size 64KiB -c 4 -t 2: ops > 0, no errors" "$j" \
        '(.runs | length) == 2 and all(.runs[]; .size == 65536 and .connections == 4
         and .threads == 2 and .ops > 0 and errors_zero and hist_ok and lat_ok)'
j=$T/size_64k_conn.json
expect_rc "run --size 64KiB --mode connect -c 4 -t 2: exit 0" 0 size_64k_conn \
    run echo "$tcp" "$uds" --size 64KiB --mode connect -c 4 -t 2 -d 0.3 --warmup 0.05 --json "$j" &&
    rcheck "run --size 64KiB --mode connect -c 4 -t 2: ops > 0, no errors" "$j" \
        'all(.runs[]; .ops > 0 and errors_zero and hist_ok and .connects >= .ops)'

stop_server "$srv_pid" "$srv_out"
check_eq "serve: exit 0 after the runs" 0 "$RC"
check "serve: socket removed" test ! -e "$sock"

# --- the server's own count ------------------------------------------------------

sock=$T/count.sock
if start_server count --listen tcp://127.0.0.1:0 --listen "unix:$sock"; then
    cnt_pid=$SRV_PID cnt_out=$SRV_OUT
    expect_rc "run -n 500 --mode connect (tcp, unix): exit 0" 0 count_run \
        run echo "tcp://127.0.0.1:$SRV_PORT" "unix:$sock" -n 500 --mode connect --warmup 0 \
        --json "$T/count.json"
    rcheck "run -n 500 --mode connect: 500 ops and 500 connects each" "$T/count.json" \
        'all(.runs[]; .ops == 500 and .connects == 500 and errors_zero)'
    stop_server "$cnt_pid" "$cnt_out"
    check_eq "serve (count): exit 0" 0 "$RC"
    conns=$(stopped_field connections)
    bin=$(stopped_field "bytes in")
    bout=$(stopped_field "bytes out")
    errs=$(stopped_field errors)
    # 2 x 500 measured connections, plus one pre-flight probe per endpoint.
    check "serve: counted >= 1002 connections (got '$conns')" test "${conns:-0}" -ge 1002
    check_eq "serve: bytes in == 2 x 500 x 64" 64000 "$bin"
    check_eq "serve: bytes out == bytes in" "$bin" "$bout"
    check_eq "serve: no errors on clean connect-per-request" 0 "$errs"
fi

done_testing
