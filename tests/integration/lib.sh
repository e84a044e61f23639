# Shared helpers for the integration scripts (sourced, bash).
# shellcheck disable=SC2034 # SRV_*, RC, STOPPED, SPAWNED are read by the scripts
#
#   HOPBENCH   the binary under test (tests/run.sh sets it; default build/release/hopbench)
#   T          this script's private temporary directory (removed on exit)
#
# Results are TAP-like lines: "ok NAME" or "not ok NAME # DETAIL". tests/run.sh
# counts them; the script exits non-zero when any check failed.
#
# Every process a script starts in the background goes through `spawn` (or
# `start_server`), so the EXIT/INT/TERM trap can stop it by PID: SIGCONT (it
# may have been stopped on purpose), SIGTERM, then SIGKILL after a bounded wait.

set -u

# The programs a test runs are Debian's, as on a fresh Debian 12 (scripts/programs.txt says
# which package brings each): its directories come first, before any other copy on this PATH
# (a python3 of pyenv's, a jq in /usr/local) that could hide a package missing.
PATH=/usr/sbin:/usr/bin:/sbin:/bin${PATH:+:$PATH}
# PROGRAMS: the list of the programs the suite runs and their Debian packages (need).
PROGRAMS=${PROGRAMS:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/scripts/programs.txt}

