#!/usr/bin/env python3
"""Checks rendered manifests against the Pod Security `restricted` rules and the project's own.

Reads every document of the YAML files given (the overlays of deploy/k8s as `kubectl
kustomize` renders them) and, for every pod spec in them (a Pod's, a Job's template), checks
the rules of the Pod Security Standards' `restricted` profile that apply to Linux pods,
written from the published rules (baseline's, then restricted's):
- no hostNetwork, hostPID or hostIPC; no hostPort; no privileged container;
- volumes only of the types restricted allows (configMap, csi, downwardAPI, emptyDir,
  ephemeral, persistentVolumeClaim, projected, secret): never hostPath;
- no AppArmor profile but runtime/default or localhost/*, no SELinux type beyond the
  container ones, no user or role, procMount Default, only the safe sysctls;
- allowPrivilegeEscalation false and capabilities.drop holding ALL in every container
  (init containers too), capabilities.add nothing but NET_BIND_SERVICE;
- runAsNonRoot true (the pod's, or every container's) and never false, runAsUser never 0;
- seccompProfile RuntimeDefault or Localhost (the pod's, or every container's).
And the project's: every container has requests equal to limits for cpu and memory (a
Guaranteed pod), the measured containers (load, server, nginx, php-fpm) whole CPUs, a
read-only root file system, every mount a volume of its pod; a sidecar has a startup probe and no container waits in a shell
loop; an Indexed Job spreads its pods over the nodes.
Then it checks that each rule can fail: copies of the manifests broken one way at a time
must be refused. Prints "ok NAME" or "not ok NAME # WHY" lines; exits 1 when any failed.
"""
import copy
import re
import sys
from fractions import Fraction

import yaml

VOLUMES = {"configMap", "csi", "downwardAPI", "emptyDir", "ephemeral",
           "persistentVolumeClaim", "projected", "secret"}
SAFE_SYSCTLS = {"kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range",
                "net.ipv4.ip_unprivileged_port_start", "net.ipv4.tcp_syncookies",
                "net.ipv4.ping_group_range", "net.ipv4.ip_local_reserved_ports",
                "net.ipv4.tcp_keepalive_time", "net.ipv4.tcp_fin_timeout",
                "net.ipv4.tcp_keepalive_intvl", "net.ipv4.tcp_keepalive_probes"}
SELINUX_TYPES = {None, "", "container_t", "container_init_t", "container_kvm_t",
                 "container_engine_t"}
MEASURED = {"load", "server", "nginx", "php-fpm"}
UNITS = {"": 1, "m": Fraction(1, 1000), "k": 10**3, "M": 10**6, "G": 10**9,
         "Ki": 2**10, "Mi": 2**20, "Gi": 2**30}


def quantity(q):
    """A resource quantity ("1", "500m", "256Mi") as an exact number; None if malformed."""
    m = re.fullmatch(r"([0-9]+(?:\.[0-9]+)?)(m|k|M|G|Ki|Mi|Gi)?", str(q))
    return Fraction(m.group(1)) * UNITS[m.group(2) or ""] if m else None


def pod_specs(docs):
    """(name, pod spec) of every Pod and every Job's pod template."""
    for d in docs:
        kind, name = d.get("kind"), d.get("metadata", {}).get("name")
        if kind == "Pod":
            yield f"Pod {name}", d["spec"]
        elif kind == "Job":
            yield f"Job {name}", d["spec"]["template"]["spec"]


def containers(spec):
    return spec.get("initContainers", []) + spec.get("containers", [])


