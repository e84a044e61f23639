#!/bin/bash
# redis mix: several commands in one run, and the lab's --pipeline and -n.
#   - `run redis --command set,get` / `set:1,get:9` against the built-in server (TCP
#     and a Unix socket) and a private Debian redis-server (its Unix socket only, TCP
#     off): before each run every key is SET once (`prepared`), then the mix's GETs
#     return values of --size bytes (a GET of another length would be a `body` error:
#     none); the evidence's replies_by_kind splits the requests as the mix says, and
#     redis-server's INFO commandstats counts exactly prepared + SET replies as SET
#     calls and the GET replies as GET calls; redis-server holds --keys keys of --size
#     bytes
#   - the text gives each mix's replies by command and the requests before it
#   - the size column is the value's size: the mix's --size, a lone GET's
#     --expect-body length (0 when it checks nothing)
#   - a mix that repeats a command, or with --expect-body: exit 64, one line
#   - lab --proto redis -n N --pipeline P: every run measures N ops, the reuse cells
#     with P in flight, the connect cells one; -n with -d, --pipeline with --rates: 64
# shellcheck disable=SC2016 # jq programs in single quotes
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

need redis-server redis-cli

# mix_run NAME OUT EP KEYS SIZE ARGS... : a mix run of -n 2000 without warm-up that must
# be clean, with every key SET before it and the replies split by command.
mix_run() {
    local name=$1 out=$2 ep=$3 keys=$4 size=$5
    shift 5
    expect_rc "$name: exit 0" 0 "$out" run redis "$ep" --keys "$keys" --size "$size" -n 2000 \
        --warmup 0 "$@" --json "$T/$out.json" || return 1
    rcheck "$name: clean, each key SET once before it, every reply a SET or a GET" \
        "$T/$out.json" '.runs[0] | errors_zero and .ops == 2000 and .requests == 2000
        and .prepared == '"$keys"' and .size == '"$size"'
        and .replies_by_kind.SET + .replies_by_kind.GET == .replies and .replies == 2000'
}

# --- the built-in server --------------------------------------------------------------

PROTO=redis start_server srv --listen tcp://127.0.0.1:0 --listen "unix:$T/srv.sock" ||
    done_testing
for ep in "tcp://127.0.0.1:$SRV_PORT" "unix:$T/srv.sock"; do
    tr=${ep%%:*}
    mix_run "built-in $tr set,get" "b_$tr" "$ep" 64 100 --command set,get -c 2 --pipeline 4
    # each connection alternates from a SET, and ends after an even number of requests
    rcheck "built-in $tr set,get: as many SETs as GETs" "$T/b_$tr.json" \
        '.runs[0].replies_by_kind | .SET == 1000 and .GET == 1000 and .PING == 0'
    check "built-in $tr set,get: the size column is the value's" grep -Eq \
        "^$ep +reuse +100 B " "$T/b_$tr.out"
done
mix_run "built-in set:1,get:9" b_ratio "unix:$T/srv.sock" 200 4096 --command set:1,get:9
rcheck "built-in set:1,get:9: one SET in ten" "$T/b_ratio.json" \
    '.runs[0].replies_by_kind | .SET == 200 and .GET == 1800'
check "built-in set:1,get:9: the text gives the replies by command and the SETs before" grep -q \
    ": replies SET 200, GET 1,800 (warm-up included); 200 requests before the run" \
    "$T/b_ratio.out"
stop_server "$SRV_PID" "$SRV_OUT"

# --- a private redis-server: its own directory, a Unix socket, no TCP ----------------

mkdir -p "$T/redis"
spawn_cmd redis redis-server --port 0 --unixsocket "$T/redis.sock" --unixsocketperm 700 \
    --save '' --appendonly no --daemonize no --dir "$T/redis" --logfile "$T/redis.log"
RD_PID=$SPAWNED
rd() { timeout 5 redis-cli -s "$T/redis.sock" "$@" | tr -d '\r'; }
for ((i = 0; i < 100; i++)); do
    [ "$(rd ping 2>/dev/null)" = PONG ] && break
    alive "$RD_PID" || break
    sleep 0.1
done
check_eq "redis-server: ready" PONG "$(rd ping 2>/dev/null)"

