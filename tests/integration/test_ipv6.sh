#!/bin/bash
# TCP over the IPv6 loopback end to end: serve listening on tcp://[::1]:0, run against it in
# both modes, replies checked and the hop's sockets found by sock_diag. Skipped when this
# machine has no ::1 on lo.
# shellcheck disable=SC2016 # $vars in single quotes are jq variables
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

# ::1 is configured on lo (it is absent when IPv6 is off, or disabled on lo).
if ! grep -Eq '^0{31}1 .* lo$' /proc/net/if_inet6 2>/dev/null; then
    ok "tcp://[::1] end to end # SKIP no IPv6 loopback address (::1 on lo) on this machine"
    done_testing
fi

start_server v6 --listen 'tcp://[::1]:0' || done_testing
v6_pid=$SRV_PID
check "serve: listening on tcp://[::1] at the kernel's port" \
    grep -Eqx 'hopbench: listening on tcp://\[::1\]:[1-9][0-9]*' "$T/v6.out"
ep="tcp://[::1]:$SRV_PORT"

for mode in reuse connect; do
    n="run $ep --mode $mode"
    j=$T/v6_$mode.json
    t0=$(now_ms)
    expect_rc "$n: exit 0" 0 "v6_$mode" \
        run echo "$ep" --mode $mode -d 1 --warmup 0.2 --timeout 2 --json "$j" || continue
    check "$n: ends in bounded time (< 10 s)" test $(($(now_ms) - t0)) -lt 10000
    check "$n: table row names the endpoint" grep -Eq "^tcp://\[::1\]:$SRV_PORT +$mode +64 B " \
        "$T/v6_$mode.out"
    rcheck "$n: one valid run of the [::1] endpoint over tcp" "$j" \
        '.valid == true and (.runs | length) == 1 and (.runs[0] | .endpoint == "'"$ep"'"
         and .transport == "tcp" and .mode == "'$mode'" and .valid == true)'
    rcheck "$n: ops > 0, no errors, every reply checked" "$j" \
        '.runs[0] | .ops > 0 and errors_zero and hist_ok and lat_ok and .replies >= .ops
         and .requests - .replies <= .connections'
    if [ $mode = reuse ]; then
        rcheck "$n: one connection, seen established by sock_diag" "$j" \
            '.runs[0] | .connects <= 1 and .observed.sockets.established.peak >= 1'
    else
        rcheck "$n: a connect per op, each closed by the client into TIME_WAIT" "$j" \
            '.runs[0] | .connects >= .ops and (.observed.sockets.time_wait_client
             | .peak > .start) and .observed.net_delta["Tcp.ActiveOpens"] >= 0.99 * .connects'
    fi
done

stop_server "$v6_pid" "$T/v6.out"
check_eq "serve on [::1]: exit 0" 0 "$RC"
check "serve on [::1]: counted the connections, no errors" \
    test "$(stopped_field connections)" -gt 1 -a "$(stopped_field errors)" = 0

done_testing
