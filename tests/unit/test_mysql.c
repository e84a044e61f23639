/*
 * test_mysql: the MySQL/MariaDB codec (proto/mysql.c) on scripted server
 * packets. Set-up: the HandshakeResponse41 to a MariaDB-style greeting, its
 * scramble answers against values computed by an independent implementation
 * (Python's hashlib) for mysql_native_password and caching_sha2_password, an
 * auth switch, fast and full caching_sha2 authentication (the password in
 * clear over a Unix socket; over TCP RSA-OAEP with a key the test makes and
 * decrypts with: the server's with --get-server-public-key, the user's with
 * --server-public-key, and with neither refused with a line saying so and
 * nothing written), a refusal. Replies: OK, ERR, result sets with and without
 * DEPRECATE_EOF, --expect-body, packets out of sequence, LOCAL INFILE, and
 * the same verdicts however the bytes are split.
 */
/* cmocka.h needs these four first, in this order */
/* clang-format off */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
/* clang-format on */

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/mysql.h"
#include "sql_mix.h"

#define CAPS_BASE                                                                                  \
    0x000AA209u /* LONG_PASSWORD CONNECT_WITH_DB PROTOCOL_41 TRANSACTIONS SECURE PLUGIN_AUTH */
#define CAP_DEPRECATE_EOF 0x01000000u

/* Python: hashlib over password "secret" and the scramble 1, 2, ..., 20. */
static const char native_hex[] = "b32bb3a583e1340c0a1108d58b1be49781ad8c2f";
static const char sha2_hex[] = "746ebe205d56a0707acb3e796e834e0dd7b1d61743b26bd5202c7a623230c7c9";

struct buf {
    uint8_t b[8192];
    size_t n;
};

static void pkt(struct buf *o, uint8_t seq, const void *payload, size_t len)
{
    o->b[o->n++] = (uint8_t)len;
    o->b[o->n++] = (uint8_t)(len >> 8);
    o->b[o->n++] = (uint8_t)(len >> 16);
    o->b[o->n++] = seq;
    memcpy(o->b + o->n, payload, len);
    o->n += len;
}

/* A MariaDB-style Handshake v10 with the scramble 1..20 and the given plugin. */
static void greeting(struct buf *o, uint32_t caps, const char *plugin)
{
    uint8_t p[256], *m = p;
    static const char version[] = "10.11.6-MariaDB";

    *m++ = 10;
    memcpy(m, version, sizeof(version));
    m += sizeof(version);
    memcpy(m, "\x07\x00\x00\x00", 4); /* thread id */
    m += 4;
    for (int i = 1; i <= 8; i++)
        *m++ = (uint8_t)i;
    *m++ = 0;
    *m++ = (uint8_t)caps;
    *m++ = (uint8_t)(caps >> 8);
    *m++ = 45;
    *m++ = 2;
    *m++ = 0;
    *m++ = (uint8_t)(caps >> 16);
    *m++ = (uint8_t)(caps >> 24);
    *m++ = 21;
    memset(m, 0, 10);
    m += 10;
    for (int i = 9; i <= 20; i++)
        *m++ = (uint8_t)i;
    *m++ = 0;
    memcpy(m, plugin, strlen(plugin) + 1);
    m += strlen(plugin) + 1;
    pkt(o, 0, p, (size_t)(m - p));
}

struct my {
    uint8_t st[8192];
    struct mysql_opts opts;
    struct codec_cfg cfg;
    uint8_t out[MYSQL_SETUP_CAP];
    size_t out_len;
    struct codec_msg m;
};

static void my_new(struct my *c, const char *password, bool local)
{
    size_t used;

    memset(c, 0, sizeof(*c));
    assert_true(mysql_codec.state_size <= sizeof(c->st));
    c->opts.password = password;
    c->cfg.opts = &c->opts;
    c->cfg.local = local;
    mysql_codec.init(c->st, &c->cfg);
    assert_int_equal(mysql_codec.setup(c->st, NULL, 0, &used, c->out, &c->out_len, &c->m),
                     CODEC_NEED_MORE);
    assert_int_equal(c->out_len, 0); /* the server speaks first */
}

