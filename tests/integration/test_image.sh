#!/bin/bash
# The container image and a pod, on a real engine (Debian's podman, runc, the private
# deploy/podman/containers.conf): `make image` builds localhost/hopbench from the static
# binary on an empty base, locally; the image runs the lab in a container with no
# network but its own loopback; `podman kube play deploy/k8s/echo-pod.yaml` runs the
# server and the load container of the pod manifest, sharing the pod's loopback and an
# emptyDir socket volume, and the load container's evidence has every run of both
# transports without an error. Podman's storage is private to the test (--root in $T,
# the vfs driver: plain files) and every container, pod and image goes with it.
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
if ! command -v podman >/dev/null 2>&1 || [ "$(id -u)" != 0 ]; then
    ok "container image # SKIP podman is not installed (scripts/deps.sh image) or not root"
    done_testing
fi
export CONTAINERS_CONF=$PWD/deploy/podman/containers.conf
PFLAGS="--root $T/storage --runroot $T/run --storage-driver vfs"
IMG=localhost/hopbench:test-$$
# shellcheck disable=SC2086 # PFLAGS is a list of flags
pm() { timeout -k 5 180 podman $PFLAGS "$@"; }
# podman keeps a blob-info cache outside its --root; one this test made goes with it
BLOB_CACHE=/var/lib/containers/cache/blob-info-cache-v1.boltdb
BLOB_CACHE_NEW=true
[ -e "$BLOB_CACHE" ] && BLOB_CACHE_NEW=false
pm_cleanup() {
    pm pod rm -f -a >/dev/null 2>&1
    pm rm -f -a >/dev/null 2>&1
    pm rmi -f -a >/dev/null 2>&1
    if $BLOB_CACHE_NEW; then
        rm -f "$BLOB_CACHE"
        rmdir /var/lib/containers/cache /var/lib/containers 2>/dev/null
    fi
}
trap 'pm_cleanup; cleanup' EXIT

# FLAVOUR=release on the command line outranks the asan/tsan a sanitizer pass hands down
if make -s FLAVOUR=release image PODMAN_FLAGS="$PFLAGS" IMAGE="$IMG" >"$T/image.log" 2>&1; then
    ok "make image builds $IMG locally"
else
    not_ok "make image" "$(tail -n 5 "$T/image.log" | tr '\n' '|')"
    done_testing
fi
check "the image is the static binary alone (one layer, a few MB)" \
    test "$(pm image inspect "$IMG" --format '{{.Size}}')" -lt 20000000
check "the image's binary is static" bash -c "! ldd build/static/hopbench >/dev/null 2>&1"

mkdir -p "$T/out"
pm run --rm --network none -v "$T/out:/out" "$IMG" lab --quick --sizes 64 --json /out/lab.json \
    >"$T/lab.out" 2>&1
check_eq "the lab in a container with no network but its loopback: exit 0" 0 $?
jcheck "the container's lab: every cell of both transports, no error" "$T/out/lab.json" \
    '(.runs | length) == 4 and all(.runs[]; .valid and .errors_total == 0) and
     ([.runs[].transport] | unique) == ["tcp", "unix"]'

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

done_testing
