#!/bin/bash
# --pin same|split for serve and run. The server's threads are pinned where --pin says (read
# back from /proc/PID/task/*/status), the client's load thread runs on the CPUs run records,
# and the evidence says where its server_cpus come from: observed from the server's threads
# with --server-pid (whatever --pin run was given), else what --pin expects.
# shellcheck disable=SC2016 # $vars in single quotes are jq variables
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

# cpus_expand LIST : "0-2,5" as "0 1 2 5".
cpus_expand() {
    local part list=""
    local IFS=,
    for part in $1; do
        if [[ $part == *-* ]]; then
            list+=" $(seq -s ' ' "${part%-*}" "${part#*-}")"
        else
            list+=" $part"
        fi
    done
    echo "${list# }"
}

# cpus_format CPU... : the list as hopbench writes it ("0-2,5"), from ascending CPUs.
cpus_format() {
    local fmt="" lo=$1 hi=$1 c
    shift
    for c in "$@" ""; do
        if [ -n "$c" ] && [ "$c" -eq $((hi + 1)) ]; then
            hi=$c
            continue
        fi
        if [ "$lo" = "$hi" ]; then fmt+=",$lo"; else fmt+=",$lo-$hi"; fi
        lo=$c hi=$c
    done
    echo "${fmt#,}"
}

# task_cpus PID TID : the CPUs thread TID of PID may run on, expanded.
task_cpus() {
    cpus_expand "$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "/proc/$1/task/$2/status" 2>/dev/null)"
}

# thread_ticks PID : a line "TID TICKS CPU" for each thread of PID: its CPU time so far in clock
# ticks and the CPU it last ran on (fields 14, 15 and 39 of /proc/PID/task/TID/stat). Read by
# the shell itself: a sed per thread took a second on a busy box, as long as the run had left.
thread_ticks() {
    local st tid line
    local -a f
    for st in /proc/"$1"/task/*/stat; do
        tid=${st%/stat}
        tid=${tid##*/}
        read -r line 2>/dev/null <"$st" || continue
        read -r -a f <<<"${line##*) }"
        echo "$tid $((f[11] + f[12])) ${f[36]}"
    done
}

# load_thread PID : "TID CPU" of PID's load thread (the engine names it hb-load) and the CPU it
# last ran on. By name, not by CPU growth: on a box at load 9 the sampler thread once grew more
# over the half second watched, and its CPUs (not pinned) were taken for the load thread's.
load_thread() {
    local st tid comm line
    local -a f
    for st in /proc/"$1"/task/*/stat; do
        tid=${st%/stat}
        tid=${tid##*/}
        read -r comm 2>/dev/null <"/proc/$1/task/$tid/comm" || continue
        [ "$comm" = hb-load ] || continue
        read -r line 2>/dev/null <"$st" || continue
        read -r -a f <<<"${line##*) }"
        echo "$tid ${f[36]}"
        return
    done
}

# busiest_since PID BEFORE : "TID CPU" of the thread of PID whose CPU time grew the most since
# BEFORE (thread_ticks PID, read earlier). Growth, not the time so far: a TSan build's start
# left its main thread the busiest so far 1 s into a run (17 ticks, the load thread 10-16).
busiest_since() {
    thread_ticks "$1" | awk 'NR == FNR { t[$1] = $2; next }
        { d = $2 - t[$1]; if (!n++ || d > best) { best = d; line = $1 " " $3 } }
        END { print line }' <(printf '%s\n' "$2") -
}

# server_threads_cpus PID WANT THREADS : waits (up to 5 s) until PID has its workers (the server pins
# itself before it starts them), then prints "TID:CPUS" for every thread whose CPUs are not
# WANT (nothing when all are), and the thread count on the last line.
server_threads_cpus() {
    local pid=$1 want=$2 threads=$3 i d n tasks
    for ((i = 0; i < 100; i++)); do
        tasks=(/proc/"$pid"/task/*)
        n=${#tasks[@]}
        [ "$n" -ge "$threads" ] && break
        sleep 0.05
    done
    for d in /proc/"$pid"/task/*; do
        [ "$(task_cpus "$pid" "${d##*/}")" = "$want" ] || echo "${d##*/}:$(task_cpus "$pid" "${d##*/}")"
    done
    echo "$n"
}

