/*
 * The PostgreSQL client codec (pg.h). One message parser serves the set-up
 * and the replies: it gathers the 5-byte header (type, length) and then
 * either buffers the body (authentication requests, at most PG_MAX_AUTH),
 * streams it through a check (the first DataRow's first column against
 * --expect-body) or skips it by count.
 */
#include "proto/pg.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum pg_auth {
    AUTH_OK = 0,
    AUTH_CLEARTEXT = 3,
    AUTH_MD5 = 5,
    AUTH_SASL = 10,
    AUTH_SASL_CONTINUE = 11,
    AUTH_SASL_FINAL = 12,
};

#define STR_(x)         #x
#define STR(x)          STR_(x)
#define SCRAM_MECH      "SCRAM-SHA-256"
#define SCRAM_NONCE_RAW 18 /* random bytes: 24 base64 characters */
#define SHA256_LEN      32

struct pg_state {
    const struct pg_opts *opts;
    const char *sql[CODEC_SQL_MAX], *user, *database, *password, *expect;
    size_t sql_len[CODEC_SQL_MAX], expect_len;
    struct codec_sql_id id[CODEC_SQL_MAX]; /* each statement's random id, if it has one */
    uint64_t id_rng;
    uint64_t sent, answered; /* requests encoded, replies completed: their kinds */
    bool lost; /* reset since: requests awaited are resent (a reply comes) or dropped (an encode) */
    uint64_t rng;
    unsigned allow; /* enum codec_auth: the ways the server may ask */
    bool asked;     /* the server asked for a password in this set-up (not "none") */
    bool ready;     /* the set-up ended: bytes are replies */
    /* the message being read */
    uint8_t hdr[5];
    unsigned hdr_got;
    uint8_t type;
    uint32_t body_len, body_got;
    uint8_t body[PG_MAX_AUTH]; /* an authentication request's body */
    /* the reply being read */
    size_t reply_off;
    bool error_reply;
    bool row_seen;   /* a DataRow came in this reply */
    bool row_check;  /* the current DataRow is the first, and is compared */
    int32_t col_len; /* its first column's length, once read */
    /* SCRAM, between its messages */
    char nonce[32];      /* the client nonce, base64 */
    char first_bare[48]; /* "n=,r=" + nonce */
    uint8_t server_sig[SHA256_LEN];
    bool scram_final_due; /* the proof was sent: a SASLFinal must follow */
};

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint8_t *put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
    return p + 4;
}

static uint8_t *put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
    return p + 2;
}

/* s with its NUL. */
static uint8_t *put_cstr(uint8_t *p, const char *s)
{
    size_t n = strlen(s) + 1;

    memcpy(p, s, n);
    return p + n;
}

/* A message: type, then its length (itself and the body), filled in by msg_end. */
static uint8_t *msg_begin(uint8_t *p, uint8_t type)
{
    *p = type;
    return p + 5;
}

static uint8_t *msg_end(uint8_t *start, uint8_t *end)
{
    put32(start + 1, (uint32_t)(end - start - 1));
    return end;
}

static void pg_init(void *st, const struct codec_cfg *cfg)
{
    struct pg_state *s = st;
    const struct pg_opts *o = cfg->opts;

    memset(s, 0, sizeof(*s));
    s->opts = o;
    for (unsigned i = 0; i < CODEC_SQL_MAX; i++) {
        s->sql[i] = codec_sql_text(&o->sql, i, PG_DEFAULT_SQL);
        s->sql_len[i] = strlen(s->sql[i]);
        if (codec_sql_id_parse(s->sql[i], &s->id[i]) < 0) s->id[i].len = 0; /* sent as written */
    }
    s->id_rng = codec_sql_id_seed(cfg);
    s->user = o->user != NULL ? o->user : PG_DEFAULT_USER;
    s->database = o->database != NULL ? o->database : s->user;
    s->password = o->password;
    s->allow = o->auth_methods != 0 ? o->auth_methods : CODEC_AUTH_DEFAULT;
    s->expect = o->expect_body;
    s->expect_len = s->expect != NULL ? strlen(s->expect) : 0;
    s->rng = (cfg->seed ^ 0x9E3779B97F4A7C15ULL * (cfg->conn_index + 1)) | 1;
}

