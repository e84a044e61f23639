#!/bin/bash
# memcached: `run memcached` against the built-in server and a private Debian memcached.
#   - the built-in server over TCP and a Unix socket: a set,get mix after its keys were
#     set (`prepared`), every get finding a value of --size bytes, the replies split by
#     command as the mix says, the evidence valid under docs/evidence.schema.json
#   - a private memcached (as nobody, TCP on 127.0.0.1 only): its own stats count
#     exactly what hopbench says it sent: cmd_set moves by prepared + set replies,
#     cmd_get and get_hits by the get replies, get_misses not at all
#   - a lone get fills its keys first too, and reads what it set; --command with a word
#     memcached has not, --keys for echo: exit 64, one line naming who takes it
# shellcheck disable=SC2016 # jq programs in single quotes
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

need memcached python3

# mc_run NAME OUT EP KEYS SIZE ARGS... : a run of -n 2000 without warm-up that must be
# clean, with every key set before it and the replies split by command.
mc_run() {
    local name=$1 out=$2 ep=$3 keys=$4 size=$5
    shift 5
    expect_rc "$name: exit 0" 0 "$out" run memcached "$ep" --keys "$keys" --size "$size" \
        -n 2000 --warmup 0 "$@" --json "$T/$out.json" || return 1
    rcheck "$name: clean, each key set once before it, every reply a set or a get" \
        "$T/$out.json" '.runs[0] | errors_zero and .ops == 2000 and .requests == 2000
        and .prepared == '"$keys"' and .size == '"$size"'
        and .replies_by_kind.set + .replies_by_kind.get == .replies and .replies == 2000'
}

# --- the built-in server --------------------------------------------------------------

PROTO=memcached start_server srv --listen tcp://127.0.0.1:0 --listen "unix:$T/srv.sock" ||
    done_testing
for ep in "tcp://127.0.0.1:$SRV_PORT" "unix:$T/srv.sock"; do
    tr=${ep%%:*}
    mc_run "built-in $tr set:1,get:9" "b_$tr" "$ep" 64 100 --command set:1,get:9 -c 2 \
        --pipeline 4
    rcheck "built-in $tr set:1,get:9: one set in ten" "$T/b_$tr.json" \
        '.runs[0].replies_by_kind | .set == 200 and .get == 1800'
done
tap_from python3 "$(dirname "$0")/schema_check.py" "$(dirname "$0")/../../docs/evidence.schema.json" \
    "$T/b_tcp.json"
stop_server "$SRV_PID" "$SRV_OUT"

# --- a private memcached: as nobody, TCP on loopback only, no UDP ---------------------

free_port
MC_PORT=$PORT
spawn_cmd mcd "$(program_path memcached)" -u nobody -l 127.0.0.1 -p "$MC_PORT" -U 0 -m 64
MC_PID=$SPAWNED
# mstat NAME : memcached's own stats counter NAME.
mstat() {
    local out
    out=$(exec 3<>"/dev/tcp/127.0.0.1/$MC_PORT" && printf 'stats\r\nquit\r\n' >&3 &&
        timeout 5 cat <&3)
    printf '%s\n' "$out" | tr -d '\r' | sed -n "s/^STAT $1 //p"
}
for ((i = 0; i < 100; i++)); do
    [ -n "$(mstat pid 2>/dev/null)" ] && break
    alive "$MC_PID" || break
    sleep 0.1
done
check_eq "memcached: ready, its pid in its stats" "$MC_PID" "$(mstat pid 2>/dev/null)"
kind() { jq -r ".runs[0].replies_by_kind.$2" "$T/$1.json"; }
prep() { jq -r '.runs[0].prepared' "$T/$1.json"; }

for mix in set:1,get:9 get:3,set:1; do
    out=m_${mix//[,:]/_}
    set0=$(mstat cmd_set) get0=$(mstat cmd_get) hits0=$(mstat get_hits)
    miss0=$(mstat get_misses)
    mc_run "memcached $mix" "$out" "tcp://127.0.0.1:$MC_PORT" 100 256 --command "$mix" -c 3 \
        --pipeline 2 || continue
    check_eq "memcached $mix: cmd_set moved by the sets before the run + set replies" \
        "$(($(prep "$out") + $(kind "$out" set)))" "$(($(mstat cmd_set) - set0))"
    check_eq "memcached $mix: cmd_get moved by the get replies" "$(kind "$out" get)" \
        "$(($(mstat cmd_get) - get0))"
    check_eq "memcached $mix: get_hits moved by the get replies" "$(kind "$out" get)" \
        "$(($(mstat get_hits) - hits0))"
    check_eq "memcached $mix: no get missed" 0 "$(($(mstat get_misses) - miss0))"
done
check_eq "memcached: it holds the run's 100 keys" 100 "$(mstat curr_items)"

# The keys hold 256 bytes; a lone get of 64 sets them to 64 first, then reads them.
expect_rc "memcached lone get --size 64 after 256: exit 0" 0 m_again \
    run memcached "tcp://127.0.0.1:$MC_PORT" --keys 100 --size 64 -n 200 --warmup 0 \
    --json "$T/m_again.json"
rcheck "a lone get reads the prepared 64 bytes: clean" "$T/m_again.json" \
    '.runs[0] | errors_zero and .replies_by_kind.get == 200 and .prepared == 100'
stop_pid "$MC_PID"

# --- usage ------------------------------------------------------------------------------

expect_rc "--command ping: exit 64" 64 ping run memcached unix:/x --command ping
one_line "--command ping: one line" "$T/ping.err" "'ping' is not get or set"
expect_rc "redis --command mget: exit 64" 64 mget run redis unix:/x --command mget
one_line "redis --command mget: one line, redis's words" "$T/mget.err" \
    "'mget' is not ping, set or get"
expect_rc "--keys for echo: exit 64" 64 ekeys run echo unix:/x --keys 3
one_line "--keys for echo: both protocols named" "$T/ekeys.err" \
    "--command and --keys are for redis and memcached"

done_testing
