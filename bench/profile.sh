#!/bin/sh
# profile: is `run --profile` right, and what does it cost? Against the built-in echo server
# (--mode connect, one connection: every request a new TCP or Unix connection), two checks:
#
#   perf     one `hopbench run --profile` over TCP (no warm-up) while `perf record -e cpu-clock
#            -c 1000003 -a -g` records the same CPUs (started a second before, stopped half a
#            second after: idle time for the hop); perf's samples of the client (the load
#            threads, hb-load) and of the server (its pid) attributed by the SAME table of symbol
#            patterns (read from src/host/subsys.c) and the same rule (docs/profile.md), as
#            shares of the side's samples, beside hopbench's own shares of the same run. Prints
#            each subsystem's two shares per side and their difference in points; PASS when
#            every one is within DIFF_PTS (3) points.
#   cost     REPS (10) pairs of runs over TCP, with and without --profile, interleaved (ABBA),
#            each SECONDS long: the median ops/s of each, their ratio and its 95 % bootstrap
#            interval. PASS when the ratio is 98 % or more.
#
# usage: bench/profile.sh HOPBENCH [SECONDS] [REPS]   (root; perf from scripts/deps.sh bench)
#        PROFILE_HZ=N: the cost at --profile-hz N instead of the default rate
# Take the exclusive lock (flock -x /tmp/hb-machine.lock) and a quiet machine. Traffic:
# 127.0.0.1 and a socket in a temporary directory only.
set -eu
PROG=profile
DIFF_PTS=3
KEEP_PCT=98

# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"

if [ $# -lt 1 ] || [ $# -gt 3 ]; then die "usage: bench/profile.sh HOPBENCH [SECONDS] [REPS]"; fi
HB=$1
SECS=${2:-3}
REPS=${3:-10}
is_count "$SECS" || die "SECONDS must be a whole number above 0"
is_count "$REPS" || die "REPS must be a whole number above 0"
command -v perf >/dev/null || die "no perf (scripts/deps.sh bench installs linux-perf)"
command -v python3 >/dev/null || die "no python3"
SUBSYS=$(cd "$(dirname "$0")/.." && pwd)/src/host/subsys.c
[ -r "$SUBSYS" ] || die "cannot read $SUBSYS"

D=$(mktemp -d)
SRV=
PERF=
cleanup() {
    [ -n "$PERF" ] && kill -INT "$PERF" 2>/dev/null
    [ -n "$SRV" ] && kill "$SRV" 2>/dev/null
    wait 2>/dev/null
    rm -rf "$D"
}
trap cleanup EXIT INT TERM

"$HB" serve echo --listen tcp://127.0.0.1:0 --listen "unix:$D/s.sock" >"$D/serve.out" 2>&1 &
SRV=$!
for _ in $(seq 50); do grep -q "listening on unix" "$D/serve.out" && break; sleep 0.1; done
PORT=$(sed -n 's|^hopbench: listening on tcp://127.0.0.1:\([0-9]*\)$|\1|p' "$D/serve.out")
[ -n "$PORT" ] || die "the echo server did not start: $(cat "$D/serve.out")"
note "load $(cut -d' ' -f1-3 /proc/loadavg), server pid $SRV port $PORT"

# --- perf beside hopbench --------------------------------------------------------------
# perf at a period of its own (two events of one period fire in one interrupt); no warm-up,
# so that perf's span adds only idle time to the hop's (a warm-up's requests are made at fewer
# TIME_WAIT sockets: cheaper connects)
perf record -e cpu-clock -c 1000003 -a -g -o "$D/perf.data" >"$D/perf.out" 2>&1 &
PERF=$!
sleep 1
"$HB" run echo "tcp://127.0.0.1:$PORT" --mode connect -d "$SECS" --warmup 0 -q \
    --server-pid "$SRV" --profile --json "$D/prof.json" >"$D/prof.out" 2>&1 ||
    die "run --profile failed: $(tail -5 "$D/prof.out")"
sleep 0.5
kill -INT "$PERF"
wait "$PERF" || true
PERF=
perf script -i "$D/perf.data" -F pid,tid,comm,ip,sym 2>/dev/null >"$D/perf.txt" ||
    die "perf script failed"
python3 - "$SUBSYS" "$D/perf.txt" "$D/prof.json" "$SRV" "$DIFF_PTS" <<'EOF'
import json, re, sys
src, txt, prof, srv, tol = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), float(sys.argv[5])
# the table, as subsys.c spells it: { "pattern", SUB_X } (SUBSYS_NONE: no subsystem)
pats = [(p, s) for p, s in re.findall(r'\{ "([^"]+)", (SUB_[A-Z]+|SUBSYS_NONE) \}', open(src).read())]
names = {"SUB_SYSCALL": "syscall", "SUB_EPOLL": "epoll", "SUB_TCP": "tcp", "SUB_IP": "ip",
         "SUB_SOFTIRQ": "softirq", "SUB_NETFILTER": "netfilter", "SUB_UNIX": "unix",
         "SUB_SOCKET": "socket", "SUB_COPY": "copy", "SUB_SCHED": "sched", "SUB_USER": "user",
         "SUB_OTHER": "other"}
