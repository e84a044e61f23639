/*
 * resp: see resp.h. The request side keeps the current key as decimal digits
 * and increments them in place. The reply side is a byte-driven state machine
 * over the RESP2 grammar, with a stack of element counts for nested arrays;
 * bulk payloads are taken in one step per feed call. The verdict against the
 * command is collected while the reply streams past (the first departure
 * wins) and given when the reply ends, so it never depends on the split.
 */
#include "proto/resp.h"

#include <string.h>

#define KEY_DIGITS_MAX 20 /* UINT64_MAX has 20 decimal digits */
#define SIZE_HDR_MAX   24 /* "$" + 20 digits + CRLF */

/* The parser's position in a reply. */
enum resp_pstate {
    RESP_P_TYPE = 0, /* the next byte is a value's type byte */
    RESP_P_LINE,     /* inside a + or - line, up to CR */
    RESP_P_NUM,      /* inside a :, $ or * number, up to CR */
    RESP_P_LF,       /* a line's CR was read: LF must follow */
    RESP_P_BULK,     /* inside a bulk payload, bulk_left > 0 bytes to go */
    RESP_P_BULK_CR,  /* the payload ended: CR must follow */
    RESP_P_BULK_LF,  /* then LF */
};

struct resp_state {
    /* request side, fixed at init but for the key and the count */
    enum codec_redis_cmd single; /* the command, unless a mix gives them in turn */
    const uint8_t *mix;          /* opts->command.mix: request n is mix[n % mix_len] */
    unsigned mix_len;
    uint64_t sent;     /* requests encoded */
    uint64_t answered; /* replies complete, and requests given up by reset() */
    uint64_t keys;
    uint64_t key; /* the number of the next request's key */
    char key_dig[KEY_DIGITS_MAX];
    size_t key_len; /* digits in key_dig */
    size_t size;    /* SET value bytes */
    char size_hdr[SIZE_HDR_MAX];
    size_t size_hdr_len; /* "$<size>\r\n" */
    const char *expect;  /* GET: the value wanted, NULL when not checked */
    size_t expect_len;
    size_t get_len;       /* GET: the value's length wanted (a mix's GET: size); SIZE_MAX: any */
    const char *password; /* opts->password: AUTH on each connection first; NULL: none */

    /* AUTH's reply (setup): one + or - line */
    size_t auth_len;   /* bytes after the type byte, CR excluded */
    uint8_t auth_type; /* its type byte; 0 before it */
    bool auth_cr;      /* its CR was read */
    bool auth_ok;      /* "+OK" so far */

    /* the reply being read: what answers request number `answered` */
    enum codec_redis_cmd cmd;
    const char *want; /* PING, SET: the simple string wanted ("PONG", "OK") */
    size_t want_len;

    /* reply side */
    enum resp_pstate ps;
    uint8_t type;      /* type byte of the line being read */
    bool neg;          /* the number has a '-' sign */
    bool sign;         /* the number has a sign */
    bool err_reply;    /* the reply is an error (-) */
    bool compare;      /* the bulk being read is compared with expect */
    unsigned depth;    /* arrays open */
    size_t off;        /* bytes of this reply fed before the current call */
    size_t line_start; /* reply offset of the current line's type byte */
    size_t line_len;   /* bytes read after the type byte, CR excluded */
    uint64_t num;      /* the number read so far */
    unsigned ndig;
    uint64_t bulk_left;
    struct codec_verdict verdict;  /* the first departure from the wanted reply */
    uint64_t left[RESP_MAX_DEPTH]; /* elements still to come in each open array */
};

/* ---- requests ----------------------------------------------------------- */

static const char ping_req[] = "*1\r\n$4\r\nPING\r\n";
static const char set_prefix[] = "*3\r\n$3\r\nSET\r\n";
static const char get_prefix[] = "*2\r\n$3\r\nGET\r\n";
static const char key_prefix[] = "key:";
static const struct resp_opts no_opts = { .command = {
                                              .cmd = REDIS_PING } }; /* opts should not be NULL */

#define LIT_LEN(s) (sizeof(s) - 1)

static uint64_t cfg_keys(const struct resp_opts *o)
{
    return o->keys == 0 ? 1 : o->keys;
}

