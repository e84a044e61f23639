#!/bin/bash
# make deps-check: do the packages scripts/deps.sh installs bring every program the suite, the
# stacks, the images and pods, the benchmarks and the build run (scripts/programs.txt)? Proved
# where nothing else was installed by hand: a clean Debian 12 root (docs/deps.md).
#
#   scripts/deps-check.sh            as root: the whole check (below)
#   scripts/deps-check.sh --static   only step 1 (no root, no network; the suite runs it)
#
# 1. Static: each line of scripts/programs.txt names a package that `scripts/deps.sh --list
#    PURPOSE` has, for every purpose the line is for.
# 2. A root: debootstrap --variant=minbase bookworm in build/deps-check/root (the minbase tar is
#    kept in DEPS_CACHE and unpacked from there while younger than DEPS_CACHE_DAYS); the
#    programs listed as minbase must be in it as it is.
# 3. For each purpose (build image test check fuzz lint bench, those the list names): chroot,
#    `sh deps.sh PURPOSE` (the apt sources are the host's Debian 12 ones: DEBIAN_MIRROR with
#    bookworm and bookworm-updates, DEBIAN_SECURITY_MIRROR with bookworm-security), then every
#    program listed for PURPOSE must be there and executable, and found by its name on the
#    root's PATH. A missing one is one line: its path, its package, who runs it.
# 4. The root is kept as DEPS_CACHE/root with a key, the hash of deps.sh and this script (what
#    makes the root). While the key is the same and the root younger than DEPS_CACHE_DAYS, a
#    later run does step 1 and checks the programs the list names now in that root (seconds, no
#    network) instead of building it anew: a program added to the list that the root lacks
#    fails, since the same deps.sh would not bring it either.
#
# Environment: DEPS_CACHE (/var/cache/hopbench: outside the clone, so that CI's fresh clones
# share it), DEPS_CACHE_DAYS (7), DEBIAN_MIRROR (http://deb.debian.org/debian),
# DEBIAN_SECURITY_MIRROR (http://deb.debian.org/debian-security), DEPS_SH and PROGRAMS (the
# script and the list checked), DEPS_APT_SEED (/var/cache/apt/archives: the host's downloaded
# packages, hard-linked into DEPS_CACHE/apt-archives when that is new; empty: none).
# Mounts (/proc, the apt caches) are only under the root while deps.sh runs; every exit path
# unmounts them and removes build/deps-check. Exit 0: proven; 1: a program missing or the list
# wrong; 2: the check could not run (not root, debootstrap or apt failed).
set -euo pipefail
cd "$(dirname "$0")/.."
TOP=$(pwd -P)
DEPS_SH=${DEPS_SH:-scripts/deps.sh}
PROGRAMS=${PROGRAMS:-scripts/programs.txt}
CACHE=${DEPS_CACHE:-/var/cache/hopbench}
DAYS=${DEPS_CACHE_DAYS:-7}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
SECURITY=${DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
SEED=${DEPS_APT_SEED-/var/cache/apt/archives}
WORK=$TOP/build/deps-check
ROOT=$WORK/root
ORDER="build image test check fuzz lint bench"
START=$(date +%s)

say() { echo "deps-check: $*"; }
die() { # CODE MESSAGE
    echo "deps-check: $2" >&2
    exit "$1"
}
since() { echo "$(($(date +%s) - $1)) s"; }

# --- 1. the list against deps.sh ------------------------------------------------------------

# The list's lines as "PATH PACKAGE FOR WHO" (WHO: the rest of the line).
entries() { awk '$1 ~ /^\// { who = $0; sub(/^[^ ]+ +[^ ]+ +[^ ]+ +/, "", who); print $1, $2, $3, who }' "$PROGRAMS"; }

static_check() {
    local bad=0 path pkg for who p seen=" "
    [ -r "$PROGRAMS" ] || die 2 "cannot read $PROGRAMS"
    [ -r "$DEPS_SH" ] || die 2 "cannot read $DEPS_SH"
    declare -A want=()
    for p in $ORDER; do
        want[$p]=" $(env -u CC -u FLAVOUR sh "$DEPS_SH" --list "$p" | tr '\n' ' ')"
    done
    while read -r path pkg for who; do
        if [ -z "$who" ]; then
            say "$PROGRAMS: '$path': want PATH PACKAGE FOR WHO-RUNS-IT"
            bad=1
            continue
        fi
        case $seen in *" $path "*)
            say "$PROGRAMS lists $path twice"
            bad=1
            ;;
        esac
        seen="$seen$path "
        for p in ${for//,/ }; do
            if [ "$p" = minbase ]; then
                [ "$for" = minbase ] || { say "$path: minbase stands alone, not in '$for'"; bad=1; }
                continue
            fi
            if [ -z "${want[$p]+set}" ]; then
                say "$path: '$p' is no purpose of scripts/deps.sh ($ORDER, or minbase)"
                bad=1
            elif [[ ${want[$p]} != *" $pkg "* ]]; then
                say "MISSING $pkg: scripts/deps.sh $p does not install it, and it brings $path ($who)"
                bad=1
            fi
        done
    done < <(entries)
    [ "$bad" = 0 ] || return 1
    say "static: every program of $PROGRAMS comes from a package scripts/deps.sh installs for its purpose ($(entries | wc -l) programs)"
}

# The purposes the list names, in ORDER.
purposes() {
    local p all
    all=$(entries | awk '{ print $3 }' | tr ',' '\n' | sort -u | tr '\n' ' ')
    for p in $ORDER; do
        case " $all " in *" $p "*) printf '%s ' "$p" ;; esac
    done
}

