/*
 * test_sendq: the open loop's send-time heap against a sorted reference.
 * Nodes come out in non-decreasing intended time, each exactly once, ties
 * included; remove and re-push (how a connection is rescheduled) keep that
 * order; "due" is checked at the exact boundary. Random keys come from a
 * fixed-seed xorshift so a failure reproduces.
 */
/* cmocka.h needs these four first, in this order */
/* clang-format off */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
/* clang-format on */

#include <stdlib.h>
#include <string.h>

#include "engine/sendq.h"

#define N_RANDOM 4096
#define SEED     0x9e3779b97f4a7c15ULL

/* xorshift64*: tiny, deterministic, good enough to spread keys. */
static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545f4914f6cdd1dULL;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

    return (x > y) - (x < y);
}

static struct sendq_node *nodes_new(size_t n)
{
    struct sendq_node *v = calloc(n, sizeof(*v));

    assert_non_null(v);
    for (size_t i = 0; i < n; i++)
        v[i].idx = SENDQ_NONE;
    return v;
}

/*
 * Pops everything and checks it against `want` (sorted): same keys in the same
 * order, each node of v[0..nv-1] at most once, each marked not queued.
 */
static void drain_matches(struct sendq *q, const uint64_t *want, size_t n,
                          const struct sendq_node *v, size_t nv)
{
    unsigned char *seen = calloc(nv, 1);
    struct sendq_node *x;

    assert_non_null(seen);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(sendq_next(q), want[i]);
        x = sendq_pop_due(q, UINT64_MAX);
        assert_non_null(x);
        assert_int_equal(x->at, want[i]);
        assert_int_equal(x->idx, SENDQ_NONE);
        assert_true(x >= v && x < v + nv);
        assert_false(seen[x - v]);
        seen[x - v] = 1;
    }
    free(seen);
    assert_int_equal(q->n, 0);
    assert_int_equal(sendq_next(q), UINT64_MAX);
    assert_null(sendq_pop_due(q, UINT64_MAX));
}

/* The key of the node due by now, which must exist. */
static uint64_t pop_due_at(struct sendq *q, uint64_t now)
{
    struct sendq_node *x = sendq_pop_due(q, now);

    assert_non_null(x);
    return x->at;
}

static void test_empty(void **state)
{
    struct sendq q;

    (void)state;
    assert_int_equal(sendq_init(&q, 4), 0);
    assert_int_equal(sendq_next(&q), UINT64_MAX);
    assert_null(sendq_pop_due(&q, 0));
    assert_null(sendq_pop_due(&q, UINT64_MAX));
    sendq_release(&q);
    assert_null(q.h);

    /* A thread with no connections still gets a usable, empty queue. */
    assert_int_equal(sendq_init(&q, 0), 0);
    assert_int_equal(sendq_next(&q), UINT64_MAX);
    assert_null(sendq_pop_due(&q, UINT64_MAX));
    sendq_release(&q);
}

static void test_due_boundary(void **state)
{
    struct sendq q;
    struct sendq_node a = { .at = 100, .idx = SENDQ_NONE };

    (void)state;
    assert_int_equal(sendq_init(&q, 1), 0);
    sendq_push(&q, &a);
    assert_int_not_equal(a.idx, SENDQ_NONE);
    assert_int_equal(sendq_next(&q), 100);
    assert_null(sendq_pop_due(&q, 99));
    assert_int_equal(q.n, 1);
    assert_ptr_equal(sendq_pop_due(&q, 100), &a);
    assert_int_equal(a.idx, SENDQ_NONE);
    assert_int_equal(sendq_next(&q), UINT64_MAX);
    sendq_release(&q);
}

