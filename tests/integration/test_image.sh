#!/bin/bash
# The container images and the pods, on a real engine (Debian's podman, runc, netavark, the
# private deploy/podman/containers.conf): `make image` builds localhost/hopbench from the
# static binary on an empty base, locally, run as the user 65532, labelled and annotated with
# its version, revision and source (OCI); the image runs the lab in a container with no
# network but its own loopback, a read-only root and no capabilities. deploy/k8s's overlays
# are rendered with `kubectl kustomize` (an overlay of the test's own sets both images by
# `images:`) and the rendered output is played by `podman kube play`, with what a cluster
# does and podman 4.3 does not filled in by tests/integration/kube_fill.py (Jobs, sidecars
# started after the probes before them, $(VAR), downward-API fields): the echo pod's load has
# every run of both transports without an error; `make image-stack` builds the nginx +
# php8.2-fpm image from a debootstrap root file system (in the background, while the first
# part runs), and the pod overlay measures its two backend hops in one pod (the FastCGI TCP
# opens tell them apart) with nginx's and php-fpm's CPU and memory per service, under the same
# keys as the host stack's (`hopbench stack nginx-fpm --short`, run meanwhile), from a
# Guaranteed container that says so with its cpuset; the TCP pod and the socket pod (the same
# pod, each on one hop) one after the other, their cells paired by compare; the service
# overlay reaches php-fpm in another pod by the Service's name, the jobs overlay's Indexed Job
# runs three load pods at once against its nginx + php-fpm server pod, both hops each, and the
# report overlay's Job merges their evidence (the merged counts are the sums), draws the HTML
# report and prints the bottom line in its log. Each evidence file says in
# which pod, on which node and in which container its load ran. Podman's storage (--root in
# $T, the vfs driver: plain files) and its network configuration are private to the test,
# and every pod, container, image, volume and network goes with them.
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
    debootstrap wget make cc python3 yaml jsonschema hostname setsid ldd umount kubectl
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

# the lab as the image's user, on a read-only root (podman's tmpfs /tmp), no capabilities
mkdir -p "$T/out"
chown 65532:65532 "$T/out"
pm run --rm --network none --read-only --cap-drop ALL -e HOPBENCH_CONTAINER_NAME=lab \
    -v "$T/out:/out" "$IMG" lab --quick --sizes 64 --json /out/lab.json >"$T/lab.out" 2>&1
rc=$?
check_eq "the lab in a container with no network but its loopback: exit 0" 0 "$rc"
[ "$rc" = 0 ] || grep -iE 'error|invalid|saturated|noisy|timeout' "$T/lab.out" | head -n 8 | sed 's/^/# /'
jcheck "the container's lab: every cell of both transports, no error" "$T/out/lab.json" \
    '(.runs | length) == 4 and all(.runs[]; .valid and .errors_total == 0) and
     ([.runs[].transport] | unique) == ["tcp", "unix"]'
jcheck "the container's lab says it ran in a container named lab, in no pod" "$T/out/lab.json" \
    '.placement | .kind == "container" and .container == "lab" and .pod == null and .node == null'
check_eq "the image runs as the user 65532, not root" "65532:65532" \
    "$(pm image inspect "$IMG" --format '{{.Config.User}}')"
