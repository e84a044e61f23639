#!/usr/bin/env python3
"""stack_readings.py OUT JSONL CELL K NAME: a stack's table block of measurement CELL in its
stdout OUT against the runs of its K-th run child in its --jsonl JSONL (the valid runs, each
transport's medians), one TAP line per check ("ok NAME: ...", "not ok NAME: ... # why"):
  - connections, latency p99.9 and mean, the noisy runs: the evidence's;
  - each TIME_WAIT row's "(+N)": the median of what the runs added (peak - start), tcp; 0 unix;
  - the system row never below client + services without a line saying why;
  - the lifecycle: with connect-mode runs, the socket's saving split into connect + close
    against the transfer (the response phase), as the phases' means give it; else a line that
    the connections are kept;
  - a load line per transport, its machine figure the runs' busy time over their window.
"""
import json
import re
import statistics
import sys


def runs_of(path, k):
    """The run records of the k-th run child (1-based: its header opens it)."""
    child, runs = 0, []
    with open(path, encoding="utf-8") as f:
        for line in f:
            rec = json.loads(line)
            if rec.get("record") == "header":
                child += 1
            elif rec.get("record") == "run" and child == k:
                runs.append(rec)
    return runs


def block_of(path, cell):
    """The lines of the table block whose header starts with cell, up to the blank line."""
    lines, on = [], False
    head = re.compile(re.escape(cell) + r" +tcp +unix +unix/tcp")
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if on and line == "":
                break
            if on:
                lines.append(line)
            elif head.match(line):
                on = True
    return lines


def dig(obj, *keys):
    for k in keys:
        if not isinstance(obj, dict) or k not in obj:
            return None
        obj = obj[k]
    return obj if isinstance(obj, (int, float)) else None


