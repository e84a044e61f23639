#!/bin/bash
# lab --netns: the lab in network namespaces made for it. same: server and
# client share one new namespace; other: the server in A, the client in A for
# unix and tcp and in B for tcp-veth, across a veth pair whose addresses only A
# and B have. The namespaces are gone after every exit (normal, Ctrl-C,
# SIGKILL); the host never shows the veth addresses or the lab's listeners;
# the tcp-veth bytes went over the veth (its own counters, read inside B).
# shellcheck disable=SC2016 # $vars in single quotes are jq variables
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

host_ns=$(readlink /proc/self/ns/net)

# all_ns : every network namespace a process or thread is in now, one "net:[N]" a line.
all_ns() {
    local f
    for f in /proc/[0-9]*/ns/net /proc/[0-9]*/task/[0-9]*/ns/net; do
        readlink "$f" 2>/dev/null
    done | sort -u
}

# header_field NAME SED-EXPR : what SED-EXPR prints from NAME's stdout (first match).
header_field() {
    sed -n "$2" "$T/$1.out" 2>/dev/null | head -n 1
}

# wait_header NAME : waits (at most 10 s) for the lab's netns line; 1 if it never came.
wait_header() {
    local i
    for ((i = 0; i < 200; i++)); do
        grep -q '^netns: ' "$T/$1.out" 2>/dev/null && return 0
        sleep 0.05
    done
    return 1
}

# lab_spawn NAME LAB-ARGS... : a quick 64 B lab in the background (SPAWNED: hopbench's pid).
lab_spawn() {
    local name=$1
    shift
    mkdir -p "$T/$name.tmp"
    spawn_cmd "$name" env TMPDIR="$T/$name.tmp" "$HOPBENCH" lab --quick --sizes 64 -q "$@"
}

