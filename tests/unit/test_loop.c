/*
 * test_loop: the timeout queue and the epoll loop without the load engine.
 * The queue is driven with made-up clock values, so expiry is checked at exact
 * boundaries with no real time involved. The loop is checked only on what does
 * not depend on timing: a readable pipe reaches its handler with EPOLLIN, a
 * zero timeout returns at once, a removed fd is no longer reported, and work a
 * handler defers runs once, after every handler of that batch of events.
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
#include <fcntl.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "engine/loop.h"

#define DELAY 1000ULL
#define NNODE 5

/* Collects every node that has expired by `now`, in the order the queue gives them. */
static size_t pop_all(struct tq *q, uint64_t now, struct tq_node **out, size_t max)
{
    struct tq_node *n;
    size_t k = 0;

    while ((n = tq_pop_expired(q, now)) != NULL) {
        assert_true(k < max);
        assert_false(tq_armed(n));
        assert_true(n->deadline_ns <= now);
        out[k++] = n;
    }
    return k;
}

static void test_empty(void **state)
{
    struct tq q;

    (void)state;
    tq_init(&q, DELAY);
    assert_int_equal(tq_next(&q), UINT64_MAX);
    assert_null(tq_pop_expired(&q, 0));
    assert_null(tq_pop_expired(&q, UINT64_MAX));
}

static void test_arm_and_expire_at_boundary(void **state)
{
    struct tq q;
    struct tq_node n = { 0 };

    (void)state;
    tq_init(&q, DELAY);
    assert_false(tq_armed(&n));
    tq_arm(&q, &n, 500);
    assert_true(tq_armed(&n));
    assert_int_equal(n.deadline_ns, 500 + DELAY);
    assert_int_equal(tq_next(&q), 500 + DELAY);

    /* One nanosecond early: nothing; exactly at the deadline: expired. */
    assert_null(tq_pop_expired(&q, 500 + DELAY - 1));
    assert_true(tq_armed(&n));
    assert_ptr_equal(tq_pop_expired(&q, 500 + DELAY), &n);
    assert_false(tq_armed(&n));
    assert_int_equal(tq_next(&q), UINT64_MAX);
    assert_null(tq_pop_expired(&q, UINT64_MAX));
}

static void test_expiry_order(void **state)
{
    struct tq q;
    struct tq_node n[NNODE] = { 0 };
    struct tq_node *out[NNODE];

    (void)state;
    tq_init(&q, DELAY);
    for (size_t i = 0; i < NNODE; i++)
        tq_arm(&q, &n[i], 10 * i);
    assert_int_equal(tq_next(&q), DELAY);

    /* By the third deadline exactly, the first three have expired, in arm order. */
    assert_int_equal(pop_all(&q, 20 + DELAY, out, NNODE), 3);
    for (size_t i = 0; i < 3; i++)
        assert_ptr_equal(out[i], &n[i]);
    assert_int_equal(tq_next(&q), 30 + DELAY);
    assert_true(tq_armed(&n[3]) && tq_armed(&n[4]));

    assert_int_equal(pop_all(&q, UINT64_MAX, out, NNODE), 2);
    assert_ptr_equal(out[0], &n[3]);
    assert_ptr_equal(out[1], &n[4]);
    assert_int_equal(tq_next(&q), UINT64_MAX);
}

/*
 * A node armed with an earlier now than the tail's (a send deferred to the end
 * of its batch) expires with the tail, after it, never before: the queue stays
 * sorted and no deadline is earlier than asked.
 */
static void test_stale_arm_keeps_order(void **state)
{
    struct tq q;
    struct tq_node a = { 0 }, b = { 0 }, c = { 0 };
    struct tq_node *out[3];

    (void)state;
    tq_init(&q, DELAY);
    tq_arm(&q, &a, 100);
    tq_arm(&q, &b, 50); /* stale: before a's time */
    assert_int_equal(b.deadline_ns, 100 + DELAY);
    tq_arm(&q, &c, 200);
    assert_int_equal(c.deadline_ns, 200 + DELAY);
    assert_int_equal(tq_next(&q), 100 + DELAY);
    assert_int_equal(pop_all(&q, 100 + DELAY, out, 3), 2);
    assert_ptr_equal(out[0], &a);
    assert_ptr_equal(out[1], &b);
    assert_int_equal(tq_next(&q), 200 + DELAY);
    tq_arm(&q, &c, 10); /* the only node re-armed stale: nothing to keep behind */
    assert_int_equal(c.deadline_ns, 10 + DELAY);
}

