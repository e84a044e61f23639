#!/bin/bash
# bench/floor, the blocking floor the benches hold hopbench against, and its echo server's
# --wait (issue 26: a blocking AF_UNIX reader is also woken when its peer reads what it sent,
# which poll and epoll filter; bench/RESULTS.md). Each wait must echo every byte:
#  (a) the self-contained floor, every --wait (block, epoll, poll, epoll-out) over tcp, unix and
#      a socketpair, 1 B and 64 KiB (a 64 KiB message is more than one AF_UNIX skb and more
#      than one read): exit 0, one JSON line naming the wait and the iterations asked;
#  (b) floor serve --wait epoll and epoll-out answer floor client over unix and tcp (its
#      server_wait is "external"), and serve stops on SIGTERM and removes its socket file;
#  (c) a bad --wait, and --wait given to the client, are usage errors (exit 64).

# The floor of the build under test (lib.sh copies $HOPBENCH away, so before it)
FLOOR=${FLOOR:-$(dirname "${HOPBENCH:-build/release/hopbench}")/bench/floor}
case $FLOOR in
/*) ;;
*) FLOOR=$PWD/$FLOOR ;;
esac
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
if [ ! -x "$FLOOR" ]; then
    echo "not ok setup # $FLOOR is not an executable (make it: make $FLOOR)"
    exit 1
fi

# floor_ok NAME OUT WAIT : the JSON line in $T/OUT.out has server_wait WAIT, 200 iterations and
# a p50 above 0
floor_ok() {
    jcheck "$1" "$T/$2.out" \
        ".server_wait == \"$3\" and .iterations == 200 and .p50_ns > 0 and .p50_ns <= .p99_ns"
}

# (a)
for w in block epoll poll epoll-out; do
    for t in tcp unix socketpair; do
        for size in 1 65536; do
            n=self-$w-$t-$size
            RC=0
            (cd "$T" && exec timeout -k 5 60 "$FLOOR" "$t" "$size" 200 --warmup 20 --wait "$w") \
                >"$T/$n.out" 2>"$T/$n.err" || RC=$?
            if [ "$RC" != 0 ]; then
                not_ok "(a) floor $t $size --wait $w: exit 0" "exit $RC: $(head -c 200 "$T/$n.err")"
                continue
            fi
            floor_ok "(a) floor $t $size --wait $w: every round trip echoed, the wait named" \
                "$n" "$w"
        done
    done
done

# (b)
for w in epoll epoll-out; do
    for t in unix tcp; do
        n=serve-$w-$t
        if [ "$t" = unix ]; then addr=$T/$n.sock; else addr=0; fi
        spawn_cmd "$n" "$FLOOR" serve "$t" "$addr" --wait "$w"
        srv=$SPAWNED
        if ! eventually 10 grep -q '^floor: listening on ' "$T/$n.out"; then
            not_ok "(b) floor serve $t --wait $w: listening" "$(head -c 200 "$T/$n.err")"
            stop_pid "$srv"
            continue
        fi
        [ "$t" = tcp ] && addr=$(sed -n 's/^floor: listening on tcp:\/\/127.0.0.1://p' "$T/$n.out")
        RC=0
        (cd "$T" && exec timeout -k 5 60 "$FLOOR" client "$t" "$addr" 65536 200 --warmup 20) \
            >"$T/$n-c.out" 2>"$T/$n-c.err" || RC=$?
        check_eq "(b) floor client against floor serve $t --wait $w: exit 0" 0 "$RC"
        floor_ok "(b) floor client against floor serve $t --wait $w: 64 KiB echoed" "$n-c" external
        stop_pid "$srv"
        check_eq "(b) floor serve $t --wait $w: exit 0 on SIGTERM" 0 "$RC"
        [ "$t" = unix ] && check "(b) floor serve unix --wait $w: its socket file removed" \
            test ! -e "$T/$n.sock"
    done
done

# (c)
RC=0
"$FLOOR" unix 64 10 --wait spin >"$T/c1.out" 2>"$T/c1.err" || RC=$?
check_eq "(c) floor --wait spin: usage error" 64 "$RC"
check "(c) floor --wait spin: the error names the waits" \
    grep -q "bad --wait 'spin' (block, epoll, poll or epoll-out)" "$T/c1.err"
RC=0
"$FLOOR" client unix "$T/none.sock" 64 10 --wait epoll >"$T/c2.out" 2>"$T/c2.err" || RC=$?
check_eq "(c) floor client --wait: usage error (the client always blocks)" 64 "$RC"

done_testing
