#!/bin/bash
# make install honours PREFIX and DESTDIR; --version works from the installed copy.
# (That each --help describes every option is tests/unit/test_cli.c.)
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
