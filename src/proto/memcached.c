/*
 * memcached: the text protocol's client codec (see memcached.h). A reply is
 * read line by line into the state's buffer (a line is judged once its LF
 * came), a value's data counted past without a copy.
 */
#include "proto/memcached.h"

#include <stdbool.h>
#include <string.h>

#define KEY_PREFIX     "key:"
#define KEY_DIGITS_MAX 20

enum mc_parse {
    MC_P_LINE,    /* in a line, before its CR */
    MC_P_LF,      /* its CR came: LF must follow */
    MC_P_DATA,    /* a value's data, data_left bytes to go */
    MC_P_DATA_CR, /* the data ended: CR must follow */
    MC_P_DATA_LF, /* then LF */
};

struct mc_state {
    /* request side */
    const struct memcached_opts *opts;
    uint64_t sent;     /* requests encoded */
    uint64_t answered; /* replies complete, and requests given up by reset() */
    uint64_t keys;
    uint64_t first_key; /* this connection's first key */
    size_t size;        /* SET value bytes; what a mix's GET must read */
    bool filled;        /* every key was SET before the run: a GET reads size bytes */

    /* reply side */
    enum mc_parse ps;
    char line[MEMCACHED_MAX_LINE];
    size_t line_len;
    size_t line_start; /* reply offset of the line's first byte */
    size_t off;        /* reply bytes before this feed call */
    bool after_value;  /* a GET's VALUE and data came: END must follow */
    uint64_t data_left;
    struct codec_verdict verdict; /* the first departure from the wanted reply */
    bool err_reply;
};

static const struct memcached_opts no_opts; /* opts should not be NULL: GET */

static unsigned cmd_of(const struct mc_state *s, uint64_t n)
{
    unsigned c = codec_mix_pick(&s->opts->command, n);

    return c == MEMCACHED_SET ? MEMCACHED_SET : MEMCACHED_GET;
}

/* The key number of request n. */
static uint64_t key_of(const struct mc_state *s, uint64_t n)
{
    uint64_t k = n % s->keys;

    return s->first_key >= s->keys - k ? s->first_key - (s->keys - k) : s->first_key + k;
}

/* s (without its NUL) at p; returns p past it. */
static char *put_str(char *p, const char *s)
{
    while (*s != '\0')
        *p++ = *s++;
    return p;
}

static uint64_t cfg_keys(const struct memcached_opts *o)
{
    return o->keys == 0 ? 1 : o->keys;
}

/* Bytes of one request of cmd; SIZE_MAX when the value is too large to count. */
static size_t request_len(unsigned cmd, size_t key_digits, size_t size)
{
    size_t key = sizeof(KEY_PREFIX) - 1 + key_digits;

    if (cmd == MEMCACHED_GET) return 4 + key + 2;
    if (size > SIZE_MAX - 128 - key) return SIZE_MAX;
    return 4 + key + 5 + codec_dec_len(size) + 2 + size +
           2; /* "set " KEY " 0 0 " SIZE CRLF DATA CRLF */
}

static size_t mc_max_request(const struct codec_cfg *cfg)
{
    const struct memcached_opts *o = cfg->opts != NULL ? cfg->opts : &no_opts;
    size_t digits = codec_dec_len(cfg_keys(o) - 1);
    bool set = o->command.len > 0 ? codec_mix_has(&o->command, MEMCACHED_SET)
                                  : o->command.cmd == MEMCACHED_SET;

    return request_len(set ? MEMCACHED_SET : MEMCACHED_GET, digits, cfg->size);
}

static void parse_reset(struct mc_state *s)
{
    s->ps = MC_P_LINE;
    s->line_len = 0;
    s->line_start = 0;
    s->off = 0;
    s->after_value = false;
    s->data_left = 0;
    s->verdict = (struct codec_verdict){ CODEC_ERR_NONE, 0 };
    s->err_reply = false;
}

static void mc_init(void *st, const struct codec_cfg *cfg)
{
    struct mc_state *s = st;
    const struct memcached_opts *o = cfg->opts != NULL ? cfg->opts : &no_opts;

    memset(s, 0, sizeof(*s));
    s->opts = o;
    s->keys = cfg_keys(o);
    s->first_key = codec_key_start(s->keys, cfg->conn_index);
    s->size = cfg->size;
    s->filled = o->filled;
    parse_reset(s);
}

