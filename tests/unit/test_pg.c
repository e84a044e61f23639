/*
 * test_pg: the PostgreSQL codec (proto/pg.c) on scripted server bytes.
 * Set-up: the StartupMessage, trust, MD5 (against a value computed by an
 * independent implementation, Python's hashlib), SCRAM-SHA-256 (the proof is
 * verified the way a server does, with the stored and server keys of RFC
 * 7677's example password and salt, computed independently), a refusal and
 * a forged server signature; a server asking for the password in clear or
 * for MD5, or for no password, refused with a line saying so and nothing
 * written unless --auth-method names that way; SCRAM iterations past
 * PG_SCRAM_ITER_MAX refused before any hashing. Replies: the simple and the extended protocol's
 * requests, rows, errors, --expect-body, framing errors, and the same
 * verdicts however the bytes are split.
 */
/* cmocka.h needs these four first, in this order */
/* clang-format off */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
/* clang-format on */

#include <errno.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/pg.h"
#include "sql_mix.h"

/* RFC 7677's example: password "pencil", this salt, 4096 iterations. */
#define RFC_SALT "W22ZaJ0SNY7soEsUEjb6gQ=="
static const char rfc_stored_hex[] =
    "586e5df283e6dceb5c3e791d8b8528ec191e664045ce971792e2e6b5bb13e2a6";
static const char rfc_server_hex[] =
    "c1f3cbc1c13a9d35a14c0990eed97629ea225863e566a4314ab99f3f00e5d9d5";

struct buf {
    uint8_t b[4096];
    size_t n;
};

/* Appends a backend message: type, length, body. */
static void msg(struct buf *o, char type, const void *body, size_t len)
{
    uint32_t l = (uint32_t)len + 4;

    o->b[o->n++] = (uint8_t)type;
    o->b[o->n++] = (uint8_t)(l >> 24);
    o->b[o->n++] = (uint8_t)(l >> 16);
    o->b[o->n++] = (uint8_t)(l >> 8);
    o->b[o->n++] = (uint8_t)l;
    if (len > 0) memcpy(o->b + o->n, body, len);
    o->n += len;
}

static void auth(struct buf *o, uint32_t code, const void *rest, size_t len)
{
    uint8_t body[1024] = { (uint8_t)(code >> 24), (uint8_t)(code >> 16), (uint8_t)(code >> 8),
                           (uint8_t)code };

    if (len > 0) memcpy(body + 4, rest, len);
    msg(o, 'R', body, 4 + len);
}

static void ready(struct buf *o)
{
    msg(o, 'Z', "I", 1);
}

struct pg {
    uint8_t st[8192];
    struct pg_opts opts;
    struct codec_cfg cfg;
    uint8_t out[PG_SETUP_CAP];
    size_t out_len;
    struct codec_msg m;
};

/* A codec that allows the ways `methods` says (enum codec_auth; 0: the default). */
static void pg_new_auth(struct pg *p, const char *password, unsigned methods)
{
    memset(p, 0, sizeof(*p));
    assert_true(pg_codec.state_size <= sizeof(p->st));
    p->opts.password = password;
    p->opts.auth_methods = methods;
    p->cfg.opts = &p->opts;
    pg_codec.init(p->st, &p->cfg);
}

static void pg_new(struct pg *p, const char *password)
{
    pg_new_auth(p, password, 0);
}

/* Runs a set-up step; returns its verdict, *used in p->m.err_off's place is checked by callers. */
static enum codec_rc step(struct pg *p, const struct buf *in, size_t *used)
{
    memset(&p->m, 0, sizeof(p->m));
    return pg_codec.setup(p->st, in != NULL ? in->b : NULL, in != NULL ? in->n : 0, used, p->out,
                          &p->out_len, &p->m);
}

