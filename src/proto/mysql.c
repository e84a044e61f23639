/*
 * The MySQL / MariaDB client codec (mysql.h). One packet reader serves the
 * set-up and the replies: it gathers the 4-byte header (length, sequence id),
 * checks the sequence, and then buffers the payload (set-up packets, and the
 * first bytes of a reply's packets, enough to tell OK, ERR, EOF and a column
 * count apart), streams it through the --expect-body check, or skips it.
 */
#include "proto/mysql.h"

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <string.h>

/* Capability flags (the protocol's own numbers). */
#define CAP_LONG_PASSWORD   0x00000001u
#define CAP_CONNECT_WITH_DB 0x00000008u
#define CAP_PROTOCOL_41     0x00000200u
#define CAP_TRANSACTIONS    0x00002000u
#define CAP_SECURE_CONN     0x00008000u
#define CAP_PLUGIN_AUTH     0x00080000u
#define CAP_DEPRECATE_EOF   0x01000000u

#define CHARSET_UTF8MB4 45
#define SCRAMBLE_LEN    20
#define HEAD_KEEP       16 /* the bytes of a reply packet kept to read its kind */

#define NATIVE "mysql_native_password"
#define SHA2   "caching_sha2_password"

enum my_plugin { PLUGIN_NATIVE = 1, PLUGIN_SHA2 };

enum my_setup {
    SET_GREETING = 0, /* waiting for the server's handshake */
    SET_AUTH,         /* the response went out: OK, ERR, a switch or more data */
    SET_KEY,          /* caching_sha2 over TCP: the public key was asked for */
    SET_READY,
};

enum my_reply {
    REP_FIRST = 0, /* OK, ERR or a column count */
    REP_COLS,      /* column definitions */
    REP_COLS_EOF,  /* the EOF after them (no DEPRECATE_EOF) */
    REP_ROWS,      /* rows, then EOF or OK */
};

struct my_state {
    const struct mysql_opts *opts;
    const char *user, *password, *database, *sql[CODEC_SQL_MAX], *expect;
    size_t sql_len[CODEC_SQL_MAX], expect_len;
    struct codec_sql_id id[CODEC_SQL_MAX]; /* each statement's random id, if it has one */
    uint64_t id_rng;
    uint64_t sent; /* requests encoded: one at a time, so the reply's kind is the last's */
    unsigned kind;
    bool ping, local;
    /* the session */
    enum my_setup setup;
    enum my_plugin plugin;
    uint32_t caps; /* what both sides speak */
    uint8_t scramble[SCRAMBLE_LEN];
    /* the packet being read */
    uint8_t hdr[4];
    unsigned hdr_got;
    uint32_t plen, pgot;
    uint8_t seq; /* the sequence id the next packet must have */
    uint8_t buf[MYSQL_MAX_SETUP];
    /* the reply being read */
    enum my_reply reply;
    uint64_t cols_left;
    bool row_seen, row_check, error_reply;
    uint64_t field_len; /* the first row's first column, once its length is read */
    unsigned field_hdr; /* bytes of its length prefix (1, 3, 4 or 9), 0 until known */
    size_t reply_off;
};

static uint64_t get_le(const uint8_t *p, unsigned n)
{
    uint64_t v = 0;

    for (unsigned i = n; i-- > 0;)
        v = v << 8 | p[i];
    return v;
}

static uint8_t *put_le(uint8_t *p, uint32_t v, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
    return p + n;
}

static void my_init(void *st, const struct codec_cfg *cfg)
{
    struct my_state *s = st;
    const struct mysql_opts *o = cfg->opts;

    memset(s, 0, sizeof(*s));
    s->user = o->user != NULL ? o->user : MYSQL_DEFAULT_USER;
    s->password = o->password != NULL ? o->password : "";
    s->database = o->database;
    s->opts = o;
    for (unsigned i = 0; i < CODEC_SQL_MAX; i++) {
        s->sql[i] = codec_sql_text(&o->sql, i, MYSQL_DEFAULT_SQL);
        s->sql_len[i] = strlen(s->sql[i]);
        if (codec_sql_id_parse(s->sql[i], &s->id[i]) < 0) s->id[i].len = 0; /* sent as written */
    }
    s->id_rng = codec_sql_id_seed(cfg);
    s->ping = o->ping;
    s->local = cfg->local;
    s->expect = o->expect_body;
    s->expect_len = s->expect != NULL ? strlen(s->expect) : 0;
    s->seq = 1; /* a state that skips the set-up reads a reply at once */
}

