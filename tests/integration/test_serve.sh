#!/bin/bash
# serve: socket files (mode, removal, stale and live sockets, regular files in the
# way), the loopback-only rule, endpoint parsing (shared with run), abstract sockets.
# shellcheck disable=SC2016 # $vars in single quotes are jq variables
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

# --- socket file mode and removal --------------------------------------------------

sock=$T/mode.sock
if start_server mode --listen "unix:$sock"; then
    check "serve: socket file is a socket" test -S "$sock"
    check_eq "serve: socket file mode defaults to 0600" 600 "$(stat -c %a "$sock")"
    check "serve: prints its pid" grep -q "^hopbench: echo server, .* pid $SRV_PID," "$SRV_OUT"
    stop_server "$SRV_PID" "$SRV_OUT"
    check_eq "serve: exit 0 after SIGTERM" 0 "$RC"
    check "serve: prints the stopped line" grep -Eq \
        '^hopbench: stopped: [0-9]+ connections, [0-9]+ bytes in, [0-9]+ bytes out, (.*, )?[0-9]+ errors(, .*)?$' \
        "$SRV_OUT"
    check "serve: socket file removed after SIGTERM" test ! -e "$sock"
fi

sock=$T/mode660.sock
if start_server mode660 --listen "unix:$sock" --socket-mode 0660; then
    check_eq "serve: --socket-mode 0660 honoured" 660 "$(stat -c %a "$sock")"
    stop_server "$SRV_PID" "$SRV_OUT"
    check "serve: 0660 socket removed after SIGTERM" test ! -e "$sock"
fi

expect_rc "serve: --socket-mode 0999 is a usage error" 64 badmode \
    serve echo --listen "unix:$T/badmode.sock" --socket-mode 0999
check "serve: bad --socket-mode creates no socket" test ! -e "$T/badmode.sock"

# --- a regular file where the socket should go ---------------------------------------

reg=$T/regular.sock
printf 'precious data\n' >"$reg"
sum_before=$(md5sum <"$reg")
expect_rc "serve: regular file at socket path -> exit 1" 1 regular serve echo --listen "unix:$reg"
one_line "serve: regular file -> one stderr line naming it" "$T/regular.err" "$reg.*not a socket"
check "serve: regular file still a regular file" test -f "$reg"
check_eq "serve: regular file content untouched" "$sum_before" "$(md5sum <"$reg")"
check "serve: regular file -> no listening line" test ! -s "$T/regular.out"

# --- a stale socket file is replaced ------------------------------------------------

sock=$T/stale.sock
if start_server stale1 --listen "unix:$sock"; then
    kill -KILL "$SRV_PID"
    reap "$SRV_PID" 5
    check "serve: kill -9 leaves the socket file behind" test -S "$sock"
    if start_server stale2 --listen "unix:$sock"; then
        ok "serve: a stale socket file is replaced"
        expect_rc "serve: the replacing server answers" 0 stale_run \
            run echo "unix:$sock" -n 100 --warmup 0
        stop_server "$SRV_PID" "$SRV_OUT"
        check_eq "serve: replacing server exits 0" 0 "$RC"
        check "serve: replaced socket removed after SIGTERM" test ! -e "$sock"
    fi
fi

# --- a live socket or port is not taken over ------------------------------------------

sock=$T/live.sock
if start_server live1 --listen "unix:$sock" --listen tcp://127.0.0.1:0; then
    live_pid=$SRV_PID live_out=$SRV_OUT live_port=$SRV_PORT
    expect_rc "serve: second serve on a live socket path -> exit 1" 1 live2 \
        serve echo --listen "unix:$sock"
    one_line "serve: live socket -> one stderr line" "$T/live2.err" "listening|in use"
    check "serve: live socket file kept" test -S "$sock"
    expect_rc "serve: first server still answers on its socket" 0 live_run \
        run echo "unix:$sock" -n 100 --warmup 0
    expect_rc "serve: second serve on a live TCP port -> exit 1" 1 live3 \
        serve echo --listen "tcp://127.0.0.1:$live_port"
    one_line "serve: live TCP port -> one stderr line" "$T/live3.err" "127.0.0.1:$live_port"
    # A failed second listener must not remove the first listener's socket file.
    expect_rc "serve: second serve (free socket + busy port) -> exit 1" 1 live4 \
        serve echo --listen "unix:$T/other.sock" --listen "tcp://127.0.0.1:$live_port"
    check "serve: failed serve removes the socket it made" test ! -e "$T/other.sock"
    check "serve: live socket still there" test -S "$sock"
    stop_server "$live_pid" "$live_out"
    check_eq "serve: first server exits 0" 0 "$RC"
fi

# --- a socket file another server took over is not removed at exit ---------------------
# A's socket file is removed by hand and B binds the same path: A's exit must leave B's
# socket alone (it used to remove whatever was at the path).