cache = {}
def frame(sym):
    if sym in cache: return cache[sym]
    best, s = 0, None
    for p, k in pats:
        n = len(p)
        ok = (sym == p[:-1]) if p.endswith("$") else sym.startswith(p)
        if ok and n > best: best, s = n, k
    cache[sym] = None if s in (None, "SUBSYS_NONE") else names[s]
    return cache[sym]
def chain(syms, user):
    if user: return "user"
    sc = False
    for s in syms:
        k = frame(s)
        if k is None: continue
        if k == "syscall": sc = True
        else: return k
    return "syscall" if sc else "other"
# perf script: a header line "comm pid/tid" per sample, then its frames "\taddr sym", leaf first
counts = {"client": {}, "server": {}}
def done(sample):
    if sample is None: return
    comm, pid, frames = sample
    side = "client" if comm == "hb-load" else "server" if pid == srv else None
    if side is None: return
    kern = [s for s, k in frames if k]
    user = len(frames) > 0 and not frames[0][1]
    k = chain(kern, user)
    counts[side][k] = counts[side].get(k, 0) + 1
cur = None
for line in open(txt, errors="replace"):
    if not line.strip():
        done(cur); cur = None; continue
    if not line.startswith((" ", "\t")):
        done(cur)
        m = re.match(r'\s*(.+?)\s+(\d+)/(\d+)', line)
        cur = (m.group(1), int(m.group(2)), []) if m else None
        continue
    m = re.match(r'\s*([0-9a-f]+)\s+(\S+)', line)
    if m and cur is not None: # a frame: its symbol, and whether its address is the kernel's
        cur[2].append((re.sub(r'\+0x[0-9a-f]+$', '', m.group(2)), int(m.group(1), 16) >= 0xffff800000000000))
done(cur)
d = json.load(open(prof))
hb = {"client": {}, "server": {}}
n = {"client": 0, "server": 0}
for r in d["runs"]:
    for s in r["profile"]["sides"]:
        if s["name"] in hb:
            n[s["name"]] += s["samples"]
            for k, v in s["ns"].items(): hb[s["name"]][k] = hb[s["name"]].get(k, 0) + v
print("perf record -a -g and run --profile, the same run, each side's samples by subsystem, in %:")
print("%-10s %8s %8s %7s   %8s %8s %7s" % ("subsystem", "client:", "hopbench", "points",
                                          "server:", "hopbench", "points"))
worst = 0
for k in names.values():
    row = [k]
    for side in ("client", "server"):
        pt, ht = sum(counts[side].values()), sum(hb[side].values())
        a = 100.0 * counts[side].get(k, 0) / pt if pt else 0
        b = 100.0 * hb[side].get(k, 0) / ht if ht else 0
        worst = max(worst, abs(a - b))
        row += [a, b, b - a]
    print("%-10s %7.1f  %8.1f %+7.1f   %7.1f  %8.1f %+7.1f" % tuple(row))
print("samples: client perf %d, hopbench %d; server perf %d, hopbench %d; largest difference "
      "%.1f points: %s" % (sum(counts["client"].values()), n["client"],
                           sum(counts["server"].values()), n["server"], worst,
                           "PASS" if worst <= tol else "FAIL"))
EOF

# --- the cost: interleaved, with and without -------------------------------------------
note "cost: $REPS pairs of ${SECS} s runs, ABBA"
: >"$D/cost.txt"
i=0
while [ "$i" -lt "$REPS" ]; do
    if [ $((i % 2)) -eq 0 ]; then order="off on"; else order="on off"; fi
    for arm in $order; do
        flag=
        [ "$arm" = on ] && flag="--profile${PROFILE_HZ:+ --profile-hz $PROFILE_HZ}"
        # shellcheck disable=SC2086 # flag is empty or one word
        "$HB" run echo "tcp://127.0.0.1:$PORT" --mode connect -d "$SECS" --warmup 0.5 -q $flag \
            --json "$D/c.json" >/dev/null 2>&1 || die "a cost run failed"
        echo "$arm $(json_number "$D/c.json" '.runs[0].ops_per_s')" >>"$D/cost.txt"
    done
    i=$((i + 1))
done
python3 - "$D/cost.txt" "$KEEP_PCT" <<'EOF'
import random, statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
on = [float(v) for a, v in rows if a == "on"]
off = [float(v) for a, v in rows if a == "off"]
r = statistics.median(on) / statistics.median(off)
rng = random.Random(1)
boot = sorted(statistics.median(rng.choices(on, k=len(on))) /
              statistics.median(rng.choices(off, k=len(off))) for _ in range(10000))
lo, hi = boot[250], boot[9749]
print("cost: ops/s without --profile %s (median %.0f), with %s (median %.0f): %.1f %% kept "
      "[%.1f, %.1f] (95 %% bootstrap): %s" %
      (", ".join("%.0f" % v for v in off), statistics.median(off),
       ", ".join("%.0f" % v for v in on), statistics.median(on), 100 * r, 100 * lo, 100 * hi,
       "PASS" if 100 * r >= float(sys.argv[2]) else "FAIL"))
EOF
note "load $(cut -d' ' -f1-3 /proc/loadavg)"