# calls CMD : redis-server's own count of CMD calls since the last CONFIG RESETSTAT.
calls() { rd info commandstats | sed -n "s/^cmdstat_$1:calls=\([0-9]*\),.*/\1/p"; }
# kind OUT KIND : the replies of that kind in OUT's run; prep OUT: its prepared SETs.
kind() { jq -r ".runs[0].replies_by_kind.$2" "$T/$1.json"; }
prep() { jq -r '.runs[0].prepared' "$T/$1.json"; }

for mix in set,get set:1,get:9 get:3,set:1; do
    out=r_${mix//[,:]/_}
    rd config resetstat >/dev/null
    rd flushall >/dev/null
    mix_run "redis-server $mix" "$out" "unix:$T/redis.sock" 100 256 --command "$mix" -c 3 \
        --pipeline 2 || continue
    check_eq "redis-server $mix: SET calls = the SETs before the run + SET replies" \
        "$(($(prep "$out") + $(kind "$out" SET)))" "$(calls set)"
    check_eq "redis-server $mix: GET calls = GET replies" "$(kind "$out" GET)" "$(calls get)"
    check_eq "redis-server $mix: it holds the run's 100 keys" 100 "$(rd dbsize)"
    check_eq "redis-server $mix: each of --size 256 bytes (key:0)" 256 "$(rd strlen key:0)"
    check_eq "redis-server $mix: each of --size 256 bytes (key:99)" 256 "$(rd strlen key:99)"
done
# one connection: 2000 requests are 500 whole periods of three GETs and a SET
rd config resetstat >/dev/null
mix_run "redis-server get:3,set:1 -c 1" r_one "unix:$T/redis.sock" 100 256 --command get:3,set:1
rcheck "redis-server get:3,set:1 -c 1: three GETs to a SET" "$T/r_one.json" \
    '.runs[0].replies_by_kind | .GET == 1500 and .SET == 500'
check_eq "redis-server get:3,set:1 -c 1: GET calls" 1500 "$(calls get)"
check_eq "redis-server get:3,set:1 -c 1: SET calls, the 100 before the run with them" 600 \
    "$(calls set)"

# A lone GET reads what the server holds: no SETs before it; its size is the value it
# expects, or 0 when it expects none.
rd set key:0 hello >/dev/null
expect_rc "lone get --expect-body: exit 0" 0 get_x run redis "unix:$T/redis.sock" \
    --command get -n 50 --warmup 0 --expect-body hello --json "$T/get_x.json"
rcheck "lone get --expect-body: size 5, nothing before it" "$T/get_x.json" \
    '.runs[0] | errors_zero and .size == 5 and has("prepared") == false
    and .replies_by_kind.GET == 50'
expect_rc "lone get: exit 0" 0 get_0 run redis "unix:$T/redis.sock" --command get \
    --keys 100 -n 50 --warmup 0 --json "$T/get_0.json"
rcheck "lone get: size 0" "$T/get_0.json" '.runs[0] | errors_zero and .size == 0'
stop_pid "$RD_PID"

# --- usage ------------------------------------------------------------------------------

expect_rc "--command set,set: exit 64" 64 twice run redis unix:/x --command set,set
one_line "--command set,set: one line" "$T/twice.err" "is not ping, set and get in turn"
expect_rc "--command set,get --expect-body: exit 64" 64 mixbody run redis unix:/x \
    --command set,get --expect-body x
one_line "--command set,get --expect-body: one line" "$T/mixbody.err" "--expect-body is for"

# --- the lab: -n and --pipeline --------------------------------------------------------

export TMPDIR=$T
expect_rc "lab redis -n 400 --pipeline 8: exit 0" 0 lab lab --proto redis --sizes 64 -n 400 \
    --pipeline 8 --reps 1 --warmup 0 --json "$T/lab.json"
rcheck "lab redis -n 400 --pipeline 8: every run 400 ops, 8 in flight when reused" \
    "$T/lab.json" '.runs | length == 4 and all(.[]; .ops == 400 and .requests == 400
    and errors_zero and .pipeline == (if .mode == "reuse" then 8 else 1 end))'
expect_rc "lab -n with -d: exit 64" 64 lab_nd lab -n 10 -d 1
one_line "lab -n with -d: one line" "$T/lab_nd.err" "give --duration or --count"
expect_rc "lab --pipeline with --rates: exit 64" 64 lab_pr lab --pipeline 4 --rates 50%
one_line "lab --pipeline with --rates: one line" "$T/lab_pr.err" "drop --pipeline"

done_testing
