#!/bin/bash
# A hopbench killed outright (SIGKILL) leaves nothing running and nothing on disk, and what
# could still be left (its watcher killed too) goes with the next run:
#   - stack nginx-fpm --short killed while it measures: its services (the php-fpm and nginx
#     masters and their workers), its run child, its cgroups and its private directory are
#     gone within 10 s (the services and the run child die with it, PR_SET_PDEATHSIG; its
#     watcher kills the rest through the cgroups, then removes them and the directory)
#   - the same for stack redis
#   - a stack whose watcher is killed before it: its cgroups (with a process this test put
#     in them) and its directory stay; the next stack run kills that process, removes them
#     and says so in one line naming the dead pid, the directory, the cgroups and the
#     processes; a stack alive meanwhile (its pid recorded in its cgroups' names and its
#     directory's owner file) is not touched: it answers on and ends as usual
#   - lab: the next lab removes a dead owner's directory (one line); killed outright, its
#     server and its directory are gone within 10 s
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/stack_lib.sh
. "$(dirname "$0")/stack_lib.sh"

need_tools redis-server redis-cli
fpm_need

# A quick pass: one run per arm, no warm-up.
QUICK=(--reps 1 -d 0.1 --warmup 0 -q)

# run_cgroups TAG : the run cgroups of the stack TAG (hopbench-stack.XXXXXX), one per
# hierarchy, each named TAG.MARK (TAG alone before they had the mark).
run_cgroups() {
    find /sys/fs/cgroup -maxdepth 8 -type d \( -name "$1" -o -name "$1.*" \) -prune 2>/dev/null
}

