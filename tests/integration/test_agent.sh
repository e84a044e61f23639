#!/bin/bash
# hopbench agent across two network namespaces made by this test and joined by a veth
# pair: the agent and an echo server in S, hopbench run --agent in C. The server side
# the agent sends is real: the echo server's CPU per op is positive, the sockets it
# counts on the loaded port are those ss counts in S plus the run's connections, its
# listener's backlog is the one ss shows. A wrong token is exit 3 and the agent says it
# refused it; a message longer than the agent takes is refused with too_large before
# its body is read; the schedule's configurations are applied and announced, and a run
# waits for the one it names; 20 silent peers, more than the agent serves at once, hold
# up neither a run nor the schedule. report and compare read the evidence. Nothing is left:
# namespaces, veth, processes. Exit 77 (skip) without the right to make namespaces.
# shellcheck disable=SC2016 # $vars in single quotes are jq variables
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
need ip python3 hostname

NS_S=hb-agent-s-$$
NS_C=hb-agent-c-$$
IF_S=hbas$$
IF_C=hbac$$
ADDR_S=10.251.7.1
ADDR_C=10.251.7.2

netns_trap "$NS_S $NS_C" "$IF_S"

if ! ip netns add "$NS_S" 2>/dev/null; then
    echo "ok hopbench agent across namespaces # SKIP no right to make a network namespace"
    exit 77
fi
ip netns add "$NS_C" &&
    ip link add "$IF_S" type veth peer name "$IF_C" &&
    ip link set "$IF_S" netns "$NS_S" && ip link set "$IF_C" netns "$NS_C" &&
    ip -n "$NS_S" addr add "$ADDR_S/30" dev "$IF_S" && ip -n "$NS_C" addr add "$ADDR_C/30" dev "$IF_C" &&
    ip -n "$NS_S" link set lo up && ip -n "$NS_C" link set lo up &&
    ip -n "$NS_S" link set "$IF_S" up && ip -n "$NS_C" link set "$IF_C" up || {
    not_ok "setup: two namespaces joined by a veth pair" "ip failed"
    done_testing
}
ok "setup: namespaces $NS_S and $NS_C joined by $IF_S/$IF_C"

TOKEN=$T/token
printf 'a-token-for-this-test-%s\n' "$$$RANDOM" >"$TOKEN"
chmod 600 "$TOKEN"
printf 'the-wrong-token-%s\n' "$RANDOM$RANDOM" >"$T/wrong"
chmod 600 "$T/wrong"
cat >"$T/schedule" <<EOF
# the configurations, in turn
first next touch $T/first.applied
second 600 touch $T/second.applied
EOF

# in NS CMD... : CMD in namespace NS (ip netns exec execs it: the pid stays).
in_ns() {
    local ns=$1
    shift
    ip netns exec "$ns" "$@"
}

# wait_line FILE ERE : waits (at most 10 s) for a line of FILE matching ERE.
wait_line() {
    local i
    for ((i = 0; i < 200; i++)); do
        grep -Eq -- "$2" "$1" 2>/dev/null && return 0
        sleep 0.05
    done
    return 1
}

spawn_cmd srv ip netns exec "$NS_S" "$HOPBENCH" serve echo --listen "tcp://$ADDR_S:0" --allow-remote
SRV=$SPAWNED
spawn_cmd agent ip netns exec "$NS_S" "$HOPBENCH" agent --listen "$ADDR_S:0" --token-file "$TOKEN" \
    --schedule "$T/schedule"
AGENT=$SPAWNED
if ! wait_line "$T/srv.out" '^hopbench: echo server' ||
    ! wait_line "$T/agent.out" '^hopbench agent: listening on'; then
    not_ok "server and agent listen in $NS_S" "$(cat "$T/srv.err" "$T/agent.err" | head -c 300)"
    done_testing
fi
PORT=$(sed -n 's|^hopbench: listening on tcp://.*:\([0-9]*\)$|\1|p' "$T/srv.out")
APORT=$(sed -n 's|^hopbench agent: listening on tcp://.*:\([0-9]*\)$|\1|p' "$T/agent.out")
ok "server on $ADDR_S:$PORT and agent on $ADDR_S:$APORT in $NS_S"
PEER_RE="${ADDR_C//./\\.}:[0-9]+" # a client's address as the agent's log names it
check "the agent announces the schedule's first state once its command ran" \
    wait_line "$T/agent.err" '^hopbench agent: state first \(1 of 2\)$'