/* Forgets a partial message and reply; the session (ready or not) stays. */
static void pg_reset(void *st)
{
    struct pg_state *s = st;

    s->hdr_got = 0;
    s->body_got = 0;
    s->body_len = 0;
    s->reply_off = 0;
    s->error_reply = false;
    s->row_seen = false;
    s->row_check = false;
    s->lost = true;
}

static size_t pg_max_request(const struct codec_cfg *cfg)
{
    const struct pg_opts *o = cfg->opts;
    size_t sql = codec_sql_max_len(&o->sql, PG_DEFAULT_SQL);

    if (!o->extended) return 5 + sql + 1;
    /* Parse "" sql 0 | Bind "" "" 0 0 0 | Execute "" 0 | Sync */
    return (5 + 1 + sql + 1 + 2) + (5 + 1 + 1 + 2 + 2 + 2) + (5 + 1 + 4) + 5;
}

static size_t pg_encode(void *st, uint8_t *dst, size_t cap)
{
    struct pg_state *s = st;
    struct codec_cfg cc = { .opts = s->opts };
    uint8_t *p = dst, *m;
    unsigned k = codec_sql_pick(&s->opts->sql, s->sent);
    const char *sql = s->sql[k];
    size_t len = s->sql_len[k];

    if (pg_max_request(&cc) > cap) return 0;
    if (s->lost) s->answered = s->sent; /* a new request before any reply: the others dropped */
    s->lost = false;
    s->sent++;
    if (!s->opts->extended) {
        m = msg_begin(p, 'Q');
        len = codec_sql_id_write(sql, len, &s->id[k], &s->id_rng, m);
        m[len] = 0;
        return (size_t)(msg_end(p, m + len + 1) - dst);
    }
    m = msg_begin(p, 'P'); /* the unnamed statement, no parameter types */
    *m++ = 0;
    len = codec_sql_id_write(sql, len, &s->id[k], &s->id_rng, m);
    m[len] = 0;
    m = put16(m + len + 1, 0);
    p = msg_end(p, m);
    m = msg_begin(p, 'B'); /* the unnamed portal: no formats, no parameters */
    *m++ = 0;
    *m++ = 0;
    m = put16(put16(put16(m, 0), 0), 0);
    p = msg_end(p, m);
    m = msg_begin(p, 'E'); /* every row */
    *m++ = 0;
    m = put32(m, 0);
    p = msg_end(p, m);
    p = msg_end(p, msg_begin(p, 'S'));
    return (size_t)(p - dst);
}

static size_t pg_bye(void *st, uint8_t *dst, size_t cap)
{
    (void)st;
    if (cap < 5) return 0;
    return (size_t)(msg_end(dst, msg_begin(dst, 'X')) - dst);
}

/* ---- authentication ------------------------------------------------------- */

/* 64 bits of xorshift64*: nonces only need to differ, they guard no secret here. */
static uint64_t pg_random(struct pg_state *s)
{
    s->rng ^= s->rng >> 12;
    s->rng ^= s->rng << 25;
    s->rng ^= s->rng >> 27;
    return s->rng * 0x2545F4914F6CDD1DULL;
}

static void hex(char *out, const uint8_t *in, size_t n)
{
    static const char digits[] = "0123456789abcdef";

    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[in[i] >> 4];
        out[2 * i + 1] = digits[in[i] & 15];
    }
    out[2 * n] = '\0';
}

/* A PasswordMessage with the text t. */
static size_t password_msg(uint8_t *out, const char *t)
{
    return (size_t)(msg_end(out, put_cstr(msg_begin(out, 'p'), t)) - out);
}

