/*
 * mysql: the MySQL / MariaDB client/server protocol, client side (name
 * "mysql").
 *
 * Session set-up (codec_ops.setup): the server speaks first, a Handshake v10
 * (protocol 10, its capabilities, a 20-byte scramble and its default
 * authentication plugin); the client answers with a HandshakeResponse41
 * (PROTOCOL_41, SECURE_CONNECTION, PLUGIN_AUTH, CONNECT_WITH_DB when a
 * database is named, DEPRECATE_EOF when the server offers it; utf8mb4) with
 * the scramble answered by the plugin:
 *   mysql_native_password   SHA1(pw) XOR SHA1(scramble + SHA1(SHA1(pw)))
 *   caching_sha2_password   SHA256(pw) XOR SHA256(SHA256(SHA256(pw)) + scramble),
 *                           then the server's fast-auth verdict, or for a full
 *                           authentication the password in clear over a Unix
 *                           socket, over TCP encrypted (RSA-OAEP, libcrypto)
 *                           with the public key opts->server_key gives or, with
 *                           opts->get_server_key, the one the client asks the
 *                           server for; with neither it is refused (msg->why)
 * (an empty password answers with nothing). An AuthSwitchRequest changes the
 * plugin and scramble. OK ends the set-up; ERR is ERROR with error_reply;
 * another plugin, a protocol other than 10, or a packet out of sequence is
 * ERROR / MISMATCH.
 *
 * Requests: COM_QUERY with opts->sql (default "SELECT 1"), or COM_PING
 * (opts->ping); one in flight per connection (a reply's packets are numbered
 * from the request's). The request is the same bytes each time, so the codec
 * is `fixed`: encode() reads only the options, and a reply's sequence starts
 * again when the set-up or the reply before it ends. Replies: OK; ERR (DONE
 * with error_reply); or a text result set (column count, column definitions,
 * an EOF unless DEPRECATE_EOF, rows, then EOF or OK) whose rows are skipped
 * by length. With opts->expect_body the first column of the first row must
 * equal it (NULL, another length, or no row: CODEC_ERR_BODY). A packet longer
 * than MYSQL_MAX_PACKET (rows split over 16 MiB packets included) is TOO_BIG.
 * eof() is ERROR / MISMATCH. bye() writes COM_QUIT.
 */
#ifndef HOPBENCH_PROTO_MYSQL_H
#define HOPBENCH_PROTO_MYSQL_H

#include "proto/codec.h"

#define MYSQL_MAX_PACKET   0xfffffeu /* a whole packet: 16 MiB less one byte */
#define MYSQL_MAX_SETUP    2048u     /* a set-up packet (handshake, auth switch, public key) */
#define MYSQL_SETUP_CAP    1024u     /* the most bytes one set-up step writes */
#define MYSQL_MAX_NAME     80u       /* user and database */
#define MYSQL_MAX_KEY      16384u    /* a server public key's PEM (--server-public-key) */
#define MYSQL_MAX_PASSWORD 256u
#define MYSQL_DEFAULT_USER "root"
#define MYSQL_DEFAULT_SQL  "SELECT 1"

/*
 * What the command line says about mysql's requests and log-in (run's
 * options); all zero: the defaults. Strings are NUL-terminated and outlive
 * every codec state.
 */
struct mysql_opts {
    struct codec_sql sql;    /* default "SELECT 1" */
    const char *user;        /* who logs in, default MYSQL_DEFAULT_USER */
    const char *password;    /* NULL: none (the server must not ask for one) */
    const char *database;    /* NULL: none */
    const char *expect_body; /* the first row's first column must equal this; NULL: not checked */
    bool ping;               /* COM_PING instead of a query */
    /*
     * caching_sha2_password's full authentication over TCP: the server's RSA
     * public key (PEM, server_key_len bytes) to encrypt the password with, or
     * (get_server_key) the one the server sends when asked; neither: refused.
     * Over a Unix socket the password goes itself.
     */
    const char *server_key;
    size_t server_key_len;
    bool get_server_key;
};

extern const struct codec_ops mysql_codec;

#endif
