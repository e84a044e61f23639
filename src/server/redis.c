/*
 * redis: the reference Redis server's protocol part, a RESP2 subset.
 *
 * Requests are RESP arrays of bulk strings, or inline lines split on spaces
 * (no quoting) for nc/telnet. Commands: PING [msg], ECHO msg, GET k, SET k v
 * (no options), DEL k..., DBSIZE, FLUSHALL [ASYNC|SYNC], INFO [section] (a
 * "# Stats" bulk with total_commands_processed), QUIT (+OK, then close).
 * Anything else is "-ERR unknown command '<name>'". Pipelined requests are
 * answered in order, as many per call as io->obuf has room for.
 *
 * The store is shared by every worker: REDIS_STRIPES hash tables, each behind
 * its own mutex, picked by the top bits of the key's hash. Keys and values are
 * copied in (one allocation per entry, reused in place when a new value fits).
 * Limits, each with its own reply:
 *   - a value (the last argument of any request) over REDIS_MAX_VALUE bytes:
 *     "-ERR value too large", not executed, its bytes skipped as they arrive
 *     (the connection stays usable; only the declared length is trusted);
 *   - any other request that cannot fit the REDIS_IN_CAP receive buffer, or
 *     a bulk length over 512 MiB: "-ERR Protocol error: ..." and
 *     SERVER_PROTO_ERROR (the frame sends it and closes), as for any malformed
 *     request;
 *   - the store past REDIS_MAX_MEMORY bytes: the OOM error Redis gives.
 * A GET reply that does not fit the room left in obuf ends the call (the
 * frame sends what is built and calls again); one that cannot fit even an
 * empty obuf is answered with an error.
 */
#include "server/server.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REDIS_IN_CAP     ((size_t)80 * 1024) /* a 64 KiB SET with room to spare */
#define REDIS_OUT_CAP    ((size_t)80 * 1024) /* a 64 KiB GET reply, and small ones after it */
#define REDIS_MAX_VALUE  ((size_t)64 * 1024)
#define REDIS_MAX_BULK   ((int64_t)512 * 1024 * 1024) /* Redis' proto-max-bulk-len */
#define REDIS_MAX_ARGS   256
#define REDIS_RESERVE    256 /* obuf room that every reply but a bulk fits in */
#define REDIS_NAME_MAX   64  /* bytes of an unknown command's name quoted back */
#define REDIS_STRIPES    64  /* a power of two; the hash's top bits pick one */
#define REDIS_BUCKETS0   64  /* buckets per stripe at start; doubled at load 1 */
#define REDIS_MAX_MEMORY ((size_t)1 << 30)

/* ---- store -------------------------------------------------------------- */

static const uint8_t nil_reply[] = { '$', '-', '1', '\r', '\n' }; /* no NUL: raw bytes */
static const uint8_t crlf[] = { '\r', '\n' };

struct redis_entry {
    struct redis_entry *next;
    uint64_t hash;
    size_t klen, vlen, vcap;
    uint8_t data[]; /* the key, then vcap bytes for the value */
};

struct redis_bucket {
    struct redis_entry *head;
};

struct redis_stripe {
    _Alignas(64) pthread_mutex_t lock; /* a cache line of its own: no false sharing */
    struct redis_bucket *buckets;
    size_t nbuckets; /* a power of two */
    size_t count;
};

struct redis_store {
    struct redis_stripe stripes[REDIS_STRIPES];
    atomic_size_t bytes;        /* held by entries: the REDIS_MAX_MEMORY budget */
    atomic_uint_least64_t cmds; /* commands processed, for INFO */
};

/* FNV-1a, then a murmur3 finaliser so the top bits (the stripe) mix well. */
static uint64_t key_hash(const uint8_t *k, size_t n)
{
    uint64_t h = 0xcbf29ce484222325u;

    for (size_t i = 0; i < n; i++)
        h = (h ^ k[i]) * 0x100000001b3u;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdu;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53u;
    return h ^ (h >> 33);
}