static enum codec_rc step(struct my *c, const struct buf *in, size_t *used)
{
    memset(&c->m, 0, sizeof(c->m));
    return mysql_codec.setup(c->st, in->b, in->n, used, c->out, &c->out_len, &c->m);
}

static void unhex(uint8_t *out, const char *h, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned v;
        sscanf(h + 2 * i, "%2x", &v);
        out[i] = (uint8_t)v;
    }
}

/* The HandshakeResponse41 in c->out: its capabilities, user, answer and plugin. */
static void check_response(const struct my *c, const char *user, const char *answer_hex,
                           size_t alen, const char *plugin, uint32_t *caps)
{
    const uint8_t *p = c->out + 4;
    uint8_t want[32];

    assert_int_equal(c->out[3], 1); /* the sequence after the greeting's 0 */
    *caps = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    p += 4 + 4 + 1 + 23;
    assert_string_equal((const char *)p, user);
    p += strlen(user) + 1;
    assert_int_equal(*p, alen);
    unhex(want, answer_hex, alen);
    if (alen > 0) assert_memory_equal(p + 1, want, alen);
    p += 1 + alen;
    assert_string_equal((const char *)p, plugin);
    assert_int_equal((size_t)(p + strlen(plugin) + 1 - c->out), c->out_len);
}

static void test_native(void **state)
{
    struct my c;
    struct buf in = { 0 };
    size_t used;
    uint32_t caps;

    (void)state;
    my_new(&c, "secret", false);
    greeting(&in, CAPS_BASE, "mysql_native_password");
    assert_int_equal(step(&c, &in, &used), CODEC_NEED_MORE);
    assert_int_equal(used, in.n);
    check_response(&c, "root", native_hex, 20, "mysql_native_password", &caps);
    assert_int_equal(caps & CAP_DEPRECATE_EOF, 0); /* the server did not offer it */
    assert_int_equal(caps & 0x8, 0);               /* no database named */
    in.n = 0;
    pkt(&in, 2, "\x00\x00\x00\x02\x00\x00\x00", 7);
    assert_int_equal(step(&c, &in, &used), CODEC_DONE);
}

static void test_refused(void **state)
{
    struct my c;
    struct buf in = { 0 };
    size_t used;

    (void)state;
    my_new(&c, "wrong", false);
    greeting(&in, CAPS_BASE, "mysql_native_password");
    step(&c, &in, &used);
    in.n = 0;
    pkt(&in, 2, "\xff\x15\x04#28000Access denied", 22);
    assert_int_equal(step(&c, &in, &used), CODEC_ERROR);
    assert_true(c.m.error_reply);
}

/* A switch to caching_sha2_password, then fast authentication. */
static void test_switch_sha2_fast(void **state)
{
    struct my c;
    struct buf in = { 0 };
    uint8_t sw[64] = "\xfe"
                     "caching_sha2_password",
            want[32];
    size_t used, n = 1 + strlen("caching_sha2_password") + 1;

    (void)state;
    my_new(&c, "secret", false);
    greeting(&in, CAPS_BASE, "mysql_native_password");
    step(&c, &in, &used);
    for (int i = 1; i <= 20; i++)
        sw[n++] = (uint8_t)i;
    sw[n++] = 0;
    in.n = 0;
    pkt(&in, 2, sw, n);
    assert_int_equal(step(&c, &in, &used), CODEC_NEED_MORE);
    assert_int_equal(c.out_len, 4 + 32);
    assert_int_equal(c.out[3], 3);
    unhex(want, sha2_hex, 32);
    assert_memory_equal(c.out + 4, want, 32);
    in.n = 0;
    pkt(&in, 4, "\x01\x03", 2);
    pkt(&in, 5, "\x00\x00\x00\x02\x00\x00\x00", 7);
    assert_int_equal(step(&c, &in, &used), CODEC_DONE);
    assert_int_equal(used, in.n);
}