/* "md5" + hex(md5(hex(md5(password + user)) + salt)); false if libcrypto fails. */
static bool md5_response(const struct pg_state *s, const uint8_t salt[4], char out[36])
{
    uint8_t buf[PG_MAX_PASSWORD + PG_MAX_NAME + 4], d[16];
    size_t pw = strlen(s->password), user = strlen(s->user);
    char inner[33];

    memcpy(buf, s->password, pw);
    memcpy(buf + pw, s->user, user);
    if (!EVP_Digest(buf, pw + user, d, NULL, EVP_md5(), NULL)) return false;
    hex(inner, d, 16);
    memcpy(buf, inner, 32);
    memcpy(buf + 32, salt, 4);
    if (!EVP_Digest(buf, 36, d, NULL, EVP_md5(), NULL)) return false;
    out[0] = 'm';
    out[1] = 'd';
    out[2] = '5';
    hex(out + 3, d, 16);
    return true;
}

/* Whether the SASL mechanism list (NUL-terminated names, then an empty one) offers name. */
static bool sasl_offers(const uint8_t *list, size_t n, const char *name)
{
    size_t i = 0;

    while (i < n && list[i] != 0) {
        size_t len = strnlen((const char *)list + i, n - i);

        if (len == strlen(name) && memcmp(list + i, name, len) == 0) return true;
        i += len + 1;
    }
    return false;
}

/* SASLInitialResponse: the mechanism, then client-first "n,,n=,r=NONCE". */
static size_t scram_first(struct pg_state *s, uint8_t *out)
{
    uint8_t raw[SCRAM_NONCE_RAW + 6];
    uint8_t *m;
    size_t len;

    for (size_t i = 0; i < sizeof(raw); i += 8) {
        uint64_t r = pg_random(s);
        memcpy(raw + i, &r, sizeof(raw) - i < 8 ? sizeof(raw) - i : 8);
    }
    EVP_EncodeBlock((unsigned char *)s->nonce, raw, SCRAM_NONCE_RAW);
    snprintf(s->first_bare, sizeof(s->first_bare), "n=,r=%s", s->nonce);
    len = 3 + strlen(s->first_bare);
    m = put_cstr(msg_begin(out, 'p'), SCRAM_MECH);
    m = put32(m, (uint32_t)len);
    m[0] = 'n'; /* the GS2 header: no channel binding, no authorization identity */
    m[1] = ',';
    m[2] = ',';
    memcpy(m + 3, s->first_bare, len - 3);
    return (size_t)(msg_end(out, m + len) - out);
}

/* The value of attribute a ("r", "s", "i", "v") in a SCRAM message, or NULL; *n its length. */
static const char *scram_attr(const char *msg, size_t len, char a, size_t *n)
{
    size_t i = 0;

    while (i + 1 < len) {
        size_t end = i;

        while (end < len && msg[end] != ',')
            end++;
        if (msg[i] == a && msg[i + 1] == '=') {
            *n = end - i - 2;
            return msg + i + 2;
        }
        i = end + 1;
    }
    return NULL;
}

/* Base64 in[0..n) into out (at most cap bytes); its length, or -1. */
static int b64_decode(uint8_t *out, size_t cap, const char *in, size_t n)
{
    int len;
    size_t pad = 0;

    if (n == 0 || n % 4 != 0 || n / 4 * 3 > cap) return -1;
    len = EVP_DecodeBlock(out, (const unsigned char *)in, (int)n);
    if (len < 0) return -1;
    while (pad < 2 && in[n - 1 - pad] == '=')
        pad++;
    return len - (int)pad;
}

static bool hmac256(const uint8_t *key, size_t klen, const void *data, size_t n,
                    uint8_t out[SHA256_LEN])
{
    unsigned len = SHA256_LEN;

    return HMAC(EVP_sha256(), key, (int)klen, data, n, out, &len) != NULL;
}

/*
 * SASLContinue: the server-first message in s->body[4..]. Writes the
 * client-final message with the proof and keeps the server's signature
 * for the final check. 0 when the message is wrong (or libcrypto failed),
 * or (msg->why set) when it asks for more than PG_SCRAM_ITER_MAX iterations.
 */
