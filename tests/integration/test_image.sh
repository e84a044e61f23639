#!/bin/bash
# The container images and the pods, on a real engine (Debian's podman, runc, netavark, the
# private deploy/podman/containers.conf): `make image` builds localhost/hopbench from the
# static binary on an empty base, locally; the image runs the lab in a container with no
# network but its own loopback; `podman kube play deploy/k8s/echo-pod.yaml` runs the
# server and the load container of the pod manifest, sharing the pod's loopback and an
# emptyDir socket volume, and the load container's evidence has every run of both
# transports without an error. `make image-stack` builds the nginx + php8.2-fpm image from
# a debootstrap root file system (in the background, while the first part runs), and
# deploy/k8s/stack-pod.yaml measures its two backend hops in one pod (the FastCGI TCP opens
# tell them apart), stack-service.yaml reaches php-fpm in another pod by the Service's name,
# load-job.yaml's Indexed Job runs three load pods at once and merge-job.yaml adds their
# evidence up: the merged counts are the sums. Each evidence file says in which pod, on
# which node and in which container its load ran. Podman's storage (--root in $T, the vfs
# driver: plain files) and its network configuration are private to the test, and every
# pod, container, image, volume and network goes with them.
# shellcheck disable=SC2016 # $vars in single quotes are jq variables
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

# The image holds the release build whatever the suite runs under: the sanitizer and clang
# passes of CI would build the same image again, so only the plain release pass runs this.
# (lib.sh has copied the binary under test into $T: what it is shows in its own bytes)
if grep -qaE '__(asan|tsan)_init' "$HOPBENCH" || [[ ${CC:-} == *clang* ]]; then
    ok "container image # SKIP built and tested by the release (gcc) pass only"
    done_testing
fi
if [ "$(id -u)" != 0 ]; then
    ok "container image # SKIP needs root (podman's storage, debootstrap)"
    done_testing
fi
# podman and what it runs for a container and a pod's network (netavark runs iptables), make
# image and make image-stack (debootstrap fetches with wget), and this test's own programs
need podman conmon runc catatonit netavark aardvark-dns iptables ip6tables iptables-save \
    debootstrap wget make cc python3 yaml hostname setsid ldd umount
# the project's containers.conf, with the networks podman makes kept in $T
mkdir -p "$T/networks"
{ cat deploy/podman/containers.conf; echo "network_config_dir = \"$T/networks\""; } >"$T/containers.conf"
export CONTAINERS_CONF=$T/containers.conf
PFLAGS="--root $T/storage --runroot $T/run --storage-driver vfs"
IMG=localhost/hopbench:test-$$
STACK_IMG=localhost/hopbench-stack:test-$$
NET=hopbench-test-$$
# shellcheck disable=SC2086 # PFLAGS is a list of flags
pm() { timeout -k 5 180 podman $PFLAGS "$@"; }
# podman keeps a blob-info cache outside its --root, and netavark its address database and
# DNS state under /run/containers and its firewall chains (NETAVARK*) in iptables: what of
# these the test made goes with it
BLOB_CACHE=/var/lib/containers/cache/blob-info-cache-v1.boltdb
BLOB_CACHE_NEW=true
[ -e "$BLOB_CACHE" ] && BLOB_CACHE_NEW=false
NET_RUN_NEW=true
[ -e /run/containers/networks ] && NET_RUN_NEW=false
NET_CHAINS_NEW=true
iptables-save 2>/dev/null | grep -q NETAVARK && NET_CHAINS_NEW=false
netavark_chains_rm() { # the jumps into NETAVARK chains, then the chains
    local t rule chain
    for t in filter nat; do
        iptables -t "$t" -S 2>/dev/null | grep -E -- '^-A .* -j NETAVARK' | sed 's/^-A/-D/' |
            while read -r rule; do eval "iptables -t $t $rule"; done
        for chain in $(iptables -t "$t" -S 2>/dev/null | awk '$1 == "-N" && $2 ~ /^NETAVARK/ { print $2 }'); do
            iptables -t "$t" -F "$chain" && iptables -t "$t" -X "$chain"
        done
    done
}
# The image builds run in process groups of their own, so that an interrupted test stops
# them (and podman and debootstrap under them) before it removes their files
BUILDS=()
build() { # LOG MAKE-ARGS...: starts make in the background; its pid is the last of BUILDS
    setsid make -s "${@:2}" >"$1" 2>&1 &
    BUILDS+=("$!")
}
pm_cleanup() {
    local m pid
    for pid in "${BUILDS[@]}"; do
        kill -0 "$pid" 2>/dev/null || continue
        kill -TERM -- "-$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
    done
    # debootstrap mounts /proc and /sys in its root while it installs: never rm -rf through
    # them (the root is under $T, or under HOPBENCH_STACK_DIR when that is given)
    awk -v t="$T/" -v s="${STACK_DIR:+$STACK_DIR/}" \
        'index($2, t) == 1 || (s != "" && index($2, s) == 1) { print $2 }' /proc/mounts | sort -r |
        while read -r m; do umount -l "$m"; done
    pm pod rm -f -a >/dev/null 2>&1
    pm rm -f -a >/dev/null 2>&1
    pm volume rm -f -a >/dev/null 2>&1
    pm network rm -f "$NET" >/dev/null 2>&1
    pm rmi -f -a >/dev/null 2>&1
    if $BLOB_CACHE_NEW; then
        rm -f "$BLOB_CACHE"
        rmdir /var/lib/containers/cache /var/lib/containers 2>/dev/null
    fi
    if $NET_RUN_NEW; then
        rm -rf /run/containers/networks
        rmdir /run/containers 2>/dev/null
    fi
    $NET_CHAINS_NEW && netavark_chains_rm
}
trap 'pm_cleanup; cleanup' EXIT
trap 'pm_cleanup; cleanup; exit 130' INT
trap 'pm_cleanup; cleanup; exit 143' TERM

