#!/bin/bash
# The harness itself (lib.sh): its EXIT/INT/TERM trap is set before the script's private
# directory is made, so a script stopped while lib.sh copies the binary under test into it
# leaves nothing behind. A script sourcing lib.sh is given a FIFO as the binary, which holds
# the copy until this test lets it go; it is stopped by SIGTERM or SIGINT (Ctrl-C) in that
# window, then the copy is let go: the script ends through the trap (exit 143, 130), before
# its first line after lib.sh, and its TMPDIR is empty. Nothing is left: the FIFOs and
# directories are in $T.
# shellcheck disable=SC2016 # $1 in single quotes belongs to the inner shell
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

LIB=$(cd "$(dirname "$0")" && pwd)/lib.sh

# made DIR : the directory lib.sh made in DIR, if any (its name is random).
made() {
    local d
    for d in "$1"/hopbench-it.*; do
        [ -d "$d" ] && echo "$d"
    done
}

# stopped_in_copy SIG RC : a script stopped by SIG while lib.sh copies the binary into its
# directory ends with RC, its line after lib.sh not run, and leaves nothing.
stopped_in_copy() {
    local sig=$1 want=$2 dir=$T/tmp-$1 fifo=$T/fifo-$1 pid i
    mkdir "$dir"
    mkfifo -m 755 "$fifo"
    # env resets SIGINT, which bash ignores in a background job, as a terminal would leave it;
    # the script must clean up even when this one keeps its directory (KEEP_TMP)
    spawn_cmd "lib-$sig" env -u KEEP_TMP --default-signal=INT TMPDIR="$dir" HOPBENCH="$fifo" \
        bash -c '. "$1"; echo "past lib.sh"' sh "$LIB"
    pid=$SPAWNED
    for ((i = 0; i < 100; i++)); do # the directory is made, the copy waits on the FIFO
        [ -n "$(made "$dir")" ] && break
        sleep 0.05
    done
    check "SIG$sig: the script made its directory (${dir##*/})" test -n "$(made "$dir")"
    sleep 0.2 # cp has opened the FIFO by now; a signal sooner is the same window
    kill -"$sig" "$pid"
    timeout 5 sh -c ': >"$1"' sh "$fifo" # lets the copy go: an empty binary
    reap "$pid" 10
    check_eq "SIG$sig while the binary is copied: the trap's exit" "$want" "$RC"
    check_eq "SIG$sig while the binary is copied: nothing after lib.sh ran" "" \
        "$(cat "$T/lib-$sig.out")"
    check_eq "SIG$sig while the binary is copied: nothing left in TMPDIR" "" "$(made "$dir")"
}

stopped_in_copy TERM 143
stopped_in_copy INT 130

done_testing