HOPBENCH=${HOPBENCH:-build/release/hopbench}
case $HOPBENCH in
/*) ;;
*) HOPBENCH=$PWD/$HOPBENCH ;;
esac
if [ ! -x "$HOPBENCH" ]; then
    echo "not ok setup # $HOPBENCH is not an executable (run make first)"
    exit 1
fi

PIDS=()
CGROUPS=()
NFAIL=0
NPASS=0
T=

# cleanup : the EXIT/INT/TERM trap. Stops every process the script started, removes its
# cgroups, then $T: whatever of it is made (none yet, or the binary half copied).
cleanup() {
    local pid i d
    trap - EXIT INT TERM
    for pid in "${PIDS[@]}"; do
        if alive "$pid"; then
            kill -CONT "$pid" 2>/dev/null
            kill -TERM "$pid" 2>/dev/null
        fi
    done
    for pid in "${PIDS[@]}"; do
        for ((i = 0; i < 40; i++)); do
            alive "$pid" || break
            sleep 0.05
        done
        if alive "$pid"; then
            kill -KILL "$pid" 2>/dev/null
        fi
        wait "$pid" 2>/dev/null
    done
    for d in "${CGROUPS[@]}"; do # busy until an orphaned last member is reaped
        for ((i = 0; i < 40; i++)); do
            rmdir "$d" 2>/dev/null && break
            sleep 0.05
        done
    done
    [ -n "${KEEP_TMP:-}" ] || [ -z "$T" ] || rm -rf "$T"
}
# Set before $T is made: a Ctrl-C or a failure while it is made or the binary is copied
# leaves nothing behind.
trap cleanup EXIT
trap 'cleanup; exit 130' INT
trap 'cleanup; exit 143' TERM

# $T is named before it is made, so that the trap knows it from its first moment: mkdir
# makes it or fails (a name taken meanwhile is not ours, and is forgotten at once).
T=$(mktemp -d -u "${TMPDIR:-/tmp}/hopbench-it.XXXXXX") || T=
if [ -z "$T" ] || ! mkdir -m 700 "$T" 2>/dev/null; then
    T=
    echo "not ok setup # cannot make a temporary directory in ${TMPDIR:-/tmp}"
    exit 1
fi
# A private copy: the binary under test cannot change (a parallel `make`) mid-script.
if cp "$HOPBENCH" "$T/hopbench" 2>/dev/null; then
    HOPBENCH=$T/hopbench
fi

# SAN: 3 when the binary under test is built with ASan or TSan, else 1. Such a binary starts,
# runs and exits several times slower: a bound on wall time (or a wait before acting on a
# run) that holds for the release build is SAN times longer under a sanitizer.
SAN=1
if grep -qaE '__(asan|tsan)_init' "$HOPBENCH"; then SAN=3; fi
# san_s SECONDS : SECONDS (a decimal) times SAN.
san_s() { awk -v s="$1" -v f="$SAN" 'BEGIN { print s * f }'; }

# --- results -----------------------------------------------------------------

ok() {
    NPASS=$((NPASS + 1))
    echo "ok $*"
}

# not_ok NAME DETAIL...
not_ok() {
    local name=$1
    shift
    NFAIL=$((NFAIL + 1))
    echo "not ok $name # $*"
}

# check NAME CMD... : ok when CMD succeeds.
check() {
    local name=$1
    shift
    if "$@"; then
        ok "$name"
    else
        not_ok "$name" "failed: $*"
    fi
}

# check_eq NAME WANT GOT
check_eq() {
    if [ "$2" = "$3" ]; then
        ok "$1"
    else
        not_ok "$1" "want '$2', got '$3'"
    fi
}

# jcheck NAME FILE JQ-EXPR [JQ-DEFS] : ok when the jq expression (after the
# optional definitions) is true for FILE.
jcheck() {
    local name=$1 file=$2 expr=$3 defs=${4:-} got
    if [ ! -s "$file" ]; then
        not_ok "$name" "no JSON file $file"
        return 1
    fi
    if jq -e "$defs $expr" "$file" >/dev/null 2>&1; then
        ok "$name"
    else
        got=$(jq -c "$defs $expr" "$file" 2>&1 | head -c 300)
        not_ok "$name" "jq '$(echo "$expr" | tr -s ' \n' ' ')' on $(basename "$file") gave: $got"
        return 1
    fi
}

# tap_from CMD... : counts the "ok NAME" and "not ok NAME # WHY" lines CMD prints (stdout and
# stderr) as this script's checks; any other line is shown as a comment. CMD exiting non-zero
# without a "not ok" line (a crash, a traceback: checks that never ran) is one failed check.
tap_from() {
    local line out rc=0 failed=0
    out=$(mktemp "$T/tap.XXXXXX")
    "$@" >"$out" 2>&1 || rc=$?
    while IFS= read -r line; do
        case $line in
        "ok "*) ok "${line#ok }" ;;
        "not ok "*)
            failed=1
            line=${line#not ok }
            not_ok "${line%% # *}" "${line#* # }"
            ;;
        *) echo "# $line" ;;
        esac
    done <"$out"
    rm -f "$out"
    if [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ]; then
        not_ok "$(basename "$1") $(basename "${2:-}") ${3:-}: exit $rc with no failed check" \
            "it stopped before its checks ran; see the lines above"
    fi
}

# jtrue JQ-ARGS... : jq -e, quietly (for check): true when the last output is true.
jtrue() {
    jq -e "$@" >/dev/null 2>&1
}

# hb OUT CMD-ARGS... : runs "$HOPBENCH CMD-ARGS..." with a time limit in $T (where a
# run without --json leaves its evidence), stdout to $T/OUT.out, stderr to $T/OUT.err;
# sets RC (and returns 0).
hb() {
    local out=$1
    shift
    RC=0
    (cd "$T" && exec timeout -k 5 60 "$HOPBENCH" "$@") >"$T/$out.out" 2>"$T/$out.err" || RC=$?
    return 0
}

# expect_rc NAME WANT OUT CMD-ARGS... : runs hb OUT CMD-ARGS and checks the exit code.
expect_rc() {
    local name=$1 want=$2 out=$3
    shift 3
    hb "$out" "$@"
    if [ "$RC" = "$want" ]; then
        ok "$name"
    else
        not_ok "$name" "exit $RC, want $want; stderr: $(head -c 300 "$T/$out.err" | tr '\n' '|')"
        return 1
    fi
}

# one_line NAME FILE [GREP-ERE] : FILE holds exactly one line (matching GREP-ERE if given).
one_line() {
    local name=$1 file=$2 re=${3:-}
    local n
    n=$(wc -l <"$file")
    if [ "$n" -ne 1 ]; then
        not_ok "$name" "want 1 line in $(basename "$file"), got $n: $(head -c 300 "$file" | tr '\n' '|')"
        return 1
    fi
    if [ -n "$re" ] && ! grep -Eq -- "$re" "$file"; then
        not_ok "$name" "line does not match /$re/: $(head -c 300 "$file")"
        return 1
    fi
    ok "$name"
}

# need PROGRAM... : each program is where $PROGRAMS (scripts/programs.txt) says it is; PROGRAM
# is the last part of its path there (nginx, yaml) or the whole path. For each one missing, one
# line names the test, the program and its Debian package, e.g.
#   not ok setup: iptables # test_image.sh needs iptables (Debian package iptables, scripts/deps.sh test installs it): no /usr/sbin/iptables
# and then the test ends failed, not skipped: a program missing is an install step missing.
# A program the list does not have fails the same way (the list is what `make deps-check`
# proves a fresh Debian 12 gets).
declare -gA PROG_PATH=() PROG_PKG=() PROG_FOR=()
need() {
    local name path pkg for how missing=0
    if [ "${#PROG_PATH[@]}" -eq 0 ]; then
        while read -r path pkg for _; do
            case $path in /*) ;; *) continue ;; esac
            name=${path%/}
            name=${name##*/}
            PROG_PATH[$name]=$path PROG_PATH[$path]=$path
            PROG_PKG[$path]=$pkg PROG_FOR[$path]=$for
        done <"$PROGRAMS"
    fi
    for name in "$@"; do
        path=${PROG_PATH[$name]:-}
        if [ -z "$path" ]; then
            not_ok "setup: $name" "${0##*/} needs $name, which $PROGRAMS does not list" \
                "(add its path, Debian package, deps.sh purpose and who runs it)"
            missing=1
            continue
        fi
        case $path in
        */) [ -d "$path" ] && continue ;;
        *) [ -x "$path" ] && continue ;;
        esac
        pkg=${PROG_PKG[$path]} for=,${PROG_FOR[$path]},
        case $for in
        *,minbase,*) how="every Debian system has it" ;;
        *,test,*) how="scripts/deps.sh test installs it" ;;
        *) how="scripts/deps.sh ${PROG_FOR[$path]%%,*} installs it" ;;
        esac
        not_ok "setup: $name" "${0##*/} needs $name (Debian package $pkg, $how): no $path"
        missing=1
    done
    [ "$missing" = 0 ] || done_testing
}

