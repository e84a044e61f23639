#!/bin/bash
# compare, report and merge name where each file's load ran. A run in a container or pod
# (HOPBENCH_* set as deploy/k8s's manifests set them from the downward API) is shown under
# its pod or container ("pod web-0 on node n1") beside the same cell run by a plain process,
# in compare's headers and cell rows and in report's cell names and placement table; merge
# keeps every input's placement when they differ (an Indexed Job's three pods), one when
# they do not, and compare names each pod of the merged file.
# shellcheck disable=SC2016 # $vars in single quotes are jq variables
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

start_server s --listen tcp://127.0.0.1:0 || done_testing
tcp=tcp://127.0.0.1:$SRV_PORT
RUN=(run echo "$tcp" --label hop --reps 2 -d 0.2 --warmup 0.05)

# in_pod POD NODE OUT : a run as a pod's load container makes it
in_pod() {
    HOPBENCH_POD_NAME=$1 HOPBENCH_POD_NAMESPACE=default HOPBENCH_NODE_NAME=$2 \
        HOPBENCH_CONTAINER_NAME=load expect_rc "run in pod $1 on node $2: exit 0" 0 "$3" \
        "${RUN[@]}" --json "$T/$3.json"
}

expect_rc "run as a plain process: exit 0" 0 proc "${RUN[@]}" --json "$T/proc.json"
in_pod web-0 n1 pod
HOPBENCH_CONTAINER_NAME=load expect_rc "run in a container: exit 0" 0 ctr "${RUN[@]}" \
    --json "$T/ctr.json"
jcheck "the pod run's document names pod web-0 on node n1" "$T/pod.json" \
    '.placement | .kind == "pod" and .pod == "web-0" and .node == "n1" and .container == "load"'
jcheck "the plain run's document names no pod" "$T/proc.json" '.placement | has("kind") | not'
# the QoS class and the cpuset: this host's kubelet-less cgroups name no class, so the one the
# requests and limits make (resourceFieldRef's figures); the cpuset as the kernel lists it
cs=$(awk -F: '$2 ~ /(^|,)cpuset(,|$)/ { print $3 }' /proc/self/cgroup)
cpuset_want=$(cat "/sys/fs/cgroup/cpuset$cs/cpuset.effective_cpus" 2>/dev/null ||
    cat /sys/fs/cgroup/cpuset.cpus.effective 2>/dev/null)
jcheck "a pod without requests or limits: no QoS class said" "$T/pod.json" \
    '.placement | .qos_class == null and .qos_from == null'
check "the pod's cpuset is its cgroup's, '$cpuset_want'" \
    jtrue --arg c "$cpuset_want" '$c != "" and .placement.cpuset == $c' "$T/pod.json"
qos() { # NAME CPU-REQ CPU-LIM MEM-REQ MEM-LIM CLASS
    HOPBENCH_CPU_REQUEST=$2 HOPBENCH_CPU_LIMIT=$3 HOPBENCH_MEMORY_REQUEST=$4 \
        HOPBENCH_MEMORY_LIMIT=$5 in_pod "qos-$1" n1 "qos-$1"
    check "requests $2/$4, limits $3/$5: $6, from the resources" \
        jtrue --arg c "$6" '.placement | .qos_class == $c and .qos_from == "resources"' \
        "$T/qos-$1.json"
}
qos g 2000 2000 268435456 268435456 Guaranteed
qos b 1000 2000 268435456 268435456 Burstable
qos e 0 4000 0 8000000000 BestEffort

# --- compare ------------------------------------------------------------------------

expect_rc "compare process vs pod: exit 0" 0 cmp_pp compare "$T/proc.json" "$T/pod.json"
check "compare: OLD's header names the process placement" \
    grep -q "^old: .*proc.json (2 runs, 2 valid); placement process$" "$T/cmp_pp.out"
check "compare: NEW's header names the pod and its node" \
    grep -q "^new: .*pod.json (2 runs, 2 valid); placement pod web-0 on node n1$" "$T/cmp_pp.out"
check_eq "compare: the cell side by side, both placements named, in every metric's table" 6 \
    "$(grep -c '^echo hop reuse 64 B c=1 p=1 \[process -> pod web-0 on node n1\] .*n=2+2)$' \
        "$T/cmp_pp.out")"
