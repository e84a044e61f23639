#!/bin/bash
# The database clients against a fake server (tests/tools/fake_db.py) that asks for the
# password a weaker way and keeps what the client sends: pg asked for the password in clear or
# for MD5, over TCP and over a Unix socket, is exit 3 with one line saying so and names
# --auth-method, and the fake server got no byte of the password (no MD5 answer either); with
# --auth-method password the same server does get it (what the option allows). A SCRAM count of
# 10,000,000 iterations is refused at once: the command ends well within --timeout. mysql's
# full caching_sha2_password authentication over TCP is exit 3 naming --server-public-key and
# the fake server gets nothing after the handshake (no request for its key, no password);
# with --get-server-public-key it gets the request and the encrypted password.
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

FAKE=$PWD/tests/tools/fake_db.py
KEY=$PWD/tests/fixtures/mysql/server_public_key.pem # the fake server's own key
PW=hunter2-not-for-the-wire
PW_HEX=$(printf %s "$PW" | od -An -tx1 | tr -d ' \n')

# fake NAME LISTEN MODE [KEYFILE] : starts the fake server; sets FAKE_PID and FAKE_AT (its
# port or socket path), its capture $T/NAME.cap.
fake() {
    local name=$1 i
    spawn_cmd "$name" python3 "$FAKE" "$2" "$3" "$T/$name.cap" ${4:+"$4"}
    FAKE_PID=$SPAWNED
    for ((i = 0; i < 200; i++)); do
        grep -q '^listening ' "$T/$name.out" 2>/dev/null && break
        sleep 0.05
    done
    FAKE_AT=$(sed -n 's/^listening //p' "$T/$name.out")
    [ -n "$FAKE_AT" ] || not_ok "$name: the fake server listens" "$(head -c 300 "$T/$name.err")"
}

# pg, asked for the password in clear or for MD5: refused before any byte of it goes out.
for mode in pg-password pg-md5; do
    way=${mode#pg-}
    for tr in tcp unix; do
        name=$mode-$tr
        if [ "$tr" = tcp ]; then
            fake "$name" tcp:0 "$mode"
            ep=tcp://127.0.0.1:$FAKE_AT
        else
            fake "$name" "unix:$T/$name.sock" "$mode"
            ep=unix:$FAKE_AT
        fi
        expect_rc "pg over $tr, the server asks for $way: exit 3" 3 "$name" run pg "$ep" \
            --password "$PW" -d 0.3 --warmup 0 --json "$T/$name.json"
        one_line "pg over $tr, asked for $way: one line naming --auth-method $way" \
            "$T/$name.err" "refused to log in: the server asked for .* \\(--auth-method $way allows it\\)\$"
        check "pg over $tr, asked for $way: the fake server got a connection, no password" \
            bash -c "[ -s '$T/$name.cap' ] && ! grep -q '$PW_HEX' '$T/$name.cap'"
        check "pg over $tr, asked for $way: nothing at all after the start-up" \
            bash -c "! grep -q . '$T/$name.cap'"
        check "pg over $tr, asked for $way: no evidence written, nothing measured" \
            test ! -e "$T/$name.json"
        stop_pid "$FAKE_PID"
    done
done

# Named, the way is taken: the fake server then has the password (the option means it).
fake named tcp:0 pg-password
expect_rc "pg --auth-method password against it: runs, the log-ins refused (exit 2)" 2 named \
    run pg "tcp://127.0.0.1:$FAKE_AT" --password "$PW" --auth-method password -d 0.3 \
    --warmup 0 --json "$T/named.json"
check "pg --auth-method password: the fake server got the password in clear" \
    grep -q "$PW_HEX" "$T/named.cap"
stop_pid "$FAKE_PID"
fake named-md5 tcp:0 pg-md5
expect_rc "pg --auth-method md5 against it: runs, the log-ins refused (exit 2)" 2 named-md5 \
    run pg "tcp://127.0.0.1:$FAKE_AT" --password "$PW" --auth-method md5,scram-sha-256 -d 0.3 \
    --warmup 0 --json "$T/named-md5.json"
check "pg --auth-method md5: the fake server got an MD5 answer ('p' ... 'md5')" \
    grep -q '^70000000286d6435' "$T/named-md5.cap"
stop_pid "$FAKE_PID"

# SCRAM with 10,000,000 iterations (seconds of PBKDF2): refused at once, within --timeout.
fake scram tcp:0 pg-scram=10000000
t0=$(now_ms)
expect_rc "pg, a SCRAM count of 10,000,000: exit 3" 3 scram run pg "tcp://127.0.0.1:$FAKE_AT" \
    --password "$PW" --timeout 0.5 -d 0.3 --warmup 0 --json "$T/scram.json"
ms=$(($(now_ms) - t0))
bound=$(san_s 2000)
check "pg, 10,000,000 iterations: the command took ${ms} ms, within --timeout 0.5 s + 1.5 s" \
    test "$ms" -lt "${bound%.*}"
one_line "pg, 10,000,000 iterations: one line saying so" "$T/scram.err" \
    'refused to log in: the server asked for more than 100000 SCRAM iterations'
check "pg, 10,000,000 iterations: no proof went out" \
    bash -c "! grep -q '2c703d' '$T/scram.cap'" # ",p="
stop_pid "$FAKE_PID"

# mysql: a full caching_sha2_password authentication over TCP needs a key the user names.
fake my tcp:0 mysql-full "$KEY"
expect_rc "mysql, a full authentication over TCP: exit 3" 3 my run mysql \
    "tcp://127.0.0.1:$FAKE_AT" --user bench --password "$PW" -d 0.3 --warmup 0 --json "$T/my.json"
one_line "mysql, a full authentication: one line naming both key options" "$T/my.err" \
    'refused to log in: .*--server-public-key FILE.*--get-server-public-key'
check "mysql, a full authentication: the fake server got nothing after the handshake" \
    bash -c "[ -s '$T/my.cap' ] && ! grep -q . '$T/my.cap'"
stop_pid "$FAKE_PID"
fake my-get tcp:0 mysql-full "$KEY"
expect_rc "mysql --get-server-public-key: runs, the log-ins refused (exit 2)" 2 my-get run mysql \
    "tcp://127.0.0.1:$FAKE_AT" --user bench --password "$PW" --get-server-public-key -d 0.3 \
    --warmup 0 --json "$T/my-get.json"
# a packet of 1 byte, 0x02 (the key, please), then one of 256 (the password, RSA-encrypted)
check "mysql --get-server-public-key: the key asked for, then 256 encrypted bytes sent" \
    grep -Eq '^01000003020001..05' "$T/my-get.cap"
stop_pid "$FAKE_PID"

done_testing