static struct redis_stripe *stripe_of(struct redis_store *st, uint64_t h)
{
    return &st->stripes[h >> 58]; /* 64 stripes: the top 6 bits */
}

static size_t entry_bytes(size_t klen, size_t vcap)
{
    return sizeof(struct redis_entry) + klen + vcap;
}

/* The link that points at the key's entry, or the chain's terminating NULL. Lock held. */
static struct redis_entry **stripe_find(struct redis_stripe *sp, uint64_t h, const uint8_t *k,
                                        size_t klen)
{
    struct redis_entry **link = &sp->buckets[h & (sp->nbuckets - 1)].head;

    for (; *link != NULL; link = &(*link)->next) {
        const struct redis_entry *e = *link;

        if (e->hash == h && e->klen == klen && memcmp(e->data, k, klen) == 0) break;
    }
    return link;
}

/* Doubles the buckets once the load passes 1. On ENOMEM the chains just grow. Lock held. */
static void stripe_grow(struct redis_stripe *sp)
{
    size_t n = sp->nbuckets * 2;
    struct redis_bucket *nb;

    if (sp->count <= sp->nbuckets) return;
    nb = calloc(n, sizeof(*nb));
    if (nb == NULL) return;
    for (size_t i = 0; i < sp->nbuckets; i++) {
        for (struct redis_entry *e = sp->buckets[i].head, *next; e != NULL; e = next) {
            next = e->next;
            e->next = nb[e->hash & (n - 1)].head;
            nb[e->hash & (n - 1)].head = e;
        }
    }
    free(sp->buckets);
    sp->buckets = nb;
    sp->nbuckets = n;
}

static void entry_free(struct redis_store *st, struct redis_entry *e)
{
    if (e == NULL) return;
    atomic_fetch_sub_explicit(&st->bytes, entry_bytes(e->klen, e->vcap), memory_order_relaxed);
    free(e);
}

/* A new entry, within the memory budget; NULL with *rc = -ENOSPC or -ENOMEM. */
static struct redis_entry *entry_new(struct redis_store *st, uint64_t h, const uint8_t *k,
                                     size_t klen, const uint8_t *v, size_t vlen, int *rc)
{
    size_t need = entry_bytes(klen, vlen);
    size_t was = atomic_fetch_add_explicit(&st->bytes, need, memory_order_relaxed);
    struct redis_entry *e;

    if (was + need > REDIS_MAX_MEMORY) {
        atomic_fetch_sub_explicit(&st->bytes, need, memory_order_relaxed);
        *rc = -ENOSPC;
        return NULL;
    }
    e = malloc(need);
    if (e == NULL) {
        atomic_fetch_sub_explicit(&st->bytes, need, memory_order_relaxed);
        *rc = -ENOMEM;
        return NULL;
    }
    *e = (struct redis_entry){ .hash = h, .klen = klen, .vlen = vlen, .vcap = vlen };
    memcpy(e->data, k, klen);
    memcpy(e->data + klen, v, vlen);
    return e;
}

/* SET: 0, -ENOSPC (over the memory budget) or -ENOMEM. */
static int store_set(struct redis_store *st, const uint8_t *k, size_t klen, const uint8_t *v,
                     size_t vlen)
{
    uint64_t h = key_hash(k, klen);
    struct redis_stripe *sp = stripe_of(st, h);
    struct redis_entry **link, *e, *old = NULL;
    int rc = 0;

    pthread_mutex_lock(&sp->lock);
    link = stripe_find(sp, h, k, klen);
    if (*link != NULL && (*link)->vcap >= vlen) { /* the usual case: same size again */
        memcpy((*link)->data + klen, v, vlen);
        (*link)->vlen = vlen;
        goto out;
    }
    e = entry_new(st, h, k, klen, v, vlen, &rc);
    if (e == NULL) goto out;
    old = *link;
    e->next = old != NULL ? old->next : NULL;
    *link = e;
    if (old == NULL) {
        sp->count++;
        stripe_grow(sp);
    }
out:
    pthread_mutex_unlock(&sp->lock);
    entry_free(st, old);
    return rc;
}