# program_path PROGRAM : its path in $PROGRAMS (after need PROGRAM).
program_path() {
    printf '%s\n' "${PROG_PATH[$1]}"
}

# chrome PREFIX ARGS... : headless Chromium (after `need chromium`) with a private profile in
# $T, bounded in time (timeout signals the process group, so its helper processes too); stdout
# to PREFIX.out, stderr (its log, console messages included) to PREFIX.err.
chrome() {
    local prefix=$1 prof rc=0
    shift
    prof=$(mktemp -d "$T/chrome.XXXXXX")
    timeout -k 5 90 "$(program_path chromium)" --headless --no-sandbox --disable-gpu \
        --hide-scrollbars --no-first-run --disable-extensions --user-data-dir="$prof" \
        --enable-logging=stderr --v=0 "$@" >"$prefix.out" 2>"$prefix.err" || rc=$?
    rm -rf "$prof"
    return "$rc"
}

# --- processes ------------------------------------------------------------------

now_ms() { echo $(($(date +%s%N) / 1000000)); }

alive() { kill -0 "$1" 2>/dev/null; }

# eventually SECONDS CMD... : CMD succeeds within SECONDS (times SAN), asked every 0.1 s: for
# what the kernel finishes after the call that asked for it returned (a deleted namespace's
# devices go in a work queue).
eventually() {
    local until=$(($(now_ms) + $(san_s "$1" | cut -d. -f1) * 1000))
    shift
    until "$@"; do
        [ "$(now_ms)" -lt "$until" ] || return 1
        sleep 0.1
    done
}

