#!/bin/bash
# stack redis --agent: each run child of the stack asks a hopbench agent (on this host,
# beside the services) for the server side, naming the stack's services by their cgroups:
# every run line of --jsonl has agent.services with redis's CPU > 0 and the agent's ops
# equal to the run's. A wrong token is exit 3 before anything is measured; an
# --agent-token-file without --agent is exit 64, and so is --agent with --netns.
# Nothing of the stack is left.
# shellcheck disable=SC2016 # jq programs in single quotes
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/stack_lib.sh
. "$(dirname "$0")/stack_lib.sh"

need_tools redis-server redis-cli

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
    --jsonl "$T/good.jsonl"
stack_nothing_left "good" "$T/good.out"
check "every run line of --jsonl has the agent's redis CPU > 0 and the run's ops" \
    jq_true "$T/good.jsonl" '[.[] | select(.record == "run")] | length > 0 and all(.[];
        .agent.ops == .ops and .ops > 0 and (.agent.services | length) > 0
        and (.agent.services[] | select(.name == "redis") | .cpu_ns > 0)
        and (.agent.services[0].source | startswith("cgroup ")))'

expect_rc "stack redis --agent with a wrong token: exit 3" 3 wrong \
    stack redis --short -q --agent "tcp://127.0.0.1:$APORT" --agent-token-file "$T/wrong"
stack_nothing_left "wrong" "$T/wrong.out"
check "the agent logs the wrong token" grep -q '^hopbench agent: refused a wrong token$' "$T/agent.err"

stop_pid "$AGENT"
done_testing