static size_t scram_final(struct pg_state *s, uint8_t *out, struct codec_msg *msg)
{
    const char *sf = (const char *)s->body + 4;
    size_t sf_len = s->body_len - 4, rn, sn, in;
    const char *r = scram_attr(sf, sf_len, 'r', &rn), *salt64 = scram_attr(sf, sf_len, 's', &sn);
    const char *iters = scram_attr(sf, sf_len, 'i', &in);
    uint8_t salt[PG_MAX_AUTH], salted[SHA256_LEN], client_key[SHA256_LEN], stored[SHA256_LEN];
    uint8_t sig[SHA256_LEN], server_key[SHA256_LEN];
    char auth[3 * PG_MAX_AUTH], final[PG_MAX_AUTH + 64], iter_text[12];
    size_t nonce_len = strlen(s->nonce), final_len, auth_len;
    int salt_len, n;
    long iter;
    uint8_t *m;

    if (r == NULL || salt64 == NULL || iters == NULL || in == 0 || in >= sizeof(iter_text))
        return 0;
    if (rn <= nonce_len || memcmp(r, s->nonce, nonce_len) != 0) return 0;
    memcpy(iter_text, iters, in);
    iter_text[in] = '\0';
    iter = strtol(iter_text, NULL, 10);
    if (iter > PG_SCRAM_ITER_MAX) {
        msg->why = "the server asked for more than " STR(
            PG_SCRAM_ITER_MAX) " SCRAM iterations (hashing them would hold a load thread for long)";
        return 0;
    }
    if (iter < 1) return 0;
    salt_len = b64_decode(salt, sizeof(salt), salt64, sn);
    if (salt_len <= 0) return 0;
    if (!PKCS5_PBKDF2_HMAC(s->password, (int)strlen(s->password), salt, salt_len, (int)iter,
                           EVP_sha256(), SHA256_LEN, salted))
        return 0;
    n = snprintf(final, sizeof(final), "c=biws,r=%.*s", (int)rn, r);
    if (n < 0 || (size_t)n >= sizeof(final)) return 0;
    final_len = (size_t)n;
    n = snprintf(auth, sizeof(auth), "%s,%.*s,%s", s->first_bare, (int)sf_len, sf, final);
    if (n < 0 || (size_t)n >= sizeof(auth)) return 0;
    auth_len = (size_t)n;
    if (!hmac256(salted, SHA256_LEN, "Client Key", 10, client_key) ||
        !EVP_Digest(client_key, SHA256_LEN, stored, NULL, EVP_sha256(), NULL) ||
        !hmac256(stored, SHA256_LEN, auth, auth_len, sig) ||
        !hmac256(salted, SHA256_LEN, "Server Key", 10, server_key) ||
        !hmac256(server_key, SHA256_LEN, auth, auth_len, s->server_sig))
        return 0;
    for (size_t i = 0; i < SHA256_LEN; i++)
        client_key[i] ^= sig[i]; /* the proof */
    if (final_len + 3 + 45 > sizeof(final) || 5 + final_len + 3 + 44 > PG_SETUP_CAP) return 0;
    final_len += (size_t)snprintf(final + final_len, sizeof(final) - final_len, ",p=");
    final_len +=
        (size_t)EVP_EncodeBlock((unsigned char *) final + final_len, client_key, SHA256_LEN);
    m = msg_begin(out, 'p');
    memcpy(m, final, final_len);
    s->scram_final_due = true;
    return (size_t)(msg_end(out, m + final_len) - out);
}

/* SASLFinal: "v=" and the server's signature, which must be the one computed. */
static bool scram_verify(const struct pg_state *s)
{
    size_t vn;
    const char *v = scram_attr((const char *)s->body + 4, s->body_len - 4, 'v', &vn);
    uint8_t sig[PG_MAX_AUTH];

    return v != NULL && b64_decode(sig, sizeof(sig), v, vn) == SHA256_LEN &&
           memcmp(sig, s->server_sig, SHA256_LEN) == 0;
}

/*
 * Whether the way a server asks for (a bit of enum codec_auth) is one
 * --auth-method allows; if not, msg->why says which it was and what allows it.
 */
