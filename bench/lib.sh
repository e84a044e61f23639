# shellcheck shell=sh
# lib.sh: helpers shared by the bench scripts (sourced; POSIX sh). The caller sets PROG.

die() {
    echo "$PROG: $*" >&2
    exit 1
}

# A whole number above 0.
is_count() {
    case "$1" in
    '' | *[!0-9]*) return 1 ;;
    esac
    [ "$1" -gt 0 ]
}

# A progress line on stderr, with the time.
note() {
    echo "$PROG: $(date -u +%T) $*" >&2
}

# Reads a number from a JSON file with jq; dies if it is missing.
json_number() {
    jq -er "$2 | numbers" "$1" 2>/dev/null || die "no number at $2 in $1: $(head -c 300 "$1")"
}

port_free() {
    [ -z "$(ss -Hltn "sport = :$1" 2>/dev/null)" ]
}

port_listening() {
    ss -Hltn "sport = :$1" 2>/dev/null | grep -q "127.0.0.1:$1"
}

# A TCP port free now, in 20000..29999 (below the ephemeral range); $1 varies the pick.
pick_port() {
    p=$((20000 + ($$ * 7 + $1 * 131) % 10000))
    i=0
    while ! port_free "$p" && [ "$i" -lt 100 ]; do
        p=$((20000 + (p - 20000 + 1) % 10000))
        i=$((i + 1))
    done
    echo "$p"
}

# stop_pid SIGNAL PID: sends SIGNAL, waits up to STOP_TRIES x 0.1 s (default 50)
# for the process to exit, then SIGKILL; reaps it. The caller started PID.
stop_pid() {
    kill "-$1" "$2" 2>/dev/null || true
    i=0
    while kill -0 "$2" 2>/dev/null && [ "$i" -lt "${STOP_TRIES:-50}" ]; do
        sleep 0.1
        i=$((i + 1))
    done
    kill -KILL "$2" 2>/dev/null || true
    wait "$2" 2>/dev/null || true
}

# private_tmp NAME: makes $TMP, a new directory for this run, and sets $PIDS empty. On
# exit every PID then in $PIDS is stopped (stop_pid TERM) and $TMP removed; INT and TERM
# exit 130 and 143 through the same.
private_tmp() {
    PIDS=""
    TMP=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX")
    trap private_tmp_cleanup EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
}

private_tmp_cleanup() {
    for pid in $PIDS; do
        stop_pid TERM "$pid"
    done
    rm -rf "$TMP"
}

# nginx_conf DIR PORT [ACCESS_LOG [MORE]]: a private nginx's configuration, DIR/nginx.conf
# (its pid, error log and temporary files in DIR too): one worker, 127.0.0.1:PORT, kept
# connections for a million requests, GET / answered 200 "hello\n", any other path 404.
# ACCESS_LOG: access_log's arguments (default off; the format "bench" logs the status);
# MORE: more lines of the server block (a location). nginx runs as root.
nginx_conf() {
    mkdir -p "$1/tmp"
    cat >"$1/nginx.conf" <<EOF
# a private nginx for bench/ (see tests/integration/real/nginx.conf)
daemon off;
master_process on;
user root root;
worker_processes 1;
pid $1/nginx.pid;
error_log $1/error.log warn;
events {
    worker_connections 1024;
}
http {
    log_format bench '\$status';
    access_log ${3:-off};
    client_body_temp_path $1/tmp/body;
    proxy_temp_path $1/tmp/proxy;
    fastcgi_temp_path $1/tmp/fastcgi;
    uwsgi_temp_path $1/tmp/uwsgi;
    scgi_temp_path $1/tmp/scgi;
    default_type text/plain;
    keepalive_requests 1000000;
    keepalive_timeout 60s;
    server {
        listen 127.0.0.1:$2;
        server_name _;
        location = / {
            return 200 "hello\n";
        }
        location / {
            return 404 "not here\n";
        }
        ${4:-}
    }
}
EOF
}
