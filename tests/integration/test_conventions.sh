#!/bin/bash
# The conventions users type and read: times with units (-d 500ms), http:// and
# http+unix:// URLs as endpoints (their path sent, their protocol named by them); a run
# against a server of another protocol: n/a with its reason, never 0.00, and the first bad
# reply's first bytes, escaped, in the text and the evidence; the server of a local endpoint
# found by its listening socket (a real nginx: its master and workers; hopbench serve; as root,
# a serve run by nobody), its CPU counted, never signalled nor moved, or why not in one line
# (as nobody; two processes on one port; --no-server-lookup; --server-pid given).
# shellcheck disable=SC2016 # $vars in single quotes are jq variables
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

need python3 jq nginx setpriv

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

# --- the server, found by its listening socket -----------------------------------------------

# hopbench serve: the one process that holds the listener
expect_rc "run echo against serve, no --server-pid: exit 0" 0 found \
    run echo "unix:$T/echo.sock" -d 0.2 --warmup 0 --json "$T/found.json"
check "serve is found by its listening socket (pid $SRV_PID)" grep -qxF \
    "server: hopbench (pid $SRV_PID, found by its listening socket unix:$T/echo.sock): its tree's CPU and memory are the server's" \
    "$T/found.out"
stop_server "$SRV_PID" "$SRV_OUT"

# two processes listening on one port (SO_REUSEPORT), neither the other's parent: whose CPU
# is the hop's is not known, so none is counted, one line says why, and the run goes on
free_port
rp_port=$PORT
rp_echo='import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen(16)
while True:
    c, _ = s.accept()
    try:
        while (d := c.recv(65536)):
            c.sendall(d)
    except OSError:  # a reset: the next connection
        pass
    c.close()'
spawn_cmd rp1 python3 -c "$rp_echo" "$rp_port"
rp1=$SPAWNED
spawn_cmd rp2 python3 -c "$rp_echo" "$rp_port"
rp2=$SPAWNED
for ((i = 0; i < 100; i++)); do
    [ "$(ss -Hltn "( sport = :$rp_port )" | wc -l)" -eq 2 ] && break
    sleep 0.1
done
expect_rc "run echo against two processes on one port: exit 0" 0 two \
    run echo "tcp://127.0.0.1:$rp_port" --mode reuse -d 0.2 --warmup 0 --json "$T/two.json"
check "two processes: one line says why none is counted, naming both" sh -c "
    [ \$(grep -c '^server' '$T/two.out') = 1 ] &&
    grep -q '^server of tcp://127.0.0.1:$rp_port not found by its listening socket: 2 processes listen there, not one tree: python3 (pid [0-9]*), python3 (pid [0-9]*) (--server-pid names it)\$' '$T/two.out' &&
    grep '^server of' '$T/two.out' | grep -q 'pid $rp1)' && grep '^server of' '$T/two.out' | grep -q 'pid $rp2)'"
rcheck "two processes: the evidence's server is external, its CPU unavailable for that reason" \
    "$T/two.json" '.server == "external" and .runs[0].valid
     and (.runs[0].observed.cpu.server_ns.unavailable | startswith("not found by its listening socket: 2 processes listen there"))'
stop_pid "$rp1"
stop_pid "$rp2"

# nginx: a master and two workers (as root: root's), all holding the TCP and the Unix listener
free_port
ng_port=$PORT
mkdir -p "$T/ng/tmp"
{
    echo "daemon off; master_process on; user root root; worker_processes 2;"
    echo "pid $T/ng/nginx.pid; error_log $T/ng/error.log warn;"
    echo "events { worker_connections 64; }"
    echo "http { access_log off;"
    for d in body proxy fastcgi uwsgi scgi; do echo "  ${d}_temp_path $T/ng/tmp/$d;"; done
    echo "  server { listen 127.0.0.1:$ng_port; listen unix:$T/ng.sock;"
    printf "%s\n" "    location = / { return 200 \"hello\\n\"; } } }"
} | sed 's/^  body_temp_path/  client_body_temp_path/' >"$T/ng/nginx.conf"
spawn_cmd nginx nginx -p "$T/ng/" -e "$T/ng/error.log" -c "$T/ng/nginx.conf"
ng_pid=$SPAWNED
for ((i = 0; i < 100; i++)); do
    [ "$(ps -o pid= --ppid "$ng_pid" | wc -l)" -eq 2 ] && [ -S "$T/ng.sock" ] && break
    sleep 0.1
done
ng_tcp=tcp://127.0.0.1:$ng_port
# what its processes are and may run on, to see that nothing signals or moves them
ng_state() {
    local p
    for p in "$ng_pid" $(ps -o pid= --ppid "$ng_pid"); do
        echo "$p $(awk '/^Cpus_allowed_list/ { print $2 }' "/proc/$p/status")"
    done
}
ng_before=$(ng_state)
j=$T/ng.json
expect_rc "run http against nginx, no --server-pid: exit 0" 0 ng \
    run http "$ng_tcp" "unix:$T/ng.sock" -d 0.3 --warmup 0 --json "$j"
