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

# as_nobody CMD.. : runs CMD as user nobody (group nogroup, no other group): another local user,
# who may try to reach the stack's services.
as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$@"; }

# stack_root_procs OUT MASTERS : the processes in the stack's cgroups (the "cgroup: DIR" lines of
# OUT) that run with effective uid 0, one "PID CMD" line each, but the pids in MASTERS (a list:
# masters that only bind and fork, whose workers read the requests).
stack_root_procs() {
    local out=$1 masters=" $2 " cg p
    while IFS= read -r cg; do
        while read -r p; do
            [ "$(awk '/^Uid:/ { print $3 }' "/proc/$p/status" 2>/dev/null)" = 0 ] || continue
            case $masters in *" $p "*) continue ;; esac
            echo "$p $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null)"
        done <"$cg/cgroup.procs"
    done < <(sed -n 's/^cgroup: //p' "$out")
}

# private_refused NAME DIR FILE.. : nobody may not list the stack's private directory DIR nor
# read any FILE (a password file, a configuration that holds one) nor search the directory of
# each (a server's own, where its socket is).
private_refused() {
    local name=$1 dir=$2 f
    shift 2
    check "$name: nobody may not list the private directory" sh -c \
        "! setpriv --reuid=nobody --regid=nogroup --clear-groups -- ls '$dir' >/dev/null 2>&1"
    for f in "$@"; do
        check "$name: nobody may not read $(basename "$(dirname "$f")")/$(basename "$f") nor search its directory" \
            sh -c "[ -s '$f' ] &&
                ! setpriv --reuid=nobody --regid=nogroup --clear-groups -- cat '$f' >/dev/null 2>&1 &&
                ! setpriv --reuid=nobody --regid=nogroup --clear-groups -- ls '$(dirname "$f")' >/dev/null 2>&1"
    done
}

# redis_attack NAME PORT SOCK PWFILE : another local user (nobody) gets nothing from the stack's
# redis-server on 127.0.0.1:PORT and at SOCK without its password (PWFILE's, made for the stack):
# PING and CONFIG SET refused (NOAUTH), a wrong password refused, the socket not theirs; the
# password logs in (CONFIG GET shows the CONFIG SET did nothing: hz is still its default, 10).
redis_attack() {
    local name=$1 port=$2 sock=$3 pw out
    pw=$(cat "$4")
    out=$(as_nobody timeout 5 redis-cli -h 127.0.0.1 -p "$port" CONFIG SET hz 77 2>&1)
    check "$name: nobody's CONFIG SET over TCP is refused: $out" grep -q '^NOAUTH' <<<"$out"
    out=$(as_nobody timeout 5 redis-cli -h 127.0.0.1 -p "$port" PING 2>&1)
    check "$name: nobody's PING over TCP is refused: $out" grep -q '^NOAUTH' <<<"$out"
    out=$(as_nobody timeout 5 redis-cli --no-auth-warning -a wrong -h 127.0.0.1 -p "$port" PING 2>&1)
    check "$name: a wrong password is refused: $out" grep -q 'WRONGPASS' <<<"$out"
    out=$(as_nobody timeout 5 redis-cli -s "$sock" PING 2>&1)
    check "$name: nobody may not connect to the socket: $out" grep -q 'Permission denied' <<<"$out"
    out=$(REDISCLI_AUTH=$pw timeout 5 redis-cli -h 127.0.0.1 -p "$port" CONFIG GET hz |
        tr -d '\r' | tr '\n' ' ')
    check_eq "$name: the password logs in; hz as it was" "hz 10 " "$out"
}

# fpm_need : the fpm stacks' servers and the programs their tests use are installed, or the
# test ends failed with a line naming each one missing and its package (need).
fpm_need() {
    need nginx apache2 lighttpd php-fpm8.2 cgi-fcgi curl pgrep nsenter setpriv
}

# in_ns PID CMD.. : runs CMD in the network namespace of process PID (a service of the stack:
# the fpm stacks run theirs in a namespace of their own, whose loopback the host's is not).
in_ns() {
    local pid=$1
    shift
    nsenter -t "$pid" -n -- "$@"
}

