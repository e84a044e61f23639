/*
 * memcached: the reference memcached server's protocol part, a subset of the
 * text protocol (memcached's doc/protocol.txt), in memory and without
 * authentication (the text protocol has none without SASL).
 *
 * Commands: "get KEY..." (VALUE lines, then END), "set KEY FLAGS EXPTIME
 * BYTES [noreply]" and its data (STORED; the expiry is not kept), "delete KEY
 * [noreply]" (DELETED or NOT_FOUND), "stats" (pid, curr_items, cmd_get,
 * cmd_set, get_hits, get_misses, as memcached names them), "version",
 * "quit" (closes). Anything else is ERROR; a malformed command line is
 * "CLIENT_ERROR ..." and a close. Keys are 1 to 250 bytes. A value over
 * MCD_MAX_VALUE bytes, or a command line or set that cannot fit the receive
 * buffer, is answered "SERVER_ERROR ..." and the connection closed. Pipelined
 * requests are answered in order, as many per call as io->obuf has room for.
 *
 * The items are shared by every worker: MCD_STRIPES hash tables of fixed
 * size, each behind its own mutex, picked by the key's hash; an item is one
 * allocation (key, then value), replaced whole by a set.
 */
#include "server/server.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MCD_IN_CAP    ((size_t)80 * 1024) /* a 64 KiB set with room to spare */
#define MCD_OUT_CAP   ((size_t)80 * 1024) /* a 64 KiB get reply, and small ones after it */
#define MCD_MAX_VALUE ((size_t)64 * 1024)
#define MCD_MAX_KEY   250u
#define MCD_MAX_LINE  2048u /* a command line: get with several keys */
#define MCD_RESERVE   512u  /* obuf room every reply but a VALUE fits in */
#define MCD_STRIPES   64u
#define MCD_BUCKETS   4096u /* per stripe */

struct mcd_item {
    struct mcd_item *next;
    uint32_t flags;
    uint32_t klen;
    size_t vlen;
    uint8_t bytes[]; /* the key, then the value */
};

struct mcd_stripe {
    pthread_mutex_t lock;
    uint64_t items;
    struct mcd_item *bucket[MCD_BUCKETS];
};

struct mcd_store {
    struct mcd_stripe stripes[MCD_STRIPES];
    _Atomic uint64_t cmd_get, cmd_set, get_hits, get_misses;
};

/* FNV-1a. */
static uint64_t mcd_hash(const uint8_t *k, size_t n)
{
    uint64_t h = 14695981039346656037ULL;

    for (size_t i = 0; i < n; i++)
        h = (h ^ k[i]) * 1099511628211ULL;
    return h;
}

/* The link that holds the item of key k in its stripe (*link NULL: none). Lock held. */
static struct mcd_item **mcd_link(struct mcd_stripe *sp, uint64_t h, const uint8_t *k, size_t n)
{
    struct mcd_item **link = &sp->bucket[(h >> 6) % MCD_BUCKETS];

    while (*link != NULL && ((*link)->klen != n || memcmp((*link)->bytes, k, n) != 0))
        link = &(*link)->next;
    return link;
}

static struct mcd_stripe *mcd_stripe(struct mcd_store *st, uint64_t h)
{
    return &st->stripes[h % MCD_STRIPES];
}

static int mcd_create(const struct server_cfg *cfg, void **shared)
{
    struct mcd_store *st = calloc(1, sizeof(*st));
    unsigned i;

    UNUSED(cfg);
    if (st == NULL) return -ENOMEM;
    for (i = 0; i < MCD_STRIPES; i++)
        if (pthread_mutex_init(&st->stripes[i].lock, NULL) != 0) break;
    if (i < MCD_STRIPES) {
        while (i-- > 0)
            pthread_mutex_destroy(&st->stripes[i].lock);
        free(st);
        return -ENOMEM;
    }
    *shared = st;
    return 0;
}

static void mcd_destroy(void *shared)
{
    struct mcd_store *st = shared;

    if (st == NULL) return;
    for (unsigned i = 0; i < MCD_STRIPES; i++) {
        for (unsigned b = 0; b < MCD_BUCKETS; b++)
            for (struct mcd_item *it = st->stripes[i].bucket[b], *next; it != NULL; it = next) {
                next = it->next;
                free(it);
            }
        pthread_mutex_destroy(&st->stripes[i].lock);
    }
    free(st);
}

