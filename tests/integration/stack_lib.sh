# shellcheck shell=bash
# Helpers of the test_stack_*.sh scripts (sourced after lib.sh, bash).
#
# A stack prints first "hopbench stack NAME: directory DIR" (its private directory,
# DIR = /tmp/hopbench-stack.XXXXXX, or under $TMPDIR; its cgroups are named after it and
# its owner, hopbench-stack.XXXXXX.PID-START-PIDNS),
# then, before it measures, the line of each service ("... pid N ...") and "cgroup: DIR"
# (a service's CPU cgroup). These helpers read them from the stack's stdout and check
# that nothing is left.

# stack_tag OUT : the run's name, hopbench-stack.XXXXXX, from the stack's stdout ("" if none).
stack_tag() {
    sed -n 's|^hopbench stack [a-z-]*: directory .*/\(hopbench-stack\.[A-Za-z0-9]*\)$|\1|p' "$1" |
        head -n 1
}

# stack_pids OUT : the pids the stack printed for its services.
stack_pids() {
    grep -Eo ' pid [0-9]+ ' "$1" | tr -dc '0-9\n '
}

# wait_line FILE ERE SECONDS PID : waits until FILE has a line matching ERE, while PID
# lives; returns 1 when it did not come in time.
wait_line() {
    local file=$1 re=$2 steps=$(($3 * 20)) pid=$4 i
    for ((i = 0; i < steps; i++)); do
        grep -Eq -- "$re" "$file" 2>/dev/null && return 0
        alive "$pid" || break
        sleep 0.05
    done
    grep -Eq -- "$re" "$file" 2>/dev/null
}

# stack_nothing_left NAME OUT : no service process, no cgroup directory and no private
# directory of the run in OUT is left.
stack_nothing_left() {
    local name=$1 out=$2 tag p left="" d
    tag=$(stack_tag "$out")
    if [ -z "$tag" ]; then
        not_ok "$name: nothing left" "no directory line in $(basename "$out")"
        return 1
    fi
    for p in $(stack_pids "$out"); do
        alive "$p" && left="$left pid $p"
    done
    for p in $(pgrep -f "$tag"); do left="$left pid $p ($(tr '\0' ' ' <"/proc/$p/cmdline"))"; done
    while IFS= read -r d; do
        left="$left cgroup $d"
    done < <(find /sys/fs/cgroup -maxdepth 5 -type d \( -name "$tag" -o -name "$tag.*" \) 2>/dev/null)
    d=$(sed -n 's|^hopbench stack [a-z-]*: directory ||p' "$out" | head -n 1)
    [ -e "$d" ] && left="$left dir $d"
    if [ -z "$left" ]; then
        ok "$name: no process, cgroup or file of $tag is left"
    else
        not_ok "$name: nothing left" "left:$left"
    fi
}

# fpm_need : the fpm stacks' servers and the tools their tests use are installed (PATH gets
# /usr/sbin), or the test ends with one failure naming the command that installs them.
fpm_need() {
    local tool
    PATH=$PATH:/usr/sbin:/sbin
    for tool in nginx apache2 php-fpm8.2 cgi-fcgi curl; do
        command -v "$tool" >/dev/null 2>&1 || {
            not_ok "setup: $tool installed" "run: sh scripts/deps.sh test"
            done_testing
        }
    done
}

# web_requests WEB PORT : the requests the web server (nginx or apache) on 127.0.0.1:PORT
# counted, from its own status page (nginx stub_status, Apache mod_status).
web_requests() {
    if [ "$1" = nginx ]; then
        curl -s "http://127.0.0.1:$2/nginx_status" | sed -n 's/^ *[0-9]* [0-9]* \([0-9]*\) *$/\1/p'
    else
        curl -s "http://127.0.0.1:$2/server-status?auto" | sed -n 's/^Total Accesses: //p'
    fi
}

# fpm_status SOCKET : php-fpm's status page of the pool on SOCKET.
fpm_status() {
    SCRIPT_NAME=/status SCRIPT_FILENAME=/status REQUEST_METHOD=GET QUERY_STRING='' \
        cgi-fcgi -bind -connect "$1" 2>/dev/null | tr -d '\r'
}

# all_left NAME OUT : nothing left of any of the stack's directories (one per step).
all_left() {
    local name=$1 out=$2 n=0 line
    while IFS= read -r line; do
        n=$((n + 1))
        { echo "$line"; grep ' pid ' "$out"; } >"$out.$n"
        stack_nothing_left "$name (directory $n)" "$out.$n"
    done < <(grep '^hopbench stack [a-z-]*: directory ' "$out")
    [ "$n" -gt 0 ] || not_ok "$name: nothing left" "no directory line"
}

# held NAME ARGS.. : runs stack ARGS --short --hold --jsonl $T/NAME.jsonl until it holds; sets PID, OUT, DIR (the
# last directory). Returns 1 (after stopping it) when it did not get there.
held() {
    local name=$1
    shift
    spawn "$name" stack "$@" --short --hold --jsonl "$T/$name.jsonl"
    PID=$SPAWNED
    OUT=$T/$name.out
    if ! wait_line "$OUT" '^holding: ' 100 "$PID"; then
        not_ok "$name: measured and holding" "stdout: $(tail -c 600 "$OUT" | tr '\n' '|')" \
            "stderr: $(tail -c 300 "$T/$name.err" | tr '\n' '|')"
        stop_pid "$PID"
        all_left "$name" "$OUT"
        return 1
    fi
    ok "$name: measured and holding"
    # shellcheck disable=SC2034 # DIR is the caller's
    DIR=$(sed -n 's|^hopbench stack [a-z-]*: directory ||p' "$OUT" | tail -n 1)
}

# release NAME : Ctrl-C while held: exit 0, nothing left.
release() {
    kill -INT "$PID"
    reap "$PID" 20
    check_eq "$1: Ctrl-C while held: exit 0" 0 "$RC"
    all_left "$1" "$OUT"
}

# stack_cut ERE STACK-ARGS... : starts `hopbench stack STACK-ARGS...` (output $T/cut.*),
# sends SIGINT 1 s after a line matching ERE (its measurement has begun): exit 130 within
# 10 s, nothing left.
stack_cut() {
    local re=$1 pid t0
    shift
    spawn cut stack "$@"
    pid=$SPAWNED
    if wait_line "$T/cut.out" "$re" 30 "$pid"; then
        sleep 1
        t0=$(now_ms)
        kill -INT "$pid"
        reap "$pid" 30
        check_eq "cut: Ctrl-C mid-run: exit 130" 130 "$RC"
        check "cut: ended within 10 s of Ctrl-C" test $(($(now_ms) - t0)) -lt 10000
    else
        not_ok "cut: started measuring" "$(tail -c 300 "$T/cut.err" | tr '\n' '|')"
        stop_pid "$pid"
    fi
    stack_nothing_left "cut" "$T/cut.out"
}