static enum codec_redis_cmd valid_cmd(unsigned cmd)
{
    return cmd == REDIS_SET || cmd == REDIS_GET ? (enum codec_redis_cmd)cmd : REDIS_PING;
}

static unsigned cfg_mix_len(const struct resp_opts *o)
{
    return o->command.len <= CODEC_MIX_MAX ? o->command.len : CODEC_MIX_MAX;
}

/* The command of request number n. */
static enum codec_redis_cmd cmd_of(const struct resp_state *s, uint64_t n)
{
    return s->mix_len > 0 ? valid_cmd(s->mix[n % s->mix_len]) : s->single;
}

/* "$<k>\r\nkey:<n>\r\n" for a key of `digits` digits. */
static size_t key_arg_len(size_t digits)
{
    size_t klen = LIT_LEN(key_prefix) + digits;

    return 1 + codec_dec_len(klen) + 2 + klen + 2;
}

/* Bytes of one request; SIZE_MAX when the value is too large to count. */
static size_t request_len(enum codec_redis_cmd cmd, size_t key_digits, size_t size)
{
    if (cmd == REDIS_PING) return LIT_LEN(ping_req);
    if (cmd == REDIS_GET) return LIT_LEN(get_prefix) + key_arg_len(key_digits);
    if (size > SIZE_MAX - 128) return SIZE_MAX;
    return LIT_LEN(set_prefix) + key_arg_len(key_digits) + 1 + codec_dec_len(size) + 2 + size + 2;
}

static size_t resp_max_request(const struct codec_cfg *cfg)
{
    const struct resp_opts *o = cfg->opts != NULL ? cfg->opts : &no_opts;
    /* The last key has the most digits. */
    size_t digits = codec_dec_len(cfg_keys(o) - 1), most = 0;

    if (cfg_mix_len(o) == 0) return request_len(valid_cmd(o->command.cmd), digits, cfg->size);
    for (unsigned i = 0; i < cfg_mix_len(o); i++) {
        size_t n = request_len(valid_cmd(o->command.mix[i]), digits, cfg->size);
        if (n > most) most = n;
    }
    return most;
}

static void parse_reset(struct resp_state *s);

static void resp_init(void *st, const struct codec_cfg *cfg)
{
    const struct resp_opts *o = cfg->opts != NULL ? cfg->opts : &no_opts;
    struct resp_state *s = st;

    memset(s, 0, sizeof(*s));
    s->single = valid_cmd(o->command.cmd);
    s->mix = o->command.mix;
    s->mix_len = cfg_mix_len(o);
    s->keys = cfg_keys(o);
    s->key = codec_key_start(s->keys, cfg->conn_index);
    s->key_len = codec_put_dec(s->key_dig, s->key);
    s->size = cfg->size;
    s->size_hdr[0] = '$';
    s->size_hdr_len = 1 + codec_put_dec(s->size_hdr + 1, s->size);
    memcpy(s->size_hdr + s->size_hdr_len, "\r\n", 2);
    s->size_hdr_len += 2;
    s->get_len = s->mix_len > 0 ? cfg->size : SIZE_MAX;
    s->password = o->password;
    if (s->mix_len == 0 && s->single == REDIS_GET && o->expect_body != NULL) {
        s->expect = o->expect_body;
        s->expect_len = strlen(o->expect_body);
        s->get_len = s->expect_len;
    }
    parse_reset(s);
}

/* The next key: digits incremented in place, back to 0 after keys - 1. */
static void next_key(struct resp_state *s)
{
    size_t i = s->key_len;

    if (++s->key == s->keys) {
        s->key = 0;
        s->key_dig[0] = '0';
        s->key_len = 1;
        return;
    }
    while (i > 0 && s->key_dig[i - 1] == '9')
        s->key_dig[--i] = '0';
    if (i > 0) {
        s->key_dig[i - 1]++;
        return;
    }
    /* 99..9 + 1: one digit more (key < keys <= UINT64_MAX, so it fits in 20) */
    memmove(s->key_dig + 1, s->key_dig, s->key_len);
    s->key_dig[0] = '1';
    s->key_len++;
}

