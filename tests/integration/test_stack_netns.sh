#!/bin/bash
# stack --netns: the real servers in a network namespace made for the stack, the
# run children beside them (same) or in a second namespace across a veth pair
# (other: the front hop, client to nginx, crosses it; the bare FastCGI hop stays in
# A, placed as same). Counts: nginx's own status page, read inside A, answered at
# least every op the children counted. Nothing is left: no service, no namespace
# held, no veth on the host.
# shellcheck disable=SC2016 # $vars in single quotes are jq variables
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/stack_lib.sh
. "$(dirname "$0")/stack_lib.sh"

need ip nsenter setpriv unshare

host_ns=$(readlink /proc/self/ns/net)

expect_rc "stack redis --netns other: usage error" 64 redisother stack redis --netns other
one_line "stack redis --netns other: one line, its unix arm is the front hop" \
    "$T/redisother.err" "stack redis: --netns other: its unix arm is the front hop"
for db in postgres redis-mariadb; do
    expect_rc "stack $db --netns other: usage error" 64 "${db}other" stack "$db" --netns other
    one_line "stack $db --netns other: one line" "$T/${db}other.err" \
        "stack $db: --netns other: its unix arm is the front hop"
done
expect_rc "stack --netns bogus: usage error" 64 stackbogus stack nginx-fpm --netns bogus
one_line "stack --netns bogus: one line naming the value" "$T/stackbogus.err" \
    "'bogus' is not one of same, other"

if ! unshare -n true 2>/dev/null; then
    ok "stack --netns # SKIP this user may not make a network namespace"
    done_testing
fi
fpm_need

# Without CAP_SYS_ADMIN: one line, exit 77, nothing started.
if setpriv --bounding-set=-sys_admin --inh-caps=-sys_admin true 2>/dev/null; then
    RC=0
    (cd "$T" && exec setpriv --bounding-set=-sys_admin --inh-caps=-sys_admin \
        timeout -k 5 60 "$HOPBENCH" stack nginx-fpm --short --netns same) \
        >"$T/nocap.out" 2>"$T/nocap.err" || RC=$?
    check_eq "stack --netns without CAP_SYS_ADMIN: exit 77" 77 "$RC"
    one_line "stack --netns without CAP_SYS_ADMIN: one line" "$T/nocap.err" 'needs root'
    check "stack --netns without CAP_SYS_ADMIN: no service started" \
        sh -c "! grep -q ' pid [0-9]' '$T/nocap.out'"
else
    ok "stack --netns without CAP_SYS_ADMIN # SKIP setpriv cannot drop it here"
fi

# An error after php-fpm started (the socket check refuses): exit 1, and no process of the
# stack is left (stack_nothing_left: by pid and by its directory's name), so none holds A.
mkdir -m 700 "$T/locked"
TMPDIR=$T/locked expect_rc "other, unreachable socket: exit 1" 1 locked stack nginx-fpm \
    --short --netns other
stack_nothing_left "other, unreachable socket" "$T/locked.out"
check "other, unreachable socket: it got as far as its namespaces" \
    grep -q '^netns: other: services in namespace A' "$T/locked.out"

# --- other, held: the services in A, the front's children in B -----------------------

if held other nginx-fpm --netns other -q; then
    a_addr=$(sed -n 's|^netns: other: services in namespace A (hb-a \([0-9.]*\)/30).*|\1|p' "$OUT")
    port=$(sed -n 's|.*nginx pid [0-9]* on tcp://[0-9.]*:\([0-9]*\) (backend tcp).*|\1|p' "$OUT")
    nginx=$(sed -n 's|.*nginx pid \([0-9]*\) on .*|\1|p' "$OUT")
    fpm=$(sed -n 's|.*php-fpm pid \([0-9]*\) on .*|\1|p' "$OUT")
    a_ns=$(readlink "/proc/$nginx/ns/net" 2>/dev/null)
    check "other: nginx and php-fpm run in one namespace ($a_ns), not the host's" \
        sh -c "[ -n '$a_ns' ] && [ '$a_ns' != '$host_ns' ] &&
               [ \"\$(readlink /proc/$fpm/ns/net)\" = '$a_ns' ]"
    check_eq "other: the host has no listener on nginx's port $port" 0 \
        "$(ss -Hltn "sport = :${port:-0}" 2>/dev/null | wc -l)"
    check "other: the host has no address of the pair (${a_addr:-?})" \
        sh -c "[ -n '$a_addr' ] && ! ip -o -4 addr show | grep -qwF ' $a_addr/'"
    # nginx counts every request it answered, the children's warm-ups included.
    served=$(nsenter -t "$nginx" -n curl -s "http://$a_addr:$port/nginx_status" |
        sed -n 's/^ *[0-9]* [0-9]* \([0-9]*\) *$/\1/p')
    ops=$(jq -s '[.[] | select(.record == "run" and (.label | startswith("nginx-fpm."))
                 and .endpoint == "tcp://'"$a_addr:$port"'") | .ops] | add' "$T/other.jsonl")
    check "other: nginx answered ${served:-?} requests on that port >= the ${ops:-?} ops counted" \
        sh -c "[ '${ops:-0}' -gt 0 ] && [ '${served:-0}' -ge '${ops:-1}' ]"
    j=$T/other.jsonl
    check "other: the front's runs ran in B against A's veth address, 0 errors" jtrue -s \
        '[.[] | select(.record == "run" and (.label | startswith("nginx-fpm.")))] as $r
         | ($r | length) > 0 and all($r[]; .errors_total == 0 and .ops > 0
           and .placement.key == "netns other" and .placement.client.where == "B"
           and .placement.server.where == "A" and .placement.server.addr == "'"$a_addr"'"
           and (.endpoint | startswith("tcp://'"$a_addr"':"))
           and .netns.veth.client_tx_bytes > 0)' "$j"
    check "other: the bare FastCGI hop stayed in A (placed as same)" jtrue -s \
        '[.[] | select(.record == "run" and (.label | startswith("fcgi-fpm.")))] as $r
         | ($r | length) > 0 and all($r[]; .placement.key == "netns same"
           and .placement.client.netns_inode == .placement.server.netns_inode)' "$j"
    check "other: no run watched A's backend hop from B (it cannot see it)" jtrue -s \
        'all(.[] | select(.record == "run" and (.label | startswith("nginx-fpm.")));
             .observed.watch == null or (.observed.watch | length) == 0)' "$j"
    release other
    a_ino=${a_ns//[^0-9]/}
    check "other: nothing is in A afterwards" ns_gone "${a_ino:-0}"
fi
check "other: no end of the pair on the host" \
    sh -c "! ip -o link show | grep -qE '^[0-9]+: hb-[ab][:@]'"

# --- same: everything in one namespace ---------------------------------------------

expect_rc "same: stack nginx-fpm --netns same: exit 0" 0 same stack nginx-fpm --netns same \
    --short -q --reps 2 --jsonl "$T/same.jsonl"
check "same: every run in the one namespace, 0 errors" jtrue -s \
    '[.[] | select(.record == "run")] as $r | ($r | length) > 0
     and all($r[]; .errors_total == 0 and .placement.key == "netns same"
         and .placement.client.netns_inode == .placement.server.netns_inode
         and ("net:[\(.placement.client.netns_inode)]" != "'"$host_ns"'"))' \
    "$T/same.jsonl"
stack_nothing_left same "$T/same.out"
s_ino=$(jq -rs '[.[] | select(.record == "run")][0].placement.client.netns_inode' "$T/same.jsonl")
check "same: the namespace is gone" ns_gone "${s_ino:-0}"

done_testing