if [ "${1:-}" = --static ]; then
    static_check
    exit
fi
[ $# -eq 0 ] || die 2 "usage: scripts/deps-check.sh [--static]"
static_check || exit 1

# --- the root's programs -----------------------------------------------------------------------

# verify DIR PURPOSE STEP : every program listed for PURPOSE is in the root DIR, executable (a
# module's directory: a directory) and, when it is in a directory of PATH, what its name finds
# there. One line for each one missing; returns 1 if any is.
verify() {
    local dir=$1 purpose=$2 step=$3 out
    # shellcheck disable=SC2016 # the script's variables are the root's shell's
    out=$(entries | awk -v p="$purpose" '{ n = split($3, f, ","); for (i = 1; i <= n; i++) if (f[i] == p) { print; next } }' |
        chroot "$dir" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin /bin/sh -c '
            n=0
            while read -r path pkg for who; do
                n=$((n + 1))
                case $path in
                */) [ -d "$path" ] && continue ;;
                *)
                    if [ -x "$path" ] && [ ! -d "$path" ]; then
                        case ${path%/*} in
                        /usr/sbin | /usr/bin | /sbin | /bin) ;;
                        *) continue ;;
                        esac
                        found=$(command -v "${path##*/}") || found=
                        [ -n "$found" ] && [ "$(readlink -f "$found")" = "$(readlink -f "$path")" ] && continue
                        echo "MISSING $path by its name: ${path##*/} finds ${found:-nothing} (package $pkg; $who)"
                        continue
                    fi
                    ;;
                esac
                echo "MISSING $path: Debian package $pkg ($who)"
            done
            echo "checked $n"')
    local n miss
    n=$(printf '%s\n' "$out" | sed -n 's/^checked //p')
    miss=$(printf '%s\n' "$out" | grep '^MISSING' || true)
    if [ -z "$miss" ]; then
        say "$step: all ${n:-0} programs listed for $purpose are there"
        return 0
    fi
    printf '%s\n' "$miss" | while IFS= read -r line; do say "$step: $line"; done
    say "$step: $(printf '%s\n' "$miss" | wc -l) of the ${n:-0} programs listed for $purpose missing"
    return 1
}

# --- 4. the proof kept ----------------------------------------------------------------------------

[ "$(id -u)" = 0 ] || die 2 "needs root (debootstrap, chroot, mount)"
# The key is what makes the root: deps.sh, this script and the mirrors. The list is checked
# against the kept root at every run, so a program added to it needs no new root unless deps.sh
# must change to bring it (and then the key changes).
KEY=$({
    cat "$DEPS_SH" "$0"
    echo "$MIRROR $SECURITY"
} | sha256sum | cut -c1-16)
mkdir -p "$CACHE"
exec 8>>"$CACHE/deps-check.lock"
flock -n 8 || {
    say "waiting for another deps-check to finish"
    flock 8
}
fresh() { [ -e "$1" ] && [ -n "$(find "$1" -maxdepth 0 -mtime "-$DAYS" 2>/dev/null)" ]; }

if [ -d "$CACHE/root" ] && [ "$(cat "$CACHE/root.key" 2>/dev/null)" = "$KEY" ] && fresh "$CACHE/root.key"; then
    say "scripts/deps.sh and this script are as they were when $CACHE/root was made" \
        "($(date -r "$CACHE/root.key" '+%F %T'), key $KEY): the programs of $PROGRAMS checked in that root"
    ok=0
    for p in minbase $(purposes); do
        verify "$CACHE/root" "$p" "the kept root" || ok=1
    done
    [ "$ok" = 0 ] || die 1 "scripts/deps.sh does not bring every program $PROGRAMS lists (above)"
    say "proven (cached root), $(since "$START")"
    exit 0
fi

# --- 2. and 3. a clean root, deps.sh in it ---------------------------------------------------------

# The mount points under the root, the deepest first.
mounts() { awk -v r="$ROOT/" 'index($2, r) == 1 { print $2 }' /proc/mounts | sort -r; }

# bg LOG CMD... : CMD with its output to LOG, in the background and waited for, so that a signal
# to this script is taken at once (bash takes it only after a command in the foreground ends).
BG=
bg() {
    local log=$1
    shift
    "$@" >"$log" 2>&1 &
    BG=$!
    wait "$BG"
}