static void test_startup(void **state)
{
    struct pg p;
    size_t used;
    static const char want[] = "user\0postgres\0database\0postgres\0application_name\0hopbench\0";

    (void)state;
    pg_new(&p, NULL);
    assert_int_equal(step(&p, NULL, &used), CODEC_NEED_MORE);
    assert_int_equal(p.out_len, 8 + sizeof(want));
    assert_int_equal(p.out[3], p.out_len); /* the length, big-endian (small here) */
    assert_memory_equal(p.out + 4, "\x00\x03\x00\x00", 4);
    assert_memory_equal(p.out + 8, want, sizeof(want));
}

/* trust: AuthenticationOk, parameters, a key, ReadyForQuery; split anywhere alike. */
static void test_trust_split(void **state)
{
    struct buf in = { 0 };
    uint8_t key[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };

    (void)state;
    auth(&in, 0, NULL, 0);
    msg(&in, 'S', "server_version\00015.18", 20);
    msg(&in, 'K', key, 8);
    msg(&in, 'N', "SWARNING\0\0", 10);
    ready(&in);
    for (size_t cut = 0; cut <= in.n; cut++) {
        struct pg p;
        struct buf a = { 0 }, b = { 0 };
        size_t used, ua = 0, ub = 0;
        enum codec_rc rc;

        pg_new(&p, NULL);
        step(&p, NULL, &used);
        memcpy(a.b, in.b, cut);
        a.n = cut;
        memcpy(b.b, in.b + cut, in.n - cut);
        b.n = in.n - cut;
        rc = cut > 0 ? step(&p, &a, &ua) : CODEC_NEED_MORE;
        assert_int_equal(rc, cut == in.n ? CODEC_DONE : CODEC_NEED_MORE);
        if (cut < in.n) assert_int_equal(step(&p, &b, &ub), CODEC_DONE);
        assert_int_equal(ua + ub, in.n);
        assert_int_equal(p.out_len, 0);
    }
}

static void test_md5(void **state)
{
    struct pg p;
    struct buf in = { 0 };
    size_t used;
    static const char want[] = "md5bb41a296aab6baccb36ff243a562abff"; /* Python's hashlib */

    (void)state;
    pg_new_auth(&p, "secret", CODEC_AUTH_MD5);
    step(&p, NULL, &used);
    auth(&in, 5, "\x01\x02\x03\x04", 4);
    assert_int_equal(step(&p, &in, &used), CODEC_NEED_MORE);
    assert_int_equal(used, in.n);
    assert_int_equal(p.out[0], 'p');
    assert_int_equal(p.out_len, 5 + sizeof(want));
    assert_memory_equal(p.out + 5, want, sizeof(want));
}

/* The server asks for a password and none was given: refused, as an error reply. */
static void test_no_password(void **state)
{
    struct pg p;
    struct buf in = { 0 };
    size_t used;

    (void)state;
    pg_new(&p, NULL);
    step(&p, NULL, &used);
    auth(&in, 10, "SCRAM-SHA-256\0", 15);
    assert_int_equal(step(&p, &in, &used), CODEC_ERROR);
    assert_true(p.m.error_reply);
    assert_null(p.m.why);
}

/*
 * A server's request (code, its rest) with password "hunter2" and the ways
 * `methods` allows: refused with a line naming `hint` and nothing written,
 * or, allowed, answered.
 */
static void downgrade(unsigned methods, uint32_t code, const char *rest, size_t len,
                      const char *hint, bool allowed)
{
    struct pg p;
    struct buf in = { 0 };
    size_t used;

    pg_new_auth(&p, "hunter2", methods);
    step(&p, NULL, &used);
    auth(&in, code, rest, len);
    if (code == 0) ready(&in);
    if (allowed) {
        assert_int_equal(step(&p, &in, &used), code == 0 ? CODEC_DONE : CODEC_NEED_MORE);
        assert_null(p.m.why);
        assert_true(code == 0 || (p.out_len > 5 && p.out[0] == 'p'));
        return;
    }
    assert_int_equal(step(&p, &in, &used), CODEC_ERROR);
    assert_int_equal(p.m.err, CODEC_ERR_MISMATCH);
    assert_false(p.m.error_reply);
    assert_int_equal(p.out_len, 0);
    assert_non_null(p.m.why);
    assert_null(strchr(p.m.why, '\n'));
    if (strstr(p.m.why, hint) == NULL) fail_msg("'%s' does not name '%s'", p.m.why, hint);
}

