#!/usr/bin/env python3
"""Checks of the HTML report for tests/integration/test_report.sh (standard library only).

  report_check.py dom DOM.html EVIDENCE...   the DOM Chromium dumped against the evidence:
                                             each chart's SVG elements, and its figures
  report_check.py split REPORT.html DIR      each chart kind's first SVG as a page of its own
                                             (the report's CSS, nothing else): prints
                                             "KIND PAGE WIDTH HEIGHT" per kind
  report_check.py colours PNG [X Y W H [RGB]] distinct colours of a screenshot (or a region),
                                             and the pixels of RGB[,RGB...] (default 1f77b4)
  report_check.py deltas DOM.html DOC.json   the verdicts a page computed are DOC's summary's
  report_check.py inject EVIDENCE OUT        the evidence with markup in its strings
  report_check.py bottom DOM.html TEXT.out   the page's bottom line is the text's, and first
  report_check.py stack DOM.html JSONL        a stack's page: its arms named by their labels,
                                             each service's CPU per request drawn and in the
                                             bottom line, no n/a for a measured service, no
                                             link or path to a file the stack removed
  report_check.py stall DOM.html EVIDENCE    a run against a stalling server: an interval with
                                             no ops, then a p99 of the stall, in the evidence
                                             and on the page's series chart

Results are lines "ok NAME" / "not ok NAME # DETAIL".
"""
import base64
import json
import math
import os
import re
import statistics
import struct
import sys
import zlib
from html.parser import HTMLParser

KINDS = ["ops", "series", "latency", "cpu", "phases", "rates"]
failed = 0


def ok(name, cond, detail=""):
    global failed
    if cond:
        print("ok " + name)
    else:
        failed += 1
        print("not ok %s # %s" % (name, str(detail)[:400]))


# ---- the evidence, as the report groups it -------------------------------------------


def load_runs(path):
    """The runs of a document or a --jsonl file."""
    with open(path) as f:
        text = f.read()
    first = text.split("\n", 1)[0]
    try:
        head = json.loads(first)
    except ValueError:
        head = None
    if isinstance(head, dict) and head.get("record") == "header":
        return [json.loads(l) for l in text.splitlines()[1:] if l.strip() and
                json.loads(l).get("record") == "run"]
    return json.loads(text)["runs"]


def cell_key(r):
    ol = r.get("open_loop") or {}
    rate = 0
    if ol:
        rate = -ol["rate_share"] if ol.get("rate_share") else ol.get("rate", 0)
    return (r.get("label") or "", r["endpoint"] if not r.get("label") else "", r["mode"],
            r.get("proto", ""), rate, r["size"], r["connections"], r["pipeline"])


def counts(r):
    return r.get("valid") is True and r.get("interrupted") is not True


def cells_of(runs):
    """Cells in the order first seen: key -> runs."""
    cells = {}
    for r in runs:
        if "ops" not in r:
            continue
        cells.setdefault(cell_key(r), []).append(r)
    return cells


def number(v):
    """A number as the page prints it (svg_number)."""
    if v != v:
        return "n/a"
    if abs(v) >= 100 or v == 0:
        return "{:,.0f}".format(v)
    return "%.3g" % v


def gamma_rice_pairs(text, total):
    """(index, count) of a "gamma-rice/1" counts string (docs/evidence.md)."""
    data = base64.b64decode(text, validate=True)
    pos = 0

    def bit():
        nonlocal pos
        b = (data[pos >> 3] >> (7 - (pos & 7))) & 1
        pos += 1
        return b

    def gamma():
        zeros = 0
        while bit() == 0:
            zeros += 1
        n = 1
        for _ in range(zeros):
            n = (n << 1) | bit()
        return n

    prev, t, seen = -1, 0, 0
    while seen < total:
        prev += gamma()
        k = (t >> 3).bit_length()
        q = 0
        while q < 16 and bit() == 1:
            q += 1
        if q == 16:
            v = gamma() - 1
        else:
            v = q << k
            for i in range(k - 1, -1, -1):
                v |= bit() << i
        t = t - (t >> 2) + min(v, 1 << 32)
        seen += v + 1
        yield prev, v + 1


