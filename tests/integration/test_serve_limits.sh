#!/bin/bash
# serve's limits: a backlog that follows net.core.somaxconn, so 10,000 connections
# open over TCP and a Unix socket alike with no EAGAIN; the fd limit (raised at start,
# a spare fd for EMFILE, --max-conns) so that clients beyond it get a quick close, not
# a timeout; bounded memory under clients that hold large unfinished requests, given
# back when they close; an oversized request head gets 431 and a close.
# shellcheck disable=SC2016 # $vars in single quotes are jq variables
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

TOOLS=${TOOLS:-build/release/tools}
case $TOOLS in /*) ;; *) TOOLS=$PWD/$TOOLS ;; esac

# The number after WHAT on serve's limits line ("backlog", "fd limit", "max conns").
startup_field() {
    sed -n "s/^hopbench: limits: \(.*, \)\{0,1\}$2 \([0-9][0-9]*\)\(,.*\)\{0,1\}\$/\2/p" "$1"
}

# --- 10,000 connections: no EAGAIN on either transport -----------------------------
# The backlog is min(what listen asks, somaxconn) for TCP and AF_UNIX alike, and an
# AF_UNIX connect() that finds the accept queue full fails at once with EAGAIN (the client
# tries it again 1 ms later: a connect retry). With
# at most somaxconn connections open or opening, the default backlog can never be
# full. The host's somaxconn may be below 10,000: in a private network namespace
# (somaxconn is per namespace) it is raised; without one the test uses somaxconn
# connections. Each of 2 x 2 runs is bounded by a count (2 ops per connection) and a
# timeout. The server raises its own soft fd limit; the client's is raised in a subshell.
# Each side needs an fd per connection and a few of its own; in connect mode the server
# may still hold a connection the client has closed: 2n + 200 fds leave room for both.
hard=$(ulimit -Hn)
n=10000
[ "$hard" != unlimited ] && [ "$hard" -lt $((2 * n + 200)) ] && n=$(((hard - 200) / 2))
cat >"$T/scale.sh" <<'NS'
set -u
hb=$1 d=$2 n=$3 ns=$4
if [ "$ns" = 1 ]; then
    ip link set lo up || exit 3
    echo $((n + 1024)) >/proc/sys/net/core/somaxconn || exit 3
fi
# serve raises its own soft fd limit to the hard one; the client gets its soft limit raised
"$hb" serve echo -l tcp://127.0.0.1:0 -l "unix:$d/scale.sock" >"$d/scalesrv.out" 2>&1 &
srv=$!
trap 'kill $srv 2>/dev/null; wait $srv' EXIT
for ((i = 0; i < 100; i++)); do
    grep -q '^hopbench: echo server' "$d/scalesrv.out" && break
    sleep 0.05
done
cat /proc/sys/net/core/somaxconn >"$d/somaxconn"
port=$(sed -n 's|^hopbench: listening on tcp://.*:\([0-9][0-9]*\)$|\1|p' "$d/scalesrv.out")
for mode in reuse connect; do
    for ep in "tcp://127.0.0.1:$port" "unix:$d/scale.sock"; do
        t=${ep%%:*}
        (ulimit -Sn "$(ulimit -Hn)" && exec timeout -k 5 90 "$hb" run echo "$ep" -c "$n" -t 2 \
            -n $((2 * n)) --warmup 0 --mode "$mode" --json "$d/scale-$mode-$t.json") \
            >"$d/scale-$mode-$t.out" 2>&1
        echo $? >"$d/scale-$mode-$t.rc"
    done
done
NS
ns=()
if unshare -n true 2>/dev/null; then
    ns=(unshare -n)
fi
RC=0
if [ ${#ns[@]} -gt 0 ]; then
    timeout -k 5 300 "${ns[@]}" bash "$T/scale.sh" "$HOPBENCH" "$T" "$n" 1 >"$T/scale.out" 2>&1 || RC=$?
else
    smc=$(cat /proc/sys/net/core/somaxconn)
    [ "$smc" -lt "$n" ] && n=$smc
    echo "# no private network namespace: $n connections (net.core.somaxconn)"
    timeout -k 5 300 bash "$T/scale.sh" "$HOPBENCH" "$T" "$n" 0 >"$T/scale.out" 2>&1 || RC=$?
fi
check_eq "scale: the script ran" 0 "$RC"
check_eq "scale: serve's default backlog is net.core.somaxconn" "$(cat "$T/somaxconn" 2>/dev/null)" \
    "$(startup_field "$T/scalesrv.out" backlog)"
for mode in reuse connect; do
    for t in tcp unix; do
        f=$T/scale-$mode-$t.json
        jcheck "scale: $mode $t, $n connections: no EAGAIN (no connect retried), ops done" "$f" \
            ".runs[0] | .connect_retries == 0 and .ops > 0 and .connects >= $n
             and .connections == $n"
    done
done

# --- out of fds: a quick close, not a timeout ---------------------------------------
# The server runs under `ulimit -n 64` (soft and hard: it cannot raise it). 100 client
# connections in reuse mode: those it cannot hold must end at once (reset or short,
# then the client reconnects), never wait out the client's --timeout. With the default
# --max-conns the server closes the ones over it; with --max-conns above its fds,
# accept() fails with EMFILE and the spare fd takes and closes them. Either way it
# serves the connections it holds, and serves new ones once the flood has gone.
nofd_case() { # NAME SERVE-ARGS... ; sets F (the flood's JSON)
    local name=$1 srv
    shift
    (ulimit -n 64 && exec "$HOPBENCH" serve echo -t 1 -l "unix:$T/$name.sock" "$@") \
        >"$T/$name.out" 2>&1 &
    srv=$!
    PIDS+=("$srv")
    for ((i = 0; i < 100; i++)); do
        grep -q '^hopbench: echo server' "$T/$name.out" 2>/dev/null && break
        sleep 0.05
    done
    check_eq "$name: the limits line gives the fd limit" 64 "$(startup_field "$T/$name.out" "fd limit")"
    hb "$name-flood" run echo "unix:$T/$name.sock" -c 100 -d 1 --warmup 0 --timeout 3 \
        --json "$T/$name-flood.json"
    F=$T/$name-flood.json
    jcheck "$name: the flood's refused connections are resets or short reads, no timeout" "$F" \
        '.runs[0] | .errors.timeout == 0 and .connect_retries == 0 and
         (.errors.reset + .errors.short) > 0 and .ops > 0'
    expect_rc "$name: after the flood, 4 connections are served" 0 "$name-after" \
        run echo "unix:$T/$name.sock" -c 4 -d 0.3 --warmup 0 --json "$T/$name-after.json"
    jcheck "$name: after the flood, no error" "$T/$name-after.json" \
        '.runs[0] | .errors_total == 0 and .ops > 0'
    stop_server "$srv" "$T/$name.out"
    check_eq "$name: the server exits 0 after SIGTERM" 0 "$RC"
}

nofd_case maxconns
mc=$(startup_field "$T/maxconns.out" "max conns")
check "maxconns: the default max conns is below the fd limit" test "${mc:-64}" -lt 64
check "maxconns: the stopped line counts connections over max conns" \
    test "$(stopped_field "over max conns")" -gt 0
nofd_case emfile --max-conns 1000
check "emfile: the stopped line counts connections refused for want of fds" \
    test "$(stopped_field "out of fds")" -gt 0

# --- memory: 1,000 clients holding a 60 KB unfinished head -----------------------------
# The bound while they are held: each connection holds at most the bytes serve's
# limits line gives per connection. After they close, the pages each of them wrote
# are given back (MADV_DONTNEED), but for the bytes each worker thread keeps warm for
# reuse (also on the limits line); what else may remain is at most one page per
# connection (its slot's bookkeeping), far below the 60 KB each one held. The baseline
# is taken after a run of the same load, so the load's own connections are in it.
rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }
# AddressSanitizer writes the shadow of the slots' mappings (an eighth of them, made once,
# as the slots are): that is the sanitizer's memory, not the server's, so under ASan the
# RSS counted is every mapping's but the shadow's (x86-64: 0x7fff8000-0x10007fff8000).
if grep -q __asan_init "$HOPBENCH" 2>/dev/null; then
    rss_kb() {
        awk 'function hex(s,  n, i) { n = 0
                 for (i = 1; i <= length(s); i++) n = n * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
                 return n }
             /^[0-9a-f]+-[0-9a-f]+ / { split($1, r, "-"); lo = hex(r[1])
                 shadow = lo >= 2147450880 && lo < 17594333495296 }
             /^Rss:/ && !shadow { kb += $2 }
             END { print kb + 0 }' "/proc/$1/smaps"
    }
fi
# ThreadSanitizer maps shadow memory beside every page the server touches and keeps
# freed memory in its own allocator, so VmRSS says nothing about the server's bound there.
if grep -q __tsan_init "$HOPBENCH" 2>/dev/null; then
    ok "memory: RSS bounds # SKIP a ThreadSanitizer build: its shadow memory is in the RSS"
elif [ ! -x "$TOOLS/hold" ]; then
    not_ok "memory: setup" "$TOOLS/hold is not built (make $TOOLS/hold)"
elif PROTO=http start_server mem --listen tcp://127.0.0.1:0; then
    held=1000 head=61440
    per=$(sed -n 's/^hopbench: limits: .*, \([0-9][0-9]*\) B per connection, .*$/\1/p' "$SRV_OUT")
    warm=$(sed -n 's/^hopbench: limits: .*, \([0-9][0-9]*\) B kept per thread$/\1/p' "$SRV_OUT")
    threads=$(sed -n 's/^hopbench: http server, \([0-9][0-9]*\) threads,.*$/\1/p' "$SRV_OUT")
    check "memory: the limits line gives the bytes per connection and kept per thread" \
        test -n "$per" -a -n "$warm" -a -n "$threads"
    expect_rc "memory: warm-up load" 0 memwarm run http "tcp://127.0.0.1:$SRV_PORT" -c 8 \
        -d 0.3 --warmup 0 --json "$T/memwarm.json"
    base=$(rss_kb "$SRV_PID")
    (ulimit -n $((held + 100)) && exec "$TOOLS/hold" "$SRV_PORT" "$held" "$head" 60) \
        >"$T/hold.out" 2>"$T/hold.err" &
    hp=$!
    PIDS+=("$hp")
    for ((i = 0; i < 400; i++)); do
        grep -q '^held ' "$T/hold.out" 2>/dev/null && break
        alive "$hp" || break
        sleep 0.05
    done
    check "memory: $held connections hold a $head-byte unfinished head" grep -q "^held $held\$" \
        "$T/hold.out"
    expect_rc "memory: a load beside them: exit 0" 0 memload run http \
        "tcp://127.0.0.1:$SRV_PORT" -c 8 -d 1 --warmup 0 --json "$T/memload.json"
    jcheck "memory: the load beside them has no error" "$T/memload.json" \
        '.runs[0] | .errors_total == 0 and .ops > 0'
    during=$(rss_kb "$SRV_PID")
    bound=$((base + (held + 8) * ${per:-0} / 1024))
    check "memory: RSS while held ($during kB) <= baseline + connections x per-connection bound ($bound kB)" \
        test "$during" -le "$bound"
    check "memory: RSS while held grew by at least the held bytes (the check can fail)" \
        test $((during - base)) -ge $((held * head * 9 / 10 / 1024))
    stop_pid "$hp"
    # The server sees the closes on its next wake-ups: poll RSS for up to 5 s.
    after_bound=$((base + ${threads:-0} * ${warm:-0} / 1024 + held * 4))
    for ((i = 0; i < 100; i++)); do
        after=$(rss_kb "$SRV_PID")
        [ "$after" -le "$after_bound" ] && break
        sleep 0.05
    done
    check "memory: RSS after they closed ($after kB) <= baseline ($base kB) + kept + one page each ($after_bound kB)" \
        test "$after" -le "$after_bound"
    stop_server "$SRV_PID" "$SRV_OUT"
    check_eq "memory: the server exits 0 after SIGTERM" 0 "$RC"
fi

# --- an oversized head: 431 and a close ----------------------------------------------
if PROTO=http start_server big --listen tcp://127.0.0.1:0; then
    exec {fd}<>"/dev/tcp/127.0.0.1/$SRV_PORT"
    {
        printf 'GET / HTTP/1.1\r\nX-Fill: '
        head -c 70000 /dev/zero | tr '\0' a
    } 1>&"$fd" 2>/dev/null
    reply=$(timeout 5 head -c 200 <&"$fd" 2>/dev/null | head -n 1 | tr -d '\r')
    exec {fd}>&-
    check_eq "big head: 431 and a close" "HTTP/1.1 431 Request Header Fields Too Large" "$reply"
    stop_server "$SRV_PID" "$SRV_OUT"
    check "big head: counted as a bad request" test "$(stopped_field "bad requests")" -ge 1
fi

done_testing