def med(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def row(block, name):
    for line in block:
        if line.startswith("  " + name + " "):
            return line[len(name) + 2:]
    return None


class Tap:
    def __init__(self, name):
        self.name = name

    def check(self, what, good, why=""):
        print(("ok " if good else "not ok ") + self.name + ": " + what + ("" if good else " # " + why))


def near(a, b, tol):
    return a is not None and b is not None and abs(a - b) <= tol


def gauge(run, arm, row_name):
    """The gauge behind a TIME_WAIT row of arm's run: (peak, start), or None."""
    obs = run.get("observed") or {}
    if row_name.startswith("TIME_WAIT front"):
        hop = obs.get("sockets") or {}
    else:
        hop = next((w for w in obs.get("watch") or [] if w.get("transport") == arm), None) or {}
    g = hop.get("time_wait_client" if row_name.endswith(("client side", "web server"))
                else "time_wait_server") or {}
    peak, start = g.get("peak"), g.get("start")
    if isinstance(peak, (int, float)) and isinstance(start, (int, float)):
        return peak - start
    return None


def main():
    out, jsonl, cell, k, name = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
    tap = Tap(name)
    block = block_of(out, cell)
    runs = [r for r in runs_of(jsonl, k) if r.get("valid") and not r.get("interrupted")]
    arms = {t: [r for r in runs if r.get("cell") == i] for i, t in enumerate(("tcp", "unix"))}
    if not block or not all(arms.values()):
        tap.check("a table block of '%s' and valid runs of both transports" % cell, False,
                  "%d lines, %s runs" % (len(block), {t: len(v) for t, v in arms.items()}))
        return
    for name_, key, scale, tol in (("latency p99.9 µs", "p999", 1e3, 0.051),
                                   ("latency mean µs", "mean", 1e3, 0.051)):
        got = (row(block, name_) or "").split()
        want = [med([dig(r, "latency_ns", key) for r in arms[t]]) / scale for t in ("tcp", "unix")]
        good = len(got) >= 2 and all(near(float(g.replace(",", "")), w, tol) for g, w in zip(got[:2], want))
        tap.check("%s %s: the runs' medians %.1f, %.1f" % (cell, name_, *want), good, " ".join(got[:2]))
    for name_ in ("connections", "noisy runs"):
        got = (row(block, name_) or "").split()
        if name_ == "connections":
            want = [str(arms[t][0].get("connections")) for t in ("tcp", "unix")]
        else:
            want = [str(sum(1 for r in arms[t] if (r.get("observed") or {}).get("other_cpu", {})
                            .get("noisy") is True)) for t in ("tcp", "unix")]
        tap.check("%s %s: %s" % (cell, name_, " ".join(want)), got[:2] == want, " ".join(got[:2]))
    for line in block:
        # counts as every text figure: thousands separated, "12,478 (+2,001)"
        m = re.match(r"  (TIME_WAIT [A-Za-z, ]+?) +(\d{1,3}(?:,\d{3})*) \(([+-]\d{1,3}(?:,\d{3})*)\)"
                     r" +(\d{1,3}(?:,\d{3})*) \(([+-]\d{1,3}(?:,\d{3})*)\)$", line)
        if not m:
            if line.startswith("  TIME_WAIT"):
                tap.check("%s: a TIME_WAIT row with (+added) on both sides" % cell, False, line)
            continue
        for i, t in enumerate(("tcp", "unix")):
            added = int(m.group(3 + 2 * i).replace(",", ""))
            want = med([gauge(r, t, m.group(1)) for r in arms[t]])
            want = 0 if want is None else want  # a Unix socket's hop: no TIME_WAIT
            tap.check("%s %s, %s: (%+d) is what the runs added" % (cell, m.group(1), t, added),
                      want is not None and abs(added - want) <= 0.5, "want %s" % want)
    for t in ("tcp", "unix"):
        sys_ = med([dig(r, "observed", "cpu", "system_ns_per_op") for r in arms[t]])
        sum_ = med([dig(r, "observed", "services_total", "sum_ns_per_op") for r in arms[t]])
        said = any(line.startswith("  (%s: system " % t) for line in block)
        if sys_ is not None and sum_ is not None and sys_ < sum_:
            tap.check("%s %s: system %.2f below client + services %.2f, and said why"
                      % (cell, t, sys_ / 1e3, sum_ / 1e3), said, "no line says why")
        else:
            tap.check("%s %s: system (%s) >= client + services, no line about it"
                      % (cell, t, arms[t][0]["observed"]["cpu"].get("system_source")), not said,
                      "a line says it is below")
        busy = med([dig(r, "observed", "cpu", "system_busy_ns") / dig(r, "observed", "other_cpu", "window_ns")
                    for r in arms[t]])
        m = next((re.match(r"  load %s: (\d+) connection\(s\), \d+ client thread\(s\); busy, CPUs \(medians\): "
                           r"machine ([0-9.]+) of (\d+)" % t, line) for line in block
                  if line.startswith("  load %s:" % t)), None)
        tap.check("%s %s: a load line, the machine's busy CPUs those of the runs (%.2f)" % (cell, t, busy),
                  m is not None and near(float(m.group(2)), busy, 0.006), "no load line or another figure")
    if all(dig(r, "phases", p, "latency_ns", "mean") is not None for r in runs for p in ("connect", "close")):
        life, transfer = {}, {}
        for t in ("tcp", "unix"):
            life[t] = med([(dig(r, "phases", "connect", "latency_ns", "mean") +
                            dig(r, "phases", "close", "latency_ns", "mean")) / 1e3 for r in arms[t]])
            transfer[t] = med([dig(r, "phases", "response", "latency_ns", "mean") / 1e3 for r in arms[t]])
        saved = life["tcp"] + transfer["tcp"] - life["unix"] - transfer["unix"]
        saved_life = life["tcp"] - life["unix"]
        text = "\n".join(block)
        if saved > 0:
            m = re.search(r"the socket saves ([-0-9.]+) µs per request: the lifecycle ([-0-9.]+) \(([-0-9]+) %\)", text)
            tap.check("%s: the lifecycle's share, the phases' arithmetic: %.1f of %.1f us (%.0f %%)"
                      % (cell, saved_life, saved, 100 * saved_life / saved),
                      m is not None and near(float(m.group(1)), saved, 0.051)
                      and near(float(m.group(2)), saved_life, 0.051)
                      and near(float(m.group(3)), 100 * saved_life / saved, 0.51),
                      m.group(0) if m else "no lifecycle line")
        else:
            tap.check("%s: the socket saves nothing (%.1f us): no share, said so" % (cell, saved),
                      "the socket saves nothing here" in text, "no such line")
    else:
        tap.check("%s: kept connections: the lifecycle line says so" % cell,
                  any(line.startswith("  lifecycle: ") for line in block), "no lifecycle line")


main()