/*
 * A server that asks for the password in clear or for MD5 (which it could
 * crack offline) gets nothing unless --auth-method names that way; one that
 * asks for none is refused when --auth-method leaves none out, and SCRAM
 * when it leaves SCRAM out.
 */
static void test_downgrade_refused(void **state)
{
    static const char salt[] = "\x01\x02\x03\x04";
    static const char sasl[] = "SCRAM-SHA-256\0";

    (void)state;
    downgrade(0, 3, NULL, 0, "--auth-method password", false);
    downgrade(0, 5, salt, 4, "--auth-method md5", false);
    downgrade(CODEC_AUTH_SCRAM | CODEC_AUTH_MD5, 3, NULL, 0, "--auth-method password", false);
    downgrade(CODEC_AUTH_SCRAM, 0, NULL, 0, "none", false);
    downgrade(CODEC_AUTH_MD5, 10, sasl, sizeof(sasl), "SCRAM-SHA-256", false);
    /* named: answered */
    downgrade(CODEC_AUTH_PASSWORD, 3, NULL, 0, NULL, true);
    downgrade(CODEC_AUTH_MD5 | CODEC_AUTH_SCRAM, 5, salt, 4, NULL, true);
    downgrade(0, 0, NULL, 0, NULL, true);
    downgrade(0, 10, sasl, sizeof(sasl), NULL, true);
}

/* Cleartext when allowed: the password itself, in a PasswordMessage. */
static void test_cleartext_allowed(void **state)
{
    struct pg p;
    struct buf in = { 0 };
    size_t used;

    (void)state;
    pg_new_auth(&p, "hunter2", CODEC_AUTH_PASSWORD);
    step(&p, NULL, &used);
    auth(&in, 3, NULL, 0);
    assert_int_equal(step(&p, &in, &used), CODEC_NEED_MORE);
    assert_int_equal(p.out_len, 5 + 8);
    assert_memory_equal(p.out, "p\0\0\0\x0chunter2", 13);
}

/*
 * SCRAM's iteration count: at most PG_SCRAM_ITER_MAX is hashed (a proof goes
 * out), one more is refused at once with a line saying so, before PBKDF2
 * runs (10,000,000 would hold a load thread for seconds).
 */
static void test_scram_iterations(void **state)
{
    static const unsigned long counts[] = { PG_SCRAM_ITER_MAX, PG_SCRAM_ITER_MAX + 1, 10000000 };

    (void)state;
    for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
        struct pg p;
        struct buf in = { 0 };
        char first_bare[128], server_first[256];
        size_t used;
        bool within = counts[i] <= PG_SCRAM_ITER_MAX;

        pg_new(&p, "pencil");
        step(&p, NULL, &used);
        auth(&in, 10, "SCRAM-SHA-256\0", 15);
        assert_int_equal(step(&p, &in, &used), CODEC_NEED_MORE);
        snprintf(first_bare, sizeof(first_bare), "%.*s", (int)(p.out_len - 5 - 14 - 4 - 3),
                 (const char *)p.out + 5 + 14 + 4 + 3);
        snprintf(server_first, sizeof(server_first), "r=%ssrvNonce,s=%s,i=%lu", first_bare + 5,
                 RFC_SALT, counts[i]);
        in.n = 0;
        auth(&in, 11, server_first, strlen(server_first));
        assert_int_equal(step(&p, &in, &used), within ? CODEC_NEED_MORE : CODEC_ERROR);
        if (within) {
            assert_non_null(strstr((const char *)p.out + 5, ",p="));
            continue;
        }
        assert_int_equal(p.out_len, 0);
        assert_non_null(p.m.why);
        assert_non_null(strstr(p.m.why, "SCRAM iterations"));
    }
}

static void unhex(uint8_t *out, const char *h, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned v;
        sscanf(h + 2 * i, "%2x", &v);
        out[i] = (uint8_t)v;
    }
}