/* Forgets a partial packet and reply; the session stays. */
static void my_reset(void *st)
{
    struct my_state *s = st;

    s->seq = 1; /* the next reply answers a command, which went out as packet 0 */
    s->hdr_got = 0;
    s->pgot = s->plen = 0;
    s->reply = REP_FIRST;
    s->row_seen = s->row_check = s->error_reply = false;
    s->field_hdr = 0;
    s->reply_off = 0;
}

static size_t my_max_request(const struct codec_cfg *cfg)
{
    const struct mysql_opts *o = cfg->opts;

    if (o->ping) return 5;
    return 5 + codec_sql_max_len(&o->sql, MYSQL_DEFAULT_SQL);
}

static size_t my_encode(void *st, uint8_t *dst, size_t cap)
{
    struct my_state *s = st;
    unsigned k = codec_sql_pick(&s->opts->sql, s->sent);
    size_t n = s->ping ? 1 : 1 + s->sql_len[k] + (s->id[k].len > 0 ? CODEC_SQL_ID_DIGITS : 0);

    if (4 + n > cap || n > MYSQL_MAX_PACKET) return 0;
    if (!s->ping)
        n = 1 + codec_sql_id_write(s->sql[k], s->sql_len[k], &s->id[k], &s->id_rng, dst + 5);
    put_le(dst, (uint32_t)n, 3);
    dst[3] = 0; /* a command starts a new sequence */
    dst[4] = s->ping ? 0x0e : 0x03;
    s->seq = 1;
    s->sent++;
    s->kind = k;
    return 4 + n;
}

static size_t my_bye(void *st, uint8_t *dst, size_t cap)
{
    (void)st;
    if (cap < 5) return 0;
    put_le(dst, 1, 3); /* COM_QUIT: one byte, sequence 0 */
    dst[3] = 0;
    dst[4] = 0x01;
    return 5;
}

/* ---- authentication ------------------------------------------------------- */

/* The scramble answered with the plugin's hash into out (20 or 32 bytes); its length, or -1. */
static int scramble_answer(const struct my_state *s, uint8_t *out)
{
    size_t pw = strlen(s->password);
    uint8_t h1[32], h2[32], h3[32], cat[SCRAMBLE_LEN + 32];
    const EVP_MD *md = s->plugin == PLUGIN_NATIVE ? EVP_sha1() : EVP_sha256();
    int len = s->plugin == PLUGIN_NATIVE ? 20 : 32;

    if (pw == 0) return 0;
    if (!EVP_Digest(s->password, pw, h1, NULL, md, NULL) ||
        !EVP_Digest(h1, (size_t)len, h2, NULL, md, NULL))
        return -1;
    if (s->plugin == PLUGIN_NATIVE) { /* SHA1(scramble + SHA1(SHA1(pw))) */
        memcpy(cat, s->scramble, SCRAMBLE_LEN);
        memcpy(cat + SCRAMBLE_LEN, h2, 20);
    } else { /* SHA256(SHA256(SHA256(pw)) + scramble) */
        memcpy(cat, h2, 32);
        memcpy(cat + 32, s->scramble, SCRAMBLE_LEN);
    }
    if (!EVP_Digest(cat, SCRAMBLE_LEN + (size_t)len, h3, NULL, md, NULL)) return -1;
    for (int i = 0; i < len; i++)
        out[i] = h1[i] ^ h3[i];
    return len;
}

/* Starts a packet of sequence s->seq at out; the payload follows at out + 4. */
static uint8_t *packet_begin(struct my_state *s, uint8_t *out)
{
    out[3] = s->seq++;
    return out + 4;
}