static size_t mc_encode(void *st, uint8_t *dst, size_t cap)
{
    struct mc_state *s = st;
    unsigned cmd = cmd_of(s, s->sent);
    uint64_t key = key_of(s, s->sent);
    char *p = (char *)dst;

    if (request_len(cmd, codec_dec_len(key), s->size) > cap) return 0;
    p = put_str(p, cmd == MEMCACHED_SET ? "set " KEY_PREFIX : "get " KEY_PREFIX);
    p += codec_put_dec(p, key);
    if (cmd == MEMCACHED_SET) {
        p = put_str(p, " 0 0 ");
        p += codec_put_dec(p, s->size);
        p = put_str(p, "\r\n");
        memset(p, MEMCACHED_VALUE_BYTE, s->size);
        p += s->size;
    }
    p = put_str(p, "\r\n");
    s->sent++;
    return (size_t)(p - (char *)dst);
}

/* Forgets a partial reply: every request sent is given up, the next one's reply comes next. */
static void mc_reset(void *st)
{
    struct mc_state *s = st;

    s->answered = s->sent;
    parse_reset(s);
}

static bool line_is(const struct mc_state *s, const char *word)
{
    return s->line_len == strlen(word) && memcmp(s->line, word, s->line_len) == 0;
}

static bool line_starts(const struct mc_state *s, const char *word)
{
    size_t n = strlen(word);

    return s->line_len >= n && memcmp(s->line, word, n) == 0;
}

/* A decimal of 1 to 20 digits at *p (within end) into *v, *p past it; -1: none or too large. */
static int take_num(const char **p, const char *end, uint64_t *v)
{
    size_t n = 0;

    *v = 0;
    while (*p + n < end && (*p)[n] >= '0' && (*p)[n] <= '9') {
        unsigned d = (unsigned)((*p)[n] - '0');
        if (*v > (UINT64_MAX - d) / 10) return -1;
        *v = *v * 10 + d;
        n++;
    }
    *p += n;
    return n > 0 ? 0 : -1;
}

/*
 * "VALUE key:N FLAGS BYTES [CAS]": the key the answered GET asked for, the
 * flags a u32; the data's length into s. Returns the framing error it makes.
 */
static enum codec_err on_value(struct mc_state *s)
{
    char want[sizeof(KEY_PREFIX) + KEY_DIGITS_MAX];
    size_t wlen = sizeof(KEY_PREFIX) - 1;
    const char *p = s->line + 6, *end = s->line + s->line_len;
    uint64_t flags, bytes, cas;

    memcpy(want, KEY_PREFIX, wlen);
    wlen += codec_put_dec(want + wlen, key_of(s, s->answered));
    if ((size_t)(end - p) < wlen + 1 || memcmp(p, want, wlen) != 0 || p[wlen] != ' ')
        return CODEC_ERR_MISMATCH;
    p += wlen + 1;
    if (take_num(&p, end, &flags) < 0 || flags > UINT32_MAX || p == end || *p++ != ' ')
        return CODEC_ERR_MISMATCH;
    if (take_num(&p, end, &bytes) < 0) return CODEC_ERR_MISMATCH;
    if (p < end && (*p++ != ' ' || take_num(&p, end, &cas) < 0 || p != end))
        return CODEC_ERR_MISMATCH;
    if (bytes > MEMCACHED_MAX_VALUE) return CODEC_ERR_TOO_BIG;
    if (s->filled && bytes != s->size) codec_depart(&s->verdict, CODEC_ERR_BODY, s->line_start + 6);
    s->data_left = bytes;
    s->after_value = true;
    s->ps = bytes > 0 ? MC_P_DATA : MC_P_DATA_CR;
    return CODEC_ERR_NONE;
}

/*
 * A line's LF came: what it says of the reply. Sets *done when it ends the
 * reply; returns the framing error it makes (at the line's first byte).
 */
static enum codec_err on_line(struct mc_state *s, bool *done)
{
    unsigned cmd = cmd_of(s, s->answered);