def hist_pairs(h):
    if isinstance(h["counts"], str):
        if h.get("counts_encoding") != "gamma-rice/1":
            raise ValueError("histogram counts_encoding %r" % h.get("counts_encoding"))
        yield from gamma_rice_pairs(h["counts"], h["total"])
        return
    for item in h["counts"]:
        if isinstance(item[1], list):
            for i, c in enumerate(item[1]):
                if c:
                    yield item[0] + i, c
        elif item[1]:
            yield item[0], item[1]


def highest_equivalent(idx):
    if idx < 1024:
        return idx
    bucket = (idx >> 10) - 1
    sub = (idx & 1023) + 1024
    return (sub << bucket) + (1 << bucket) - 1


def merged_percentile(hists, p):
    """hist_percentile of the histograms added."""
    counts = {}
    total, hmax = 0, 0
    for h in hists:
        total += h["total"]
        hmax = max(hmax, h["max"])
        for i, c in hist_pairs(h):
            counts[i] = counts.get(i, 0) + c
    rank = max(1, min(total, int(p / 100.0 * total + 0.5)))
    seen = 0
    for i in sorted(counts):
        seen += counts[i]
        if seen >= rank:
            return min(highest_equivalent(i), hmax)
    return hmax


def series_extremes(s):
    """A run's series as the report's chart reads it (charts.c tl_*): the lowest ops/s and the
    highest p99 (µs) of the intervals drawn, every one but a last one shorter than half."""
    iv, end, n = s["interval_ms"] / 1e3, s["end_ms"] / 1e3, len(s["ops"])

    def length(i):
        rest = end - iv * i
        return iv if i + 1 < n or rest > iv else rest

    drawn = [i for i in range(n) if i + 1 < n or length(i) >= iv / 2]
    lo = min([s["ops"][i] / length(i) for i in drawn], default=0)
    hi = max([s["p99_ns"][i] / 1000 for i in drawn], default=0)
    return lo, hi


def series_title_numbers(title):
    """(lowest ops/s, highest p99 µs) as a series line's title prints them."""
    m = re.search(r"lowest ([0-9.,e+-]+) ops/s at .* highest p99 ([0-9.,e+-]+) µs", title)
    return (m.group(1), m.group(2)) if m else None


# ---- the DOM -------------------------------------------------------------------------


class Dom(HTMLParser):
    """Per file section: its charts (kind, [(tag, classes, attrs, text)])."""

    def __init__(self):
        super().__init__()
        self.sections = []  # [(id, [(kind, elements)])]
        self.stack = []
        self.chart = None
        self.texts = []  # every text node
        self.tags = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        cls = (a.get("class") or "").split()
        self.tags.append((tag, a))
        if tag == "section":
            self.sections.append((a.get("id") or a.get("class"), []))
        if tag == "svg" and "chart" in cls:
            kind = [c for c in cls if c != "chart"][0]
            self.chart = (kind, [])
            if self.sections:
                self.sections[-1][1].append(self.chart)
        if self.chart is not None:
            self.chart[1].append([tag, cls, a, ""])

    def handle_endtag(self, tag):
        if tag == "svg":
            self.chart = None

    def handle_data(self, data):
        self.texts.append(data)
        if self.chart is not None and self.chart[1]:
            self.chart[1][-1][3] += data.strip()


def elements(chart, tag, cls):
    return [e for e in chart[1] if e[0] == tag and cls in e[1]]


def titled(chart, tag, cls):
    """The elements of a chart with their <title> child's text (the element after each)."""
    els = chart[1]
    return [(e, els[i + 1][3] if i + 1 < len(els) and els[i + 1][0] == "title" else "")
            for i, e in enumerate(els) if e[0] == tag and cls in e[1]]


def text_boxes(chart):
    """The chart's texts as boxes (x0, y0, x1, y1, text): 11 px high above the baseline, about
    6.2 px a character wide (svg text is 11 px system-ui; a tick 10 %% less), by text-anchor."""
    boxes = []
    for e in chart[1]:
        if e[0] != "text" or not e[3] or "x" not in e[2] or "y" not in e[2]:
            continue
        x, y, w = float(e[2]["x"]), float(e[2]["y"]), 6.2 * len(e[3])
        x0 = {"middle": x - w / 2, "end": x - w}.get(e[2].get("text-anchor"), x)
        boxes.append((x0, y - 9, x0 + w, y + 2, e[3]))
    return boxes


