#!/bin/bash
# docs/evidence.md lists every key of the evidence ("Every key, as a list"). This checks the
# list against what the tool really writes, both ways: every key of a run's, a lab's and a
# merge's document, of a --jsonl file and of a merged redis mix is listed, and every listed
# key is written by one of them. So the documentation and the code cannot drift apart.
# shellcheck disable=SC2016 # $vars in single quotes are jq variables
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

DOC=$(cd "$(dirname "$0")/../.." && pwd)/docs/evidence.md

# block NAME : the lines of the ```NAME fenced block of the document.
block() {
    sed -n "/^\`\`\`$1\$/,/^\`\`\`\$/p" "$DOC" | sed '1d;$d'
}

# expand : every line of stdin with its {a,b} alternatives expanded, as bash expands braces.
# A line may hold only key characters, so evaluating it can do nothing else.
expand() {
    local line
    set -f
    while IFS= read -r line; do
        [ -n "$line" ] || continue
        if [[ $line =~ ^[][A-Za-z0-9_.{},]+$ ]]; then
            eval "printf '%s\n' $line"
        else
            echo "BAD LINE: $line"
        fi
    done
    set +f
}

# The leaves of a document, one path per line ("runs[].histogram.counts"): what is not a
# non-empty object nor an array of objects, and {"unavailable": why} as a figure. A null,
# {} or [] is marked with a trailing "?": the key of an object that may also be filled.
# shellcheck disable=SC2016
LEAVES='
def leaves($p):
  if type == "object" and length > 0 and (has("unavailable") | not) then
    to_entries[] | .key as $k | .value | leaves($p + "." + $k)
  elif type == "array" and any(.[]; type == "object") then .[] | leaves($p + "[]")
  elif . == null or . == {} or . == [] then $p + "?"
  else $p end;
[leaves("") | ltrimstr(".")] | unique | .[]'

block fields | expand | sort -u >"$T/documented"
check "the list is in docs/evidence.md (> 300 keys, every line well-formed)" \
    sh -c "[ \$(wc -l <'$T/documented') -gt 300 ] && ! grep -q '^BAD LINE' '$T/documented'"

# --- real documents -------------------------------------------------------------------

# run: http (status classes), connect mode (phases), two endpoints and --reps 2 (summary),
# open loop at a share of the maximum (open_loop); merge of it with itself; a lab with
# --reps, --rates (its summary array) and --profile (root: the runs' and the document's
# profile); the --jsonl of the run.
sock=$T/h.sock
PROTO=http start_server h --listen tcp://127.0.0.1:0 --listen "unix:$sock" || done_testing
h_pid=$SRV_PID
hb run run http "tcp://127.0.0.1:$SRV_PORT" "u=unix:$sock" --mode connect --reps 2 --rate 10% \
    -d 0.2 --warmup 0.05 --json "$T/run.json" --jsonl "$T/run.jsonl" \
    --service "h=pid:$h_pid" --watch "w=unix:$sock"
# A run that does not keep up with its share on a loaded machine is saturated: exit 2.
want=$(jq 'if any(.runs[]; .open_loop.saturated == true) then 2 else 0 end' "$T/run.json")
check_eq "run http, connect, --reps 2, --rate 10%, a service, a watched hop: exit 0, or 2 when a run was saturated (here $want)" "$want" "$RC"
stop_pid "$h_pid"
expect_rc "merge: exit 0" 0 merge merge "$T/run.json" "$T/run.json" -o "$T/merge.json"
# redis: a mix with GETs (replies by kind, the SETs before the run), merged with itself
PROTO=redis start_server r --listen "unix:$T/r.sock" || done_testing
expect_rc "run redis --command set,get: exit 0" 0 redis run redis "unix:$T/r.sock" \
    --command set,get --keys 10 -n 200 --warmup 0 --json "$T/redis1.json"
# http asking the redis server: every reply wrong, the first one kept (first_bad_reply)
expect_rc "run http against a redis server: exit 2" 2 bad run http "unix:$T/r.sock" -n 20 \
    --warmup 0 --json "$T/bad.json"
stop_pid "$SRV_PID"
expect_rc "merge redis: exit 0" 0 rmerge merge "$T/redis1.json" "$T/redis1.json" \
    -o "$T/redis.json"
rcheck "merge redis: replies by kind and the SETs before the run are summed" "$T/redis.json" \
    '.runs[0] | .replies_by_kind == {"PING": 0, "SET": 200, "GET": 200} and .prepared == 20'
