#!/bin/bash
# stack memcached: hopbench builds two private memcached (TCP, Unix socket), measures them
# tcp against unix and removes them.
#   - list and --help say what it builds, measures and how long it takes, and that
#     memcached has no authentication
#   - --short --hold: the stack runs in a network namespace of its own (memcached has no
#     authentication); memcached-tcp listens on the namespace's loopback only: the host's
#     127.0.0.1 has nothing on its port; both run as the user memcache, no process of the
#     stack as root; the socket and its 0700 directory are memcache's: nobody may not list
#     the private directory nor search the socket's; memcached-tcp's and memcached-unix's own
#     cmd_set and get_hits (read in the namespace, as root) lie between the replies the runs
#     read and the requests they sent (a run at pipeline 16 ends with requests in flight),
#     with the sets before each get run; get_misses is the readiness check's one, in cmd_get
#   - Ctrl-C while held: exit 0 (the measurement was done), nothing left
# shellcheck disable=SC2016 # jq programs in single quotes
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/stack_lib.sh
. "$(dirname "$0")/stack_lib.sh"

need memcached setpriv nsenter python3

expect_rc "stack list: exit 0" 0 list stack list
check "stack list: names memcached" grep -q '^  memcached ' "$T/list.out"
expect_rc "stack memcached --help: exit 0" 0 help stack memcached --help
check "stack memcached --help: what it builds" grep -q '^Builds: ' "$T/help.out"
check "stack memcached --help: what it measures" grep -q '^Measures: ' "$T/help.out"
check "stack memcached --help: how long it takes" grep -q '^Takes: ' "$T/help.out"
check "stack memcached --help: says there is no authentication" grep -q \
    "text protocol has no authentication" "$T/help.out"

if [ "$(id -u)" != 0 ] || ! unshare -n true 2>/dev/null; then
    ok "held # SKIP not root, or no network namespace here"
    done_testing
fi

spawn held stack memcached --short --hold --jsonl "$T/held.jsonl"
HELD=$SPAWNED
if ! wait_line "$T/held.out" '^holding: ' 90 "$HELD"; then
    not_ok "held: measured and holding" "stdout: $(tail -c 600 "$T/held.out" | tr '\n' '|')" \
        "stderr: $(tail -c 300 "$T/held.err" | tr '\n' '|')"
    done_testing
fi
ok "held: measured and holding"
check "held: in a network namespace of its own, as memcached has no authentication" grep -q \
    "^netns: same: .*no other local user reaches its memcached port (memcached's text protocol has no authentication)" \
    "$T/held.out"
LINE=$(grep '^hopbench stack memcached: memcached-tcp pid ' "$T/held.out")
TCP_PID=$(sed -n 's/.*memcached-tcp pid \([0-9]*\) .*/\1/p' <<<"$LINE")
PORT=$(sed -n 's|.* on tcp://127.0.0.1:\([0-9]*\), .*|\1|p' <<<"$LINE")
SOCK=$(sed -n 's|.* on unix:\(/.*\.sock\)$|\1|p' <<<"$LINE")
check_eq "held: both run as memcache" "memcache memcache" \
    "$(ps -o user= -p "$TCP_PID" -p "$(sed -n 's/.*memcached-unix pid \([0-9]*\) .*/\1/p' <<<"$LINE")" | tr '\n' ' ' | sed 's/ $//')"
check_eq "held: no process of the stack runs as root" "" \
    "$(stack_root_procs "$T/held.out" "" | tr '\n' '|')"
check_eq "held: the host's loopback has nothing on memcached-tcp's port" "" \
    "$(ss -Hltn "( sport = :$PORT )" 2>/dev/null)"
check_eq "held: the socket's directory is memcache's, 0700" "700 memcache" \
    "$(stat -c '%a %U' "$(dirname "$SOCK")")"
private_refused held "$(dirname "$(dirname "$SOCK")")"
check "held: nobody may not search the socket's directory" sh -c \
    "! setpriv --reuid=nobody --regid=nogroup --clear-groups -- ls '$(dirname "$SOCK")' >/dev/null 2>&1"

# mstat HOW STAT : memcached's own counter, over TCP in the stack's namespace or its socket.
mstat() {
    local out
    if [ "$1" = tcp ]; then
        out=$(nsenter -t "$TCP_PID" -n bash -c \
            "exec 3<>/dev/tcp/127.0.0.1/$PORT && printf 'stats\r\nquit\r\n' >&3 && timeout 5 cat <&3")
    else
        out=$(printf 'stats\r\nquit\r\n' | timeout 5 python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.sendall(sys.stdin.buffer.read())
while True:
    b = s.recv(65536)
    if not b: break
    sys.stdout.buffer.write(b)' "$SOCK")
    fi
    printf '%s\n' "$out" | tr -d '\r' | sed -n "s/^STAT $2 //p"
}
# sent CMD ARM FIELD : the sum over the runs of --command CMD at the arm's endpoint of FIELD
# (a path: requests, prepared, replies_by_kind.get).
sent() {
    jq -s --arg c "$1" --arg arm "$2" --arg f "$3" '[foreach .[] as $r (null;
        if $r.record == "header" then ($r.argv | index("--command")) as $i | $r.argv[$i + 1]
        else . end; if $r.record == "run" and . == $c and ($r.label | endswith("." + $arm))
        then ($r | getpath($f | split(".")) // 0) else empty end)] | add' "$T/held.jsonl"
}
# within NAME LO X HI : LO <= X <= HI. A run ends with requests in flight (pipeline 16): the
# server may answer some whose replies the client no longer reads, and drop some it never
# read when the client closes: its count lies between what came back and what was sent.
within() {
    if [ "$2" -le "$3" ] && [ "$3" -le "$4" ]; then ok "$1"; else not_ok "$1" "$3 not in $2..$4"; fi
}
for arm in tcp unix; do
    prep=$(sent get "$arm" prepared)
    within "held: $arm: memcached's cmd_set lies between the set replies and the sets sent (the sets before each get run with both)" \
        "$(($(sent set "$arm" replies_by_kind.set) + prep))" "$(mstat "$arm" cmd_set)" \
        "$(($(sent set "$arm" requests) + prep))"
    hits=$(mstat "$arm" get_hits)
    within "held: $arm: memcached's get_hits lies between the get replies and the gets sent" \
        "$(sent get "$arm" replies_by_kind.get)" "$hits" "$(sent get "$arm" requests)"
    # + 1: the stack's readiness check, a get of key:0 before anything was set, its one miss
    check_eq "held: $arm: the one miss is the readiness check's" 1 "$(mstat "$arm" get_misses)"
    check_eq "held: $arm: cmd_get = get_hits + that miss" "$((hits + 1))" "$(mstat "$arm" cmd_get)"
done
kill -INT "$HELD"
reap "$HELD" 30
check_eq "held: Ctrl-C while held: exit 0" 0 "$RC"
stack_nothing_left held "$T/held.out"

done_testing
