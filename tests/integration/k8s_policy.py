#!/usr/bin/env python3
"""Checks the NetworkPolicy php-fpm-from-web against the labels the other manifests use.

podman kube play ignores NetworkPolicy, so nothing runs it; this reads every manifest given
(the overlays of deploy/k8s as `kubectl kustomize` renders them, one file each) and
evaluates the policy as a cluster's network plugin would, for the pods those manifests make:
- its podSelector selects exactly the pods the Service php-fpm sends to (and at least one);
- every ingress rule names its peers by podSelector alone (no namespaceSelector or ipBlock,
  no rule without `from`, which would let every source in), and together they select the
  web pod and no other pod: not the load Job's, not any other manifest's;
- each rule opens TCP on the Service's targetPort, and only that.
Then it checks that each of these checks can fail: a copy of the policy broken one way at a
time (any pod allowed, the Job's pods allowed, another port, the wrong pod protected) must be
refused. Prints "ok NAME" or "not ok NAME # WHY" lines; exits 1 when any check failed.
"""
import copy
import sys

import yaml

POLICY = "php-fpm-from-web"
SERVICE = "php-fpm"
WEB = "hopbench-web"


def selector_matches(sel, labels):
    """A LabelSelector (matchLabels and matchExpressions) against a pod's labels."""
    if sel is None:
        return False
    for k, v in (sel.get("matchLabels") or {}).items():
        if labels.get(k) != v:
            return False
    for e in sel.get("matchExpressions") or []:
        k, op, vals = e["key"], e["operator"], e.get("values") or []
        if op == "In" and labels.get(k) not in vals:
            return False
        if op == "NotIn" and k in labels and labels[k] in vals:
            return False
        if op == "Exists" and k not in labels:
            return False
        if op == "DoesNotExist" and k in labels:
            return False
    return True


def job_pod_labels(job):
    """The labels of a Job's pods: its template's and those the Job controller adds."""
    name = job["metadata"]["name"]
    labels = dict(job["spec"]["template"].get("metadata", {}).get("labels") or {})
    labels.update({"job-name": name, "batch.kubernetes.io/job-name": name,
                   "controller-uid": "uid", "batch.kubernetes.io/controller-uid": "uid"})
    if job["spec"].get("completionMode") == "Indexed":
        labels["batch.kubernetes.io/job-completion-index"] = "0"
    return labels


def load(paths):
    """Every document of every manifest: (pods as {name: labels}, Services, NetworkPolicies)."""
    pods, services, policies = {}, {}, []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            for doc in yaml.safe_load_all(f):
                if not doc:
                    continue
                kind, name = doc.get("kind"), doc.get("metadata", {}).get("name")
                if kind == "Pod":
                    pods[name] = doc["metadata"].get("labels") or {}
                elif kind == "Job":
                    pods[f"job {name}"] = job_pod_labels(doc)
                elif kind == "Service":
                    services[name] = doc
                elif kind == "NetworkPolicy":
                    policies.append((name, doc))
    return pods, services, policies


def selected(sel, pods):
    return sorted(n for n, labels in pods.items() if selector_matches(sel, labels))


def problems(policy, pods, services):
    """What is wrong with the policy for the Service's pods; [] when nothing is."""
    out = []
    svc = services.get(SERVICE)
    if svc is None:
        return [f"no Service {SERVICE}"]
    backends = selected({"matchLabels": svc["spec"]["selector"]}, pods)
    spec = policy.get("spec", {})
    guarded = selected(spec.get("podSelector"), pods)
    if not backends or guarded != backends:
        out.append(f"podSelector selects {guarded}, the Service's pods are {backends}")
    if "Ingress" not in (spec.get("policyTypes") or ["Ingress"]):
        out.append("policyTypes leaves Ingress out")
    rules = spec.get("ingress") or []
    if not rules:
        out.append("no ingress rule: nothing reaches php-fpm")
    targets = {p.get("targetPort", p["port"]) for p in svc["spec"]["ports"]}
    allowed = set()
    for i, rule in enumerate(rules):
        peers = rule.get("from")
        if not peers:
            out.append(f"ingress[{i}] has no from: every source may connect")
            continue
        for peer in peers:
            if set(peer) != {"podSelector"}:
                out.append(f"ingress[{i}] peer {sorted(peer)} is not a podSelector alone")
            allowed.update(selected(peer.get("podSelector"), pods))
        ports = rule.get("ports") or []
        got = {(p.get("protocol", "TCP"), p.get("port")) for p in ports}
        if not ports or got != {("TCP", t) for t in targets}:
            out.append(f"ingress[{i}] opens {sorted(got, key=str)}, the Service's targetPort is "
                       f"{sorted(targets)}")
    if sorted(allowed) != [WEB]:
        out.append(f"ingress from selects {sorted(allowed)}, want only {WEB}")
    jobs = [n for n in allowed if n.startswith("job ")]
    if jobs:
        out.append(f"ingress from lets the Job's pods in: {jobs}")
    return out


def broken(policy):
    """Copies of the policy each broken one way, each of which the checks must refuse."""
    def edit(name, fn):
        p = copy.deepcopy(policy)
        fn(p["spec"])
        return name, p

    return [
        edit("a from of every pod",
             lambda s: s["ingress"][0].__setitem__("from", [{"podSelector": {}}])),
        edit("a from of the load Job's pods", lambda s: s["ingress"][0]["from"].append(
            {"podSelector": {"matchLabels": {"job-name": "hopbench-load"}}})),
        edit("a rule without from", lambda s: s["ingress"][0].pop("from")),
        edit("a namespaceSelector beside the podSelector", lambda s: s["ingress"][0]["from"][0]
             .__setitem__("namespaceSelector", {})),
        edit("port 9001", lambda s: s["ingress"][0]["ports"][0].__setitem__("port", 9001)),
        edit("the web pod guarded instead", lambda s: s.__setitem__(
            "podSelector", {"matchLabels": {"app": WEB}})),
    ]


def main():
    pods, services, policies = load(sys.argv[1:])
    failed = 0

    def report(name, why):
        nonlocal failed
        if why:
            failed += 1
            print(f"not ok {name} # {why}")
        else:
            print(f"ok {name}")

    mine = [p for f, p in policies if f == POLICY]
    report(f"the manifests hold one NetworkPolicy {POLICY}",
           "" if len(mine) == 1 else f"found {len(mine)}")
    if len(mine) != 1:
        return 1
    policy = mine[0]
    report(f"the manifests make the web pod and the load Job's pods ({len(pods)} pods)",
           "" if WEB in pods and "job hopbench-load" in pods else f"pods: {sorted(pods)}")
    report("the policy guards php-fpm's pods, lets only the web pod in, on the targetPort",
           "; ".join(problems(policy, pods, services)))
    for name, p in broken(policy):
        report(f"a policy with {name} is refused",
               "" if problems(p, pods, services) else "the checks found nothing wrong")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