# debootstrap takes minutes, mostly waiting on the mirror: it runs while the first part does
start_s=$(date +%s)
# (HOPBENCH_STACK_DIR: a directory that keeps the root file system's tar between runs)
STACK_DIR=${HOPBENCH_STACK_DIR:-$T/stack}
build "$T/stack.log" image-stack STACK_DIR="$STACK_DIR" PODMAN_FLAGS="$PFLAGS" STACK_IMAGE="$STACK_IMG"
STACK_PID=${BUILDS[-1]}

# FLAVOUR=release on the command line outranks the asan/tsan a sanitizer pass hands down
build "$T/image.log" FLAVOUR=release image PODMAN_FLAGS="$PFLAGS" IMAGE="$IMG"
if wait "${BUILDS[-1]}"; then
    ok "make image builds $IMG locally"
else
    not_ok "make image" "$(tail -n 5 "$T/image.log" | tr '\n' '|')"
    done_testing
fi
check "the image is the static binary alone (one layer, a few MB)" \
    test "$(pm image inspect "$IMG" --format '{{.Size}}')" -lt 20000000
check "the image's binary is static" bash -c "! ldd build/static/hopbench >/dev/null 2>&1"

mkdir -p "$T/out"
pm run --rm --network none -e HOPBENCH_CONTAINER_NAME=lab -v "$T/out:/out" "$IMG" lab --quick \
    --sizes 64 --json /out/lab.json \
    >"$T/lab.out" 2>&1
rc=$?
check_eq "the lab in a container with no network but its loopback: exit 0" 0 "$rc"
[ "$rc" = 0 ] || grep -iE 'error|invalid|saturated|noisy|timeout' "$T/lab.out" | head -n 8 | sed 's/^/# /'
jcheck "the container's lab: every cell of both transports, no error" "$T/out/lab.json" \
    '(.runs | length) == 4 and all(.runs[]; .valid and .errors_total == 0) and
     ([.runs[].transport] | unique) == ["tcp", "unix"]'
jcheck "the container's lab says it ran in a container named lab, in no pod" "$T/out/lab.json" \
    '.placement | .kind == "container" and .container == "lab" and .pod == null and .node == null'

sed -e "s|IMAGE|$IMG|g" -e "s|OUT|$T/out|g" deploy/k8s/echo-pod.yaml >"$T/pod.yaml"
mkdir -p "$T/kube" # kube play looks for a build directory named after the image here
if (cd "$T/kube" && pm kube play "$T/pod.yaml") >"$T/play.out" 2>&1; then
    ok "podman kube play deploy/k8s/echo-pod.yaml"
else
    not_ok "podman kube play deploy/k8s/echo-pod.yaml" "$(tail -n 5 "$T/play.out" | tr '\n' '|')"
