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
check "table: TIME_WAIT peak shown for tcp" grep -Eq "^$tcp .* [0-9,]+ / 0\$" "$out"
check "table: unix TIME_WAIT n/a with reason" grep -Eq "^unix:.*n/a \(AF_UNIX" "$out"

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
hb rst run echo "tcp://127.0.0.1:$SRV_PORT" --mode connect -n 1000 --warmup 0 --close rst \
    --json "$j"
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
    '.runs[0].observed.cpu.server_ns.unavailable | test("No such process|exited")'

# --- --server-tree counts the children ---
bash -c 'sleep 20 & sleep 20 & wait' &
tree=$!
PIDS+=("$tree")
sleep 0.3
j=$T/tree.json
hb tree run echo "$tcp" -d 0.3 --warmup 0 --server-pid "$tree" --server-tree --json "$j"
rcheck "--server-tree: the pid and its 2 children" "$j" '.runs[0].observed.memory.server_pids == 3'
kill "$tree" 2>/dev/null; pkill -P "$tree" 2>/dev/null

# --- --server-cgroup reads a cgroup directory (a fixture: it does not move) ---
fx=$PWD/tests/fixtures/cgroup-v2/app
j=$T/cg.json
hb cg run echo "$tcp" -d 0.3 --warmup 0 --server-cgroup "$fx" --json "$j"
rcheck "--server-cgroup: usage delta and working set read" "$j" \
    '.runs[0].observed | .cpu.cgroup_ns == 0 and (.memory.cgroup_working_set_start | type) == "number"'
j=$T/cg_missing.json
hb cgm run echo "$tcp" -d 0.3 --warmup 0 --server-cgroup "$T/no-such-cgroup" --json "$j"
rcheck "--server-cgroup missing: unavailable with a reason" "$j" \
    '.runs[0].observed.cpu.cgroup_ns.unavailable | length > 0'

# --- the lab's table gains CPU, phases and TIME_WAIT ---
lab=$T/lab
mkdir -p "$lab"
(cd "$lab" && TMPDIR=$T timeout 60 "$HOPBENCH" lab --quick --sizes 64 --json "$lab/l.json" \
    >"$lab/out" 2>"$lab/err")
check "lab: CPU columns" grep -q "client   server     both   system" "$lab/out"
check "lab: phase table" grep -q "TIME_WAIT added client / server" "$lab/out"
rcheck "lab: server CPU of the child measured for every cell" "$lab/l.json" \
    '[.runs[].observed.cpu.server_ns_per_op > 0] | all'
stop_pid "$c_pid"
done_testing
