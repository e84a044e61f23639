#!/bin/sh
# Installs the Debian packages hopbench needs for a purpose, only those missing.
#   scripts/deps.sh build   the compiler (gcc; clang when CC names clang, with its sanitizer
#                           runtimes, libclang-rt-14-dev, when FLAVOUR is asan or tsan), C library
#                           headers, make, pkg-config, libjansson-dev, libssl-dev (libcrypto: the
#                           database protocols' password hashing), liburing-dev (run --wait uring),
#                           zlib1g-dev (report --hdr-log: HdrHistogram's deflated encoding)
#   scripts/deps.sh test    build + libcmocka-dev, jq, iproute2 (ss), procps, strace, time (GNU
#                           time: the memory bound of test_evidence_limits.sh), wrk (test_retry.sh
#                           holds hopbench's retries against it), and the real
#                           servers of tests/integration/test_real.sh and test_stack_*.sh: nginx,
#                           apache2, lighttpd, php-fpm (Debian's default version: php8.2-fpm on 12),
#                           redis-server, redis-tools (redis-cli), memcached (test_memcached.sh),
#                           libfcgi-bin (cgi-fcgi), curl, postgresql, mariadb-server and
#                           mariadb-client (test_db.sh); groff-base and man-db (the man page test);
#                           the image purpose's packages and python3-yaml (the image and pod test:
#                           it plays a Job's pods from the manifest); kubernetes-client (kubectl
#                           kustomize renders deploy/k8s: test_k8s_policy.sh, test_image.sh;
#                           a kubectl already installed will do: another package's, such as the
#                           cloud SDK's, owns /usr/bin/kubectl then); chromium and python3 (the
#                           HTML report opened in a headless browser: test_report.sh);
#                           python3-jsonschema, nodejs, npm and ca-certificates (npm's TLS to
#                           its registry) (test_formats.sh: the evidence
#                           against docs/evidence.schema.json, and the HdrHistogram files read by
#                           hdr-histogram-js), then hdr-histogram-js itself from npm, pinned
#                           (HDR_JS_VERSION), into build/npm of the clone (HDR_JS_DIR), not the system
#   scripts/deps.sh bench   test's packages but the image ones and python3-yaml, + sockperf,
#                           linux-perf, wrk, sysbench (GNU time: bench/peers.sh uses it too)
#   scripts/deps.sh fuzz    build + clang, libclang-rt-14-dev (libFuzzer)
#   scripts/deps.sh image   podman, runc, catatonit, netavark and aardvark-dns (pods on one network
#                           find each other by name), iptables (netavark runs it to set up a pod's
#                           network; without it a pod fails "netavark: No such file or directory"),
#                           debootstrap (make image, make image-stack)
#   scripts/deps.sh check   debootstrap (make deps-check: a clean Debian 12 root to run this in)
#   scripts/deps.sh lint    build + clang-format, cppcheck, clang-tidy (make format, format-check,
#                           lint; clang-tidy parses the sources, so it needs the build's headers)
#   scripts/deps.sh --list PURPOSE   prints the packages of PURPOSE, one a line, and installs
#                           nothing (scripts/deps-check.sh holds scripts/programs.txt against it)
# CC and FLAVOUR are read from the environment (the Makefile passes its own).
# Runs apt-get only when something is missing; needs root for that. Two at once (make -j2 runs
# the build's and the tests' at the same time) take turns on a lock, /run/lock/hopbench-deps.lock:
# the second looks again once the first is done, and finds nothing left to install.
set -eu
list=false
if [ "${1:-}" = --list ]; then
    list=true
    shift
fi
cc=gcc
case "${CC:-cc}" in
*clang*)
    cc=clang
    case "${FLAVOUR:-release}" in asan | tsan) cc="clang libclang-rt-14-dev" ;; esac
    ;;