static bool auth_allowed(struct pg_state *s, unsigned way, struct codec_msg *msg)
{
    if (way != CODEC_AUTH_NONE) s->asked = true;
    if (s->allow & way) return true;
    switch (way) {
    case CODEC_AUTH_PASSWORD:
        msg->why = "the server asked for the password in clear (--auth-method password allows it)";
        break;
    case CODEC_AUTH_MD5:
        msg->why = "the server asked for an MD5 hash of the password, which it could crack offline "
                   "(--auth-method md5 allows it)";
        break;
    case CODEC_AUTH_SCRAM:
        msg->why = "the server asked for SCRAM-SHA-256, which --auth-method leaves out";
        break;
    default:
        msg->why = "the server asked for no password, which --auth-method leaves out (none allows "
                   "it)";
        break;
    }
    return false;
}

/*
 * An authentication request (s->body, whole). Writes the answer to out;
 * returns its length, 0 when none is due, -1 (msg set) when the request
 * cannot be met or is refused: a way --auth-method does not allow is
 * refused before the password is used (msg->why says so).
 */
static long pg_auth(struct pg_state *s, uint8_t *out, struct codec_msg *msg)
{
    char md5[36];
    size_t n;

    msg->err = CODEC_ERR_MISMATCH;
    if (s->body_len < 4) return -1;
    switch (get32(s->body)) {
    case AUTH_OK:
        if (s->scram_final_due) return -1; /* the server skipped its signature */
        if (!s->asked && !auth_allowed(s, CODEC_AUTH_NONE, msg)) return -1;
        return 0;
    case AUTH_CLEARTEXT:
        if (!auth_allowed(s, CODEC_AUTH_PASSWORD, msg)) return -1;
        if (s->password == NULL) break;
        return (long)password_msg(out, s->password);
    case AUTH_MD5:
        if (!auth_allowed(s, CODEC_AUTH_MD5, msg)) return -1;
        if (s->password == NULL) break;
        if (s->body_len != 8 || !md5_response(s, s->body + 4, md5)) return -1;
        return (long)password_msg(out, md5);
    case AUTH_SASL:
        if (!auth_allowed(s, CODEC_AUTH_SCRAM, msg)) return -1;
        if (s->password == NULL) break;
        if (!sasl_offers(s->body + 4, s->body_len - 4, SCRAM_MECH)) return -1;
        return (long)scram_first(s, out);
    case AUTH_SASL_CONTINUE:
        if (s->password == NULL || s->first_bare[0] == '\0') return -1;
        n = scram_final(s, out, msg);
        return n > 0 ? (long)n : -1;
    case AUTH_SASL_FINAL:
        if (!s->scram_final_due || !scram_verify(s)) return -1;
        s->scram_final_due = false;
        return 0;
    default:
        return -1; /* a method this codec does not speak */
    }
    /* A password is asked for and none was given: the server refuses this client. */
    msg->err = CODEC_ERR_NONE;
    msg->error_reply = true;
    return -1;
}

/* ---- the message parser --------------------------------------------------- */

/*
 * Reads the header of the next message from src; true once it is whole
 * (type and body length set), with *off advanced.
 */
static bool read_header(struct pg_state *s, const uint8_t *src, size_t len, size_t *off,
                        struct codec_msg *msg, enum codec_rc *rc)
{
    while (s->hdr_got < 5 && *off < len)
        s->hdr[s->hdr_got++] = src[(*off)++];
    if (s->hdr_got < 5) return false;
    s->type = s->hdr[0];
    s->body_got = 0;
    if (get32(s->hdr + 1) < 4) {
        msg->err = CODEC_ERR_MISMATCH;
        msg->err_off = s->reply_off + 1;
        *rc = CODEC_ERROR;
        return false;
    }
    s->body_len = get32(s->hdr + 1) - 4;
    if (s->body_len > PG_MAX_MESSAGE) {
        msg->err = CODEC_ERR_TOO_BIG;
        msg->err_off = s->reply_off + 1;
        *rc = CODEC_ERROR;
        return false;
    }
    return true;
}

/* Takes up to the rest of the body from src; returns the bytes taken. */
static size_t take(struct pg_state *s, const uint8_t *src, size_t len, bool keep)
{
    size_t n = s->body_len - s->body_got;

    if (n > len) n = len;
    if (keep) memcpy(s->body + s->body_got, src, n);
    s->body_got += (uint32_t)n;
    return n;
}

