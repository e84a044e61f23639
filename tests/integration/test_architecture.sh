#!/bin/bash
# docs/architecture.md holds against src/:
# - every file of src/ has its line under "Files" (a header X.h beside X.c shares X.c's line);
# - every path under src/ the page names exists;
# - "Layers" puts each folder and top-level file of src/ on exactly one layer, and no
#   #include of src/ goes from a layer to a higher one;
# - a header X.h beside X.c declares only functions X.c defines, so that a call between files
#   is an include between them (a folder's header with no .c, cmd/cmd.h, is its interface);
# - no include circle (scripts/include-cycles.sh).
# Each check is also run on a copy made wrong on purpose (a line taken out, a file added, an
# include up a layer), which it must refuse: a check that cannot fail proves nothing.
# shellcheck disable=SC2016 # the backquotes in patterns are the page's own
. "$(dirname "$0")/lib.sh"

ROOT=$(cd "$(dirname "$0")/../.." && pwd)

# The leading path of each line under "## Files" of DOC.
doc_lines() {
    awk '/^## /{f = ($0 == "## Files")} f && /^- `src\// {
        sub(/^- `/, ""); sub(/`.*/, ""); print }' "$1"
}

# lines_cover DOC SRC : prints each file of SRC (a src/ tree) without its line in DOC, and
# each line of DOC naming a file that is not in SRC.
lines_cover() {
    local doc=$1 src=$2 f
    declare -A named=()
    while read -r f; do named[$f]=1; done < <(doc_lines "$doc")
    (cd "$src/.." && find src -name '*.[ch]' | sort) | while read -r f; do
        [ -n "${named[$f]:-}" ] && continue
        case $f in *.h) [ -n "${named[${f%.h}.c]:-}" ] && [ -f "$src/../${f%.h}.c" ] && continue ;; esac
        echo "$f has no line"
    done
    for f in "${!named[@]}"; do
        [ -f "$src/../$f" ] || echo "$f has a line but no file"
    done
}

# named_exist DOC SRC : prints each path under src/ DOC names (anywhere) that SRC lacks; a
# pattern in capitals (src/proto/NAME.c) is none.
named_exist() {
    grep -o 'src/[A-Za-z0-9_./]*' "$1" | grep -v '[A-Z]' | sed 's/[.]*$//' | sort -u | while read -r p; do
        [ -e "$2/../$p" ] || echo "$p is named but does not exist"
    done
}

# The layer table of DOC: "ENTRY LAYER" per folder (name/) or top-level file of src/.
layers() {
    awk '/^## /{f = ($0 == "## Layers")} f && /^```/{b = !b; next}
        f && b && /^[0-9]+ / { for (i = 2; i <= NF && $i ~ /^[a-z_]+(\/|\.[ch])$/; i++) print $i, $1 }' "$1"
}

