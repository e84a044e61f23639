#!/bin/bash
# stack nginx-fpm and apache-fpm (profile optimized), in short mode against the real
# servers, held after measuring so that their own counters can be read:
#   - the set-up checks print their lines (socket permissions, kept connections vs pool)
#   - the web server's own request count (nginx stub_status "requests", Apache
#     mod_status "Total Accesses") is what the evidence says hopbench sent in front,
#     plus the two readiness requests (and the status request itself, which one of
#     them counts before it answers)
#   - php-fpm's status page ("accepted conn" of the unix pool) is exactly the front's
#     unix-backend requests plus the bare hop's unix requests, plus one for each kept
#     connection's close (one per run: -c 1), the readiness request, the bare hop's preflight
#     connect, and the status request itself (counted or not yet: one either way)
#   - every run is valid (2xx, body "bench"); Ctrl-C while held: exit 0, nothing left
# shellcheck disable=SC2016 # jq programs in single quotes
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/stack_lib.sh
. "$(dirname "$0")/stack_lib.sh"

PATH=$PATH:/usr/sbin:/sbin
for tool in nginx apache2 php-fpm8.2 cgi-fcgi curl; do
    command -v "$tool" >/dev/null 2>&1 || {
        not_ok "setup: $tool installed" "run: sh scripts/deps.sh test"
        done_testing
    }
done

# jsum FILE CELL FIELD ENDPOINT-INDEX : the sum of FIELD over the runs of the N-th run
# child (1-based CELL) at endpoint index ENDPOINT-INDEX.
jsum() {
    jq -s --argjson k "$2" --arg f "$3" --argjson e "$4" '[foreach .[] as $r (0;
        if $r.record == "header" then . + 1 else . end;
        if $r.record == "run" and . == $k and $r.cell == $e then $r[$f] else empty end)] | add' "$1"
}

# fpm_status SOCKET : php-fpm's status page of the pool on SOCKET.
fpm_status() {
    SCRIPT_NAME=/status SCRIPT_FILENAME=/status REQUEST_METHOD=GET QUERY_STRING='' \
        cgi-fcgi -bind -connect "$1" 2>/dev/null | tr -d '\r'
}

for stack in nginx-fpm apache-fpm; do
    web=${stack%-fpm}
    spawn "$stack" stack "$stack" --short --hold --jsonl "$T/$stack.jsonl"
    PID=$SPAWNED
    OUT=$T/$stack.out
    if ! wait_line "$OUT" '^holding: ' 100 "$PID"; then
        not_ok "$stack: measured and holding" "stdout: $(tail -c 600 "$OUT" | tr '\n' '|')" \
            "stderr: $(tail -c 300 "$T/$stack.err" | tr '\n' '|')"
        stop_pid "$PID"
        stack_nothing_left "$stack" "$OUT"
        continue
    fi
    ok "$stack: measured and holding"
    check "$stack: socket permission check line" grep -q "^check: the socket .* can connect" "$OUT"
    check "$stack: kept connections check line" grep -q "^check: .*pm.max_children is" "$OUT"
    check "$stack: every run valid" jtrue -s \
        '[.[] | select(.record == "run")] | length == 8 and all(.[]; .valid and .errors_total == 0)' \
        "$T/$stack.jsonl"
    FRONT_UNIX=$(sed -n 's|.* and tcp://127.0.0.1:\([0-9]*\) (backend unix).*|\1|p' "$OUT")
    SOCK=$(sed -n 's|.* and unix:\(/[^,]*fpm.sock\), pm static.*|\1|p' "$OUT")
    sent=$(($(jsum "$T/$stack.jsonl" 1 requests 0) + $(jsum "$T/$stack.jsonl" 1 requests 1)))
    if [ "$web" = nginx ]; then
        got=$(curl -s "http://127.0.0.1:$FRONT_UNIX/nginx_status" | sed -n 's/^ *[0-9]* [0-9]* \([0-9]*\) *$/\1/p')
    else
        got=$(curl -s "http://127.0.0.1:$FRONT_UNIX/server-status?auto" | sed -n 's/^Total Accesses: //p')
    fi
    check "$stack: $web counted $got requests: hopbench sent $sent + 2 readiness (+ the status request)" \
        test "${got:-0}" -ge $((sent + 2)) -a "${got:-0}" -le $((sent + 3))
    front_unix=$(jsum "$T/$stack.jsonl" 1 requests 1)
    hop_unix=$(jsum "$T/$stack.jsonl" 2 requests 1)
    accepted=$(fpm_status "$SOCK" | sed -n 's/^accepted conn: *//p')
    hop_runs=$(jq -s '[.[] | select(.record == "run" and .proto == "fcgi" and .cell == 1)] | length' \
        "$T/$stack.jsonl")
    want=$((front_unix + hop_unix + hop_runs + 3))
    check "$stack: php-fpm's unix pool accepted $accepted = $front_unix front + $hop_unix bare-hop requests + $hop_runs closes + 2 (+ the status request)" \
        test "${accepted:-0}" -ge $((want - 1)) -a "${accepted:-0}" -le "$want"
    kill -INT "$PID"
    reap "$PID" 20
    check_eq "$stack: Ctrl-C while held: exit 0" 0 "$RC"
    stack_nothing_left "$stack" "$OUT"
done

done_testing
