#!/bin/bash
# stack nginx-fpm, apache-fpm and lighttpd-fpm, each profile (baseline, optimized,
# optimized-reuse; lighttpd, which keeps no FastCGI connection, the first two), in short mode
# against the real servers, held after measuring so that their own counters can be read:
#   - the set-up checks print their lines (socket permissions, kept connections vs pool)
#   - the web server's own request count (nginx stub_status "requests", Apache's and
#     lighttpd's mod_status "Total Accesses") is what the evidence says hopbench sent in front,
#     plus the two readiness requests (and the status request itself, which one of
#     them counts before it answers)
#   - php-fpm's status page ("accepted conn" of the unix pool; php-fpm counts a request as
#     a worker starts reading it) is the front's unix-backend requests plus the bare hop's
#     unix requests (less at most those still queued when a run stopped), plus at most
#     hopbench's own: one per close of each of the bare hop's kept connections and per
#     connect-mode run, the two readiness requests (straight and through the web server),
#     the bare hop's preflight connect and the status request itself; with nginx's
#     optimized-reuse, plus at most the connections it kept (and closed)
#   - each stack runs at the pod study's load by default: 96 connections in front and in the
#     bare hop's connect mode, its kept connections one per php-fpm worker (16, or the
#     baseline's 5); any -c is accepted: -c 32 for 16 workers is measured, valid, the bare
#     hop keeping 16 and saying the clients outnumber them (it was refused: "use -c 4 or less")
#   - beside each table, its readings against the evidence (stack_readings.py: connections,
#     p99.9, mean, the noisy runs, TIME_WAIT's (+added), a system figure never below client +
#     services without a reason, the lifecycle's share as the phases' arithmetic, the load
#     lines) and the bare hop's lifecycle in CPU per request
#   - optimized-reuse keeps FastCGI connections open (established to php-fpm's TCP port
#     while held), one per php-fpm worker as the pod study kept them (Apache 2 x 8 for pm 16,
#     96 client connections outnumbering them: said so; its pool then holds every worker, and
#     php-fpm's status page gets none; nginx 2 x 96 for pm 192), the other profiles do not
#     (a new connection per request)
#   - each service is measured by name from its own cgroup (run --service WEB=cgroup:DIR,
#     php-fpm=cgroup:DIR; the bare hop php-fpm alone): the runs' CPU of each is at most that
#     cgroup's own cpuacct.usage read while held, and most of it; the table's rows per
#     service are the runs' medians; the noisy-run check leaves them out: each run's
#     other_cpu.named_ns is their CPU (> 0), other_ns the busy time less hopbench's and
#     theirs, and only other + steal over the threshold makes a run noisy
#   - the backend hop is watched (--watch backend-tcp=FPM's port, backend-unix=its socket):
#     with a new FastCGI connection per request the tcp backend holds TIME_WAIT sockets in
#     every run, the table's backend TIME_WAIT over unix is 0; the front's keep-alive
#     connections leave none while measured
#   - a socket the web server's workers cannot reach is refused before measuring (exit 1,
#     one line naming the directory), nothing left
#   - --profile is checked (lighttpd-fpm has no optimized-reuse)
#   - no process of the stack runs as root but the web server's master and php-fpm's (which
#     bind and fork): php-fpm's workers are www-data, as the web server's are
#   - the services run in a network namespace of the stack's own (FastCGI has no
#     authentication): another local user (nobody) who asks php-fpm's TCP port on the host's
#     loopback, or its socket, to run a script of its own gets nothing run, and may not enter
#     the namespace
#   - every run is valid (2xx, body "bench"); Ctrl-C while held: exit 0, nothing left
#   - Ctrl-C in the middle of a measurement: exit 130 within seconds, nothing left
# shellcheck disable=SC2016 # jq programs in single quotes
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/stack_lib.sh
. "$(dirname "$0")/stack_lib.sh"

fpm_need

# jsum FILE CELL FIELD ENDPOINT-INDEX : the sum of FIELD over the runs of the N-th run
# child (1-based CELL) at endpoint index ENDPOINT-INDEX.
jsum() {
    jq -s --argjson k "$2" --arg f "$3" --argjson e "$4" '[foreach .[] as $r (0;
        if $r.record == "header" then . + 1 else . end;
        if $r.record == "run" and . == $k and $r.cell == $e then $r[$f] else empty end)] | add' "$1"
}

