#!/bin/bash
# What a plan needs of the process's limits, checked before anything runs:
#   - file descriptors: a soft open-files limit too low for -c is raised (the hard limit
#     allows it), and the run, the lab (its forked server too) and an open-loop --rate run
#     complete with no error; a hard limit too low refuses the plan at once, exit 71, one line;
#   - fds that run out anyway (the limit lowered from outside with prlimit while the run goes
#     on, as another process's limits manager would) are counted as `fds`, not `other`;
#   - memory: --size 64MiB --pipeline 200 (12.5 GiB of request copies per thread) is refused at
#     once, exit 71, one line, nothing allocated: against MemAvailable (enough threads to pass
#     it) and against a private memory cgroup's limit;
#   - abstract sockets: serve --socket-mode with unix:@name is refused (exit 64), and serve warns
#     on stderr for each abstract socket it listens on.
# shellcheck disable=SC2016 # $vars in single quotes are jq variables
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

hard=$(ulimit -Hn)
[ "$hard" = unlimited ] && hard=1048576

# Raising the soft limit for the server too, where the hard limit allows: it takes -c 1000.
if [ "$hard" -ge 2048 ]; then ulimit -Sn "$hard"; fi
start_server srv -l tcp://127.0.0.1:0 -t 1 || done_testing
EP=tcp://127.0.0.1:$SRV_PORT

# --- fds: the refusal (hard limit 256: bash's ulimit -n sets both limits) ------------------

# limited OUT ULIMIT-ARGS -- CMD-ARGS... : hb OUT CMD-ARGS... in a subshell under ulimit ULIMIT-ARGS.
limited() {
    local out=$1 lim=()
    shift
    while [ "$1" != -- ]; do
        lim+=("$1")
        shift
    done
    shift
    RC=0
    (ulimit "${lim[@]}" && cd "$T" && exec timeout -k 5 60 "$HOPBENCH" "$@") \
        >"$T/$out.out" 2>"$T/$out.err" || RC=$?
}

limited refuse -n 256 -- run echo -c 1000 -d 0.5 --json "$T/refuse.json" "$EP"
check_eq "run -c 1000 under a hard limit of 256: exit 71" 71 "$RC"
one_line "run -c 1000 under a hard limit of 256: one line on stderr" "$T/refuse.err" \
    '^hopbench run: needs [0-9]+ file descriptors, the hard limit is 256: raise it \(ulimit -n [0-9]+'
need=$(sed -n 's/.*needs \([0-9]*\) file descriptors.*/\1/p' "$T/refuse.err")
# the connections, an epoll, stdin/stdout/stderr and the spare: no fewer
check "the refusal counts every connection, the epoll, the std fds and the spare" \
    test "${need:-0}" -ge $((1000 + 1 + 3 + 16))
check "the refusal tells the ulimit -n that is enough" grep -q "ulimit -n ${need:-x}," "$T/refuse.err"
check "refused: no run done (nothing on stdout, no evidence)" \
    test ! -s "$T/refuse.out" -a ! -e "$T/refuse.json"

limited refuse_rate -n 64 -- run echo -c 100 --rate 1000 -d 0.5 --json "$T/rr.json" "$EP"
check_eq "run --rate -c 100 under a hard limit of 64: exit 71" 71 "$RC"
one_line "run --rate: one line on stderr" "$T/refuse_rate.err" 'needs [0-9]+ file descriptors'

limited refuse_lab -n 64 -- lab --quick --sizes 64 -c 100 --json "$T/rl.json"
check_eq "lab -c 100 under a hard limit of 64: exit 71" 71 "$RC"
one_line "lab: one line on stderr" "$T/refuse_lab.err" \
    '^hopbench lab: needs [0-9]+ file descriptors, the hard limit is 64'
check "lab refused: no server started, no directory left" \
    test ! -s "$T/refuse_lab.out" -a ! -e "$T/rl.json"

# --- fds: raising the soft limit (the hard one allows) ------------------------------------

if [ "$hard" -lt 2048 ]; then
    ok "raise the soft limit # SKIP the hard open-files limit is $hard, below 2048"
