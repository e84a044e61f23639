#!/bin/sh
# Fails, naming the files, when src/ has an include circle: a module (X.c with
# X.h) that includes, directly or through others, a module that includes it.
# tsort (coreutils) finds the loops in the graph "module -> module it includes".
set -eu
cd "$(dirname "$0")/.."
edges=$(for f in $(find src -name '*.[ch]' | sort); do
    m=${f#src/}
    m=${m%.[ch]}
    sed -n 's/^#include "\([a-z_/]*\)\.h".*/\1/p' "$f" | while read -r inc; do
        [ "$inc" = "$m" ] || echo "$m $inc"
    done
done)
if ! out=$(echo "$edges" | tsort 2>&1 >/dev/null) || [ -n "$out" ]; then
    echo "include circle in src/:" >&2
    echo "$out" | sed -n 's/^tsort: //p' >&2
    exit 1
fi