def overlaps(chart):
    """Pairs of the chart's texts that overlap (more than a pixel each way)."""
    b = text_boxes(chart)
    return [(p[4], q[4]) for i, p in enumerate(b) for q in b[i + 1:]
            if min(p[2], q[2]) - max(p[0], q[0]) > 1 and min(p[3], q[3]) - max(p[1], q[1]) > 1]


def check_file(sec, path, n):
    runs = load_runs(path)
    cells = cells_of(runs)
    name = os.path.basename(path)
    charts = {}
    for kind, els in sec[1]:
        charts.setdefault(kind, []).append((kind, els))
    for kind in ["ops", "latency", "cpu", "phases"]:
        ok("%s: a %s chart" % (name, kind), kind in charts, "kinds: %s" % sorted(charts))
    open_runs = [r for r in runs if r.get("open_loop")]
    ok("%s: a rates chart exactly when there are open-loop runs" % name,
       ("rates" in charts) == bool(open_runs), "%d open-loop runs" % len(open_runs))
    for kind, chs in sorted(charts.items()):
        bad = [pair for ch in chs for pair in overlaps(ch)]
        ok("%s: %s charts: no label over another" % (name, kind), not bad, bad[:3])
    if "ops" not in charts:
        return
    ops = charts["ops"][0]
    dots = elements(ops, "circle", "rep")
    want_dots = sum(1 for c in cells.values() for r in c if "ops_per_s" in r)
    ok("%s: ops chart: one dot per run (%d)" % (name, want_dots), len(dots) == want_dots,
       "got %d" % len(dots))
    ok("%s: ops chart: a hollow dot per run that does not count" % name,
       len([d for d in dots if "bad" in d[1]]) ==
       sum(1 for c in cells.values() for r in c if not counts(r)))
    medians = [e[3] for e in elements(ops, "text", "median-val")]
    want = []
    for c in cells.values():
        v = [r["ops_per_s"] for r in c if counts(r)]
        want.append(number(statistics.median(v)) if v else "no run counts")
    ok("%s: ops chart: each cell's median ops/s is the evidence's" % name, medians == want,
       "page %s, evidence %s" % (medians, want))
    ok("%s: ops chart: a median bar per cell with a run that counts" % name,
       len(elements(ops, "line", "median")) == len([w for w in want if w != "no run counts"]))
    # latency: a curve per cell that counts, and a dashed one more per open-loop cell
    curves = [e for ch in charts.get("latency", []) for e in elements(ch, "polyline", "curve")]
    want_curves = sum(1 + (1 if c[0].get("open_loop") else 0) for c in cells.values()
                      if any(counts(r) for r in c))
    ok("%s: latency: %d curves" % (name, want_curves), len(curves) == want_curves,
       "got %d" % len(curves))
    ok("%s: latency: every curve has %d points" % (name, 101),
       all(len(e[2]["points"].split()) == 101 for e in curves))
    legends = [e[3] for ch in charts.get("latency", []) for e in elements(ch, "text", "legend")]
    want_p99 = []
    for c in cells.values():
        good = [r for r in c if counts(r)]
        if not good:
            continue
        p99 = merged_percentile([r["histogram"] for r in good], 99)
        if len(good) == 1:
            ok("%s: the report's p99 of one run's histogram is the run's latency_ns.p99" % name,
               p99 == good[0]["latency_ns"]["p99"], "%s vs %s" % (p99, good[0]["latency_ns"]))
        want_p99.append("p99 %s µs" % number(p99 / 1000))
        if good[0].get("open_loop"):
            sp = merged_percentile([r["open_loop"]["service_histogram"] for r in good], 99)
            want_p99.append("p99 %s µs" % number(sp / 1000))
    got_p99 = [re.search(r"p99 [0-9.,]+ µs", t).group(0) for t in legends if "p99" in t]
    ok("%s: latency: each curve's p99 is its runs' histograms added" % name,
       sorted(got_p99) == sorted(want_p99), "page %s, evidence %s" % (got_p99, want_p99))
    # CPU: the system figure of each cell
    if "cpu" in charts:
        got = [e[3] for e in elements(charts["cpu"][0], "text", "cpu-val")]
        want = []
        for c in cells.values():
            v = [r["observed"]["cpu"]["system_ns_per_op"] for r in c if counts(r)]
            if v and all(isinstance(x, (int, float)) for x in v):
                want.append("%s µs" % number(statistics.median(v) / 1000))
        ok("%s: cpu: each cell's system CPU per op is the evidence's" % name,
           [g for g in got if "no system" not in g] == want, "page %s, evidence %s" % (got, want))
        ok("%s: cpu: stacked bars drawn" % name, len(elements(charts["cpu"][0], "rect", "bar")) > 0)
    if "phases" in charts:
        got = [e[3] for e in elements(charts["phases"][0], "text", "phase-val")]
        want = []
        for c in cells.values():
            for ph in ["connect", "ttfb", "response", "close"]:
                v = [r["phases"][ph]["latency_ns"]["p50"] for r in c
                     if counts(r) and ph in r.get("phases", {})]
                if v:
                    want.append(number(statistics.median(v) / 1000))
        ok("%s: phases: each phase's median p50 is the evidence's" % name, got == want,
           "page %s, evidence %s" % (got, want))
    if "rates" in charts:
        ok("%s: rates: p50 and p99 lines drawn" % name,
           all(elements(ch, "polyline", "rate") for ch in charts["rates"]))
    # ops/s and p99 per interval: two lines per run, each titled with the run's extremes
    with_series = [r for c in cells.values() for r in c if isinstance(r.get("series"), dict)]
    ok("%s: a series chart exactly when runs have a series (%d)" % (name, len(with_series)),
       ("series" in charts) == bool(with_series), "kinds: %s" % sorted(charts))
    if "series" in charts:
        ops_lines = [t for ch in charts["series"] for t in titled(ch, "path", "series-ops")]
        p99_lines = [e for ch in charts["series"] for e in elements(ch, "path", "series-p99")]
        ok("%s: series: an ops/s and a p99 line per run (%d)" % (name, len(with_series)),
           len(ops_lines) == len(with_series) == len(p99_lines),
           "%d and %d lines" % (len(ops_lines), len(p99_lines)))
        got = sorted(series_title_numbers(t) or ("?", t) for _, t in ops_lines)
        want = sorted((number(lo), number(hi)) for lo, hi in
                      (series_extremes(r["series"]) for r in with_series))
        ok("%s: series: each run's lowest ops/s and highest p99 are its evidence's" % name,
           got == want, "page %s, evidence %s" % (got[:4], want[:4]))
        ok("%s: series: the ops of the intervals add up to each run's" % name,
           all(sum(r["series"]["ops"]) + r["series"]["beyond"] == r["ops"] for r in with_series))


