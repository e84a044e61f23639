#!/usr/bin/env python3
"""Checks of a stack's agent figures for tests/integration/test_stack_agent.sh (standard library).

  stack_agent_check.py table OUT JSONL   the table the stack printed (OUT) against its runs
                                         (--jsonl), its columns found by the names of each
                                         block's header row (tcp, unix, unix/tcp): each "agent CPU µs/req NAME" row is, per
                                         transport, the median of the valid runs'
                                         agent.services[NAME].cpu_ns_per_op in us, and each
                                         "agent/local CPU NAME" row the median of the runs'
                                         ratio to observed.services[NAME].cpu_ns_per_op, with
                                         their range
  stack_agent_check.py html HTML JSONL   the agent's tables of the --html report likewise (the
                                         CPU at the report's three significant digits; each a
                                         median of the runs that have it, "(1 of 2 runs)"
                                         after it when not all do)

Results are lines "ok NAME" / "not ok NAME # DETAIL".
"""
import json
import os
import re
import statistics
import sys

sys.dont_write_bytecode = True  # nothing left beside the scripts
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import report_check  # noqa: E402 (its ok(): the same result lines, counted there)

ok = report_check.ok


def runs_of(path):
    """The valid run records of a JSONL file, by (label stem, arm)."""
    cells = {}
    with open(path) as f:
        for line in f:
            rec = json.loads(line)
            if rec.get("record") != "run" or rec.get("valid") is not True:
                continue
            if rec.get("interrupted") is True:
                continue
            stem, arm = rec["label"].rsplit(".", 1)
            cells.setdefault((stem, arm), []).append(rec)
    return cells


def service(lst, name):
    for s in lst or []:
        if s.get("name") == name:
            return s
    return None


def number(v):
    return v if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def agent_us(run, name):
    s = service((run.get("agent") or {}).get("services"), name)
    v = number(s.get("cpu_ns_per_op")) if s else None
    return None if v is None else v / 1e3


def local_us(run, name):
    s = service((run.get("observed") or {}).get("services"), name)
    v = number(s.get("cpu_ns_per_op")) if s else None
    return None if v is None else v / 1e3


def ratios(runs, name):
    out = []
    for r in runs:
        a, l = agent_us(r, name), local_us(r, name)
        if a is not None and l is not None and l > 0:
            out.append(a / l)
    return out


def header_columns(line):
    """A block's header row as its columns, or None for any other line: the label, each
    transport's name right-aligned over its figures, then the verdict's column, whose name
    says "(95 % interval"; columns stand two or more spaces apart. [(name, start, end)]."""
    cols = [(m.group(0), m.start(), m.end()) for m in re.finditer(r"\S+(?: \S+)*", line)]
    if line.startswith(" ") or len(cols) < 3 or "(95 % interval" not in cols[-1][0]:
        return None
    return cols


def row_cells(line, cols):
    """A row of a block by its header's columns: {name: text}, the row's name under "",
    the verdict's column (and what follows it) under the verdict's first word ("unix/tcp").
    Each transport's figure is the word that ends where its name ends (right-aligned); None
    when a figure's column holds no such word, so that a shifted row is noticed."""
    out = {}
    first = None
    for name, _, end in cols[1:-1]:
        m = re.search(r"\S+$", line[:end])
        if m is None or (end < len(line) and line[end] != " "):
            return None
        out[name] = m.group(0)
        first = m.start() if first is None else first
    verdict = cols[-1]
    out[""] = line[:first].strip()
    out[verdict[0].split()[0]] = line[verdict[1]:]
    return out


def table_blocks(path):
    """The stack's printed blocks: {label: {row name: {column name: text}}}, the columns
    found by name in each block's header row, so that a column added or moved is read as
    what it is."""
    blocks, cur, cols = {}, None, None
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            head = header_columns(line)
            if head:
                cols = head
                cur = blocks.setdefault(head[0][0], {})
            elif cur is not None and line.startswith("  "):
                cells = row_cells(line, cols)
                if cells is not None:
                    cur[cells[""]] = cells
            elif not line.startswith("  "):
                cur = None
    return blocks


def columns_of(rows, names):
    """The texts of a row's columns names, or None (the row lacks one)."""
    if rows is None or any(n not in rows for n in names):
        return None
    return [rows[n] for n in names]


def close(text, want, tol):
    try:
        return abs(float(text.replace(",", "")) - want) <= tol + 1e-9
    except ValueError:
        return False


ARMS = ["tcp", "unix"]  # the transports' columns, by the names the header row gives them
VERDICT = "unix/tcp"   # the verdict's column