static size_t packet_end(uint8_t *out, const uint8_t *end)
{
    size_t n = (size_t)(end - out) - 4;

    put_le(out, (uint32_t)n, 3);
    return n + 4;
}

static bool plugin_of(const char *name, size_t len, enum my_plugin *p)
{
    if (len == strlen(NATIVE) && memcmp(name, NATIVE, len) == 0)
        *p = PLUGIN_NATIVE;
    else if (len == strlen(SHA2) && memcmp(name, SHA2, len) == 0)
        *p = PLUGIN_SHA2;
    else
        return false;
    return true;
}

static const char *plugin_name(enum my_plugin p)
{
    return p == PLUGIN_NATIVE ? NATIVE : SHA2;
}

/*
 * The server's Handshake v10 (s->buf, s->plen bytes) into the state; writes
 * the HandshakeResponse41 to out. Its length, or 0 (msg set).
 */
static size_t greeting(struct my_state *s, uint8_t *out, struct codec_msg *msg)
{
    const uint8_t *p = s->buf, *end = s->buf + s->plen, *name;
    uint32_t server_caps, want;
    uint8_t *m, answer[32];
    size_t nlen;
    int alen;

    msg->err = CODEC_ERR_MISMATCH;
    if (s->plen < 1 || p[0] != 10) return 0;
    name = memchr(p + 1, 0, (size_t)(end - p - 1)); /* the server's version */
    if (name == NULL || end - name < 1 + 4 + 8 + 1 + 2 + 1 + 2 + 2 + 1 + 10 + 12) return 0;
    p = name + 1 + 4; /* its thread id */
    memcpy(s->scramble, p, 8);
    p += 8 + 1;
    server_caps = (uint32_t)get_le(p, 2);
    p += 2 + 1 + 2;
    server_caps |= (uint32_t)get_le(p, 2) << 16;
    p += 2 + 1 + 10;
    memcpy(s->scramble + 8, p, 12);
    p += 12;
    if (p < end && *p == 0) p++;
    s->plugin = PLUGIN_NATIVE;
    if ((server_caps & CAP_PLUGIN_AUTH) && p < end) {
        nlen = strnlen((const char *)p, (size_t)(end - p));
        if (!plugin_of((const char *)p, nlen, &s->plugin)) return 0; /* one we do not speak */
    }
    if (!(server_caps & CAP_PROTOCOL_41) || !(server_caps & CAP_SECURE_CONN)) return 0;
    want = CAP_LONG_PASSWORD | CAP_PROTOCOL_41 | CAP_TRANSACTIONS | CAP_SECURE_CONN |
           CAP_PLUGIN_AUTH | CAP_DEPRECATE_EOF | (s->database != NULL ? CAP_CONNECT_WITH_DB : 0);
    s->caps = want & server_caps;
    if (strlen(s->user) > MYSQL_MAX_NAME ||
        (s->database != NULL && strlen(s->database) > MYSQL_MAX_NAME) ||
        strlen(s->password) > MYSQL_MAX_PASSWORD) {
        msg->err = CODEC_ERR_TOO_BIG;
        return 0;
    }
    alen = scramble_answer(s, answer);
    if (alen < 0) return 0;
    m = packet_begin(s, out);
    m = put_le(m, s->caps, 4);
    m = put_le(m, MYSQL_MAX_PACKET + 1, 4);
    *m++ = CHARSET_UTF8MB4;
    memset(m, 0, 23);
    m += 23;
    memcpy(m, s->user, strlen(s->user) + 1);
    m += strlen(s->user) + 1;
    *m++ = (uint8_t)alen;
    memcpy(m, answer, (size_t)alen);
    m += alen;
    if ((s->caps & CAP_CONNECT_WITH_DB) && s->database != NULL) {
        memcpy(m, s->database, strlen(s->database) + 1);
        m += strlen(s->database) + 1;
    }
    if (s->caps & CAP_PLUGIN_AUTH) {
        memcpy(m, plugin_name(s->plugin), strlen(plugin_name(s->plugin)) + 1);
        m += strlen(plugin_name(s->plugin)) + 1;
    }
    msg->err = CODEC_ERR_NONE;
    return packet_end(out, m);
}