def cmd_dom(dom_path, paths):
    dom = Dom()
    with open(dom_path) as f:
        dom.feed(f.read())
    files = [s for s in dom.sections if s[0] and str(s[0]).startswith("file")]
    ok("one section per evidence file", len(files) == len(paths),
       "%d sections" % len(files))
    for sec, path in zip(files, paths):
        check_file(sec, path, len(paths))
    ok("no script element", not [t for t in dom.tags if t[0] == "script"])
    ext = [a for t, a in dom.tags for k in ("src", "href") if k in a and
           not a[k].startswith("#") and not a[k].startswith("data:")]
    ok("nothing fetched: no src or href but in-page and data: ones", not ext, ext)
    # the verdicts' CPU column says whose CPU it is: the client's (a service's is not in it)
    heads = [t.strip() for t in dom.texts if "cpu µs/op" in t.lower()]
    ok("the verdicts' CPU column is named the client's", heads and all(
       h.lower().startswith("client ") for h in heads), heads[:3])
    # the verdicts the evidence's summary printed are on the page
    text = " ".join(dom.texts)
    for path in paths:
        with open(path) as f:
            try:
                doc = json.load(f)
            except ValueError:
                continue
        summ = doc.get("summary")
        parts = summ if isinstance(summ, list) else [{"summary": summ}] if summ else []
        want = [m["vs_first"]["text"] for p in parts for c in p["summary"]["cells"]
                for m in c["metrics"].values() if "vs_first" in m]
        missing = [w for w in want if w not in text]
        ok("%s: every verdict of the summary is on the page (%d)" % (os.path.basename(path),
           len(want)), not missing, missing[:3])
    if len(paths) > 1:
        sbs = [s for s in dom.sections if s[0] == "side-by-side"]
        ok("several files: a side-by-side ops chart with a legend per file",
           sbs and sbs[0][1] and len(elements(sbs[0][1][0], "text", "legend")) == len(paths))


