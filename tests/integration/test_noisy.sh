#!/bin/bash
# A run knows when the machine was not its own: observed.other_cpu holds the CPU of the window
# that neither hopbench nor the named server used (and the steal), consistent with /proc/stat
# read by this test around the run; an unnamed server's CPU is other, a service's is not; with a CPU burner of the test's own running, the run is
# flagged noisy (in the evidence, with one line of the text) and other holds the burner's CPU,
# read from its /proc/PID/stat; --noisy-threshold moves the line; a summary over repetitions
# and the lab's verdicts say how many of their runs were noisy. This machine is shared, so no
# run is assumed quiet: the checks are of consistency, and of a burner's share.
# shellcheck disable=SC2016 # $vars in single quotes are jq variables
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

TICK_NS=$((1000000000 / $(getconf CLK_TCK)))
NCPUS=$(nproc)
TIMEFORMAT='%3U %3S'

# stat_ticks : "busy steal" of /proc/stat's cpu line, in clock ticks, read here (busy is
# user + nice + system + irq + softirq, as hopbench counts it).
stat_ticks() {
    awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8, $9 }' /proc/stat
}
# machine_ns : "schedstat cpuacct idle" read here, in ns, as hopbench's cpu.system_source names
# them (0 for one this host lacks): /proc/schedstat's per-CPU run time summed, the machine's
# root cpuacct.usage (a v1 mount of cpuacct whose root is /), and CPUs x uptime less
# /proc/stat's idle + iowait + steal.
machine_ns() {
    local acct sched=0 usage=0 now
    [ -r /proc/schedstat ] && sched=$(awk '$1 ~ /^cpu[0-9]/ { s += $8 } END { printf "%.0f", s }' /proc/schedstat)
    acct=$(awk '$(NF - 2) == "cgroup" && $4 == "/" && $NF ~ /(^|,)cpuacct(,|$)/ { print $5; exit }' /proc/self/mountinfo)
    [ -n "$acct" ] && usage=$(cat "$acct/cpuacct.usage")
    now=$(awk '{ printf "%.0f", $1 * 1e9 }' /proc/uptime)
    echo "$sched $usage $(awk -v now="$now" -v t="$TICK_NS" '$1 ~ /^cpu[0-9]/ { n++ }
        $1 == "cpu" { off = ($5 + $6 + $9) * t } END { printf "%.0f", n * now - off }' /proc/stat)"
}
# ticks_ns PID : utime + stime of PID from /proc/PID/stat, in ns.
ticks_ns() {
    echo $(($(sed 's/.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }') * TICK_NS))
}
# timed OUT CMD-ARGS... : hb OUT CMD-ARGS..., and HB_CPU_NS: the CPU the command and its
# children used (bash's time: getrusage of the reaped children), the whole invocation.
timed() {
    local out=$1 u s
    shift
    { time hb "$out" "$@"; } 2>"$T/$out.time"
    read -r u s <"$T/$out.time"
    HB_CPU_NS=$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.0f", (u + s) * 1e9 }')
}
# exit0 NAME OUT : the last hb exited 0.
exit0() {
    if [ "$RC" = 0 ]; then
        ok "$1: exit 0"
    else
        not_ok "$1: exit 0" "exit $RC; $(head -c 300 "$T/$2.err" | tr '\n' '|')"
    fi
}

# other_ok (jq, on a run record): the figures every observed run has, present; the parts
# adding up (other is busy less the client's process and the named server, at least 0); the
# shares of window × CPUs allowed; noisy when other + steal pass the threshold over the window.
OTHER_OK='
def other_ok: .observed as $o | $o.other_cpu as $x
  | ([$x | .client_process_ns, .named_ns, .other_ns, .steal_ns, .window_ns] | all(type == "number"))
  and $x.cpus_allowed == '"$NCPUS"' and $x.window_ns > 0 and ($x.noisy | type == "boolean")
  and $x.client_process_ns >= .client_cpu_ns and $x.named_ns == $o.cpu.server_ns
  and $x.other_ns == ([0, $o.cpu.system_busy_ns - $x.client_process_ns - $x.named_ns] | max)
  and ($x.other_share - $x.other_ns / ($x.window_ns * $x.cpus_allowed) | fabs) < 1e-9
  and ($x.steal_share - $x.steal_ns / ($x.window_ns * $x.cpus_allowed) | fabs) < 1e-9
  and $x.noisy == ($x.other_ns + $x.steal_ns > $x.threshold_cpus * $x.window_ns);'

