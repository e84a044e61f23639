#!/usr/bin/env bash
# deploy/k8s rendered and checked statically, as a cluster would admit it: `kubectl kustomize`
# (Debian's kubernetes-client, kustomize v2; a newer kubectl too) renders every overlay, and an
# overlay of the test's own sets both images by `images:`. Then
# tests/integration/k8s_restricted.py checks every pod spec against the Pod Security
# `restricted` profile and the project's rules (Guaranteed whole CPUs, read-only root, probes
# not loops, the Job spread), and tests/integration/k8s_policy.py evaluates the NetworkPolicy
# against the labels of every rendered manifest (podman plays no NetworkPolicy); each script
# also checks that manifests or a policy broken one way at a time are refused. And the shapes:
# the TCP pod and the socket pod are the pod overlay's pod but for their names and the load's
# one hop; the load Job measures both hops, the report Job merges, then reports to HTML.
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

need python3 yaml kubectl
KUBECTL=${KUBECTL:-kubectl} # another kubectl (Debian's 1.20 unpacked somewhere) to try it with
OVERLAYS=(pod socket-pod tcp-pod echo-pod service jobs report)
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

# The socket pod and the TCP pod: the pod overlay's pod but for their names (their emptyDirs'
# too) and the load's one backend hop, both under the label fcgi (so compare pairs their cells)
pod_pair() { # POD-YAML SOCKET-YAML TCP-YAML: per pod its name, volumes, endpoints, labels, "same"
    python3 - "$@" <<'EOP'
import json, sys, yaml

def pod(path):
    with open(path, encoding="utf-8") as f:
        return next(d for d in yaml.safe_load_all(f) if d and d["kind"] == "Pod")

def shape(p, kind):
    """The pod with its names put back and its load's args taken out: (shape, args)."""
    text = json.dumps(p).replace(f"hopbench-{kind}", "hopbench-stack")
    d = json.loads(text.replace(f'"{kind}-', '"stack-'))
    return d, d["spec"]["containers"][0].pop("args")

base, _ = shape(pod(sys.argv[1]), "stack")
out = []
for kind, path in (("socket", sys.argv[2]), ("tcp", sys.argv[3])):
    d, args = shape(pod(path), kind)
    eps = [a for a in args if a.startswith(("tcp://", "unix:"))]
    labels = [args[i + 1] for i, a in enumerate(args[:-1]) if a == "--label"]
    vols = ",".join(v["name"] for v in pod(path)["spec"]["volumes"])
    out.append(f"{pod(path)['metadata']['name']} {vols} {','.join(eps)} {','.join(labels)} "
               f"{'same' if d == base else 'differs'}")
print(" | ".join(out))
EOP
}
check_eq "the socket pod and the TCP pod: the pod overlay's pod, each on one hop, label fcgi" \
    "hopbench-socket socket-sock,socket-tmp,socket-out,conf tcp://127.0.0.1:8081 fcgi same | hopbench-tcp tcp-sock,tcp-tmp,tcp-out,conf tcp://127.0.0.1:8080 fcgi same" \
    "$(pod_pair "$T/pod.yaml" "$T/socket-pod.yaml" "$T/tcp-pod.yaml")"

# The load Job and the report Job: every load pod measures both hops through the Service
# (NAME.tcp and NAME.unix, 4 runs each at least: its evidence has a bottom line with verdicts),
# the report Job merges every completion's file and its last step is `report` of them all and
# the merged one to an HTML file, which prints their bottom line in its log
jobs_report() { # JOBS-YAML REPORT-YAML: what the two Jobs run, in a line
    python3 - "$@" <<'EOP'
import sys, yaml

def job(path, name):
    with open(path, encoding="utf-8") as f:
        return next(d for d in yaml.safe_load_all(f) if d and d["kind"] == "Job" and
                    d["metadata"]["name"] == name)

load, rep = job(sys.argv[1], "hopbench-load"), job(sys.argv[2], "hopbench-report")
n = load["spec"]["completions"]
args = load["spec"]["template"]["spec"]["containers"][0]["args"]
opt = lambda a, k: [a[i + 1] for i, x in enumerate(a[:-1]) if x == k]
eps = [a for a in args if a.startswith("tcp://")]
files = [f"/out/load-{i}.json" for i in range(n)]
spec = rep["spec"]["template"]["spec"]
merge, last = spec["initContainers"][-1]["args"], spec["containers"][-1]["args"]
print(f"{len(eps)} endpoints through the Service: {all('SERVICE_HOST' in e for e in eps)}; "
      f"labels {','.join(opt(args, '--label'))}; reps >= 4: {int(opt(args, '--reps')[0]) >= 4}; "
      f"merge of every pod's file: {merge[0] == 'merge' and merge[1:1 + n] == files}; "
      f"then {last[0]} of them and {last[1 + n]}, -o {opt(last, '-o')[0]}; "
      f"its files: {last[1:1 + n] == files}")
EOP
}
check_eq "the load Job measures both hops; the report Job merges, then reports and prints" \
    "2 endpoints through the Service: True; labels fcgi.tcp,fcgi.unix; reps >= 4: True; merge of every pod's file: True; then report of them and /out/merged.json, -o /out/report.html; its files: True" \
    "$(jobs_report "$T/jobs.yaml" "$T/report.yaml")"

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