def check_table(out, jsonl):
    cells = runs_of(jsonl)
    blocks = table_blocks(out)
    with open(out) as f:
        heads = [c for c in (header_columns(line.rstrip("\n")) for line in f) if c]
    lacking = [cols[0][0] for cols in heads
               if not set(ARMS + [VERDICT]) <= {c[0].split()[0] for c in cols[1:]}]
    ok("every block's header row names the columns %s" % (ARMS + [VERDICT]),
       heads and not lacking, "no header row" if not heads else "lacking: %s" % lacking)
    names = sorted({s["name"] for runs in cells.values() for r in runs
                    for s in (r.get("agent") or {}).get("services", [])})
    ok("the runs have the agent's services", len(names) > 0, "none in %s" % jsonl)
    ok("the table has a block per measurement", len(blocks) == len({s for s, _ in cells}),
       "blocks %s, measurements %s" % (sorted(blocks), sorted({s for s, _ in cells})))
    for label, rows in sorted(blocks.items()):
        stem = label.replace(" ", "-")
        for name in names:
            row = rows.get("agent CPU µs/req " + name)
            got = columns_of(row, ARMS)
            want = [cells.get((stem, arm), []) for arm in ARMS]
            vals = [[v for v in (agent_us(r, name) for r in runs) if v is not None]
                    for runs in want]
            exp = ["%.2f" % statistics.median(v) if v else "n/a" for v in vals]
            good = got is not None and all(
                (e == "n/a" and g == "n/a") or (e != "n/a" and close(g, float(e), 0.005))
                for g, e in zip(got, exp))
            ok("%s: agent CPU µs/req %s is the runs' median (printed %s)" % (label, name, got),
               good, "the runs give %s" % exp)
            rat = [ratios(runs, name) for runs in want]
            row = rows.get("agent/local CPU " + name)
            if not any(rat):
                ok("%s: no agent/local row for %s without both figures" % (label, name),
                   row is None, row)
                continue
            exp = ["%.3f×" % statistics.median(v) if v else "n/a" for v in rat]
            got = columns_of(row, ARMS + [VERDICT])
            good = got is not None and all(
                (e == "n/a" and g == "n/a") or
                (e != "n/a" and g.endswith("×") and close(g[:-1], float(e[:-1]), 0.0005))
                for g, e in zip(got[:2], exp))
            m = re.search(r"runs ([0-9.]+)× to ([0-9.]+)×", got[2]) if got else None
            allr = rat[0] + rat[1]
            good = good and m is not None and close(m.group(1), min(allr), 0.0005) and \
                close(m.group(2), max(allr), 0.0005)
            ok("%s: agent/local CPU %s is the runs' median ratio and range (printed %s)" %
               (label, name, got and (got[0], got[1], got[2].strip())), good,
               "the runs give %s, range %.3f to %.3f" % (exp, min(allr), max(allr)))


def sig3(v):
    """svg_number's figure of v: three significant digits below 100, else whole."""
    return float(("%.0f" if abs(v) >= 100 else "%.3g") % v)


def check_html(html, jsonl):
    cells = runs_of(jsonl)
    text = open(html).read()
    tables = re.findall(r'<table class="agent">(.*?)</table>', text, re.S)
    ok("the report has the agent's table in each file's section (%d)" % len(tables),
       len(tables) == text.count('<section class="file"') and len(tables) > 0)
    rows = re.findall(r"<tr><td>([^<]*)</td><td>([^<]*)</td>"
                      r'<td class="[a-z]+">([^<]*)</td><td class="[a-z]+">([^<]*)</td>'
                      r'<td class="[a-z]+">([^<]*)</td></tr>', "".join(tables))
    want = sum(len({s["name"] for r in runs for s in r["agent"]["services"]})
               for runs in cells.values())
    ok("the agent's table has a row per cell and service (%d)" % len(rows), len(rows) == want,
       "want %d" % want)
    labels = {"%s.%s" % k: k for k in cells}
    for cell, name, *shown in rows:
        # the cell's name holds its label as a word: "redis set-pipeline-1.tcp reuse 64 B ..."
        keys = [labels[w] for w in cell.split() if w in labels]
        runs = cells.get(keys[0], []) if len(keys) == 1 else []
        a = [v for v in (agent_us(r, name) for r in runs) if v is not None]
        loc = [v for v in (local_us(r, name) for r in runs) if v is not None]
        rat = ratios(runs, name)
        # each figure the median of the runs that have it, "(1 of 2 runs)" after it when not all
        (ag, lo, ra), notes = zip(*(t.split(" (", 1) if " (" in t else (t, "") for t in shown))
        want = tuple("" if len(v) == len(runs) else "%d of %d runs)" % (len(v), len(runs))
                     for v in (a, loc, rat))
        good = bool(a and loc and rat) and close(ag, sig3(statistics.median(a)), 0) and \
            close(lo, sig3(statistics.median(loc)), 0) and ra.endswith("×") and \
            close(ra[:-1], statistics.median(rat), 0.0005) and notes == want
        ok("report: %s %s: agent %s, local %s, %s are the runs' medians" %
           (cell, name, *shown), good,
           "the runs give %s %s %s, of %s of %d runs" %
           (a and sig3(statistics.median(a)), loc and sig3(statistics.median(loc)),
            rat and statistics.median(rat), [len(a), len(loc), len(rat)], len(runs)))


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in ("table", "html"):
        print("usage: stack_agent_check.py table|html FILE JSONL", file=sys.stderr)
        return 2
    (check_table if sys.argv[1] == "table" else check_html)(sys.argv[2], sys.argv[3])
    return 1 if report_check.failed else 0


if __name__ == "__main__":
    sys.exit(main())
