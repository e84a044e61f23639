#!/bin/bash
# make install honours PREFIX and DESTDIR; --help and --version work from the installed copy.
set -u
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if make -s install DESTDIR="$tmp/dest" PREFIX=/opt/hb >"$tmp/log" 2>&1 &&
    [ -x "$tmp/dest/opt/hb/bin/hopbench" ]; then
    echo "ok install honours DESTDIR and PREFIX"
else
    echo "not ok install honours DESTDIR and PREFIX"; cat "$tmp/log"
fi
if "$tmp/dest/opt/hb/bin/hopbench" --version | grep -q '^hopbench '; then
    echo "ok installed binary prints its version"
else
    echo "not ok installed binary prints its version"
fi
for sub in lab run serve; do
    out=$("$tmp/dest/opt/hb/bin/hopbench" "$sub" --help)
    if [ $? -eq 0 ] && echo "$out" | grep -q -- "--help" && echo "$out" | grep -q "usage: hopbench"; then
        echo "ok $sub --help describes its options"
    else
        echo "not ok $sub --help describes its options"
    fi
done