# fpm_row CELL NAME : the tcp and unix figures of row NAME in the table block of CELL.
fpm_row() {
    sed -n "/^$1 /,/^\$/p" "$OUT" | grep -F -- "  $2 " | head -n 1 |
        sed -e "s|^  $2 *||" -e 's/ ([+-][0-9,]*)//g' -e 's/,//g' | awk '{ print $1, $2 }'
}

# fpm_mean NAME LABEL JQ : the mean of JQ over the runs labelled LABEL (2 runs: their median).
fpm_mean() {
    jq -s --arg l "$2" "[.[] | select(.record == \"run\" and .label == \$l) | $3] | add / length" \
        "$T/$1.jsonl"
}

# close A B ULP : |A - B| <= ULP (the table rounds).
close() { awk -v a="$1" -v b="$2" -v u="$3" 'BEGIN { d = a - b; exit !(d <= u && d >= -u) }'; }

# --- usage and set-up errors ---------------------------------------------------------------

expect_rc "--profile nope: exit 64" 64 nope stack nginx-fpm --profile nope
one_line "--profile nope: one line naming the profiles" "$T/nope.err" \
    "'nope' is not one of baseline, optimized, optimized-reuse"
expect_rc "lighttpd-fpm --profile optimized-reuse: exit 64" 64 lreuse stack lighttpd-fpm \
    --profile optimized-reuse
one_line "lighttpd-fpm --profile optimized-reuse: one line naming its profiles" "$T/lreuse.err" \
    "'optimized-reuse' is not one of baseline, optimized\$"
expect_rc "redis --profile: exit 64" 64 rprof stack redis --profile optimized
one_line "redis --profile: one line" "$T/rprof.err" 'has no profiles'
# Any -c is accepted: a pool smaller than the load is a measured queue, not a refusal. At -c 32
# for pm static 16 the bare hop keeps 16 connections (one per worker: a kept FastCGI connection
# holds its worker) and says that the clients outnumber them; its connect-mode measurement
# takes all 32, which queue in php-fpm's backlog, every run valid; the web server's runs too.
expect_rc "-c 32 for 16 workers: exit 0" 0 queue stack apache-fpm --short -c 32 --jsonl "$T/queue.jsonl"
check "-c 32: the bare hop keeps one per worker, said so" grep -q \
    '^clients outnumber kept connections: the bare hop keeps 16 for -c 32 ' "$T/queue.out"
check "-c 32: each connection of the web server waits for one of 16 workers, said so" grep -q \
    '^check: the web server opens a FastCGI connection per request (none kept): each waits for one of pm.max_children 16 per pool$' \
    "$T/queue.out"
check "-c 32: 12 runs, every one valid; kept 16, connect mode and the web server 32" jtrue -s '
    [.[] | select(.record == "run")] | length == 12 and all(.[]; .valid and .errors_total == 0)
    and (map(select(.proto == "fcgi" and .mode == "reuse") | .connections) | unique == [16])
    and (map(select(.proto == "fcgi" and .mode == "connect") | .connections) | unique == [32])
    and (map(select(.proto == "http") | .connections) | unique == [32])' "$T/queue.jsonl"
stack_nothing_left "-c 32" "$T/queue.out"

# The socket check can fail: with the private directory under a directory the web server's
# workers (www-data) cannot search, every request would be a 502: refused before measuring.
mkdir -m 700 "$T/locked"
TMPDIR=$T/locked expect_rc "unreachable socket: exit 1" 1 locked stack nginx-fpm --short
one_line "unreachable socket: one line naming the directory" "$T/locked.err" \
    "workers \(www-data\) cannot reach .*fpm.sock: no search permission on $T/locked\$"
check "unreachable socket: nothing measured" test "$(grep -c '^measuring' "$T/locked.out")" = 0
stack_nothing_left "unreachable socket" "$T/locked.out"

# --agent: the run children reach the agent from the host's namespace, so the services stay
# there too, and a line says that the FastCGI port is open to every local user (no agent on
# port 1: exit 1 at the first run). Under umask 077 php-fpm's and nginx's workers still read
# what the stack wrote (they answered: the socket's check line came after php-fpm's readiness).
printf '%s\n' 0123456789abcdef0123 >"$T/token"
chmod 600 "$T/token"
mask=$(umask)
umask 077
expect_rc "--agent, umask 077: exit 1 (no agent there)" 1 agentwarn stack nginx-fpm --short \
    --agent tcp://127.0.0.1:1 --agent-token-file "$T/token"
