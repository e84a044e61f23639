#!/bin/bash
# run --wait uring: kept connections send and receive through one io_uring per thread.
#
# Against the built-in server, over TCP and a Unix socket: the same accounting as
# --wait epoll for the same count (ops, requests, replies, no error; the requests equal the
# server's own count), with -c 16 -t 2 and with --pipeline 8; the client's syscalls are
# the ring's, not a recv and a send per op (strace); a stopped server makes timeouts; Ctrl-C
# while every connection waits for its reply ends the run at once, and so does the
# deadline; each kept connection receives through one multishot recv (the receives armed
# are far fewer than the requests, which equal the server's count), or, where provided
# buffers cannot be registered (nouring --pbuf), one recv per reply, and the run says so; a
# kept connection the server closes is retried (--retry once) or an error
# (--retry none) as with epoll, equal to the server's closes. Where io_uring cannot be set
# up (tests/tools/nouring: a seccomp filter, as a container's default profile) the run polls
# and says so: the placement line and the run's wait in JSON; where the threads' rings fail
# though the placement line's probe did not (nouring --big), a line after the runs. A ring
# whose wait fails (nouring --enter) fails the run with a line that says so, and the run's
# other threads stop with it (nouring --split: one thread's ring waits, fails); so does a lab's
# epoll wait (nouring --epoll), the cell kept as cut short.
# shellcheck disable=SC2016 # $vars in single quotes are jq variables
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

