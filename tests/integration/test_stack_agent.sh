#!/bin/bash
# stack redis --agent: each run child of the stack asks a hopbench agent (on this host,
# beside the services) for the server side, naming the stack's services by their cgroups:
# every run line of --jsonl has agent.services with redis's CPU > 0 and the agent's ops
# equal to the run's. The stack's printed table has, per measurement, each service's
# "agent CPU µs/req" and "agent/local CPU" rows, and its --html report an agent's table
# per measurement: each figure the median of the same runs in --jsonl (parsed from both:
# stack_agent_check.py, which finds the columns by the header row's names: a column added
# before them still checks). Without --agent neither the table nor the report has them. A
# wrong token is exit 3 before anything is measured; an --agent-token-file without
# --agent is exit 64, and so is --agent with --netns. stack nginx-fpm --overload --agent:
# each transport's report has its run's agent rows, the figures of --jsonl. The same stack with its agent in a
# network namespace the test makes (a veth pair away, when the test may make one): every run
# has the agent's figures and the table shows them. Nothing of the stack, the namespace or
# the veth pair is left.
# shellcheck disable=SC2016 # jq programs in single quotes
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/stack_lib.sh
. "$(dirname "$0")/stack_lib.sh"

need redis-server redis-cli nginx php-fpm8.2 python3 ip nsenter

CHECK="python3 $(cd "$(dirname "$0")" && pwd)/stack_agent_check.py"

# jq_true FILE PROGRAM : jq -e -s PROGRAM over FILE's lines is true (nothing printed).
jq_true() { jq -e -s "$2" "$1" >/dev/null; }

TOKEN=$T/token
printf 'a-token-for-this-test-%s\n' "$$$RANDOM" >"$TOKEN"
chmod 600 "$TOKEN"
printf 'the-wrong-token-%s\n' "$RANDOM$RANDOM" >"$T/wrong"
chmod 600 "$T/wrong"

spawn agent agent --listen 127.0.0.1:0 --token-file "$TOKEN"
AGENT=$SPAWNED
wait_line "$T/agent.out" '^hopbench agent: listening on' 10 "$AGENT"
APORT=$(sed -n 's|^hopbench agent: listening on tcp://.*:\([0-9]*\)$|\1|p' "$T/agent.out")
check "the agent listens (port ${APORT:-none})" test -n "$APORT"

expect_rc "stack --agent-token-file without --agent: exit 64" 64 lone \
    stack redis --short --agent-token-file "$TOKEN"
one_line "its one line" "$T/lone.err" 'needs --agent'
expect_rc "stack --agent with --netns: exit 64" 64 agentns \
    stack redis --short --netns same --agent "tcp://127.0.0.1:1" --agent-token-file "$TOKEN"
one_line "its one line" "$T/agentns.err" '--agent and --netns'

expect_rc "stack redis --short --agent: exit 0" 0 good \
    stack redis --short -q --agent "tcp://127.0.0.1:$APORT" --agent-token-file "$TOKEN" \
    --jsonl "$T/good.jsonl" --html "$T/good.html"
stack_nothing_left "good" "$T/good.out"
# shellcheck disable=SC2086 # CHECK is a command and its script
tap_from $CHECK table "$T/good.out" "$T/good.jsonl"
# The table's check reads the columns by the header row's names: the same table with a column
# added before the transports' (header "extra", each row "-") still checks, not shifted.
awk '/^[^ ].*\(95 % interval/ { b = 1; print substr($0, 1, 32) " " sprintf("%11s", "extra") substr($0, 33); next }
     b && /^  / { print substr($0, 1, 32) " " sprintf("%11s", "-") substr($0, 33); next }
     { b = 0; print }' "$T/good.out" >"$T/wider.out"
check "a column added to the table: its check reads the columns by name" \
    bash -c "grep -q '^[^ ].*  extra  *tcp  *unix  unix/tcp' '$T/wider.out' &&
             $CHECK table '$T/wider.out' '$T/good.jsonl' >'$T/wider.check'"
# shellcheck disable=SC2086
tap_from $CHECK html "$T/good.html" "$T/good.jsonl"
check "every run line of --jsonl has the agent's redis CPU > 0 and the run's ops" \
    jq_true "$T/good.jsonl" '[.[] | select(.record == "run")] | length > 0 and all(.[];
        .agent.ops == .ops and .ops > 0 and (.agent.services | length) > 0
        and (.agent.services[] | select(.name == "redis") | .cpu_ns > 0)
        and (.agent.services[0].source | startswith("cgroup ")))'

expect_rc "stack redis --short without --agent: exit 0" 0 plain \
    stack redis --short -q --html "$T/plain.html"
stack_nothing_left "plain" "$T/plain.out"
check "without --agent the table has its CPU rows and no agent row" \
    bash -c "grep -q '^  CPU µs/req redis ' '$T/plain.out' && ! grep -qi agent '$T/plain.out'"
check "without --agent the report has no agent's table" \
    bash -c "grep -q '<section class=\"file\"' '$T/plain.html' && ! grep -q 'class=\"agent\"' '$T/plain.html'"