/* Full caching_sha2 authentication over a Unix socket: the password in clear. */
static void test_sha2_full_local(void **state)
{
    struct my c;
    struct buf in = { 0 };
    size_t used;
    uint32_t caps;

    (void)state;
    my_new(&c, "secret", true);
    greeting(&in, CAPS_BASE | CAP_DEPRECATE_EOF, "caching_sha2_password");
    step(&c, &in, &used);
    check_response(&c, "root", sha2_hex, 32, "caching_sha2_password", &caps);
    assert_true(caps & CAP_DEPRECATE_EOF);
    in.n = 0;
    pkt(&in, 2, "\x01\x04", 2);
    assert_int_equal(step(&c, &in, &used), CODEC_NEED_MORE);
    assert_int_equal(c.out_len, 4 + 7);
    assert_memory_equal(c.out + 3, "\x03secret\0", 8);
}

/* An RSA key the test makes, and its public half in PEM (*pem, *len, owned by *bio). */
static EVP_PKEY *rsa_key(BIO **bio, char **pem, size_t *len)
{
    EVP_PKEY *key = EVP_RSA_gen(2048);

    assert_non_null(key);
    *bio = BIO_new(BIO_s_mem());
    assert_int_equal(PEM_write_bio_PUBKEY(*bio, key), 1);
    *len = (size_t)BIO_get_mem_data(*bio, pem);
    return key;
}

/* The packet in c->out (sequence seq) is "secret" XOR the scramble, RSA-OAEP-encrypted for key. */
static void check_encrypted(const struct my *c, EVP_PKEY *key, uint8_t seq)
{
    EVP_PKEY_CTX *dec = EVP_PKEY_CTX_new(key, NULL);
    uint8_t plain[512];
    size_t plen = sizeof(plain);

    assert_int_equal(c->out[3], seq);
    assert_int_equal(c->out_len, 4 + 256);
    assert_int_equal(EVP_PKEY_decrypt_init(dec), 1);
    assert_int_equal(EVP_PKEY_CTX_set_rsa_padding(dec, RSA_PKCS1_OAEP_PADDING), 1);
    assert_int_equal(EVP_PKEY_decrypt(dec, plain, &plen, c->out + 4, 256), 1);
    assert_int_equal(plen, 7);
    for (size_t i = 0; i < plen; i++)
        assert_int_equal(plain[i] ^ (uint8_t)(i % 20 + 1), (uint8_t) "secret"[i]);
    EVP_PKEY_CTX_free(dec);
}

/*
 * A session over TCP at caching_sha2's full authentication, the server's
 * 0x01 0x04 read: with --get-server-public-key as get says, and the key
 * pem[0 .. len) as --server-public-key (len 0: none).
 */
static enum codec_rc sha2_full(struct my *c, bool get, const char *pem, size_t len)
{
    struct buf in = { 0 };
    size_t used;

    my_new(c, "secret", false);
    c->opts.get_server_key = get; /* read when the full authentication comes */
    c->opts.server_key = pem;
    c->opts.server_key_len = len;
    greeting(&in, CAPS_BASE, "caching_sha2_password");
    step(c, &in, &used);
    in.n = 0;
    pkt(&in, 2, "\x01\x04", 2);
    return step(c, &in, &used);
}

/*
 * Over TCP with --get-server-public-key: the key is asked for, and the
 * password comes back RSA-OAEP-encrypted with the one the server sends.
 */