static size_t dec_len(size_t v)
{
    size_t n = 1;

    while (v >= 10) {
        v /= 10;
        n++;
    }
    return n;
}

/* "$<n>\r\n" (no NUL), returning its length. */
static size_t bulk_header(uint8_t *dst, size_t n)
{
    size_t d = dec_len(n);

    dst[0] = '$';
    for (size_t i = d; i > 0; i--, n /= 10)
        dst[i] = (uint8_t)('0' + n % 10);
    dst[d + 1] = '\r';
    dst[d + 2] = '\n';
    return d + 3;
}

/* Bytes of a bulk reply of n bytes. */
static size_t bulk_reply_len(size_t n)
{
    return 1 + dec_len(n) + 2 + n + 2;
}

/*
 * GET: writes "$<n>\r\n<value>\r\n", or "$-1\r\n" when there is no such key,
 * into dst[0..room). Returns the bytes written, or 0 when they need more than
 * room: *need then says how many (so the caller knows whether any obuf could).
 */
static size_t store_get_reply(struct redis_store *st, const uint8_t *k, size_t klen, uint8_t *dst,
                              size_t room, size_t *need)
{
    uint64_t h = key_hash(k, klen);
    struct redis_stripe *sp = stripe_of(st, h);
    const struct redis_entry *e;
    size_t n = 0;

    pthread_mutex_lock(&sp->lock);
    e = *stripe_find(sp, h, k, klen);
    *need = e != NULL ? bulk_reply_len(e->vlen) : sizeof(nil_reply);
    if (*need <= room && e == NULL) {
        n = sizeof(nil_reply);
        memcpy(dst, nil_reply, n);
    } else if (*need <= room) {
        n = bulk_header(dst, e->vlen);
        memcpy(dst + n, e->data + e->klen, e->vlen);
        memcpy(dst + n + e->vlen, crlf, 2);
        n += e->vlen + 2;
    }
    pthread_mutex_unlock(&sp->lock);
    return n;
}

/* DEL of one key: 1 if it was there, else 0. */
static int store_del(struct redis_store *st, const uint8_t *k, size_t klen)
{
    uint64_t h = key_hash(k, klen);
    struct redis_stripe *sp = stripe_of(st, h);
    struct redis_entry **link, *e;

    pthread_mutex_lock(&sp->lock);
    link = stripe_find(sp, h, k, klen);
    e = *link;
    if (e != NULL) {
        *link = e->next;
        sp->count--;
    }
    pthread_mutex_unlock(&sp->lock);
    entry_free(st, e);
    return e != NULL;
}

static uint64_t store_count(struct redis_store *st)
{
    uint64_t n = 0;

    for (size_t i = 0; i < REDIS_STRIPES; i++) {
        pthread_mutex_lock(&st->stripes[i].lock);
        n += st->stripes[i].count;
        pthread_mutex_unlock(&st->stripes[i].lock);
    }
    return n;
}

/*
 * Frees every entry of one stripe. Lock held (or no other thread left). An
 * empty stripe is left alone: FLUSHALL and teardown of a store with few keys
 * then skip its thousands of empty buckets.
 */
static void stripe_clear(struct redis_store *st, struct redis_stripe *sp)
{
    if (sp->count == 0) return;
    for (size_t i = 0; i < sp->nbuckets; i++) {
        for (struct redis_entry *e = sp->buckets[i].head, *next; e != NULL; e = next) {
            next = e->next;
            entry_free(st, e);
        }
        sp->buckets[i].head = NULL;
    }
    sp->count = 0;
}

