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
- --only pods|jobs keeps only the documents that are not Jobs, or only the Jobs' pods.
"""
import argparse
import re
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


def fill_pod(pod, extra, args):
    for c in pod["spec"].get("containers", []):
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
            elif args.only != "jobs":
                out.append(fill_pod(doc, extra, args) if doc.get("kind") == "Pod" else doc)
    yaml.safe_dump_all(out, sys.stdout, sort_keys=False)


if __name__ == "__main__":
    main()