/* A single command's requests come round after `keys` (PING's at once); a mix's are not told. */
static uint64_t resp_cycle(const struct codec_cfg *cfg)
{
    const struct resp_opts *o = cfg->opts != NULL ? cfg->opts : &no_opts;

    if (cfg_mix_len(o) > 0) return 0;
    return valid_cmd(o->command.cmd) == REDIS_PING ? 1 : cfg_keys(o);
}

static uint64_t resp_cycle_pos(const void *st)
{
    const struct resp_state *s = st;

    return s->single == REDIS_PING ? 0 : s->key;
}

/* As n encode() calls of a single command: the count and (but for PING) the key move on. */
static void resp_advance(void *st, unsigned n)
{
    struct resp_state *s = st;
    uint64_t step = n % s->keys;

    s->sent += n;
    if (s->single == REDIS_PING) return; /* a PING has no key: it stays for the next SET, GET */
    s->key = step >= s->keys - s->key ? s->key - (s->keys - step) : s->key + step;
    s->key_len = codec_put_dec(s->key_dig, s->key);
}

static uint8_t *put(uint8_t *p, const void *src, size_t n)
{
    memcpy(p, src, n);
    return p + n;
}

static uint8_t *put_key_arg(uint8_t *p, const struct resp_state *s)
{
    size_t klen = LIT_LEN(key_prefix) + s->key_len; /* at most 24: two digits */

    *p++ = '$';
    if (klen >= 10) *p++ = (uint8_t)('0' + klen / 10);
    *p++ = (uint8_t)('0' + klen % 10);
    p = put(p, "\r\n", 2);
    p = put(p, key_prefix, LIT_LEN(key_prefix));
    p = put(p, s->key_dig, s->key_len);
    return put(p, "\r\n", 2);
}

static size_t resp_encode(void *st, uint8_t *dst, size_t cap)
{
    struct resp_state *s = st;
    enum codec_redis_cmd cmd = cmd_of(s, s->sent);
    size_t n = request_len(cmd, s->key_len, s->size);
    uint8_t *p = dst;

    if (n > cap) return 0;
    s->sent++;
    if (cmd == REDIS_PING) {
        memcpy(dst, ping_req, LIT_LEN(ping_req));
        return n;
    }
    if (cmd == REDIS_GET) {
        p = put(p, get_prefix, LIT_LEN(get_prefix));
        p = put_key_arg(p, s);
    } else {
        p = put(p, set_prefix, LIT_LEN(set_prefix));
        p = put_key_arg(p, s);
        p = put(p, s->size_hdr, s->size_hdr_len);
        memset(p, RESP_VALUE_BYTE, s->size);
        p = put(p + s->size, "\r\n", 2);
    }
    next_key(s);
    return (size_t)(p - dst);
}

/* ---- replies ------------------------------------------------------------ */

/* Ready to read the next reply: it answers request number `answered`. */
static void parse_reset(struct resp_state *s)
{
    s->cmd = cmd_of(s, s->answered);
    s->want = s->cmd == REDIS_PING ? "PONG" : s->cmd == REDIS_SET ? "OK" : NULL;
    s->want_len = s->cmd == REDIS_PING ? 4 : s->cmd == REDIS_SET ? 2 : 0;
    s->ps = RESP_P_TYPE;
    s->err_reply = false;
    s->compare = false;
    s->depth = 0;
    s->off = 0;
    s->verdict = (struct codec_verdict){ CODEC_ERR_NONE, 0 };
}

/* The requests sent and not answered are given up: the next reply answers the next one sent. */
static void resp_reset(void *st)
{
    struct resp_state *s = st;

    s->answered = s->sent;
    parse_reset(s);
}

/* A value ended. True when that completes the reply (no array left open). */
static bool value_done(struct resp_state *s)
{
    while (s->depth > 0) {
        if (--s->left[s->depth - 1] > 0) return false;
        s->depth--; /* the array is complete: one element of its parent */
    }
    return true;
}

