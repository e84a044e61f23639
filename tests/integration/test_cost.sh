#!/bin/bash
# Where the cost goes: server CPU and memory, connection phases, TIME_WAIT by
# side, kernel counter deltas, and what happens when a figure cannot be read.
# shellcheck disable=SC2016 # $vars in single quotes are jq variables
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

cpus=$(nproc)

# --- client closes first: the client holds TIME_WAIT (TCP); unix holds none ---
sock=$T/c.sock
start_server c --listen tcp://127.0.0.1:0 --listen "unix:$sock" || done_testing
c_pid=$SRV_PID
tcp=tcp://127.0.0.1:$SRV_PORT
j=$T/client_close.json
expect_rc "run connect --close client: exit 0" 0 cc \
    run echo "$tcp" "unix:$sock" --mode connect -n 2000 --warmup 0 --server-pid "$c_pid" \
    --sample-ms 50 --json "$j"
rcheck "tcp: client holds TIME_WAIT, server none" "$j" \
    '.runs[0].observed.sockets | .time_wait_client.end >= 1900 and .time_wait_server.end == 0'
rcheck "tcp: sampled TIME_WAIT peak >= end" "$j" \
    '.runs[0].observed.sockets | .time_wait_client.peak >= .time_wait_client.end and .samples >= 2'
rcheck "tcp: ΔActiveOpens matches connects within 1 %" "$j" \
    '.runs[0] | .connects == 2000 and
     ((.observed.net_delta["Tcp.ActiveOpens"] - .connects) | fabs) <= 0.01 * .connects'
rcheck "tcp: ΔTcpExt.TW counts the client's TIME_WAITs" "$j" \
    '.runs[0] | .observed.net_delta["TcpExt.TW"] >= 0.99 * .connects'
rcheck "unix: no TIME_WAIT state, said why" "$j" \
    '.runs[1].observed.sockets.time_wait_client.peak.unavailable | test("AF_UNIX")'
rcheck "unix: no TCP TIME_WAIT created (ΔTW <= 1 % of connects)" "$j" \
    '.runs[1] | .observed.net_delta["TcpExt.TW"] <= 0.01 * .connects + 2'
rcheck "cpu per op positive for client and server" "$j" \
    '[.runs[].observed.cpu | .client_ns_per_op > 0 and .server_ns_per_op > 0] | all'
rcheck "client + server CPU <= window x cores" "$j" \
    '[.runs[] | .client_cpu_ns + .observed.cpu.server_ns
       <= (.window_s + 0.05) * 1e9 * '"$cpus"'] | all'
rcheck "system-wide CPU measured" "$j" '[.runs[].observed.cpu.system_busy_ns > 0] | all'
rcheck "server memory (PSS) read at start and end" "$j" \
    '[.runs[].observed.memory | .server_pids == 1 and .server_pss_start > 0
      and .server_pss_end > 0] | all'
rcheck "connect phases measured: connect, ttfb, response, close" "$j" \
    '[.runs[].phases | (.connect.histogram.total == 2000) and (.ttfb.histogram.total == 2000)
      and (.response.histogram.total == 2000) and (.close.histogram.total == 2000)] | all'
rcheck "phases fit inside the op: connect p50 + response p50 <= op p99" "$j" \
    '[.runs[] | .phases.connect.latency_ns.p50 + .phases.response.latency_ns.p50
       <= .latency_ns.p99 * 1.01] | all'
rcheck "no cgroup given: unavailable with a reason, never 0" "$j" \
    '.runs[0].observed.cpu.cgroup_ns.unavailable | test("cgroup")'
out=$T/cc.out
check "table: where the time goes" grep -q "where the time goes" "$out"
check "table: TIME_WAIT peak shown for tcp" \
    grep -Eq "^$tcp .* [0-9,]+ \(\+[0-9,]+\) / 0 \(\+0\)\$" "$out"