static void store_flush(struct redis_store *st)
{
    for (size_t i = 0; i < REDIS_STRIPES; i++) {
        pthread_mutex_lock(&st->stripes[i].lock);
        stripe_clear(st, &st->stripes[i]);
        pthread_mutex_unlock(&st->stripes[i].lock);
    }
}

/* Releases stripes[0..n) and the store. */
static void store_free(struct redis_store *st, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (st->stripes[i].buckets != NULL) stripe_clear(st, &st->stripes[i]);
        free(st->stripes[i].buckets);
        pthread_mutex_destroy(&st->stripes[i].lock);
    }
    free(st);
}

static int redis_create(const struct server_cfg *cfg, void **shared)
{
    struct redis_store *st = aligned_alloc(64, sizeof(*st)); /* sizeof is a multiple of 64 */
    size_t i;
    int rc = 0;

    UNUSED(cfg);
    if (st == NULL) return -ENOMEM;
    memset(st, 0, sizeof(*st));
    atomic_init(&st->bytes, 0);
    atomic_init(&st->cmds, 0);
    for (i = 0; i < REDIS_STRIPES && rc == 0; i++) {
        struct redis_stripe *sp = &st->stripes[i];

        rc = -pthread_mutex_init(&sp->lock, NULL);
        if (rc != 0) break;
        sp->nbuckets = REDIS_BUCKETS0;
        sp->buckets = calloc(REDIS_BUCKETS0, sizeof(*sp->buckets));
        if (sp->buckets == NULL) rc = -ENOMEM;
    }
    if (rc != 0) {
        store_free(st, rc == -ENOMEM ? i + 1 : i);
        return rc;
    }
    *shared = st;
    return 0;
}

static void redis_destroy(void *shared)
{
    if (shared != NULL) store_free(shared, REDIS_STRIPES);
}

/* ---- requests ----------------------------------------------------------- */

struct redis_arg {
    const uint8_t *p;
    size_t len;
};

enum redis_parse {
    REDIS_PARSE_OK = 0,  /* a whole request: argv[0..argc), `len` bytes */
    REDIS_PARSE_PARTIAL, /* more bytes needed */
    REDIS_PARSE_EMPTY,   /* `len` bytes that ask nothing (*0, *-1, a blank line) */
    REDIS_PARSE_SKIP,    /* argv[0..argc-1) read; the last argument is too large: `len`
                          * bytes read, `skip` more to drop */
    REDIS_PARSE_BAD,     /* malformed or too large: `why` says how */
};

struct redis_req {
    struct redis_arg argv[REDIS_MAX_ARGS];
    unsigned argc;
    size_t len;
    uint64_t skip;
    const char *why;
};

/* Per connection: the bytes of a too-large value still to drop. Zeroed at accept. */
struct redis_conn {
    uint64_t skip;
};

static enum redis_parse bad(struct redis_req *r, const char *why)
{
    r->why = why;
    return REDIS_PARSE_BAD;
}

/* A decimal line "[-]digits\r\n" from p[*pos]; on OK *pos is past it. */
static enum redis_parse parse_num_line(const uint8_t *p, size_t len, size_t *pos, int64_t *v)
{
    size_t i = *pos, nd = 0;
    bool neg = i < len && p[i] == '-';
    int64_t n = 0;

    if (neg) i++;
    for (; i < len && p[i] >= '0' && p[i] <= '9'; i++) {
        if (++nd > 18) return REDIS_PARSE_BAD; /* every cap is far below 10^18 */
        n = n * 10 + (p[i] - '0');
    }
    if (i == len || (p[i] == '\r' && i + 1 == len)) return REDIS_PARSE_PARTIAL;
    if (nd == 0 || p[i] != '\r' || p[i + 1] != '\n') return REDIS_PARSE_BAD;
    *pos = i + 2;
    *v = neg ? -n : n;
    return REDIS_PARSE_OK;
}