static void hmac256(const uint8_t *key, const void *data, size_t n, uint8_t out[32])
{
    unsigned len = 32;

    assert_non_null(HMAC(EVP_sha256(), key, 32, data, n, out, &len));
}

/*
 * SCRAM through to ReadyForQuery. The client's proof is checked as a server
 * checks it: ClientKey = proof XOR HMAC(StoredKey, AuthMessage) must hash
 * to StoredKey. forge: the server's final signature is one bit off.
 */
static void scram(bool forge)
{
    struct pg p;
    struct buf in = { 0 };
    size_t used;
    char first_bare[128], server_first[256], final_wo_proof[256], auth_msg[700];
    const char *client_first, *final, *proof;
    uint8_t stored[32], server_key[32], sig[32], client_key[32], check[32], proof_raw[48];
    uint8_t server_sig[32];
    char v[80] = "v=";
    int n;

    pg_new(&p, "pencil");
    step(&p, NULL, &used);
    auth(&in, 10, "SCRAM-SHA-256-PLUS\0SCRAM-SHA-256\0", 34);
    assert_int_equal(step(&p, &in, &used), CODEC_NEED_MORE);
    assert_int_equal(p.out[0], 'p');
    assert_string_equal((const char *)p.out + 5, "SCRAM-SHA-256");
    client_first = (const char *)p.out + 5 + 14 + 4;
    assert_memory_equal(client_first, "n,,n=,r=", 8);
    n = snprintf(first_bare, sizeof(first_bare), "%.*s", (int)(p.out_len - 5 - 14 - 4 - 3),
                 client_first + 3);
    assert_true(n > 5);
    snprintf(server_first, sizeof(server_first), "r=%s%s,s=%s,i=4096", first_bare + 5, "srvNonce",
             RFC_SALT);

    in.n = 0;
    auth(&in, 11, server_first, strlen(server_first));
    assert_int_equal(step(&p, &in, &used), CODEC_NEED_MORE);
    assert_int_equal(p.out[0], 'p');
    final = (const char *)p.out + 5;
    proof = strstr(final, ",p=");
    assert_non_null(proof);
    snprintf(final_wo_proof, sizeof(final_wo_proof), "%.*s", (int)(proof - final), final);
    assert_memory_equal(final_wo_proof, "c=biws,r=", 9);
    snprintf(auth_msg, sizeof(auth_msg), "%s,%s,%s", first_bare, server_first, final_wo_proof);
    unhex(stored, rfc_stored_hex, 32);
    unhex(server_key, rfc_server_hex, 32);
    hmac256(stored, auth_msg, strlen(auth_msg), sig);
    assert_int_equal(EVP_DecodeBlock(proof_raw, (const unsigned char *)proof + 3,
                                     (int)(p.out_len - 5 - (size_t)(proof + 3 - final))),
                     33); /* 44 characters, one '=' */
    for (int i = 0; i < 32; i++)
        client_key[i] = proof_raw[i] ^ sig[i];
    EVP_Digest(client_key, 32, check, NULL, EVP_sha256(), NULL);
    assert_memory_equal(check, stored, 32);

    hmac256(server_key, auth_msg, strlen(auth_msg), server_sig);
    if (forge) server_sig[0] ^= 1;
    EVP_EncodeBlock((unsigned char *)v + 2, server_sig, 32);
    in.n = 0;
    auth(&in, 12, v, strlen(v));
    if (forge) {
        assert_int_equal(step(&p, &in, &used), CODEC_ERROR);
        assert_int_equal(p.m.err, CODEC_ERR_MISMATCH);
        return;
    }
    assert_int_equal(step(&p, &in, &used), CODEC_NEED_MORE);
    in.n = 0;
    auth(&in, 0, NULL, 0);
    ready(&in);
    assert_int_equal(step(&p, &in, &used), CODEC_DONE);
}

static void test_scram(void **state)
{
    (void)state;
    scram(false);
}

static void test_scram_forged_server(void **state)
{
    (void)state;
    scram(true);
}

