#!/bin/sh
# Runs the suite against the binaries in BUILD_DIR (build/release by default):
# every unit test program, the fuzz seed corpora, then the integration scripts.
# Each runs in its own process under a time limit; each line ends with its
# seconds. Ends with "N passed, N failed" and exits non-zero when anything
# failed, or when the integration tests left evidence files
# (hopbench-run-*.json, a run without --json) in the cwd.
#   tests/run.sh [BUILD_DIR] [all|unit]
# unit: unit tests and corpora only. INTEG="test_a test_b" (names without .sh)
# runs only those integration scripts (make tsan uses it).
set -u
B=${1:-build/release}
what=${2:-all}
case $what in all | unit) ;; *)
    echo "tests/run.sh: unknown selection '$what' (all or unit)" >&2
    exit 64
    ;;
esac
now() { date +%s; }
for n in ${INTEG:-}; do # a name that matches no script would be skipped without a word
    [ -f "tests/integration/$n.sh" ] || {
        echo "tests/run.sh: INTEG names $n, which is not a script in tests/integration" >&2
        exit 64
    }
done
passed=0
failed=0
failures=""

count_unit() { # $1 = output file
    p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test(s)\./\1/p' "$1" | tail -n 1)
    f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test(s), listed below:/\1/p' "$1" | tail -n 1)
    echo "${p:-0} ${f:-0}"
}

for t in "$B"/tests/test_*; do
    [ -x "$t" ] || continue
    out=$(mktemp)
    t0=$(now)
    timeout 300 "$t" >"$out" 2>&1
    rc=$?
    set -- $(count_unit "$out")
    p=$1 f=$2
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
    passed=$((passed + p))
    failed=$((failed + f))
    if [ "$rc" -ne 0 ]; then
        cat "$out"
        failures="$failures $(basename "$t")"
    fi
    printf 'unit  %-24s %s passed, %s failed (%s s)\n' "$(basename "$t")" "$p" "$f" $(($(now) - t0))
    rm -f "$out"
done

# Fuzz seed corpora, replayed through each fuzz target without libFuzzer.
for r in "$B"/fuzz/replay_*; do
    [ -x "$r" ] || continue
    name=${r##*/replay_}
    if out=$(timeout 120 "$r" fuzz/corpus/"$name"/* 2>&1); then
        passed=$((passed + 1)); res="1 passed, 0 failed"
    else
        failed=$((failed + 1)); res="0 passed, 1 failed"; echo "$out"; failures="$failures fuzz_$name"
    fi
    printf 'fuzz  %-24s %s (%s)\n' "corpus/$name" "$res" "$(echo "$out" | tail -n 1)"
done

# Evidence a test leaves in the working directory (a run without --json): none may appear.
left_before=$(ls hopbench-run-*.json hopbench-lab-*.json 2>/dev/null)

for t in tests/integration/test_*.sh; do
    [ -f "$t" ] || continue
    [ "$what" = all ] || break
    if [ -n "${INTEG:-}" ]; then
        n=$(basename "$t" .sh)
        case " $INTEG " in *" $n "*) ;; *) continue ;; esac
    fi
    out=$(mktemp)
    t0=$(now)
    HOPBENCH="$B/hopbench" TOOLS="$B/tools" timeout 600 bash "$t" >"$out" 2>&1
    rc=$?
    p=$(grep -c '^ok ' "$out")
    f=$(grep -c '^not ok ' "$out")
    # 77: the test skipped itself as a whole (its "ok ... # SKIP" line says why)
    if [ "$rc" -eq 77 ] && [ "$f" -eq 0 ]; then rc=0; fi
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
    passed=$((passed + p))
    failed=$((failed + f))
    if [ "$rc" -ne 0 ] || [ "$f" -ne 0 ]; then
        cat "$out"
        failures="$failures $(basename "$t")"
    fi
    printf 'integ %-24s %s passed, %s failed (%s s)\n' "$(basename "$t")" "$p" "$f" $(($(now) - t0))
    rm -f "$out"
done

left=$(ls hopbench-run-*.json hopbench-lab-*.json 2>/dev/null)
if [ "$left" != "$left_before" ]; then
    echo "integration tests left evidence in $(pwd): $(echo "$left" | tr '\n' ' ')"
    failed=$((failed + 1))
    failures="$failures litter"
fi

[ -n "$failures" ] && echo "failing:$failures"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