else
    # run_raised OUT SOFT CMD-ARGS... : hopbench CMD-ARGS... under a soft limit of SOFT, in the
    # background; reads its soft limit from /proc once it has printed its placement (set by
    # then) into RAISED, and waits for it (RC). The placement line comes before the warm-up:
    # the runs warm up 1 s so the process is still there to be read on a busy box (with
    # 0.2 s, a loaded box once read it after it had exited).
    run_raised() {
        local out=$1 soft=$2 pid
        shift 2
        spawn_cmd "$out" bash -c 'ulimit -Sn '"$soft"' && exec "$0" "$@"' "$HOPBENCH" "$@"
        pid=$SPAWNED RAISED=
        for ((i = 0; i < 200; i++)); do
            grep -q '^placement:' "$T/$out.out" 2>/dev/null && break
            alive "$pid" || break
            sleep 0.05
        done
        RAISED=$(nofile "$pid")
        reap "$pid" 60
    }
    nofile() { awk '/^Max open files/ { print $4 }' "/proc/$1/limits" 2>/dev/null; }

    run_raised raise 256 run echo -c 1000 -t 2 -n 2000 --warmup 1 --json "$T/raise.json" "$EP"
    check "run -c 1000 under a soft limit of 256: raised to ${RAISED:-?}, enough for 1000 sockets" \
        test "${RAISED:-0}" -ge $((1000 + 2 + 3 + 16))
    check_eq "run -c 1000 under a soft limit of 256 (hard $hard): exit 0" 0 "$RC"
    rcheck "run -c 1000: 1000 connections, 2000 ops, no error of any kind (no fds, no other)" \
        "$T/raise.json" '.runs[0] | .connections == 1000 and .ops == 2000 and errors_zero'

    run_raised raise_rate 64 run echo -c 100 --rate 50% -n 200 --warmup 1 \
        --json "$T/raise_rate.json" "$EP"
    check "run --rate 50% -c 100 under a soft limit of 64: raised to ${RAISED:-?}" \
        test "${RAISED:-0}" -ge $((100 + 1 + 3 + 16))
    # 200 ops over 100 connections last a few ms: a run that did not keep up with its rate
    # in them is saturated, which alone makes the exit 2.
    want=$(jq 'if .runs[0].open_loop.saturated == true then 2 else 0 end' "$T/raise_rate.json")
    check_eq "run --rate 50% -c 100 under a soft limit of 64: exit 0, or 2 when saturated (here $want)" \
        "$want" "$RC"
    rcheck "run --rate 50% -c 100: 200 ops, no error" "$T/raise_rate.json" \
        '.runs[0] | .connections == 100 and .ops == 200 and errors_zero and .open_loop.rate_share == 0.5'

    # The lab's server is its own child: it has the raised limit too, or its accepts fail. Both
    # limits are read from /proc while the lab runs; the cells must see no error of any kind (a
    # cell of 0.3 s with 100 connections may complete no op in its window on a loaded box: that
    # alone is exit 2, and no error).
    spawn_cmd raise_lab bash -c 'ulimit -Sn 64 && exec "$0" "$@"' "$HOPBENCH" lab --quick \
        --sizes 64 -c 100 -d 0.3 --warmup 0.1 --json "$T/raise_lab.json"
    lab_pid=$SPAWNED srv_pid=
    for ((i = 0; i < 200; i++)); do
        srv_pid=$(sed -n 's/^hopbench .* lab: .*; server pid \([0-9][0-9]*\)$/\1/p' "$T/raise_lab.out")
        [ -n "$srv_pid" ] && break
        alive "$lab_pid" || break
        sleep 0.05
    done
    lab_soft=$(nofile "$lab_pid") srv_soft=$(nofile "${srv_pid:-0}")
    reap "$lab_pid" 60
    check "lab -c 100 under a soft limit of 64: the server child's limit (${srv_soft:-?}) holds 200 accepted connections" \
        test "${srv_soft:-0}" -ge 202
    check "lab -c 100: the client's limit (${lab_soft:-?}) is the same raised one" \
        test "${lab_soft:-0}" = "${srv_soft:-x}"
    check "lab -c 100 under a soft limit of 64: exit 0, or 2 for a cell with no op only" \
        test "$RC" = 0 -o \( "$RC" = 2 -a -s "$T/raise_lab.json" \)
    rcheck "lab -c 100: 4 cells of 100 connections, no error of any kind" "$T/raise_lab.json" \
        '(.runs | length) == 4 and all(.runs[]; .connections == 100 and errors_zero)'
fi

# --- fds that run out anyway: counted as fds ----------------------------------------------

# Each op opens a socket (--mode connect). While the run goes on, its soft limit is lowered
# to 3 (every new fd is refused, EMFILE), then put back before the run ends.
spawn emfile run echo --mode connect -c 4 -d 4 --warmup 0 --json "$T/emfile.json" "$EP"
pid=$SPAWNED
for ((i = 0; i < 100; i++)); do
    grep -q '^placement:' "$T/emfile.out" 2>/dev/null && break
    sleep 0.05
done
sleep 0.3
soft=$(prlimit --pid "$pid" --nofile --noheadings --output SOFT)
prlimit --pid "$pid" --nofile=3: && sleep 0.3 && prlimit --pid "$pid" --nofile="$soft":
reap "$pid" 30
check_eq "a run whose fds ran out: exit 2 (errors)" 2 "$RC"
rcheck "EMFILE is counted as fds, none as other, and the run went on" "$T/emfile.json" \
    '.runs[0] | .errors.fds > 0 and .errors.other == 0 and errors_sum and .ops > 0'