# --procs and --source: the load processes and the source addresses
start_server p --listen tcp://127.0.0.1:0 || done_testing
expect_rc "run echo --procs 2 --source: exit 0" 0 procs run echo "tcp://127.0.0.1:$SRV_PORT" \
    -c 2 --procs 2 --source 127.0.0.1,127.0.0.2 -n 200 --warmup 0 --json "$T/procs.json"
stop_pid "$SRV_PID"
mkdir -p "$T/lab.tmp"
RC=0
(cd "$T" && TMPDIR=$T/lab.tmp exec timeout -k 5 60 "$HOPBENCH" lab --sizes 64 -d 0.2 \
    --warmup 0.05 --reps 2 --rates 50% --profile --json "$T/lab.json") >"$T/lab.out" 2>"$T/lab.err" || RC=$?
# A run that does not keep up with its share on a loaded machine is saturated: exit 2.
want=$(jq 'if any(.runs[]; .open_loop.saturated == true) then 2 else 0 end' "$T/lab.json")
check_eq "lab --reps 2 --rates 50%: exit 0, or 2 when a run was saturated (here $want)" "$want" "$RC"
jq -s '(.[0] | del(.record)) + {runs: [.[1:][] | del(.record)]}' "$T/run.jsonl" >"$T/jsonl.json"

# --- written => listed ------------------------------------------------------------------

# undocumented FILE : the leaves of FILE the list does not have (a null, {} or [] passes if
# the list has its path or a key below it).
undocumented() {
    local p
    jq -r "$LEAVES" "$1" | while IFS= read -r p; do
        case $p in
        *\?)
            p=${p%\?}
            grep -qxF -- "$p" "$T/documented" ||
                grep -qF -- "$p." "$T/documented" || grep -qF -- "$p[]" "$T/documented" ||
                echo "$p"
            ;;
        *) grep -qxF -- "$p" "$T/documented" || echo "$p" ;;
        esac
    done
}
for f in run lab merge jsonl redis bad procs; do
    check_eq "every key $f writes is in docs/evidence.md" "" "$(undocumented "$T/$f.json" | tr '\n' ' ')"
done

# --- listed => written ------------------------------------------------------------------

for f in run lab merge jsonl redis bad procs; do
    jq -r "$LEAVES" "$T/$f.json" | sed 's/?$//'
done | sort -u >"$T/written"
missing=$(comm -23 "$T/documented" "$T/written")
check_eq "every key docs/evidence.md lists is written" "" "$(echo "$missing" | tr '\n' ' ' | sed 's/ $//')"

# --- shapes the tables describe -------------------------------------------------------------

rcheck "phases: four in connect mode, ttfb and response in reuse mode" "$T/lab.json" \
    'all(.runs[] | select(.mode == "connect"); .phases | keys == ["close","connect","response","ttfb"])
     and all(.runs[] | select(.mode == "reuse"); .phases | keys == ["response","ttfb"])'
rcheck "open_loop: null for a closed loop, an object at a share" "$T/lab.json" \
    'all(.runs[]; if .open_loop == null then true else .open_loop.rate_share == 0.5 end)
     and any(.runs[]; .open_loop == null) and any(.runs[]; .open_loop != null)'
rcheck "status: {} for echo" "$T/lab.json" 'all(.runs[]; .status == {})'
rcheck "status: the six classes for http, all 2xx" "$T/run.json" \
    'all(.runs[]; (.status | keys) == ["1xx","2xx","3xx","4xx","5xx","other"] and .status["2xx"] == .replies)'
rcheck "close: written on every run" "$T/lab.json" 'all(.runs[]; .close == "client")'

# --- the JSONL header, and the prose -------------------------------------------------------

check_eq "the JSONL header's keys are the ones listed" "$(block fields-jsonl-header | sort | tr '\n' ' ')" \
    "$(head -n 1 "$T/run.jsonl" | jq -r 'keys[]' | sort | tr '\n' ' ')"
check "every JSONL run line is a run record with \"record\": \"run\"" \
    jtrue -s --slurpfile d "$T/run.json" \
    '.[1:] | length == ($d[0].runs | length) and all(.[]; .record == "run")
     and (map(keys - ["record"]) | unique) == ($d[0].runs | map(keys) | unique)' "$T/run.jsonl"

# Each listed key is explained: its name appears in the prose, outside the lists.
sed '/^```fields/,/^```$/d' "$DOC" >"$T/prose"
unexplained=$(sed 's/.*[].]//' "$T/documented" | sort -u | while IFS= read -r k; do
    grep -qwF -- "$k" "$T/prose" || echo "$k"
done | tr '\n' ' ')
check_eq "every listed key is named in the prose of docs/evidence.md" "" "$unexplained"

done_testing
