#!/usr/bin/env python3
"""fake_db: a database server that is not one, for the integration tests (not part of
hopbench). It listens on LISTEN (tcp:PORT on 127.0.0.1, port 0 for the kernel's choice, or
unix:PATH), prints "listening PORT-OR-PATH" once it does, and answers each connection with
the authentication request MODE names, writing to CAPTURE, one line per connection, the
hex of every byte the client sent after its first message (pg's StartupMessage, mysql's
HandshakeResponse41: nothing secret in either): what a server that asks for a password a
weaker way would take. Then it refuses the log-in and closes. Until SIGTERM.

  pg-password     AuthenticationCleartextPassword
  pg-md5          AuthenticationMD5Password (salt 01020304)
  pg-scram=N      AuthenticationSASL (SCRAM-SHA-256), then a server-first message with the
                  client's nonce extended and i=N iterations
  mysql-full      a Handshake v10 whose plugin is caching_sha2_password, then AuthMoreData
                  0x04 (a full authentication); a client that asks for the key (0x02) gets
                  KEYFILE's PEM

usage: fake_db.py LISTEN MODE CAPTURE [KEYFILE]
"""
import os
import signal
import socket
import struct
import sys


def recv_exact(c, n):
    b = b""
    while len(b) < n:
        k = c.recv(n - len(b))
        if not k:
            raise EOFError
        b += k
    return b


def pg_read(c, timeout):
    """The client's next message, or b"" when it closes or is silent for timeout seconds."""
    c.settimeout(timeout)
    try:
        head = recv_exact(c, 5)
        return head + recv_exact(c, struct.unpack(">I", head[1:])[0] - 4)
    except (EOFError, socket.timeout, OSError):
        return b""


def my_read(c, timeout):
    """The client's next packet, or b"" when it closes or is silent for timeout seconds."""
    c.settimeout(timeout)
    try:
        head = recv_exact(c, 4)
        return head + recv_exact(c, struct.unpack("<I", head[:3] + b"\0")[0])
    except (EOFError, socket.timeout, OSError):
        return b""


def pg_msg(t, body):
    return t + struct.pack(">I", len(body) + 4) + body


def pg_error():
    return pg_msg(b"E", b"SFATAL\0C28P01\0Mpassword authentication failed\0\0")


def serve_pg(c, mode):
    n = struct.unpack(">I", recv_exact(c, 4))[0]
    recv_exact(c, n - 4)  # the StartupMessage: user, database, no secret
    if mode == "pg-password":
        c.sendall(pg_msg(b"R", struct.pack(">I", 3)))
        return pg_read(c, 10.0)
    if mode == "pg-md5":
        c.sendall(pg_msg(b"R", struct.pack(">I", 5) + b"\x01\x02\x03\x04"))
        return pg_read(c, 10.0)
    iters = int(mode.split("=", 1)[1])
    c.sendall(pg_msg(b"R", struct.pack(">I", 10) + b"SCRAM-SHA-256\0\0"))
    sent = pg_read(c, 10.0)  # SASLInitialResponse: the mechanism and a nonce, no secret
    nonce = sent.split(b"r=", 1)[1]
    first = b"r=" + nonce + b"fake,s=QSXCR+Q6sek8bf92,i=" + str(iters).encode()
    c.sendall(pg_msg(b"R", struct.pack(">I", 11) + first))
    return sent + pg_read(c, 60.0)  # the proof, once PBKDF2 ran


def my_packet(seq, payload):
    return struct.pack("<I", len(payload))[:3] + bytes([seq]) + payload


def serve_mysql(c, keyfile):
    caps = 0x00000001 | 0x00000200 | 0x00008000 | 0x00080000  # 4.1, secure, plugin auth
    scramble = bytes(range(1, 21))
    greeting = (b"\x0a" + b"8.0.36-fake\0" + struct.pack("<I", 7) + scramble[:8] + b"\0" +
                struct.pack("<H", caps & 0xffff) + b"\x2d" + struct.pack("<H", 2) +
                struct.pack("<H", caps >> 16) + bytes([21]) + b"\0" * 10 + scramble[8:] +
                b"\0" + b"caching_sha2_password\0")
    c.sendall(my_packet(0, greeting))
    head = recv_exact(c, 4)
    recv_exact(c, struct.unpack("<I", head[:3] + b"\0")[0])  # the response: a scramble answer
    c.sendall(my_packet(2, b"\x01\x04"))  # a full authentication, please
    sent = my_read(c, 10.0)
    if sent[4:] == b"\x02" and keyfile:  # the key, please: the server's own
        with open(keyfile, "rb") as f:
            c.sendall(my_packet(sent[3] + 1, b"\x01" + f.read()))
        sent += my_read(c, 10.0)
    return sent


def main():
    listen, mode, capture = sys.argv[1], sys.argv[2], sys.argv[3]
    keyfile = sys.argv[4] if len(sys.argv) > 4 else None
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    if listen.startswith("unix:"):
        s = socket.socket(socket.AF_UNIX)
        s.bind(listen[5:])
        where = listen[5:]
    else:
        s = socket.socket()
        s.bind(("127.0.0.1", int(listen[4:])))
        where = str(s.getsockname()[1])
    s.listen(16)
    print("listening", where, flush=True)
    while True:
        c, _ = s.accept()
        try:
            sent = serve_mysql(c, keyfile) if mode == "mysql-full" else serve_pg(c, mode)
        except (EOFError, OSError, ValueError, IndexError):
            sent = b""
        with open(capture, "a") as f:
            f.write(sent.hex() + "\n")
        try:
            c.sendall(pg_error() if mode.startswith("pg") else
                      my_packet(9, b"\xff\x15\x04#28000Access denied"))
        except OSError:
            pass
        c.close()


if __name__ == "__main__":
    os.umask(0o077)
    main()