TOOLS=${TOOLS:-build/release/tools}
case $TOOLS in /*) ;; *) TOOLS=$PWD/$TOOLS ;; esac

if ! "$HOPBENCH" run echo unix:/nonexistent --wait uring -n 1 2>&1 | grep -q "cannot connect"; then
    not_ok "setup" "--wait uring is not accepted by $HOPBENCH"
    done_testing
fi

# --- the same accounting as epoll, equal to the server's -------------------------------
for shape in "http -c 16 -t 2" "echo -c 4 -t 1 --pipeline 8"; do
    read -r proto rest <<<"$shape"
    # shellcheck disable=SC2206 # rest is a list of options
    args=($rest)
    for w in epoll uring; do
        n="$proto ${args[*]} --wait $w, -n 4000 on tcp and unix"
        PROTO=$proto start_server "acc_${proto}_$w" --listen tcp://127.0.0.1:0 \
            --listen "unix:$T/acc.sock" || continue
        j=$T/acc_${proto}_$w.json
        hb "acc_run_${proto}_$w" run "$proto" "tcp://127.0.0.1:$SRV_PORT" "unix:$T/acc.sock" \
            "${args[@]}" -n 4000 --warmup 0 --wait "$w" --json "$j"
        run_rc=$RC
        stop_server "$SRV_PID" "$SRV_OUT"
        check_eq "$n: exit 0" 0 "$run_rc"
        rcheck "$n: 4000 ops, requests and replies each, no error, waited with $w" "$j" \
            'all(.runs[]; .ops == 4000 and .requests == 4000 and .replies == 4000 and errors_zero
                 and .wait == "'"$w"'" and hist_ok)'
        sent=$(jq '[.runs[].requests] | add' "$j")
        if [ "$proto" = http ]; then
            check_eq "$n: requests equal the server's" "$(stopped_field requests)" "$sent"
        else # echo has no message boundaries: bytes in = requests x 64
            check_eq "$n: bytes in = the requests x 64" $((sent * 64)) "$(stopped_field 'bytes in')"
        fi
    done
    if [ "$proto" = http ]; then
        rcheck "http --wait uring: both threads used their ring" "$T/acc_http_uring.json" \
            'all(.runs[]; .uring_threads == 2 and .uring_error == null)'
        check "http --wait uring: the placement line says uring" \
            grep -q -- '; --wait uring$' "$T/acc_run_http_uring.out"
    fi
done

# --- the syscalls are the ring's ------------------------------------------------------
# With --wait epoll each op costs the client a recv and a send (and a share of an epoll
# wait); with --wait uring the first batch of each connection goes that way (it is not
# kept yet), every later one through the ring: at most one io_uring_enter per op, no recv,
# send or epoll wait per op.
if ! strace_usable run; then
    ok "--wait uring syscalls under strace # SKIP strace cannot run here"
elif start_server sc --listen tcp://127.0.0.1:0; then
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
        timeout 60 strace -f -c -o "$T/sc.st" "$HOPBENCH" run echo "tcp://127.0.0.1:$SRV_PORT" \
        -c 16 -n 4000 --warmup 0 --wait uring --json "$T/sc.json" >"$T/sc.out" 2>&1
    check_eq "--wait uring under strace: exit 0" 0 "$?"
    stop_server "$SRV_PID" "$SRV_OUT"
    calls() { awk -v re="$1" '$NF ~ re { n += $4 } END { print n + 0 }' "$T/sc.st"; }
    enter=$(calls '^io_uring_enter$') io=$(calls '^(recvfrom|recv|sendto|send)$')
    ep=$(calls '^epoll_(wait|pwait|pwait2)$')
    check "--wait uring: at most one io_uring_enter per op ($enter for 4000)" \
        test "$enter" -gt 0 -a "$enter" -le 4100
    check "--wait uring: no recv or send per op ($io for 4000 ops)" test "$io" -lt 400
    check "--wait uring: no epoll wait per op ($ep for 4000 ops)" test "$ep" -lt 400
fi

# --- one multishot receive per kept connection -----------------------------------------
# A kept connection's replies come through one multishot recv into its thread's provided
# buffers, armed again only when a CQE says it ended (-ENOBUFS): the receives armed are
# about one per connection, where a recv per reply arms one per request (nouring --pbuf
# below: ~8000 for 8000). The counts stay exact: the requests equal the server's own.
for c in 16 64; do
    n="--wait uring -c $c reuse: one multishot receive per connection"
    PROTO=http start_server "ms$c" --listen tcp://127.0.0.1:0 || continue
    hb "ms_run_$c" run http "tcp://127.0.0.1:$SRV_PORT" -c "$c" -n 8000 --warmup 0 \
        --wait uring --json "$T/ms$c.json"
    run_rc=$RC
    stop_server "$SRV_PID" "$SRV_OUT"
    check_eq "$n: exit 0" 0 "$run_rc"
    rcheck "$n: multishot, 8000 ops, requests and replies, no error" "$T/ms$c.json" \
        '.runs[0] | .uring_receive == "multishot" and .ops == 8000 and .requests == 8000
         and .replies == 8000 and errors_zero'
    armed=$(jq '.runs[0].uring_receives_armed' "$T/ms$c.json")
    check "$n: at most 800 receives armed for 8000 requests ($armed)" \
        test "$armed" -ge "$c" -a "$armed" -le 800
    check_eq "$n: requests equal the server's" "$(stopped_field requests)" \
        "$(jq '.runs[0].requests' "$T/ms$c.json")"
done

# --- timeouts, Ctrl-C and the deadline while the server is stopped -----------------------
# stopped_run NAME HOW ARGS... : `run echo ARGS --wait uring -c 4 --warmup 0` in the
# background; 0.5 s in (0.4 for `deadline`; F times that under a sanitizer) the server
# ($stop_srv) is stopped. HOW: `cont` resumes it 0.5 s later and the run ends itself; `int`
# sends the run Ctrl-C 0.3 s later; `deadline` leaves the server stopped until the run has
# ended. Sets RC and DT (ms from the Ctrl-C, or the run's start, to its end); the server runs
# again afterwards. Under a sanitizer the run starts several times slower: the waits before
# the stop, the runs' durations and the bounds are F times longer.
F=$SAN
sleep_ms() { sleep "$(($1 / 1000)).$(printf %03d $(($1 % 1000)))"; }
stopped_run() {
    local name=$1 how=$2 pid t0
    shift 2
    spawn "$name" run echo "$@" -c 4 --warmup 0 --wait uring
    pid=$SPAWNED
    t0=$(now_ms)
    if [ "$how" = deadline ]; then sleep_ms $((400 * F)); else sleep_ms $((500 * F)); fi
    kill -STOP "$stop_srv"
    case $how in
    cont)
        sleep 0.5
        kill -CONT "$stop_srv"
        ;;
    int)
        sleep 0.3
        t0=$(now_ms)
        kill -INT "$pid"
        ;;
    esac
    reap "$pid" 10
    DT=$(($(now_ms) - t0))
    kill -CONT "$stop_srv"
}

if start_server stop --listen tcp://127.0.0.1:0 --listen "unix:$T/stop.sock"; then
    stop_srv=$SRV_PID stop_out=$SRV_OUT
    for ep in "tcp://127.0.0.1:$SRV_PORT" "unix:$T/stop.sock"; do
        n="--wait uring ${ep%%:*}"
        stopped_run "to_${ep%%:*}" cont "$ep" --timeout 0.2 -d $((2 * F)) --json "$T/to.json"
        check_eq "$n, server stopped mid-run: exit 2" 2 "$RC"
        rcheck "$n, server stopped mid-run: timeouts counted, ops kept" "$T/to.json" \
            '.runs[0] | .wait == "uring" and .errors.timeout > 0 and errors_sum and .ops > 0 and
             .interrupted == false'
        stopped_run "int_${ep%%:*}" int "$ep" --timeout 10 -d 10 --json "$T/int.json"
        check_eq "$n, Ctrl-C while waiting for replies: exit 130" 130 "$RC"
        check "$n, Ctrl-C while waiting for replies: ends at once (${DT} ms < $F s)" \
            test "$DT" -lt $((1000 * F))
        rcheck "$n, Ctrl-C while waiting for replies: interrupted, ops kept" "$T/int.json" \
            '.interrupted == true and (.runs[0] | .wait == "uring" and .ops > 0 and errors_zero)'
        stopped_run "dl_${ep%%:*}" deadline "$ep" --timeout 10 -d "$F" --json "$T/dl.json"
        check "$n, replies stopped before the deadline: ends on time (${DT} ms < $((2500 * F)) ms)" \
            test "$DT" -lt $((2500 * F))
        rcheck "$n, replies stopped before the deadline: a ${F}-s window, ops kept" "$T/dl.json" \
            '.runs[0] | .wait == "uring" and .ops > 0 and .window_s >= 0.9 * '"$F"' and
             .window_s < '"$F"' + 0.2 and .interrupted == false'
    done
    stop_server "$stop_srv" "$stop_out"
    check_eq "--wait uring: stopped server exits 0" 0 "$RC"
fi

# nouring_run NAME WHAT MODE ARGS... : `run echo ARGS --warmup 0 --wait uring` against a
# server of its own, under tests/tools/nouring MODE ("": io_uring_setup fails): its output
# in $T/NAME.out and .err, its evidence in $T/NAME.json, its exit in NRC (stop_server sets RC
# to the server's). Returns 1 when the server does not start, or after a SKIP for WHAT where
# nouring does not know this architecture.
nouring_run() {
    local name=$1 what=$2 mode=$3
    shift 3
    start_server "$name-srv" --listen tcp://127.0.0.1:0 || return 1 # its own output file
    NRC=0
    (cd "$T" && exec timeout -k 5 60 "$TOOLS/nouring" ${mode:+"$mode"} "$HOPBENCH" run echo \
        "tcp://127.0.0.1:$SRV_PORT" "$@" --warmup 0 --wait uring --json "$T/$name.json") \
        >"$T/$name.out" 2>"$T/$name.err" || NRC=$?
    stop_server "$SRV_PID" "$SRV_OUT"
    if [ "$NRC" = 77 ]; then
        ok "$what # SKIP nouring does not know this architecture"
        return 1
    fi
}

if [ ! -x "$TOOLS/nouring" ]; then
    not_ok "fallback setup" "$TOOLS/nouring is not built (make $TOOLS/nouring)"
    done_testing
fi

# --- where io_uring cannot be set up: epoll, and the run says so --------------------------
n="--wait uring without io_uring"
if nouring_run fb "$n" "" -c 4 -n 500; then
    check_eq "$n: exit 0" 0 "$NRC"
    check "$n: the placement line says epoll, and why" \
        grep -q -- '; --wait epoll (io_uring cannot be set up: Operation not permitted)$' \
        "$T/fb.out"
    rcheck "$n: the run waited with epoll, says why, 500 ops" "$T/fb.json" \
        '.runs[0] | .wait == "epoll" and .uring_threads == 0
         and .uring_error == "Operation not permitted" and .ops == 500 and errors_zero'
fi

# --- no provided buffer ring (a kernel before 5.19): a receive per reply, and the run says so
n="--wait uring without provided buffers"
if nouring_run pb "$n" --pbuf -c 4 -n 2000; then
    check_eq "$n: exit 0" 0 "$NRC"
    rcheck "$n: the ring waited, a receive armed per reply, 2000 ops, no error" "$T/pb.json" \
        '.runs[0] | .wait == "uring" and .uring_threads == 1 and .uring_receive == "per reply"
         and .uring_receives_armed >= 1990 and .ops == 2000 and .requests == 2000 and errors_zero'
    check "$n: one line says so" \
        grep -qx 'hopbench run: --wait uring: 1 of 1 runs armed a receive per reply (no multishot receive into provided buffers here)' \
        "$T/pb.err"
fi

# --- a thread's ring fails where the placement line's probe did not: the run says so --------
# nouring --big: the probe's ring of 2 entries is set up, the threads' larger ones fail with
# ENOMEM (RLIMIT_MEMLOCK before 5.12). The placement line said uring before the runs; a line
# after them says which runs waited with epoll, as their wait in JSON does.
n="--wait uring, the threads' rings fail"
if nouring_run big "$n" --big -c 4 -t 2 -n 400 --reps 2; then
    check_eq "$n: exit 0" 0 "$NRC"
    rcheck "$n: the runs waited with epoll, say why" "$T/big.json" \
        'all(.runs[]; .wait == "epoll" and .uring_threads == 0
            and .uring_error == "Cannot allocate memory" and .ops == 400 and errors_zero)'
    check "$n: one line says the runs waited with epoll" \
        grep -qx 'hopbench run: --wait uring: 2 of 2 runs waited with epoll, not as the placement line says (a load thread could not set up io_uring: Cannot allocate memory)' \
        "$T/big.err"
    check_eq "$n: one line on stderr" 1 "$(grep -c . "$T/big.err")"
fi

# --- a ring whose wait fails mid-run: the run fails and says why ---------------------------
# nouring --enter: the ring is set up, every io_uring_enter fails with ENOMEM. The thread's
# loop ends at its first wait: not a valid run of a shorter window, nor a quiet one, but a
# run cut short (left out of summaries) by what the error line names.
n="--wait uring, the ring's wait fails"
if nouring_run fe "$n" --enter -c 4 -d 1; then
    check_eq "$n: exit 1" 1 "$NRC"
    check "$n: one line says so" \
        grep -qx 'hopbench run: load thread 0 stopped: its io_uring wait failed: Cannot allocate memory' \
        "$T/fe.err"
    check_eq "$n: one line on stderr" 1 "$(grep -c . "$T/fe.err")"
    rcheck "$n: the evidence has the run cut short" "$T/fe.json" '.runs[0].interrupted == true'
    # and says so as a whole, as it does when the lab's server cut a cell short: a reader of
    # the document's verdict alone must not take it for a whole measurement
    rcheck "$n: the document is cut short too" "$T/fe.json" '.interrupted == true'
    check "$n: the tables say what cut it short" \
        grep -q '^cut short: tcp://127[.]0[.]0[.]1:[0-9]* reuse 64 B: a failed wait ended it' \
        "$T/fe.out"
fi

# --- one thread's wait fails, the other's works: the run stops with it ----------------------
# nouring --split: -c 3 -t 2 gives thread 0 two connections, whose ring of 8 entries is refused
# (it waits with epoll, and works), and thread 1 one, whose ring of 6 is set up and whose wait
# fails. The run fails at once, not after its 60 s of -d with one thread still loading.
n="--wait uring, one thread's wait fails"
t0=$(date +%s%N)
if nouring_run fs "$n" --split -c 3 -t 2 -d 60; then
    took=$((($(date +%s%N) - t0) / 1000000))
    check_eq "$n: exit 1" 1 "$NRC"
    check "$n: a line names the thread" \
        grep -qx 'hopbench run: load thread 1 stopped: its io_uring wait failed: Cannot allocate memory' \
        "$T/fs.err"
    check "$n: the other thread stopped with it (the run took $took ms of -d 60 s)" \
        test "$took" -lt "$(san_s 10)000"
    rcheck "$n: the evidence has the run cut short" "$T/fs.json" \
        '.interrupted == true and .runs[0].interrupted == true'
fi

# --- a lab cell whose epoll wait fails: kept, cut short, in the JSONL as in the evidence -------
# nouring --epoll: a load thread's epoll_pwait2 (it has a timeout) fails with ENOMEM, the lab's
# server's (it has none) works. The first cell is cut short and the lab fails, exit 1.
n="lab, a load thread's epoll wait fails"
mkdir -p "$T/le.cwd" "$T/le.tmp"
NRC=0
(cd "$T/le.cwd" && TMPDIR="$T/le.tmp" exec timeout -k 5 60 "$TOOLS/nouring" --epoll "$HOPBENCH" \
    lab --sizes 64 -d 0.25 --warmup 0.05 --jsonl "$T/le.jsonl" --json "$T/le.json") \
    >"$T/le.out" 2>"$T/le.err" || NRC=$?
if [ "$NRC" = 77 ]; then
    ok "$n # SKIP nouring does not know this architecture"
else
    check_eq "$n: exit 1" 1 "$NRC"
    check "$n: one line says so" \
        grep -qx 'hopbench lab: load thread 0 stopped: its epoll wait failed: Cannot allocate memory' \
        "$T/le.err"
    check_eq "$n: one line on stderr" 1 "$(grep -c . "$T/le.err")"
    rcheck "$n: the evidence has the cell, cut short, and is cut short" "$T/le.json" \
        '.interrupted == true and (.runs | length) == 1 and .runs[0].interrupted == true'
    check_eq "$n: the JSONL holds the evidence's runs" \
        "$(jq -c '[.runs[] | [.cell, .rep, .interrupted]]' "$T/le.json" 2>&1)" \
        "$(jq -c -s '[.[] | select(.record == "run") | [.cell, .rep, .interrupted]]' "$T/le.jsonl" 2>&1)"
    le_spid=$(sed -n 's/^hopbench .* lab: .*; server pid \([0-9][0-9]*\)$/\1/p' "$T/le.out")
    check "$n: its server (pid ${le_spid:-?}) and private directory gone" \
        sh -c "[ -n '$le_spid' ] && ! kill -0 '$le_spid' 2>/dev/null && [ -z \"\$(ls -A '$T/le.tmp')\" ]"
fi

done_testing
