#!/bin/bash
# The conventions users type and read: times with units (-d 500ms), http:// and
# http+unix:// URLs as endpoints (their path sent, their protocol named by them); a run
# against a server of another protocol: n/a with its reason, never 0.00, and the first bad
# reply's first bytes, escaped, in the text and the evidence.
# shellcheck disable=SC2016 # $vars in single quotes are jq variables
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

need python3 jq

# --- a time with its unit, a URL naming its protocol and its path ------------------------

# Python's own HTTP server logs each request line: the path the URL gave is what went out.
mkdir "$T/www"
echo hello >"$T/www/hello.txt"
free_port
web_port=$PORT
spawn_cmd web python3 -m http.server --bind 127.0.0.1 --directory "$T/www" "$web_port"
web_pid=$SPAWNED
for ((i = 0; i < 100; i++)); do
    "$HOPBENCH" run http "tcp://127.0.0.1:$web_port" -n 1 --warmup 0 --json /dev/null \
        >/dev/null 2>&1 && break
    sleep 0.1
done
j=$T/url.json
seen=$(wc -l <"$T/web.err") # the requests of the wait above
expect_rc "run http://127.0.0.1:PORT/hello.txt -d 300ms (no PROTO): exit 0" 0 url \
    run "http://127.0.0.1:$web_port/hello.txt" -d 300ms --warmup 0 --json "$j"
check "the URL is run as its native endpoint" \
    grep -Eq "^tcp://127\.0\.0\.1:$web_port +reuse " "$T/url.out"
rcheck "the run is http's, 0.3 s long, and valid" "$j" \
    '.runs[0] | .proto == "http" and .endpoint == "tcp://127.0.0.1:'"$web_port"'"
     and .duration_s == 0.3 and .ops > 0 and .valid == true'
sent=$(tail -n +$((seen + 1)) "$T/web.err" | grep -c '"GET /hello.txt HTTP/1.1" 200')
other=$(tail -n +$((seen + 1)) "$T/web.err" | grep '"GET ' | grep -vc '"GET /hello.txt HTTP/1.1"')
check "every request the server logged asked for the URL's path ($sent, other $other)" \
    test "$sent" -gt 0 -a "$other" -eq 0
stop_pid "$web_pid"

# http+unix://: the socket percent-encoded, as requests-unixsocket and Docker's clients write it
sock=$T/web.sock
PROTO=http start_server hu --listen "unix:$sock" || done_testing
enc=$(python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$sock")
expect_rc "run http+unix://ENCODED/ -d 0.2s: exit 0" 0 hu_run \
    run "http+unix://$enc/" -d 0.2s --warmup 0 --json "$T/hu.json"
rcheck "http+unix:// is the socket unix:PATH" "$T/hu.json" \
    '.runs[0] | .endpoint == "unix:'"$sock"'" and .transport == "unix" and .ops > 0'
expect_rc "a URL of another protocol is refused: exit 64" 64 hu_bad \
    run fcgi "http+unix://$enc/" -d 0.2
one_line "a URL of another protocol: one line" "$T/hu_bad.err" "is a URL of another protocol"
stop_server "$SRV_PID" "$SRV_OUT"

# --- the wrong protocol: what came back is said ------------------------------------------

start_server echo --listen "unix:$T/echo.sock" || done_testing
j=$T/wrong.json
expect_rc "redis against an echo server: exit 2 (every reply wrong)" 2 wrong \
    run redis "unix:$T/echo.sock" -n 30 --warmup 0 --json "$j"
row=$(grep -E "^unix:$T/echo.sock +reuse " "$T/wrong.out")
check "its row: 0 ops/s, every latency n/a, 30 errors, no 0.00 ($row)" \
    sh -c "echo '$row' | grep -Eq ' 0 +n/a +n/a +n/a +n/a +n/a +30 +-\$' && ! echo '$row' | grep -q '0\.00'"
check "under the table: why the latencies are n/a" \
    grep -qxF "  n/a (no op completed: 30 failed (wrong)): the latencies" "$T/wrong.out"
# the echo server sent back redis's own PING: the line shows those bytes, escaped
check "the first wrong reply's bytes, escaped, under the errors line" \
    grep -A1 "^errors: unix:$T/echo.sock reuse 64 B: wrong=30\$" "$T/wrong.out" |
    grep -qxF '  the first wrong reply: "*1\r\n$4\r\nPING\r\n" (14 bytes, escaped); does the endpoint speak another protocol?'
rcheck "the evidence keeps it: kind, bytes, escaped text and exact hex" "$j" \
    '.runs[0].first_bad_reply == {"kind": "wrong", "bytes": 14, "from_start": true,
      "text": "*1\\r\\n$4\\r\\nPING\\r\\n", "hex": "2a310d0a24340d0a50494e470d0a"}'
# binary bytes (FastCGI's records) are escaped byte by byte, the NULs too
expect_rc "fcgi against an echo server: exit 2" 2 wrongf \
    run fcgi "unix:$T/echo.sock" -n 5 --warmup 0 --json "$T/wrongf.json"
check "fcgi's first bytes: \\x01 (its version), NULs as \\x00" \
    grep -qF '  the first wrong reply: "\x01\x01\x00\x01\x00\x08\x00\x00' "$T/wrongf.out"
rcheck "a valid run has none" "$T/url.json" '.runs[0].first_bad_reply == null'
stop_server "$SRV_PID" "$SRV_OUT"

done_testing
