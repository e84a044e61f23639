// hdr_check.js HDR_JS_DIR LOG HGRM_DIR RATIO EXPECTED.json : reads hopbench's HdrHistogram files
// with hdr-histogram-js (an implementation of HdrHistogram apart from hopbench's) and holds
// them to the evidence's own figures. EXPECTED.json is a list of {tag, start, length, total,
// min, max, p50, p90, p99, p999} (jq from the evidence: each histogram's run's window, its
// total and its latency object).
// Prints "ok NAME" / "not ok NAME # WHY" lines (tap_from in lib.sh counts them).
"use strict";
const fs = require("fs");
const path = require("path");

const [jsDir, logPath, hgrmDir, ratioText, expectedPath] = process.argv.slice(2);
const hdr = require(path.join(jsDir, "node_modules", "hdr-histogram-js"));
const ratio = Number(ratioText);
const expected = JSON.parse(fs.readFileSync(expectedPath, "utf8"));

let failed = 0;
const ok = (name) => console.log(`ok ${name}`);
const notOk = (name, why) => {
  failed++;
  console.log(`not ok ${name} # ${why}`);
};
const check = (name, cond, why) => (cond ? ok(name) : notOk(name, why));

// Every interval of the log, by tag, decoded by the library's own log reader.
const reader = new hdr.HistogramLogReader(fs.readFileSync(logPath, "utf8"), 64);
const decoded = new Map();
for (let h; (h = reader.nextIntervalHistogram()) !== null; ) decoded.set(h.tag, h);
check(
  "hdr-log: the library reads one interval per histogram of the evidence",
  decoded.size === expected.length && expected.every((e) => decoded.has(e.tag)),
  `log: ${[...decoded.keys()].join(" ")}; evidence: ${expected.map((e) => e.tag).join(" ")}`
);

// The recorded counters, as the library decoded them: [highest equivalent value, count].
const counters = (h) => {
  const out = [];
  const it = h.recordedValuesIterator;
  it.reset();
  while (it.hasNext()) {
    const v = it.next();
    out.push([v.valueIteratedTo, v.countAtValueIteratedTo]);
  }
  return out;
};
// The value at rank (1-based): the top of the counter where the running count reaches it.
const atRank = (cs, rank) => {
  let seen = 0;
  for (const [v, c] of cs) if ((seen += c) >= rank) return v;
  return cs.length ? cs[cs.length - 1][0] : 0;
};
const figures = [
  ["p50", 50],
  ["p90", 90],
  ["p99", 99],
  ["p999", 99.9],
];

for (const e of expected) {
  const h = decoded.get(e.tag);
  if (h === undefined) continue;
  const bad = [];
  const cs = counters(h);
  if (h.totalCount !== e.total) bad.push(`total ${h.totalCount}, evidence ${e.total}`);
  // the interval: the run's window, to the log's millisecond
  if (Math.abs(h.startTimeStampMsec / 1000 - e.start) > 0.0015)
    bad.push(`start ${h.startTimeStampMsec / 1000}, window_start_unix_s ${e.start}`);
  if (Math.abs((h.endTimeStampMsec - h.startTimeStampMsec) / 1000 - e.length) > 0.0015)
    bad.push(`length ${(h.endTimeStampMsec - h.startTimeStampMsec) / 1000}, window_s ${e.length}`);
  if (e.total > 0) {
    // min and max: the evidence's exact values lie in the counters the library has for them
    const lo = h.lowestEquivalentValue(h.minNonZeroValue);
    if (e.min < lo || e.min > h.highestEquivalentValue(h.minNonZeroValue))
      bad.push(`min ${e.min} outside the counter of ${h.minNonZeroValue}`);
    if (e.max < h.lowestEquivalentValue(h.maxValue) || e.max > h.highestEquivalentValue(h.maxValue))
      bad.push(`max ${e.max} outside the counter of ${h.maxValue}`);
    for (const [key, p] of figures) {
      // hopbench's percentile (docs/evidence.md): rank round(p/100 N), at least 1, capped at max
      const rank = Math.max(1, Math.floor((p / 100) * e.total + 0.5));
      const mine = Math.min(atRank(cs, rank), e.max);
      if (mine !== e[key]) bad.push(`${key} ${e[key]}, from the decoded counters ${mine}`);
      // the library's own (rank ceil(p/100 N): the same rank or the next) agrees within that
      const lib = h.getValueAtPercentile(p);
      if (lib < h.lowestEquivalentValue(e[key]) || lib > atRank(cs, Math.min(rank + 1, e.total)))
        bad.push(`${key}: the library's ${lib} is not the evidence's ${e[key]} within a rank`);
    }
  }
  check(`hdr-log ${e.tag}: window, total, min, max, p50, p90, p99, p99.9 are the evidence's`, bad.length === 0,
    bad.join("; "));

  // the .hgrm is what the library prints for the same histogram, byte for byte
  const file = path.join(hgrmDir, `${e.tag}.hgrm`);
  if (!fs.existsSync(file)) {
    notOk(`hgrm ${e.tag}`, `no ${file}`);
    continue;
  }
  const text = fs.readFileSync(file, "utf8");
  const want = h.outputPercentileDistribution(5, ratio);
  if (text === want) {
    ok(`hgrm ${e.tag}: the library's outputPercentileDistribution, byte for byte`);
  } else {
    const a = text.split("\n"), b = want.split("\n");
    const i = a.findIndex((l, k) => l !== b[k]);
    notOk(`hgrm ${e.tag}: the library's outputPercentileDistribution, byte for byte`,
      `line ${i + 1}: hopbench '${a[i]}', library '${b[i]}'`);
  }
  const total = /Total count *= *(\d+)\]/.exec(text);
  check(`hgrm ${e.tag}: its Total count is the evidence's`, total && Number(total[1]) === e.total,
    `footer ${total && total[1]}, evidence ${e.total}`);
}
process.exit(failed ? 1 : 0);