/* Arms NNODE nodes at 0,10,..., disarms n[victim], checks the rest expire in order. */
static void check_disarm(size_t victim)
{
    struct tq q;
    struct tq_node n[NNODE] = { 0 };
    struct tq_node *out[NNODE];
    size_t k = 0;

    tq_init(&q, DELAY);
    for (size_t i = 0; i < NNODE; i++)
        tq_arm(&q, &n[i], 10 * i);
    tq_disarm(&n[victim]);
    assert_false(tq_armed(&n[victim]));
    tq_disarm(&n[victim]); /* disarming twice is harmless */
    assert_int_equal(tq_next(&q), victim == 0 ? 10 + DELAY : DELAY);

    assert_int_equal(pop_all(&q, UINT64_MAX, out, NNODE), NNODE - 1);
    for (size_t i = 0; i < NNODE; i++)
        if (i != victim) assert_ptr_equal(out[k++], &n[i]);
    assert_int_equal(tq_next(&q), UINT64_MAX);
}

static void test_disarm_head_middle_tail(void **state)
{
    (void)state;
    check_disarm(0);
    check_disarm(NNODE / 2);
    check_disarm(NNODE - 1);
}

static void test_disarm_only_node(void **state)
{
    struct tq q;
    struct tq_node n = { 0 };

    (void)state;
    tq_init(&q, DELAY);
    tq_arm(&q, &n, 0);
    tq_disarm(&n);
    assert_int_equal(tq_next(&q), UINT64_MAX);
    assert_null(tq_pop_expired(&q, UINT64_MAX));
    /* The queue is usable again after going empty. */
    tq_arm(&q, &n, 7);
    assert_int_equal(tq_next(&q), 7 + DELAY);
}

static void test_rearm_moves_to_tail(void **state)
{
    struct tq q;
    struct tq_node n[3] = { 0 };
    struct tq_node *out[3];

    (void)state;
    tq_init(&q, DELAY);
    tq_arm(&q, &n[0], 0);
    tq_arm(&q, &n[1], 10);
    tq_arm(&q, &n[2], 20);
    /* Re-arming the head later pushes its deadline back and puts it last. */
    tq_arm(&q, &n[0], 30);
    assert_int_equal(n[0].deadline_ns, 30 + DELAY);
    assert_int_equal(tq_next(&q), 10 + DELAY);

    assert_null(tq_pop_expired(&q, 10 + DELAY - 1));
    assert_int_equal(pop_all(&q, 20 + DELAY, out, 3), 2);
    assert_ptr_equal(out[0], &n[1]);
    assert_ptr_equal(out[1], &n[2]);
    assert_int_equal(tq_next(&q), 30 + DELAY);
    assert_int_equal(pop_all(&q, 30 + DELAY, out, 3), 1);
    assert_ptr_equal(out[0], &n[0]);
    assert_int_equal(tq_next(&q), UINT64_MAX);
}

struct seen {
    int calls;
    int fd;
    unsigned events;
};

static void record(struct loop *l, int fd, void *data, unsigned events)
{
    struct seen *s = data;

    (void)l;
    s->calls++;
    s->fd = fd;
    s->events = events;
}

struct pipe_loop {
    struct loop l;
    int p[2];
    struct seen seen;
    struct loop_fd h;
};

static int pipe_loop_setup(void **state)
{
    static struct pipe_loop pl;

    pl = (struct pipe_loop){ .p = { -1, -1 } };
    if (loop_init(&pl.l) != 0) return -1;
    if (pipe2(pl.p, O_NONBLOCK | O_CLOEXEC) != 0) {
        loop_release(&pl.l);
        return -1;
    }
    pl.h = (struct loop_fd){ .fn = record, .data = &pl.seen, .fd = pl.p[0] };
    *state = &pl;
    return 0;
}

static int pipe_loop_teardown(void **state)
{
    struct pipe_loop *pl = *state;

    if (pl->p[0] >= 0) close(pl->p[0]);
    if (pl->p[1] >= 0) close(pl->p[1]);
    loop_release(&pl->l);
    return 0;
}

static void test_poll_zero_returns_at_once(void **state)
{
    struct pipe_loop *pl = *state;

    assert_int_equal(loop_add(&pl->l, &pl->h, EPOLLIN), 0);
    /* Nothing is ready and the wait is 0: returns 0 without calling the handler. */
    assert_int_equal(loop_poll(&pl->l, 0), 0);
    assert_int_equal(pl->seen.calls, 0);
}