sock=$T/taken.sock
if start_server taken_a --listen "unix:$sock"; then
    a_pid=$SRV_PID a_out=$SRV_OUT
    rm -f "$sock"
    if start_server taken_b --listen "unix:$sock"; then
        b_pid=$SRV_PID b_out=$SRV_OUT
        b_ino=$(stat -c %i "$sock")
        stop_server "$a_pid" "$a_out"
        check_eq "serve: A, its socket file taken over, exits 0 on SIGTERM" 0 "$RC"
        check_eq "serve: A's exit leaves B's socket file in place" "$b_ino" \
            "$(stat -c %i "$sock" 2>/dev/null)"
        expect_rc "serve: B still answers at the path" 0 taken_run \
            run echo "unix:$sock" -n 100 --warmup 0 --json "$T/taken_run.json"
        stop_server "$b_pid" "$b_out"
        check_eq "serve: B exits 0" 0 "$RC"
        check "serve: B's exit removes its own socket file" test ! -e "$sock"
    else
        stop_pid "$a_pid"
    fi
fi

# --- SIGINT or SIGTERM while serve starts up ---------------------------------------------
# serve's stdout is a FIFO filled to the brim, so it blocks writing its first "listening on"
# line: its socket is bound, server_run has not begun. The signal sent then must stop it
# cleanly once the line gets through: exit 0, socket file removed (the default action used
# to kill it there and leave the file). env --default-signal=INT gives it the SIGINT a
# terminal's Ctrl-C would find (a script's background job starts with SIGINT ignored).

for sig in INT TERM; do
    fifo=$T/win_$sig.fifo sock=$T/win_$sig.sock
    mkfifo "$fifo"
    exec 3<>"$fifo"
    dd if=/dev/zero of="$fifo" bs=4096 count=4096 oflag=nonblock 2>/dev/null
    (cd "$T" && exec env --default-signal=INT "$HOPBENCH" serve echo --listen "unix:$sock") \
        >"$fifo" 2>"$T/win_$sig.err" 3>&- &
    win_pid=$!
    PIDS+=("$win_pid")
    for ((i = 0; i < 100; i++)); do
        [ -S "$sock" ] && break
        sleep 0.05
    done
    sleep 0.2
    check "serve, SIG$sig while blocked printing: socket bound, process waiting" \
        sh -c "[ -S '$sock' ] && kill -0 $win_pid"
    kill -"$sig" "$win_pid"
    sleep 0.2
    exec 4<"$fifo" 3>&-
    # to the end (serve's exit closes the last writer), without the filling
    timeout 10 tr -d '\000' <&4 >"$T/win_$sig.out"
    exec 4<&-
    reap "$win_pid" 5
    check_eq "serve, SIG$sig while starting up: exit 0" 0 "$RC"
    check "serve, SIG$sig while starting up: socket file removed" test ! -e "$sock"
    check "serve, SIG$sig while starting up: listened, then stopped" \
        sh -c "grep -aq '^hopbench: listening on unix:$sock\$' '$T/win_$sig.out' &&
               grep -aq '^hopbench: stopped: ' '$T/win_$sig.out'"
    rm -f "$fifo"
done

# --- loopback only unless --allow-remote -------------------------------------------

expect_rc "serve: tcp://0.0.0.0:0 refused with exit 64" 64 remote \
    serve echo --listen tcp://0.0.0.0:0
one_line "serve: non-loopback -> one stderr line naming --allow-remote" "$T/remote.err" \
    "0\.0\.0\.0.*--allow-remote"
check "serve: non-loopback refused before listening" test ! -s "$T/remote.out"
if start_server remote_ok --listen tcp://0.0.0.0:0 --allow-remote; then
    check "serve: --allow-remote listens on 0.0.0.0" grep -Eq \
        '^hopbench: listening on tcp://0\.0\.0\.0:[1-9][0-9]*$' "$SRV_OUT"
    stop_server "$SRV_PID" "$SRV_OUT"
    check_eq "serve: --allow-remote server exits 0" 0 "$RC"
fi

# --- malformed endpoints: serve and run -------------------------------------------