def restricted(spec):
    """What breaks the restricted profile in one pod spec; [] when nothing does."""
    out = []
    psc = spec.get("securityContext") or {}
    for k in ("hostNetwork", "hostPID", "hostIPC"):
        if spec.get(k):
            out.append(f"{k} is set")
    for v in spec.get("volumes", []):
        kinds = set(v) - {"name"}
        if not kinds <= VOLUMES:
            out.append(f"volume {v.get('name')} is {sorted(kinds - VOLUMES)}")
    for s in psc.get("sysctls") or []:
        if s.get("name") not in SAFE_SYSCTLS:
            out.append(f"sysctl {s.get('name')} is not a safe one")
    ctrs = containers(spec)
    for scope, sc in [("pod", psc)] + [(c["name"], c.get("securityContext") or {}) for c in ctrs]:
        se = sc.get("seLinuxOptions") or {}
        if se.get("type") not in SELINUX_TYPES or se.get("user") or se.get("role"):
            out.append(f"{scope}: seLinuxOptions {se}")
        aa = (sc.get("appArmorProfile") or {}).get("type")
        if aa not in (None, "RuntimeDefault", "Localhost"):
            out.append(f"{scope}: appArmorProfile {aa}")
        if sc.get("runAsNonRoot") is False:
            out.append(f"{scope}: runAsNonRoot is false")
        if sc.get("runAsUser") == 0:
            out.append(f"{scope}: runAsUser is 0")
        sp = (sc.get("seccompProfile") or {}).get("type")
        if sp is not None and sp not in ("RuntimeDefault", "Localhost"):
            out.append(f"{scope}: seccompProfile {sp}")
    for c in ctrs:
        sc, n = c.get("securityContext") or {}, c["name"]
        if sc.get("privileged"):
            out.append(f"{n}: privileged")
        if sc.get("procMount", "Default") != "Default":
            out.append(f"{n}: procMount {sc['procMount']}")
        if sc.get("allowPrivilegeEscalation") is not False:
            out.append(f"{n}: allowPrivilegeEscalation is not false")
        caps = sc.get("capabilities") or {}
        if "ALL" not in (caps.get("drop") or []):
            out.append(f"{n}: capabilities.drop lacks ALL")
        if set(caps.get("add") or []) - {"NET_BIND_SERVICE"}:
            out.append(f"{n}: capabilities.add {caps['add']}")
        if any(p.get("hostPort") for p in c.get("ports") or []):
            out.append(f"{n}: a hostPort")
        if not psc.get("runAsNonRoot") and sc.get("runAsNonRoot") is not True:
            out.append(f"{n}: runAsNonRoot is not true (nor the pod's)")
        pod_sp = (psc.get("seccompProfile") or {}).get("type")
        if pod_sp is None and (sc.get("seccompProfile") or {}).get("type") is None:
            out.append(f"{n}: no seccompProfile (nor the pod's)")
    return out


def own(name, spec):
    """What breaks the project's own rules in one pod spec; [] when nothing does."""
    out = []
    for c in containers(spec):
        n, res = c["name"], c.get("resources") or {}
        req, lim = res.get("requests") or {}, res.get("limits") or {}
        for r in ("cpu", "memory"):
            if r not in req or r not in lim or quantity(req[r]) != quantity(lim[r]):
                out.append(f"{n}: {r} request {req.get(r)} is not its limit {lim.get(r)}")
        cpu = quantity(lim.get("cpu", "0"))
        if n in MEASURED and (cpu is None or cpu == 0 or cpu.denominator != 1):
            out.append(f"{n}: a measured container with {lim.get('cpu')} CPUs, not whole ones")
        if (c.get("securityContext") or {}).get("readOnlyRootFilesystem") is not True:
            out.append(f"{n}: the root file system is not read-only")
        for m in c.get("volumeMounts") or []:
            if m["name"] not in {v["name"] for v in spec.get("volumes") or []}:
                out.append(f"{n}: mounts {m['name']}, no volume of the pod")
        line = " ".join(c.get("command", []) + c.get("args", []))
        if re.search(r"\b(for|while|until)\b.*\bsleep\b", line):
            out.append(f"{n}: waits in a shell loop")
    for c in spec.get("initContainers", []):
        if c.get("restartPolicy") == "Always" and "startupProbe" not in c:
            out.append(f"{c['name']}: a sidecar without a startup probe")
    if name.startswith("Job ") and spec.get("_indexed") and not any(
            t.get("topologyKey") == "kubernetes.io/hostname"
            for t in spec.get("topologySpreadConstraints") or []):
        out.append("an Indexed Job whose pods are not spread over the nodes")
    return out


def problems(docs):
    """Every rule broken in docs, as "POD: what"."""
    for d in docs:
        if d.get("kind") == "Job" and d["spec"].get("completionMode") == "Indexed":
            d["spec"]["template"]["spec"]["_indexed"] = True
    out = []
    for name, spec in pod_specs(docs):
        out += [f"{name}: {w}" for w in restricted(spec) + own(name, spec)]
    for d in docs:
        if d.get("kind") == "Job":
            d["spec"]["template"]["spec"].pop("_indexed", None)
    return out