/* The first byte of a value; at depth 0 it decides what the command accepts. */
static enum codec_err on_type(struct resp_state *s, uint8_t c, size_t at)
{
    switch (c) {
    case '+':
    case '-':
        s->ps = RESP_P_LINE;
        break;
    case ':':
    case '$':
    case '*':
        s->ps = RESP_P_NUM;
        break;
    default:
        return CODEC_ERR_MISMATCH;
    }
    s->type = c;
    s->line_start = at;
    s->line_len = 0;
    s->num = 0;
    s->ndig = 0;
    s->neg = false;
    s->sign = false;
    if (s->depth > 0) return CODEC_ERR_NONE;
    if (c == '-')
        s->err_reply = true;
    else if (c != (s->cmd == REDIS_GET ? '$' : '+'))
        codec_depart(&s->verdict, CODEC_ERR_MISMATCH, at);
    return CODEC_ERR_NONE;
}

/* One byte of a + or - line. */
static enum codec_err on_line(struct resp_state *s, uint8_t c, size_t at)
{
    bool judged = s->depth == 0 && s->type == '+' && s->want != NULL;

    if (c == '\r') {
        if (judged && s->line_len != s->want_len) codec_depart(&s->verdict, CODEC_ERR_MISMATCH, at);
        s->ps = RESP_P_LF;
        return CODEC_ERR_NONE;
    }
    if (c == '\n') return CODEC_ERR_MISMATCH;
    if (s->line_len == RESP_MAX_LINE) return CODEC_ERR_TOO_BIG;
    if (judged && (s->line_len >= s->want_len || c != (uint8_t)s->want[s->line_len]))
        codec_depart(&s->verdict, CODEC_ERR_MISMATCH, at);
    s->line_len++;
    return CODEC_ERR_NONE;
}

/* The largest magnitude the current number may have. */
static uint64_t num_limit(const struct resp_state *s)
{
    if (s->type == '$') return RESP_MAX_BULK;
    if (s->type == '*') return RESP_MAX_ARRAY;
    return s->neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
}

/* One byte of a :, $ or * number: [sign] digits CR. Lengths may only be -1 when negative. */
static enum codec_err on_num(struct resp_state *s, uint8_t c)
{
    unsigned d;

    if (c == '\r') {
        if (s->ndig == 0) return CODEC_ERR_MISMATCH;
        s->ps = RESP_P_LF;
        return CODEC_ERR_NONE;
    }
    if (s->line_len == RESP_MAX_LINE) return CODEC_ERR_TOO_BIG;
    s->line_len++;
    if ((c == '-' || (c == '+' && s->type == ':')) && !s->sign && s->ndig == 0) {
        s->sign = true;
        s->neg = c == '-';
        return CODEC_ERR_NONE;
    }
    if (c < '0' || c > '9') return CODEC_ERR_MISMATCH;
    d = (unsigned)(c - '0');
    if (s->neg && s->type != ':' && (s->ndig > 0 || d != 1)) return CODEC_ERR_MISMATCH;
    if (s->num > (num_limit(s) - d) / 10)
        return s->type == ':' ? CODEC_ERR_MISMATCH : CODEC_ERR_TOO_BIG;
    s->num = s->num * 10 + d;
    s->ndig++;
    return CODEC_ERR_NONE;
}

/*
 * A $ line ended: at depth 0, a GET's value of a wanted length (a mix's, or
 * expect_body's) has it; say whether to compare its bytes with expect_body.
 */
static void judge_bulk(struct resp_state *s)
{
    bool judged = s->depth == 0 && s->cmd == REDIS_GET && s->get_len != SIZE_MAX;

    if (judged && (s->neg || s->num != s->get_len))
        codec_depart(&s->verdict, CODEC_ERR_BODY, s->line_start + 1);
    s->compare = judged && s->expect != NULL && s->verdict.err == CODEC_ERR_NONE;
}

/*
 * A line's LF. Sets *done when it completes the reply. A nested array that
 * would go past RESP_MAX_DEPTH is TOO_BIG; it is reported at its '*'.
 */
static enum codec_err on_line_end(struct resp_state *s, bool *done, size_t *err_at)
{
    s->ps = RESP_P_TYPE;
    if (s->type == '$') {
        judge_bulk(s);
        if (!s->neg) {
            s->bulk_left = s->num;
            s->ps = s->num > 0 ? RESP_P_BULK : RESP_P_BULK_CR;
            return CODEC_ERR_NONE;
        }
    } else if (s->type == '*' && !s->neg && s->num > 0) {
        if (s->depth == RESP_MAX_DEPTH) {
            *err_at = s->line_start;
            return CODEC_ERR_TOO_BIG;
        }
        s->left[s->depth++] = s->num;
        return CODEC_ERR_NONE;
    }
    *done = value_done(s); /* + - : $-1 *-1 *0 */
    return CODEC_ERR_NONE;
}