check "the errors line names fds" grep -Eq '^errors: .* fds=[0-9]+' "$T/emfile.out"

# --- memory --------------------------------------------------------------------------------

# mem_refused NAME OUT : the last run was refused at once for memory: exit 71, one line, no run.
mem_refused() {
    check_eq "$1: exit 71" 71 "$RC"
    one_line "$1: one line on stderr" "$T/$2.err" \
        '^hopbench run: needs [0-9.]+ GiB of memory for its buffers and histograms, [0-9.]+ [KMG]iB is available \('
    check "$1: nothing run (no stdout)" test ! -s "$T/$2.out"
}

# Enough threads that their request copies (12.5 GiB each) pass MemAvailable.
avail_kb=$(sed -n 's/^MemAvailable: *\([0-9]*\) kB$/\1/p' /proc/meminfo)
threads=$((avail_kb / (200 * 64 * 1024) + 1))
if [ -z "$avail_kb" ] || [ "$threads" -gt 1024 ]; then
    ok "memory refusal # SKIP MemAvailable '${avail_kb:-?}' kB: more than -t 1024 can ask"
else
    RC=0
    (cd "$T" && exec /usr/bin/time -f '%M' -o "$T/mem.rss" timeout -k 5 60 "$HOPBENCH" \
        run echo --size 64MiB --pipeline 200 -c "$threads" -t "$threads" "$EP") \
        >"$T/mem.out" 2>"$T/mem.err" || RC=$?
    rss=$(tail -n 1 "$T/mem.rss")
    check "refused before allocating: peak RSS ${rss:-?} KiB is under 64 MiB" \
        test "${rss:-999999}" -lt 65536
    mem_refused "--size 64MiB --pipeline 200 -t $threads (more than MemAvailable)" mem
    want=$(awk -v t="$threads" 'BEGIN { printf "%.1f", t * 200 * 64 / 1024 }')
    check "the refusal says $want GiB is needed" grep -q "needs $want GiB" "$T/mem.err"
fi

# A private memory cgroup with a 1 GiB limit: the brief's one-thread plan does not fit it.
if ! test_cgroup limits; then
    ok "memory cgroup refusal # SKIP no private cgroup here (needs root and cgroup v1 or v2)"
else
    mem_dir=
    for d in $CG_JOIN; do
        [ -f "$d/memory.limit_in_bytes" ] && echo 1073741824 >"$d/memory.limit_in_bytes" &&
            mem_dir=$d
        [ -f "$d/memory.max" ] && echo 1073741824 >"$d/memory.max" && mem_dir=$d
    done
    if [ -z "$mem_dir" ]; then
        ok "memory cgroup refusal # SKIP the private cgroup has no memory controller"
    else
        cg_spawn cgmem "$HOPBENCH" run echo --size 64MiB --pipeline 200 -c 1 "$EP"
        reap "$SPAWNED" 30
        mem_refused "--size 64MiB --pipeline 200 -c 1 in a 1 GiB memory cgroup" cgmem
        check "the refusal says 12.5 GiB is needed, under the cgroup's limit" \
            grep -q 'needs 12.5 GiB .*is available (under the limit of its memory cgroup)' \
            "$T/cgmem.err"
    fi
fi

# --- abstract sockets --------------------------------------------------------------------

name=hb-limits-$$-$RANDOM
expect_rc "serve --socket-mode with unix:@name: exit 64" 64 sockmode \
    serve echo -l "unix:@$name" --socket-mode 0600
one_line "serve --socket-mode with unix:@name: one line saying why" "$T/sockmode.err" \
    "^hopbench: serve: --socket-mode cannot apply to unix:@$name: an abstract socket has no file, so no permissions"
expect_rc "serve --socket-mode with a path and an abstract socket: exit 64" 64 sockmode2 \
    serve echo -l "unix:$T/path.sock" -l "unix:@$name" --socket-mode 0600
check "refused before binding: no socket file" test ! -e "$T/path.sock"

start_server abs -l "unix:@$name" -l "unix:$T/file.sock" -t 1 || done_testing
one_line "serve on unix:@name: one warning on stderr, for the abstract socket only" "$T/abs.err" \
    "^hopbench serve: warning: unix:@$name is an abstract socket: it has no permissions, any local user"
hb absrun run echo -n 100 --warmup 0 --json "$T/abs.json" "unix:@$name"
check_eq "the abstract socket serves: exit 0" 0 "$RC"
stop_server "$SRV_PID" "$T/abs.out"
check_eq "serve on unix:@name stops cleanly" 0 "$RC"

done_testing