static void test_sha2_full_rsa(void **state)
{
    struct my c;
    struct buf in = { 0 };
    uint8_t keymsg[2048] = { 1 };
    size_t used, pem_len;
    BIO *bio;
    char *pem;
    EVP_PKEY *key = rsa_key(&bio, &pem, &pem_len);

    (void)state;
    memcpy(keymsg + 1, pem, pem_len);
    assert_int_equal(sha2_full(&c, true, NULL, 0), CODEC_NEED_MORE);
    assert_int_equal(c.out_len, 5);
    assert_memory_equal(c.out + 3, "\x03\x02", 2); /* the key, please */
    in.n = 0;
    pkt(&in, 4, keymsg, 1 + pem_len);
    assert_int_equal(step(&c, &in, &used), CODEC_NEED_MORE);
    check_encrypted(&c, key, 5);
    in.n = 0;
    pkt(&in, 6, "\x00\x00\x00\x02\x00\x00\x00", 7);
    assert_int_equal(step(&c, &in, &used), CODEC_DONE);
    BIO_free(bio);
    EVP_PKEY_free(key);
}

/*
 * Over TCP with neither key option: refused with a line naming both, and
 * nothing written (no request for the key a fake server would answer with
 * its own, to decrypt the password with).
 */
static void test_sha2_full_refused(void **state)
{
    struct my c;

    (void)state;
    assert_int_equal(sha2_full(&c, false, NULL, 0), CODEC_ERROR);
    assert_int_equal(c.m.err, CODEC_ERR_MISMATCH);
    assert_int_equal(c.out_len, 0);
    assert_non_null(c.m.why);
    assert_non_null(strstr(c.m.why, "--server-public-key"));
    assert_non_null(strstr(c.m.why, "--get-server-public-key"));
    assert_null(strchr(c.m.why, '\n'));
}

/* Over TCP with --server-public-key: the password at once, encrypted with the user's key. */
static void test_sha2_full_own_key(void **state)
{
    struct my c;
    struct buf in = { 0 };
    size_t used, pem_len;
    BIO *bio;
    char *pem;
    EVP_PKEY *key = rsa_key(&bio, &pem, &pem_len);

    (void)state;
    assert_int_equal(sha2_full(&c, false, pem, pem_len), CODEC_NEED_MORE);
    check_encrypted(&c, key, 3);
    in.n = 0;
    pkt(&in, 4, "\x00\x00\x00\x02\x00\x00\x00", 7);
    assert_int_equal(step(&c, &in, &used), CODEC_DONE);
    BIO_free(bio);
    EVP_PKEY_free(key);
}

/* A session ready (DEPRECATE_EOF as deprecate says) with expect as --expect-body. */
static void ready(struct my *c, bool deprecate, const char *expect)
{
    struct buf in = { 0 };
    size_t used;

    my_new(c, NULL, false);
    c->opts.expect_body = expect;
    mysql_codec.init(c->st, &c->cfg);
    mysql_codec.setup(c->st, NULL, 0, &used, c->out, &c->out_len, &c->m);
    greeting(&in, CAPS_BASE | (deprecate ? CAP_DEPRECATE_EOF : 0), "mysql_native_password");
    step(c, &in, &used);
    in.n = 0;
    pkt(&in, 2, "\x00\x00\x00\x02\x00\x00\x00", 7);
    assert_int_equal(step(c, &in, &used), CODEC_DONE);
}