# ocheck NAME FILE EXPR : jcheck with other_ok defined.
ocheck() {
    jcheck "$1" "$2" "$3" "$OTHER_OK"
}

# noisy_lines_match OUT JSON : one "noisy:" line for each noisy run of JSON, none for the
# others, each with the evidence's figures (other CPU-s to 3 decimals, window to 2, the CPUs,
# the threshold to 2).
# shellcheck disable=SC2317 # called through check
noisy_lines_match() {
    local n
    n=$(jq '[.runs[] | select(.observed.other_cpu.noisy)] | length' "$2")
    if [ "$(grep -c '^noisy: ' "$1")" != "$n" ]; then
        echo "# $(grep -c '^noisy: ' "$1") noisy: lines, $n noisy runs in the evidence"
        return 1
    fi
    jq -r '.runs[] | .observed.other_cpu | select(.noisy)
        | "other processes \(.other_ns / 1e9 | . * 1000 | round) \(.window_ns / 1e9 | . * 100 | round) \(.cpus_allowed) \(.threshold_cpus * 100 | round)"' \
        "$2" >"$T/want"
    sed -n 's/^noisy: .*: other processes \([0-9]*\)\.\([0-9]*\) CPU-s + steal [0-9.]* s in a \([0-9]*\)\.\([0-9]*\) s window: [0-9.]* CPU ([0-9.]* % of \([0-9]*\) CPUs), above \([0-9]*\)\.\([0-9]*\) CPU; the run still counts$/other processes \1\2 \3\4 \5 \6\7/p' "$1" |
        sed 's/ 0*\([0-9]\)/ \1/g' >"$T/got"
    if ! diff -q "$T/want" "$T/got" >/dev/null; then
        echo "# want: $(tr '\n' '|' <"$T/want") got: $(tr '\n' '|' <"$T/got")"
        return 1
    fi
}

start_server srv --listen tcp://127.0.0.1:0 || done_testing
ep=tcp://127.0.0.1:$SRV_PORT

# --- a run without a burner: the figure, its parts, and /proc/stat read around it ---
j=$T/quiet.json
read -r _ steal0 < <(stat_ticks)
read -r sched0 acct0 idle0 < <(machine_ns)
srv0=$(ticks_ns "$SRV_PID")
timed quiet run echo "$ep" -d 1 --warmup 0 --server-pid "$SRV_PID" --json "$j"
srv1=$(ticks_ns "$SRV_PID")
read -r sched1 acct1 idle1 < <(machine_ns)
read -r _ steal1 < <(stat_ticks)
exit0 "quiet" quiet
ocheck "observed.other_cpu: present, the parts add up, the default threshold 0.1" "$j" \
    'all(.runs[]; other_ok and .observed.other_cpu.threshold_cpus == 0.1)'
source=$(jq -r '.runs[0].observed.cpu.system_source' "$j")
case $source in
schedstat) around_busy=$((sched1 - sched0)) slack=0 ;;
cpuacct) around_busy=$((acct1 - acct0)) slack=0 ;;
*) around_busy=$((idle1 - idle0)) slack=$((2 * NCPUS * TICK_NS)) ;; # idle: to a tick per CPU and read
esac
around_steal=$(((steal1 - steal0) * TICK_NS))
# The whole is never below its parts: the machine's busy time holds hopbench's process and the
# named server (exactly with schedstat or cpuacct, which count run time as the server's clock
# does; to a tick per CPU and read from the idle side). /proc/stat's busy ticks sample, and at
# light load fell a quarter below them.
rcheck "system busy ($source) >= hopbench's process + the server's, the parts it holds" "$j" \
    ".runs[0].observed | .cpu.system_busy_ns + $slack >= .other_cpu.client_process_ns + .other_cpu.named_ns"