/* AuthSwitchRequest (0xfe): another plugin and scramble; the answer to it. */
static size_t auth_switch(struct my_state *s, uint8_t *out, struct codec_msg *msg)
{
    const uint8_t *p = s->buf + 1, *end = s->buf + s->plen;
    size_t nlen = strnlen((const char *)p, (size_t)(end - p));
    uint8_t *m;
    int alen;

    msg->err = CODEC_ERR_MISMATCH;
    if (p + nlen >= end || !plugin_of((const char *)p, nlen, &s->plugin)) return 0;
    p += nlen + 1;
    if (end - p < SCRAMBLE_LEN) return 0;
    memcpy(s->scramble, p, SCRAMBLE_LEN);
    m = packet_begin(s, out);
    alen = scramble_answer(s, m);
    if (alen < 0) return 0;
    msg->err = CODEC_ERR_NONE;
    return packet_end(out, m + alen); /* an empty password: an empty packet */
}

/*
 * The password, NUL-terminated, XORed with the scramble and RSA-OAEP-encrypted
 * with the PEM public key pem[0 .. len).
 */
static size_t rsa_password(struct my_state *s, const void *pem, size_t len, uint8_t *out,
                           struct codec_msg *msg)
{
    size_t pw = strlen(s->password) + 1, outlen = MYSQL_SETUP_CAP - 4;
    uint8_t plain[MYSQL_MAX_PASSWORD + 1], *m;
    BIO *bio = len <= MYSQL_MAX_KEY ? BIO_new_mem_buf(pem, (int)len) : NULL;
    EVP_PKEY *key = bio != NULL ? PEM_read_bio_PUBKEY(bio, NULL, NULL, NULL) : NULL;
    EVP_PKEY_CTX *ctx = key != NULL ? EVP_PKEY_CTX_new(key, NULL) : NULL;
    bool ok = false;

    for (size_t i = 0; i < pw; i++)
        plain[i] = (uint8_t)((i < pw - 1 ? s->password[i] : 0) ^ s->scramble[i % SCRAMBLE_LEN]);
    m = packet_begin(s, out);
    if (ctx != NULL && EVP_PKEY_encrypt_init(ctx) > 0 &&
        EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_OAEP_PADDING) > 0 &&
        EVP_PKEY_encrypt(ctx, NULL, &outlen, plain, pw) > 0 && outlen <= MYSQL_SETUP_CAP - 4 &&
        EVP_PKEY_encrypt(ctx, m, &outlen, plain, pw) > 0)
        ok = true;
    EVP_PKEY_CTX_free(ctx);
    EVP_PKEY_free(key);
    BIO_free(bio);
    OPENSSL_cleanse(plain, sizeof(plain));
    if (!ok) {
        msg->err = CODEC_ERR_MISMATCH;
        return 0;
    }
    return packet_end(out, m + outlen);
}

/*
 * AuthMoreData (0x01) of caching_sha2_password: fast-auth verdict or a public
 * key. A full authentication over TCP sends the password RSA-encrypted with
 * the key opts->server_key gives, or with opts->get_server_key the one the
 * server sends when asked; with neither it is refused (msg->why): a server
 * that hands out its own key can read the password.
 */
