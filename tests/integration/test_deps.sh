#!/bin/bash
# The Debian packages the project installs (scripts/deps.sh) against the programs it runs
# (scripts/programs.txt), without a new root (make deps-check builds one: docs/deps.md):
#   - scripts/deps-check.sh --static: every listed program's package is one deps.sh installs
#     for the purposes the line names; a deps.sh without iptables (the fault a fresh Debian 12
#     met: every pod failed "netavark: No such file or directory") fails it, in lines naming
#     iptables and the programs it brings; so does a list naming a package or purpose wrong
#   - every `need` of the integration scripts names a program the list has
#   - lib.sh's need: a program missing ends the test failed (not skipped) with one line naming
#     the test, the program, its package and what installs it; one the list lacks too
#   - deps.sh takes turns: two at once (as make -j2 starts the build's and the tests') run
#     apt-get one after the other, and the second finds nothing left to install (a stand-in
#     apt-get and dpkg-query that fail as apt does on a lock held)
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

TOP=$(cd "$(dirname "$0")/../.." && pwd)
LIST=$TOP/scripts/programs.txt

# --- the list against deps.sh ----------------------------------------------------------------

dc() { # OUT [ENV=VALUE...] : scripts/deps-check.sh --static; stdout+stderr to $T/OUT, RC
    local out=$1
    shift
    RC=0
    env "$@" bash "$TOP/scripts/deps-check.sh" --static >"$T/$out" 2>&1 || RC=$?
}
dc static
check_eq "deps-check --static: exit 0" 0 "$RC"
one_line "deps-check --static: one line, the count of programs" "$T/static" \
    '^deps-check: static: every program of .* \([0-9]+ programs\)$'

sed 's/ iptables debootstrap"/ debootstrap"/' "$TOP/scripts/deps.sh" >"$T/deps-noipt.sh"
check "the stand-in deps.sh lacks iptables" \
    bash -c "! sh '$T/deps-noipt.sh' --list test | grep -qx iptables"
dc noipt DEPS_SH="$T/deps-noipt.sh"
check_eq "deps.sh without iptables: deps-check --static exit 1" 1 "$RC"
check "... a line names iptables and /usr/sbin/iptables, which netavark runs" \
    grep -q '^deps-check: MISSING iptables: scripts/deps.sh test does not install it, and it brings /usr/sbin/iptables (netavark' "$T/noipt"
check_eq "... every line is about iptables" "" "$(grep -v 'MISSING iptables:' "$T/noipt")"

sed 's|^/usr/bin/jq  *jq |/usr/bin/jq   jqq |' "$LIST" >"$T/list-pkg"
dc wrongpkg PROGRAMS="$T/list-pkg"
check_eq "a list naming a package deps.sh lacks: exit 1" 1 "$RC"
check "... the line names the package, the purpose and the program" \
    grep -q '^deps-check: MISSING jqq: scripts/deps.sh test does not install it, and it brings /usr/bin/jq ' "$T/wrongpkg"
sed 's|^\(/usr/bin/jq  *jq  *\)test,bench|\1tests|' "$LIST" >"$T/list-for"
dc wrongfor PROGRAMS="$T/list-for"
check_eq "a list naming no purpose of deps.sh: exit 1" 1 "$RC"
check "... the line says which" grep -q "^deps-check: /usr/bin/jq: 'tests' is no purpose" "$T/wrongfor"
{ cat "$LIST"; grep '^/usr/bin/jq ' "$LIST"; } >"$T/list-twice"
dc twice PROGRAMS="$T/list-twice"
check_eq "a list with a program twice: exit 1" 1 "$RC"

check "deps.sh --list test has iptables, wrk and python3-yaml" \
    bash -c "sh '$TOP/scripts/deps.sh' --list test | grep -x -e iptables -e wrk -e python3-yaml | wc -l | grep -qx 3"
RC=0
sh "$TOP/scripts/deps.sh" --list bogus >/dev/null 2>&1 || RC=$?
check_eq "deps.sh --list bogus: exit 64" 64 "$RC"

# --- every need of the scripts is in the list --------------------------------------------------

listed=" $(awk '$1 ~ /^\// { p = $1; sub(/\/$/, "", p); n = p; sub(/.*\//, "", n); printf "%s %s ", n, p }' "$LIST") "
names=$(cat "$TOP"/tests/integration/*.sh "$TOP"/tests/integration/real/*.sh |
    sed -e ':a' -e '/\\$/N' -e 's/\\\n//' -e 'ta' | sed -n 's/^ *need \([^#]*\).*/\1/p' | tr ' ' '\n' |
    grep -v '^$' | sort -u)
unlisted=
for n in $names; do
    case $listed in *" $n "*) ;; *) unlisted="$unlisted $n" ;; esac
done
check "the scripts need $(echo "$names" | wc -l) programs" test "$(echo "$names" | wc -l)" -gt 30
check_eq "every program the scripts need is in scripts/programs.txt" "" "$unlisted"

# --- need -----------------------------------------------------------------------------------------