/* set: the item replaced whole. 0, or -ENOMEM. */
static int mcd_set(struct mcd_store *st, const uint8_t *k, size_t klen, uint32_t flags,
                   const uint8_t *v, size_t vlen)
{
    uint64_t h = mcd_hash(k, klen);
    struct mcd_stripe *sp = mcd_stripe(st, h);
    struct mcd_item *it = malloc(sizeof(*it) + klen + vlen), **link, *old;

    if (it == NULL) return -ENOMEM;
    it->flags = flags;
    it->klen = (uint32_t)klen;
    it->vlen = vlen;
    memcpy(it->bytes, k, klen);
    memcpy(it->bytes + klen, v, vlen);
    pthread_mutex_lock(&sp->lock);
    link = mcd_link(sp, h, k, klen);
    old = *link;
    it->next = old != NULL ? old->next : NULL;
    *link = it;
    if (old == NULL) sp->items++;
    pthread_mutex_unlock(&sp->lock);
    free(old);
    return 0;
}

/* delete: 1 when the key was there. */
static int mcd_del(struct mcd_store *st, const uint8_t *k, size_t klen)
{
    uint64_t h = mcd_hash(k, klen);
    struct mcd_stripe *sp = mcd_stripe(st, h);
    struct mcd_item **link, *it;

    pthread_mutex_lock(&sp->lock);
    link = mcd_link(sp, h, k, klen);
    it = *link;
    if (it != NULL) {
        *link = it->next;
        sp->items--;
    }
    pthread_mutex_unlock(&sp->lock);
    free(it);
    return it != NULL;
}

/* A reply being built in obuf. */
struct mcd_out {
    uint8_t *buf;
    size_t len, cap;
};

static void out_str(struct mcd_out *o, const char *s)
{
    size_t n = strlen(s);

    if (n > o->cap - o->len) n = o->cap - o->len;
    memcpy(o->buf + o->len, s, n);
    o->len += n;
}

/*
 * One key's VALUE lines, or nothing on a miss. False when they do not fit the
 * room left (nothing written).
 */
static bool mcd_get(struct mcd_store *st, const uint8_t *k, size_t klen, struct mcd_out *o)
{
    uint64_t h = mcd_hash(k, klen);
    struct mcd_stripe *sp = mcd_stripe(st, h);
    const struct mcd_item *it;
    bool fits = true, hit;

    pthread_mutex_lock(&sp->lock);
    it = *mcd_link(sp, h, k, klen);
    hit = it != NULL;
    if (hit) {
        char head[MCD_MAX_KEY + 64];
        int n = snprintf(head, sizeof(head), "VALUE %.*s %u %zu\r\n", (int)klen, (const char *)k,
                         (unsigned)it->flags, it->vlen);
        fits = n > 0 && (size_t)n + it->vlen + 2 + MCD_RESERVE <= o->cap - o->len;
        if (fits) {
            memcpy(o->buf + o->len, head, (size_t)n);
            memcpy(o->buf + o->len + (size_t)n, it->bytes + it->klen, it->vlen);
            memcpy(o->buf + o->len + (size_t)n + it->vlen, "\r\n", 2);
            o->len += (size_t)n + it->vlen + 2;
        }
    }
    pthread_mutex_unlock(&sp->lock);
    if (fits)
        atomic_fetch_add_explicit(hit ? &st->get_hits : &st->get_misses, 1, memory_order_relaxed);
    return fits;
}

/* The words of a command line (at most 8; more are one more word, refused by the commands). */
struct mcd_words {
    const uint8_t *p[9];
    size_t n[9];
    unsigned count;
};

static void split_words(const uint8_t *line, size_t len, struct mcd_words *w)
{
    size_t i = 0;

    w->count = 0;
    while (i < len && w->count < ARRAY_LEN(w->p)) {
        while (i < len && line[i] == ' ')
            i++;
        if (i == len) break;
        w->p[w->count] = line + i;
        while (i < len && line[i] != ' ')
            i++;
        w->n[w->count] = (size_t)(line + i - w->p[w->count]);
        w->count++;
    }
}

static bool word_is(const struct mcd_words *w, unsigned i, const char *s)
{
    return i < w->count && w->n[i] == strlen(s) && memcmp(w->p[i], s, w->n[i]) == 0;
}