# wait_gone PID SECONDS : waits (50 ms steps) until PID is gone; returns 1 if still alive.
wait_gone() {
    local pid=$1 steps=$(($2 * 20)) i
    for ((i = 0; i < steps; i++)); do
        alive "$pid" || return 0
        sleep 0.05
    done
    ! alive "$pid"
}

# reap PID SECONDS : waits (bounded) for a background child and sets RC to its exit
# code; RC=timeout (and the process is killed) when it did not end in time.
reap() {
    local pid=$1 secs=$2
    if wait_gone "$pid" "$secs"; then
        RC=0
        wait "$pid" 2>/dev/null || RC=$?
    else
        kill -KILL "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
        RC=timeout
    fi
}

# spawn_cmd OUT CMD... : starts CMD in the background, in $T, with stdout to $T/OUT.out
# and stderr to $T/OUT.err; sets SPAWNED to its PID (CMD must exec, e.g. env or setsid,
# so that the PID is hopbench's own).
spawn_cmd() {
    local out=$1
    shift
    (cd "$T" && exec "$@") >"$T/$out.out" 2>"$T/$out.err" &
    SPAWNED=$!
    PIDS+=("$SPAWNED")
}

# spawn OUT CMD-ARGS... : spawn_cmd OUT "$HOPBENCH" CMD-ARGS...
spawn() {
    local out=$1
    shift
    spawn_cmd "$out" "$HOPBENCH" "$@"
}

# stop_pid PID : SIGCONT + SIGTERM, SIGKILL after 3 s; reaps it and sets RC.
stop_pid() {
    local pid=$1
    if alive "$pid"; then
        kill -CONT "$pid" 2>/dev/null
        kill -TERM "$pid" 2>/dev/null
    fi
    reap "$pid" 3
}

# free_port : sets PORT to a loopback TCP port nobody listens on, below the ephemeral
# range (so connect-mode runs cannot take it) and unlike the ones taken before.
TAKEN=" "
free_port() {
    local p i
    for ((i = 0; i < 500; i++)); do
        p=$((20000 + RANDOM % 12000))
        case $TAKEN in *" $p "*) continue ;; esac
        if [ -z "$(ss -Hltn "( sport = :$p )" 2>/dev/null)" ]; then
            TAKEN="$TAKEN$p "
            PORT=$p
            return 0
        fi
    done
    not_ok "setup: free port" "no free port found in 20000-31999"
    done_testing
}

# start_server NAME SERVE-ARGS... : "$HOPBENCH serve SERVE-ARGS..." in the background
# (stdout $T/NAME.out, stderr $T/NAME.err). Waits up to 5 s for one "listening on"
# line per --listen/-l argument. PROTO (env) is the protocol, echo by default. Sets SRV_PID, SRV_PORT (the first TCP port, if any)
# and SRV_OUT. Returns 1 (after a not_ok line) if the server did not come up.
start_server() {
    local name=$1
    shift
    local want=0 a i n
    for a in "$@"; do
        case $a in
        --listen | -l | --listen=*) want=$((want + 1)) ;;
        esac
    done
    spawn "$name" serve "${PROTO:-echo}" "$@"
    SRV_PID=$SPAWNED
    SRV_OUT=$T/$name.out
    SRV_PORT=
    for ((i = 0; i < 100; i++)); do
        n=$(grep -c '^hopbench: listening on ' "$SRV_OUT" 2>/dev/null)
        if [ "${n:-0}" -ge "$want" ] && [ "$want" -gt 0 ]; then
            SRV_PORT=$(sed -n 's|^hopbench: listening on tcp://.*:\([0-9][0-9]*\)$|\1|p' "$SRV_OUT" |
                head -n 1)
            return 0
        fi
        alive "$SRV_PID" || break
        sleep 0.05
    done
    not_ok "start server $name" "not listening after 5 s; stdout: $(head -c 300 "$SRV_OUT" |
        tr '\n' '|') stderr: $(head -c 300 "$T/$name.err" | tr '\n' '|')"
    stop_pid "$SRV_PID"
    return 1
}