/* SELECT's result set: count, one column definition, (EOF), rows v..., EOF or OK. */
static void result(struct buf *o, bool deprecate, const char *const *rows, size_t nrows)
{
    uint8_t seq = 1, row[64];
    static const uint8_t coldef[] = "\x03"
                                    "def"
                                    "\x00\x00\x00\x01"
                                    "1"
                                    "\x00\x0c\x3f\x00\x01\x00"
                                    "\x00\x00\x08\x81\x00\x00\x00\x00";

    pkt(o, seq++, "\x01", 1);
    pkt(o, seq++, coldef, sizeof(coldef) - 1);
    if (!deprecate) pkt(o, seq++, "\xfe\x00\x00\x02\x00", 5);
    for (size_t i = 0; i < nrows; i++) {
        if (rows[i] == NULL) {
            pkt(o, seq++, "\xfb", 1);
            continue;
        }
        row[0] = (uint8_t)strlen(rows[i]);
        memcpy(row + 1, rows[i], strlen(rows[i]));
        pkt(o, seq++, row, 1 + strlen(rows[i]));
    }
    if (deprecate)
        pkt(o, seq++, "\xfe\x00\x00\x02\x00\x00\x00", 7);
    else
        pkt(o, seq++, "\xfe\x00\x00\x02\x00", 5);
}

static enum codec_rc query(struct my *c, const struct buf *in, size_t *used)
{
    uint8_t req[64];

    assert_int_equal(mysql_codec.encode(c->st, req, sizeof(req)), 4 + 1 + 8);
    assert_memory_equal(req, "\x09\x00\x00\x00\x03SELECT 1", 13);
    memset(&c->m, 0, sizeof(c->m));
    return mysql_codec.feed(c->st, in->b, in->n, used, &c->m);
}

static void test_result_sets(void **state)
{
    static const char *const one[] = { "1" };
    static const char *const two[] = { "2" };
    static const char *const null[] = { NULL };

    (void)state;
    for (int deprecate = 0; deprecate < 2; deprecate++) {
        struct my c;
        struct buf in = { 0 };
        size_t used;

        ready(&c, deprecate, "1");
        result(&in, deprecate, one, 1);
        assert_int_equal(query(&c, &in, &used), CODEC_DONE);
        assert_int_equal(used, in.n);
        assert_false(c.m.error_reply);

        in.n = 0;
        result(&in, deprecate, two, 1);
        assert_int_equal(query(&c, &in, &used), CODEC_ERROR);
        assert_int_equal(c.m.err, CODEC_ERR_BODY);

        ready(&c, deprecate, "1");
        in.n = 0;
        result(&in, deprecate, null, 1);
        assert_int_equal(query(&c, &in, &used), CODEC_ERROR);
        assert_int_equal(c.m.err, CODEC_ERR_BODY);

        ready(&c, deprecate, "1");
        in.n = 0;
        result(&in, deprecate, NULL, 0); /* no row */
        assert_int_equal(query(&c, &in, &used), CODEC_ERROR);
        assert_int_equal(c.m.err, CODEC_ERR_BODY);
    }
}

/* A state sending sel and upd in the period order (5 statement indexes). */
static void mix_new(struct my *c, const char *sel, const char *upd, const char *order)
{
    my_new(c, NULL, false);
    c->opts.sql.sqls[0] = c->opts.sql.text = sel;
    c->opts.sql.sqls[1] = upd;
    c->opts.sql.nsql = 2;
    memcpy(c->opts.sql.mix, order, 5);
    c->opts.sql.mix_len = 5;
    mysql_codec.init(c->st, &c->cfg);
}

/* --sql twice, 4:1: the statements go in the mix's order, each reply counted as its own. */
static void test_sql_mix(void **state)
{
    static const char *const one[] = { "1" };
    struct my c;
    struct buf in = { 0 };
    size_t used;

    (void)state;
    my_new(&c, NULL, false);
    sql_mix_opts(&c.opts.sql);
    mysql_codec.init(c.st, &c.cfg);
    assert_false(codec_fixed(&mysql_codec, &c.cfg)); /* each connection encodes its own */
    mysql_codec.setup(c.st, NULL, 0, &used, c.out, &c.out_len, &c.m);
    greeting(&in, CAPS_BASE, "mysql_native_password");
    step(&c, &in, &used);
    in.n = 0;
    pkt(&in, 2, "\x00\x00\x00\x02\x00\x00\x00", 7);
    assert_int_equal(step(&c, &in, &used), CODEC_DONE);
    assert_int_equal(mysql_codec.max_request(&c.cfg), 5 + strlen(SQL_MIX_UPDATE));
    for (unsigned i = 0; i < 7; i++) {
        sql_mix_encode_check(&mysql_codec, c.st, i, 5, 0);
        in.n = 0;
        if (sql_mix_kind(i) == 1)
            pkt(&in, 1, "\x00\x01\x00\x02\x00\x00\x00", 7); /* OK: one row changed */
        else
            result(&in, false, one, 1);
        memset(&c.m, 0, sizeof(c.m));
        assert_int_equal(mysql_codec.feed(c.st, in.b, in.n, &used, &c.m), CODEC_DONE);
        assert_int_equal(c.m.kind, sql_mix_kind(i));
    }
}

