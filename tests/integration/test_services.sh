#!/bin/bash
# run --service, --watch and --label: several named services measured apart in one run,
# each against a reading of its own taken outside hopbench (its cgroup's cpuacct.usage, its
# /proc/PID/stat utime + stime); the sum is client + services; labels in the tables and the
# evidence; a watched hop's sockets against `ss`; bad words refused with one line, exit 64.
# shellcheck disable=SC2016 # $vars in single quotes are jq variables
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

TOOLS=${TOOLS:-build/release/tools}
case $TOOLS in
/*) ;;
*) TOOLS=$PWD/$TOOLS ;;
esac
TICK_NS=$((1000000000 / $(getconf CLK_TCK)))

# exit0 NAME OUT : the last hb exited 0; else says which run failed and how.
exit0() {
    if [ "$RC" = 0 ]; then
        ok "$1: exit 0"
    else
        not_ok "$1: exit 0" "exit $RC; $(grep -E '^(errors|cut short)' "$T/$2.out" | head -c 400 | tr '\n' '|') $(head -c 200 "$T/$2.err")"
    fi
}

# --- bad words: one line, exit 64 ---
gone=$(
    sh -c 'echo $$' &
    wait
)
bad() {
    local name=$1 re=$2
    shift 2
    expect_rc "$name: exit 64" 64 bad run echo tcp://127.0.0.1:1 "$@" &&
        one_line "$name: one line naming it" "$T/bad.err" "$re"
}
bad "unknown kind" "unknown kind 'proc'" --service x=proc:1
bad "no kind" "missing KIND:ARG" --service x=1
bad "duplicate name" "the name 'x' is given twice" --service "x=pid:$$" --service "x=tree:$$"
bad "missing pid" "pid $gone: no such process" --service "x=pid:$gone"
bad "a cgroup dir that is not a cgroup" "is not a cgroup directory" --service "x=cgroup:$T"
bad "a cgroup dir that is no directory" "is not a directory" --service "x=cgroup:$T/none"
bad "a name of the table's own" "'sum' names a column" --service "sum=pid:$$"
bad "more labels than endpoints" "2 labels for 1 endpoints" --label a --label b
bad "a bad label" "a label \(before '='\)" "a b=tcp://127.0.0.1:2"
bad "one label for two endpoints" "label 'x' is given to two endpoints" --label x x=tcp://127.0.0.1:2
bad "labelled twice" "labelled 'y' already" --label x --label z y=tcp://127.0.0.1:2
bad "watch port 0" "port 0 is no hop" --watch tcp://127.0.0.1:0
bad "watch a bad endpoint" "unknown scheme" --watch gopher://127.0.0.1:2
bad "watch a URL with a path" "a path is for run.s requests" --watch http://127.0.0.1:2/x

# --- a cgroup of the test's own, in the cpuacct (v1) or unified (v2) hierarchy ---
# Made below the cgroup this script runs in, so nothing leaves the limits it was started
# under; only that hierarchy is joined (the memory cgroup stays the script's). Removed by
# lib.sh's cleanup, after the processes in it are stopped.
own_cgroup() {
    local rel
    CGS=
    if [ -f /sys/fs/cgroup/cpuacct/cpuacct.usage ]; then
        rel=$(awk -F: '$2 ~ /(^|,)cpuacct(,|$)/ { print $3 }' /proc/self/cgroup)
        CGS=/sys/fs/cgroup/cpuacct${rel%/}/hbsvc-$$
        CG_USAGE=cpuacct.usage
    elif [ -f /sys/fs/cgroup/cgroup.controllers ]; then
        rel=$(awk -F: '$1 == "0" { print $3 }' /proc/self/cgroup)
        CGS=/sys/fs/cgroup${rel%/}/hbsvc-$$
        CG_USAGE=cpu.stat
    fi
    [ -n "$CGS" ] && mkdir "$CGS" 2>/dev/null || return 1
    CGROUPS+=("$CGS")
}
# usage_ns : the cgroup's CPU usage in ns, read here, not by hopbench.
usage_ns() {
    if [ "$CG_USAGE" = cpuacct.usage ]; then
        cat "$CGS/cpuacct.usage"
    else
        echo $(($(awk '$1 == "usage_usec" { print $2 }' "$CGS/cpu.stat") * 1000))
    fi
}
# ticks_ns PID : utime + stime of PID from /proc/PID/stat, in ns.
ticks_ns() {
    echo $(($(sed 's/.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }') * TICK_NS))
}

sock=$T/a.sock
if own_cgroup; then
    # shellcheck disable=SC2034 # cg_spawn (lib.sh) reads it
    CG_JOIN=$CGS
    cg_spawn srva "$HOPBENCH" serve echo --listen tcp://127.0.0.1:0 --listen "unix:$sock"
    pa=$SPAWNED
    for ((i = 0; i < 100; i++)); do
        [ "$(grep -c '^hopbench: listening' "$T/srva.out" 2>/dev/null)" = 2 ] && break
        sleep 0.05
    done
    porta=$(sed -n 's|^hopbench: listening on tcp://.*:\([0-9][0-9]*\)$|\1|p' "$T/srva.out")
    svca=(--service "A=cgroup:$CGS")
    check_eq "the server in the test's cgroup keeps the script's memory cgroup" \
        "$(grep -E '^[0-9]+:memory:' /proc/self/cgroup)" "$(grep -E '^[0-9]+:memory:' "/proc/$pa/cgroup")"
else
    ok "services: no cgroup of the test's own here # SKIP A is measured by its tree instead"
    start_server srva --listen tcp://127.0.0.1:0 --listen "unix:$sock" || done_testing
    pa=$SRV_PID
    porta=$SRV_PORT
    svca=(--service "A=tree:$pa")
fi
start_server srvb --listen tcp://127.0.0.1:0 || done_testing
pb=$SRV_PID
portb=$SRV_PORT

# --- two services in one run, each loaded in turn: a's run loads A, b's run loads B ---
j=$T/two.json
[ -n "${CGS:-}" ] && a0=$(usage_ns)
b0=$(ticks_ns "$pb")
hb two run echo "a=tcp://127.0.0.1:$porta" "b=tcp://127.0.0.1:$portb" -d 1 --warmup 0 \
    "${svca[@]}" --service "B=pid:$pb" --json "$j"
[ -n "${CGS:-}" ] && a1=$(usage_ns)
b1=$(ticks_ns "$pb")
exit0 "two services" two
rcheck "two services: each run has both, apart, with kind and source" "$j" \
    '[.runs[] | .observed.services | map([.name, .kind, (.source | split(" ")[0])])] | unique
     | length == 1 and (.[0] | .[1] == ["B", "pid", "pid"] and .[0][0] == "A")'
rcheck "A's CPU counts in a's run, B's in b's (the other idle: under 10 %)" "$j" \
    '(.runs | map({(.label): (.observed.services | map({(.name): .cpu_ns}) | add)}) | add) as $c
     | $c.a.A > 0 and $c.b.B > 0 and $c.b.A < 0.1 * $c.a.A and $c.a.B < 0.1 * $c.b.B'
if [ -n "${CGS:-}" ]; then
    rcheck "A's CPU matches its cgroup's $CG_USAGE read by the test (within 3 % + 2 ticks)" "$j" \
        "([.runs[].observed.services[0].cpu_ns] | add) as \$s | $((a1 - a0)) as \$d
         | (\$s - \$d | fabs) <= 0.03 * \$d + 2 * $TICK_NS"
else
    ok "A's CPU matches its cgroup's # SKIP no cgroup of the test's own"
fi
rcheck "B's CPU matches its /proc/PID/stat utime + stime read by the test (within 3 % + 2 ticks)" \
    "$j" "([.runs[].observed.services[1].cpu_ns] | add) as \$s | $((b1 - b0)) as \$d
          | (\$s - \$d | fabs) <= 0.03 * \$d + 2 * $TICK_NS"
rcheck "the sum is client + services, per op" "$j" \
    'all(.runs[]; .observed.services_total as $t | ($t.client_ns_per_op + ([.observed.services[].cpu_ns_per_op] | add)) as $s
         | ($t.sum_ns_per_op - $s | fabs) <= 1e-6 * $s and $t.client_ns_per_op == .client_cpu_ns_per_op)'
rcheck "per op is the total over the ops; system is /proc/stat's, softirq included" "$j" \
    'all(.runs[]; . as $r | all(.observed.services[]; (.cpu_ns_per_op - .cpu_ns / $r.ops | fabs) <= 1e-6 * .cpu_ns_per_op + 1e-9)
         and .observed.services_total.system_ns_per_op == .observed.cpu.system_ns_per_op)'
rcheck "PSS of each service at both ends; a pid's working set unavailable, saying why" "$j" \
    'all(.runs[].observed.services[]; .pss_start > 0 and .pss_end > 0 and .processes == 1)
     and all(.runs[].observed.services[1]; .working_set_end.unavailable | test("cgroup"))'
rcheck "labels: the evidence keeps the endpoint and adds its label" "$j" \
    '[.runs[] | [.label, (.endpoint | startswith("tcp://127.0.0.1:"))]] == [["a", true], ["b", true]]'
check "labels: the run table's rows are the labels" \
    grep -Eq '^a +reuse +64 B ' "$T/two.out"
check "labels: no row shows the address" sh -c "! grep -q '^tcp://' '$T/two.out'"
check "the per-service table: client, A, B, sum, system" \
    grep -Eq '^cpu per request by service \(µs\) +client +A +B +sum +system$' "$T/two.out"
row_a=$(grep -E '^a +[0-9]+\.[0-9]{2} +[0-9]+\.[0-9]{2} +[0-9]+\.[0-9]{2} +[0-9]+\.[0-9]{2} +[0-9]+\.[0-9]{2}$' "$T/two.out")
check "the per-service table: a's row has five figures" test -n "$row_a"
# The row's sum column is client + A + B as printed (each rounded to 0.01).
check "the per-service table: sum = client + A + B (to the rounding)" \
    awk -v r="$row_a" 'BEGIN { split(r, f, " +"); d = f[2] + f[3] + f[4] - f[5]; exit !(d < 0.02 && d > -0.02) }'
check "memory lines name each service and its kind" \
    grep -Eq "^  b B \(pid $pb\): PSS [0-9.]+ [KMG]iB -> [0-9.]+ [KMG]iB, working set n/a \(a working set is a cgroup's figure" "$T/two.out"

# --- a service that exits during the run: its figures n/a with the reason, and so is the sum ---
spawn_cmd brief sleep 0.4
brief=$SPAWNED
j=$T/brief.json
hb brief run echo "tcp://127.0.0.1:$porta" -d 1 --warmup 0 --service "gone=pid:$brief" \
    "${svca[@]}" --json "$j"
exit0 "a service that exits" brief
rcheck "a service that exits: its CPU and the sum unavailable, saying so; the other measured" "$j" \
    '.runs[0].observed | (.services[0].cpu_ns.unavailable | test("pid [0-9]+ exited during the run"))
     and (.services_total.sum_ns_per_op.unavailable | test("exited")) and .services[1].cpu_ns > 0'
check "a service that exits: the table shows n/a and why" \
    sh -c "grep -Eq '^tcp://127.0.0.1:$porta +[0-9.,]+ +n/a +[0-9.,]+ +n/a +[0-9.,]+$' '$T/brief.out' &&
           grep -Eq '^  n/a: pid $brief exited during the run' '$T/brief.out'"

# --- with --reps: each figure per endpoint, and unix against tcp with its interval ---
j=$T/reps.json
hb reps run echo "tcp=tcp://127.0.0.1:$porta" "unix=unix:$sock" -d 0.25 --warmup 0 --reps 4 \
    "${svca[@]}" --json "$j"
exit0 "reps" reps
check "reps: the comparison has each figure, unix against tcp with n=4+4" \
    sh -c "grep -Eq '^  A cpu µs/op +tcp [0-9.]+  unix [0-9.]+ vs first: (~ )?[0-9.]+× \[[0-9.]+×, [0-9.]+×\] \(p=[0-9.e-]+ n=4\+4\)$' '$T/reps.out' &&
           grep -Eq '^  sum cpu µs/op +tcp [0-9.]+  unix [0-9.]+ vs first: ' '$T/reps.out' &&
           grep -Eq '^  system cpu µs/op +tcp ' '$T/reps.out' && grep -Eq '^  client cpu µs/op +tcp ' '$T/reps.out' &&
           grep -Eq '^  A PSS MiB +tcp [0-9.]+  unix [0-9.]+ vs first: ' '$T/reps.out'"
# A figure unavailable in every run (a working set where A is no memory cgroup) has no line.
if jq -e 'all(.runs[].observed.services[0].working_set_end; type == "object")' "$j" >/dev/null; then
    check "reps: a figure n/a in every run has no comparison line" \
        sh -c "! grep -q '^  A working set MiB' '$T/reps.out'"
else
    check "reps: A's working set compared" grep -Eq '^  A working set MiB +tcp [0-9.]+ ' "$T/reps.out"
fi
check "reps: rows of the per-service table are numbered by repetition" \
    grep -Eq '^unix #4 +[0-9]' "$T/reps.out"

# --- --watch: another hop's sockets, sampled as the loaded hop's, against ss ---
# Hop C: a bounded connect-mode client leaves TIME_WAIT sockets on it (they last 60 s),
# and `hold` keeps 3 connections open; then a run loads A and watches C and A's socket.
start_server srvc --listen tcp://127.0.0.1:0 || done_testing
pc=$SRV_PID
portc=$SRV_PORT
hb churn run echo "tcp://127.0.0.1:$portc" --mode connect -n 1500 -c 4 -t 1 --warmup 0 --json "$T/churn.json"
exit0 "churn on hop C" churn
spawn_cmd holdc "$TOOLS/hold" "$portc" 3 40 30
spawn_cmd holdu "$TOOLS/hold" "$sock" 2 40 30
for ((i = 0; i < 100; i++)); do
    grep -q held "$T/holdc.out" 2>/dev/null && grep -q held "$T/holdu.out" 2>/dev/null && break
    sleep 0.05
done
ssc() { ss -Htan "$@" | wc -l; }
tw_cli0=$(ssc state time-wait "( dport = :$portc )")
j=$T/watch.json
hb watch run echo "tcp://127.0.0.1:$porta" -d 0.5 --warmup 0 --sample-ms 50 \
    --watch "c=tcp://127.0.0.1:$portc" --watch "unix:$sock" --json "$j"
tw_cli1=$(ssc state time-wait "( dport = :$portc )")
tw_srv1=$(ssc state time-wait "( sport = :$portc )")
est1=$(ssc state established "( sport = :$portc )")
held1=$(ssc "( dport = :$portc )")
exit0 "watch" watch
check "watch: the churn left TIME_WAIT sockets on hop C (ss: $tw_cli1)" test "$tw_cli1" -ge 100
rcheck "watch: hop C's TIME_WAIT (client side) at the start and end is what ss counts" "$j" \
    ".runs[0].observed.watch[0].time_wait_client | .start == $tw_cli0 and .end == $tw_cli1 and .peak >= .end"
rcheck "watch: hop C's TIME_WAIT (server side), established, ports held as ss counts them" "$j" \
    ".runs[0].observed.watch[0] | .time_wait_server.end == $tw_srv1 and .established.end == $est1
     and .established.peak == 3 and .client_ports.end == $held1 and .listen_queue.peak == 0
     and (.listen_backlog | type) == \"number\""
rcheck "watch: labelled, with its endpoint and transport" "$j" \
    '.runs[0].observed.watch | .[0].label == "c" and .[0].transport == "tcp" and .[1].label == null
     and .[1].transport == "unix" and (.[1].endpoint | startswith("unix:"))'
rcheck "watch: the unix hop: the 2 held connections, no TIME_WAIT (AF_UNIX has none)" "$j" \
    '.runs[0].observed.watch[1] | .established.peak == 2 and .established.end == 2
     and (.time_wait_client.end.unavailable | test("AF_UNIX")) and .listen_queue.end == 0'
check "watch: the table prints hop C by its label, with ss's counts" \
    grep -Eq "^  tcp://127.0.0.1:$porta, hop c: established 3 \(end 3\), accept queue 0 \(end 0\), TIME_WAIT client [0-9]+ \(end $tw_cli1\), TIME_WAIT server [0-9]+ \(end $tw_srv1\), ports held [0-9]+ \(end $held1\)$" "$T/watch.out"
check "watch: no per-service table without --service" \
    sh -c "! grep -q '^cpu per request by service' '$T/watch.out'"
rcheck "watch: no services key without --service, no label key without a label" "$j" \
    '.runs[0] | .observed.watch != null and (.observed | has("services")) == false and has("label") == false'

# --- without any of the new options: the output is the same as before ---
hb plain run echo "tcp://127.0.0.1:$porta" -d 0.2 --warmup 0 --json "$T/plain.json"
check "plain: no new keys" jtrue '.runs[0] | (.observed | has("services") or has("services_total") or has("watch")) or has("label") | not' "$T/plain.json"
check "plain: the run table's row is the address" grep -Eq "^tcp://127.0.0.1:$porta +reuse " "$T/plain.out"
check "plain: no per-service lines" sh -c "! grep -Eq '^(cpu per request by service|watched hops|memory by service)' '$T/plain.out'"

# --- comm: the server found by its command name once it answers, as in a pod ---
cname=hbc$$ # a name of this test's own (15 bytes at most), not another test's hopbench
cp "$HOPBENCH" "$T/$cname"
expect_rc "comm: no process of that name: exit 1" 1 comm_none run echo "tcp://127.0.0.1:$porta" \
    -d 0.1 --warmup 0 --service "srv=comm:$cname" --json "$T/comm_none.json" &&
    one_line "comm: one line naming the service and the name" "$T/comm_none.err" \
        "--service srv: no process is named '$cname'"
free_port
cport=$PORT
# the server starts after the run: --wait-ready waits for its port, then its name is found
(
    sleep 0.5
    exec "$T/$cname" serve echo --listen "tcp://127.0.0.1:$cport"
) >"$T/comm_srv.out" 2>&1 &
pcomm=$!
hb comm run echo "tcp://127.0.0.1:$cport" -d 0.3 --warmup 0 --wait-ready 10 \
    --service "srv=comm:$cname" --json "$T/comm.json"
exit0 "comm: the run waits for the server, then finds it by its name" comm
check "comm: the service is the server's tree, named by its pid and comm, with its CPU" \
    jtrue --arg src "tree of pid $pcomm, comm $cname" \
    '.runs[0].observed.services[0] | .name == "srv" and .kind == "tree" and .source == $src
     and .cpu_ns > 0 and .processes >= 1 and .pss_end > 0' "$T/comm.json"
stop_pid "$pcomm"

stop_pid "$pc"
stop_pid "$pb"
stop_pid "$pa"
done_testing