# what the Makefile labelled it with: its VERSION, REVISION (the commit) and SOURCE_URL
for k in version:VERSION revision:REVISION source:SOURCE_URL; do
    want=$(make -s "print-${k#*:}" 2>/dev/null)
    k=${k%%:*}
    check_eq "the image's OCI label and annotation $k" "$want $want" \
        "$(pm image inspect "$IMG" --format "{{index .Labels \"org.opencontainers.image.$k\"}} {{index .Annotations \"org.opencontainers.image.$k\"}}")"
done

# The overlays as a cluster gets them: rendered by kubectl kustomize from an overlay of the
# test's own that sets the images (kustomize v2 takes a base by a relative path only), then
# what a cluster fills that podman 4.3 does not (tests/integration/kube_fill.py)
render() { # OVERLAY: $T/OVERLAY.rendered.yaml
    mkdir -p "$T/k/$1"
    cat >"$T/k/$1/kustomization.yaml" <<EOK
bases:
  - $(realpath --relative-to="$T/k/$1" "deploy/k8s/overlays/$1")
images:
  - {name: hopbench, newName: ${IMG%:*}, newTag: ${IMG##*:}}
  - {name: hopbench-stack, newName: ${STACK_IMG%:*}, newTag: ${STACK_IMG##*:}}
EOK
    timeout 60 kubectl kustomize "$T/k/$1" >"$T/$1.rendered.yaml" 2>"$T/$1.render.err" ||
        { tail -n 3 "$T/$1.render.err" | tr '\n' '|'; return 1; }
}
mkdir -p "$T/kube" # kube play looks for a build directory named after the image here
play() { # NAME OVERLAY [kube_fill.py options]: plays the rendered overlay on the test's network
    python3 tests/integration/kube_fill.py --node "$(hostname)" "${@:3}" "$T/$2.rendered.yaml" \
        >"$T/$1.yaml" || return 1
    (cd "$T/kube" && pm kube play --network "$NET" "$T/$1.yaml") >"$T/$1.out" 2>&1 ||
        { tail -n 5 "$T/$1.out" | tr '\n' '|'; return 1; }
}
vol() { pm volume inspect "$1" --format '{{.Mountpoint}}'; } # an emptyDir's or claim's files
# The placement an evidence file records: where its load ran, Guaranteed by its requests and
# limits (podman runs no kubelet: no QoS tier in the cgroup path), on its cgroup's CPUs
placed() { # FILE POD: kind pod, the pod's name, the host as the node, the load container
    local cpus
    cpus=$(cat "/sys/fs/cgroup/cpuset/libpod_parent/$(pm pod inspect "$2" --format '{{.ID}}')/cpuset.effective_cpus" 2>/dev/null ||
        cat /sys/fs/cgroup/cpuset.cpus.effective)
    jq -e --arg pod "$2" --arg node "$(hostname)" --arg cpus "$cpus" '.placement | .kind == "pod"
        and .pod == $pod and .node == $node and .container == "load" and .namespace == null
        and .qos_class == "Guaranteed" and .qos_from == "resources" and .cpuset == $cpus' \
        "$1" >/dev/null
}
pod_of() { pm ps -a --pod --filter "name=^$1\$" --format '{{.PodName}}'; }
exits0() { # CONTAINER NAME: the container ends with exit 0; else the end of its pod's logs
    local rc
    rc=$(pm wait "$1" 2>/dev/null)
    if [ "$rc" = 0 ]; then ok "$2"; else
        not_ok "$2" "exit '$rc': $(pm pod logs "$(pod_of "$1")" 2>&1 | tail -n 6 | tr '\n' '|')"
    fi
}
OVERLAYS="echo-pod pod tcp-pod socket-pod service jobs report"
for o in $OVERLAYS; do
    msg=$(render "$o")
    check_eq "kubectl kustomize renders the $o overlay with the test's images" "" "$msg"
done
pm network create "$NET" >/dev/null
check_eq "podman network create $NET" 0 $?

msg=$(play echo echo-pod)
check_eq "podman kube play of the echo-pod overlay" "" "$msg"
exits0 hopbench-echo-load "the echo pod's load container exits 0"
jcheck "the pod's evidence: 4 reps of tcp over the pod's loopback and 4 over the shared socket" \
    "$(vol echo-out)/echo-pod.json" \
    '([.runs[] | select(.label == "echo.tcp" and .transport == "tcp")] | length) == 4 and
     ([.runs[] | select(.label == "echo.unix" and .transport == "unix")] | length) == 4 and
     all(.runs[]; .valid and .errors_total == 0)'
check "the echo pod's evidence says where it ran, Guaranteed, on its cgroup's CPUs" \
    placed "$(vol echo-out)/echo-pod.json" hopbench-echo
check "the load wrote its HTML report beside its evidence" grep -q '<html' "$(vol echo-out)/echo-pod.html"
pm logs hopbench-echo-load >"$T/load.log" 2>&1
check "the load container's log ends with the bottom line, unix against tcp" \
    grep -q '^bottom line: unix against tcp' "$T/load.log"
pm kube down "$T/echo.yaml" >/dev/null 2>&1

# the host stack's evidence, for its per-service keys: nginx and php-fpm as the host runs them
# (its verdict on this loaded machine does not matter here: exit 0 or 2)
(cd "$T" && timeout -k 5 120 "$HOPBENCH" stack nginx-fpm --short --json "$T/host-stack.json") \
    >"$T/host-stack.out" 2>&1
rc=$?
check "hopbench stack nginx-fpm --short on the host: exit 0 or 2" test "$rc" = 0 -o "$rc" = 2

if wait "$STACK_PID"; then
    ok "make image-stack builds $STACK_IMG from debootstrap ($(($(date +%s) - start_s)) s from the start)"
else
    not_ok "make image-stack" "$(tail -n 5 "$T/stack.log" | tr '\n' '|')"
    done_testing
fi
check "the stack image's rootfs directory was removed once kept as a tar" test ! -e "$STACK_DIR/rootfs"

msg=$(play stack pod)
check_eq "podman kube play of the pod overlay" "" "$msg"
exits0 hopbench-stack-load "the stack pod's load container exits 0"
SP=$(vol stack-out)/stack-pod.json
pm logs hopbench-stack-load >"$T/stack-load.log" 2>&1
check "the stack pod's log: the bottom line with nginx's and php-fpm's CPU per request" \
    bash -c "grep -q '^bottom line: unix against tcp' '$T/stack-load.log' &&
        grep -q 'CPU µs/req nginx' '$T/stack-load.log' && grep -q 'CPU µs/req php-fpm' '$T/stack-load.log'"
jcheck "the stack pod: 4 runs over each backend hop, every reply from php-fpm, no error" "$SP" \
    '([.runs[] | select(.label == "fcgi.tcp")] | length) == 4 and
     ([.runs[] | select(.label == "fcgi.unix")] | length) == 4 and
     all(.runs[]; .valid and .errors_total == 0)'
jcheck "the stack pod's TCP hop opens a connection per request, its socket hop none" "$SP" \
    'all(.runs[] | select(.label == "fcgi.tcp"); .observed.net_delta["Tcp.ActiveOpens"] >= .ops) and
     all(.runs[] | select(.label == "fcgi.unix"); .observed.net_delta["Tcp.ActiveOpens"] == 0)'
check "the stack pod's evidence says where it ran: pod hopbench-stack, this host, Guaranteed" \
    placed "$SP" hopbench-stack
jcheck "inside the pod: nginx's and php-fpm's CPU and memory in every run, by their names" "$SP" \
    'all(.runs[]; [.observed.services[].name] == ["nginx", "php-fpm"] and
         all(.observed.services[]; .cpu_ns > 0 and .cpu_ns_per_op > 0 and .pss_end > 0 and
             (.source | test("^tree of pid [0-9]+, comm "))) and
         .observed.services_total.sum_ns_per_op > 0)'
# the pod's per-service columns are the host stack's: the same services, the same keys
keys() { # FILE: each service's name and its keys, then services_total's, in the runs through nginx
    jq -s -c '[.[] | (.runs[]? // select(.record == "run")) | .observed |
        select(.services != null and any(.services[]; .name == "nginx")) |
        ([.services[] | {name, keys: keys}], (.services_total | keys))] | unique' "$1"
}
check_eq "the pod's services and their keys are the host stack's" "$(keys "$T/host-stack.json")" \
    "$(keys "$SP")"
check "the host stack's evidence has nginx and php-fpm" grep -q '"php-fpm"' "$T/host-stack.json"

sed -n '/^```fields-pod$/,/^```$/p' docs/evidence.md | sed '1d;$d' | sort >"$T/pod.documented"
# the keys a pod's placement has beyond a plain process's (the host stack's header)
jq -r --slurpfile plain "$T/host-stack.json" '.placement | keys - ($plain[0].placement | keys) |
    .[] | "placement." + .' "$SP" | sort >"$T/pod.written"
check "docs/evidence.md lists the pod's placement keys" test -s "$T/pod.documented"
check_eq "every pod placement key written is listed, every one listed is written" "" \
    "$(diff "$T/pod.documented" "$T/pod.written" | grep '^[<>]' | tr '\n' ' ')"

# the study's TCP pod and socket pod: the pod above, each loading one backend hop alone, one
# after the other; under one label, so that compare pairs their cells
placed_ok=
for kind in tcp socket; do
    msg=$(play "$kind" "$kind-pod")
    check_eq "podman kube play of the $kind-pod overlay" "" "$msg"
    exits0 "hopbench-$kind-load" "the $kind pod's load container exits 0"
    cp "$(vol "$kind-out")/$kind-pod.json" "$T/" # kube down takes the pod's volumes with it
    placed "$T/$kind-pod.json" "hopbench-$kind" && placed_ok+="$kind "
    pm kube down "$T/$kind.yaml" >/dev/null 2>&1
done
TP=$T/tcp-pod.json
SO=$T/socket-pod.json
jcheck "the TCP pod: 4 runs of fcgi, every reply from its pod, a TCP open per request" "$TP" \
    '([.runs[] | select(.label == "fcgi")] | length) == 4 and
     all(.runs[]; .valid and .errors_total == 0 and
         .observed.net_delta["Tcp.ActiveOpens"] >= .ops)'
jcheck "the socket pod: 4 runs of fcgi over the socket, no TCP open" "$SO" \
    '([.runs[] | select(.label == "fcgi")] | length) == 4 and
     all(.runs[]; .valid and .errors_total == 0 and
         .observed.net_delta["Tcp.ActiveOpens"] == 0)'
check_eq "the TCP pod's and the socket pod's evidence say where they ran (checked in the pod's time)" \
    "tcp socket " "${placed_ok:-}"
(cd "$T" && "$HOPBENCH" compare "$TP" "$SO") >"$T/pods-compare.out" 2>&1
check "compare pairs the TCP pod's cell with the socket pod's" \
    grep -qE '^http fcgi reuse .* \(n=4\) .* \(n=4\) ' "$T/pods-compare.out"

# across pods: php-fpm's pod first, ready as the Service would want it, then the web pod
msg=$(play fpm service --pod php-fpm)
check_eq "podman kube play of the service overlay's php-fpm pod" "" "$msg"
for _ in $(seq 100); do
    pm exec php-fpm-php-fpm bash -c 'exec 3<>/dev/tcp/127.0.0.1/9000' 2>/dev/null && break
    sleep 0.2
done
msg=$(play web service --pod hopbench-web)
check_eq "podman kube play of the service overlay's web pod" "" "$msg"
exits0 hopbench-web-load "the web pod's load container exits 0"
check_eq "php-fpm runs in a pod of its own" "php-fpm" "$(pod_of php-fpm-php-fpm)"
WP=$(vol web-out)/stack-service.json
jcheck "across pods: 3 runs, every reply from the pod php-fpm, a TCP open per request, nginx's CPU" \
    "$WP" \
    '([.runs[] | select(.label == "fcgi-pod")] | length) == 3 and
     all(.runs[]; .valid and .errors_total == 0 and
         .observed.net_delta["Tcp.ActiveOpens"] >= .ops and
         .observed.services[0].name == "nginx" and .observed.services[0].cpu_ns > 0)'
check "the web pod's evidence says where it ran" placed "$WP" hopbench-web

msg=$(play server jobs --only pods)
check_eq "podman kube play of the jobs overlay's volume, server and Service" "" "$msg"
# the Service sends once the server pod is ready: nginx's readiness probe, a page through each hop
probe=$(python3 -c 'import sys, yaml
pod = next(d for d in yaml.safe_load_all(open(sys.argv[1])) if d and d["metadata"]["name"] == "hopbench-server")
print(next(c for c in pod["spec"]["containers"] if c["name"] == "nginx")["readinessProbe"]["exec"]["command"][2])' \
    "$T/jobs.rendered.yaml")
for _ in $(seq 150); do
    pm exec hopbench-server-nginx bash -c "$probe" >/dev/null 2>&1 && break
    sleep 0.2
done
check "the jobs overlay's server pod is ready: a page through each hop" \
    pm exec hopbench-server-nginx bash -c "$probe"
ip=$(pm inspect hopbench-server-nginx --format "{{(index .NetworkSettings.Networks \"$NET\").IPAddress}}")
msg=$(play jobs jobs --only jobs --env "HOPBENCH_SERVER_SERVICE_HOST=$ip" \
    --env HOPBENCH_SERVER_SERVICE_PORT_FCGI_TCP=8080 --env HOPBENCH_SERVER_SERVICE_PORT_FCGI_UNIX=8081)
check_eq "the Indexed Job's three pods, played from its template" "" "$msg"
for i in 0 1 2; do
    exits0 "hopbench-load-$i-load" "load pod $i exits 0"
done
msg=$(play report report --only jobs)
check_eq "the report Job's pod" "" "$msg"
exits0 hopbench-report-report "the report Job merges, draws and prints: exit 0"
pm logs hopbench-report-report >"$T/bottom.log" 2>&1
V=$(vol hopbench-out)
check "the report Job drew the load pods' and the merged evidence as HTML on the claim" \
    bash -c "grep -q '<html' '$V/report.html' && grep -q 'merged.json' '$V/report.html'"
# its log: the bottom line, unix against tcp (or, some run not counting, the sentence saying
# no verdict is possible), each load pod's cell named by its file, as `report` of them prints
(cd "$V" && "$HOPBENCH" report load-0.json load-1.json load-2.json merged.json -o "$T/r.html") |
    sed -n '/^bottom line: /,$p' | sed 's|^  load-|  /out/load-|; s|^  cost load-|  cost /out/load-|' | tr -s ' ' >"$T/bottom.want"
check "the report Job's log ends with the load pods' bottom line" \
    bash -c "grep -q '^bottom line: ' '$T/bottom.log' && grep -q '^  /out/load-2.json ' '$T/bottom.log'"
check_eq "the report Job's bottom line is report's of the claim's files" "$(cat "$T/bottom.want")" \
    "$(sed -n '/^bottom line: /,$p' "$T/bottom.log" | tr -s ' ')"
sed -n '/^bottom line: /,$p' "$T/bottom.log" | sed 's/^/# /' >&2
for i in 0 1 2; do
    jcheck "load pod $i's evidence: 4 valid runs over each hop, a bottom line" "$V/load-$i.json" \
        '.valid and ([.runs[] | select(.label == "fcgi.tcp")] | length) == 4 and
         ([.runs[] | select(.label == "fcgi.unix")] | length) == 4 and
         (.bottom_line.rows | length) > 0'
    check "load pod $i's evidence says it ran in pod $(pod_of "hopbench-load-$i-load")" \
        placed "$V/load-$i.json" "$(pod_of "hopbench-load-$i-load")"
done
jq -n --slurpfile l "$V/load-0.json" --slurpfile m "$V/merged.json" \
    --slurpfile l1 "$V/load-1.json" --slurpfile l2 "$V/load-2.json" \
    '{merged: $m[0], parts: ([$l[0], $l1[0], $l2[0]] | map(.runs) | add)}' >"$T/merge-check.json"
jcheck "merged: each rep of each hop one run of the three, with the sums of ops, requests and histogram counts" \
    "$T/merge-check.json" \
    '.parts as $in | .merged | (.merged_from | length) == 3 and (.runs | length) == 8 and
     all(.runs[]; .rep as $r | .label as $l | [$in[] | select(.rep == $r and .label == $l)] as $parts |
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
# every pod's evidence as the schema has it (placement's QoS class and cpuset among it)
tap_from python3 tests/integration/schema_check.py docs/evidence.schema.json "$SP" "$WP" \
    "$V/load-0.json" "$V/merged.json"
for f in report jobs server web fpm stack; do pm kube down "$T/$f.yaml" >/dev/null 2>&1; done
check_eq "no pod is left" "" "$(pm pod ls -q)"
echo "# test_image: $(($(date +%s) - start_s)) s from the start of the image builds" >&2

done_testing