check "first's command ran" test -e "$T/first.applied"

# Two connections held open from C, beside the run's own.
spawn_cmd hold ip netns exec "$NS_C" bash -c \
    "exec 3<>/dev/tcp/$ADDR_S/$PORT 4<>/dev/tcp/$ADDR_S/$PORT; exec sleep 60"
held_ss() { in_ns "$NS_S" ss -Htn state established "( sport = :$PORT )" | wc -l; }
for ((i = 0; i < 100; i++)); do
    [ "$(held_ss)" = 2 ] && break
    sleep 0.05
done
SS_EST=$(held_ss)
check_eq "ss in $NS_S counts the 2 held connections" 2 "$SS_EST"
SS_BACKLOG=$(in_ns "$NS_S" ss -Hltn "( sport = :$PORT )" | awk '{print $3}')

# hbc OUT ARGS... : hopbench ARGS... in C, bounded, as hb does.
hbc() {
    local out=$1
    shift
    RC=0
    (cd "$T" && exec timeout -k 5 60 ip netns exec "$NS_C" "$HOPBENCH" "$@") \
        >"$T/$out.out" 2>"$T/$out.err" || RC=$?
}

CONNS=3
hbc good run echo "tcp://$ADDR_S:$PORT" --allow-remote -c "$CONNS" -d 1 --warmup 0.3 -q --reps 2 \
    --agent "tcp://$ADDR_S:$APORT" --agent-token-file "$TOKEN" --agent-service "echo=pid:$SRV" \
    --json "$T/good.json"
check_eq "run --agent from $NS_C: exit 0" 0 "$RC"
A='.runs[0].agent'
jcheck "the evidence names the agent's endpoint and host" "$T/good.json" \
    "$A.endpoint == \"tcp://$ADDR_S:$APORT\" and $A.host == \"$(hostname)\" and $A.machine.hostname == $A.host"
jcheck "the server's CPU per op, from the agent, is positive and its ops are the run's" \
    "$T/good.json" "$A.services[0].name == \"echo\" and $A.services[0].source == \"pid $SRV\"
    and $A.services[0].cpu_ns_per_op > 0 and $A.ops == .runs[0].ops and .runs[0].ops > 0
    and $A.services_ns_per_op == $A.services[0].cpu_ns_per_op"
jcheck "each run has the agent's evidence of its own window" "$T/good.json" \
    '[.runs[] | .agent.ops == .ops and .agent.services[0].cpu_ns_per_op > 0] == [true, true]'
check "the table says what the agent saw, a line per run" \
    test "$(grep -Ec "^agent $(hostname), state first: tcp://$ADDR_S:$PORT rep [12]: echo [0-9]+ ns/op, established peak $((SS_EST + CONNS))\$" "$T/good.out")" = 2
jcheck "the agent's established count on the port is ss's ($SS_EST) plus the run's $CONNS" \
    "$T/good.json" "$A.hops[0].established | .start == $SS_EST + $CONNS and .peak == .start
    and .end == .start"
jcheck "the agent's listen backlog is the one ss shows ($SS_BACKLOG)" "$T/good.json" \
    "$A.hops[0].listen_backlog == ${SS_BACKLOG:-null}"
jcheck "the run records the state announced at its start and end" "$T/good.json" \
    "$A.state_at_begin == \"first\" and $A.state_at_end == \"first\" and $A.state_index == 0"
jcheck "the window the agent saw is about the run's" "$T/good.json" \
    "$A.window_s >= .runs[0].window_s * 0.9 and $A.window_s < .runs[0].window_s + 2"
jcheck "the client's own view from C sees none of the server's sockets" "$T/good.json" \
    '.runs[0].observed.sockets.established.peak == 0'
hb report report "$T/good.json" -o "$T/good.html"
check_eq "report reads the evidence" 0 "$RC"
# A figure one run lacks: the agent's table takes the median of the run that has it, as the
# stack's table does, and says of how many runs it is.
jq '.runs[1].agent.services[0].cpu_ns_per_op = null' "$T/good.json" >"$T/part.json"
hb part report "$T/part.json" -o "$T/part.html"
check_eq "report of runs one lacks the agent's figure: exit 0" 0 "$RC"
check "report: the agent's CPU is the median of the run that has it, 1 of 2 runs" \
    grep -q '<td>echo</td><td class="num">[0-9.,]* (1 of 2 runs)</td>' "$T/part.html"