    s->ps = MC_P_LINE;
    if (!s->after_value && (line_is(s, "ERROR") || line_starts(s, "CLIENT_ERROR ") ||
                            line_starts(s, "SERVER_ERROR "))) {
        s->err_reply = true;
        *done = true;
        return CODEC_ERR_NONE;
    }
    if (cmd == MEMCACHED_SET && !s->after_value) {
        if (line_is(s, "NOT_STORED") || line_is(s, "EXISTS") || line_is(s, "NOT_FOUND"))
            s->err_reply = true;
        else if (!line_is(s, "STORED"))
            return CODEC_ERR_MISMATCH;
        *done = true;
        return CODEC_ERR_NONE;
    }
    if (line_is(s, "END")) {
        if (!s->after_value && s->filled) codec_depart(&s->verdict, CODEC_ERR_BODY, s->line_start);
        *done = true;
        return CODEC_ERR_NONE;
    }
    if (!s->after_value && cmd == MEMCACHED_GET && line_starts(s, "VALUE ")) return on_value(s);
    return CODEC_ERR_MISMATCH;
}

/* One byte outside a value's data. Returns the framing error it makes, *err_at where. */
static enum codec_err step(void *st, uint8_t c, size_t at, bool *done, size_t *err_at)
{
    struct mc_state *s = st;
    enum codec_err e;

    *err_at = at;
    switch (s->ps) {
    case MC_P_LINE:
        if (s->line_len == 0) s->line_start = at;
        if (c == '\r') {
            s->ps = MC_P_LF;
            return CODEC_ERR_NONE;
        }
        if (c == '\n') return CODEC_ERR_MISMATCH;
        if (s->line_len == sizeof(s->line)) {
            *err_at = s->line_start;
            return CODEC_ERR_TOO_BIG;
        }
        s->line[s->line_len++] = (char)c;
        return CODEC_ERR_NONE;
    case MC_P_LF:
        if (c != '\n') return CODEC_ERR_MISMATCH;
        e = on_line(s, done);
        s->line_len = 0;
        if (e != CODEC_ERR_NONE) *err_at = s->line_start;
        return e;
    case MC_P_DATA_CR:
        if (c != '\r') return CODEC_ERR_MISMATCH;
        s->ps = MC_P_DATA_LF;
        return CODEC_ERR_NONE;
    case MC_P_DATA_LF:
        if (c != '\n') return CODEC_ERR_MISMATCH;
        s->ps = MC_P_LINE;
        return CODEC_ERR_NONE;
    case MC_P_DATA:
        break;
    }
    return CODEC_ERR_MISMATCH; /* unreachable: DATA is counted past by take_data */
}

/* The reply ended after `n` bytes of this call: the verdict, and a fresh parser. */
static enum codec_rc finish(void *st, size_t n, size_t *used, struct codec_msg *msg)
{
    struct mc_state *s = st;
    enum codec_err v = s->verdict.err;
    size_t at = s->verdict.off;
    bool err_reply = s->err_reply;
    unsigned cmd = cmd_of(s, s->answered);

    *used = n;
    s->answered++;
    parse_reset(s);
    if (v != CODEC_ERR_NONE) return codec_fail(msg, v, at);
    *msg = (struct codec_msg){ .error_reply = err_reply, .kind = cmd };
    return CODEC_DONE;
}

/* A value's data, up to len bytes of it counted past; 0 outside the data. */
static size_t take_data(void *st, const uint8_t *src, size_t len, size_t at)
{
    struct mc_state *s = st;
    size_t n = len < s->data_left ? len : (size_t)s->data_left;

    (void)src;
    (void)at;
    if (s->ps != MC_P_DATA) return 0;
    s->data_left -= n;
    if (s->data_left == 0) s->ps = MC_P_DATA_CR;
    return n;
}

static const struct codec_bytewise mc_bytewise = { take_data, step, finish };

static enum codec_rc mc_feed(void *st, const uint8_t *src, size_t len, size_t *used,
                             struct codec_msg *msg)
{
    struct mc_state *s = st;

    return codec_feed_bytewise(&mc_bytewise, s, &s->off, src, len, used, msg);
}

static enum codec_rc mc_eof(void *st, struct codec_msg *msg)
{
    const struct mc_state *s = st;

    return codec_fail(msg, CODEC_ERR_MISMATCH, s->off);
}

static const char *const mc_kinds[] = { [MEMCACHED_GET] = "get", [MEMCACHED_SET] = "set", NULL };

const struct codec_ops memcached_codec = {
    .name = "memcached",
    .kind_names = mc_kinds,
    .state_size = sizeof(struct mc_state),
    .fixed = false,
    .max_request = mc_max_request,
    .init = mc_init,
    .encode = mc_encode,
    .feed = mc_feed,
    .eof = mc_eof,
    .reset = mc_reset,
};