# endpoint|what the one stderr line must say
cases=(
    "tcp://127.0.0.1|missing port"
    "udp://x:1|unknown scheme"
    "unix:|empty"
    "tcp://[::1|missing ']'"
    "tcp://127.0.0.1:99999|out of range"
    "tcp://127.0.0.1:8x|not a plain decimal"
    "tcp://example.com:80|not a numeric IP"
)
for c in "${cases[@]}"; do
    ep=${c%%|*}
    re=${c#*|}
    expect_rc "serve: '$ep' -> exit 64" 64 bad_serve serve echo --listen "$ep"
    one_line "serve: '$ep' -> one stderr line ($re)" "$T/bad_serve.err" "$re"
    expect_rc "run: '$ep' -> exit 64" 64 bad_run run echo "$ep" -n 1
    one_line "run: '$ep' -> one stderr line ($re)" "$T/bad_run.err" "$re"
    check "run: '$ep' -> nothing on stdout" test ! -s "$T/bad_run.out"
done

# --- --wait block: a worker alone with a kept connection waits in recv(), but not for long ---
# While one client plays ping-pong with a one-thread server, the server must still accept
# and serve other connections, and stop on SIGTERM, promptly; over either transport.

# held TR PID OUT : waits (at most 10 s) until the run PID has printed its placement line to OUT
# (its pre-flight probe's connection closed by then) and has an established TR (tcp or unix)
# socket: its load's own.
# shellcheck disable=SC2317 # called through check
held() {
    local i
    for ((i = 0; i < 200; i++)); do
        grep -q '^placement:' "$3" 2>/dev/null &&
            ss -H"$([ "$1" = tcp ] && echo t || echo x)"np state established 2>/dev/null |
            grep -q "pid=$2," && return 0
        alive "$2" || return 1
        sleep 0.05
    done
    return 1
}

for tr in tcp unix; do
    if [ "$tr" = tcp ]; then lst=tcp://127.0.0.1:0; else lst=unix:$T/hold.sock; fi
    start_server "hold_$tr" --listen "$lst" --threads 1 --wait block || continue
    hold_ep=tcp://127.0.0.1:$SRV_PORT
    [ "$tr" = unix ] && hold_ep=$lst
    check "serve --wait block: announced" grep -q 'wait block$' "$SRV_OUT"
    spawn "hold_busy_$tr" run echo "$hold_ep" -c 1 -t 1 --mode reuse --wait block -d 4 \
        --warmup 0 --json "$T/hold_busy_$tr.json"
    busy_pid=$SPAWNED
    # The other client comes once the busy run holds its connection, not after a fixed while
    # (a sanitizer build on a busy box can take longer than that to start, and a server that
    # could not serve another client would then be missed).
    check "serve --wait block $tr: the busy run holds its connection" held "$tr" "$busy_pid" \
        "$T/hold_busy_$tr.out"
    expect_rc "serve --wait block $tr, busy with a kept connection: another client served" 0 \
        "hold_other_$tr" run echo "$hold_ep" --mode connect -n 200 --warmup 0 \
        --json "$T/hold_other_$tr.json"
    # Served while the busy run (-d 4) still held its connection, pre-flight probe and all; and
    # promptly: the run's own window, not the wall time around it (a TSan binary's start and
    # exit took about 1 s on a busy 2-core box, nothing to do with the server).
    busy_state=$(ps -o stat= -p "$busy_pid" 2>/dev/null) # Z: ended, not yet reaped
    check "serve --wait block $tr, busy with a kept connection: served while it was held" \
        test -n "$busy_state" -a "${busy_state#Z}" = "$busy_state"
    dt=$(jq '.runs[0].window_s * 1000 | floor' "$T/hold_other_$tr.json" 2>/dev/null)
    check "serve --wait block $tr, busy with a kept connection: 200 connects in ${dt:-?} ms < 3 s" \
        test "${dt:-3000}" -lt 3000
    jcheck "serve --wait block $tr, busy with a kept connection: 200 ops, no errors" \
        "$T/hold_other_$tr.json" '.runs[0] | .ops == 200 and .errors_total == 0'
    t0=$(now_ms)
    stop_server "$SRV_PID" "$SRV_OUT"
    dt=$(($(now_ms) - t0))
    check_eq "serve --wait block $tr, busy with a kept connection: SIGTERM -> exit 0" 0 "$RC"
    check "serve --wait block $tr, busy with a kept connection: stops at once (${dt} ms < 1 s)" \
        test "$dt" -lt 1000
    reap "$busy_pid" 10
    check "serve --wait block $tr, busy with a kept connection: the busy run ended" \
        test "$RC" != timeout
    # (the server was stopped under it, so it ends with errors)
    jcheck "serve --wait block $tr: the busy run measured" "$T/hold_busy_$tr.json" \
        '.runs[0] | .wait == "block" and .ops > 1000'
done

# --- --wait block is what it says: the syscalls each side makes per op ----------------
# With --wait epoll each round trip costs the client an epoll wait and a recv; with --wait
# block the recv alone (sleeping), on either transport; the server's worker likewise.
# strace counts the calls of both processes over the same 2000 round trips.

epoll_calls() { awk '$NF ~ /^epoll_(wait|pwait|pwait2)$/ { n += $4 } END { print n + 0 }' "$1"; }
recv_calls() { awk '$NF ~ /^(recvfrom|recv)$/ { n += $4 } END { print n + 0 }' "$1"; }
if ! strace_usable attach; then
    ok "--wait epoll/block syscalls under strace # SKIP strace cannot attach here (not installed, or ptrace denied)"
else
    for w in epoll block; do
        for tr in tcp unix; do
            if [ "$tr" = tcp ]; then lst=tcp://127.0.0.1:0; else lst=unix:$T/sc.sock; fi
            start_server "sc_${w}_$tr" --listen "$lst" --threads 1 --wait "$w" || continue
            sc_pid=$SRV_PID sc_out=$SRV_OUT
            sc_ep=tcp://127.0.0.1:$SRV_PORT
            [ "$tr" = unix ] && sc_ep=$lst
            spawn_cmd "sc_strace_${w}_$tr" strace -f -c -o "$T/sc_srv.st" -p "$sc_pid"
            st_pid=$SPAWNED
            sleep 0.5
            # (LeakSanitizer cannot run under ptrace: an ASan build leaves leak checks to the rest)
            ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
                timeout 60 strace -f -c -o "$T/sc_cli.st" "$HOPBENCH" run echo "$sc_ep" -n 2000 \
                --warmup 0 --wait "$w" --json "$T/sc_cli.json" >"$T/sc_cli.out" 2>&1
            check_eq "--wait $w $tr under strace: exit 0" 0 "$?"
            kill -INT "$st_pid" 2>/dev/null
            reap "$st_pid" 5
            stop_server "$sc_pid" "$sc_out"
            ce=$(epoll_calls "$T/sc_cli.st") cr=$(recv_calls "$T/sc_cli.st")
            se=$(epoll_calls "$T/sc_srv.st") sr=$(recv_calls "$T/sc_srv.st")
            if [ "$w" = epoll ]; then
                check "--wait epoll $tr: client waits in epoll per op ($ce epoll, $cr recv)" \
                    test "$ce" -ge 2000 -a "$cr" -ge 2000
                check "--wait epoll $tr: server waits in epoll per op ($se epoll, $sr recv)" \
                    test "$se" -ge 2000 -a "$sr" -ge 2000
            else
                check "--wait block $tr: client sleeps in recv ($ce epoll, $cr recv for 2000 ops)" \
                    test "$ce" -lt 100 -a "$cr" -ge 2000
                # (a worker polls again after each 1 ms of requests; strace slows each round trip)
                check "--wait block $tr: server sleeps in recv ($se epoll, $sr recv for 2000 ops)" \
                    test "$se" -lt 1000 -a "$sr" -ge 2000
            fi
        done
    done
    # A paced client (a request every 5 ms, under the 20-ms receive timeout): the worker backs
    # off to its loop as for an idle one, not a stretch (an epoll_ctl pair) per request.
    if start_server sc_paced --listen "unix:$T/scp.sock" --threads 1 --wait block; then
        sc_pid=$SRV_PID sc_out=$SRV_OUT
        spawn_cmd sc_strace_paced strace -f -c -o "$T/scp_srv.st" -p "$sc_pid"
        st_pid=$SPAWNED
        sleep 0.5
        timeout 60 "$HOPBENCH" run echo "unix:$T/scp.sock" -c 1 --rate 200 -n 300 --warmup 0 \
            --json "$T/scp.json" >"$T/scp.out" 2>&1
        check_eq "--wait block, paced client: exit 0" 0 "$?"
        kill -INT "$st_pid" 2>/dev/null
        reap "$st_pid" 5
        stop_server "$sc_pid" "$sc_out"
        sctl=$(awk '$NF == "epoll_ctl" { n += $4 } END { print n + 0 }' "$T/scp_srv.st")
        check "--wait block, paced client: the server's epoll_ctl calls are few ($sctl for 300 ops)" \
            test "$sctl" -lt 75
    fi
fi

# --- abstract socket, end to end ----------------------------------------------------

name=hopbench-test-$$
if start_server abstract --listen "unix:@$name"; then
    check "serve: abstract socket listening line" grep -qx "hopbench: listening on unix:@$name" \
        "$SRV_OUT"
    expect_rc "run: abstract socket -> exit 0" 0 abs_run \
        run echo "unix:@$name" -n 300 --warmup 0 --json "$T/abs.json"
    jcheck "run: abstract socket -> 300 ops, no errors, unix" "$T/abs.json" \
        '.runs[0] | .ops == 300 and .errors_total == 0 and .valid and .transport == "unix"
         and .endpoint == "unix:@'"$name"'"'
    stop_server "$SRV_PID" "$SRV_OUT"
    check_eq "serve: abstract server exits 0" 0 "$RC"
    check "serve: abstract socket left no file behind" test ! -e "@$name" -a ! -e "$T/@$name"
    expect_rc "run: abstract socket gone after stop -> exit 1" 1 abs_gone \
        run echo "unix:@$name" -n 1 --warmup 0
fi

done_testing