# ---- splitting and PNGs ----------------------------------------------------------------


def cmd_split(report, out_dir):
    with open(report) as f:
        page = f.read()
    css = re.search(r"<style>(.*?)</style>", page, re.S).group(1)
    for kind in KINDS:
        m = re.search(r'<svg class="chart %s".*?</svg>' % kind, page, re.S)
        if not m:
            continue
        w, h = re.search(r'width="(\d+)" height="(\d+)"', m.group(0)).groups()
        out = os.path.join(out_dir, "chart-%s.html" % kind)
        with open(out, "w") as f:
            f.write('<!DOCTYPE html><html><head><meta charset="utf-8"><link rel="icon" '
                    'href="data:,"><style>%s body{margin:0;max-width:none}svg.chart{margin:0}'
                    '</style></head><body>%s</body></html>' % (css, m.group(0)))
        print(kind, out, int(w) + 2, int(h) + 2)


def png_pixels(path):
    """(width, height, rows of (r, g, b)) of an 8-bit RGB or RGBA PNG, not interlaced."""
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat = 8, b""
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    assert depth == 8 and ctype in (2, 6) and interlace == 0, "unsupported PNG"
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(idat)
    stride = w * bpp
    rows, prev = [], bytearray(stride)
    for y in range(h):
        ft = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if ft == 1:
                line[i] = (line[i] + a) & 255
            elif ft == 2:
                line[i] = (line[i] + b) & 255
            elif ft == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif ft == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return w, h, bpp, rows


def cmd_colours(path, region, colour="1f77b4"):
    """Prints the distinct colours, then the pixels of one colour (the first series', #1f77b4)."""
    w, h, bpp, rows = png_pixels(path)
    x, y, rw, rh = region if region else (0, 0, w, h)
    want = {bytes.fromhex(c) for c in colour.split(",")}
    seen = set()
    first = 0
    for row in rows[y:min(h, y + rh)]:
        for px in range(x, min(w, x + rw)):
            c = bytes(row[px * bpp:px * bpp + 3])
            seen.add(c)
            first += c in want
    print(len(seen), first)


class Deltas(HTMLParser):
    """The texts of the verdicts' delta spans."""

    def __init__(self):
        super().__init__()
        self.deltas, self.inside = [], False

    def handle_starttag(self, tag, attrs):
        self.inside = tag == "span" and dict(attrs).get("class") == "delta"
        if self.inside:
            self.deltas.append("")

    def handle_endtag(self, tag):
        self.inside = False

    def handle_data(self, data):
        if self.inside:
            self.deltas[-1] += data


def cmd_deltas(dom_path, doc_path):
    """The verdicts a page computed (a file without a summary) are the document's summary's."""
    p = Deltas()
    with open(dom_path) as f:
        p.feed(f.read())
    doc = json.load(open(doc_path))
    want = [m["vs_first"]["text"] for c in doc["summary"]["cells"] for m in c["metrics"].values()
            if "vs_first" in m]
    ok("the verdicts computed from the --jsonl file are those of the run's summary (%d)" %
       len(want), want and sorted(p.deltas) == sorted(want), "page %s, summary %s" %
       (p.deltas, want))


class Bottom(HTMLParser):
    """The rows of the bottom line's table (each a list of its cells' texts), its head's
    cells, whether it is the grid of a bottom line without verdicts, the "few" card's text,
    and what comes before it: whether a chart does."""

    def __init__(self):
        super().__init__()
        self.rows, self.cell, self.inside = [], None, False
        self.chart_before = False
        self.seen = False
        self.grid = False
        self.heads, self.head = [], None
        self.few, self.in_few = "", False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        cls = (a.get("class") or "").split()
        if tag == "svg" and "chart" in cls and not self.seen:
            self.chart_before = True
        if tag == "div" and "card" in cls and "few" in cls:
            self.in_few = True
        if tag == "table" and "bottom" in cls:
            self.inside = self.seen = True
            self.grid = "grid" in cls
        if self.inside and tag == "tr" and "row" in cls:
            self.rows.append([])
        if self.inside and tag == "td" and self.rows:
            self.cell = ""
        if self.inside and tag == "th" and not self.rows:
            self.head = ""

    def handle_endtag(self, tag):
        if tag == "td" and self.cell is not None:
            self.rows[-1].append(self.cell.strip())
            self.cell = None
        if tag == "th" and self.head is not None:
            self.heads.append(self.head.strip())
            self.head = None
        if tag == "table":
            self.inside = False
        if tag == "div":
            self.in_few = False

    def handle_data(self, data):
        if self.cell is not None:
            self.cell += data
        if self.head is not None:
            self.head += data
        if self.in_few:
            self.few += data