static void test_readable_pipe_calls_handler(void **state)
{
    struct pipe_loop *pl = *state;
    char c = 'x';

    assert_int_equal(loop_add(&pl->l, &pl->h, EPOLLIN), 0);
    assert_int_equal(write(pl->p[1], &c, 1), 1);
    /* Data is already there, so a forever wait returns as soon as it starts. */
    assert_int_equal(loop_poll(&pl->l, UINT64_MAX), 1);
    assert_int_equal(pl->seen.calls, 1);
    assert_int_equal(pl->seen.fd, pl->p[0]);
    assert_true(pl->seen.events & EPOLLIN);

    /* Level-triggered and unread: reported again. */
    assert_int_equal(loop_poll(&pl->l, 0), 1);
    assert_int_equal(pl->seen.calls, 2);

    /* Drained: no longer ready. */
    assert_int_equal(read(pl->p[0], &c, 1), 1);
    assert_int_equal(loop_poll(&pl->l, 0), 0);
    assert_int_equal(pl->seen.calls, 2);
}

static void test_edge_triggered_reports_once(void **state)
{
    struct pipe_loop *pl = *state;
    char c = 'x';

    assert_int_equal(loop_add(&pl->l, &pl->h, EPOLLIN | EPOLLET), 0);
    assert_int_equal(write(pl->p[1], &c, 1), 1);
    assert_int_equal(loop_poll(&pl->l, 0), 1);
    /* Unread, but no new edge: not reported again. */
    assert_int_equal(loop_poll(&pl->l, 0), 0);
    assert_int_equal(pl->seen.calls, 1);
    /* New data is a new edge. */
    assert_int_equal(write(pl->p[1], &c, 1), 1);
    assert_int_equal(loop_poll(&pl->l, 0), 1);
    assert_int_equal(pl->seen.calls, 2);
}

static void test_mod_and_del(void **state)
{
    struct pipe_loop *pl = *state;
    struct seen wseen = { 0 };
    struct loop_fd w = { .fn = record, .data = &wseen, .fd = pl->p[1] };
    char c = 'x';

    /* The write end of an empty pipe is writable, but only once asked for. */
    assert_int_equal(loop_add(&pl->l, &w, 0), 0);
    assert_int_equal(loop_poll(&pl->l, 0), 0);
    assert_int_equal(loop_mod(&pl->l, &w, EPOLLOUT), 0);
    assert_int_equal(loop_poll(&pl->l, 0), 1);
    assert_int_equal(wseen.fd, pl->p[1]);
    assert_true(wseen.events & EPOLLOUT);

    assert_int_equal(loop_del(&pl->l, &w), 0);
    assert_int_equal(loop_poll(&pl->l, 0), 0);
    assert_int_equal(wseen.calls, 1);

    /* A readable fd that was removed is not reported. */
    assert_int_equal(loop_add(&pl->l, &pl->h, EPOLLIN), 0);
    assert_int_equal(loop_del(&pl->l, &pl->h), 0);
    assert_int_equal(write(pl->p[1], &c, 1), 1);
    assert_int_equal(loop_poll(&pl->l, 0), 0);
    assert_int_equal(pl->seen.calls, 0);
}

static void test_errors_are_negative_errno(void **state)
{
    struct pipe_loop *pl = *state;
    struct loop_fd bad = { .fn = record, .data = &pl->seen, .fd = -1 };

    assert_int_equal(loop_add(&pl->l, &bad, EPOLLIN), -EBADF);
    /* Modifying or removing an fd that was never added. */
    assert_int_equal(loop_mod(&pl->l, &pl->h, EPOLLIN), -ENOENT);
    assert_int_equal(loop_del(&pl->l, &pl->h), -ENOENT);
    assert_int_equal(loop_add(&pl->l, &pl->h, EPOLLIN), 0);
    assert_int_equal(loop_add(&pl->l, &pl->h, EPOLLIN), -EEXIST);
}

#define NDEFER 3

struct defer_log;

/* Pipe i's handler and its deferred task. */
struct defer_slot {
    struct defer_log *d;
    char name; /* the handler logs name, the task toupper(name) */
    struct loop_task task;
};

