/*
 * counts_code: the gamma-rice/1 encoding of a histogram's counters (see
 * counts_code.h). Bits are written into a zeroed byte buffer sized for the
 * longest code a counter can take, then turned into base64; they are read
 * straight from the base64 text, a sextet at a time.
 */
#include "evidence/counts_code.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hist.h"

/*
 * A count whose Rice quotient reaches RICE_ESCAPE is written as RICE_ESCAPE
 * one bits and then in Elias gamma, so that no count, however far above the
 * running mean, takes more than 16 + 127 bits.
 */
#define RICE_ESCAPE 16

/* The part of a count the running mean takes in: bounded, so the sum never wraps. */
#define TREND_CAP (1ULL << 32)

/*
 * The longest code of one counter: the index step in gamma (below 2^15: 29
 * bits) and an escaped count (16 + gamma of up to 2^64 - 1: 127 bits).
 */
#define MAX_COUNTER_BITS (29 + RICE_ESCAPE + 127)

static const char PAD = '=';
static const char b64_alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/*
 * The Rice parameter for the next count: the bit length of an eighth of the
 * running sum, which holds about four times the mean of the recent counts
 * less one; so k is about log2 of half that mean, where a Rice code is
 * shortest for counts spread as these are.
 */
static unsigned rice_k(uint64_t trend)
{
    uint64_t t = trend >> 3;

    return t == 0 ? 0 : 64 - (unsigned)__builtin_clzll(t);
}

/* The running sum after a count of v + 1: an exponential mean over the last few. */
static uint64_t trend_next(uint64_t trend, uint64_t v)
{
    return trend - (trend >> 2) + (v < TREND_CAP ? v : TREND_CAP);
}

struct bit_writer {
    uint8_t *buf; /* zeroed: only one bits are set */
    size_t pos;
};

/* The low n bits of v, most significant first. */
static void put_bits(struct bit_writer *w, uint64_t v, unsigned n)
{
    for (unsigned i = n; i-- > 0; w->pos++)
        if ((v >> i) & 1) w->buf[w->pos >> 3] |= (uint8_t)(0x80u >> (w->pos & 7));
}

/* v >= 1 in Elias gamma: as many zeros as v has bits after its first, then v. */
static void put_gamma(struct bit_writer *w, uint64_t v)
{
    unsigned len = 64 - (unsigned)__builtin_clzll(v);

    w->pos += len - 1;
    put_bits(w, v, len);
}

/* count >= 1 as a Rice code of count - 1 with parameter k, or escaped to gamma. */
static void put_rice(struct bit_writer *w, uint64_t count, unsigned k)
{
    uint64_t v = count - 1, q = v >> k;

    if (q >= RICE_ESCAPE) {
        put_bits(w, (1u << RICE_ESCAPE) - 1, RICE_ESCAPE);
        put_gamma(w, count);
        return;
    }
    put_bits(w, (((uint64_t)1 << q) - 1) << 1, (unsigned)q + 1); /* q ones, then a zero */
    put_bits(w, v, k);
}

char *base64_text(const uint8_t *buf, size_t len)
{
    char *out = xmalloc((len + 2) / 3 * 4 + 1), *o = out;

    for (size_t i = 0; i < len; i += 3) {
        uint32_t v = (uint32_t)buf[i] << 16;
        if (i + 1 < len) v |= (uint32_t)buf[i + 1] << 8;
        if (i + 2 < len) v |= buf[i + 2];
        o[0] = b64_alphabet[v >> 18];
        o[1] = b64_alphabet[(v >> 12) & 63];
        o[2] = b64_alphabet[(v >> 6) & 63];
        o[3] = b64_alphabet[v & 63];
        if (i + 1 >= len) o[2] = PAD;
        if (i + 2 >= len) o[3] = PAD;
        o += 4;
    }
    *o = '\0';
    return out;
}

char *counts_encode(const struct hist_pair *pairs, size_t n)
{
    struct bit_writer w = { .buf = xcalloc(n * ((MAX_COUNTER_BITS + 7) / 8) + 1, 1) };
    int64_t prev = -1;
    uint64_t trend = 0;
    char *out;

    for (size_t i = 0; i < n; i++) {
        assert((int64_t)pairs[i].idx > prev && pairs[i].idx < HIST_COUNTS);
        assert(pairs[i].count > 0);
        put_gamma(&w, (uint64_t)((int64_t)pairs[i].idx - prev));
        put_rice(&w, pairs[i].count, rice_k(trend));
        trend = trend_next(trend, pairs[i].count - 1);
        prev = pairs[i].idx;
    }
    out = base64_text(w.buf, (w.pos + 7) / 8);
    free(w.buf);
    return out;
}