ROW = re.compile(r"^  (.*?)\s{2,}(ops/s|p50 µs|p99 µs|CPU µs/req \S+)\s+(\S+)\s+(\S+)  (.*)$")


def carried(rows):
    """The rows with an empty cell name given the one above it."""
    out, last = [], ""
    for r in rows:
        last = r[0] or last
        out.append((last,) + tuple(r[1:]))
    return out


def grid_bottom(p, text_path):
    """A bottom line without verdicts: the text's sentence in the page's card, and its grid of
    ratios row by row the page's table."""
    lines = open(text_path, encoding="utf-8").read().split("\n")
    at = [i for i, l in enumerate(lines) if l.startswith("bottom line: ")][-1]
    words = lines[at][len("bottom line: "):]
    heads = re.split(r"\s{2,}", lines[at + 1].strip())
    rows, pending = [], ""
    for line in lines[at + 2:]:
        if not line.startswith("  ") or re.match(r"^  \d+ of \d+ runs", line):
            break
        tokens = re.split(r"\s{2,}", line.strip())
        if len(tokens) < len(heads):  # a cell name too long for its column: on its own line
            pending = line.strip()
            continue
        cell = " ".join(tokens[:len(tokens) - len(heads)]) or pending
        rows.append([cell] + tokens[len(tokens) - len(heads):])
        pending = ""
    ok("no verdict: the page's grid, its sentence in a card, is the text's",
       p.grid and words in p.few.replace("\n", " "), "card %r, text %r" % (p.few[:200], words))
    ok("no verdict: the grid's columns are the text's (%s)" % ", ".join(heads),
       p.heads == ["cell"] + heads, "page %s" % p.heads)
    ok("no verdict: the grid's rows are the text's, cell by cell (%d rows)" % len(rows),
       rows and p.rows == rows, "page %s; text %s" % (p.rows[:3], rows[:3]))
    print("# %d cells, no verdict: %s" % (len(rows), words))


def cmd_bottom(dom_path, text_path):
    """The page's bottom line: first (no chart before it), and row by row the text's."""
    p = Bottom()
    with open(dom_path) as f:
        p.feed(f.read())
    if any(l.startswith("bottom line: no verdict is possible")
           for l in open(text_path, encoding="utf-8")):
        ok("the bottom line is on the page, before any chart", p.seen and not p.chart_before,
           "table %s, a chart before it %s" % (p.seen, p.chart_before))
        grid_bottom(p, text_path)
        return
    ok("a bottom line with verdicts: not drawn as a grid", not p.grid)
    text, inside, pending = [], False, ""
    for line in open(text_path, encoding="utf-8"):
        line = line.rstrip("\n")
        if line.startswith("bottom line: "):
            inside = True
            continue
        if inside and not line.startswith("  "):
            break
        m = ROW.match(line) if inside else None
        if m:
            row = list(m.groups())
            if not row[0] and pending:
                row[0], pending = pending, ""
            text.append(row)
        elif (inside and not line.startswith("   ") and not line.startswith("  cost")
              and not re.match(r"^  \d+ of \d+ runs", line) and line.strip()):
            pending = line.strip()  # a cell name too long for its column: on a line of its own
    ok("the bottom line is on the page, before any chart", p.seen and not p.chart_before,
       "table %s, a chart before it %s" % (p.seen, p.chart_before))
    page, want = carried(p.rows), carried(text)
    ok("the page's bottom line is the text's, row by row (%d rows)" % len(want),
       want and page == want, "page %s; text %s" % (page[:3], want[:3]))
    print("# %d rows, %d of them better or worse" %
          (len(page), sum(1 for r in page if not r[4].startswith("no "))))