check "report: every run has the agent's CPU, no count after it" \
    bash -c "grep -q '<td>echo</td><td class=\"num\">[0-9.,]*</td>' '$T/good.html' &&
             ! grep -q ' of 2 runs)' '$T/good.html'"
hb compare compare "$T/good.json" "$T/good.json"
check_eq "compare reads the evidence" 0 "$RC"

# A wrong token: exit 3, one line; the agent says it refused it.
hbc wrong run echo "tcp://$ADDR_S:$PORT" --allow-remote -d 0.2 --warmup 0 -q \
    --agent "tcp://$ADDR_S:$APORT" --agent-token-file "$T/wrong" --json "$T/wrong.json"
check_eq "a wrong token: exit 3" 3 "$RC"
one_line "a wrong token: one line" "$T/wrong.err" 'refused \(auth\): token refused'
check "a wrong token: no evidence written" test ! -e "$T/wrong.json"
check "the agent logs the wrong token with its peer" \
    wait_line "$T/agent.err" "^hopbench agent: refused a wrong token from $PEER_RE\$"
HOPBENCH_AGENT_TOKEN=short hbc short run echo "tcp://$ADDR_S:$PORT" --allow-remote -d 0.2 \
    --agent "tcp://$ADDR_S:$APORT"
check_eq "a token too short: exit 64" 64 "$RC"

# An oversized message: a length of 1 MiB; the agent answers too_large and closes.
in_ns "$NS_C" timeout 10 bash -c "exec 3<>/dev/tcp/$ADDR_S/$APORT
    printf '\\000\\020\\000\\000' >&3
    cat <&3" >"$T/big.out" 2>&1
check "an oversized message is refused with too_large" grep -aq '"code":"too_large"' "$T/big.out"
check "the agent logs the oversized message" \
    wait_line "$T/agent.err" "^hopbench agent: refused an oversized message from $PEER_RE\$"
check "the agent still runs" alive "$AGENT"

# The schedule: a run that waits for "second" starts once SIGUSR1 moves the agent on.
spawn_cmd waiting timeout -k 5 60 ip netns exec "$NS_C" "$HOPBENCH" run echo \
    "tcp://$ADDR_S:$PORT" --allow-remote -d 0.3 --warmup 0 -q --agent "tcp://$ADDR_S:$APORT" \
    --agent-token-file "$TOKEN" --agent-state second --agent-wait 30 --json "$T/second.json"
WAITING=$SPAWNED
sleep 1
check "a run waiting for state second has not run yet" test ! -e "$T/second.json"
kill -USR1 "$AGENT"
check "SIGUSR1 applies the next configuration and announces it" \
    wait_line "$T/agent.err" '^hopbench agent: state second \(2 of 2\)$'
reap "$WAITING" 30
check_eq "the waiting run: exit 0" 0 "$RC"
jcheck "its evidence records state second" "$T/second.json" \
    '.runs[0].agent.state_at_begin == "second" and .runs[0].agent.state_index == 1'
check "second's command ran" test -e "$T/second.applied"

# Silent peers: 20 connections from C that send nothing, each opened again as soon as the
# agent closes it, more than the 16 it serves at once. A run beside them is served, the agent
# closes the oldest silent one for each newcomer, and the schedule still moves on.
SILENT=20
spawn_cmd silent timeout 60 ip netns exec "$NS_C" python3 -c '
import socket, sys, time
addr, n = (sys.argv[1], int(sys.argv[2])), int(sys.argv[3])
cs = [socket.create_connection(addr) for _ in range(n)]
print("open", flush=True)
for _ in range(600):
    for i, c in enumerate(cs):
        try:
            if c.recv(4096, socket.MSG_DONTWAIT) == b"":
                c.close()
                cs[i] = socket.create_connection(addr)
        except BlockingIOError:
            pass
        except OSError:
            cs[i] = socket.create_connection(addr)
    time.sleep(0.1)' "$ADDR_S" "$APORT" "$SILENT"