expect_rc "compare pod vs container: exit 0" 0 cmp_pc compare "$T/pod.json" "$T/ctr.json"
check "compare: a container named by its name" \
    grep -q '^echo hop reuse 64 B c=1 p=1 \[pod web-0 on node n1 -> container load\] ' \
    "$T/cmp_pc.out"
expect_rc "compare a pod's file with itself: exit 0" 0 cmp_self compare "$T/pod.json" "$T/pod.json"
check "compare: one placement on both sides adds nothing to the cell" \
    grep -q '^echo hop reuse 64 B c=1 p=1  ' "$T/cmp_self.out"

# --- report -------------------------------------------------------------------------

expect_rc "report of the three files: exit 0" 0 rep report "$T/proc.json" "$T/pod.json" \
    "$T/ctr.json" -o "$T/r.html"
check "report: the pod's cell named with its placement" \
    grep -q 'echo hop reuse 64 B c=1 p=1 (pod web-0 on node n1)' "$T/r.html"
check "report: the container's cell named with its placement" \
    grep -q 'echo hop reuse 64 B c=1 p=1 (container load)' "$T/r.html"
check_eq "report: each file's placement table says where its runs ran" \
    "process|pod web-0 on node n1|container load" \
    "$(grep -o 'runs placed</th><td>[^<]*' "$T/r.html" | sed 's/.*<td>//' | paste -sd '|')"

# --- merge: an Indexed Job's three load pods --------------------------------------------

in_pod load-0 n1 l0
in_pod load-1 n2 l1
in_pod load-2 n1 l2
expect_rc "merge of three pods' files: exit 0" 0 merge merge "$T/l0.json" "$T/l1.json" \
    "$T/l2.json" -o "$T/merged.json"
jcheck "merge: every pod's placement is kept, in order" "$T/merged.json" \
    '.placement.kind == "merged" and (.placement.placements | map(.pod + "@" + .node)) ==
     ["load-0@n1", "load-1@n2", "load-2@n1"]'
check "merge: each kept placement is its input's whole" \
    jtrue --slurpfile a "$T/l0.json" --slurpfile c "$T/l2.json" \
    '.placement.placements[0] == $a[0].placement and .placement.placements[2] == $c[0].placement' \
    "$T/merged.json"
expect_rc "merge of one placement twice: exit 0" 0 merge_same merge "$T/l0.json" "$T/l0.json" \
    -o "$T/same.json"
check "merge: one placement stays one, as it was" \
    jtrue --slurpfile a "$T/l0.json" '.placement == $a[0].placement' "$T/same.json"
expect_rc "merge of a merged file with another pod's: exit 0" 0 merge_again merge \
    "$T/merged.json" "$T/pod.json" -o "$T/again.json"
jcheck "merge: a merged input adds its own list, each placement once" "$T/again.json" \
    '(.placement.placements | map(.pod)) == ["load-0", "load-1", "load-2", "web-0"]'
# the merged runs add their connections: three pods of c=1 are one cell of c=3
expect_rc "run as a plain process, -c 3: exit 0" 0 proc3 "${RUN[@]}" -c 3 --json "$T/proc3.json"
expect_rc "compare a process with the merged pods: exit 0" 0 cmp_m compare "$T/proc3.json" \
    "$T/merged.json"
check "compare: the c=3 cell side by side with every pod named" \
    grep -q '^echo hop reuse 64 B c=3 p=1 \[process -> pod load-0 on node n1 + pod load-1 on node n2 + pod load-2 on node n1\] ' \
    "$T/cmp_m.out"
check "compare: the merged file's header names every pod and node" \
    grep -q '; placement pod load-0 on node n1 + pod load-1 on node n2 + pod load-2 on node n1$' \
    "$T/cmp_m.out"

sed -n '/^```fields-merged-placement$/,/^```$/p' docs/evidence.md | sed '1d;$d' | sort >"$T/m.doc"
jq -r '.placement | (keys[] | "placement." + .), (.placements[0] | keys[] |
    "placement.placements[]." + .)' "$T/merged.json" | sort >"$T/m.written"
check "docs/evidence.md lists merge's placement keys" test -s "$T/m.doc"
check_eq "every merged placement key written is listed, every one listed is written" "" \
    "$(diff "$T/m.doc" "$T/m.written" | grep '^[<>]' | tr '\n' ' ')"

done_testing