def cmd_stall(dom_path, path):
    """A run against a server that stalls 300 ms: in the evidence an interval with no ops
    inside the window, then one whose p99 is at least 250 ms; on the page, that run's line."""
    runs = [r for r in load_runs(path) if isinstance(r.get("series"), dict)]
    ok("stall: every run has a series", runs and len(runs) == len(load_runs(path)))
    stalled = []
    for r in runs:
        ops, p99 = r["series"]["ops"], r["series"]["p99_ns"]
        for i in range(1, len(ops) - 1):
            if ops[i] == 0 and max(p99[i + 1:]) >= 250e6:
                stalled.append(r)
                print("# %s rep %d: no ops in interval %d, then p99 %d ns" %
                      (r["endpoint"], r["rep"], i, max(p99[i + 1:])))
                break
    ok("stall: an interval with no ops, then a p99 of 250 ms or more", stalled,
       [(r["series"]["ops"], r["series"]["p99_ns"]) for r in runs][:2])
    dom = Dom()
    with open(dom_path) as f:
        dom.feed(f.read())
    titles = [t for sec in dom.sections for ch in sec[1] if ch[0] == "series"
              for _, t in titled(ch, "path", "series-ops")]
    shown = [series_title_numbers(t) for t in titles]
    ok("stall: the page's series chart draws it: lowest 0 ops/s, highest p99 250,000 µs or more",
       any(t and t[0] == "0" and float(t[1].replace(",", "")) >= 250000 for t in shown), titles)


class Sections(HTMLParser):
    """Per section id: its texts; the titles of the CPU chart's bars; the n/a items under the
    CPU charts; every href and src."""

    def __init__(self):
        super().__init__()
        self.section, self.texts, self.links = None, {}, []
        self.kind, self.bar, self.bars = None, False, []
        self.in_na, self.na = False, []
        self.last_h3 = ""
        self.in_h3 = False
        self.named, self.in_named = [], False  # the texts of links and section headings

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        cls = (a.get("class") or "").split()
        if tag == "section":
            self.section = a.get("id") or a.get("class")
        if tag == "svg" and "chart" in cls:
            self.kind = [c for c in cls if c != "chart"][0]
        if tag == "rect" and "bar" in cls and self.kind == "cpu":
            self.bar = True
            self.bars.append("")
        if tag == "li" and "na" in cls and self.last_h3.startswith("CPU per op"):
            self.in_na = True
            self.na.append("")
        if tag == "h3":
            self.in_h3, self.last_h3 = True, ""
        if tag in ("a", "h2"):
            self.in_named = True
            self.named.append("")
        for k in ("href", "src"):
            if k in a:
                self.links.append(a[k])

    def handle_endtag(self, tag):
        if tag == "svg":
            self.kind = None
        if tag == "rect":
            self.bar = False
        if tag == "li":
            self.in_na = False
        if tag == "h3":
            self.in_h3 = False
        if tag in ("a", "h2"):
            self.in_named = False

    def handle_data(self, data):
        self.texts.setdefault(self.section, []).append(data)
        if self.bar:
            self.bars[-1] += data
        if self.in_na:
            self.na[-1] += data
        if self.in_h3:
            self.last_h3 += data
        if self.in_named:
            self.named[-1] += data