/*
 * A mix whose statements carry {id:LO-HI}: each COM_QUERY's length is its
 * own, its id within its statement's range, every id drawn (400 draws of 1
 * to 4: each about 80 times, none below 40; 100 of 10 to 12).
 */
static void test_sql_random_id(void **state)
{
    static const char *const sel = "SELECT c FROM t WHERE id = {id:1-4}",
                             *const upd = "UPDATE t SET k = k + 1 WHERE id = {id:10-12}";
    unsigned seen[13] = { 0 };
    struct my c;
    uint8_t req[128];

    (void)state;
    mix_new(&c, sel, upd, "\0\0\0\0\1");
    assert_false(codec_fixed(&mysql_codec, &c.cfg));
    for (unsigned i = 0; i < 500; i++) {
        size_t n = mysql_codec.encode(c.st, req, sizeof(req));
        bool is_upd = i % 5 == 4;
        const char *want = is_upd ? upd : sel;
        size_t pre = strcspn(want, "{");
        char num[8];
        assert_true(n > 5 && n <= mysql_codec.max_request(&c.cfg));
        assert_int_equal(req[0] | req[1] << 8 | req[2] << 16, n - 4);
        assert_int_equal(req[4], 0x03);
        assert_memory_equal(req + 5, want, pre);
        assert_true(n - 5 - pre > 0 && n - 5 - pre < sizeof(num));
        memcpy(num, req + 5 + pre, n - 5 - pre);
        num[n - 5 - pre] = '\0';
        assert_int_equal(strspn(num, "0123456789"), strlen(num));
        unsigned long id = strtoul(num, NULL, 10);
        assert_true(is_upd ? id >= 10 && id <= 12 : id >= 1 && id <= 4);
        seen[id]++;
    }
    for (unsigned id = 1; id <= 4; id++)
        assert_true(seen[id] >= 40);
    for (unsigned id = 10; id <= 12; id++)
        assert_true(seen[id] >= 10);
}

static void test_ok_err_and_split(void **state)
{
    static const char *const rows[] = { "1", "22", NULL };
    struct buf in = { 0 };

    (void)state;
    result(&in, true, rows, 3);
    for (size_t cut = 0; cut <= in.n; cut++) {
        struct my c;
        size_t used = 0, u2 = 0;
        enum codec_rc rc;

        ready(&c, true, "1");
        rc = query(&c, &(struct buf){ 0 }, &used);
        assert_int_equal(rc, CODEC_NEED_MORE);
        memset(&c.m, 0, sizeof(c.m));
        rc = mysql_codec.feed(c.st, in.b, cut, &used, &c.m);
        if (cut < in.n) {
            assert_int_equal(rc, CODEC_NEED_MORE);
            assert_int_equal(used, cut);
            rc = mysql_codec.feed(c.st, in.b + cut, in.n - cut, &u2, &c.m);
        }
        assert_int_equal(rc, CODEC_DONE);
        assert_int_equal(used + u2, in.n);
    }
    {
        struct my c;
        size_t used;

        ready(&c, false, NULL);
        in.n = 0;
        pkt(&in, 1, "\x00\x00\x00\x02\x00\x00\x00", 7);
        assert_int_equal(query(&c, &in, &used), CODEC_DONE);
        in.n = 0;
        pkt(&in, 1, "\xff\x28\x04#42000syntax", 15);
        assert_int_equal(query(&c, &in, &used), CODEC_DONE);
        assert_true(c.m.error_reply);
        in.n = 0;
        pkt(&in, 2, "\x00\x00\x00\x02\x00\x00\x00", 7); /* out of sequence */
        assert_int_equal(query(&c, &in, &used), CODEC_ERROR);
        assert_int_equal(c.m.err, CODEC_ERR_MISMATCH);

        ready(&c, false, NULL);
        in.n = 0;
        pkt(&in, 1, "\xfb/etc/passwd", 12); /* LOCAL INFILE */
        assert_int_equal(query(&c, &in, &used), CODEC_ERROR);
        assert_int_equal(c.m.err, CODEC_ERR_MISMATCH);
        assert_int_equal(mysql_codec.eof(c.st, &c.m), CODEC_ERROR);
    }
}