/* One "$<n>\r\n<bytes>\r\n" argument at p[*pos], the k-th of `argc`. */
static enum redis_parse parse_bulk(const uint8_t *p, size_t len, size_t *pos, struct redis_req *r,
                                   unsigned k, unsigned argc)
{
    size_t i = *pos;
    int64_t n;
    enum redis_parse rc;

    if (i == len) return REDIS_PARSE_PARTIAL;
    if (p[i] != '$') return bad(r, "expected '$'");
    i++;
    rc = parse_num_line(p, len, &i, &n);
    if (rc == REDIS_PARSE_BAD || (rc == REDIS_PARSE_OK && (n < 0 || n > REDIS_MAX_BULK)))
        return bad(r, "invalid bulk length");
    if (rc != REDIS_PARSE_OK) return rc;
    if (k + 1 == argc && (size_t)n > REDIS_MAX_VALUE) {
        r->len = i;
        r->skip = (uint64_t)n + 2; /* the CRLF too: dropped unread */
        return REDIS_PARSE_SKIP;
    }
    if (i > REDIS_IN_CAP || (size_t)n + 2 > REDIS_IN_CAP - i) return bad(r, "request too large");
    if ((size_t)n + 2 > len - i) return REDIS_PARSE_PARTIAL;
    if (p[i + (size_t)n] != '\r' || p[i + (size_t)n + 1] != '\n') return bad(r, "expected CRLF");
    r->argv[k] = (struct redis_arg){ .p = p + i, .len = (size_t)n };
    *pos = i + (size_t)n + 2;
    return REDIS_PARSE_OK;
}

/* "*<n>\r\n" and n bulk strings. */
static enum redis_parse parse_multibulk(const uint8_t *p, size_t len, struct redis_req *r)
{
    size_t pos = 1;
    int64_t n;
    enum redis_parse rc = parse_num_line(p, len, &pos, &n);

    if (rc == REDIS_PARSE_BAD || (rc == REDIS_PARSE_OK && n > REDIS_MAX_ARGS))
        return bad(r, "invalid multibulk length");
    if (rc != REDIS_PARSE_OK) return rc;
    if (n <= 0) {
        r->len = pos;
        return REDIS_PARSE_EMPTY;
    }
    r->argc = (unsigned)n;
    for (unsigned k = 0; k < r->argc; k++) {
        rc = parse_bulk(p, len, &pos, r, k, r->argc);
        if (rc != REDIS_PARSE_OK) return rc;
    }
    r->len = pos;
    return REDIS_PARSE_OK;
}

/* A line of words separated by spaces or tabs, ending in LF (or CRLF). */
static enum redis_parse parse_inline(const uint8_t *p, size_t len, struct redis_req *r)
{
    const uint8_t *nl = memchr(p, '\n', len);
    size_t end, i = 0;

    if (nl == NULL) return REDIS_PARSE_PARTIAL;
    r->len = (size_t)(nl - p) + 1;
    end = r->len - 1;
    if (end > 0 && p[end - 1] == '\r') end--;
    r->argc = 0;
    for (;;) {
        size_t start;

        while (i < end && (p[i] == ' ' || p[i] == '\t'))
            i++;
        if (i == end) break;
        if (r->argc == REDIS_MAX_ARGS) return bad(r, "too many arguments");
        start = i;
        while (i < end && p[i] != ' ' && p[i] != '\t')
            i++;
        r->argv[r->argc++] = (struct redis_arg){ .p = p + start, .len = i - start };
    }
    return r->argc == 0 ? REDIS_PARSE_EMPTY : REDIS_PARSE_OK;
}

static enum redis_parse parse_request(const uint8_t *p, size_t len, struct redis_req *r)
{
    r->argc = 0;
    r->len = 0;
    r->skip = 0;
    r->why = NULL;
    return p[0] == '*' ? parse_multibulk(p, len, r) : parse_inline(p, len, r);
}

/* ---- replies ------------------------------------------------------------ */

struct redis_out {
    uint8_t *buf;
    size_t len, cap;
};

static size_t out_room(const struct redis_out *o)
{
    return o->cap - o->len;
}