esac
want="$cc libc6-dev make pkg-config libjansson-dev libssl-dev liburing-dev zlib1g-dev"
real="nginx apache2 lighttpd php-fpm redis-server redis-tools libfcgi-bin curl postgresql mariadb-server mariadb-client memcached"
manual="groff-base man-db"
container="podman runc catatonit netavark aardvark-dns iptables debootstrap"
case "${1:-build}" in
build) ;;
test) want="$want libcmocka-dev jq iproute2 procps strace time wrk $real $manual $container python3-yaml kubernetes-client chromium python3 python3-jsonschema nodejs npm ca-certificates" ;;
bench) want="$want libcmocka-dev jq iproute2 procps strace $real $manual chromium python3 sockperf linux-perf wrk time sysbench" ;;
fuzz) want="$want clang libclang-rt-14-dev" ;;
image) want="$container" ;;
check) want="debootstrap" ;;
lint) want="$want clang-format cppcheck clang-tidy" ;;
*) echo "deps.sh: unknown purpose '$1' (build, test, bench, fuzz, image, check or lint)" >&2; exit 64 ;;
esac
if $list; then
    # shellcheck disable=SC2086 # want is a list of words
    printf '%s\n' $want | awk '!seen[$0]++'
    exit 0
fi
# missing_now : sets missing to the packages of want that are not installed.
missing_now() {
    missing=""
    for p in $want; do
        case " $missing " in *" $p "*) continue ;; esac
        # a nodejs that brings its own npm (NodeSource's, which conflicts with Debian's) will do
        [ "$p" = npm ] && [ -x /usr/bin/npm ] && continue
        # a kubectl of another package (a cloud SDK's) owns /usr/bin/kubectl: it will do
        [ "$p" = kubernetes-client ] && command -v kubectl >/dev/null 2>&1 && continue
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q '^install ok installed$' || missing="$missing $p"
    done
}
# npm_deps : for test, hdr-histogram-js from npm at HDR_JS_VERSION into HDR_JS_DIR, unless there.
npm_deps() {
    [ "${1:-build}" = test ] || return 0
    v=${HDR_JS_VERSION:-3.0.1}
    d=${HDR_JS_DIR:-$(cd "$(dirname "$0")/.." && pwd)/build/npm}
    grep -qs "\"version\": \"$v\"" "$d/node_modules/hdr-histogram-js/package.json" && return 0
    echo "hopbench: installing hdr-histogram-js@$v (npm) into $d"
    mkdir -p "$d" && npm install --prefix "$d" --no-audit --no-fund --no-save --loglevel=error \
        "hdr-histogram-js@$v" >/dev/null
}
missing_now
[ -z "$missing" ] && { npm_deps "$@"; exit; }
if [ "$(id -u)" != 0 ]; then
    echo "hopbench: missing Debian packages:$missing; run as root: apt-get install -y$missing" >&2
    exit 1
fi
# One at a time: apt-get fails at once on a lock another holds. The lock goes with this process.
mkdir -p /run/lock
exec 9>>/run/lock/hopbench-deps.lock
if ! flock -n 9; then
    echo "hopbench: waiting for another scripts/deps.sh to finish installing"
    flock 9
    missing_now
    [ -z "$missing" ] && { npm_deps "$@"; exit; }
fi
echo "hopbench: installing Debian packages:$missing"
export DEBIAN_FRONTEND=noninteractive
# The servers (nginx, php-fpm, redis) are for private instances the tests start and stop;
# keep their packages from starting system services (policy-rc.d 101: "action forbidden").
guard=""
if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod 755 /usr/sbin/policy-rc.d &&
        guard=/usr/sbin/policy-rc.d
fi
status=0
apt-get update -qq || status=$?
# shellcheck disable=SC2086
[ "$status" -ne 0 ] || apt-get install -y -qq --no-install-recommends $missing >/dev/null || status=$?
[ -z "$guard" ] || rm -f "$guard"
[ "$status" -ne 0 ] || npm_deps "$@" || status=$?
exit "$status"