static void test_order_with_ties(void **state)
{
    static const uint64_t keys[] = { 50, 10, 30, 10, 50, 20, 10, 40, 30, 0 };
    enum { N = sizeof(keys) / sizeof(keys[0]) };
    uint64_t want[N];
    struct sendq_node *v = nodes_new(N);
    struct sendq q;

    (void)state;
    assert_int_equal(sendq_init(&q, N), 0);
    for (size_t i = 0; i < N; i++) {
        v[i].at = keys[i];
        sendq_push(&q, &v[i]);
    }
    assert_int_equal(q.n, N); /* full: cap nodes queued */
    memcpy(want, keys, sizeof(keys));
    qsort(want, N, sizeof(want[0]), cmp_u64);

    /* Only what is due comes out: the three 10s by 10, then nothing more. */
    assert_int_equal(pop_due_at(&q, 10), 0);
    for (int i = 0; i < 3; i++)
        assert_int_equal(pop_due_at(&q, 10), 10);
    assert_null(sendq_pop_due(&q, 19));
    drain_matches(&q, want + 4, N - 4, v, N);
    sendq_release(&q);
    free(v);
}

static void test_remove_and_repush(void **state)
{
    enum { N = 7 };
    struct sendq_node *v = nodes_new(N);
    struct sendq q;
    uint64_t want[N];

    (void)state;
    assert_int_equal(sendq_init(&q, N), 0);
    for (size_t i = 0; i < N; i++) {
        v[i].at = 10 * (i + 1); /* 10..70 */
        sendq_push(&q, &v[i]);
    }
    sendq_remove(&q, &v[0]); /* the root */
    assert_int_equal(v[0].idx, SENDQ_NONE);
    assert_int_equal(sendq_next(&q), 20);
    sendq_remove(&q, &v[3]); /* a middle node */
    sendq_remove(&q, &v[3]); /* not queued any more: no effect */
    assert_int_equal(q.n, N - 2);

    /* Rescheduling: a queued node pushed again moves, it is not queued twice. */
    v[6].at = 5;
    sendq_push(&q, &v[6]);
    assert_int_equal(q.n, N - 2);
    assert_int_equal(sendq_next(&q), 5);
    v[1].at = 65;
    sendq_push(&q, &v[1]);
    assert_int_equal(q.n, N - 2);
    /* A removed node can be queued again. */
    v[0].at = 35;
    sendq_push(&q, &v[0]);

    {
        const uint64_t expect[] = { 5, 30, 35, 50, 60, 65 };
        memcpy(want, expect, sizeof(expect));
        drain_matches(&q, want, sizeof(expect) / sizeof(expect[0]), v, N);
    }
    sendq_release(&q);
    free(v);
}

/*
 * Random keys (with many ties from a narrow range), random removes and
 * reschedules, against a sorted copy of what should remain.
 */
static void test_random_vs_sort(void **state)
{
    struct sendq_node *v = nodes_new(N_RANDOM);
    uint64_t *want = malloc(N_RANDOM * sizeof(*want));
    uint64_t s = SEED;
    struct sendq q;
    size_t n = 0;

    (void)state;
    assert_non_null(want);
    assert_int_equal(sendq_init(&q, N_RANDOM), 0);
    for (size_t i = 0; i < N_RANDOM; i++) {
        v[i].at = (i % 2) ? rng_next(&s) : rng_next(&s) % 64;
        sendq_push(&q, &v[i]);
    }
    for (size_t i = 0; i < N_RANDOM; i++) {
        uint64_t r = rng_next(&s) % 4;
        if (r == 0) {
            sendq_remove(&q, &v[i]);
        } else if (r == 1) {
            v[i].at = rng_next(&s) % 1000;
            sendq_push(&q, &v[i]);
        }
    }
    for (size_t i = 0; i < N_RANDOM; i++)
        if (v[i].idx != SENDQ_NONE) want[n++] = v[i].at;
    assert_int_equal(q.n, n);
    qsort(want, n, sizeof(want[0]), cmp_u64);
    drain_matches(&q, want, n, v, N_RANDOM);
    for (size_t i = 0; i < N_RANDOM; i++)
        assert_int_equal(v[i].idx, SENDQ_NONE);
    sendq_release(&q);
    free(want);
    free(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty),           cmocka_unit_test(test_due_boundary),
        cmocka_unit_test(test_order_with_ties), cmocka_unit_test(test_remove_and_repush),
        cmocka_unit_test(test_random_vs_sort),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