# switches PID : the voluntary context switches of all of PID's threads (how often it slept)
switches() {
    cat /proc/"$1"/task/*/status 2>/dev/null | awk '/^voluntary_ctxt_switches/ { s += $2 } END { print s + 0 }'
}

# signal_running NAME PID SIG WHO : once NAME's netns line is out, notes its server's pid
# (spid), the server's namespace (a_ns) and hopbench's own (b_ns: where its main thread
# is), waits until the server is serving (it slept and woke 20 times more: a slow build,
# as under ThreadSanitizer, may still be starting its load a second after the line) and
# 1 s more, sends SIG to WHO (hopbench or server), then reaps hopbench (RC).
signal_running() {
    local name=$1 pid=$2 sig=$3 who=$4
    spid=
    a_ns=
    b_ns=
    if wait_header "$name"; then
        spid=$(header_field "$name" 's|.*; server pid \([0-9]*\)$|\1|p')
        a_ns=$(readlink "/proc/$spid/ns/net" 2>/dev/null)
        b_ns=$(readlink "/proc/$pid/ns/net" 2>/dev/null)
        local base i
        base=$(switches "${spid:-0}")
        for ((i = 0; i < 300; i++)); do
            [ "$(switches "${spid:-0}")" -ge $((base + 20)) ] && break
            sleep 0.1
        done
        sleep 1
        if [ "$who" = server ]; then kill "-$sig" "${spid:-0}"; else kill "-$sig" "$pid"; fi
    else
        not_ok "$name: netns header" "no 'netns:' line in $T/$name.out"
    fi
    reap "$pid" 30
}

# --- the command line ------------------------------------------------------------

expect_rc "lab --netns bogus: usage error" 64 bogus lab --netns bogus
check "lab --netns bogus: one line naming the value" \
    sh -c "[ \$(wc -l <'$T/bogus.err') = 1 ] && grep -q \"'bogus' is not one of same, other\" '$T/bogus.err'"
expect_rc "run --netns bogus: usage error" 64 runbogus run --netns bogus echo tcp://127.0.0.1:0
one_line "run --netns bogus: one line naming the value" "$T/runbogus.err" \
    "'bogus' is not one of same, other"
expect_rc "run --netns other with a unix endpoint: usage error" 64 rununix \
    run --netns other echo tcp://127.0.0.1:0 "unix:$T/other.sock"
one_line "run --netns other with a unix endpoint: one line, TCP only" "$T/rununix.err" \
    "--netns other is TCP only.*unix:$T/other.sock"
expect_rc "run --netns other with an abstract name: usage error" 64 runabs \
    run --netns other echo unix:@hopbench-netns-test
check "run --netns: nothing was made for a refused command line" test ! -e "$T/other.sock"
expect_rc "run --netns with --in-netns: usage error" 64 runboth run --netns same \
    --in-netns same echo tcp://127.0.0.1:0
one_line "run --netns with --in-netns: one line" "$T/runboth.err" "--netns or --in-netns, not both"
# --in-netns other is for a child a stack placed in B: outside one there is no hb-b.
expect_rc "run --in-netns other outside a stack's B: exit 1" 1 runadopt run --in-netns other \
    -n 10 echo tcp://127.0.0.1:1
one_line "run --in-netns other outside B: one line naming hb-b" "$T/runadopt.err" \
    "no hb-b address in this namespace"

if ! unshare -n true 2>/dev/null; then
    expect_rc "lab --netns same without the right: exit 77" 77 noperm lab --netns same --quick \
        --sizes 64 --json "$T/noperm.json"
    check "lab --netns without the right: one line" \
        sh -c "[ \$(wc -l <'$T/noperm.err') = 1 ] && grep -q 'needs root' '$T/noperm.err'"
    expect_rc "run --netns same without the right: exit 77" 77 runnoperm run --netns same -n 10 \
        echo tcp://127.0.0.1:0 --json "$T/runnoperm.json"
    one_line "run --netns without the right: one line" "$T/runnoperm.err" 'needs root'
    ok "lab and run --netns same and other # SKIP this user may not make a network namespace"
    exit "$((NFAIL > 0))"
fi

# Root without CAP_SYS_ADMIN is refused as a user would be.
if setpriv --bounding-set=-sys_admin --inh-caps=-sys_admin true 2>/dev/null; then
    RC=0
    (cd "$T" && exec setpriv --bounding-set=-sys_admin --inh-caps=-sys_admin \
        timeout -k 5 60 "$HOPBENCH" lab --netns other --quick --sizes 64 \
        --json "$T/nocap.json") >"$T/nocap.out" 2>"$T/nocap.err" || RC=$?
    check_eq "lab --netns other without CAP_SYS_ADMIN: exit 77" 77 "$RC"
    check "without CAP_SYS_ADMIN: one line saying it needs root" \
        sh -c "[ \$(wc -l <'$T/nocap.err') = 1 ] && grep -q 'needs root' '$T/nocap.err'"
    check "without CAP_SYS_ADMIN: no evidence written" test ! -e "$T/nocap.json"
    RC=0
    (cd "$T" && exec setpriv --bounding-set=-sys_admin --inh-caps=-sys_admin \
        timeout -k 5 60 "$HOPBENCH" run --netns other -n 10 echo tcp://127.0.0.1:0 \
        --json "$T/runnocap.json") >"$T/runnocap.out" 2>"$T/runnocap.err" || RC=$?
    check_eq "run --netns other without CAP_SYS_ADMIN: exit 77" 77 "$RC"
    one_line "run --netns without CAP_SYS_ADMIN: one line saying it needs root" \
        "$T/runnocap.err" 'needs root'
else
    ok "lab --netns without CAP_SYS_ADMIN # SKIP setpriv cannot drop it here"
fi

# --- same: one namespace, its own loopback -----------------------------------------

lab_spawn same --netns same --json "$T/same.json"
pid=$SPAWNED
if wait_header same; then
    port=$(header_field same 's|^hopbench .* lab: echo over tcp://127.0.0.1:\([0-9]*\) .*|\1|p')
    spid=$(header_field same 's|.*; server pid \([0-9]*\)$|\1|p')
    listeners=$(ss -Hltn "sport = :$port" 2>/dev/null | wc -l)
    server_ns=$(readlink "/proc/$spid/ns/net" 2>/dev/null)
    still=$(alive "$pid" && echo yes)
    check_eq "same: the lab ran while the host was looked at" yes "$still"
    check_eq "same: the host has no listener on the lab's port $port" 0 "$listeners"
    check "same: the server is in a namespace other than the host's ($server_ns)" \
        sh -c "[ -n '$server_ns' ] && [ '$server_ns' != '$host_ns' ]"
else
    not_ok "same: netns header" "no 'netns:' line in $T/same.out"
fi
reap "$pid" 60
check_eq "same: exit 0" 0 "$RC"
jcheck "same: tcp and unix, each connect and reuse" "$T/same.json" \
    '[.runs[] | .transport] | sort == ["tcp","tcp","unix","unix"]'
jcheck "same: 0 errors, ops in every run" "$T/same.json" \
    'all(.runs[]; .errors_total == 0 and .ops > 0)'
check "same: both ends in the one namespace, not the host's" jtrue --arg host "$host_ns" \
    'all(.runs[]; .netns.mode == "same" and .netns.client == "same" and .netns.server == "same"
         and .netns.client_ns_inode == .netns.server_ns_inode and .netns.veth == null
         and ("net:[\(.netns.client_ns_inode)]" != $host))' "$T/same.json"
# The kernel counters are the namespace's, which only the lab uses: the connect tcp run's
# ActiveOpens moved by its connects, give or take the one in flight at each window edge.
jcheck "same: the kernel counters are the namespace's (ΔActiveOpens = connects ± 2)" \
    "$T/same.json" \
    '.runs[] | select(.transport == "tcp" and .mode == "connect") |
     .connects > 0 and ((.observed.net_delta["Tcp.ActiveOpens"] - .connects) | fabs) <= 2'
same_ino=$(jq -r '.runs[0].netns.server_ns_inode' "$T/same.json" 2>/dev/null)
check "same: the namespace is gone afterwards" ns_gone "${same_ino:-0}"
check "same: private temporary directory removed" \
    sh -c "[ -z \"\$(ls -A '$T/same.tmp')\" ]"

# --- other: two namespaces joined by a veth pair --------------------------------------

ip -o -4 addr show >"$T/addrs.before"
lab_spawn other --netns other --json "$T/other.json"
pid=$SPAWNED
: >"$T/addrs.during"
: >"$T/ns.during"
if wait_header other; then
    a_addr=$(header_field other 's|^netns: other: server in namespace A (hb-a \([0-9.]*\)/.*|\1|p')
    b_addr=$(header_field other 's|.* in B (hb-b \([0-9.]*\)/.*|\1|p')
    # Look at the host while the namespaces exist: the lab is alive before and after each look.
    for ((i = 0; i < 20; i++)); do
        alive "$pid" || break
        ip -o -4 addr show >>"$T/addrs.during"
        all_ns >>"$T/ns.during"
        sleep 0.2
    done
    check "other: the header names both veth addresses" \
        sh -c "[ -n '$a_addr' ] && [ -n '$b_addr' ]"
else
    not_ok "other: netns header" "no 'netns:' line in $T/other.out"
fi
reap "$pid" 60
ip -o -4 addr show >"$T/addrs.after"
check_eq "other: exit 0" 0 "$RC"
j=$T/other.json
jcheck "other: three transports, each connect and reuse" "$j" \
    '[.runs[] | .transport] | sort == ["tcp","tcp","tcp-veth","tcp-veth","unix","unix"]'
jcheck "other: 0 errors, ops in every run" "$j" 'all(.runs[]; .errors_total == 0 and .ops > 0)'
jcheck "other: unix and tcp from A, the server's namespace" "$j" \
    'all(.runs[] | select(.transport != "tcp-veth");
         .netns.client == "A" and .netns.server == "A"
         and .netns.client_ns_inode == .netns.server_ns_inode and .netns.veth == null)'
check "other: tcp-veth from B to A's veth address, A and B distinct, neither the host's" \
    jtrue --arg host "$host_ns" 'all(.runs[] | select(.transport == "tcp-veth");
         .netns.client == "B" and .netns.server == "A"
         and .netns.client_ns_inode != .netns.server_ns_inode
         and ("net:[\(.netns.client_ns_inode)]" != $host)
         and ("net:[\(.netns.server_ns_inode)]" != $host)
         and (.netns.veth.server_addr as $a | .endpoint | startswith("tcp://\($a):"))
         and .netns.veth.prefix == 30)' "$j"
# Each op sends its 64-byte payload and gets it back: at least ops x 64 bytes each way on the
# veth end in B, counted by the kernel inside B, not by hopbench.
jcheck "other: tcp-veth bytes went over the veth (its counters in B >= ops x 64 each way)" "$j" \
    'all(.runs[] | select(.transport == "tcp-veth");
         .netns.veth.client_tx_bytes >= .ops * 64 and .netns.veth.client_rx_bytes >= .ops * 64)'
jcheck "other: placement netns other for tcp-veth only; tcp and unix, both ends in A, netns same" \
    "$j" 'all(.runs[]; .placement.key == (if .transport == "tcp-veth" then "netns other"
                                          else "netns same" end))'
ea=$(jq -r '[.runs[] | select(.transport == "tcp-veth")][0].netns.veth.server_addr' "$j" 2>/dev/null)
eb=$(jq -r '[.runs[] | select(.transport == "tcp-veth")][0].netns.veth.client_addr' "$j" 2>/dev/null)
check_eq "other: the evidence's veth addresses are the header's" "${a_addr:-} ${b_addr:-}" \
    "$ea $eb"
check "other: the namespaces were looked at while they existed" \
    jtrue -n --rawfile s "$T/ns.during" --arg i "$(jq -r '.runs[0].netns.server_ns_inode' "$j")" \
    '$s | split("\n") | index("net:[\($i)]") != null'
for when in before during after; do
    check "other: the host's addresses $when the lab have neither veth address" \
        sh -c "[ -s '$T/addrs.$when' ] && ! grep -qwF -e ' ${ea:-X}/' -e ' ${eb:-X}/' '$T/addrs.$when'"
done
inodes=$(jq -r '[.runs[].netns | .client_ns_inode, .server_ns_inode] | unique | .[]' "$j" 2>/dev/null)
# shellcheck disable=SC2086 # one inode a word
check "other: A and B are gone afterwards" ns_gone $inodes
check "other: private temporary directory removed" sh -c "[ -z \"\$(ls -A '$T/other.tmp')\" ]"

# --- the keys docs/evidence.md lists for netns, both ways ---------------------------------

DOC=$(cd "$(dirname "$0")/../.." && pwd)/docs/evidence.md

# doc_keys KEY FILE... : the ```fields-KEY block of docs/evidence.md against the keys of
# runs[].KEY that FILEs write (strings, numbers, booleans), both ways.
doc_keys() {
    local key=$1
    shift
    sed -n "/^\`\`\`fields-$key\$/,/^\`\`\`\$/p" "$DOC" | sed '1d;$d' | sort -u >"$T/$key.documented"
    jq -r --arg k "$key" '.runs[] | .[$k] | paths(type == "string" or type == "number" or
           type == "boolean") | "runs[].\($k)." + (map(tostring) | join("."))' "$@" |
        sort -u >"$T/$key.written"
    check "docs/evidence.md lists $key keys" test -s "$T/$key.documented"
    check_eq "every $key key written is listed, every one listed is written" "" \
        "$(diff "$T/$key.documented" "$T/$key.written" | grep '^[<>]' | tr '\n' ' ')"
}
doc_keys netns "$T/same.json" "$T/other.json"

# --- every exit path: Ctrl-C and SIGKILL -----------------------------------------------

for sig in INT KILL; do
    name=sig$sig
    lab_spawn "$name" --netns other --json "$T/$name.json"
    signal_running "$name" "$SPAWNED" "$sig" hopbench
    if [ "$sig" = INT ]; then check_eq "$name: exit 130" 130 "$RC"; fi
    check "$name: the server (pid ${spid:-?}) is gone" wait_gone "${spid:-0}" 5
    a_ino=${a_ns//[^0-9]/}
    check "$name: namespace A (${a_ns:-?}) was made and is gone" \
        sh -c "[ -n '$a_ino' ] && [ '$a_ns' != '$host_ns' ]"
    check "$name: no process or thread is in A afterwards" ns_gone "${a_ino:-0}"
done

# --- run --netns: its own built-in server in the namespaces made for it --------------

# run_spawn NAME RUN-ARGS... : hopbench run in the background (SPAWNED: its pid).
run_spawn() {
    local name=$1
    shift
    spawn "$name" run -q "$@"
}

N=3000
expect_rc "run --netns same: exit 0" 0 runsame run --netns same -n "$N" --warmup 0 \
    echo tcp://127.0.0.1:0 "unix:$T/same.sock" --json "$T/runsame.json"
j=$T/runsame.json
jcheck "run same: one tcp and one unix run, each exactly -n $N ops, 0 errors" "$j" \
    '([.runs[] | .transport] | sort) == ["tcp","unix"]
     and all(.runs[]; .ops == '"$N"' and .errors_total == 0)'
check "run same: both ends in one namespace made for the run, not the host's" \
    jtrue --arg host "$host_ns" \
    'all(.runs[]; .netns.mode == "same" and .netns.client == "same" and .netns.server == "same"
         and .netns.client_ns_inode == .netns.server_ns_inode and .netns.veth == null
         and ("net:[\(.netns.client_ns_inode)]" != $host))' "$j"
jcheck "run same: the evidence names the built-in server" "$j" \
    '.server | test("^built-in echo \\(pid [0-9]+\\)$")'
# Its own server is measured: the requests it answered cost it CPU.
jcheck "run same: the server's CPU was measured" "$j" \
    'all(.runs[]; .observed.cpu.server_ns > 0 and .observed.cpu.server_source == "pids")'
spid=$(jq -r '.server | capture("pid (?<p>[0-9]+)").p' "$j" 2>/dev/null)
check "run same: its server (pid ${spid:-?}) is gone" wait_gone "${spid:-0}" 5
check "run same: the namespace is gone" ns_gone "$(jq -r '.runs[0].netns.server_ns_inode' "$j")"
check "run same: the server's socket file is removed" test ! -e "$T/same.sock"

expect_rc "run --netns other: exit 0" 0 runother run --netns other -n "$N" --warmup 0 \
    --label front echo tcp://127.0.0.1:0 --json "$T/runother.json"
j=$T/runother.json
jcheck "run other: exactly -n $N ops, 0 errors" "$j" \
    '(.runs | length) == 1 and .runs[0].ops == '"$N"' and .runs[0].errors_total == 0'
check "run other: client in B, server in A, neither the host's" jtrue --arg host "$host_ns" \
    '.runs[0].netns | .mode == "other" and .client == "B" and .server == "A"
     and .client_ns_inode != .server_ns_inode
     and ("net:[\(.client_ns_inode)]" != $host) and ("net:[\(.server_ns_inode)]" != $host)' "$j"
jcheck "run other: the endpoint is A's veth address; the label is kept" "$j" \
    '.runs[0] | .label == "front"
     and (.netns.veth.server_addr as $a | .endpoint | startswith("tcp://\($a):"))'
jcheck "run other: the ops went over the veth (its counters in B >= ops x 64 each way)" "$j" \
    '.runs[0] | .netns.veth.client_tx_bytes >= .ops * 64 and .netns.veth.client_rx_bytes >= .ops * 64'
check "run: the host has no hb-a or hb-b interface" sh -c "! ip -o link show | grep -qE '^[0-9]+: hb-[ab][:@]'"
read -r a_ino b_ino <<<"$(jq -r '.runs[0].netns | "\(.server_ns_inode) \(.client_ns_inode)"' "$j")"
check "run other: A and B are gone" ns_gone "${a_ino:-0}" "${b_ino:-0}"

# The placement object: what separates the two ends, and each end's side.
check "run same: placement netns same, both ends in the one namespace" jtrue \
    'all(.runs[].placement; .kind == "netns" and .key == "netns same" and .client.where == "same"
         and .server.where == "same" and .client.netns_inode == .server.netns_inode)' \
    "$T/runsame.json"
jcheck "run other: placement netns other, each end at its veth address" "$j" \
    '.runs[0] | .placement.kind == "netns" and .placement.key == "netns other"
     and .placement.client == {where: "B", netns_inode: .netns.client_ns_inode,
                               addr: .netns.veth.client_addr}
     and .placement.server == {where: "A", netns_inode: .netns.server_ns_inode,
                               addr: .netns.veth.server_addr}'

# A plain run of the same cell against a server on the host's loopback, then compare:
# the cell matches by its label, and the placements are printed as what tells them apart.
if start_server plainsrv -l tcp://127.0.0.1:0; then
    expect_rc "plain run on the host's loopback: exit 0" 0 runplain run -q -n "$N" --warmup 0 \
        --label front echo "tcp://127.0.0.1:$SRV_PORT" --json "$T/runplain.json"
    stop_server "$SRV_PID" "$SRV_OUT"
fi
jcheck "plain run: placement process, both ends on the host (and where they ran, observed)" \
    "$T/runplain.json" \
    '(.runs[0].placement | del(.colocated)) == {kind: "process", key: "process",
                            client: {where: "host"}, server: {where: "host"}}
     and (.runs[0].placement.colocated | has("share") or has("unavailable"))
     and .runs[0].netns == null'
expect_rc "compare plain against --netns other: exit 0" 0 cmpplace compare "$T/runplain.json" \
    "$j"
check "compare: each file's header names its placement" sh -c \
    "grep -q '^old: .*); placement process\$' '$T/cmpplace.out' &&
     grep -q '^new: .*); placement netns other\$' '$T/cmpplace.out'"
rows=$(grep -c '^echo front ' "$T/cmpplace.out")
check "compare: the cell has a row per metric ($rows)" test "$rows" -ge 4
check_eq "compare: each of the cell's rows says process -> netns other" "$rows" \
    "$(grep -c '^echo front reuse 64 B c=1 p=1 \[process -> netns other\] ' "$T/cmpplace.out")"

# report draws both files side by side: the cross-namespace cell named by its placement.
expect_rc "report plain and --netns other: exit 0" 0 rptplace report "$T/runplain.json" "$j" \
    -o "$T/place.html"
check "report: the --netns other cell is named with its placement" \
    grep -qF 'echo front reuse 64 B c=1 p=1 (netns other)' "$T/place.html"
check "report: the plain cell carries no placement in its name" \
    grep -qE 'echo front reuse 64 B c=1 p=1($|[^ ]| [^(])' "$T/place.html"

doc_keys placement "$T/same.json" "$T/other.json" "$T/runsame.json" "$T/runother.json" \
    "$T/runplain.json"

# Every exit path: Ctrl-C ends the run (130) and SIGKILL kills hopbench; either way
# its server and both namespaces go (the server dies with its parent: PDEATHSIG).
for sig in INT KILL; do
    name=runsig$sig
    run_spawn "$name" --netns other -d 30 --warmup 0 echo tcp://127.0.0.1:0 --json "$T/$name.json"
    signal_running "$name" "$SPAWNED" "$sig" hopbench
    if [ "$sig" = INT ]; then
        check_eq "$name: exit 130" 130 "$RC"
        jcheck "$name: the evidence holds the run, cut short" "$T/$name.json" \
            '.runs[0].interrupted == true and .runs[0].ops > 0'
    fi
    check "$name: the server (pid ${spid:-?}) is gone" wait_gone "${spid:-0}" 5
    check "$name: the client ran in B (${b_ns:-?}), not the host's namespace" \
        sh -c "[ -n '${b_ns:-}' ] && [ '${b_ns:-}' != '$host_ns' ] && [ '${b_ns:-}' != '${a_ns:-}' ]"
    a_ino=${a_ns//[^0-9]/}
    b_ino=${b_ns//[^0-9]/}
    check "$name: nothing is in A or B afterwards" ns_gone "${a_ino:-0}" "${b_ino:-0}"
done
check "run: no veth end on the host after Ctrl-C and SIGKILL" \
    sh -c "! ip -o link show | grep -qE '^[0-9]+: hb-[ab][:@]'"
check "run: no named namespace of hopbench's (it names none: /run/netns stays clean)" \
    sh -c "! ip netns list 2>/dev/null | grep -qiE 'hopbench|^hb'"

# A server that cannot start (its socket's directory is missing): one line, exit 1,
# and the namespace made for it goes with the run.
expect_rc "run --netns same, the server cannot listen: exit 1" 1 runnolisten run --netns same \
    -n 10 echo "unix:$T/no-such-dir/x.sock" --json "$T/runnolisten.json"
one_line "run --netns, the server cannot listen: one line" "$T/runnolisten.err" \
    "no-such-dir/x.sock"
check "run --netns, the server cannot listen: no evidence" test ! -e "$T/runnolisten.json"

# The server killed under the run: one line saying how it ended, exit 1.
run_spawn runkilled --netns same -d 30 echo tcp://127.0.0.1:0 --json "$T/runkilled.json"
signal_running runkilled "$SPAWNED" KILL server
check_eq "run: its server killed: exit 1" 1 "$RC"
one_line "run: its server killed: one line saying so" "$T/runkilled.err" \
    "built-in echo server \(pid ${spid:-?}\) was killed by SIGKILL"

echo "# $NPASS passed, $NFAIL failed"
exit "$((NFAIL > 0))"