# thousands N: N with a comma every three digits, as the tables print it
thousands() { echo "$1" | sed -e ':a' -e 's/\([0-9]\)\([0-9]\{3\}\)\($\|,\)/\1,\2\3/' -e 'ta'; }
twc=$(jq '.runs[0].observed.sockets.time_wait_client | "\(.peak) \(.peak - .start)"' -r "$T/client_close.json")
check "table: the TIME_WAIT peak is the count, with what the run added" \
    grep -Fq "$(thousands "${twc% *}") (+$(thousands "${twc#* }")) / 0 (+0)" "$out"
check "table: unix TIME_WAIT n/a with reason" grep -Eq "^unix:.*n/a \(AF_UNIX" "$out"

# --- the kernel evidence in the text: sockets, memory, counters; the sysctls ---
check "text: the sysctls that shape the result" \
    grep -Eq "^sysctl: tcp_tw_reuse [0-9]+, ip_local_port_range [0-9]+ [0-9]+, somaxconn " "$out"
rcheck "evidence: every unreadable sysctl has a reason" "$j" \
    '.machine.sysctl_unavailable as $u | ($u | type) == "object" and ([.machine.sysctl
     | to_entries[] | (.value | type) == "string" or ($u[.key] | type) == "string"] | all)'
check "text: kernel evidence block" grep -q "^kernel evidence (sockets: " "$out"
check "text: tcp sockets: established, accept queue, TIME_WAIT as in the table, ports and share" \
    grep -Eq "^  $tcp connect 64 B +sockets: established [0-9,]+, accept queue [0-9,]+ of [0-9,]+, TIME_WAIT client / server $(thousands "${twc% *}") \(\+$(thousands "${twc#* }")\) / 0 \(\+0\), ports held [0-9,]+ \([0-9.]+ % of [0-9]+-[0-9]+\)\$" "$out"
check "text: unix sockets: established and accept queue" \
    grep -Eq "^  unix:$sock connect 64 B +sockets: established [0-9,]+, accept queue [0-9,]+ of [0-9,]+\$" "$out"
check "text: server memory, PSS start -> end, working set n/a and why" \
    grep -Eq "^ +memory: server PSS [0-9.]+ [KMG]iB -> [0-9.]+ [KMG]iB, working set n/a \(no --server-cgroup given\)\$" "$out"
ao=$(jq '.runs[0].observed.net_delta["Tcp.ActiveOpens"]' "$j")
check "text: the counters that moved, as in the evidence" \
    grep -Eq "^ +counters: .*ActiveOpens \+$(thousands "$ao")(,|\$)" "$out"

# --- with the default warm-up, ΔActiveOpens still matches connects within 1 % ---
# The load threads' window must begin only once the counters were read, however late
# load_run's thread wakes at the end of the warm-up; the slow readings (a sock_diag dump
# of ~14,000 TIME_WAIT sockets, PSS) come after, while the load runs. Run in a private
# network namespace, so no other TCP traffic is in the counters; first fill it with
# TIME_WAIT sockets, as earlier lab cells do; two client threads, so one always runs on
# while the other CPU is busy in a dump. Three runs, each must match. Each measures a
# count of connects, not a time: a slow binary (TSan) on a busy box makes as many, only
# more slowly, and any connect counted before the counters were read is a mismatch.
cat >"$T/ns.sh" <<'NS'
set -u
hb=$1 d=$2
ip link set lo up || exit 3
"$hb" serve echo --listen tcp://127.0.0.1:0 >"$d/nssrv.out" 2>&1 &
srv=$!
trap 'kill $srv 2>/dev/null; wait $srv' EXIT
for ((i = 0; i < 100; i++)); do
    grep -q '^hopbench: listening' "$d/nssrv.out" && break
    sleep 0.05
done
port=$(sed -n 's|^hopbench: listening on tcp://.*:\([0-9][0-9]*\)$|\1|p' "$d/nssrv.out")
"$hb" run echo "tcp://127.0.0.1:$port" --mode connect -n 14000 --warmup 0 --sample-ms 0 \
    --json "$d/nsfill.json" >"$d/nsfill.out" 2>&1 || exit 4
for k in 1 2 3; do
    "$hb" run echo "tcp://127.0.0.1:$port" --mode connect -c 2 -t 2 -n 3000 --server-pid "$srv" \
        --json "$d/warm$k.json" >"$d/warm$k.out" 2>&1 || exit 5
done
NS
ns=
if unshare -n true 2>/dev/null; then
    ns=(unshare -n)
elif unshare -rn true 2>/dev/null; then
    ns=(unshare -rn)
fi
if [ -n "${ns[*]}" ]; then
    RC=0
    timeout -k 5 60 "${ns[@]}" bash "$T/ns.sh" "$HOPBENCH" "$T" >"$T/ns.out" 2>&1 || RC=$?
    check_eq "private netns: three runs with the default warm-up" 0 "$RC"
    for k in 1 2 3; do
        rcheck "default warm-up, run $k: ΔActiveOpens matches connects within 1 %" \
            "$T/warm$k.json" \
            '.runs[0] | .warmup_s == 1 and .connects == 3000 and
             ((.observed.net_delta["Tcp.ActiveOpens"] - .connects) | fabs) <= 0.01 * .connects'
    done
else
    ok "default warm-up: ΔActiveOpens matches connects # SKIP no private network namespace"
fi

# --- server closes first (serve --close-after SIZE, run --close server) ---
start_server s --listen tcp://127.0.0.1:0 --close-after 64 || done_testing
s_pid=$SRV_PID
j=$T/server_close.json
expect_rc "run connect --close server: exit 0" 0 sc \
    run echo "tcp://127.0.0.1:$SRV_PORT" --mode connect -n 1000 --warmup 0 --close server \
    --server-pid "$s_pid" --json "$j"
rcheck "tcp: server holds TIME_WAIT, client none" "$j" \
    '.runs[0].observed.sockets | .time_wait_server.end >= 950 and .time_wait_client.end == 0'
rcheck "close recorded as server" "$j" '.runs[0].close == "server"'
stop_pid "$s_pid"

# --- RST: nobody holds TIME_WAIT ---
start_server r --listen tcp://127.0.0.1:0 || done_testing
r_pid=$SRV_PID
j=$T/rst.json
hb rst run echo "tcp://127.0.0.1:$SRV_PORT" --mode connect -n 1000 --warmup 0 --close rst --no-server-lookup \
    --json "$j"
rcheck "no server given: server_source none, server CPU unavailable" "$j" \
    '.runs[0].observed.cpu | .server_source == "none" and (.server_ns.unavailable | length > 0)'
check "text: no --server-pid: n/a and why" \
    grep -Fxq "  n/a (no --server-pid or --server-cgroup given): server cpu/op" "$T/rst.out"
rcheck "rst: no TIME_WAIT on either side" "$j" \
    '.runs[0].observed.sockets | .time_wait_server.end == 0 and .time_wait_client.end == 0'
rcheck "rst: the kernel counted the aborts (TCPAbortOnData or OutRsts)" "$j" \
    '.runs[0].observed.net_delta | .["TcpExt.TCPAbortOnData"] + .["Tcp.OutRsts"] >= 1000'
stop_pid "$r_pid"

# --- a server pid that exits mid-run is reported, not crashed on ---
sleep 0.5 &
short=$!
PIDS+=("$short")
j=$T/gone.json
expect_rc "server pid exiting mid-run: exit 0" 0 gone \
    run echo "$tcp" -d 1 --warmup 0 --server-pid "$short" --json "$j"
rcheck "server CPU unavailable with the reason" "$j" \
    '.runs[0].observed.cpu.server_ns.unavailable | test("pid [0-9]+ exited during the run")'
check "text: n/a with its reason, next to the table" \
    grep -Fxq "  n/a (pid $short exited during the run): server cpu/op" "$T/gone.out"
check "text: reuse mode has no close phase, said why" \
    grep -Fxq "  n/a (reuse mode keeps its connections): close p50" "$T/gone.out"

# --- a server killed mid-run whose parent does not reap it: a zombie, still no CPU figure ---
# (its CPU clock still reads; only its state, Z, says it is gone)
spawn_cmd zp sh -c '"$0" serve echo --listen tcp://127.0.0.1:0 & exec sleep 8' "$HOPBENCH"
zparent=$SPAWNED
zpid=
for ((i = 0; i < 100; i++)); do
    grep -q '^hopbench: listening on ' "$T/zp.out" 2>/dev/null && break
    sleep 0.05
done
zpid=$(sed -n 's/^hopbench: echo server, .* pid \([0-9][0-9]*\),.*/\1/p' "$T/zp.out")
zport=$(sed -n 's|^hopbench: listening on tcp://.*:\([0-9][0-9]*\)$|\1|p' "$T/zp.out")
if [ -n "$zpid" ] && [ -n "$zport" ]; then
    (sleep 0.8 && kill -KILL "$zpid") &
    killer=$!
    j=$T/zombie.json
    hb zombie run echo "tcp://127.0.0.1:$zport" -d 1.5 --warmup 0 --server-pid "$zpid" --json "$j"
    wait "$killer"
    check "zombie: the killed server is a zombie (State Z) after the run" \
        grep -Eq '^State:[[:space:]]+Z' "/proc/$zpid/status"
    rcheck "zombie: server CPU unavailable: pid exited during the run" "$j" \
        '.runs[0].observed.cpu.server_ns.unavailable == "pid '"$zpid"' exited during the run"'
    rcheck "zombie: no server CPU per op either" "$j" \
        '.runs[0].observed.cpu | (.server_ns_per_op | type) == "object"
         and (.client_plus_server_ns_per_op | type) == "object"'
    rcheck "zombie: end PSS unavailable with the same reason" "$j" \
        '.runs[0].observed.memory.server_pss_end.unavailable | test("exited during the run")'
    check "zombie: the table says n/a and why" \
        grep -Fxq "  n/a (pid $zpid exited during the run): server cpu/op" "$T/zombie.out"
else
    not_ok "zombie: server started" "$(head -c 300 "$T/zp.out" "$T/zp.err" | tr '\n' '|')"
fi
stop_pid "$zparent"

# --- a --server-pid that is a zombie already, or gone, is a usage error ---
spawn_cmd zp2 sh -c 'sleep 0 & exec sleep 8' # sleep 8 never reaps the first
zp2=$SPAWNED
zkid=
for ((i = 0; i < 100; i++)); do
    zkid=$(cat /proc/"$zp2"/task/*/children 2>/dev/null | tr -d ' ')
    [ -n "$zkid" ] && grep -Eq '^State:[[:space:]]+Z' "/proc/$zkid/status" 2>/dev/null && break
    sleep 0.05
done
expect_rc "a zombie --server-pid: exit 64" 64 zstart run echo "$tcp" -d 0.2 --server-pid "$zkid"
one_line "a zombie --server-pid: one line naming it" "$T/zstart.err" \
    "--server-pid $zkid: has exited \(a zombie\)"
stop_pid "$zp2"

# --- --server-tree counts the children ---
# shellcheck disable=SC2016 # the inner shell's $(jobs -p)
spawn_cmd tree bash -c 'trap "kill \$(jobs -p) 2>/dev/null; exit 0" TERM; sleep 20 & sleep 20 & wait'
tree=$SPAWNED
sleep 0.3
j=$T/tree.json
hb tree run echo "$tcp" -d 0.3 --warmup 0 --server-pid "$tree" --server-tree --json "$j"
rcheck "--server-tree: the pid and its 2 children" "$j" '.runs[0].observed.memory.server_pids == 3'
stop_pid "$tree"

# --- --server-tree has no silent cap: a tree of 301 processes is summed whole ---
# shellcheck disable=SC2016 # the inner shell's $(jobs -p)
spawn_cmd big bash -c 'trap "kill \$(jobs -p) 2>/dev/null; exit 0" TERM
    for i in $(seq 300); do sleep 20 & done; echo ready; wait'
big=$SPAWNED
for ((i = 0; i < 100; i++)); do
    grep -q ready "$T/big.out" 2>/dev/null && break
    sleep 0.05
done
j=$T/big.json
hb big run echo "$tcp" -d 0.3 --warmup 0 --server-pid "$big" --server-tree --json "$j"
rcheck "--server-tree: all 301 processes summed (more than the old 256)" "$j" \
    '.runs[0].observed | .memory.server_pids == 301 and (.cpu.server_ns | type) == "number"'
stop_pid "$big"

# --- --server-tree counts a pool whose children come and go ---
# tests/tools/pool.pl keeps one child at a time, each burning 50 ms of CPU, so some
# 20 children are born and reaped during the run. Their CPU is counted whole: the
# live ones' CPU clocks plus what each parent reaped (cutime + cstime). In a private
# cgroup where the host allows one, that must match the cgroup's own usage.
pool=$PWD/tests/tools/pool.pl
if test_cgroup pool; then
    cg_spawn pool perl "$pool"
else
    spawn_cmd pool perl "$pool"
fi
ppid_=$SPAWNED
for ((i = 0; i < 100; i++)); do
    grep -q '^pool: pid' "$T/pool.out" 2>/dev/null && break
    sleep 0.05
done
j=$T/pool.json
extra=()
[ -n "${CG_DIR:-}" ] && extra=(--server-cgroup "$CG_DIR")
hb poolrun run echo "$tcp" -d 2 --warmup 0.5 --server-pid "$ppid_" --server-tree "${extra[@]}" \
    --json "$j"
rcheck "pool: children that exited are no reason for n/a; the tree's CPU is a number" "$j" \
    '.runs[0].observed.cpu.server_ns | type == "number"'
rcheck "pool: a busy child at all times: at least 20 % of a CPU over the window" "$j" \
    '.runs[0] | (.observed.cpu.server_ns | type) == "number"
     and .observed.cpu.server_ns >= 0.2 * .window_s * 1e9'
if [ -n "${CG_DIR:-}" ]; then
    rcheck "pool: the tree's CPU matches its cgroup's (within 3 % + 2 ticks a process)" "$j" \
        '.runs[0].observed.cpu | ((.server_ns - .cgroup_ns) | fabs) <= 0.03 * .cgroup_ns + 4e7'
else
    ok "pool: the tree's CPU matches its cgroup's # SKIP no private cgroup on this host"
fi
stop_pid "$ppid_"

# --- --server-cgroup reads a cgroup directory (a fixture: it does not move) ---
fx=$PWD/tests/fixtures/cgroup-v2/app
j=$T/cg.json
hb cg run echo "$tcp" -d 0.3 --warmup 0 --server-cgroup "$fx" --json "$j"
rcheck "--server-cgroup: usage delta and working set read" "$j" \
    '.runs[0].observed | .cpu.cgroup_ns == 0 and (.memory.cgroup_working_set_start | type) == "number"'
rcheck "--server-cgroup alone: it is the server's CPU" "$j" \
    '.runs[0].observed.cpu | .server_source == "cgroup" and .server_ns == 0
     and .server_ns_per_op == 0'
check "--server-cgroup alone: the table's server column is the cgroup's" \
    grep -Eq "^$tcp +[0-9.,]+ +0\.00 " "$T/cg.out"
check "--server-cgroup alone: the table says so" grep -q "the --server-cgroup's usage" "$T/cg.out"

# --- a real cgroup holding the server (v1: any one controller's directory gives CPU and memory) ---
if test_cgroup srv; then
    cg_spawn cgsrv "$HOPBENCH" serve echo --listen tcp://127.0.0.1:0
    cgsrv=$SPAWNED
    for ((i = 0; i < 100; i++)); do
        grep -q '^hopbench: listening' "$T/cgsrv.out" 2>/dev/null && break
        sleep 0.05
    done
    cgep=tcp://127.0.0.1:$(sed -n 's|^hopbench: listening on tcp://.*:\([0-9][0-9]*\)$|\1|p' \
        "$T/cgsrv.out")
    j=$T/cgreal.json
    hb cgreal run echo "$cgep" -d 1 --warmup 0.2 --server-cgroup "$CG_DIR" --json "$j"
    rcheck "real cgroup alone: server CPU from it, per op > 0" "$j" \
        '.runs[0].observed.cpu | .server_source == "cgroup" and .server_ns > 0
         and .server_ns == .cgroup_ns and .server_ns_per_op > 0 and .client_plus_server_ns_per_op > 0'
    rcheck "real cgroup alone: its working set at start and end" "$j" \
        '.runs[0].observed.memory | (.cgroup_working_set_start | type) == "number"
         and .cgroup_working_set_end > 0'
    check "real cgroup alone: server column is a number" \
        grep -Eq "^$cgep +[0-9.,]+ +[0-9,]+\.[0-9][0-9] " "$T/cgreal.out"
    check "real cgroup alone: the text shows its working set" \
        grep -Eq "^ +memory: server PSS n/a \(no --server-pid given\), working set [0-9.]+ [KMG]iB -> [0-9.]+ [KMG]iB\$" \
        "$T/cgreal.out"
    j=$T/cgpid.json
    hb cgpid run echo "$cgep" -d 1 --warmup 0.2 --server-cgroup "${CG_JOIN##* }" \
        --server-pid "$cgsrv" --json "$j"
    rcheck "real cgroup and pid: both read, the pid's CPU is the server's, they agree (2 %)" "$j" \
        '.runs[0].observed.cpu | .server_source == "pids" and .cgroup_ns > 0
         and ((.server_ns - .cgroup_ns) | fabs) <= 0.02 * .cgroup_ns'
    stop_pid "$cgsrv"
else
    ok "real cgroup: server CPU and working set # SKIP no private cgroup on this host"
fi
j=$T/cg_missing.json
hb cgm run echo "$tcp" -d 0.3 --warmup 0 --server-cgroup "$T/no-such-cgroup" --json "$j"
rcheck "--server-cgroup missing: unavailable with a reason" "$j" \
    '.runs[0].observed.cpu.cgroup_ns.unavailable | length > 0'

# --- the lab's table gains CPU, phases and TIME_WAIT ---
lab=$T/lab
mkdir -p "$lab"
(cd "$lab" && TMPDIR=$T timeout 60 "$HOPBENCH" lab --quick --sizes 64,128 --json "$lab/l.json" \
    >"$lab/out" 2>"$lab/err")
check "lab: CPU columns" grep -q "client   server     both   system" "$lab/out"
check "lab: phase table" grep -q "TIME_WAIT peak (+added) client / server" "$lab/out"
check "lab: says earlier cells' TIME_WAIT is in the peak" grep -q "earlier cells' included" "$lab/out"
check "lab: kernel evidence under each size's table" test "$(grep -c '^kernel evidence' "$lab/out")" -eq 2
check "lab: evidence rows per transport" \
    grep -Eq "^  connect tcp +sockets: established [0-9,]+, accept queue .*TIME_WAIT client / server [0-9,]+ " "$lab/out"
check "lab: the server's memory in the text" grep -Eq "^ +memory: server PSS [0-9.]+ [KMG]iB -> " "$lab/out"
# the 128 B cell starts with the 64 B cell's TIME_WAIT sockets: its peak counts them, (+N) not
tw2=$(jq -r '.runs[] | select(.size == 128 and .transport == "tcp" and .mode == "connect")
    | .observed.sockets.time_wait_client | "\(.start) \(.peak) \(.peak - .start)"' "$lab/l.json")
set -- $tw2
check "lab: the second cell began with the first's TIME_WAIT sockets" test "${1:-0}" -gt 0
check "lab: its peak is the whole count (earlier cells' included), then what it added" \
    grep -Fq "$(thousands "${2:-x}") (+$(thousands "${3:-x}")) / 0 (+0)" "$lab/out"
rcheck "lab: server CPU of the child measured for every cell" "$lab/l.json" \
    '[.runs[].observed.cpu.server_ns_per_op > 0] | all'
stop_pid "$c_pid"
done_testing