fi
rc=$(pm wait hopbench-echo-load 2>/dev/null)
check_eq "the pod's load container exits 0" 0 "$rc"
jcheck "the pod's evidence: 4 reps of tcp over the pod's loopback and 4 over the shared socket" \
    "$T/out/echo-pod.json" \
    '([.runs[] | select(.label == "tcp-lo" and .transport == "tcp")] | length) == 4 and
     ([.runs[] | select(.label == "uds" and .transport == "unix")] | length) == 4 and
     all(.runs[]; .valid and .errors_total == 0)'
pm logs hopbench-echo-load >"$T/load.log" 2>&1
check "the load container's log has the verdict line" grep -q 'uds' "$T/load.log"
pm kube down "$T/pod.yaml" >/dev/null 2>&1
check_eq "no pod is left" "" "$(pm pod ls -q)"

# The manifests as podman plays them: the images and the host directory filled in, and
# what a cluster fills that podman 4.3 does not (tests/integration/kube_fill.py)
fill() { # MANIFEST [kube_fill.py options]: the playable manifest on stdout
    sed -e "s|STACK_IMAGE|$STACK_IMG|g" -e "s|IMAGE|$IMG|g" -e "s|OUT|$T/out|g" "$1" >"$T/filled.yaml" &&
        python3 tests/integration/kube_fill.py --node "$(hostname)" "${@:2}" "$T/filled.yaml"
}
CONFIGMAP=$PWD/deploy/k8s/stack-config.yaml
play() { # NAME MANIFEST [kube_fill.py options]: plays it on the test's network
    fill "$2" "${@:3}" >"$T/$1.yaml" || return 1
    (cd "$T/kube" && pm kube play --network "$NET" --configmap "$CONFIGMAP" "$T/$1.yaml") >"$T/$1.out" 2>&1 || { tail -n 5 "$T/$1.out" | tr '\n' '|'; return 1; }
}
# The placement an evidence file records: where its load ran
placed() { # FILE POD: kind pod, the pod's name, the host as the node, the load container
    jq -e --arg pod "$2" --arg node "$(hostname)" '.placement | .kind == "pod" and .pod == $pod
        and .node == $node and .container == "load" and .namespace == null' "$1" >/dev/null
}
pod_of() { pm ps -a --pod --filter "name=^$1\$" --format '{{.PodName}}'; }
exits0() { # CONTAINER NAME: the container ends with exit 0; else the end of its pod's logs
    local rc
    rc=$(pm wait "$1" 2>/dev/null)
    if [ "$rc" = 0 ]; then ok "$2"; else
        not_ok "$2" "exit '$rc': $(pm pod logs "$(pod_of "$1")" 2>&1 | tail -n 6 | tr '\n' '|')"
    fi
}

if wait "$STACK_PID"; then
    ok "make image-stack builds $STACK_IMG from debootstrap ($(($(date +%s) - start_s)) s from the start)"
else
    not_ok "make image-stack" "$(tail -n 5 "$T/stack.log" | tr '\n' '|')"
    done_testing
fi
check "the stack image's rootfs directory was removed once kept as a tar" test ! -e "$STACK_DIR/rootfs"
pm network create "$NET" >/dev/null
check_eq "podman network create $NET" 0 $?

msg=$(play stack deploy/k8s/stack-pod.yaml)
check_eq "podman kube play deploy/k8s/stack-pod.yaml" "" "$msg"
exits0 hopbench-stack-load "the stack pod's load container exits 0"
jcheck "the stack pod: 4 runs over each backend hop, every reply from php-fpm, no error" \
    "$T/out/stack-pod.json" \
    '([.runs[] | select(.label == "fcgi-tcp")] | length) == 4 and
     ([.runs[] | select(.label == "fcgi-unix")] | length) == 4 and
     all(.runs[]; .valid and .errors_total == 0)'
jcheck "the stack pod's TCP hop opens a connection per request, its socket hop none" \
    "$T/out/stack-pod.json" \
    'all(.runs[] | select(.label == "fcgi-tcp"); .observed.net_delta["Tcp.ActiveOpens"] >= .ops) and
     all(.runs[] | select(.label == "fcgi-unix"); .observed.net_delta["Tcp.ActiveOpens"] == 0)'
pod=$(pod_of hopbench-stack-load)
check "the stack pod's evidence says where it ran: pod '$pod', this host, container load" \
    placed "$T/out/stack-pod.json" "$pod"

sed -n '/^```fields-pod$/,/^```$/p' docs/evidence.md | sed '1d;$d' | sort >"$T/pod.documented"
jq -r --slurpfile plain "$T/out/echo-pod.json" '.placement | keys - ($plain[0].placement | keys) |
    .[] | "placement." + .' "$T/out/stack-pod.json" | sort >"$T/pod.written"