/* The value of a base64 digit, or -1 for any other byte. */
static int b64_value(char c)
{
    const char *at = c != '\0' ? strchr(b64_alphabet, c) : NULL;

    return at != NULL ? (int)(at - b64_alphabet) : -1;
}

int counts_reader_init(struct counts_reader *r, const char *text, size_t len, uint64_t total,
                       struct hb_err *err)
{
    size_t pad = 0, digits;

    *r = (struct counts_reader){ .text = text, .total = total, .left = total, .prev = -1 };
    if (len % 4 != 0)
        return hb_fail(err, -EINVAL, "histogram counts: %zu characters, not base64", len);
    while (pad < 2 && pad < len && text[len - 1 - pad] == PAD)
        pad++;
    digits = len - pad;
    for (size_t i = 0; i < digits; i++)
        if (b64_value(text[i]) < 0)
            return hb_fail(err, -EINVAL, "histogram counts: character %zu is not base64", i);
    /* the last digit's bits past the stream's last byte: 2 or 4 of them, all zero */
    if (pad > 0 && (b64_value(text[digits - 1]) & (pad == 1 ? 3 : 15)) != 0)
        return hb_fail(err, -EINVAL, "histogram counts: base64 padding bits are not zero");
    r->nbits = (len / 4 * 3 - pad) * 8;
    return 0;
}

/* The next bit, or -1 past the end of the stream. */
static int get_bit(struct counts_reader *r)
{
    int v;

    if (r->pos >= r->nbits) return -1;
    v = b64_value(r->text[r->pos / 6]);
    return (v >> (5 - (int)(r->pos++ % 6))) & 1;
}

/* n bits (n <= 64) into *v, most significant first; -1 past the end. */
static int get_bits(struct counts_reader *r, unsigned n, uint64_t *v)
{
    *v = 0;
    for (unsigned i = 0; i < n; i++) {
        int b = get_bit(r);
        if (b < 0) return -1;
        *v = *v << 1 | (uint64_t)b;
    }
    return 0;
}

/* An Elias gamma code into *v (1 .. 2^64 - 1); -1 past the end or for a longer one. */
static int get_gamma(struct counts_reader *r, uint64_t *v)
{
    unsigned zeros = 0;
    int b;

    while ((b = get_bit(r)) == 0)
        if (++zeros > 63) return -1;
    if (b < 0 || get_bits(r, zeros, v) < 0) return -1;
    *v |= (uint64_t)1 << zeros;
    return 0;
}

/* A count: a Rice code with parameter k, or its gamma escape. -1 past the end. */
static int get_count(struct counts_reader *r, unsigned k, uint64_t *count)
{
    uint64_t q = 0, low;
    int b = -1;

    while (q < RICE_ESCAPE && (b = get_bit(r)) == 1)
        q++;
    if (q == RICE_ESCAPE) return get_gamma(r, count);
    if (b < 0 || get_bits(r, k, &low) < 0) return -1;
    *count = (q << k | low) + 1;
    return 0;
}

/* What is left after the last counter: fewer than 8 bits, all zero. */
static int counts_reader_end(struct counts_reader *r, struct hb_err *err)
{
    uint64_t rest;
    size_t n = r->nbits - r->pos;

    if (n >= 8 || get_bits(r, (unsigned)n, &rest) < 0 || rest != 0)
        return hb_fail(err, -EINVAL, "histogram counts: bits after the last counter");
    return 0;
}

int counts_reader_next(struct counts_reader *r, struct hist_pair *out, struct hb_err *err)
{
    uint64_t step, count;

    if (r->left == 0) return counts_reader_end(r, err);
    if (get_gamma(r, &step) < 0 || get_count(r, rice_k(r->trend), &count) < 0)
        return hb_fail(err, -EINVAL, "histogram counts add up to %llu, its total is %llu",
                       (unsigned long long)(r->total - r->left), (unsigned long long)r->total);
    if (step > (uint64_t)((int64_t)HIST_COUNTS - 1 - r->prev))
        return hb_fail(err, -EINVAL, "histogram counts: counter %zu: index outside 0..%zu", r->n,
                       (size_t)HIST_COUNTS - 1);
    if (count > r->left)
        return hb_fail(err, -EINVAL, "histogram counts add up to more than its total %llu",
                       (unsigned long long)r->total);
    r->n++;
    r->prev += (int64_t)step;
    r->left -= count;
    r->trend = trend_next(r->trend, count - 1);
    *out = (struct hist_pair){ .idx = (uint32_t)r->prev, .count = count };
    return 1;
}
