#!/bin/sh
# Runs the whole suite against the binaries in BUILD_DIR (build/release by
# default): every unit test program, then every integration script. Each runs
# in its own process under a time limit. Ends with "N passed, N failed" and
# exits non-zero when anything failed, or when the integration tests left
# evidence files (hopbench-run-*.json, a run without --json) in the cwd.
set -u
B=${1:-build/release}
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
    printf 'unit  %-24s %s passed, %s failed\n' "$(basename "$t")" "$p" "$f"
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
    out=$(mktemp)
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
    printf 'integ %-24s %s passed, %s failed\n' "$(basename "$t")" "$p" "$f"
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