/* Appends n bytes; the caller made sure of the room (REDIS_RESERVE or an exact count). */
static void out_put(struct redis_out *o, const void *p, size_t n)
{
    memcpy(o->buf + o->len, p, n);
    o->len += n;
}

static void out_str(struct redis_out *o, const char *s)
{
    out_put(o, s, strlen(s));
}

static void out_fmt(struct redis_out *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void out_fmt(struct redis_out *o, const char *fmt, ...)
{
    size_t room = out_room(o);
    va_list ap;
    int n;

    if (room == 0) return;
    va_start(ap, fmt);
    n = vsnprintf((char *)o->buf + o->len, room, fmt, ap);
    va_end(ap);
    if (n > 0) o->len += (size_t)n < room ? (size_t)n : room - 1; /* cut short, never past */
}

/* A bulk reply of n bytes, or an error when even an empty obuf could not hold it. */
static bool out_bulk(struct redis_out *o, const uint8_t *p, size_t n)
{
    size_t need = bulk_reply_len(n);

    if (need > o->cap) {
        out_str(o, "-ERR reply too large\r\n");
        return true;
    }
    if (need > out_room(o)) return false;
    o->len += bulk_header(o->buf + o->len, n);
    out_put(o, p, n);
    out_put(o, crlf, 2);
    return true;
}

/* ---- commands ----------------------------------------------------------- */

enum redis_exec {
    REDIS_EXEC_OK = 0, /* answered */
    REDIS_EXEC_FULL,   /* not executed: the reply needs more room than obuf has left */
    REDIS_EXEC_CLOSE,  /* answered; close the connection after the reply */
};

struct redis_ctx {
    struct redis_store *st;
    struct redis_req *r;
    struct redis_out *o;
    uint64_t cmds; /* commands this call has processed before this one */
};

struct redis_cmd {
    const char *name; /* lower case, as Redis quotes it */
    int arity;        /* argc, or at least -arity when negative (Redis' convention) */
    enum redis_exec (*fn)(struct redis_ctx *c);
};

static bool arg_is(const struct redis_arg *a, const char *name)
{
    size_t n = strlen(name);

    if (a->len != n) return false;
    for (size_t i = 0; i < n; i++) {
        uint8_t ch = a->p[i];

        if (ch >= 'A' && ch <= 'Z') ch = (uint8_t)(ch - 'A' + 'a');
        if (ch != (uint8_t)name[i]) return false;
    }
    return true;
}

static enum redis_exec cmd_ping(struct redis_ctx *c)
{
    if (c->r->argc == 1) {
        out_str(c->o, "+PONG\r\n");
        return REDIS_EXEC_OK;
    }
    if (c->r->argc > 2) {
        out_str(c->o, "-ERR wrong number of arguments for 'ping' command\r\n");
        return REDIS_EXEC_OK;
    }
    return out_bulk(c->o, c->r->argv[1].p, c->r->argv[1].len) ? REDIS_EXEC_OK : REDIS_EXEC_FULL;
}

static enum redis_exec cmd_echo(struct redis_ctx *c)
{
    return out_bulk(c->o, c->r->argv[1].p, c->r->argv[1].len) ? REDIS_EXEC_OK : REDIS_EXEC_FULL;
}

static enum redis_exec cmd_get(struct redis_ctx *c)
{
    const struct redis_arg *k = &c->r->argv[1];
    struct redis_out *o = c->o;
    size_t need, n = store_get_reply(c->st, k->p, k->len, o->buf + o->len, out_room(o), &need);

    if (n > 0) {
        o->len += n;
        return REDIS_EXEC_OK;
    }
    if (need <= o->cap) return REDIS_EXEC_FULL; /* fits once obuf is sent */
    out_str(o, "-ERR reply too large\r\n");
    return REDIS_EXEC_OK;
}

static enum redis_exec cmd_set(struct redis_ctx *c)
{
    const struct redis_arg *k = &c->r->argv[1], *v = &c->r->argv[2];
    int rc;

    if (c->r->argc > 3) {
        out_str(c->o, "-ERR syntax error\r\n");
        return REDIS_EXEC_OK;
    }
    rc = store_set(c->st, k->p, k->len, v->p, v->len);
    if (rc == 0)
        out_str(c->o, "+OK\r\n");
    else if (rc == -ENOSPC)
        out_str(c->o, "-OOM command not allowed when used memory > 'maxmemory'.\r\n");
    else
        out_str(c->o, "-ERR out of memory\r\n");
    return REDIS_EXEC_OK;
}

static enum redis_exec cmd_del(struct redis_ctx *c)
{
    long long n = 0;

    for (unsigned i = 1; i < c->r->argc; i++)
        n += store_del(c->st, c->r->argv[i].p, c->r->argv[i].len);
    out_fmt(c->o, ":%lld\r\n", n);
    return REDIS_EXEC_OK;
}

static enum redis_exec cmd_dbsize(struct redis_ctx *c)
{
    out_fmt(c->o, ":%llu\r\n", (unsigned long long)store_count(c->st));
    return REDIS_EXEC_OK;
}

static enum redis_exec cmd_flushall(struct redis_ctx *c)
{
    const struct redis_arg *a = &c->r->argv[1];

    if (c->r->argc > 2 || (c->r->argc == 2 && !arg_is(a, "async") && !arg_is(a, "sync"))) {
        out_str(c->o, "-ERR syntax error\r\n");
        return REDIS_EXEC_OK;
    }
    store_flush(c->st);
    out_str(c->o, "+OK\r\n");
    return REDIS_EXEC_OK;
}

static enum redis_exec cmd_info(struct redis_ctx *c)
{
    uint64_t n = atomic_load_explicit(&c->st->cmds, memory_order_relaxed) + c->cmds;
    char body[96];
    int len = snprintf(body, sizeof(body), "# Stats\r\ntotal_commands_processed:%llu\r\n",
                       (unsigned long long)n);

    out_fmt(c->o, "$%d\r\n%s\r\n", len, body);
    return REDIS_EXEC_OK;
}

static enum redis_exec cmd_quit(struct redis_ctx *c)
{
    out_str(c->o, "+OK\r\n");
    return REDIS_EXEC_CLOSE;
}

static const struct redis_cmd redis_cmds[] = {
    { "get", 2, cmd_get },
    { "set", -3, cmd_set },
    { "ping", -1, cmd_ping },
    { "echo", 2, cmd_echo },
    { "del", -2, cmd_del },
    { "dbsize", 1, cmd_dbsize },
    { "flushall", -1, cmd_flushall },
    { "info", -1, cmd_info },
    { "quit", -1, cmd_quit },
};

/* "-ERR unknown command '<name>'", the name cut short and made printable. */
static void out_unknown(struct redis_out *o, const struct redis_arg *name)
{
    size_t n = name->len < REDIS_NAME_MAX ? name->len : REDIS_NAME_MAX;

    out_str(o, "-ERR unknown command '");
    for (size_t i = 0; i < n; i++) {
        uint8_t ch = name->p[i];

        o->buf[o->len++] = ch < 0x20 || ch >= 0x7f ? '?' : ch;
    }
    out_str(o, "'\r\n");
}

/* Runs one whole request. obuf has REDIS_RESERVE bytes of room at least. */
static enum redis_exec execute(struct redis_ctx *c)
{
    const struct redis_req *r = c->r;

    for (size_t i = 0; i < ARRAY_LEN(redis_cmds); i++) {
        const struct redis_cmd *cmd = &redis_cmds[i];

        if (!arg_is(&r->argv[0], cmd->name)) continue;
        if (cmd->arity > 0 ? r->argc != (unsigned)cmd->arity : r->argc < (unsigned)-cmd->arity) {
            out_fmt(c->o, "-ERR wrong number of arguments for '%s' command\r\n", cmd->name);
            return REDIS_EXEC_OK;
        }
        return cmd->fn(c);
    }
    out_unknown(c->o, &r->argv[0]);
    return REDIS_EXEC_OK;
}

/* ---- process ------------------------------------------------------------ */

/* Drops up to `len` bytes of a too-large value; returns how many. */
static size_t take_skip(struct redis_conn *cs, size_t len)
{
    size_t n = cs->skip < len ? (size_t)cs->skip : len;

    cs->skip -= n;
    return n;
}

/*
 * One request at in[*pos]: parsed and executed, its reply in o. Returns
 * false to stop this call (partial request, obuf full, close or error; *rc
 * says SERVER_PROTO_ERROR for an error), true to go on to the next request.
 */
static bool serve_one(struct redis_ctx *c, struct redis_conn *cs, struct server_io *io,
                      const uint8_t *in, size_t len, size_t *pos, size_t *rc)
{
    struct redis_req *r = c->r;
    enum redis_parse pr = parse_request(in + *pos, len - *pos, r);
    enum redis_exec ex;

    switch (pr) {
    case REDIS_PARSE_PARTIAL:
        if (*pos == 0 && len >= REDIS_IN_CAP) { /* the buffer is full of one request */
            out_str(c->o, "-ERR Protocol error: request too large\r\n");
            *rc = SERVER_PROTO_ERROR;
        }
        return false;
    case REDIS_PARSE_BAD:
        out_fmt(c->o, "-ERR Protocol error: %s\r\n", r->why);
        *rc = SERVER_PROTO_ERROR;
        return false;
    case REDIS_PARSE_EMPTY:
        *pos += r->len;
        return true;
    case REDIS_PARSE_SKIP:
        out_str(c->o, "-ERR value too large\r\n");
        *pos += r->len;
        cs->skip = r->skip;
        *pos += take_skip(cs, len - *pos);
        io->answered++;
        return true;
    case REDIS_PARSE_OK:
        break;
    }
    ex = execute(c);
    if (ex == REDIS_EXEC_FULL) return false;
    *pos += r->len;
    io->answered++;
    if (ex == REDIS_EXEC_CLOSE) io->close = true;
    return ex != REDIS_EXEC_CLOSE;
}

static size_t redis_process(void *shared, struct server_io *io, const uint8_t *in, size_t len)
{
    struct redis_conn *cs = io->state;
    struct redis_out o = { .buf = io->obuf, .len = 0, .cap = io->obuf != NULL ? io->ocap : 0 };
    struct redis_req req;
    struct redis_ctx c = { .st = shared, .r = &req, .o = &o, .cmds = 0 };
    size_t pos = take_skip(cs, len), rc = 0;

    io->answered = 0;
    while (pos < len && rc == 0) {
        if (out_room(&o) < REDIS_RESERVE) {
            if (o.len > 0) break; /* sent first, then called again */
            io->out = (const uint8_t *)"-ERR reply buffer too small\r\n";
            io->out_len = strlen((const char *)io->out);
            return SERVER_PROTO_ERROR; /* out_cap below REDIS_RESERVE: a build error */
        }
        c.cmds = io->answered;
        if (!serve_one(&c, cs, io, in, len, &pos, &rc)) break;
    }
    /* One shared add per call, not per command: the counter is not on each request's path. */
    if (io->answered > 0)
        atomic_fetch_add_explicit(&c.st->cmds, io->answered, memory_order_relaxed);
    io->out = o.len > 0 ? o.buf : NULL;
    io->out_len = o.len;
    return rc != 0 ? rc : pos;
}

const struct server_proto server_redis = {
    .name = "redis",
    .conn_size = sizeof(struct redis_conn),
    .in_cap = REDIS_IN_CAP,
    .out_cap = REDIS_OUT_CAP,
    .create = redis_create,
    .destroy = redis_destroy,
    .process = redis_process,
};