/* A decimal word into *v (at most max): 0, or -1. */
static int word_num(const struct mcd_words *w, unsigned i, uint64_t max, uint64_t *v)
{
    *v = 0;
    if (i >= w->count || w->n[i] == 0 || w->n[i] > 20) return -1;
    for (size_t j = 0; j < w->n[i]; j++) {
        unsigned d = (unsigned)(w->p[i][j] - '0');
        if (d > 9 || *v > (max - d) / 10) return -1;
        *v = *v * 10 + d;
    }
    return 0;
}

/* A key: 1 to 250 bytes, no control character (the words have no space). */
static bool key_ok(const struct mcd_words *w, unsigned i)
{
    if (i >= w->count || w->p[i] == NULL || w->n[i] == 0 || w->n[i] > MCD_MAX_KEY) return false;
    for (size_t j = 0; j < w->n[i]; j++)
        if (w->p[i][j] < 0x21 || w->p[i][j] == 0x7f) return false;
    return true;
}

enum mcd_step { MCD_NEXT, MCD_WAIT, MCD_CLOSE, MCD_ERROR };

struct mcd_ctx {
    struct mcd_store *st;
    struct server_io *io;
    struct mcd_out *o;
};

/* set KEY FLAGS EXPTIME BYTES [noreply], its data at rest[0..avail). *used: bytes taken. */
static enum mcd_step do_set(struct mcd_ctx *c, const struct mcd_words *w, const uint8_t *rest,
                            size_t avail, size_t *used)
{
    uint64_t flags, exptime, bytes;
    bool noreply = word_is(w, 5, "noreply");

    if (!key_ok(w, 1) || word_num(w, 2, UINT32_MAX, &flags) < 0 ||
        word_num(w, 3, UINT32_MAX, &exptime) < 0 || word_num(w, 4, UINT32_MAX, &bytes) < 0 ||
        w->count > (noreply ? 6u : 5u)) {
        out_str(c->o, "CLIENT_ERROR bad command line format\r\n");
        return MCD_ERROR;
    }
    if (bytes > MCD_MAX_VALUE) {
        out_str(c->o, "SERVER_ERROR object too large for cache\r\n");
        return MCD_ERROR;
    }
    if (avail < bytes + 2) return MCD_WAIT;
    if (rest[bytes] != '\r' || rest[bytes + 1] != '\n') {
        out_str(c->o, "CLIENT_ERROR bad data chunk\r\n");
        return MCD_ERROR;
    }
    *used = (size_t)bytes + 2;
    atomic_fetch_add_explicit(&c->st->cmd_set, 1, memory_order_relaxed);
    if (w->p[1] == NULL || /* key_ok said it is not; for the analyzer */
        mcd_set(c->st, w->p[1], w->n[1], (uint32_t)flags, rest, (size_t)bytes) < 0) {
        out_str(c->o, "SERVER_ERROR out of memory storing object\r\n");
        return MCD_NEXT;
    }
    if (!noreply) out_str(c->o, "STORED\r\n");
    return MCD_NEXT;
}

/* get KEY...: all of them, or none and MCD_WAIT when they do not fit obuf now. */
static enum mcd_step do_get(struct mcd_ctx *c, const struct mcd_words *w)
{
    size_t mark = c->o->len;

    if (w->count < 2) {
        out_str(c->o, "ERROR\r\n");
        return MCD_NEXT;
    }
    for (unsigned i = 1; i < w->count; i++) {
        if (!key_ok(w, i)) {
            c->o->len = mark;
            out_str(c->o, "CLIENT_ERROR bad command line format\r\n");
            return MCD_ERROR;
        }
        if (!mcd_get(c->st, w->p[i], w->n[i], c->o)) {
            c->o->len = mark;
            return MCD_WAIT;
        }
    }
    atomic_fetch_add_explicit(&c->st->cmd_get, w->count - 1, memory_order_relaxed);
    out_str(c->o, "END\r\n");
    return MCD_NEXT;
}