def cmd_stack(dom_path, jsonl):
    """A stack's page: the arms by their labels, each service's CPU, no n/a for what was
    measured, nothing that points to the files the stack removed."""
    runs = load_runs(jsonl)
    p = Sections()
    with open(dom_path) as f:
        p.feed(f.read())
    text = " ".join(t for ts in p.texts.values() for t in ts)
    labels = sorted({r["label"] for r in runs if r.get("label")})
    missing = [l for l in labels if l not in text]
    ok("stack page: each arm named by its label (%s)" % ", ".join(labels), labels and not missing,
       missing)
    services = sorted({s["name"] for r in runs for s in (r.get("observed") or {}).get("services", [])})
    ok("stack page: the runs measured services (%s)" % ", ".join(services), services)
    bottom = " ".join(p.texts.get("bottom-line", []))
    for name in services:
        ok("stack page: %s's CPU per request in the bottom line" % name,
           ("CPU " + name) in bottom or ("CPU µs/req " + name) in bottom, bottom[:300])
        bars = [b for b in p.bars if b.startswith(name + " ") and "µs/op" in b]
        ok("stack page: %s's CPU per op drawn in the CPU chart (%d bars)" % (name, len(bars)),
           bars, p.bars[:6])
    ok("stack page: no n/a in the bottom line", "n/a" not in bottom, bottom[:300])
    bad = [n for n in p.na if any(w in n for w in services + ["server", "client"])]
    ok("stack page: no n/a for the client, a server or a measured service under the CPU charts",
       not bad, bad)
    pss = [t for sec, ts in p.texts.items() if sec and sec.startswith("file") for t in ts
           if "n/a (no --server-pid given)" in t]
    ok("stack page: no server n/a where services were measured", not pss, pss[:3])
    # a stack's sections are its measurements, and what it did not ask is not an n/a
    files = [t.strip() for sec, ts in p.texts.items() if sec != "stack-text" for t in ts
             if re.search(r"(?<![-\w])files?\b", t) or "open-loop" in t]
    ok("stack page: nothing called a file, no n/a for open-loop runs not asked", not files,
       files[:3])
    unix = [t.strip() for ts in p.texts.values() for t in ts if "n/a (AF_UNIX" in t]
    ok("stack page: a Unix socket's TIME_WAIT is 0, as the stack's tables say, not n/a",
       not unix, unix[:2])
    ext = [l for l in p.links if not l.startswith("#") and not l.startswith("data:")]
    ok("stack page: no link but in-page and data: ones", not ext, ext)
    # each measurement is named by its title, not by its evidence file, which the stack removed
    gone = [n for n in p.named if "hopbench-stack." in n or n.strip().endswith((".json", ".jsonl"))]
    ok("stack page: no link or section named after a file the stack removed (%d names)" %
       len(p.named), p.named and not gone, gone[:3])


def cmd_who(dom_path):
    """Each part of the CPU charts (client, a service, the rest) one colour on the whole page,
    and no two parts the same colour."""
    dom = Dom()
    with open(dom_path) as f:
        dom.feed(f.read())
    fills = {}
    for _, charts in dom.sections:
        for ch in charts:
            if ch[0] != "cpu":
                continue
            for e, title in titled(ch, "rect", "bar"):
                who = re.sub(r" [0-9.e+-]+ µs/op$", "", title)
                fills.setdefault(who, set()).add(e[2].get("fill"))
    ok("cpu charts: parts drawn (%s)" % ", ".join(sorted(fills)), len(fills) >= 3, fills)
    ok("cpu charts: each part one colour on the whole page", all(len(v) == 1 for v in
       fills.values()), fills)
    one = [next(iter(v)) for v in fills.values()]
    ok("cpu charts: no two parts the same colour", len(set(one)) == len(one), fills)


def cmd_inject(path, out):
    doc = json.load(open(path))
    bad = '<img src=x onerror=alert(1)><b id="injected">&amp;</b>'
    doc["argv"].append(bad)
    doc["machine"]["hostname"] = bad
    for r in doc["runs"]:
        r["label"] = "lbl" + bad
    json.dump(doc, open(out, "w"))


def main():
    cmd = sys.argv[1]
    if cmd == "dom":
        cmd_dom(sys.argv[2], sys.argv[3:])
    elif cmd == "split":
        cmd_split(sys.argv[2], sys.argv[3])
    elif cmd == "colours":
        cmd_colours(sys.argv[2], [int(v) for v in sys.argv[3:7]] if len(sys.argv) > 3 else None,
                    *sys.argv[7:8])
    elif cmd == "deltas":
        cmd_deltas(sys.argv[2], sys.argv[3])
    elif cmd == "inject":
        cmd_inject(sys.argv[2], sys.argv[3])
    elif cmd == "bottom":
        cmd_bottom(sys.argv[2], sys.argv[3])
    elif cmd == "stall":
        cmd_stall(sys.argv[2], sys.argv[3])
    elif cmd == "stack":
        cmd_stack(sys.argv[2], sys.argv[3])
    elif cmd == "who":
        cmd_who(sys.argv[2])
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