# cg_members TAG : every pid in those cgroups and the ones below them, each once.
cg_members() {
    local d
    for d in $(run_cgroups "$1"); do
        cat "$d/cgroup.procs" "$d"/*/cgroup.procs 2>/dev/null
    done | sort -un
}

# live PID : PID is a process that has not exited (a zombie waiting for its parent has).
live() {
    local s
    s=$(awk '{ sub(/.*\) /, ""); print $1 }' "/proc/$1/stat" 2>/dev/null)
    [ -n "$s" ] && [ "$s" != Z ] && [ "$s" != X ]
}

# none_live SECONDS PID... : waits until none of the PIDs is live; 1 if one still is then.
# shellcheck disable=SC2317 # called through check
none_live() {
    local end=$(($(now_ms) + $1 * 1000)) p busy
    shift
    while :; do
        busy=
        for p in "$@"; do live "$p" && busy=1; done
        [ -z "$busy" ] && return 0
        [ "$(now_ms)" -lt "$end" ] || return 1
        sleep 0.05
    done
}

# left TAG DIR PID... : what is left of the stack TAG: its cgroups, DIR, the PIDs still live.
left() {
    local tag=$1 dir=$2 p out=""
    shift 2
    for p in "$@"; do
        live "$p" && out="$out pid $p ($(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null))"
    done
    for p in $(run_cgroups "$tag"); do out="$out cgroup $p"; done
    [ -e "$dir" ] && out="$out dir $dir"
    echo "$out"
}

# stack_dir OUT : the private directory the stack printed.
stack_dir() {
    sed -n 's|^hopbench stack [a-z-]*: directory ||p' "$1" | head -n 1
}

# killed NAME ERE STACK-ARGS... : starts `hopbench stack STACK-ARGS`, waits for a line matching
# ERE, notes every process in its cgroups and every child of it, kills it with SIGKILL:
# within 10 s none of them runs, no cgroup and no directory of it is left.
killed() {
    local name=$1 re=$2 pid tag dir procs kids rest end
    shift 2
    spawn "$name" stack "$@"
    pid=$SPAWNED
    if ! wait_line "$T/$name.out" "$re" 60 "$pid"; then
        not_ok "$name: started" "$(tail -c 300 "$T/$name.err" | tr '\n' '|')"
        stop_pid "$pid"
        return 1
    fi
    tag=$(stack_tag "$T/$name.out")
    dir=$(stack_dir "$T/$name.out")
    procs=$(cg_members "$tag")
    kids=$(pgrep -P "$pid")
    check "$name: its services run in its cgroups ($(echo "$procs" | wc -w) processes)" \
        test "$(echo "$procs" | wc -w)" -ge "$MIN_PROCS"
    kill -KILL "$pid"
    reap "$pid" 5
    check_eq "$name: killed by SIGKILL" 137 "$RC"
    end=$(($(now_ms) + 10000))
    while :; do
        # shellcheck disable=SC2086 # lists of pids
        rest=$(left "$tag" "$dir" $procs $kids)
        [ -z "$rest" ] || [ "$(now_ms)" -ge "$end" ] && break
        sleep 0.05
    done
    if [ -z "$rest" ]; then
        ok "$name: killed: within 10 s no process, cgroup or directory of it is left"
    else
        not_ok "$name: killed: nothing left" "left after 10 s:$rest"
    fi
}

# --- killed while it measures ---------------------------------------------------------------
# nginx-fpm: the php-fpm and nginx masters with their workers (php-fpm pm static 4 per pool, 2
# pools; nginx 2 workers): the workers outlive a master killed by its parent-death signal.

MIN_PROCS=6 killed fpm '^measuring ' nginx-fpm --short
MIN_PROCS=1 killed redis '^measuring ' redis --short

# --- the watcher killed too: the next run removes what is left; a live stack's stays ---------

spawn live stack redis "${QUICK[@]}" --hold
LIVE=$SPAWNED
spawn dead stack redis "${QUICK[@]}" --hold
DEAD=$SPAWNED
if wait_line "$T/live.out" '^holding: ' 60 "$LIVE" && wait_line "$T/dead.out" '^holding: ' 60 "$DEAD"
then
    ok "two stacks holding"
else
    not_ok "two stacks holding" "$(tail -c 300 "$T/live.err" "$T/dead.err" | tr '\n' '|')"
    stop_pid "$LIVE"
    stop_pid "$DEAD"
    done_testing
fi
DTAG=$(stack_tag "$T/dead.out")
DDIR=$(stack_dir "$T/dead.out")
DCG=$(run_cgroups "$DTAG")
NCG=$(echo "$DCG" | wc -l)
DREDIS=$(cg_members "$DTAG")
# a process of this test's in the dead stack's service cgroups, as a worker would be
spawn_cmd sleeper sleep 300
SLEEPER=$SPAWNED
for d in $DCG; do echo "$SLEEPER" >"$d/redis/cgroup.procs"; done
check "a process of the test's in the stack's cgroups" grep -qx "$SLEEPER" "${DCG%%$'\n'*}/redis/cgroup.procs"
WATCHER=$(pgrep -P "$DEAD" -x hopbench-watch)
check "the stack's watcher is its child" test -n "$WATCHER"
[ -n "$WATCHER" ] && kill -KILL "$WATCHER"
kill -KILL "$DEAD"
reap "$DEAD" 5
check_eq "the stack killed by SIGKILL after its watcher" 137 "$RC"
# shellcheck disable=SC2086 # a list of pids
check "its redis-server died with it" none_live 5 $DREDIS
check_eq "its directory and $NCG cgroups are left, with the test's process" \
    "dir $DCG live" \
    "$([ -d "$DDIR" ] && echo dir) $(run_cgroups "$DTAG") $(live "$SLEEPER" && echo live)"

LTAG=$(stack_tag "$T/live.out")
LDIR=$(stack_dir "$T/live.out")
LCG=$(run_cgroups "$LTAG")
expect_rc "the next stack run: exit 0" 0 next stack redis "${QUICK[@]}"
s=s
[ "$NCG" = 1 ] && s=
grep 'leftovers' "$T/next.out" >"$T/next.lines"
one_line "the next stack run: one line on what it removed" "$T/next.lines" \
    "^hopbench stack: removed leftovers of hopbench pid $DEAD \(dead\): $DDIR, $NCG cgroup$s, 1 process$"
check "the next stack run: that line before its own directory's" \
    sh -c "head -n 1 '$T/next.out' | grep -q 'removed leftovers'"
check "the test's process in the dead stack's cgroups is killed" none_live 5 "$SLEEPER"
kill -KILL "$SLEEPER" 2>/dev/null
wait "$SLEEPER" 2>/dev/null
check_eq "the dead stack's cgroups and directory are removed" "" \
    "$(run_cgroups "$DTAG")$([ -e "$DDIR" ] && echo "$DDIR")"
stack_nothing_left "the next stack run" "$T/next.out"
check "the live stack's cgroups and directory are untouched" \
    test -n "$LCG" -a "$(run_cgroups "$LTAG")" = "$LCG" -a -f "$LDIR/owner"
LPORT=$(sed -n 's|.*redis-server pid [0-9]* on tcp://127.0.0.1:\([0-9]*\) .*|\1|p' "$T/live.out")
LPW=$(sed -n 's|^redis: user [^;]*; a password made for the stack in \([^ ]*\) .*|\1|p' "$T/live.out")
check_eq "the live stack's redis-server answers (with the stack's password)" PONG \
    "$(REDISCLI_AUTH=$(cat "${LPW:-/nonexistent}" 2>/dev/null) redis-cli -p "${LPORT:-1}" ping 2>&1)"
check "the live stack's watcher runs" sh -c "pgrep -P $LIVE -x hopbench-watch >/dev/null"
kill -INT "$LIVE"
reap "$LIVE" 20
check_eq "the live stack: Ctrl-C while held: exit 0" 0 "$RC"
stack_nothing_left "the live stack" "$T/live.out"

# --- lab -------------------------------------------------------------------------------------

# A dead process's mark: its pid, its start time, this pid namespace's inode.
sleep 30 &
GONE=$!
GONE_MARK=$GONE-$(awk '{ sub(/.*\) /, ""); print $20 }' "/proc/$GONE/stat")-$(stat -L -c %i /proc/self/ns/pid)
kill "$GONE"
wait "$GONE" 2>/dev/null
mkdir -p "$T/lab.tmp/hopbench-lab.gone00" "$T/lab.cwd"
echo "$GONE_MARK" >"$T/lab.tmp/hopbench-lab.gone00/owner"
: >"$T/lab.tmp/hopbench-lab.gone00/echo.sock"
spawn_cmd lab env -C "$T/lab.cwd" TMPDIR="$T/lab.tmp" "$HOPBENCH" lab --quick --sizes 64 \
    --json "$T/lab.json"
LAB=$SPAWNED
if wait_line "$T/lab.out" '^cells: ' 30 "$LAB"; then
    check_eq "lab: first line: the dead lab's directory removed" \
        "hopbench lab: removed leftovers of hopbench pid $GONE (dead): $T/lab.tmp/hopbench-lab.gone00" \
        "$(head -n 1 "$T/lab.out")"
    check "lab: that directory is gone" test ! -e "$T/lab.tmp/hopbench-lab.gone00"
    LSPID=$(sed -n 's/^hopbench .* lab: echo over .*; server pid \([0-9][0-9]*\)$/\1/p' "$T/lab.out")
    check "lab: its server runs" live "${LSPID:-0}"
    kill -KILL "$LAB"
    reap "$LAB" 5
    check_eq "lab: killed by SIGKILL" 137 "$RC"
    check "lab: killed: within 10 s its server is gone" none_live 10 "${LSPID:-0}"
    end=$(($(now_ms) + 10000))
    while [ -n "$(ls -A "$T/lab.tmp")" ] && [ "$(now_ms)" -lt "$end" ]; do sleep 0.05; done
    check_eq "lab: killed: within 10 s its directory is gone" "" "$(ls -A "$T/lab.tmp")"
else
    not_ok "lab: started" "$(tail -c 300 "$T/lab.err" | tr '\n' '|')"
    stop_pid "$LAB"
fi

done_testing