static void do_stats(struct mcd_ctx *c)
{
    struct mcd_store *st = c->st;
    uint64_t items = 0;
    char text[MCD_RESERVE];

    for (unsigned i = 0; i < MCD_STRIPES; i++) {
        pthread_mutex_lock(&st->stripes[i].lock);
        items += st->stripes[i].items;
        pthread_mutex_unlock(&st->stripes[i].lock);
    }
    snprintf(text, sizeof(text),
             "STAT pid %ld\r\nSTAT curr_items %llu\r\nSTAT cmd_get %llu\r\nSTAT cmd_set %llu\r\n"
             "STAT get_hits %llu\r\nSTAT get_misses %llu\r\nEND\r\n",
             (long)getpid(), (unsigned long long)items,
             (unsigned long long)atomic_load(&st->cmd_get),
             (unsigned long long)atomic_load(&st->cmd_set),
             (unsigned long long)atomic_load(&st->get_hits),
             (unsigned long long)atomic_load(&st->get_misses));
    out_str(c->o, text);
}

/* One command line (without its CR LF); rest: the bytes after it. */
static enum mcd_step command(struct mcd_ctx *c, const uint8_t *line, size_t len,
                             const uint8_t *rest, size_t avail, size_t *used)
{
    struct mcd_words w = { .count = 0 };

    *used = 0;
    split_words(line, len, &w);
    if (word_is(&w, 0, "get") || word_is(&w, 0, "gets")) return do_get(c, &w);
    if (word_is(&w, 0, "set")) return do_set(c, &w, rest, avail, used);
    if (word_is(&w, 0, "delete") && key_ok(&w, 1) &&
        (w.count == 2 || (w.count == 3 && word_is(&w, 2, "noreply")))) {
        int found = mcd_del(c->st, w.p[1], w.n[1]);
        if (w.count == 2) out_str(c->o, found ? "DELETED\r\n" : "NOT_FOUND\r\n");
        return MCD_NEXT;
    }
    if (word_is(&w, 0, "stats") && w.count == 1) {
        do_stats(c);
        return MCD_NEXT;
    }
    if (word_is(&w, 0, "version") && w.count == 1) {
        out_str(c->o, "VERSION hopbench\r\n");
        return MCD_NEXT;
    }
    if (word_is(&w, 0, "quit")) return MCD_CLOSE;
    out_str(c->o, "ERROR\r\n");
    return MCD_NEXT;
}

static size_t mcd_process(void *shared, struct server_io *io, const uint8_t *in, size_t len)
{
    struct mcd_out o = { .buf = io->obuf, .len = 0, .cap = io->obuf != NULL ? io->ocap : 0 };
    struct mcd_ctx c = { .st = shared, .io = io, .o = &o };
    size_t pos = 0;

    io->answered = 0;
    while (pos < len && o.cap - o.len >= MCD_RESERVE) {
        const uint8_t *lf = memchr(in + pos, '\n', len - pos);
        size_t end, used = 0;
        enum mcd_step s;

        if (lf == NULL) {
            if (len - pos > MCD_MAX_LINE || (pos == 0 && len >= MCD_IN_CAP)) goto too_large;
            break;
        }
        end = (size_t)(lf - in);
        if (end == pos || in[end - 1] != '\r') {
            out_str(&o, "CLIENT_ERROR line not ended by CR LF\r\n");
            goto error;
        }
        s = command(&c, in + pos, end - 1 - pos, lf + 1, len - end - 1, &used);
        if (s == MCD_WAIT) {
            if (pos == 0 && len >= MCD_IN_CAP) goto too_large;
            break;
        }
        if (s == MCD_ERROR) goto error;
        pos = end + 1 + used;
        io->answered++;
        if (s == MCD_CLOSE) {
            io->close = true;
            break;
        }
    }
    if (o.cap < MCD_RESERVE) {
        io->out = (const uint8_t *)"SERVER_ERROR reply buffer too small\r\n";
        io->out_len = strlen((const char *)io->out);
        return SERVER_PROTO_ERROR;
    }
    io->out = o.len > 0 ? o.buf : NULL;
    io->out_len = o.len;
    return pos;
too_large:
    out_str(&o, "SERVER_ERROR request too large\r\n");
error:
    io->out = o.buf;
    io->out_len = o.len;
    return SERVER_PROTO_ERROR;
}

const struct server_proto server_memcached = {
    .name = "memcached",
    .conn_size = 0,
    .in_cap = MCD_IN_CAP,
    .out_cap = MCD_OUT_CAP,
    .create = mcd_create,
    .destroy = mcd_destroy,
    .process = mcd_process,
};