{
    cat "$LIST"
    echo "/nonexistent/hb-absent       hb-absent-pkg  test     test_deps.sh: a program missing"
    echo "/nonexistent/hb-base         util-linux     minbase  test_deps.sh: one every Debian has"
    echo "/nonexistent/hb-bench        hb-bench-pkg   bench    test_deps.sh: one for the benchmarks"
    echo "/nonexistent/hbmod/          python3-hbmod  test     test_deps.sh: a Python module"
} >"$T/list-need"
needer() { # OUT PROGRAM... : a script sourcing lib.sh that needs PROGRAM..., then says "past"
    printf '. %q\nneed %s\necho past\n' "$TOP/tests/integration/lib.sh" "${*:2}" >"$T/needer.sh"
    RC=0
    PROGRAMS=$T/list-need bash "$T/needer.sh" >"$T/$1" 2>&1 || RC=$?
}
needer present jq curl yaml
check_eq "need of programs there: the script goes on" "past" "$(tail -n 1 "$T/present")"
check_eq "... and says nothing else" "1" "$(wc -l <"$T/present")"
needer absent jq hb-absent
check "need of a program missing: the script ends failed" test "$RC" -ne 0
check_eq "... before its next line" "" "$(grep -x past "$T/absent")"
check_eq "... one line names the test, the program, its package and what installs it" \
    "not ok setup: hb-absent # needer.sh needs hb-absent (Debian package hb-absent-pkg, scripts/deps.sh test installs it): no /nonexistent/hb-absent" \
    "$(grep '^not ok' "$T/absent")"
needer several hb-base hb-bench hbmod
check_eq "need of three missing: three lines, each its package" \
    "not ok setup: hb-base # needer.sh needs hb-base (Debian package util-linux, every Debian system has it): no /nonexistent/hb-base|not ok setup: hb-bench # needer.sh needs hb-bench (Debian package hb-bench-pkg, scripts/deps.sh bench installs it): no /nonexistent/hb-bench|not ok setup: hbmod # needer.sh needs hbmod (Debian package python3-hbmod, scripts/deps.sh test installs it): no /nonexistent/hbmod/|" \
    "$(grep '^not ok' "$T/several" | tr '\n' '|')"
needer unlisted hb-nowhere
check "need of a program the list lacks: the script ends failed" test "$RC" -ne 0
check "... one line says the list lacks it" \
    grep -q "^not ok setup: hb-nowhere # needer.sh needs hb-nowhere, which .* does not list" "$T/unlisted"

# --- two deps.sh at once -------------------------------------------------------------------------

if [ "$(id -u)" != 0 ]; then
    ok "two deps.sh at once # SKIP needs root (deps.sh installs only as root)"
    done_testing
fi
# Stand-ins first on PATH: every package is installed but iptables, until the stand-in apt-get
# installs it; apt-get holds a lock for 1 s and fails at once (exit 100) on it held, as apt does.
mkdir -p "$T/bin" "$T/state"
cat >"$T/bin/dpkg-query" <<'EOF'
#!/bin/sh
for p; do :; done
[ "$p" != iptables ] || [ -e "$HB_STATE/iptables" ] || exit 1
printf 'install ok installed'
EOF
cat >"$T/bin/apt-get" <<'EOF'
#!/bin/sh
mkdir "$HB_STATE/lock" 2>/dev/null || {
    echo "E: Could not get lock /var/lib/dpkg/lock-frontend" >&2
    exit 100
}
echo "$1" >>"$HB_STATE/calls"
sleep 1
[ "$1" != install ] || touch "$HB_STATE/iptables"
rmdir "$HB_STATE/lock"
EOF
chmod 755 "$T/bin/dpkg-query" "$T/bin/apt-get"
twice() { # DEPS-SH : two of it at once for the image packages; RC1, RC2, the calls apt-get had
    rm -rf "$T/state"/*
    PATH=$T/bin:$PATH HB_STATE=$T/state timeout -k 5 60 sh "$1" image >"$T/one.out" 2>&1 &
    local one=$!
    PATH=$T/bin:$PATH HB_STATE=$T/state timeout -k 5 60 sh "$1" image >"$T/two.out" 2>&1 &
    local two=$!
    RC1=0 RC2=0
    wait "$one" || RC1=$?
    wait "$two" || RC2=$?
    CALLS=$(tr '\n' ' ' <"$T/state/calls" 2>/dev/null)
}
twice "$TOP/scripts/deps.sh"
check_eq "two deps.sh at once: both exit 0" "0 0" "$RC1 $RC2"
check_eq "... apt-get ran once, update then install" "update install " "$CALLS"
check "... one of them waited for the other" \
    grep -qx 'hopbench: waiting for another scripts/deps.sh to finish installing' "$T/one.out" "$T/two.out"
check "the stand-in can tell: an apt-get run while it runs fails" \
    bash -c "mkdir '$T/state/lock' && ! PATH='$T/bin:$PATH' HB_STATE='$T/state' apt-get update 2>/dev/null; rmdir '$T/state/lock'"

done_testing