/*
 * One byte, in any state but BULK. Returns the framing error it makes, with
 * *err_at its reply offset (the byte itself unless said otherwise).
 */
static enum codec_err step(void *st, uint8_t c, size_t at, bool *done, size_t *err_at)
{
    struct resp_state *s = st;

    *err_at = at;
    switch (s->ps) {
    case RESP_P_TYPE:
        return on_type(s, c, at);
    case RESP_P_LINE:
        return on_line(s, c, at);
    case RESP_P_NUM:
        return on_num(s, c);
    case RESP_P_LF:
        if (c != '\n') return CODEC_ERR_MISMATCH;
        return on_line_end(s, done, err_at);
    case RESP_P_BULK_CR:
        if (c != '\r') return CODEC_ERR_MISMATCH;
        s->ps = RESP_P_BULK_LF;
        return CODEC_ERR_NONE;
    case RESP_P_BULK_LF:
        if (c != '\n') return CODEC_ERR_MISMATCH;
        s->ps = RESP_P_TYPE;
        *done = value_done(s);
        return CODEC_ERR_NONE;
    case RESP_P_BULK:
        break;
    }
    return CODEC_ERR_MISMATCH; /* unreachable: BULK goes through take_bulk */
}

/* Up to n payload bytes starting at reply offset `at`; returns how many were taken (0 outside). */
static size_t take_bulk(void *st, const uint8_t *p, size_t n, size_t at)
{
    struct resp_state *s = st;

    if (s->ps != RESP_P_BULK) return 0;
    if (n > s->bulk_left) n = (size_t)s->bulk_left;
    if (s->compare) {
        const uint8_t *want = (const uint8_t *)s->expect + (s->expect_len - s->bulk_left);

        if (memcmp(p, want, n) != 0) {
            size_t i = 0;

            while (p[i] == want[i])
                i++;
            codec_depart(&s->verdict, CODEC_ERR_BODY, at + i);
            s->compare = false;
        }
    }
    s->bulk_left -= n;
    if (s->bulk_left == 0) s->ps = RESP_P_BULK_CR;
    return n;
}

/* The reply ended after `used` bytes of this call: the verdict, and a fresh parser. */
static enum codec_rc finish(void *st, size_t used_n, size_t *used, struct codec_msg *msg)
{
    struct resp_state *s = st;
    enum codec_err v = s->verdict.err;
    size_t at = s->verdict.off;
    bool err_reply = s->err_reply;
    enum codec_redis_cmd cmd = s->cmd;

    *used = used_n;
    s->answered++;
    parse_reset(s);
    if (v != CODEC_ERR_NONE) return codec_fail(msg, v, at);
    *msg = (struct codec_msg){ .error_reply = err_reply, .kind = (unsigned)cmd };
    return CODEC_DONE;
}

static const struct codec_bytewise resp_bytewise = { take_bulk, step, finish };

static enum codec_rc resp_feed(void *st, const uint8_t *src, size_t len, size_t *used,
                               struct codec_msg *msg)
{
    struct resp_state *s = st;

    /* The usual +PONG / +OK whole in the buffer: one compare. */
    if (s->ps == RESP_P_TYPE && s->depth == 0 && s->want != NULL && len >= s->want_len + 3 &&
        src[0] == '+' && memcmp(src + 1, s->want, s->want_len) == 0 &&
        src[s->want_len + 1] == '\r' && src[s->want_len + 2] == '\n')
        return finish(s, s->want_len + 3, used, msg);

    return codec_feed_bytewise(&resp_bytewise, s, &s->off, src, len, used, msg);
}

static enum codec_rc resp_eof(void *st, struct codec_msg *msg)
{
    const struct resp_state *s = st;

    return codec_fail(msg, CODEC_ERR_MISMATCH, s->off);
}

/* ---- AUTH --------------------------------------------------------------- */