# stop_server PID OUT-FILE : SIGTERM; waits (bounded) for the "stopped:" line and
# the exit. Sets RC and STOPPED (the stopped line, or empty).
stop_server() {
    local pid=$1 out=$2
    kill -TERM "$pid" 2>/dev/null
    reap "$pid" 5
    STOPPED=$(grep '^hopbench: stopped: ' "$out" | tail -n 1)
}

# stopped_field WHAT : the number before WHAT ("connections", "bytes in", "bytes out",
# "errors") in $STOPPED; empty when absent.
stopped_field() {
    printf '%s\n' "$STOPPED" | sed -n "s/.*[^0-9]\([0-9][0-9]*\) $1\(,.*\)\{0,1\}\$/\1/p"
}

# --- cgroups ------------------------------------------------------------------------

# test_cgroup NAME : makes a private cgroup for the test, where this host allows it
# (root; cgroup v1 with cpuacct, or v2 at /sys/fs/cgroup). Sets CG_DIR (what to give
# --server-cgroup: the v1 cpuacct directory, or the v2 one) and CG_JOIN (every
# directory a process must join: on v1 cpuacct and memory). Returns 1 when it cannot.
# The directories are removed on exit, after the processes are stopped.
test_cgroup() {
    local name=$1-$$ d
    CG_DIR= CG_JOIN=
    if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
        CG_JOIN=/sys/fs/cgroup/$name
    elif [ -f /sys/fs/cgroup/cpuacct/cpuacct.usage ]; then
        CG_JOIN=/sys/fs/cgroup/cpuacct/$name
        [ -d /sys/fs/cgroup/memory ] && CG_JOIN="$CG_JOIN /sys/fs/cgroup/memory/$name"
    else
        return 1
    fi
    for d in $CG_JOIN; do
        mkdir "$d" 2>/dev/null || return 1
        CGROUPS+=("$d")
    done
    CG_DIR=${CG_JOIN%% *}
}

# cg_spawn OUT CMD... : spawn_cmd OUT, with CMD in the cgroups of CG_JOIN from its start.
cg_spawn() {
    local out=$1
    shift
    # shellcheck disable=SC2016 # $$ and $d belong to the inner shell
    spawn_cmd "$out" sh -c 'for d in '"$CG_JOIN"'; do echo $$ >"$d/cgroup.procs" || exit 1; done
        exec "$@"' sh "$@"
}

# strace_usable child|attach : strace is installed and may trace its own child here (ptrace is
# not denied by Yama or seccomp); with "attach", may also attach to another process (strace -p:
# Yama's ptrace_scope 0, or root). Tests that need it report "ok NAME # SKIP ..." otherwise.
strace_usable() {
    strace -o /dev/null true >/dev/null 2>&1 || return 1
    [ "$1" != attach ] || [ "$(id -u)" = 0 ] ||
        [ "$(cat /proc/sys/kernel/yama/ptrace_scope 2>/dev/null || echo 0)" = 0 ]
}


# netns_trap "NS..." LINK : from now on the EXIT/INT/TERM trap, after cleanup, also deletes
# the network namespaces NS... and the veth pair of LINK (each may be gone already).
netns_trap() {
    NETNS_DEL=$1
    NETNS_LINK=$2
    trap netns_teardown EXIT
    trap 'netns_teardown; exit 130' INT
    trap 'netns_teardown; exit 143' TERM
}
# shellcheck disable=SC2317 # called by the trap
netns_teardown() {
    local ns
    cleanup
    for ns in $NETNS_DEL; do ip netns del "$ns" 2>/dev/null; done
    ip link del "$NETNS_LINK" 2>/dev/null
    return 0
}