# Around the run, other processes' CPU is busy less hopbench's whole CPU (bash's time) and the
# server's. The window's other lies inside it, but for the ticks' sampling on both sides (a
# tick charges all of itself to what runs then): 5 % of window × CPUs and 5 ticks of slack.
# Never below 0, as hopbench's own figure: on a VM the ticks of /proc/stat can fall short of the
# processes' CPU clocks (stolen ticks are not busy), which would make the bound negative.
around_other=$((around_busy - HB_CPU_NS - (srv1 - srv0)))
[ "$around_other" -ge 0 ] || around_other=0
rcheck "busy and steal of the window: within this test's reading of its source around the run" "$j" \
    ".runs[0].observed | .cpu.system_busy_ns <= $around_busy + $slack and .other_cpu.steal_ns <= $around_steal"
rcheck "other of the window <= other around it (busy - hopbench's CPU - the server's), to the ticks" \
    "$j" ".runs[0].observed.other_cpu
          | .other_ns <= $around_other + 0.05 * .window_ns * .cpus_allowed + 5 * $TICK_NS"
echo "# quiet: other $(jq '.runs[0].observed.other_cpu.other_ns' "$j") ns in the window, $around_other ns around it"
check "quiet: a noisy: line if and only if the evidence says noisy, with its figures" \
    noisy_lines_match "$T/quiet.out" "$j"

# --- what is named: nothing (the server's CPU is then other), or a service ---
j=$T/unnamed.json
hb unnamed run echo "$ep" -d 0.3 --warmup 0 --no-server-lookup --json "$j"
exit0 "no server named" unnamed
rcheck "no server named: named 0, other is busy less hopbench's process (the server's CPU in it)" \
    "$j" '.runs[0].observed | .cpu.server_source == "none" and .other_cpu.named_ns == 0
     and .other_cpu.other_ns == ([0, .cpu.system_busy_ns - .other_cpu.client_process_ns] | max)'
j=$T/svc.json
hb svc run echo "$ep" -d 0.3 --warmup 0 --service "srv=pid:$SRV_PID" --json "$j"
exit0 "a service" svc
rcheck "a service: named is its CPU, subtracted as a server's" "$j" \
    '.runs[0].observed | .services[0].cpu_ns > 0 and .other_cpu.named_ns == .services[0].cpu_ns
     and .other_cpu.other_ns == ([0, .cpu.system_busy_ns - .other_cpu.client_process_ns
                                  - .other_cpu.named_ns] | max)'

# --- with a CPU burner of the test's own: noisy, and other holds the burner's CPU ---
# timeout bounds it; its child, the shell that spins, is the burner whose CPU is read.
spawn_cmd burner timeout 60 sh -c 'while :; do :; done'
burner_timeout=$SPAWNED
for ((i = 0; i < 40; i++)); do
    burner=$(awk '{ print $1 }' "/proc/$burner_timeout/task/$burner_timeout/children" 2>/dev/null)
    [ -n "$burner" ] && break
    sleep 0.05
done
if [ -z "$burner" ]; then
    not_ok "burner" "the burner did not start"
    done_testing
fi
sleep 0.2
j=$T/burn.json
b0=$(ticks_ns "$burner")
t0=$(date +%s%N)
hb burn run echo "$ep" -d 1 --warmup 0 --server-pid "$SRV_PID" --json "$j"
t1=$(date +%s%N)
b1=$(ticks_ns "$burner")
exit0 "burner" burn
ocheck "burner: the figures add up" "$j" 'all(.runs[]; other_ok)'
rcheck "burner: the run is noisy (other + steal above 0.1 CPU)" "$j"     '.runs[0].observed.other_cpu | .noisy == true and .threshold_cpus == 0.1'
# The burner's CPU over the invocation, as a rate, times the window: what it had in the window.
# It may get less while the run competes with it than before and after: half of that at least.
rcheck "burner: other >= half the burner's CPU in the window (its /proc/PID/stat rate)" "$j"     ".runs[0].observed.other_cpu | .other_ns >= 0.5 * ($b1 - $b0) / ($t1 - $t0) * .window_ns"
echo "# burner: $(((b1 - b0) / 1000000)) ms of CPU in $(((t1 - t0) / 1000000)) ms; other $(jq '.runs[0].observed.other_cpu.other_ns / 1e6 | round' "$j") ms in the window"
check "burner: one noisy: line naming the run" \
    grep -Eq "^noisy: tcp://127.0.0.1:$SRV_PORT reuse 64 B: other processes [0-9]+\.[0-9]{3} CPU-s " \
    "$T/burn.out"