static long more_data(struct my_state *s, uint8_t *out, struct codec_msg *msg)
{
    const struct mysql_opts *o = s->opts;
    size_t n;
    uint8_t *m;

    msg->err = CODEC_ERR_MISMATCH;
    if (s->plugin != PLUGIN_SHA2 || s->plen < 2) return -1;
    if (s->setup == SET_KEY) {
        n = rsa_password(s, s->buf + 1, s->plen - 1, out, msg);
        s->setup = SET_AUTH;
        return n > 0 ? (long)n : -1;
    }
    if (s->buf[1] == 3) return 0; /* fast authentication succeeded: an OK follows */
    if (s->buf[1] != 4) return -1;
    if (s->local) { /* a Unix socket is a secure transport: the password itself */
        m = packet_begin(s, out);
        memcpy(m, s->password, strlen(s->password) + 1);
        return (long)packet_end(out, m + strlen(s->password) + 1);
    }
    if (o->server_key_len > 0) { /* the user's key: nothing asked of the server */
        n = rsa_password(s, o->server_key, o->server_key_len, out, msg);
        return n > 0 ? (long)n : -1;
    }
    if (!o->get_server_key) {
        msg->why = "the server asked for a full caching_sha2_password authentication over TCP, "
                   "which needs its RSA key (--server-public-key FILE gives it, "
                   "--get-server-public-key takes the one it sends)";
        return -1;
    }
    m = packet_begin(s, out); /* full authentication */
    *m++ = 2;                 /* ask for the server's public key */
    s->setup = SET_KEY;
    return (long)packet_end(out, m);
}

/* ---- the packet reader ---------------------------------------------------- */

/*
 * Reads the next packet's header; true once it is whole and in sequence
 * (s->plen set). On a wrong sequence or size, false with *rc = ERROR.
 */
static bool read_header(struct my_state *s, const uint8_t *src, size_t len, size_t *off,
                        struct codec_msg *msg, enum codec_rc *rc)
{
    while (s->hdr_got < 4 && *off < len)
        s->hdr[s->hdr_got++] = src[(*off)++];
    if (s->hdr_got < 4) return false;
    s->plen = (uint32_t)get_le(s->hdr, 3);
    s->pgot = 0;
    if (s->hdr[3] != s->seq) {
        msg->err = CODEC_ERR_MISMATCH;
        msg->err_off = s->reply_off + 3;
        *rc = CODEC_ERROR;
        return false;
    }
    s->seq++;
    if (s->plen > MYSQL_MAX_PACKET) {
        msg->err = CODEC_ERR_TOO_BIG;
        msg->err_off = s->reply_off;
        *rc = CODEC_ERROR;
        return false;
    }
    return true;
}

/* One whole set-up packet: NEED_MORE (answer in out), DONE, or ERROR (msg set). */
static enum codec_rc setup_packet(struct my_state *s, uint8_t *out, size_t *out_len,
                                  struct codec_msg *msg)
{
    long n;

    if (s->setup == SET_GREETING) {
        *out_len = greeting(s, out, msg);
        s->setup = SET_AUTH;
        return *out_len > 0 ? CODEC_NEED_MORE : CODEC_ERROR;
    }
    if (s->plen == 0) {
        msg->err = CODEC_ERR_MISMATCH;
        return CODEC_ERROR;
    }
    switch (s->buf[0]) {
    case 0x00:
        if (s->setup == SET_KEY) break;
        s->setup = SET_READY;
        s->seq = 1; /* the first reply answers the first command */
        return CODEC_DONE;
    case 0xff:
        msg->err = CODEC_ERR_NONE;
        msg->error_reply = true;
        return CODEC_ERROR;
    case 0xfe:
        *out_len = auth_switch(s, out, msg);
        return *out_len > 0 ? CODEC_NEED_MORE : CODEC_ERROR;
    case 0x01:
        n = more_data(s, out, msg);
        if (n < 0) return CODEC_ERROR;
        *out_len = (size_t)n;
        return CODEC_NEED_MORE;
    default:
        break;
    }
    msg->err = CODEC_ERR_MISMATCH;
    return CODEC_ERROR;
}

