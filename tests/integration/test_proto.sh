#!/usr/bin/env bash
# test_proto: http, fcgi and redis end to end against hopbench's own servers,
# over TCP and a Unix socket, in reuse and connect mode: every request answered,
# the server's own request count equal to the client's, status classes and
# reconnects counted; then servers that misbehave (garbage, a reply cut short,
# an oversized header, a stall, a non-2xx status, an error reply, a wrong body)
# are each classified under their own error kind, without a crash or a hang.
# Real nginx, php-fpm and redis are in test_real.sh.
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

TOOLS=${TOOLS:-build/release/tools}
case $TOOLS in /*) ;; *) TOOLS=$PWD/$TOOLS ;; esac

# serve_proto NAME PROTO ARGS... : a built-in PROTO server on TCP and on $T/NAME.sock.
serve_proto() {
    local name=$1 proto=$2
    shift 2
    PROTO=$proto start_server "$name" --listen tcp://127.0.0.1:0 --listen "unix:$T/$name.sock" "$@"
}

# proto_matrix PROTO N RUN-ARGS... : reuse and connect over tcp and unix, -n N each; checks
# exit 0, no errors, N ops, and requests == replies == N; then that the server answered
# exactly the requests the client wrote.
proto_matrix() {
    local proto=$1 n=$2
    shift 2
    serve_proto "$proto" "$proto" || return
    local pid=$SRV_PID out=$SRV_OUT port=$SRV_PORT sent=0 mode ep tag j
    for mode in reuse connect; do
        for ep in "tcp://127.0.0.1:$port" "unix:$T/$proto.sock"; do
            tag=${proto}_${mode}_${ep%%:*}
            j=$T/$tag.json
            expect_rc "$proto $mode ${ep%%:*}: exit 0" 0 "$tag" run "$proto" "$ep" -c 2 \
                -n "$n" --warmup 0 --mode "$mode" --json "$j" "$@"
            rcheck "$proto $mode ${ep%%:*}: $n ops, no errors, requests == replies == ops" "$j" \
                '.runs[0] | .ops == '"$n"' and errors_zero and .requests == '"$n"'
                 and .replies == '"$n"' and .proto == "'"$proto"'" and hist_ok and lat_ok'
            sent=$((sent + $(jq '.runs[0].requests' "$j" 2>/dev/null || echo 0)))
        done
    done
    stop_server "$pid" "$out"
    check_eq "$proto server: exit 0" 0 "$RC"
    check_eq "$proto server: requests answered == requests hopbench wrote" "$sent" \
        "$(stopped_field requests)"
    check_eq "$proto server: no bad requests" 0 "$(stopped_field "bad requests")"
}

proto_matrix http 400
rcheck "http reuse: every reply 2xx, no reconnect" "$T/http_reuse_tcp.json" \
    '.runs[0] | .status["2xx"] == 400 and .reconnects == 0 and .size == 0'
rcheck "http connect: a connect per op" "$T/http_connect_unix.json" \
    '.runs[0] | .connects == 400 and .status["2xx"] == 400'
proto_matrix fcgi 400
rcheck "fcgi: status 200 counted, no stderr" "$T/fcgi_reuse_unix.json" \
    '.runs[0] | .status["2xx"] == 400 and .stderr_replies == 0'
proto_matrix redis 400 --command set --keys 50 --value-size 100
proto_matrix redis 400 --command ping --pipeline 8

# --wait block on both sides (one kept connection per thread and per worker sleeps in recv):
# every protocol, both transports, the same replies and counts as the epoll path.
block_matrix() {
    local proto=$1 n=$2
    shift 2
    serve_proto "blk_$proto" "$proto" --threads 1 --wait block || return
    local pid=$SRV_PID out=$SRV_OUT port=$SRV_PORT sent=0 ep tag j
    for ep in "tcp://127.0.0.1:$port" "unix:$T/blk_$proto.sock"; do
        tag=blk_${proto}_${ep%%:*}
        j=$T/$tag.json
        expect_rc "--wait block $proto ${ep%%:*} $*: exit 0" 0 "$tag" run "$proto" "$ep" \
            -n "$n" --warmup 0 --wait block --json "$j" "$@"
        rcheck "--wait block $proto ${ep%%:*} $*: $n ops, no errors, requests == replies" "$j" \
            '.runs[0] | .ops == '"$n"' and errors_zero and .requests == '"$n"'
             and .replies == '"$n"' and .wait == "block" and hist_ok and lat_ok'
        sent=$((sent + $(jq '.runs[0].requests' "$j" 2>/dev/null || echo 0)))
    done
    stop_server "$pid" "$out"
    check_eq "--wait block $proto server: exit 0" 0 "$RC"
    # (echo has no message boundaries: its server counts reads, so bytes are compared)
    if [ "$proto" = echo ]; then
        check_eq "--wait block echo server: bytes in == bytes written" \
            "$((sent * $(jq '.runs[0].size' "$j")))" "$(stopped_field "bytes in")"
    else
        check_eq "--wait block $proto server: requests answered == requests written" "$sent" \
            "$(stopped_field requests)"
    fi
}
block_matrix http 2000
block_matrix fcgi 2000
block_matrix redis 2000 --command set --keys 50 --value-size 100
PROTO=echo block_matrix echo 300 --size 64KiB

# Options the built-in servers answer: bodies, POST, expected bodies, GET after SET.
if serve_proto opts http --body-size 3000; then
    o_pid=$SRV_PID o_out=$SRV_OUT o_port=$SRV_PORT
    expect_rc "http POST 8 KiB body, 3000 B reply: exit 0" 0 post run http \
        "tcp://127.0.0.1:$o_port" -n 200 --warmup 0 --method POST --size 8KiB --json "$T/post.json"
    rcheck "http POST: 200 ops, size 8192" "$T/post.json" '.runs[0] | .ops == 200 and .size == 8192 and errors_zero'
    expect_rc "http --pipeline 16 over unix: exit 0" 0 hpipe run http "unix:$T/opts.sock" -c 2 \
        -n 1600 --warmup 0 --pipeline 16 --json "$T/hpipe.json"
    rcheck "http --pipeline 16: 1600 ops" "$T/hpipe.json" '.runs[0] | .ops == 1600 and errors_zero'
    expect_rc "http --expect-body (wrong): exit 2" 2 hbody run http "unix:$T/opts.sock" -n 20 \
        --warmup 0 --expect-body 'hello\n' --json "$T/hbody.json"
    rcheck "http --expect-body (wrong): every op an error of kind body" "$T/hbody.json" \
        '.runs[0] | .errors.body >= 20 and .ops == 0'
    stop_server "$o_pid" "$o_out"
fi
if serve_proto greet http; then
    expect_rc "http --expect-body 'hello\\n': exit 0" 0 greet run http "unix:$T/greet.sock" \
        -n 50 --warmup 0 --expect-body 'hello\n' --json "$T/greet.json"
    stop_server "$SRV_PID" "$SRV_OUT"
fi
if serve_proto kv redis; then
    expect_rc "redis set 1 key: exit 0" 0 kvset run redis "unix:$T/kv.sock" -n 10 --warmup 0 \
        --command set --keys 1 --value-size 5
    expect_rc "redis get with --expect-body of the value SET wrote: exit 0" 0 kvget run redis \
        "unix:$T/kv.sock" -n 100 --warmup 0 --command get --keys 1 --expect-body xxxxx \
        --json "$T/kvget.json"
    rcheck "redis get: 100 ops" "$T/kvget.json" '.runs[0] | .ops == 100 and errors_zero'
    stop_server "$SRV_PID" "$SRV_OUT"
fi

# A request and the client's FIN in one wake-up: the server answers and closes, every time.
if serve_proto half http; then
    hc_ok=0
    for ((i = 0; i < 20; i++)); do
        out=$("$TOOLS/halfclose" "$T/half.sock" 'GET / HTTP/1.1\r\nHost: x\r\n\r\n')
        [ "$out" = "bytes 70 eof 1" ] && hc_ok=$((hc_ok + 1))
    done
    check_eq "server: request + FIN together, answered and closed (20 of 20)" 20 "$hc_ok"
    stop_server "$SRV_PID" "$SRV_OUT"
fi

# A kept connection the server closes after each reply: reopened and resent, each request
# counted once, no error.
if PROTO=echo start_server once --listen "unix:$T/once.sock" --close-after 64; then
    expect_rc "server closing after every reply: exit 0" 0 once_run run echo "unix:$T/once.sock" \
        -n 200 --warmup 0 --json "$T/once.json"
    rcheck "server closing after every reply: 200 ops, requests == replies == 200, 199 reconnects" \
        "$T/once.json" '.runs[0] | .ops == 200 and .requests == 200 and .replies == 200
         and .reconnects == 199 and errors_zero'
    stop_server "$SRV_PID" "$SRV_OUT"
    check_eq "server closing after every reply: it answered exactly 200" 200 "$(stopped_field requests)"
fi

# The lab on each protocol's built-in server. Cells of 0.2 s, SAN times that under a sanitizer:
# a TSan lab on a busy 2-CPU box had a cell of 0.2 s with no op done in 1 of 3-4 tries (exit
# 2), none in 4 tries of 0.6 s (fewest ops in a cell 90).
lab_d=$(san_s 0.2)
for proto in http fcgi redis; do
    mkdir -p "$T/lab_$proto"
    (cd "$T/lab_$proto" && TMPDIR="$T/lab_$proto" timeout 60 "$HOPBENCH" lab --proto "$proto" \
        --sizes 64,4KiB -d "$lab_d" --warmup 0.05 --json "$T/lab_$proto.json" \
        >"$T/lab_$proto.out" 2>"$T/lab_$proto.err")
    check_eq "lab --proto $proto: exit 0" 0 "$?"
    rcheck "lab --proto $proto: 8 valid runs of $proto" "$T/lab_$proto.json" \
        '(.runs | length) == 8 and all(.runs[]; .proto == "'"$proto"'" and .valid and errors_zero)'
    check "lab --proto $proto: table names the protocol" grep -q " $proto round trips" "$T/lab_$proto.out"
done
rcheck "lab --proto http: the size is the reply body" "$T/lab_http.json" \
    'all(.runs[]; .size_of == "reply") and ([.runs[].size] | unique) == [64, 4096]'

# --- misbehaving servers: each failure under its own kind, promptly ---------------
# bad NAME HOW REPLY-BYTES KIND PROTO [RUN-ARGS...] : canned replies REPLY-BYTES then HOW;
# hopbench must exit 2 within its bounds and count errors of KIND.
bad() {
    local name=$1 how=$2 reply=$3 kind=$4 proto=$5
    shift 5
    printf '%b' "$reply" >"$T/$name.reply"
    spawn_cmd "$name.srv" "$TOOLS/canned" "$T/$name.sock" "$T/$name.reply" "$how"
    local pid=$SPAWNED i
    for ((i = 0; i < 100; i++)); do
        [ -S "$T/$name.sock" ] && break
        sleep 0.05
    done
    local t0
    t0=$(now_ms)
    expect_rc "$name: exit 2" 2 "$name" run "$proto" "unix:$T/$name.sock" -n 3 --warmup 0 \
        --json "$T/$name.json" "$@"
    check "$name: ends promptly" test $(($(now_ms) - t0)) -lt 10000
    rcheck "$name: counted as $kind" "$T/$name.json" '.runs[0].errors.'"$kind"' >= 1'
    stop_pid "$pid"
}
bad garbage close 'SSH-2.0-OpenSSH\r\n' wrong http
bad cut close 'HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nhello' short http
bad bighead close "HTTP/1.1 200 OK\r\nX-Big: $(head -c 70000 /dev/zero | tr '\0' a)\r\n\r\n" too_big http
bad stall stall 'HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nhel' timeout http --timeout 0.3
bad notfound repeat 'HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n' status http
bad hugelen close 'HTTP/1.1 200 OK\r\nContent-Length: 99999999999999\r\n\r\n' too_big http
bad rerr repeat '-ERR nope\r\n' error_reply redis
bad rgarbage close '?what\r\n' wrong redis
bad fgarbage close 'HTTP/1.1 200 OK\r\n\r\n' wrong fcgi
rcheck "status: the 404s counted by class" "$T/notfound.json" '.runs[0].status["4xx"] >= 3'

done_testing