def broken(docs):
    """Copies of docs each broken one way, each of which the checks must refuse."""
    def first(ds, kind, pred=lambda c: True):
        for name, spec in pod_specs(ds):
            for c in containers(spec):
                if name.startswith(kind) and pred(c):
                    return spec, c
        raise LookupError(kind)

    def edit(what, fn):
        ds = copy.deepcopy(docs)
        fn(ds)
        return what, ds

    def sc(ds):
        return first(ds, "Pod", lambda c: c["name"] == "load")[1]["securityContext"]

    def job(ds):
        return next(d for d in ds if d.get("kind") == "Job" and
                    d["spec"].get("completionMode") == "Indexed")["spec"]["template"]["spec"]

    return [
        edit("a hostPath volume for the results", lambda ds: first(ds, "Pod")[0]["volumes"].append(
            {"name": "out", "hostPath": {"path": "/tmp", "type": "Directory"}})),
        edit("a container without resources", lambda ds: first(ds, "Pod")[1].pop("resources")),
        edit("a limit above the request", lambda ds: first(ds, "Pod")[1]["resources"]["limits"]
             .__setitem__("cpu", "2")),
        edit("the load on half a CPU", lambda ds: first(ds, "Pod", lambda c: c["name"] == "load")[1]
             .__setitem__("resources", {"requests": {"cpu": "500m", "memory": "64Mi"},
                                        "limits": {"cpu": "500m", "memory": "64Mi"}})),
        edit("runAsUser 0", lambda ds: sc(ds).__setitem__("runAsUser", 0)),
        edit("runAsNonRoot false", lambda ds: sc(ds).__setitem__("runAsNonRoot", False)),
        edit("no runAsNonRoot anywhere", lambda ds: [
            s.get("securityContext", {}).pop("runAsNonRoot", None) for _, s in pod_specs(ds)]),
        edit("privilege escalation allowed", lambda ds: sc(ds).pop("allowPrivilegeEscalation")),
        edit("capabilities kept", lambda ds: sc(ds).pop("capabilities")),
        edit("SYS_ADMIN added", lambda ds: sc(ds)["capabilities"].__setitem__("add", ["SYS_ADMIN"])),
        edit("a privileged container", lambda ds: sc(ds).__setitem__("privileged", True)),
        edit("a writable root file system", lambda ds: sc(ds).pop("readOnlyRootFilesystem")),
        edit("seccomp Unconfined", lambda ds: sc(ds).__setitem__(
            "seccompProfile", {"type": "Unconfined"})),
        edit("no seccomp profile", lambda ds: [
            s.get("securityContext", {}).pop("seccompProfile", None) for _, s in pod_specs(ds)]),
        edit("hostNetwork", lambda ds: first(ds, "Pod")[0].__setitem__("hostNetwork", True)),
        edit("a hostPort", lambda ds: first(ds, "Pod")[1].__setitem__(
            "ports", [{"containerPort": 80, "hostPort": 80}])),
        edit("an unsafe sysctl", lambda ds: first(ds, "Pod")[0]["securityContext"].__setitem__(
            "sysctls", [{"name": "net.core.somaxconn", "value": "4096"}])),
        edit("a shell loop waiting for php-fpm", lambda ds: first(ds, "Pod")[1].__setitem__(
            "command", ["bash", "-c", "for i in {1..300}; do exec nginx; sleep 0.1; done"])),
        edit("a sidecar without its startup probe", lambda ds: first(
            ds, "Pod", lambda c: c.get("restartPolicy") == "Always")[1].pop("startupProbe")),
        edit("a mount of a volume the pod lacks", lambda ds: first(ds, "Pod", lambda c: any(
            c.get("volumeMounts") or []))[1]["volumeMounts"][0].__setitem__("name", "gone")),
        edit("the Indexed Job not spread", lambda ds: job(ds).pop("topologySpreadConstraints")),
    ]


def main():
    docs = []
    for path in sys.argv[1:]:
        with open(path, encoding="utf-8") as f:
            docs += [d for d in yaml.safe_load_all(f) if d]
    failed = 0

    def report(name, why):
        nonlocal failed
        failed += bool(why)
        print(f"not ok {name} # {why}" if why else f"ok {name}")

    specs = list(pod_specs(docs))
    report(f"the rendered manifests hold pods ({len(specs)} pod specs)",
           "" if len(specs) >= 5 else f"only {[n for n, _ in specs]}")
    found = problems(docs)
    report("every pod spec meets the restricted profile and the project's rules", "; ".join(found))
    if found:
        return 1  # the copies below are broken from manifests that pass
    for name, ds in broken(docs):
        report(f"manifests with {name} are refused",
               "" if problems(ds) else "the checks found nothing wrong")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