# The fpm failure cases report each transport's one run on its own (it fails by design, so it
# is no table's): with --agent each report has the agent's rows of its run, the same names
# and figures as the table's (nginx and php-fpm, per transport, from --jsonl).
expect_rc "stack nginx-fpm --overload --short --agent: exit 0" 0 ovl \
    stack nginx-fpm --overload --short -q --agent "tcp://127.0.0.1:$APORT" \
    --agent-token-file "$TOKEN" --jsonl "$T/ovl.jsonl"
stack_nothing_left "ovl" "$T/ovl.out"
check_eq "each transport's report has its run's agent rows" "ok" "$(python3 - "$T/ovl.out" \
    "$T/ovl.jsonl" <<'PY'
import json, re, sys
out = open(sys.argv[1]).read()
parts = dict(re.findall(r"^(tcp|unix):\n((?:  .*\n)+)", out, re.M))
runs = [r for r in map(json.loads, open(sys.argv[2])) if r.get("record") == "run"]
seen, bad = set(), []
for r in runs:
    t = r["label"].rsplit(".", 1)[1]
    seen.add(t)
    for s in r["agent"]["services"]:
        v = s.get("cpu_ns_per_op")
        fig = "%.2f" % (v / 1e3) if isinstance(v, (int, float)) else "n/a"
        row = "  %-30s %11s" % ("agent CPU µs/req " + s["name"], fig)
        if row not in parts.get(t, ""):
            bad.append("%s: %s" % (t, row.strip()))
print("ok" if seen == {"tcp", "unix"} and not bad else "runs %s; missing %s" % (sorted(seen), bad))
PY
)"

expect_rc "stack redis --agent with a wrong token: exit 3" 3 wrong \
    stack redis --short -q --agent "tcp://127.0.0.1:$APORT" --agent-token-file "$T/wrong"
stack_nothing_left "wrong" "$T/wrong.out"
check "the agent logs the wrong token with its peer" \
    grep -Eq '^hopbench agent: refused a wrong token from 127\.0\.0\.1:[0-9]+$' "$T/agent.err"

stop_pid "$AGENT"

# Beyond loopback: the agent in a network namespace this test makes, joined to the host's
# by a veth pair, reached at its veth address; it reads the stack's cgroups (one cgroup tree
# for every network namespace). Skipped without the right to make a namespace.
NS=hb-stagent-$$
IF_H=hbsh$$
IF_N=hbsn$$
ADDR_H=10.251.9.1
ADDR_N=10.251.9.2
netns_trap "$NS" "$IF_H"
if ! ip netns add "$NS" 2>/dev/null; then
    echo "ok stack --agent in another namespace # SKIP no right to make a network namespace"
    done_testing
fi
ip link add "$IF_H" type veth peer name "$IF_N" && ip link set "$IF_N" netns "$NS" &&
    ip addr add "$ADDR_H/30" dev "$IF_H" && ip -n "$NS" addr add "$ADDR_N/30" dev "$IF_N" &&
    ip link set "$IF_H" up && ip -n "$NS" link set lo up && ip -n "$NS" link set "$IF_N" up || {
    not_ok "setup: namespace $NS joined by a veth pair" "ip failed"
    done_testing
}
# nsenter enters the network namespace alone: `ip netns exec` mounts a sysfs of its own
# over /sys, which hides the cgroup v1 hierarchies mounted under /sys/fs/cgroup
spawn_cmd nsagent nsenter --net="/run/netns/$NS" "$HOPBENCH" agent --listen "$ADDR_N:0" \
    --token-file "$TOKEN"
NSAGENT=$SPAWNED
wait_line "$T/nsagent.out" '^hopbench agent: listening on' 10 "$NSAGENT"
NPORT=$(sed -n 's|^hopbench agent: listening on tcp://.*:\([0-9]*\)$|\1|p' "$T/nsagent.out")
check "the agent in $NS listens on $ADDR_N (port ${NPORT:-none})" test -n "$NPORT"
expect_rc "stack redis --short --agent tcp://$ADDR_N: exit 0" 0 nsgood \
    stack redis --short -q --agent "tcp://$ADDR_N:$NPORT" --agent-token-file "$TOKEN" \
    --jsonl "$T/nsgood.jsonl"
stack_nothing_left "nsgood" "$T/nsgood.out"
check "every run line has the agent at $ADDR_N, its redis CPU > 0 and the run's ops" \
    jq_true "$T/nsgood.jsonl" '[.[] | select(.record == "run")] | length > 0 and all(.[];
        .agent.endpoint == "tcp://'"$ADDR_N:$NPORT"'" and .agent.ops == .ops and .ops > 0
        and (.agent.services[] | select(.name == "redis") | .cpu_ns > 0))'
# shellcheck disable=SC2086
tap_from $CHECK table "$T/nsgood.out" "$T/nsgood.jsonl"
stop_pid "$NSAGENT"
ip netns del "$NS"
check "no namespace or veth end of the test is left (the kernel removes the veth after the call)" \
    eventually 5 bash -c "! ip netns list | grep -q '^$NS\b' && ! ip link show $IF_H 2>/dev/null"
done_testing