/* A new connection: its session starts from the StartupMessage. */
static size_t pg_startup(struct pg_state *s, uint8_t *out, struct codec_msg *msg)
{
    uint8_t *m = put32(out + 4, 196608); /* protocol 3.0 */

    pg_reset(s);
    s->ready = false;
    s->asked = false;
    s->scram_final_due = false;
    s->first_bare[0] = '\0';
    if (strlen(s->user) > PG_MAX_NAME || strlen(s->database) > PG_MAX_NAME ||
        (s->password != NULL && strlen(s->password) > PG_MAX_PASSWORD)) {
        msg->err = CODEC_ERR_TOO_BIG;
        return 0;
    }
    m = put_cstr(put_cstr(m, "user"), s->user);
    m = put_cstr(put_cstr(m, "database"), s->database);
    m = put_cstr(put_cstr(m, "application_name"), "hopbench");
    *m++ = 0;
    put32(out, (uint32_t)(m - out));
    return (size_t)(m - out);
}

/* One whole set-up message (s->type, s->body): NEED_MORE, DONE or ERROR (msg set). */
static enum codec_rc setup_message(struct pg_state *s, uint8_t *out, size_t *out_len,
                                   struct codec_msg *msg)
{
    long n;

    switch (s->type) {
    case 'R':
        n = pg_auth(s, out, msg);
        if (n < 0) return CODEC_ERROR;
        *out_len = (size_t)n;
        return CODEC_NEED_MORE;
    case 'E':
        msg->err = CODEC_ERR_NONE;
        msg->error_reply = true;
        return CODEC_ERROR;
    case 'S':
    case 'K':
    case 'N':
        return CODEC_NEED_MORE;
    case 'Z':
        if (s->body_len != 1 || s->scram_final_due) break;
        s->ready = true;
        return CODEC_DONE;
    default:
        break;
    }
    msg->err = CODEC_ERR_MISMATCH;
    return CODEC_ERROR;
}

static enum codec_rc pg_setup(void *st, const uint8_t *src, size_t len, size_t *used, uint8_t *out,
                              size_t *out_len, struct codec_msg *msg)
{
    struct pg_state *s = st;
    size_t off = 0;
    enum codec_rc rc = CODEC_NEED_MORE;

    *out_len = 0;
    *used = 0;
    if (src == NULL) {
        *out_len = pg_startup(s, out, msg);
        return *out_len > 0 ? CODEC_NEED_MORE : CODEC_ERROR;
    }
    while (off < len && rc == CODEC_NEED_MORE) {
        if (s->hdr_got < 5) {
            if (!read_header(s, src, len, &off, msg, &rc)) break;
            if (s->type == 'R' && s->body_len > PG_MAX_AUTH) {
                msg->err = CODEC_ERR_TOO_BIG;
                rc = CODEC_ERROR;
                break;
            }
        }
        off += take(s, src + off, len - off, s->type == 'R');
        if (s->body_got < s->body_len) break;
        s->hdr_got = 0; /* the message is whole */
        rc = setup_message(s, out, out_len, msg);
        if (*out_len > 0) break; /* an answer goes out before the rest is read */
    }
    *used = off;
    return rc;
}

/*
 * Streams n bytes of the first DataRow's body (at body offset s->body_got)
 * through the --expect-body check: Int16 column count, Int32 length of the
 * first column, then its bytes. Returns n, or the index of the first byte
 * that departs (msg set).
 */
static size_t check_row(struct pg_state *s, const uint8_t *p, size_t n, struct codec_msg *msg)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t at = s->body_got + (uint32_t)i;
        bool ok = true;

        if (at < 2) {
            s->body[at] = p[i];
            if (at == 1) ok = (s->body[0] << 8 | s->body[1]) >= 1;
        } else if (at < 6) {
            s->body[at] = p[i];
            if (at == 5) {
                s->col_len = (int32_t)get32(s->body + 2);
                ok = s->col_len >= 0 && (size_t)s->col_len == s->expect_len;
            }
        } else if (at < 6 + s->expect_len) {
            ok = p[i] == (uint8_t)s->expect[at - 6];
        } else {
            break; /* the other columns */
        }
        if (!ok) {
            msg->err = CODEC_ERR_BODY;
            msg->err_off = s->reply_off + i;
            return i;
        }
    }
    return n;
}

