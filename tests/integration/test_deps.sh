#!/bin/bash
# scripts/deps.sh takes turns: two at once (as make -j2 starts the build's and the tests') run
# apt-get one after the other, and the second finds nothing left to install (a stand-in
# apt-get and dpkg-query that fail as apt does on a lock held).
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

TOP=$(cd "$(dirname "$0")/../.." && pwd)

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
