#!/usr/bin/env bash
# deploy/k8s rendered and checked statically, as a cluster would admit it: `kubectl kustomize`
# (Debian's kubernetes-client, kustomize v2; a newer kubectl too) renders every overlay, and an
# overlay of the test's own sets both images by `images:`. Then
# tests/integration/k8s_restricted.py checks every pod spec against the Pod Security
# `restricted` profile and the project's rules (Guaranteed whole CPUs, read-only root, probes
# not loops, the Job spread), and tests/integration/k8s_policy.py evaluates the NetworkPolicy
# against the labels of every rendered manifest (podman plays no NetworkPolicy); each script
# also checks that manifests or a policy broken one way at a time are refused.
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

need python3 yaml kubectl
KUBECTL=${KUBECTL:-kubectl} # another kubectl (Debian's 1.20 unpacked somewhere) to try it with
OVERLAYS=(pod echo-pod service jobs report)
for o in "${OVERLAYS[@]}"; do
    "$KUBECTL" kustomize "deploy/k8s/overlays/$o" >"$T/$o.yaml" 2>"$T/$o.err"
    check_eq "kubectl kustomize deploy/k8s/overlays/$o renders" "0" "$?"
    grep -v '^# Warning: .* is deprecated' "$T/$o.err" | head -n 3 | sed 's/^/# /'
done
check "no rendered object names an image left unset but hopbench and hopbench-stack" \
    bash -c "! grep -h 'image:' $T/*.yaml | grep -vE 'image: hopbench(-stack)?$'"

# images: set by an overlay of one's own, as docs/kubernetes.md shows (kustomize v2 takes a
# base by a relative path only)
mkdir -p "$T/mine"
cat >"$T/mine/kustomization.yaml" <<EOK
bases:
  - $(realpath --relative-to="$T/mine" deploy/k8s/overlays/pod)
images:
  - {name: hopbench, newName: registry.example/hopbench, newTag: "1.2.3"}
  - {name: hopbench-stack, newName: registry.example/hopbench-stack, newTag: "1.2.3"}
EOK
"$KUBECTL" kustomize "$T/mine" >"$T/mine.yaml" 2>/dev/null
check_eq "images: sets every container's image" \
    "registry.example/hopbench-stack:1.2.3 registry.example/hopbench-stack:1.2.3 registry.example/hopbench:1.2.3" \
    "$(sed -n 's/^ *image: //p' "$T/mine.yaml" | sort | paste -sd ' ')"

R=()
for o in "${OVERLAYS[@]}"; do R+=("$T/$o.yaml"); done
tap_from python3 tests/integration/k8s_restricted.py "${R[@]}"
python3 tests/integration/k8s_restricted.py "${R[@]}" >/dev/null 2>&1
check_eq "k8s_restricted.py exits 0" 0 "$?"
tap_from python3 tests/integration/k8s_policy.py "${R[@]}"
# the script exits 1 on any failed check; a crash before its lines would show here
python3 tests/integration/k8s_policy.py "${R[@]}" >/dev/null 2>&1
check_eq "k8s_policy.py exits 0" 0 "$?"
done_testing
