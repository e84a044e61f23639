#!/usr/bin/env python3
"""What a cluster fills into a manifest and podman 4.3's `kube play` does not, for the tests.

Reads a multi-document manifest and writes one podman plays:
- a Job becomes the pods its controller would make: one per completion, named JOB-INDEX
  for an Indexed Job (JOB_COMPLETION_INDEX in every container's env and the index
  annotation), JOB for a one-completion Job;
- $(VAR) in a container's command and args is expanded from its env, as the kubelet does
  (--env VAR=VALUE adds what the kubelet sets itself: a Service's HOST and PORT);
- a downward-API field podman does not give (metadata.namespace, spec.nodeName) becomes a
  plain value: --node NAME for the node; the namespace is left out (podman has none);
- a sidecar (an init container with restartPolicy Always, Kubernetes 1.29) becomes an
  ordinary container ahead of the others, which podman 4.3 starts in order; the kubelet would
  start each only once the sidecars before it passed their startup probes, so each one's
  command first runs those probes (exec) until they pass, as the kubelet would, within the
  probes' own bound (periodSeconds x failureThreshold); podman runs no probe, so the probes
  are left out of what it plays;
- --only pods|jobs keeps only the documents that are not Jobs, or only the Jobs' pods;
  --pod NAME (repeatable) keeps only the Pods named so, and every document that is neither a
  Pod nor a Job (a ConfigMap): a test plays one pod, waits for what a cluster would wait for
  (a Service sends only to a ready pod), then the next.
"""
import argparse
import re
import shlex
import sys

import yaml

FIELD_VALUES = {"spec.nodeName": "node"}
VAR = re.compile(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)")


def fill_container(c, extra, args):
    env, values = [], dict(extra)
    for e in c.get("env", []):
        path = e.get("valueFrom", {}).get("fieldRef", {}).get("fieldPath")
        if path == "metadata.namespace":
            continue
        if path in FIELD_VALUES:
            e = {"name": e["name"], "value": getattr(args, FIELD_VALUES[path])}
        if "value" in e:
            values[e["name"]] = e["value"]
        env.append(e)
    c["env"] = env
    for key in ("command", "args"):
        if key in c:
            c[key] = [VAR.sub(lambda m: values.get(m.group(1), m.group(0)), a) for a in c[key]]


PROBES = ("startupProbe", "readinessProbe", "livenessProbe")


def probe_wait(probe):
    """A shell line that runs an exec probe until it passes, within its bound; exits 1 if not."""
    cmd = " ".join(shlex.quote(a) for a in probe["exec"]["command"])
    tries = probe.get("failureThreshold", 3) * max(1, probe.get("periodSeconds", 10)) * 5
    return (f"for i in $(seq {tries}); do ({cmd}) >/dev/null 2>&1 && break; sleep 0.2; done; "
            f"({cmd}) >/dev/null 2>&1 || {{ echo 'kube_fill: a startup probe never passed' >&2; "
            "exit 1; }")


def sidecars_first(spec):
    """Sidecars to ordinary containers ahead of the rest, each waiting on the probes before it."""
    inits, side, waits = [], [], []
    for c in spec.get("initContainers", []):
        if c.pop("restartPolicy", None) != "Always":
            inits.append(c)
            continue
        if waits:
            argv = list(c.pop("command", [])) + list(c.pop("args", []))
            c["command"] = ["bash", "-c", "; ".join(waits) + '; exec "$@"', "sidecar"] + argv
        if "startupProbe" in c and "exec" in c["startupProbe"]:
            waits.append(probe_wait(c["startupProbe"]))
        side.append(c)
    if inits:
        spec["initContainers"] = inits
    else:
        spec.pop("initContainers", None)
    spec["containers"] = side + spec.get("containers", [])
    for c in spec["containers"] + inits:
        for p in PROBES:
            c.pop(p, None)


def fill_pod(pod, extra, args):
    sidecars_first(pod["spec"])
    for c in pod["spec"].get("containers", []) + pod["spec"].get("initContainers", []):
        fill_container(c, extra, args)
    return pod


def job_pods(job, extra, args):
    spec, name = job["spec"], job["metadata"]["name"]
    indexed = spec.get("completionMode") == "Indexed"
    for i in range(spec.get("completions", 1)):
        tmpl = yaml.safe_load(yaml.safe_dump(spec["template"]))
        meta = tmpl.setdefault("metadata", {})
        meta["name"] = f"{name}-{i}" if indexed or spec.get("completions", 1) > 1 else name
        meta.setdefault("labels", {})["job-name"] = name
        if indexed:
            meta.setdefault("annotations", {})["batch.kubernetes.io/job-completion-index"] = str(i)
            for c in tmpl["spec"]["containers"]:
                c.setdefault("env", []).insert(0, {"name": "JOB_COMPLETION_INDEX", "value": str(i)})
        yield fill_pod({"apiVersion": "v1", "kind": "Pod", **tmpl}, extra, args)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("manifest")
    p.add_argument("--env", action="append", default=[], metavar="VAR=VALUE")
    p.add_argument("--node", default="node")
    p.add_argument("--only", choices=("pods", "jobs"))
    p.add_argument("--pod", action="append", default=[], metavar="NAME")
    args = p.parse_args()
    extra = dict(kv.split("=", 1) for kv in args.env)
    out = []
    with open(args.manifest, encoding="utf-8") as f:
        for doc in yaml.safe_load_all(f):
            if doc is None:
                continue
            if doc.get("kind") == "Job":
                if args.only != "pods":
                    out.extend(job_pods(doc, extra, args))
            elif doc.get("kind") == "Pod" and args.pod and doc["metadata"]["name"] not in args.pod:
                continue
            elif args.only != "jobs":
                out.append(fill_pod(doc, extra, args) if doc.get("kind") == "Pod" else doc)
    yaml.safe_dump_all(out, sys.stdout, sort_keys=False)


if __name__ == "__main__":
    main()