check "burner: the noisy: line's figures are the evidence's" noisy_lines_match "$T/burn.out" "$j"

# --noisy-threshold: above what the machine can give, no run is noisy; the threshold recorded.
j=$T/high.json
hb high run echo "$ep" -d 0.3 --warmup 0 --server-pid "$SRV_PID" --noisy-threshold 4096 --json "$j"
exit0 "--noisy-threshold 4096" high
ocheck "--noisy-threshold 4096: recorded, the figures add up, not noisy" "$j" \
    'all(.runs[]; other_ok and (.observed.other_cpu | .threshold_cpus == 4096 and .noisy == false))'
check "--noisy-threshold 4096: no noisy: line" sh -c "! grep -q '^noisy:' '$T/high.out'"
expect_rc "--noisy-threshold 0: exit 64" 64 bad run echo "$ep" --noisy-threshold 0 &&
    one_line "--noisy-threshold 0: one line naming it" "$T/bad.err" \
        "--noisy-threshold: '0' is not a number of CPUs in \(0, 4096\]"

# --- beside a summary: how many of its runs were noisy; noisy runs still count ---
j=$T/reps.json
hb reps run echo "$ep" -d 0.3 --warmup 0 --reps 3 --server-pid "$SRV_PID" --json "$j"
exit0 "reps" reps
n=$(jq '[.runs[] | select(.observed.other_cpu.noisy)] | length' "$j")
check "reps: 'N of 3 runs noisy' beside the summary, N from the evidence" \
    grep -Eq "^  $n of 3 runs noisy \(other processes' CPU \+ steal above 0.10 CPU\)" "$T/reps.out"
check "reps: noisy runs count (n=3 valid of 3)" grep -q " (n=3 valid of 3)$" "$T/reps.out"
rcheck "reps: the burner made them noisy" "$j" 'all(.runs[]; .observed.other_cpu.noisy)'
check "reps: the noisy: lines say which repetition" \
    sh -c "grep -c '^noisy: .* #[123]: other processes' '$T/reps.out' | grep -qx '$n'"

# The lab: each verdict (a summary of a size and mode, unix against tcp, with -v) says how
# many of its runs were noisy, as the evidence counts them, and the bottom line all of them.
j=$T/lab.json
(cd "$T" && exec timeout -k 5 120 "$HOPBENCH" lab -v --quick --sizes 64 --reps 2 -d 0.2 \
    --json "$j") >"$T/lab.out" 2>"$T/lab.err" && RC=0 || RC=$?
exit0 "lab" lab
ocheck "lab: every run has the figures, adding up (the lab's server is named)" "$j" \
    'all(.runs[]; other_ok and .observed.cpu.server_source == "pids")'
for mode in reuse connect; do
    n=$(jq --arg m "$mode" '[.runs[] | select(.mode == $m and .observed.other_cpu.noisy)] | length' "$j")
    k=$(jq --arg m "$mode" '[.runs[] | select(.mode == $m)] | length' "$j")
    check "lab: the $mode verdict says $n of $k runs noisy" \
        awk -v t="64 B $mode" -v want="  $n of $k runs noisy " '
            index($0, t) == 1 { inside = 1 }
            inside && /runs noisy/ { found = (index($0, want) == 1); exit }
            END { exit !found }' "$T/lab.out"
done
stop_pid "$burner_timeout"
check "lab -v: noisy: lines, one per noisy run" noisy_lines_match "$T/lab.out" "$j"
n=$(jq '[.runs[] | select(.observed.other_cpu.noisy)] | length' "$j")
k=$(jq '.runs | length' "$j")
check "lab: the bottom line says $n of $k runs noisy, as its evidence" \
    sh -c "sed -n '/^bottom line: /,\$p' '$T/lab.out' | grep -q '^  $n of $k runs noisy ' &&
           jq -e '.bottom_line | .noisy == $n and .runs == $k' '$j' >/dev/null"

done_testing