/* What ran, in order; `extra` is a task the first slot's task defers. */
struct defer_log {
    struct loop *l;
    char order[16];
    size_t n;
    struct defer_slot slots[NDEFER];
    struct loop_task extra;
};

static void defer_note(struct defer_log *d, char what)
{
    assert_true(d->n + 1 < sizeof(d->order));
    d->order[d->n++] = what;
}

static void defer_extra(void *data)
{
    defer_note(data, 'X');
}

static void defer_task(void *data)
{
    struct defer_slot *s = data;

    defer_note(s->d, (char)(s->name - 'a' + 'A'));
    /* Deferred while the deferred tasks run: it joins the queue and runs in this poll too. */
    if (s == &s->d->slots[0]) loop_defer(s->d->l, &s->d->extra);
}

static void defer_handler(struct loop *l, int fd, void *data, unsigned events)
{
    struct defer_slot *s = data;
    char c;

    (void)events;
    assert_ptr_equal(l, s->d->l);
    assert_int_equal(read(fd, &c, 1), 1);
    defer_note(s->d, s->name);
    loop_defer(l, &s->task);
    loop_defer(l, &s->task); /* queued already: it still runs once */
}

/*
 * Three readable pipes in one poll: all three handlers run first, then each
 * deferred task once, in the order the handlers deferred them, then a task
 * deferred by one of those. Outside loop_poll a deferred task runs at once.
 */
static void test_defer_after_every_handler(void **state)
{
    struct defer_log d = { 0 };
    struct loop l;
    int p[NDEFER][2];
    struct loop_fd h[NDEFER];
    char x = 'x';

    (void)state;
    assert_int_equal(loop_init(&l), 0);
    d.l = &l;
    d.extra = (struct loop_task){ .fn = defer_extra, .data = &d };
    for (size_t i = 0; i < NDEFER; i++) {
        struct defer_slot *s = &d.slots[i];

        *s = (struct defer_slot){ .d = &d, .name = (char)('a' + i) };
        s->task = (struct loop_task){ .fn = defer_task, .data = s };
        assert_int_equal(pipe2(p[i], O_NONBLOCK | O_CLOEXEC), 0);
        h[i] = (struct loop_fd){ .fn = defer_handler, .data = s, .fd = p[i][0] };
        assert_int_equal(loop_add(&l, &h[i], EPOLLIN), 0);
        assert_int_equal(write(p[i][1], &x, 1), 1);
    }
    assert_int_equal(loop_poll(&l, UINT64_MAX), NDEFER);
    assert_int_equal(d.n, 2 * NDEFER + 1);
    for (size_t i = 0; i < NDEFER; i++) {
        /* every handler before any task, each once; the tasks in the handlers' order */
        assert_true(d.order[i] >= 'a' && d.order[i] < 'a' + NDEFER);
        for (size_t j = 0; j < i; j++)
            assert_int_not_equal(d.order[i], d.order[j]);
        assert_int_equal(d.order[NDEFER + i], d.order[i] - 'a' + 'A');
    }
    assert_int_equal(d.order[2 * NDEFER], 'X');
    /* Nothing is left queued: a poll with nothing ready runs no task. */
    assert_int_equal(loop_poll(&l, 0), 0);
    assert_int_equal(d.n, 2 * NDEFER + 1);
    /* Not in a handler: at once. */
    loop_defer(&l, &d.slots[1].task);
    assert_int_equal(d.n, 2 * NDEFER + 2);
    assert_int_equal(d.order[2 * NDEFER + 1], 'B');
    for (size_t i = 0; i < NDEFER; i++) {
        close(p[i][0]);
        close(p[i][1]);
    }
    loop_release(&l);
}

#define PIPE_TEST(f) cmocka_unit_test_setup_teardown(f, pipe_loop_setup, pipe_loop_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_arm_and_expire_at_boundary),
        cmocka_unit_test(test_expiry_order),
        cmocka_unit_test(test_stale_arm_keeps_order),
        cmocka_unit_test(test_disarm_head_middle_tail),
        cmocka_unit_test(test_disarm_only_node),
        cmocka_unit_test(test_rearm_moves_to_tail),
        cmocka_unit_test(test_defer_after_every_handler),
        PIPE_TEST(test_poll_zero_returns_at_once),
        PIPE_TEST(test_readable_pipe_calls_handler),
        PIPE_TEST(test_edge_triggered_reports_once),
        PIPE_TEST(test_mod_and_del),
        PIPE_TEST(test_errors_are_negative_errno),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