umask "$mask"
check "--agent: a line says the FastCGI port is on the host's loopback" grep -q \
    "^warning: the FastCGI TCP port is on the host's loopback (--agent: .*any local user" \
    "$T/agentwarn.out"
check "--agent, umask 077: php-fpm answered, the socket's check passed" \
    grep -q "^check: the socket .* can connect" "$T/agentwarn.out"
stack_nothing_left "--agent" "$T/agentwarn.out"

# --- each stack and profile, held ----------------------------------------------------------

for combo in nginx-fpm:optimized apache-fpm:optimized nginx-fpm:baseline \
    apache-fpm:baseline nginx-fpm:optimized-reuse apache-fpm:optimized-reuse \
    lighttpd-fpm:optimized lighttpd-fpm:baseline; do
    stack=${combo%%:*}
    profile=${combo#*:}
    web=${stack%-fpm}
    name=$stack-$profile
    held "$name" "$stack" --profile "$profile" || continue
    check "$name: socket permission check line" grep -q "^check: the socket .* can connect" "$OUT"
    check "$name: kept connections check line" grep -q "^check: .*pm.max_children" "$OUT"
    check "$name: every run valid" jtrue -s \
        '[.[] | select(.record == "run")] | length == 12 and all(.[]; .valid and .errors_total == 0)' \
        "$T/$name.jsonl"
    stack_readings "$name" "$web->fpm" 3 "$T/$name.jsonl"
    stack_readings "$name" "fcgi->fpm" 1 "$T/$name.jsonl"
    stack_readings "$name" "fcgi->fpm connect" 2 "$T/$name.jsonl"
    check "$name: the pod study's arithmetic, the bare hop's lifecycle in CPU per request" grep -q \
        '^lifecycle in CPU per request (client + services, medians: fcgi->fpm connect less fcgi->fpm' \
        "$OUT"
    pool=$(sed -n 's/.* pm [a-z, ]* \([0-9]*\) per pool$/\1/p' "$OUT")
    check_eq "$name: the study's load by default: 96 connections in front, then the bare hop kept ($pool workers) and connect" \
        "96 $((pool < 96 ? pool : 96)) 96" \
        "$(fpm_row "$web->fpm" connections | cut -d' ' -f1) $(fpm_row 'fcgi->fpm' connections | cut -d' ' -f1) $(fpm_row 'fcgi->fpm connect' connections | cut -d' ' -f1)"
    # other processes' CPU leaves out the stack's own services: named is their sum, other
    # is the busy time less hopbench's and theirs, and only other + steal makes a run noisy
    check "$name: each run's other_cpu.named_ns > 0 is its services' CPU, subtracted from other" \
        jtrue -s '[.[] | select(.record == "run") | .observed] | all(.[];
            .other_cpu as $o | ([.services[].cpu_ns] | add) as $svc |
            .cpu.system_busy_ns as $busy |
            $o.named_ns > 0 and $o.named_ns == $svc and
            $o.other_ns == ([$busy - $o.client_process_ns - $svc, 0] | max) and
            $o.noisy == ($o.other_ns + $o.steal_ns > $o.threshold_cpus * $o.window_ns))' \
        "$T/$name.jsonl"
    # php-fpm's workers and the web server's read the requests: none of them is root
    web_pid=$(sed -n "s|.*: $web pid \([0-9]*\) on .*|\1|p" "$OUT")
    fpm_pid=$(sed -n 's|.* php-fpm pid \([0-9]*\) on .*|\1|p' "$OUT")
    check_eq "$name: no process of the stack runs as root but the masters ($web $web_pid, php-fpm $fpm_pid)" \
        "" "$(stack_root_procs "$OUT" "$web_pid $fpm_pid" | tr '\n' '|')"
    check "$name: php-fpm's workers run as www-data" sh -c \
        "[ \"\$(pgrep -P '$fpm_pid' | xargs -r -I{} awk '/^Uid:/ { print \$3 }' /proc/{}/status |
            sort -u)\" = \"\$(id -u www-data)\" ]"
    FPM_PORT=$(sed -n 's|.* php-fpm pid [0-9]* on tcp://127.0.0.1:\([0-9]*\) and .*|\1|p' "$OUT")
    FRONT_UNIX=$(sed -n 's|.* and tcp://127.0.0.1:\([0-9]*\) (backend unix).*|\1|p' "$OUT")
    SOCK=$(sed -n 's|.* and unix:\(/[^,]*fpm.sock\), pm .*|\1|p' "$OUT")
    # FastCGI has no authentication: the TCP pool is in a namespace of the stack's own, which
    # another user may not enter (not on the host's loopback), the socket is not theirs
    check "$name: the services run in a network namespace of the stack's own, said so" sh -c \
        "grep -q \"^netns: same: .*this stack's default\" '$OUT' &&
         [ \"\$(readlink /proc/$fpm_pid/ns/net)\" != \"\$(readlink /proc/self/ns/net)\" ] &&
         [ \"\$(readlink /proc/$fpm_pid/ns/net)\" = \"\$(readlink /proc/$web_pid/ns/net)\" ]"
    fcgi_attack "$name" "127.0.0.1:$FPM_PORT"
    fcgi_attack "$name" "$SOCK"
    check "$name: nobody may not enter the stack's namespace" sh -c \
        "! setpriv --reuid=nobody --regid=nogroup --clear-groups -- nsenter -t $fpm_pid -n true 2>/dev/null"
    sent=$(($(jsum "$T/$name.jsonl" 3 requests 0) + $(jsum "$T/$name.jsonl" 3 requests 1)))
    got=$(web_requests "$web" "$FRONT_UNIX" "$web_pid")
    # a request each connection still had in flight when its run stopped may go uncounted
    flight=$(jq -s '[.[] | select(.record == "run" and .proto == "http") | .connections] | add' \
        "$T/$name.jsonl")
    check "$name: $web counted $got requests: hopbench sent $sent + 2 readiness (+ the status request; - at most $flight in flight when a run stopped)" \
        test "${got:-0}" -ge $((sent + 2 - flight)) -a "${got:-0}" -le $((sent + 3))
    front_unix=$(jsum "$T/$name.jsonl" 3 requests 1)
    hop_unix=$(($(jsum "$T/$name.jsonl" 1 requests 1) + $(jsum "$T/$name.jsonl" 2 requests 1)))
    accepted=$(fpm_status "$SOCK" | sed -n 's/^accepted conn: *//p')
    # at most one of hopbench's own per kept connection of each bare-hop run (its close) and
    # per connect-mode run
    hop_own=$(jq -s '[.[] | select(.record == "run" and .proto == "fcgi" and .cell == 1) |
        if .mode == "reuse" then .connections else 1 end] | add' "$T/$name.jsonl")
    lo=$((front_unix + hop_unix))
    want=$((lo + hop_own + 4))
    kept=$(in_ns "$fpm_pid" ss -Htn state established "( dport = :$FPM_PORT )" 2>/dev/null | wc -l)
    if [ "$profile" = optimized-reuse ]; then
        max=$(sed -n 's/^check: the web server keeps at most .* = \([0-9]*\) FastCGI .*/\1/p' "$OUT")
        # kept connections as the study kept them: as many as the workers that serve them
        check_eq "$name: the web server keeps one FastCGI connection per php-fpm worker" \
            "${max:-?}" "$pool"
        if [ "${max:-0}" -lt 96 ]; then
            check "$name: 96 client connections outnumber the ${max:-?} kept: said so" grep -q \
                "^check: clients outnumber kept connections: 96 client connection(s) share the $max kept" "$OUT"
        fi
        check "$name: the web server keeps FastCGI connections ($kept established to php-fpm, at most ${max:-?})" \
            test "$kept" -ge 1 -a "$kept" -le "${max:-0}"
        want=$((want + ${max:-0}))
    else
        check_eq "$name: no FastCGI connection kept" 0 "$kept"
    fi
    if [ "$profile" = optimized-reuse ] && [ "$web" = apache ]; then
        # 96 client connections fill Apache's pool, one kept connection per worker: php-fpm
        # answers no one else (its status page gets no worker), the study's kept = workers
        check_eq "$name: all $pool workers held by Apache's kept connections ($kept over tcp)" \
            "$pool" "$kept"
        check_eq "$name: ... so php-fpm's status page got no worker" "" "$accepted"
    else
        # a request still in flight (queued in the backlog) when its run stopped may never be
        # accepted: at most each unix run's connections
        gone=$(jq -s '[.[] | select(.record == "run" and .cell == 1) | .connections] | add' \
            "$T/$name.jsonl")
        check "$name: php-fpm's unix pool accepted $accepted = $front_unix front + $hop_unix bare-hop requests (+ at most $((want - lo)) of hopbench's own, - at most $gone in flight)" \
            test "${accepted:-0}" -ge "$((lo - gone))" -a "${accepted:-0}" -le "$want"
    fi
    # each service from its own cgroup, against the cgroup's own reading
    CG_WEB=$(sed -n 's/^cgroup: //p' "$OUT" | sed -n 1p)
    CG_FPM=$(sed -n 's/^cgroup: //p' "$OUT" | sed -n 2p)
    check "$name: the front runs measure $web and php-fpm from their cgroups, the bare hop php-fpm" \
        jtrue -s --arg w "$web" --arg cw "cgroup $CG_WEB" --arg cf "cgroup $CG_FPM" \
        '[.[] | select(.record == "run")] |
         all(.[] | select(.proto == "http") | .observed.services;
             map([.name, .source]) == [[$w, $cw], ["php-fpm", $cf]]) and
         all(.[] | select(.proto == "fcgi") | .observed.services;
             map([.name, .source]) == [["php-fpm", $cf]])' "$T/$name.jsonl"
    for svc in "$web:$CG_WEB" "php-fpm:$CG_FPM"; do
        sname=${svc%%:*}
        usage=$(cat "${svc#*:}/cpuacct.usage" 2>/dev/null ||
            sed -n 's/^usage_usec \([0-9]*\)/\1000/p' "${svc#*:}/cpu.stat")
        win=$(jq -s --arg n "$sname" '[.[] | select(.record == "run") | .observed.services[] |
            select(.name == $n) | .cpu_ns] | add' "$T/$name.jsonl")
        check "$name: the runs' CPU of $sname ($win ns) <= its cgroup's own usage ($usage ns)" \
            test "${win:-0}" -gt 0 -a "${win:-0}" -le "${usage:-0}"
        check "$name: the runs' CPU of $sname ($win ns) >= 30 % of its cgroup's usage ($usage ns)" \
            test "$((${win:-0} * 10))" -ge "$((${usage:-0} * 3))"
        row=$(fpm_row "$web->fpm" "CPU µs/req $sname")
        wt=$(fpm_mean "$name" "$stack.tcp" ".observed.services[] | select(.name == \"$sname\") | .cpu_ns_per_op / 1000")
        check "$name: the table's CPU µs/req $sname over tcp (${row% *}) is the runs' median ($wt)" \
            close "${row% *}" "$wt" 0.011
    done
    check "$name: the front runs watch the backend hop, both transports" \
        jtrue -s --arg t "tcp://127.0.0.1:$FPM_PORT" --arg u "unix:$SOCK" \
        '[.[] | select(.record == "run" and .proto == "http") | .observed.watch |
          map([.label, .endpoint])] | length == 4 and
         all(.[]; . == [["backend-tcp", $t], ["backend-unix", $u]])' "$T/$name.jsonl"
    if [ "$profile" != optimized-reuse ]; then
        check "$name: a connection per request: every tcp-backend run held TIME_WAIT sockets on it" \
            jtrue -s --arg l "$stack.tcp" '[.[] | select(.record == "run" and .label == $l) |
            .observed.watch[0] | .time_wait_client.peak + .time_wait_server.peak] |
            length == 2 and all(. > 0)' "$T/$name.jsonl"
        tw=$(fpm_row "$web->fpm" "TIME_WAIT backend, FPM side")
        tw2=$(fpm_row "$web->fpm" "TIME_WAIT backend, web server")
        check "$name: the table's backend TIME_WAIT over tcp (${tw% *} + ${tw2% *}) > 0, over unix 0" \
            test "$((${tw% *} + ${tw2% *}))" -gt 0 -a "${tw#* }" = 0 -a "${tw2#* }" = 0
    fi
    release "$name"
done

# --- Ctrl-C in the middle of a measurement: exit 130, nothing left -------------------------

stack_cut '^measuring fcgi -> php-fpm .the bare hop., tcp' apache-fpm -d 5 --reps 2

done_testing