SILENT_PID=$SPAWNED
check "$SILENT silent connections are open" wait_line "$T/silent.out" '^open$'
check "the agent closes the oldest silent connection for a new one, naming its peer" \
    wait_line "$T/agent.err" "^hopbench agent: closed the connection from $PEER_RE for a newcomer: the oldest of the 16 open without a signed request\$"
hbc beside run echo "tcp://$ADDR_S:$PORT" --allow-remote -d 0.3 --warmup 0 -q --reps 2 \
    --agent "tcp://$ADDR_S:$APORT" --agent-token-file "$TOKEN" --agent-service "echo=pid:$SRV" \
    --json "$T/beside.json"
check_eq "run --agent beside $SILENT silent peers: exit 0" 0 "$RC"
jcheck "each of its runs has the agent's evidence of its own window" "$T/beside.json" \
    '[.runs[] | .agent.ops == .ops and .ops > 0 and .agent.services[0].cpu_ns_per_op > 0] == [true, true]'
check "the silent peers were still there" alive "$SILENT_PID"
kill -USR1 "$AGENT"
check "beside them the schedule still moves on" \
    wait_line "$T/agent.err" '^hopbench agent: schedule done: no state announced$'
stop_pid "$SILENT_PID"

# One-byte peers: 16 connections that each send the first byte of a request's length and wait,
# each opened again once the agent closes it but at most 3 a second (not a flood). Peers that
# cannot authenticate must not keep out one that can: the agent gives each 1 s for its
# request's length (so they go, and are logged with their address), and a newcomer to a full
# agent closes the oldest without a signed request. A run --agent beside them is served.
spawn_cmd onebyte timeout 60 ip netns exec "$NS_C" python3 -c '
import socket, sys, time
addr, n, rate = (sys.argv[1], int(sys.argv[2])), int(sys.argv[3]), float(sys.argv[4])
def one():
    c = socket.create_connection(addr)
    c.sendall(b"\0")
    return c
cs = [one() for _ in range(n)]
print("open", flush=True)
t0, again = time.monotonic(), 0
while time.monotonic() < t0 + 60:
    for i, c in enumerate(cs):
        if c is not None:
            try:
                if c.recv(4096, socket.MSG_DONTWAIT) != b"":
                    continue
            except BlockingIOError:
                continue
            except OSError:
                pass
            c.close()
            cs[i] = None
        if again < rate * (time.monotonic() - t0):
            cs[i] = one()
            again += 1
            print("again", again, flush=True)
    time.sleep(0.02)' "$ADDR_S" "$APORT" 16 3
ONEBYTE=$SPAWNED
check "16 one-byte peers are open" wait_line "$T/onebyte.out" '^open$'
hbc onebyte-run run echo "tcp://$ADDR_S:$PORT" --allow-remote -d 0.3 --warmup 0 -q --reps 2 \
    --agent "tcp://$ADDR_S:$APORT" --agent-token-file "$TOKEN" --agent-service "echo=pid:$SRV" \
    --json "$T/onebyte.json"
check_eq "run --agent beside 16 one-byte peers opened again at 3/s: exit 0" 0 "$RC"
jcheck "each of its runs has the agent's evidence of its own window" "$T/onebyte.json" \
    '[.runs[] | .agent.ops == .ops and .ops > 0 and .agent.services[0].cpu_ns_per_op > 0] == [true, true]'
check "the agent closes a one-byte peer after 1 s, naming its address" wait_line "$T/agent.err" \
    "^hopbench agent: closed the connection from $PEER_RE: no request length within 1000 ms\$"
check "the one-byte peers were opened again, and are still there" \
    bash -c "grep -q '^again' '$T/onebyte.out' && kill -0 $ONEBYTE"
stop_pid "$ONEBYTE"
# A 17th beside 16 one-byte peers gets its hello at once: the oldest of them goes for it.
EVICT="^hopbench agent: closed the connection from $PEER_RE for a newcomer: the oldest of the 16 open without a signed request\$"
EVICTED=$(grep -Ec "$EVICT" "$T/agent.err")
in_ns "$NS_C" timeout 20 python3 -c '
import socket, struct, sys
addr = (sys.argv[1], int(sys.argv[2]))
cs = [socket.create_connection(addr) for _ in range(16)]
for c in cs:
    c.sendall(b"\0")