static enum codec_rc my_setup(void *st, const uint8_t *src, size_t len, size_t *used, uint8_t *out,
                              size_t *out_len, struct codec_msg *msg)
{
    struct my_state *s = st;
    size_t off = 0;
    enum codec_rc rc = CODEC_NEED_MORE;

    *out_len = 0;
    *used = 0;
    if (src == NULL) { /* a new connection: the server speaks first */
        my_reset(s);
        s->setup = SET_GREETING;
        s->seq = 0;
        return CODEC_NEED_MORE;
    }
    while (off < len && rc == CODEC_NEED_MORE && *out_len == 0) {
        size_t n;

        if (s->hdr_got < 4) {
            if (!read_header(s, src, len, &off, msg, &rc)) break;
            if (s->plen > MYSQL_MAX_SETUP) {
                msg->err = CODEC_ERR_TOO_BIG;
                rc = CODEC_ERROR;
                break;
            }
        }
        n = s->plen - s->pgot;
        if (n > len - off) n = len - off;
        memcpy(s->buf + s->pgot, src + off, n);
        s->pgot += (uint32_t)n;
        off += n;
        if (s->pgot < s->plen) break;
        s->hdr_got = 0;
        rc = setup_packet(s, out, out_len, msg);
    }
    *used = off;
    return rc;
}

/* A length-encoded integer's size from its first byte (0: NULL, 0xfb; -1: not one). */
static int lenenc_size(uint8_t b)
{
    if (b < 0xfb) return 1;
    if (b == 0xfc) return 3;
    if (b == 0xfd) return 4;
    if (b == 0xfe) return 9;
    return b == 0xfb ? 0 : -1;
}

/*
 * The first row's first column against --expect-body, n bytes at payload
 * offset s->pgot: its length prefix (kept in s->buf), then its bytes.
 * Returns n, or the index of the first byte that departs (msg set).
 */
static size_t check_field(struct my_state *s, const uint8_t *p, size_t n, struct codec_msg *msg)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t at = s->pgot + (uint32_t)i;
        bool ok = true;

        if (s->field_hdr == 0 || at < s->field_hdr) {
            s->buf[at] = p[i];
            if (at == 0) {
                int sz = lenenc_size(p[i]);
                ok = sz > 0;
                s->field_hdr = sz > 0 ? (unsigned)sz : 1;
            }
            if (ok && at + 1 == s->field_hdr) {
                s->field_len = s->field_hdr == 1 ? s->buf[0] : get_le(s->buf + 1, s->field_hdr - 1);
                ok = s->field_len == s->expect_len;
            }
        } else if (at < s->field_hdr + s->expect_len) {
            ok = p[i] == (uint8_t)s->expect[at - s->field_hdr];
        } else {
            return n; /* the other columns */
        }
        if (!ok) {
            msg->err = CODEC_ERR_BODY;
            msg->err_off = s->reply_off + i;
            return i;
        }
    }
    return n;
}

/* A whole reply packet, by the reply's state: true when it ends the reply; *bad on a wrong one. */
static bool reply_packet(struct my_state *s, bool *bad)
{
    uint8_t first = s->buf[0];
    uint32_t eof_below = s->caps & CAP_DEPRECATE_EOF ? MYSQL_MAX_PACKET + 1 : 9;

    *bad = false;
    switch (s->reply) {
    case REP_FIRST:
        if (s->plen == 0) break;
        if (first == 0x00) return true; /* OK */
        if (first == 0xff) {
            s->error_reply = true;
            return true;
        }
        if (lenenc_size(first) < 1 || (first == 0xfe && s->plen < 9) ||
            s->plen < (uint32_t)lenenc_size(first))
            break; /* LOCAL INFILE (0xfb) or a stray EOF */
        s->cols_left = first < 0xfb ? first : get_le(s->buf + 1, (unsigned)lenenc_size(first) - 1);
        if (s->cols_left == 0) break;
        s->reply = REP_COLS;
        return false;
    case REP_COLS:
        if (--s->cols_left == 0) s->reply = s->caps & CAP_DEPRECATE_EOF ? REP_ROWS : REP_COLS_EOF;
        return false;
    case REP_COLS_EOF:
        if (s->plen == 0 || first != 0xfe || s->plen >= 9) break;
        s->reply = REP_ROWS;
        return false;
    case REP_ROWS:
        if (s->plen > 0 && first == 0xfe && s->plen < eof_below) return true;
        if (s->plen > 0 && first == 0xff) {
            s->error_reply = true;
            return true;
        }
        return false; /* a row */
    }
    *bad = true;
    return false;
}