# done_testing : prints a summary and exits non-zero when anything failed.
done_testing() {
    echo "# $NPASS passed, $NFAIL failed"
    [ "$NFAIL" -eq 0 ]
    exit
}

# --- evidence checks (jq) --------------------------------------------------------

# jq definitions for a run record (the input is one element of .runs).
#   lo(i), width(i): the lowest value and width of histogram counter i (docs/evidence.md)
#   counters:  a histogram's non-zero counters as [index, count] pairs, ascending as
#              written, from any encoding of its counts: the gamma-rice/1 string
#              (decoded here, apart from hopbench's decoder: gr_decode) or the lists of
#              older evidence (runs or pairs)
#   hist_ok:   counts sum to total, total == ops, indices ascending, each run or pair
#              of a list starts and ends with a non-zero count, min/max inside the
#              first/last counters, latency min/max agree with the histogram
#   lat_ok:    p50 > 0 and min <= p50 <= p90 <= p95 <= p99 <= p999 <= p9999, p99 <= max
#              (a percentile is the upper edge of its counter, so it may pass max by
#              less than one counter width, max/1024)
#   errors_zero: every error kind is present and 0
# shellcheck disable=SC2016 # jq variables, not shell ones
JQ_DEFS='
def lo(i): if i < 1024 then i else ((i % 1024) + 1024) * pow(2; (i / 1024 | floor) - 1) end;
def width(i): if i < 2048 then 1 else pow(2; (i / 1024 | floor) - 1) end;
def le_edge(a; b): a <= b or (a - b) <= (b / 1024);
def b64bits: [explode[] | if . >= 97 then . - 71 elif . >= 65 then . - 65 elif . >= 48 then . + 4
  elif . == 43 then 62 elif . == 47 then 63 else empty end | . as $d | (32, 16, 8, 4, 2, 1)
  | ($d / . | floor) % 2];