check "docs/evidence.md lists the pod's placement keys" test -s "$T/pod.documented"
check_eq "every pod placement key written is listed, every one listed is written" "" \
    "$(diff "$T/pod.documented" "$T/pod.written" | grep '^[<>]' | tr '\n' ' ')"

msg=$(play service deploy/k8s/stack-service.yaml)
check_eq "podman kube play deploy/k8s/stack-service.yaml" "" "$msg"
exits0 hopbench-web-load "the web pod's load container exits 0"
check_eq "php-fpm runs in a pod of its own" "php-fpm" "$(pod_of php-fpm-php-fpm)"
jcheck "across pods: 3 runs, every reply from the pod php-fpm, a TCP open per request" \
    "$T/out/stack-service.json" \
    '([.runs[] | select(.label == "fcgi-pod")] | length) == 3 and
     all(.runs[]; .valid and .errors_total == 0 and
         .observed.net_delta["Tcp.ActiveOpens"] >= .ops)'
check "the web pod's evidence says where it ran" \
    placed "$T/out/stack-service.json" "$(pod_of hopbench-web-load)"

msg=$(play server deploy/k8s/load-job.yaml --only pods)
check_eq "podman kube play load-job.yaml's volume, server and Service" "" "$msg"
ip=$(pm inspect hopbench-server-server --format "{{(index .NetworkSettings.Networks \"$NET\").IPAddress}}")
msg=$(play jobs deploy/k8s/load-job.yaml --only jobs --env "HOPBENCH_SERVER_SERVICE_HOST=$ip" \
    --env HOPBENCH_SERVER_SERVICE_PORT=8000)
check_eq "the Indexed Job's three pods, played from its template" "" "$msg"
for i in 0 1 2; do
    exits0 "hopbench-load-$i-load" "load pod $i exits 0"
done
msg=$(play merge deploy/k8s/merge-job.yaml --only jobs)
check_eq "the merge Job's pod" "" "$msg"
exits0 hopbench-merge-merge "hopbench merge exits 0"
vol=$(pm volume inspect hopbench-out --format '{{.Mountpoint}}')
for i in 0 1 2; do
    jcheck "load pod $i's evidence: 2 valid runs" "$vol/load-$i.json" \
        '.valid and (.runs | length) == 2'
    check "load pod $i's evidence says it ran in pod $(pod_of "hopbench-load-$i-load")" \
        placed "$vol/load-$i.json" "$(pod_of "hopbench-load-$i-load")"
done
jq -n --slurpfile l "$vol/load-0.json" --slurpfile m "$vol/merged.json" \
    --slurpfile l1 "$vol/load-1.json" --slurpfile l2 "$vol/load-2.json" \
    '{merged: $m[0], parts: ([$l[0], $l1[0], $l2[0]] | map(.runs) | add)}' >"$T/merge-check.json"
jcheck "merged: each rep one run of the three, with the sums of ops, requests and histogram counts" \
    "$T/merge-check.json" \
    '.parts as $in | .merged | (.merged_from | length) == 3 and (.runs | length) == 2 and
     all(.runs[]; .rep as $r | [$in[] | select(.rep == $r)] as $parts |
         ($parts | length) == 3 and .merged_runs == 3 and .ops == ([$parts[].ops] | add) and
         .requests == ([$parts[].requests] | add) and
         .histogram.total == ([$parts[].histogram.total] | add) and
         .histogram.min == ([$parts[].histogram.min] | min) and
         .histogram.max == ([$parts[].histogram.max] | max) and
         .latency_ns.p50 >= ([$parts[].latency_ns.p50] | min) and
         .latency_ns.p50 <= ([$parts[].latency_ns.p50] | max))'
check "merged: each load pod's placement kept, in the merge's order" \
    jtrue --arg p0 "$(pod_of hopbench-load-0-load)" --arg p1 "$(pod_of hopbench-load-1-load)" \
    --arg p2 "$(pod_of hopbench-load-2-load)" \
    '.merged.placement | .kind == "merged" and ([.placements[].pod] == [$p0, $p1, $p2])' \
    "$T/merge-check.json"
for f in merge jobs server service stack; do pm kube down "$T/$f.yaml" >/dev/null 2>&1; done
check_eq "no pod is left" "" "$(pm pod ls -q)"
echo "# test_image: $(($(date +%s) - start_s)) s from the start of the image builds" >&2

done_testing