# Whatever happens: the processes started in the root stopped, its mounts gone, build/deps-check
# removed (never through a mount: a mount that will not go keeps the directory, and says so).
cleanup() {
    local rc=$? m d left
    trap - EXIT INT TERM
    if [ -n "$BG" ] && kill -TERM "$BG" 2>/dev/null; then
        wait "$BG" 2>/dev/null || true
    fi
    for d in /proc/[0-9]*; do
        [ "$(readlink "$d/root" 2>/dev/null)" = "$ROOT" ] && kill -KILL "${d#/proc/}" 2>/dev/null
    done
    mounts | while IFS= read -r m; do umount "$m" 2>/dev/null || umount -l "$m"; done
    left=$(mounts)
    if [ -n "$left" ]; then
        echo "deps-check: still mounted, so $WORK is kept: $left" >&2
    else
        rm -rf "$WORK"
        rmdir "$TOP/build" 2>/dev/null || true
    fi
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

rm -rf "$CACHE/root" "$CACHE/root.key"
if [ -n "$(mounts)" ]; then
    die 2 "something is mounted under $ROOT (an interrupted run?): unmount it first"
fi
rm -rf "$WORK"
mkdir -p "$ROOT" "$CACHE/apt-archives/partial" "$CACHE/apt-lists/partial"
if [ -n "$SEED" ] && [ -d "$SEED" ] && [ ! -e "$CACHE/apt-archives/.seeded" ]; then
    cp -l -n "$SEED"/*.deb "$CACHE/apt-archives/" 2>/dev/null || true
    touch "$CACHE/apt-archives/.seeded"
fi

t=$(date +%s)
TAR=$CACHE/minbase-bookworm.tar
if fresh "$TAR"; then
    tar -C "$ROOT" -xf "$TAR"
    say "minbase root: unpacked from $TAR ($(since "$t"))"
else
    command -v debootstrap >/dev/null || die 2 "needs debootstrap (scripts/deps.sh check installs it)"
    bg "$WORK/debootstrap.log" debootstrap --variant=minbase --cache-dir="$CACHE/apt-archives" \
        bookworm "$ROOT" "$MIRROR" || {
        tail -n 5 "$WORK/debootstrap.log" >&2
        die 2 "debootstrap failed"
    }
    rm -f "$ROOT"/var/cache/apt/archives/*.deb
    tar -C "$ROOT" -cf "$TAR.tmp" . && mv "$TAR.tmp" "$TAR"
    say "minbase root: debootstrap --variant=minbase bookworm from $MIRROR ($(since "$t")), kept as $TAR"
fi

ok=0
verify "$ROOT" minbase "the root as debootstrap made it" || ok=1

# The host's Debian 12 sources (the archive, its updates, security), a resolver, deps.sh.
rm -f "$ROOT/etc/apt/sources.list"
cat >"$ROOT/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: $MIRROR
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: $SECURITY
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
cp -L /etc/resolv.conf "$ROOT/etc/resolv.conf"
# The network as this machine meets it: trust anchors added here (a TLS-inspecting proxy between
# this machine and the registries) go into the root too, where ca-certificates, once deps.sh
# installs it, adds them to the root's store; NODE_EXTRA_CA_CERTS likewise, when set here. They
# are this machine's way out, not a package: a machine without them needs none.
if ls /usr/local/share/ca-certificates/*.crt >/dev/null 2>&1; then
    mkdir -p "$ROOT/usr/local/share/ca-certificates"
    cp /usr/local/share/ca-certificates/*.crt "$ROOT/usr/local/share/ca-certificates/"
fi
EXTRA_CA=
[ -n "${NODE_EXTRA_CA_CERTS:-}" ] && EXTRA_CA=NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt
mkdir -p "$ROOT/tmp/hopbench"
cp "$DEPS_SH" "$ROOT/tmp/hopbench/deps.sh"
mount -t proc proc "$ROOT/proc"
mount --bind "$CACHE/apt-archives" "$ROOT/var/cache/apt/archives"
mount --bind "$CACHE/apt-lists" "$ROOT/var/lib/apt/lists"

for p in $(purposes); do
    t=$(date +%s)
    bg "$WORK/deps-$p.log" chroot "$ROOT" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
        HOME=/root LANG=C.UTF-8 $EXTRA_CA sh /tmp/hopbench/deps.sh "$p" || {
        tail -n 20 "$WORK/deps-$p.log" >&2
        die 2 "scripts/deps.sh $p failed in the root"
    }
    say "scripts/deps.sh $p in the root: $(since "$t")"
    verify "$ROOT" "$p" "after scripts/deps.sh $p" || ok=1
done
[ "$ok" = 0 ] || die 1 "a fresh Debian 12 lacks programs after scripts/deps.sh: add their packages to it (or correct $PROGRAMS)"

# Kept as it is proven: without the mounts, the resolver, deps.sh or the lists.
mounts | while IFS= read -r m; do umount "$m"; done
rm -rf "$ROOT/tmp/hopbench" "$ROOT/etc/resolv.conf"
mv "$ROOT" "$CACHE/root"
echo "$KEY" >"$CACHE/root.key"
say "proven in a new root, $(since "$START"); kept as $CACHE/root (key $KEY) for the runs after"
