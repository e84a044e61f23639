/*
 * codec: what the codecs share beyond their interface (codec.h): the kinds
 * of an SQL mix and a statement's random id.
 */
#include "proto/codec.h"

#include <errno.h>

const char *const codec_sql_kinds[CODEC_SQL_MAX + 1] = { "sql1", "sql2", "sql3", "sql4", NULL };

/* A decimal of 1 to CODEC_SQL_ID_DIGITS digits at *p, which then points past it; -1: none. */
static int id_number(const char **p, uint64_t *v)
{
    size_t n = 0;

    *v = 0;
    while ((*p)[n] >= '0' && (*p)[n] <= '9') {
        if (++n > CODEC_SQL_ID_DIGITS) return -1;
        *v = *v * 10 + (uint64_t)((*p)[n - 1] - '0');
    }
    *p += n;
    return n > 0 ? 0 : -1;
}

int codec_sql_id_parse(const char *sql, struct codec_sql_id *id)
{
    const char *at = strstr(sql, CODEC_SQL_ID_OPEN), *p;
    uint64_t lo, hi;

    memset(id, 0, sizeof(*id));
    if (at == NULL) return 0;
    p = at + strlen(CODEC_SQL_ID_OPEN);
    if (id_number(&p, &lo) < 0 || *p++ != '-' || id_number(&p, &hi) < 0 || *p++ != '}' || lo > hi)
        return -EINVAL;
    if (strstr(p, CODEC_SQL_ID_OPEN) != NULL) return -EINVAL;
    id->at = (size_t)(at - sql);
    id->len = (size_t)(p - at);
    id->lo = lo;
    id->span = hi - lo + 1;
    return 0;
}

/* xorshift64*: a quick generator whose state is never 0. */
static uint64_t id_next(uint64_t *rng)
{
    uint64_t x = *rng;

    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *rng = x;
    return x * 0x2545F4914F6CDD1DULL;
}

/* Uniform in lo .. lo + span - 1: draws above the last whole multiple of span are drawn again. */
static uint64_t id_draw(const struct codec_sql_id *id, uint64_t *rng)
{
    uint64_t limit = UINT64_MAX - UINT64_MAX % id->span, r;

    do
        r = id_next(rng);
    while (r >= limit);
    return id->lo + r % id->span;
}

size_t codec_sql_id_write(const char *sql, size_t len, const struct codec_sql_id *id, uint64_t *rng,
                          uint8_t *dst)
{
    char digits[CODEC_SQL_ID_DIGITS];
    size_t n = 0, tail;
    uint64_t v;

    if (id->len == 0) {
        memcpy(dst, sql, len);
        return len;
    }
    v = id_draw(id, rng);
    do {
        digits[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v > 0);
    memcpy(dst, sql, id->at);
    for (size_t i = 0; i < n; i++)
        dst[id->at + i] = (uint8_t)digits[n - 1 - i];
    tail = len - id->at - id->len;
    memcpy(dst + id->at + n, sql + id->at + id->len, tail);
    return id->at + n + tail;
}

/* How many statements o sends: those given, else the one (or the default). */
static unsigned sql_count(const struct codec_sql *o)
{
    return o->nsql > 1 ? (o->nsql < CODEC_SQL_MAX ? o->nsql : CODEC_SQL_MAX) : 1;
}

bool codec_sql_varies(const struct codec_sql *o)
{
    struct codec_sql_id id;

    if (o->nsql > 1) return true;
    return codec_sql_id_parse(codec_sql_text(o, 0, ""), &id) == 0 && id.len > 0;
}

size_t codec_sql_max_len(const struct codec_sql *o, const char *dflt)
{
    size_t max = 0;

    for (unsigned i = 0; i < sql_count(o); i++) {
        const char *q = codec_sql_text(o, i, dflt);
        struct codec_sql_id id;
        size_t n = strlen(q);
        if (codec_sql_id_parse(q, &id) == 0 && id.len > 0) n += CODEC_SQL_ID_DIGITS;
        if (n > max) max = n;
    }
    return max;
}

static uint64_t gcd_u64(uint64_t a, uint64_t b)
{
    while (b != 0) {
        uint64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* (a + b) mod m for a, b < m, without overflow. */
static uint64_t add_mod(uint64_t a, uint64_t b, uint64_t m)
{
    return a >= m - b ? a - (m - b) : a + b;
}

/* (a * b) mod m for a, b < m, by doubling: no 128-bit type needed. */
static uint64_t mul_mod(uint64_t a, uint64_t b, uint64_t m)
{
    uint64_t r = 0;

    for (; a > 0; a >>= 1) {
        if (a & 1) r = add_mod(r, b, m);
        b = add_mod(b, b, m);
    }
    return r;
}

/*
 * A stride coprime to keys makes i -> i * stride a permutation of the key
 * space, and a stride near the golden ratio puts consecutive connections far
 * apart in it.
 */
uint64_t codec_key_start(uint64_t keys, unsigned conn)
{
    uint64_t stride;

    if (keys <= 2) return conn % keys;
    stride = (uint64_t)((double)keys * 0.6180339887498949);
    if (stride == 0) stride = 1;
    while (gcd_u64(stride, keys) != 1) /* stops at keys - 1 at the latest */
        stride++;
    return mul_mod(conn % keys, stride, keys);
}

size_t codec_dec_len(uint64_t v)
{
    size_t n = 1;

    while (v >= 10) {
        v /= 10;
        n++;
    }
    return n;
}

size_t codec_put_dec(char *dst, uint64_t v)
{
    size_t n = codec_dec_len(v);

    for (size_t i = n; i > 0; i--) {
        dst[i - 1] = (char)('0' + v % 10);
        v /= 10;
    }
    return n;
}