check "one line names nginx's master, found by both its listening sockets" grep -qxF \
    "server: nginx (pid $ng_pid, found by its listening socket $ng_tcp and unix:$T/ng.sock): its tree's CPU and memory are the server's" \
    "$T/ng.out"
rcheck "the evidence names it; each run counts its CPU and its 3 processes (master, 2 workers)" "$j" \
    '.server == "nginx (pid '"$ng_pid"', found by its listening socket '"$ng_tcp"' and unix:'"$T"'/ng.sock)"
     and all(.runs[]; .observed.cpu.server_ns > 0 and .observed.memory.server_pids == 3)'
check "the server's CPU per op is in the table, not n/a" \
    sh -c "! grep -q 'n/a (.*): server cpu/op' '$T/ng.out'"
# --pin split places the client; the server found is observed where it runs, never moved
expect_rc "run --pin split against nginx: exit 0" 0 ngpin \
    run http "$ng_tcp" --pin split -d 0.2 --warmup 0 --json "$T/ngpin.json"
rcheck "--pin split: the server's CPUs observed, not set" "$T/ngpin.json" \
    '.placement.server_cpus_source == "observed"'
check_eq "nginx after the runs: the same master and workers (none signalled, none respawned), on the same CPUs" \
    "$ng_before" "$(ng_state)"
if [ "$(id -u)" -eq 0 ]; then
    # as nobody, the fds of root's processes cannot be read: none is found, and the line says why
    RC=0
    (cd / && exec setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$HOPBENCH" run \
        http "$ng_tcp" -d 0.2 --warmup 0 --json /dev/null) >"$T/nb.out" 2>"$T/nb.err" || RC=$?
    check_eq "as nobody: exit 0" 0 "$RC"
    check "as nobody: a line says none was found, and why" grep -qxF \
        "server of $ng_tcp not found by its listening socket: none of this user's processes holds it; only root sees others' fds (--server-pid names it)" \
        "$T/nb.out"
    check "as nobody: the server's CPU is n/a for that reason" grep -qF \
        "n/a (not found by its listening socket: none of this user's processes holds it; only root sees others' fds): server cpu/op" \
        "$T/nb.out"

    # root finds a server another user runs: hopbench serve as nobody
    free_port
    nb_port=$PORT
    spawn_cmd nbsrv setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$HOPBENCH" serve \
        echo --listen "tcp://127.0.0.1:$nb_port"
    nb_pid=$SPAWNED
    for ((i = 0; i < 100; i++)); do
        grep -q '^hopbench: listening on ' "$T/nbsrv.out" 2>/dev/null && break
        sleep 0.05
    done
    check_eq "serve as nobody: its process is nobody's" nobody "$(stat -c %U "/proc/$nb_pid")"
    expect_rc "run as root against serve run by nobody: exit 0" 0 rootnb \
        run echo "tcp://127.0.0.1:$nb_port" -d 0.2 --warmup 0 --json "$T/rootnb.json"
    check "run as root: nobody's serve is found by its listening socket" grep -qxF \
        "server: hopbench (pid $nb_pid, found by its listening socket tcp://127.0.0.1:$nb_port): its tree's CPU and memory are the server's" \
        "$T/rootnb.out"
    rcheck "run as root: nobody's serve's CPU counted" "$T/rootnb.json" \
        '.server == "hopbench (pid '"$nb_pid"', found by its listening socket tcp://127.0.0.1:'"$nb_port"')"
         and all(.runs[]; .observed.cpu.server_ns > 0)'
    stop_server "$nb_pid" "$T/nbsrv.out"
    check_eq "serve as nobody: it ran until the test stopped it (exit 0)" 0 "$RC"
else
    echo "# not root: no other user's process to find, nor a run as another user"
fi
expect_rc "--no-server-lookup: exit 0" 0 nolook \
    run http "$ng_tcp" --no-server-lookup -d 0.2 --warmup 0 --json "$T/nolook.json"
check "--no-server-lookup: no server line; the server's CPU n/a as without a server named" \
    sh -c "! grep -q '^server' '$T/nolook.out' && grep -qF 'n/a (no --server-pid or --server-cgroup given): server cpu/op' '$T/nolook.out'"
rcheck "--no-server-lookup: the evidence's server is external, as before" "$T/nolook.json" '.server == "external"'
expect_rc "--server-pid given: exit 0" 0 given \
    run http "$ng_tcp" --server-pid "$ng_pid" -d 0.2 --warmup 0 --json "$T/given.json"
check "--server-pid given: not looked for" sh -c "! grep -q '^server' '$T/given.out'"
rcheck "--server-pid given: that process alone (no --server-tree)" "$T/given.json" \
    'all(.runs[]; .observed.memory.server_pids == 1)'
stop_pid "$ng_pid"

done_testing