# layer_breaks DOC SRC : prints each file of SRC on no layer or two, and each include that
# goes from a layer to a higher one (or names no file of SRC).
layer_breaks() {
    local doc=$1 src=$2 e n f inc t lf lt
    declare -A layer=()
    while read -r e n; do
        [ -n "${layer[$e]:-}" ] && echo "$e is on two layers"
        layer[$e]=$n
    done < <(layers "$doc")
    # entry FILE (relative to src): its folder, or the top-level file (X.h: X.c's entry if listed)
    entry() {
        case $1 in
        */*) echo "${1%%/*}/" ;;
        *.h) if [ -n "${layer[${1%.h}.c]:-}" ]; then echo "${1%.h}.c"; else echo "$1"; fi ;;
        *) echo "$1" ;;
        esac
    }
    (cd "$src" && find . -name '*.[ch]' | sed 's|^\./||' | sort) | while read -r f; do
        lf=${layer[$(entry "$f")]:-}
        if [ -z "$lf" ]; then
            echo "src/$f is on no layer"
            continue
        fi
        sed -n 's/^#include "\([^"]*\)".*/\1/p' "$src/$f" | while read -r inc; do
            t=$inc
            [ -f "$src/$t" ] || t=$(dirname "$f")/$inc
            if [ ! -f "$src/$t" ]; then
                echo "src/$f includes \"$inc\", no file of src/"
                continue
            fi
            lt=${layer[$(entry "$t")]:-}
            [ -n "$lt" ] || continue # reported as on no layer
            [ "$lt" -le "$lf" ] || echo "src/$f (layer $lf) includes $t (layer $lt)"
        done
    done
}

# foreign_decls SRC : prints each function a header X.h of SRC declares (a line from column 0:
# a type, the name, a parenthesis) that its X.c does not define.
foreign_decls() {
    local h c f
    (cd "$1" && find . -name '*.h' | sed 's|^\./||' | sort) | while read -r h; do
        c=${h%.h}.c
        [ -f "$1/$c" ] || continue
        grep -E '^[a-z_][a-z_0-9 *]*[ *][a-z_][a-z_0-9]*\(' "$1/$h" | grep -Ev '^(static|typedef) ' |
            sed -E 's/^[^(]*[ *]([a-z_][a-z_0-9]*)\(.*/\1/' | while read -r f; do
            grep -qE "^[a-z_][^;]*[ *]$f\(" "$1/$c" || echo "src/$h declares $f, which src/$c does not define"
        done
    done
}

DOC=$ROOT/docs/architecture.md
SRC=$ROOT/src

out=$(lines_cover "$DOC" "$SRC")
check_eq "every file of src/ has its line, every line its file" "" "$out"
out=$(named_exist "$DOC" "$SRC")
check_eq "every path under src/ the page names exists" "" "$out"
check "the page puts some 20 entries on layers" test "$(layers "$DOC" | wc -l)" -ge 20
out=$(layer_breaks "$DOC" "$SRC")
check_eq "each entry of src/ on one layer, no include up a layer" "" "$out"
out=$(foreign_decls "$SRC")
check_eq "each header beside its .c declares only what that .c defines" "" "$out"
check "no include circle (scripts/include-cycles.sh)" sh "$ROOT/scripts/include-cycles.sh"

# The same checks on copies made wrong on purpose.
mkdir -p "$T/w" && cp -r "$SRC" "$T/w/src" && cp "$DOC" "$T/w/arch.md"
W=$T/w/src

grep -v '^- `src/engine/sendq.c`' "$DOC" >"$T/w/noline.md"
out=$(lines_cover "$T/w/noline.md" "$SRC" | tr '\n' ';')
check_eq "refused: a file (and its header) without a line" \
    "src/engine/sendq.c has no line;src/engine/sendq.h has no line;" "$out"

: >"$W/engine/extra.c"
out=$(lines_cover "$DOC" "$W")
check_eq "refused: a new file without its line" "src/engine/extra.c has no line" "$out"
rm "$W/engine/extra.c"

sed 's|^- `src/hist.c`:|- `src/histo.c`:|' "$DOC" >"$T/w/gone.md"
out=$(lines_cover "$T/w/gone.md" "$SRC" | sort | tr '\n' ';')
check_eq "refused: a line naming a file that does not exist" \
    "src/hist.c has no line;src/hist.h has no line;src/histo.c has a line but no file;" "$out"
out=$(named_exist "$T/w/gone.md" "$SRC")
check_eq "refused: a path named that does not exist" "src/histo.c is named but does not exist" "$out"

printf '#include "report/report.h"\n' >>"$W/engine/operr.c"
out=$(layer_breaks "$DOC" "$W")
check_eq "refused: an include up a layer" "src/engine/operr.c (layer 2) includes report/report.h (layer 4)" "$out"
cp "$SRC/engine/operr.c" "$W/engine/operr.c"

sed 's|^\(1  proto/ endpoint.c outfile.c stats.c hist.c\) util.c|\1|' "$DOC" >"$T/w/nolayer.md"
out=$(layer_breaks "$T/w/nolayer.md" "$W" | tr '\n' ';')
check_eq "refused: a top-level file on no layer" "src/util.c is on no layer;src/util.h is on no layer;" "$out"

printf 'int sendq_elsewhere(void);\n' >>"$W/engine/sendq.h"
out=$(foreign_decls "$W")
check_eq "refused: a header declaring another file's function" \
    "src/engine/sendq.h declares sendq_elsewhere, which src/engine/sendq.c does not define" "$out"

done_testing