static enum codec_rc my_feed(void *st, const uint8_t *src, size_t len, size_t *used,
                             struct codec_msg *msg)
{
    struct my_state *s = st;
    size_t off = 0;
    enum codec_rc rc = CODEC_NEED_MORE;

    while (off < len) {
        size_t start = off, n, keep;
        bool bad, end;

        if (s->hdr_got < 4) {
            bool whole = read_header(s, src, len, &off, msg, &rc);

            s->reply_off += off - start;
            if (!whole) {
                *used = off;
                return rc;
            }
            s->row_check = s->reply == REP_ROWS && !s->row_seen && s->expect != NULL;
            s->field_hdr = 0;
        }
        n = s->plen - s->pgot;
        if (n > len - off) n = len - off;
        if (s->row_check && s->pgot + n > 0) {
            /* a row or the end: the first byte tells, and only a row is checked */
            bool ends = s->pgot == 0 && n > 0 &&
                        ((src[off] == 0xfe &&
                          s->plen < (s->caps & CAP_DEPRECATE_EOF ? MYSQL_MAX_PACKET + 1 : 9)) ||
                         src[off] == 0xff);

            if (ends) {
                s->row_check = false;
            } else {
                size_t good = check_field(s, src + off, n, msg);

                if (good < n) {
                    *used = off + good;
                    return CODEC_ERROR;
                }
            }
        }
        keep = s->pgot < HEAD_KEEP ? HEAD_KEEP - s->pgot : 0;
        if (!s->row_check && keep > 0) memcpy(s->buf + s->pgot, src + off, keep < n ? keep : n);
        s->pgot += (uint32_t)n;
        off += n;
        s->reply_off += n;
        if (s->pgot < s->plen) break;
        s->hdr_got = 0;
        if (s->row_check) {
            if (s->field_hdr == 0 || s->plen < s->field_hdr + s->expect_len) {
                msg->err = CODEC_ERR_BODY; /* the row ended before its first column did */
                msg->err_off = s->reply_off;
                *used = off;
                return CODEC_ERROR;
            }
            s->row_seen = true;
            s->row_check = false;
            continue;
        }
        if (s->reply == REP_ROWS && s->plen > 0 && s->buf[0] != 0xfe && s->buf[0] != 0xff)
            s->row_seen = true;
        end = reply_packet(s, &bad);
        if (bad) {
            msg->err = CODEC_ERR_MISMATCH;
            msg->err_off = s->reply_off - s->plen;
            *used = off;
            return CODEC_ERROR;
        }
        if (end) {
            bool no_row = s->expect != NULL && !s->row_seen && !s->error_reply;

            memset(msg, 0, sizeof(*msg));
            msg->error_reply = s->error_reply;
            msg->kind = s->kind;
            if (no_row) {
                msg->err = CODEC_ERR_BODY;
                msg->err_off = s->reply_off - s->plen - 4;
            }
            *used = off;
            my_reset(s);
            return no_row ? CODEC_ERROR : CODEC_DONE;
        }
    }
    *used = off;
    return CODEC_NEED_MORE;
}

static enum codec_rc my_eof(void *st, struct codec_msg *msg)
{
    struct my_state *s = st;

    msg->err = CODEC_ERR_MISMATCH;
    msg->err_off = s->reply_off;
    return CODEC_ERROR;
}

/* A mix of statements, or a statement with a random id, differs from one request to the next. */
static bool mysql_varies(const struct codec_cfg *cfg)
{
    const struct mysql_opts *o = cfg->opts;

    return codec_sql_varies(&o->sql);
}

const struct codec_ops mysql_codec = {
    .name = "mysql",
    .state_size = sizeof(struct my_state),
    .fixed = true,
    .varies = mysql_varies,
    .kind_names = codec_sql_kinds,
    .max_request = my_max_request,
    .init = my_init,
    .encode = my_encode,
    .feed = my_feed,
    .eof = my_eof,
    .reset = my_reset,
    .setup = my_setup,
    .setup_cap = MYSQL_SETUP_CAP,
    .bye = my_bye,
};