/*
 * The codec is fixed: the engine encodes one request on a fresh state and
 * never calls encode on a connection's. So the request is the same bytes from
 * a fresh state as from one after its set-up and replies, and replies parse
 * one after another with no encode between: the sequence restarts at 1 when
 * the set-up ends and after each reply, whatever that reply was.
 */
static void test_fixed_request(void **state)
{
    static const char *const one[] = { "1" };
    struct my fresh, c;
    struct buf in = { 0 }, err = { 0 };
    uint8_t a[64], b[64];
    size_t used;

    (void)state;
    assert_true(mysql_codec.fixed);
    my_new(&fresh, NULL, false);
    assert_int_equal(mysql_codec.encode(fresh.st, a, sizeof(a)), 13);
    assert_memory_equal(a, "\x09\x00\x00\x00\x03SELECT 1", 13);

    ready(&c, true, "1");
    result(&in, true, one, 1);
    pkt(&err, 1, "\xff\x28\x04#42000syntax", 15);
    for (int reply = 0; reply < 3; reply++) {
        const struct buf *r = reply == 1 ? &err : &in;

        memset(&c.m, 0, sizeof(c.m));
        assert_int_equal(mysql_codec.feed(c.st, r->b, r->n, &used, &c.m), CODEC_DONE);
        assert_int_equal(used, r->n);
        assert_int_equal(c.m.error_reply, reply == 1);
    }
    assert_int_equal(mysql_codec.encode(c.st, b, sizeof(b)), 13);
    assert_memory_equal(b, a, 13);
}

static void test_ping_and_bye(void **state)
{
    struct my c;
    uint8_t out[16];

    (void)state;
    my_new(&c, NULL, false);
    c.opts.ping = true;
    mysql_codec.init(c.st, &c.cfg);
    assert_int_equal(mysql_codec.encode(c.st, out, sizeof(out)), 5);
    assert_memory_equal(out, "\x01\x00\x00\x00\x0e", 5);
    assert_int_equal(mysql_codec.max_request(&c.cfg), 5);
    assert_int_equal(mysql_codec.bye(c.st, out, sizeof(out)), 5);
    assert_memory_equal(out, "\x01\x00\x00\x00\x01", 5);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_native),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_switch_sha2_fast),
        cmocka_unit_test(test_sha2_full_local),
        cmocka_unit_test(test_sha2_full_rsa),
        cmocka_unit_test(test_sha2_full_refused),
        cmocka_unit_test(test_sha2_full_own_key),
        cmocka_unit_test(test_result_sets),
        cmocka_unit_test(test_sql_mix),
        cmocka_unit_test(test_sql_random_id),
        cmocka_unit_test(test_ok_err_and_split),
        cmocka_unit_test(test_fixed_request),
        cmocka_unit_test(test_ping_and_bye),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