static enum codec_rc pg_feed(void *st, const uint8_t *src, size_t len, size_t *used,
                             struct codec_msg *msg)
{
    struct pg_state *s = st;
    size_t off = 0;
    enum codec_rc rc = CODEC_NEED_MORE;

    while (off < len) {
        size_t start = off, n;

        if (s->hdr_got < 5) {
            bool whole = read_header(s, src, len, &off, msg, &rc);

            s->reply_off += off - start;
            if (!whole) {
                *used = off;
                return rc;
            }
            switch (s->type) {
            case 'D':
                s->row_check = s->expect != NULL && !s->row_seen;
                s->row_seen = true;
                break;
            case 'E':
                s->error_reply = true;
                break;
            case 'Z':
                if (s->body_len != 1) {
                    msg->err = CODEC_ERR_MISMATCH;
                    msg->err_off = s->reply_off - 4;
                    *used = off;
                    return CODEC_ERROR;
                }
                break;
            case 'T': /* RowDescription */
            case 'C': /* CommandComplete */
            case 'I': /* EmptyQueryResponse */
            case 'N': /* NoticeResponse */
            case 'S': /* ParameterStatus */
            case 'A': /* NotificationResponse */
            case '1': /* ParseComplete */
            case '2': /* BindComplete */
            case '3': /* CloseComplete */
            case 'n': /* NoData */
            case 't': /* ParameterDescription */
            case 's': /* PortalSuspended */
                break;
            default:
                msg->err = CODEC_ERR_MISMATCH;
                msg->err_off = s->reply_off - 5;
                *used = off;
                return CODEC_ERROR;
            }
        }
        n = s->body_len - s->body_got;
        if (n > len - off) n = len - off;
        if (s->row_check) {
            size_t good = check_row(s, src + off, n, msg);

            if (good < n) {
                *used = off + good;
                return CODEC_ERROR;
            }
        }
        s->body_got += (uint32_t)n;
        off += n;
        s->reply_off += n;
        if (s->body_got < s->body_len) break;
        s->hdr_got = 0;
        if (s->row_check && s->body_len < 6 + s->expect_len) {
            msg->err = CODEC_ERR_BODY; /* the row ended before the column did */
            msg->err_off = s->reply_off;
            *used = off;
            return CODEC_ERROR;
        }
        s->row_check = false;
        if (s->type == 'Z') {
            bool no_row = s->expect != NULL && !s->row_seen && !s->error_reply;

            memset(msg, 0, sizeof(*msg));
            msg->error_reply = s->error_reply;
            msg->kind = codec_sql_pick(&s->opts->sql, s->answered++);
            s->lost = false; /* the requests awaited were sent again, in order */
            *used = off;
            if (no_row) {
                msg->err = CODEC_ERR_BODY;
                msg->err_off = s->reply_off - 6;
            }
            s->reply_off = 0;
            s->error_reply = s->row_seen = false;
            return no_row ? CODEC_ERROR : CODEC_DONE;
        }
    }
    *used = off;
    return CODEC_NEED_MORE;
}

static enum codec_rc pg_eof(void *st, struct codec_msg *msg)
{
    struct pg_state *s = st;

    msg->err = CODEC_ERR_MISMATCH;
    msg->err_off = s->reply_off;
    return CODEC_ERROR;
}

/* A mix of statements, or a statement with a random id, differs from one request to the next. */
static bool pg_varies(const struct codec_cfg *cfg)
{
    const struct pg_opts *o = cfg->opts;

    return codec_sql_varies(&o->sql);
}

const struct codec_ops pg_codec = {
    .name = "pg",
    .state_size = sizeof(struct pg_state),
    .fixed = true,
    .varies = pg_varies,
    .kind_names = codec_sql_kinds,
    .max_request = pg_max_request,
    .init = pg_init,
    .encode = pg_encode,
    .feed = pg_feed,
    .eof = pg_eof,
    .reset = pg_reset,
    .setup = pg_setup,
    .setup_cap = PG_SETUP_CAP,
    .bye = pg_bye,
};