static bool resp_session(const struct codec_cfg *cfg)
{
    const struct resp_opts *o = cfg->opts;

    return o != NULL && o->password != NULL;
}

/* "*2\r\n$4\r\nAUTH\r\n$<len>\r\n<password>\r\n" into out; 0 when it does not fit. */
static size_t auth_request(const char *pw, uint8_t *out)
{
    size_t len = strlen(pw), n;
    uint8_t *p = out;

    if (len > RESP_MAX_PASSWORD) return 0;
    p = put(p, "*2\r\n$4\r\nAUTH\r\n$", 15);
    n = codec_put_dec((char *)p, len);
    p = put(p + n, "\r\n", 2);
    p = put(p, pw, len);
    p = put(p, "\r\n", 2);
    return (size_t)(p - out);
}

/* One byte of AUTH's reply line at reply offset at; DONE or ERROR once its LF is read. */
static enum codec_rc auth_byte(struct resp_state *s, uint8_t c, size_t at, struct codec_msg *msg)
{
    if (s->auth_type == 0) {
        if (c != '+' && c != '-') return codec_fail(msg, CODEC_ERR_MISMATCH, at);
        s->auth_type = c;
        s->auth_ok = c == '+';
        return CODEC_NEED_MORE;
    }
    if (s->auth_cr) {
        if (c != '\n') return codec_fail(msg, CODEC_ERR_MISMATCH, at);
        if (s->auth_type == '-') {
            *msg = (struct codec_msg){ .error_reply = true }; /* WRONGPASS, or no password set */
            return CODEC_ERROR;
        }
        return s->auth_ok && s->auth_len == 2 ? CODEC_DONE : codec_fail(msg, CODEC_ERR_MISMATCH, 1);
    }
    if (c == '\r') {
        s->auth_cr = true;
        return CODEC_NEED_MORE;
    }
    if (c == '\n') return codec_fail(msg, CODEC_ERR_MISMATCH, at);
    if (s->auth_len == RESP_MAX_LINE) return codec_fail(msg, CODEC_ERR_TOO_BIG, at);
    if (s->auth_len >= 2 || c != (uint8_t) "OK"[s->auth_len]) s->auth_ok = false;
    s->auth_len++;
    return CODEC_NEED_MORE;
}

/*
 * The session: AUTH with the password right after the connect, then its
 * reply: +OK is DONE; an error reply (-WRONGPASS, -ERR when the server has
 * no password) is ERROR with error_reply; anything else MISMATCH.
 */
static enum codec_rc resp_setup(void *st, const uint8_t *src, size_t len, size_t *used,
                                uint8_t *out, size_t *out_len, struct codec_msg *msg)
{
    struct resp_state *s = st;

    *used = 0;
    *out_len = 0;
    if (s->password == NULL) return CODEC_DONE;
    if (src == NULL || len == 0) { /* a new connection */
        s->auth_type = 0;
        s->auth_len = 0;
        s->auth_cr = false;
        *out_len = auth_request(s->password, out);
        return *out_len > 0 ? CODEC_NEED_MORE : codec_fail(msg, CODEC_ERR_TOO_BIG, 0);
    }
    for (size_t i = 0; i < len; i++) {
        size_t at = s->auth_type == 0 ? 0 : 1 + s->auth_len + (s->auth_cr ? 1 : 0);
        enum codec_rc rc = auth_byte(s, src[i], at, msg);
        if (rc != CODEC_NEED_MORE) {
            *used = i + 1;
            return rc;
        }
    }
    *used = len;
    return CODEC_NEED_MORE;
}

static const char *const resp_kinds[] = { "PING", "SET", "GET", NULL };

const struct codec_ops resp_codec = {
    .name = "redis",
    .kind_names = resp_kinds,
    .state_size = sizeof(struct resp_state),
    .fixed = false,
    .max_request = resp_max_request,
    .init = resp_init,
    .encode = resp_encode,
    .feed = resp_feed,
    .eof = resp_eof,
    .reset = resp_reset,
    .setup = resp_setup,
    .setup_cap = RESP_SETUP_CAP,
    .session = resp_session,
    .cycle = resp_cycle,
    .cycle_pos = resp_cycle_pos,
    .advance = resp_advance,
};
