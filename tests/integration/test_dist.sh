#!/bin/bash
# make dist: the versioned release tarball (the static binary, its man page with the version
# in it, the bash completion, the docs, SHA256SUMS over every file inside and a .sha256 beside
# it), made into the test's own directory (DIST_DIR) without the image (test_image.sh builds
# and checks that); then installed into an empty root, as a user would unpack it, and the lab
# run from there in a chroot with nothing else in it (/proc and /sys mounted in a mount
# namespace of its own, gone with it). Runs in the release (gcc) pass only, as root.
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

if grep -qaE '__(asan|tsan)_init' "$HOPBENCH" || [[ ${CC:-} == *clang* ]]; then
    ok "make dist # SKIP built and tested by the release (gcc) pass only"
    done_testing
fi
if [ "$(id -u)" != 0 ]; then
    ok "make dist # SKIP the chroot needs root"
    done_testing
fi
need make cc unshare mount

make -s FLAVOUR=release dist DIST_IMAGE=no DIST_DIR="$T/dist" >"$T/dist.log" 2>&1
check_eq "make dist: exit 0" 0 "$?"
tarball=$(ls "$T"/dist/hopbench-*-linux-"$(uname -m)".tar.gz 2>/dev/null)
check "one tarball, named hopbench-VERSION-linux-$(uname -m).tar.gz" test -f "$tarball"
name=$(basename "$tarball" .tar.gz)
ver=${name#hopbench-}
ver=${ver%-linux-*}
check "its checksum file checks" sh -c "cd '$T/dist' && sha256sum --quiet -c '$name.tar.gz.sha256'"
cp "$tarball" "$T/bad.tar.gz"
printf x | dd of="$T/bad.tar.gz" bs=1 seek=100 conv=notrunc 2>/dev/null
check "a corrupted copy does not" bash -c "! sed 's|$name.tar.gz|$T/bad.tar.gz|' \
    '$T/dist/$name.tar.gz.sha256' | sha256sum --quiet -c - >/dev/null 2>&1"

# an empty root, the tarball unpacked into it under /usr/local as a user would
R=$T/root
mkdir -p "$R/usr/local" "$R/tmp" "$R/proc" "$R/sys"
chmod 1777 "$R/tmp"
tar -C "$R/usr/local" --strip-components=1 -xzf "$tarball"
check_eq "every file of the tree is in SHA256SUMS and checks" "" \
    "$(cd "$R/usr/local" && sha256sum --quiet -c SHA256SUMS 2>&1; comm -3 \
        <(find . -type f ! -name SHA256SUMS | sed 's|^\./||' | LC_ALL=C sort) \
        <(awk '{ print $2 }' SHA256SUMS | LC_ALL=C sort))"
check "the binary is static" bash -c "! ldd '$R/usr/local/bin/hopbench' >/dev/null 2>&1"
check_eq "the binary says the tarball's version" "hopbench $ver" \
    "$("$R/usr/local/bin/hopbench" --version)"
check "the man page carries the version" grep -qF "$ver" "$R/usr/local/share/man/man1/hopbench.1"
check "the man page has no @VERSION@ left" bash -c "! grep -q @VERSION@ '$R/usr/local/share/man/man1/hopbench.1'"
check "the completion is there" test -s "$R/usr/local/share/bash-completion/completions/hopbench"
check "the docs are there: README, docs/kubernetes.md, the manifests" test -s \
    "$R/usr/local/share/doc/hopbench/README.md" -a -s "$R/usr/local/share/doc/hopbench/docs/kubernetes.md" \
    -a -s "$R/usr/local/share/doc/hopbench/deploy/k8s/overlays/pod/kustomization.yaml"
check_eq "nothing but the release's tree in the root" "SHA256SUMS bin share" \
    "$(LC_ALL=C ls "$R/usr/local" | paste -sd ' ')"

# the lab from the installed binary, in that root alone
timeout -k 5 120 unshare --mount --propagation private sh -c "mount -t proc proc '$R/proc' &&
    mount -t sysfs sysfs '$R/sys' && exec chroot '$R' /usr/local/bin/hopbench lab --quick \
    --sizes 64 --json /tmp/lab.json" >"$T/lab.out" 2>&1
rc=$?
check "the lab in the empty root: exit 0 or 2 (a noisy machine's verdict), not a failure" \
    test "$rc" = 0 -o "$rc" = 2
[ "$rc" = 0 ] || [ "$rc" = 2 ] || tail -n 5 "$T/lab.out" | sed 's/^/# /'
jcheck "its evidence: every cell of both transports, no error" "$R/tmp/lab.json" \
    '(.runs | length) == 4 and all(.runs[]; .errors_total == 0) and
     ([.runs[].transport] | unique) == ["tcp", "unix"] and .tool.version == "'"$ver"'"'
check "nothing is left mounted in the root" bash -c "! grep -q ' $R/' /proc/mounts"
done_testing