# web_requests WEB PORT PID : the requests the web server (nginx, apache or lighttpd) on
# 127.0.0.1:PORT of the namespace of PID counted, from its own status page (nginx stub_status,
# Apache's and lighttpd's mod_status: "Total Accesses", lighttpd's updated once a second).
web_requests() {
    local prev cur i
    if [ "$1" = nginx ]; then
        in_ns "$3" curl -s "http://127.0.0.1:$2/nginx_status" |
            sed -n 's/^ *[0-9]* [0-9]* \([0-9]*\) *$/\1/p'
        return
    fi
    prev=$(in_ns "$3" curl -s "http://127.0.0.1:$2/server-status?auto" |
        sed -n 's/^Total Accesses: //p')
    [ "$1" = lighttpd ] || { echo "$prev"; return; }
    # lighttpd's mod_status adds up its requests once a second: read until the count stops
    # moving (each read one request more), less the reads after the first (at most 5)
    for i in 1 2 3 4 5; do
        sleep 1.1
        cur=$(in_ns "$3" curl -s "http://127.0.0.1:$2/server-status?auto" |
            sed -n 's/^Total Accesses: //p')
        [ -n "$cur" ] && [ -n "$prev" ] && [ "$cur" -le $((prev + 1)) ] && break
        prev=$cur
    done
    echo $((${cur:-0} - i))
}

# web_error_mark WEB : the text in each line of WEB's error log that reports an error (its
# entry's error_mark, src/stack/front_WEB.c), one line a front.
web_error_mark() {
    case $1 in
    lighttpd) echo '(gw_backend.c.' ;;
    *) echo 'error]' ;;
    esac
}

# fpm_status SOCKET [PID] : php-fpm's status page of the pool on SOCKET (a path, or HOST:PORT in
# the namespace of PID).
fpm_status() {
    local ns=()
    [ -z "${2:-}" ] || ns=(nsenter -t "$2" -n --)
    # a pool whose every worker a kept connection holds answers no one else: none within 5 s
    SCRIPT_NAME=/status SCRIPT_FILENAME=/status REQUEST_METHOD=GET QUERY_STRING='' \
        timeout 5 "${ns[@]}" cgi-fcgi -bind -connect "$1" 2>/dev/null | tr -d '\r'
}

# fcgi_attack NAME TARGET : as nobody (another local user), a FastCGI request to TARGET
# (HOST:PORT on the host's loopback, or a socket's path) naming a PHP script of nobody's own,
# which prints its euid: it must not run (FastCGI has no authentication: a pool that answers
# runs whatever script a request names, as its workers).
fcgi_attack() {
    local out
    if [ -z "${ATTACK:-}" ]; then # nobody's directory and script: $T opened to search for it
        ATTACK=$T/attack
        chmod 711 "$T" && mkdir -m 755 "$ATTACK" && chown nobody "$ATTACK"
        as_nobody sh -c "printf '<?php echo \"ran as euid \", posix_geteuid();\\n' >'$ATTACK/own.php'"
    fi
    out=$(as_nobody env SCRIPT_FILENAME="$ATTACK/own.php" SCRIPT_NAME=/own.php \
        REQUEST_METHOD=GET cgi-fcgi -bind -connect "$2" 2>&1 | tr -d '\r' | tr '\n' ' ')
    check "$1: nobody's FastCGI request to $2 for its own script does not run (${out:0:80})" \
        test "${out#*ran as euid}" = "$out"
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

# stack_readings NAME CELL K JSONL : the table block of measurement CELL in $OUT against the
# runs of the K-th run child of JSONL (stack_readings.py: p99.9, mean, connections, noisy runs,
# TIME_WAIT's (+added), system never below its parts unsaid, the lifecycle, the load lines).
stack_readings() {
    tap_from python3 "$(dirname "${BASH_SOURCE[0]}")/stack_readings.py" "$OUT" "$4" "$2" "$3" "$1"
}