late = socket.create_connection(addr)
late.settimeout(5)
head = late.recv(4)
body = late.recv(struct.unpack(">I", head)[0]) if len(head) == 4 else b""
print("hello" if b"hello" in body else "none %r" % head)' "$ADDR_S" "$APORT" >"$T/late.out" 2>&1
check_eq "a newcomer beside 16 one-byte peers gets its hello" hello "$(cat "$T/late.out")"
check "the agent closed the oldest one-byte peer for it, naming its address" \
    test "$(grep -Ec "$EVICT" "$T/agent.err")" -gt "$EVICTED"

# Something that is not a hopbench agent of this protocol: exit 76, one line.
spawn_cmd fake ip netns exec "$NS_S" python3 -c '
import json, socket, struct, sys
s = socket.socket()
s.bind((sys.argv[1], 0))
s.listen(1)
print(s.getsockname()[1], flush=True)
c, _ = s.accept()
b = json.dumps({"type": "hello", "proto": 1, "nonce": "0" * 64}).encode()
c.sendall(struct.pack(">I", len(b)) + b)
c.recv(100)
c.close()' "$ADDR_S"
wait_line "$T/fake.out" '^[0-9]+$'
hbc fake run echo "tcp://$ADDR_S:$PORT" --allow-remote -d 0.2 --warmup 0 -q \
    --agent "tcp://$ADDR_S:$(cat "$T/fake.out")" --agent-token-file "$TOKEN"
check_eq "an agent of another protocol: exit 76" 76 "$RC"
one_line "an agent of another protocol: one line" "$T/fake.err" 'protocol 1, not 2$'

# A service the agent's host refuses (a pid that has exited): the run fails, naming it.
sleep 0 &
GONE=$!
wait "$GONE"
hbc badsvc run echo "tcp://$ADDR_S:$PORT" --allow-remote -d 0.2 --warmup 0 -q \
    --agent "tcp://$ADDR_S:$APORT" --agent-token-file "$TOKEN" --agent-service "x=pid:$GONE" \
    --json "$T/badsvc.json"
check_eq "a service the agent cannot find: exit 1" 1 "$RC"
one_line "its line names the refusal" "$T/badsvc.err" "refused \\(bad_service\\): --service x: pid $GONE: no such process"

# A configuration whose command fails stops the agent: exit 1, one line naming it.
printf 'broken 10 exit 3\n' >"$T/broken"
spawn_cmd broken ip netns exec "$NS_S" "$HOPBENCH" agent --listen 127.0.0.1:0 \
    --token-file "$TOKEN" --schedule "$T/broken"
reap "$SPAWNED" 10
check_eq "a configuration's command that fails: the agent exits 1" 1 "$RC"
one_line "its one line names the configuration and the exit" "$T/broken.err" \
    '^hopbench agent: schedule: broken: its command exited with status 3$'

# A stop signal while a configuration's command runs: its process group is ended, nothing
# announced, exit 0.
printf 'hung 10 echo $$ >%s; exec sleep 300\n' "$T/hung.pid" >"$T/hung"
spawn_cmd hung "$HOPBENCH" agent --listen 127.0.0.1:0 --token-file "$TOKEN" --schedule "$T/hung"
for ((i = 0; i < 200; i++)); do
    [ -s "$T/hung.pid" ] && break
    sleep 0.05
done
HUNG=$(cat "$T/hung.pid" 2>/dev/null)
check "a configuration's command runs (pid ${HUNG:-none})" kill -0 "${HUNG:-0}"
kill -TERM "$SPAWNED"
reap "$SPAWNED" 10
check_eq "SIGTERM while the command runs: the agent exits 0" 0 "$RC"
check "the command is gone with it" bash -c "! kill -0 ${HUNG:-0} 2>/dev/null"
check "no state was announced" bash -c "! grep -q 'state hung' '$T/hung.err'"

# Nothing left: stop what runs in the namespaces, remove them, look.
for pid in "${PIDS[@]}"; do stop_pid "$pid"; done
ip netns del "$NS_S"
ip netns del "$NS_C"
check "no namespace of the test is left" bash -c "! ip netns list | grep -q 'hb-agent-[sc]-$$'"
check "no veth end of the test is left" bash -c "! ip link show $IF_S 2>/dev/null && ! ip link show $IF_C 2>/dev/null"
check "no process of the test is left" bash -c "! kill -0 $SRV $AGENT 2>/dev/null"

done_testing