def bitlen: if . < 1 then 0 else 1 + (. / 2 | floor | bitlen) end;
def bits_at($b; $from; $n): reduce $b[$from:$from + $n][] as $x (0; . * 2 + $x);
def gr_gamma($b; $i): (first(range($i; $b | length) as $j | select($b[$j] == 1) | $j)
  // ($b | length)) as $o | ($o - $i) as $z | [bits_at($b; $o; $z + 1), $o + $z + 1];
def gr_step: .b as $b | gr_gamma($b; .i) as [$step, $i] | ((.t / 8 | floor) | bitlen) as $k
  | (first(range(0; 16) as $q | select($b[$i + $q] != 1) | $q) // 16) as $q
  | (if $q == 16 then gr_gamma($b; $i + 16)
     else [$q * pow(2; $k) + bits_at($b; $i + $q + 1; $k) + 1, $i + $q + 1 + $k] end) as [$c, $next]
  | {b: $b, i: $next, left: (.left - $c), prev: (.prev + $step), c: $c,
     t: (.t - (.t / 4 | floor) + ([$c - 1, 4294967296] | min))};
def gr_decode($total): [{b: b64bits, i: 0, left: $total, prev: -1, t: 0}
  | recurse(if .left > 0 and .i < (.b | length) then gr_step else empty end)
  | select(.c) | [.prev, .c]];
def counters: if .counts_encoding == "gamma-rice/1" then .total as $t | .counts | gr_decode($t)
  elif has("counts_encoding") then error("unknown counts_encoding \(.counts_encoding)")
  else [.counts[] | if (.[1] | type) == "array" then .[0] as $s | .[1] | to_entries[]
  | [$s + .key, .value] else . end | select(.[1] > 0)] end;
def hist_ok: . as $r | .histogram as $h | ($h | counters) as $c | ($c | map(.[0])) as $ix
  | $h.unit == "ns" and $h.lowest == 1 and $h.significant_digits == 3 and $h.overflow == 0
  and (($c | map(.[1]) | add) // 0) == $h.total and $h.total == $r.ops
  and ($h.counts | type == "string" or
       all(.[]; .[1] | if type == "array" then .[0] > 0 and .[-1] > 0 else . > 0 end))
  and $ix == ($ix | unique)
  and $r.latency_ns.min == $h.min and $r.latency_ns.max == $h.max
  and ($h.total == 0 or (lo($ix[0]) <= $h.min and $h.min < lo($ix[0]) + width($ix[0])
       and lo($ix[-1]) <= $h.max and $h.max < lo($ix[-1]) + width($ix[-1])));
def lat_ok: .latency_ns as $l
  | $l.p50 > 0 and $l.min > 0 and $l.min <= $l.p50 and $l.p50 <= $l.p90 and $l.p90 <= $l.p95
  and $l.p95 <= $l.p99 and $l.p99 <= $l.p999 and $l.p999 <= $l.p9999
  and le_edge($l.p99; $l.max) and le_edge($l.p9999; $l.max)
  and $l.min <= $l.mean and le_edge($l.mean; $l.max);
def error_kinds: ["refused","reset","timeout","addrnotavail","eagain","short","wrong","unexpected","too_big","status","error_reply","body","fds","other"];
def errors_zero: (.errors | keys | sort) == (error_kinds | sort) and all(.errors[]; . == 0)
  and .errors_total == 0;
def errors_sum: (.errors | add) == .errors_total;
'

# rcheck NAME FILE EXPR : like jcheck, with JQ_DEFS available.
rcheck() {
    jcheck "$1" "$2" "$3" "$JQ_DEFS"
}

# grouped: stdin's whole numbers with their thousands separated by ',', as text prints them
# (1541 -> 1,541); CSV and JSON keep plain numbers.
grouped() { LC_ALL=C sed -E ':a; s/([0-9])([0-9]{3})($|[^0-9])/\1,\2\3/; ta'; }

# table_rows FILE : how many endpoint rows the run table in FILE has.
table_rows() {
    grep -Ec '^(tcp://|unix:)[^ ]+ +(connect|reuse) ' "$1"
}

# no_hopbench_in DIR : no running hopbench process has DIR as its working directory
# (each lab runs in its own cwd, and its forked server child inherits it).
# shellcheck disable=SC2317 # called through check
no_hopbench_in() {
    local p
    for p in $(pgrep -x hopbench); do
        if [ "$(readlink "/proc/$p/cwd" 2>/dev/null)" = "$1" ]; then
            echo "# left behind: pid $p: $(tr '\0' ' ' <"/proc/$p/cmdline")"
            return 1
        fi
    done
    return 0
}

# ns_gone INODE... : no hopbench of this script ($HOPBENCH) is in any of these namespaces or holds one
# open (only it can: nothing is mounted, no other process gets an fd). The kernel reuses
# the lowest free namespace number at once, so another test's new namespace may carry
# the same number by now: such a process is named, not counted.
# shellcheck disable=SC2317 # called through check
ns_gone() {
    local f i pid exe
    for i in "$@"; do
        for f in /proc/[0-9]*/ns/net /proc/[0-9]*/task/[0-9]*/ns/net /proc/[0-9]*/fd/*; do
            [ "$(readlink "$f" 2>/dev/null)" = "net:[$i]" ] || continue
            pid=${f#/proc/}
            pid=${pid%%/*}
            exe=$(readlink "/proc/$pid/exe" 2>/dev/null)
            if [ "$exe" = "$HOPBENCH" ]; then
                echo "# namespace net:[$i] is still held by hopbench pid $pid ($f)"
                return 1
            fi
            echo "# net:[$i] is now pid $pid's ($exe): the number was reused"
        done
    done
    return 0
}

# Every test reads its evidence with jq; free_port asks ss.
need jq ss
