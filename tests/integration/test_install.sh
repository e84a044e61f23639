#!/bin/bash
# make install honours PREFIX and DESTDIR; --version works from the installed copy.
# ./hopbench and what make install copies are the release build whatever FLAVOUR
# the calling make has (make asan and make tsan pass theirs down in MAKEFLAGS to
# this script's makes), and a plain make after `make FLAVOUR=asan|tsan hopbench`
# leaves them so. (That each --help describes every option is tests/unit/test_cli.c.)
# the binary under test as given (lib.sh points HOPBENCH at its own copy)
given=${HOPBENCH:-}
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

need make cc man groff troff grotty
tmp=$T

# instrumented FILE: FILE calls the ASan or TSan runtime's init (a release build does not).
instrumented() { grep -qaE '__(asan|tsan)_init' "$1"; }

# release_build NAME FILE: ok when FILE is a copy of build/release/hopbench, not instrumented.
release_build() {
    if [ -f "$2" ] && ! instrumented "$2" && cmp -s "$2" build/release/hopbench; then
        ok "$1"
    else
        not_ok "$1" "$2: $(grep -aoE -m 1 '__(asan|tsan)_init' "$2" 2>&1 || echo 'not build/release/hopbench')"
    fi
}

if make -s install DESTDIR="$tmp/dest" PREFIX=/opt/hb >"$tmp/log" 2>&1 &&
    [ -x "$tmp/dest/opt/hb/bin/hopbench" ]; then
    ok "install honours DESTDIR and PREFIX"
else
    not_ok "install honours DESTDIR and PREFIX"
    cat "$tmp/log"
fi
if "$tmp/dest/opt/hb/bin/hopbench" --version | grep -q '^hopbench '; then
    ok "installed binary prints its version"
else
    not_ok "installed binary prints its version"
fi
man1=$tmp/dest/opt/hb/share/man/man1/hopbench.1
if [ -f "$man1" ] && ! grep -q '@VERSION@' "$man1" &&
    grep -q "\"hopbench $("$tmp/dest/opt/hb/bin/hopbench" --version | cut -d' ' -f2)\"" "$man1" &&
    MANWIDTH=80 man -l "$man1" 2>/dev/null | grep -q '^SYNOPSIS'; then
    ok "install puts the man page, with the binary's version, where man finds it"
else
    not_ok "install puts the man page, with the binary's version" "$(grep -m1 '^\.TH' "$man1" 2>&1)"
fi
if bash --norc -c ". '$tmp/dest/opt/hb/share/bash-completion/completions/hopbench' && complete -p hopbench" |
    grep -q -- '-F _hopbench'; then
    ok "install puts the bash completion where bash-completion loads it"
else
    not_ok "install puts the bash completion where bash-completion loads it"
fi
release_build "the installed binary is the release build" \
    "$tmp/dest/opt/hb/bin/hopbench"
release_build "./hopbench is the release build" ./hopbench

# The suite's own instrumented flavour (make asan, make tsan), already built: make
# FLAVOUR=it, then a plain make (FLAVOUR=release on the command line outranks the
# FLAVOUR this script inherits), then install.
flavour=
case $given in
*build/asan/hopbench) flavour=asan ;;
*build/tsan/hopbench) flavour=tsan ;;
esac
if [ -n "$flavour" ]; then
    if instrumented "build/$flavour/hopbench"; then
        ok "the $flavour build calls its runtime's init (the check can tell)"
    else
        not_ok "the $flavour build calls its runtime's init (the check can tell)"
    fi
    if make -s FLAVOUR="$flavour" >"$tmp/flog" 2>&1 &&
        make -s FLAVOUR="$flavour" hopbench >>"$tmp/flog" 2>&1; then
        ok "make FLAVOUR=$flavour, make FLAVOUR=$flavour hopbench: built"
    else
        not_ok "make FLAVOUR=$flavour, make FLAVOUR=$flavour hopbench: built"
        cat "$tmp/flog"
    fi
    release_build "after make FLAVOUR=$flavour hopbench: ./hopbench is the release build" ./hopbench
    if make -s FLAVOUR=release >"$tmp/plog" 2>&1 &&
        make -s FLAVOUR=release install DESTDIR="$tmp/dest2" PREFIX=/opt/hb >>"$tmp/plog" 2>&1; then
        ok "then make, make install: built and installed"
    else
        not_ok "then make, make install: built and installed"
        cat "$tmp/plog"
    fi
    release_build "then make: ./hopbench is the release build" ./hopbench
    release_build "then make install: the installed binary is the release build" \
        "$tmp/dest2/opt/hb/bin/hopbench"
else
    ok "make FLAVOUR=asan|tsan, then make: ./hopbench is the release build # SKIP runs under make asan and make tsan, whose build is there"
fi
done_testing