# check_threads NAME MIN OUTPUT : OUTPUT (of server_threads_cpus) says at least MIN threads,
# and no thread on other CPUs. At least: a sanitizer may add its own thread (TSan starts one
# on the first pthread_create).
check_threads() {
    local name=$1 min=$2 out=$3 n bad
    n=${out##*$'\n'}
    bad=${out%"$n"}
    if [ "$n" -ge "$min" ] 2>/dev/null && [ -z "$bad" ]; then
        ok "$name ($n threads)"
    else
        not_ok "$name" "want >= $min threads, none elsewhere; got $n, elsewhere (TID:CPUS): ${bad//$'\n'/ }"
    fi
}

read -r -a ALLOWED <<<"$(cpus_expand "$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)")"
NCPU=${#ALLOWED[@]}
HALF=$((NCPU / 2))
CLIENT=("${ALLOWED[@]:0:HALF}") # split: the client's half, the server's is the rest
SERVER=("${ALLOWED[@]:HALF}")
FIRST=${ALLOWED[0]} # same: both on the first allowed CPU
# Every run here has one kept connection and no --wait: the placement line says it waits blocking.
AUTO_WAIT="block (the default with one kept connection per thread, closed loop)"
echo "# allowed CPUs: ${ALLOWED[*]} (client ${CLIENT[*]}, server ${SERVER[*]})"

# run_watched NAME SERVER-PID RUN-ARGS... : "hopbench run RUN-ARGS..." in the background;
# from 1 s to 1.5 s in it notes the run's load thread (by its name) as
# CLI_TID/CLI_CPU and of the server as SRV_TID/SRV_CPU (the CPU each last ran on), with the
# CPUs each may run on (CLI_ALLOWED, SRV_ALLOWED); then it waits for the run (bounded) and
# sets RC.
run_watched() {
    local name=$1 srv=$2 pid srv0
    shift 2
    spawn "$name" run "$@"
    pid=$SPAWNED
    sleep 1
    srv0=$(thread_ticks "$srv")
    sleep 0.5
    read -r CLI_TID CLI_CPU <<<"$(load_thread "$pid")"
    read -r SRV_TID SRV_CPU <<<"$(busiest_since "$srv" "$srv0")"
    CLI_ALLOWED=$(task_cpus "$pid" "$CLI_TID")
    SRV_ALLOWED=$(task_cpus "$srv" "$SRV_TID")
    reap "$pid" 20
}

# in_list CPU LIST... : CPU is one of LIST.
# shellcheck disable=SC2317 # called through check
in_list() {
    local c=$1
    shift
    [[ " $* " == *" $c "* ]]
}

# observed_runs PIN SRV_PID PORT SOCK CFMT SFMT "CLIENT CPUS" "SERVER CPUS": run --pin PIN
# --server-pid over tcp and unix against a server pinned to SERVER CPUS; the evidence and the
# placement line say what was observed, the load thread may run on the first client CPU only and
# ran on a client CPU, the busiest server thread ran on a server CPU and may run on those only.
observed_runs() {
    local pin=$1 srv=$2 port=$3 sock=$4 cfmt=$5 sfmt=$6 ep tr n j
    local -a cl sl
    read -r -a cl <<<"$7"
    read -r -a sl <<<"$8"
    for ep in "tcp://127.0.0.1:$port" "unix:$sock"; do
        tr=${ep%%:*}
        n="run --pin $pin --server-pid ($tr)"
        j=$T/${pin}_obs_$tr.json
        run_watched "${pin}_obs_$tr" "$srv" echo "$ep" --pin "$pin" --server-pid "$srv" \
            -d 2 --warmup 0.2 --json "$j"
        check_eq "$n: exit 0" 0 "$RC"
        rcheck "$n: ops > 0, no errors" "$j" '.runs[0] | .ops > 0 and errors_zero'
        rcheck "$n: placement $pin, client $cfmt, server $sfmt observed" "$j" \
            ".placement == {pin: \"$pin\", client_cpus: \"$cfmt\", server_cpus: \"$sfmt\",
                            server_cpus_source: \"observed\"}"
        check "$n: the placement line says observed" \
            grep -qx "placement: --pin $pin (client CPUs $cfmt, server CPUs $sfmt, observed); --wait $AUTO_WAIT" \
            "$T/${pin}_obs_$tr.out"
        check "$n: the load thread may run on client CPU ${cl[0]} only (got '$CLI_ALLOWED')" \
            test "$CLI_ALLOWED" = "${cl[0]}"
        check "$n: the load thread ran on a client CPU (last on ${CLI_CPU:-?})" \
            in_list "${CLI_CPU:-x}" "${cl[@]}"
        check "$n: the busiest server thread ran on a server CPU (last on ${SRV_CPU:-?})" \
            in_list "${SRV_CPU:-x}" "${sl[@]}"
        check "$n: ... and may run on the server CPUs only (got '$SRV_ALLOWED')" \
            test "$SRV_ALLOWED" = "${sl[*]}"
    done
}

# --- serve --pin split: every server thread on the second half ---------------------------

if [ "$NCPU" -lt 2 ]; then
    ok "serve/run --pin split # SKIP this process may use one CPU only (${ALLOWED[*]}); split needs 2"
else
    start_server split --listen tcp://127.0.0.1:0 --listen "unix:$T/split.sock" \
        --pin split --threads 3 || done_testing
    sp_pid=$SRV_PID sp_port=$SRV_PORT
    check "serve --pin split: says so" grep -q "^hopbench: echo server, 3 threads, pid $sp_pid, pin split," \
        "$T/split.out"
    got=$(server_threads_cpus "$sp_pid" "${SERVER[*]}" 4)
    check_threads "serve --pin split: main thread + 3 workers, every one on CPUs ${SERVER[*]}" 4 "$got"
    sfmt=$(cpus_format "${SERVER[@]}")
    cfmt=$(cpus_format "${CLIENT[@]}")

    # run --pin split --server-pid: the client on the first half, the server observed.
    observed_runs split "$sp_pid" "$sp_port" "$T/split.sock" "$cfmt" "$sfmt" "${CLIENT[*]}" "${SERVER[*]}"

    # Without --server-pid (nor the server found by its socket) nothing is observed: what
    # serve --pin split would use, said so.
    j=$T/split_exp.json
    expect_rc "run --pin split, no --server-pid: exit 0" 0 split_exp \
        run echo "tcp://127.0.0.1:$sp_port" --pin split -n 300 --warmup 0 --no-server-lookup \
        --json "$j"
    rcheck "run --pin split, no --server-pid: server $sfmt, expected" "$j" \
        ".placement == {pin: \"split\", client_cpus: \"$cfmt\", server_cpus: \"$sfmt\",
                        server_cpus_source: \"expected\"}"
    check "run --pin split, no --server-pid: the placement line says it was not observed" \
        grep -qx "placement: --pin split (client CPUs $cfmt, server CPUs $sfmt if it runs with --pin split: not observed, no --server-pid); --wait $AUTO_WAIT" \
        "$T/split_exp.out"

    # run --pin same against the split server: what was observed, not what --pin same implies.
    j=$T/mismatch.json
    expect_rc "run --pin same --server-pid of a split server: exit 0" 0 mismatch \
        run echo "unix:$T/split.sock" --pin same --server-pid "$sp_pid" -n 300 --warmup 0 --json "$j"
    rcheck "run --pin same --server-pid of a split server: server_cpus $sfmt observed, not $FIRST" "$j" \
        ".placement == {pin: \"same\", client_cpus: \"$FIRST\", server_cpus: \"$sfmt\",
                        server_cpus_source: \"observed\"}"
fi

# --- serve --pin same: every server thread on the first CPU; run --pin same beside it --------

start_server same --listen tcp://127.0.0.1:0 --listen "unix:$T/same.sock" --pin same --threads 2 ||
    done_testing
sm_pid=$SRV_PID sm_port=$SRV_PORT
check "serve --pin same: says so" grep -q "^hopbench: echo server, 2 threads, pid $sm_pid, pin same," \
    "$T/same.out"
got=$(server_threads_cpus "$sm_pid" "$FIRST" 3)
check_threads "serve --pin same: main thread + 2 workers, every one on CPU $FIRST" 3 "$got"

observed_runs same "$sm_pid" "$sm_port" "$T/same.sock" "$FIRST" "$FIRST" "$FIRST" "$FIRST"

j=$T/same_exp.json
expect_rc "run --pin same, no --server-pid: exit 0" 0 same_exp \
    run echo "unix:$T/same.sock" --pin same -n 300 --warmup 0 --no-server-lookup --json "$j"
# found by its listening socket, the server is observed as --server-pid would have it
expect_rc "run --pin same, the server found by its socket: exit 0" 0 same_found \
    run echo "unix:$T/same.sock" --pin same -n 300 --warmup 0 --json "$T/same_found.json"
rcheck "run --pin same, the server found by its socket: server $FIRST, observed" "$T/same_found.json" \
    ".placement | .server_cpus == \"$FIRST\" and .server_cpus_source == \"observed\""
rcheck "run --pin same, no --server-pid: server $FIRST, expected" "$j" \
    ".placement | .server_cpus == \"$FIRST\" and .server_cpus_source == \"expected\""
check "run --pin same, no --server-pid: the placement line says it was not observed" \
    grep -qx "placement: --pin same (client CPUs $FIRST, server CPUs $FIRST if it runs with --pin same: not observed, no --server-pid); --wait $AUTO_WAIT" \
    "$T/same_exp.out"

# --- observed is the union over every --server-pid, and an unpinned server is all CPUs -------

allfmt=$(cpus_format "${ALLOWED[@]}")
start_server none --listen "unix:$T/none.sock" --pin none --threads 2 || done_testing
nn_pid=$SRV_PID
got=$(server_threads_cpus "$nn_pid" "${ALLOWED[*]}" 3)
check_threads "serve --pin none: every thread may run on every allowed CPU" 3 "$got"
j=$T/none_obs.json
expect_rc "run --server-pid of an unpinned server: exit 0" 0 none_obs \
    run echo "unix:$T/none.sock" --server-pid "$nn_pid" -n 300 --warmup 0 --json "$j"
rcheck "run --server-pid of an unpinned server: server_cpus $allfmt observed, client any" "$j" \
    ".placement == {pin: \"none\", client_cpus: \"any\", server_cpus: \"$allfmt\",
                    server_cpus_source: \"observed\"}"
check "run --server-pid of an unpinned server: said in the placement line" \
    grep -qx "placement: --pin none (client CPUs any, server CPUs $allfmt, observed); --wait $AUTO_WAIT" \
    "$T/none_obs.out"
j=$T/none_exp.json
expect_rc "run --pin none, no --server-pid: exit 0" 0 none_exp \
    run echo "unix:$T/none.sock" -n 300 --warmup 0 --no-server-lookup --json "$j"
rcheck "run --pin none, no --server-pid: server any, expected" "$j" \
    '.placement == {pin: "none", client_cpus: "any", server_cpus: "any", server_cpus_source: "expected"}'
stop_server "$nn_pid" "$T/none.out"

if [ "$NCPU" -ge 2 ]; then
    read -r -a both <<<"$(printf '%s\n' "$FIRST" "${SERVER[@]}" | sort -nu | tr '\n' ' ')"
    union=$(cpus_format "${both[@]}")
    j=$T/union.json
    expect_rc "run with two --server-pid (same and split servers): exit 0" 0 union \
        run echo "unix:$T/same.sock" --server-pid "$sm_pid" --server-pid "$sp_pid" -n 300 \
        --warmup 0 --json "$j"
    rcheck "run with two --server-pid: server_cpus the union, $union, observed" "$j" \
        ".placement | .server_cpus == \"$union\" and .server_cpus_source == \"observed\""
    stop_server "$sp_pid" "$T/split.out"
    check_eq "serve --pin split: exit 0" 0 "$RC"
fi
stop_server "$sm_pid" "$T/same.out"
check_eq "serve --pin same: exit 0" 0 "$RC"

done_testing