/* An ErrorResponse during set-up (no such database): an error reply. */
static void test_setup_error(void **state)
{
    struct pg p;
    struct buf in = { 0 };
    size_t used;

    (void)state;
    pg_new(&p, NULL);
    step(&p, NULL, &used);
    msg(&in, 'E', "SFATAL\0C3D000\0Mdatabase does not exist\0\0", 41);
    assert_int_equal(step(&p, &in, &used), CODEC_ERROR);
    assert_true(p.m.error_reply);
}

/* A set-up whose session is ready, for reply tests. */
static void ready_pg(struct pg *p, const char *expect, bool extended)
{
    struct buf in = { 0 };
    size_t used;

    pg_new(p, NULL);
    p->opts.expect_body = expect;
    p->opts.extended = extended;
    pg_codec.init(p->st, &p->cfg);
    step(p, NULL, &used);
    auth(&in, 0, NULL, 0);
    ready(&in);
    assert_int_equal(step(p, &in, &used), CODEC_DONE);
}

/* A SELECT's reply: RowDescription, one DataRow with value v (NULL: a NULL column),
 * CommandComplete, ReadyForQuery. */
static void select_reply(struct buf *o, const char *v)
{
    uint8_t row[64] = { 0, 1 };
    size_t vn = v != NULL ? strlen(v) : 0;

    msg(o, 'T', "\0\1?column?\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 28);
    if (v == NULL) {
        memcpy(row + 2, "\xff\xff\xff\xff", 4);
    } else {
        row[5] = (uint8_t)vn;
        memcpy(row + 6, v, vn);
    }
    msg(o, 'D', row, 6 + vn);
    msg(o, 'C', "SELECT 1\0", 9);
    ready(o);
}

static enum codec_rc feed(struct pg *p, const struct buf *in, size_t *used)
{
    memset(&p->m, 0, sizeof(p->m));
    return pg_codec.feed(p->st, in->b, in->n, used, &p->m);
}

static void test_simple_query(void **state)
{
    struct pg p;
    uint8_t req[64];
    size_t n;

    (void)state;
    ready_pg(&p, NULL, false);
    n = pg_codec.encode(p.st, req, sizeof(req));
    assert_int_equal(n, 5 + 9);
    assert_memory_equal(req, "Q\0\0\0\x0dSELECT 1\0", 14);
    assert_int_equal(n, pg_codec.max_request(&p.cfg));
    assert_int_equal(pg_codec.encode(p.st, req, n - 1), 0);
}

static void test_extended_query(void **state)
{
    struct pg p;
    uint8_t req[128];
    size_t n, off = 0;
    const char types[] = "PBES";

    (void)state;
    ready_pg(&p, NULL, true);
    n = pg_codec.encode(p.st, req, sizeof(req));
    assert_int_equal(n, pg_codec.max_request(&p.cfg));
    for (int i = 0; i < 4; i++) {
        uint32_t len = (uint32_t)req[off + 1] << 24 | (uint32_t)req[off + 2] << 16 |
                       (uint32_t)req[off + 3] << 8 | req[off + 4];
        assert_int_equal(req[off], types[i]);
        off += 1 + len;
    }
    assert_int_equal(off, n);
}

/* --sql twice, 4:1: the statements go in the mix's order, each reply counted as its own. */
static void test_sql_mix(void **state)
{
    struct pg p;
    struct buf in = { 0 };
    uint8_t req[128];
    size_t used;

    (void)state;
    pg_new(&p, NULL);
    sql_mix_opts(&p.opts.sql);
    pg_codec.init(p.st, &p.cfg);
    assert_false(codec_fixed(&pg_codec, &p.cfg)); /* each connection encodes its own */
    step(&p, NULL, &used);
    auth(&in, 0, NULL, 0);
    ready(&in);
    assert_int_equal(step(&p, &in, &used), CODEC_DONE);
    assert_int_equal(pg_codec.max_request(&p.cfg), 5 + strlen(SQL_MIX_UPDATE) + 1);
    for (unsigned i = 0; i < 7; i++)
        sql_mix_encode_check(&pg_codec, p.st, i, 5, 1);
    for (unsigned i = 0; i < 7; i++) {
        in.n = 0;
        select_reply(&in, "1");
        assert_int_equal(feed(&p, &in, &used), CODEC_DONE);
        assert_int_equal(p.m.kind, sql_mix_kind(i));
    }
    assert_string_equal(pg_codec.kind_names[1], "sql2");
    /* requests 7 (U) and 8 (S) sent, then a reconnect: the two are sent again, in order */
    pg_codec.encode(p.st, req, sizeof(req));
    pg_codec.encode(p.st, req, sizeof(req));
    pg_codec.reset(p.st);
    in.n = 0;
    select_reply(&in, "1");
    assert_int_equal(feed(&p, &in, &used), CODEC_DONE);
    assert_int_equal(p.m.kind, 1);
    /* then an error: 8 is dropped, and 9 .. 12 (S S S U) are answered as themselves */
    pg_codec.reset(p.st);
    for (unsigned i = 9; i < 13; i++)
        pg_codec.encode(p.st, req, sizeof(req));
    for (unsigned i = 9; i < 13; i++) {
        in.n = 0;
        select_reply(&in, "1");
        assert_int_equal(feed(&p, &in, &used), CODEC_DONE);
        assert_int_equal(p.m.kind, sql_mix_kind(i));
    }
}

/* The id in a request "PREFIX<id>SUFFIX\0" at body (after the 5-byte header). */
static unsigned long id_of(const uint8_t *body, size_t n, const char *prefix, const char *suffix)
{
    size_t pre = strlen(prefix), suf = strlen(suffix);
    char num[32];

    assert_true(n > pre + suf && n - pre - suf < sizeof(num));
    assert_memory_equal(body, prefix, pre);
    assert_memory_equal(body + n - suf, suffix, suf);
    memcpy(num, body + pre, n - pre - suf);
    num[n - pre - suf] = '\0';
    assert_int_equal(strspn(num, "0123456789"), strlen(num));
    return strtoul(num, NULL, 10);
}

/*
 * {id:3-9}: each request carries an id of 3 to 9, every one of them drawn
 * (700 draws, uniform: each about 100 times, none below 50), in the simple
 * and the extended protocol; a second connection draws other ids; the
 * request is no longer fixed.
 */
static void test_sql_random_id(void **state)
{
    static const char *const pre = "SELECT c FROM t WHERE id = ", *const suf = " AND k > 0";

    (void)state;
    for (int ext = 0; ext < 2; ext++) {
        unsigned seen[10] = { 0 }, same = 0;
        struct pg p, q;
        uint8_t req[256], other[256];

        ready_pg(&p, NULL, ext);
        ready_pg(&q, NULL, ext);
        p.opts.sql.text = q.opts.sql.text = "SELECT c FROM t WHERE id = {id:3-9} AND k > 0";
        q.cfg.conn_index = 1;
        pg_codec.init(p.st, &p.cfg);
        pg_codec.init(q.st, &q.cfg);
        assert_false(codec_fixed(&pg_codec, &p.cfg));
        for (unsigned i = 0; i < 700; i++) {
            size_t n = pg_codec.encode(p.st, req, sizeof(req));
            size_t m = pg_codec.encode(q.st, other, sizeof(other));
            size_t at = ext ? 6 : 5; /* Parse's statement name "" comes first */
            uint32_t len =
                (uint32_t)req[1] << 24 | (uint32_t)req[2] << 16 | (uint32_t)req[3] << 8 | req[4];
            assert_true(n > 0 && n <= pg_codec.max_request(&p.cfg));
            size_t body = ext ? len - 4 - 1 - 1 - 2 : n - 5 - 1; /* the statement without NUL */
            assert_int_equal(req[at + body], 0);
            if (!ext) assert_int_equal(len + 1, n);
            unsigned long id = id_of(req + at, body, pre, suf);
            assert_true(id >= 3 && id <= 9);
            seen[id]++;
            same += m == n && memcmp(req, other, n) == 0;
        }
        for (unsigned id = 3; id <= 9; id++)
            assert_true(seen[id] >= 50);
        assert_true(same < 350); /* independent draws agree 1 time in 7 */
    }
}

/* {id:LO-HI} written wrong, or twice, is refused; none is a statement sent as written. */
static void test_sql_id_parse(void **state)
{
    static const char *const bad[] = { "{id:5-3}",          "{id:1-}",
                                       "{id:-2}",           "{id:1-2",
                                       "{id:1-2} {id:1-2}", "{id:1-1234567890123456789}",
                                       "{id:a-b}" };
    struct codec_sql_id id;

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_int_equal(codec_sql_id_parse(bad[i], &id), -EINVAL);
    assert_int_equal(codec_sql_id_parse("SELECT {id} {ID:1-2}", &id), 0);
    assert_int_equal(id.len, 0);
    assert_int_equal(codec_sql_id_parse("x {id:7-7} y", &id), 0);
    assert_int_equal(id.at, 2);
    assert_int_equal(id.len, 8);
    assert_int_equal(id.lo, 7);
    assert_int_equal(id.span, 1);
}

/*
 * The codec is fixed: the engine encodes one request on a fresh state and
 * sends those bytes on every connection, for every op. So the request must be
 * what the protocol says, byte for byte (written out here by hand), and a
 * connection's state after its set-up and replies must encode the very same
 * bytes; and replies must parse one after another with no encode between.
 */
static void test_fixed_request(void **state)
{
    static const uint8_t simple[] = "Q\0\0\0\x0dSELECT 1\0";
    static const uint8_t extended[] = "P\0\0\0\x10\0SELECT 1\0\0\0" /* Parse: "", sql, 0 types */
                                      "B\0\0\0\x0c\0\0\0\0\0\0\0\0" /* Bind: "", "", no formats */
                                      "E\0\0\0\x09\0\0\0\0\0"       /* Execute: "", all rows */
                                      "S\0\0\0\x04";                /* Sync */

    (void)state;
    assert_true(pg_codec.fixed);
    for (int ext = 0; ext < 2; ext++) {
        const uint8_t *want = ext ? extended : simple;
        size_t want_len = (ext ? sizeof(extended) : sizeof(simple)) - 1;
        struct pg fresh, p;
        struct buf in = { 0 };
        uint8_t a[128], b[128];
        size_t used;

        pg_new(&fresh, NULL);
        fresh.opts.extended = ext;
        pg_codec.init(fresh.st, &fresh.cfg);
        assert_int_equal(pg_codec.encode(fresh.st, a, sizeof(a)), want_len);
        assert_memory_equal(a, want, want_len);

        ready_pg(&p, "1", ext);
        if (ext) {
            msg(&in, '1', NULL, 0);
            msg(&in, '2', NULL, 0);
        }
        select_reply(&in, "1");
        for (int reply = 0; reply < 2; reply++) {
            assert_int_equal(feed(&p, &in, &used), CODEC_DONE);
            assert_int_equal(used, in.n);
        }
        assert_int_equal(pg_codec.encode(p.st, b, sizeof(b)), want_len);
        assert_memory_equal(b, want, want_len);
    }
}

/* Two pipelined replies (one with an error) split at every offset: the same two verdicts. */
static void test_replies_split(void **state)
{
    struct buf in = { 0 };

    (void)state;
    msg(&in, '1', NULL, 0);
    msg(&in, '2', NULL, 0);
    select_reply(&in, "1");
    msg(&in, 'E', "SERROR\0C42601\0\0", 15);
    ready(&in);
    for (size_t cut = 0; cut <= in.n; cut++) {
        struct pg p;
        size_t off = 0, done = 0;
        bool errs[2] = { false, false };

        ready_pg(&p, "1", true);
        for (int part = 0; part < 2; part++) {
            size_t end = part == 0 ? cut : in.n;

            while (off < end) {
                size_t used = 0;
                enum codec_rc rc;

                memset(&p.m, 0, sizeof(p.m));
                rc = pg_codec.feed(p.st, in.b + off, end - off, &used, &p.m);
                assert_int_not_equal(rc, CODEC_ERROR);
                off += used;
                if (rc == CODEC_DONE) errs[done++] = p.m.error_reply;
                if (rc == CODEC_NEED_MORE) assert_int_equal(off, end);
            }
        }
        assert_int_equal(done, 2);
        assert_false(errs[0]);
        assert_true(errs[1]);
    }
}

static void test_expect_body(void **state)
{
    struct pg p;
    struct buf in = { 0 };
    size_t used;

    (void)state;
    ready_pg(&p, "1", false);
    select_reply(&in, "2");
    assert_int_equal(feed(&p, &in, &used), CODEC_ERROR);
    assert_int_equal(p.m.err, CODEC_ERR_BODY);

    ready_pg(&p, "1", false);
    in.n = 0;
    select_reply(&in, NULL);
    assert_int_equal(feed(&p, &in, &used), CODEC_ERROR);
    assert_int_equal(p.m.err, CODEC_ERR_BODY);

    ready_pg(&p, "1", false);
    in.n = 0;
    select_reply(&in, "11");
    assert_int_equal(feed(&p, &in, &used), CODEC_ERROR);

    /* no row at all */
    ready_pg(&p, "1", false);
    in.n = 0;
    msg(&in, 'C', "SELECT 0\0", 9);
    ready(&in);
    assert_int_equal(feed(&p, &in, &used), CODEC_ERROR);
    assert_int_equal(p.m.err, CODEC_ERR_BODY);
}

static void test_framing_errors(void **state)
{
    struct pg p;
    struct buf in = { 0 };
    size_t used;

    (void)state;
    ready_pg(&p, NULL, false);
    msg(&in, 'Z', "II", 2); /* ReadyForQuery is one byte */
    assert_int_equal(feed(&p, &in, &used), CODEC_ERROR);
    assert_int_equal(p.m.err, CODEC_ERR_MISMATCH);

    ready_pg(&p, NULL, false);
    in.n = 0;
    msg(&in, 'x', "", 0); /* no such message */
    assert_int_equal(feed(&p, &in, &used), CODEC_ERROR);
    assert_int_equal(p.m.err, CODEC_ERR_MISMATCH);

    ready_pg(&p, NULL, false);
    memcpy(in.b, "D\0\0\0\3", 5); /* a length below 4 */
    in.n = 5;
    assert_int_equal(feed(&p, &in, &used), CODEC_ERROR);
    assert_int_equal(p.m.err, CODEC_ERR_MISMATCH);

    ready_pg(&p, NULL, false);
    memcpy(in.b, "D\x40\0\0\5", 5); /* above PG_MAX_MESSAGE */
    assert_int_equal(feed(&p, &in, &used), CODEC_ERROR);
    assert_int_equal(p.m.err, CODEC_ERR_TOO_BIG);

    assert_int_equal(pg_codec.eof(p.st, &p.m), CODEC_ERROR);
}

static void test_bye(void **state)
{
    struct pg p;
    uint8_t out[8];

    (void)state;
    pg_new(&p, NULL);
    assert_int_equal(pg_codec.bye(p.st, out, sizeof(out)), 5);
    assert_memory_equal(out, "X\0\0\0\4", 5);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_startup),
        cmocka_unit_test(test_trust_split),
        cmocka_unit_test(test_md5),
        cmocka_unit_test(test_no_password),
        cmocka_unit_test(test_downgrade_refused),
        cmocka_unit_test(test_cleartext_allowed),
        cmocka_unit_test(test_scram_iterations),
        cmocka_unit_test(test_scram),
        cmocka_unit_test(test_scram_forged_server),
        cmocka_unit_test(test_setup_error),
        cmocka_unit_test(test_simple_query),
        cmocka_unit_test(test_extended_query),
        cmocka_unit_test(test_sql_mix),
        cmocka_unit_test(test_sql_random_id),
        cmocka_unit_test(test_sql_id_parse),
        cmocka_unit_test(test_fixed_request),
        cmocka_unit_test(test_replies_split),
        cmocka_unit_test(test_expect_body),
        cmocka_unit_test(test_framing_errors),
        cmocka_unit_test(test_bye),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
