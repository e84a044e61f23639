/*
 * loop: epoll with nanosecond timeouts (epoll_pwait2, Linux >= 5.11, with a
 * millisecond epoll_wait fallback). See loop.h.
 */
#include "engine/loop.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <unistd.h>

int loop_init(struct loop *l)
{
    l->dispatching = false;
    l->head = NULL;
    l->tail = &l->head;
    l->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (l->epfd == -1) return -errno;
    l->nevents = LOOP_MAX_EVENTS;
    l->events = calloc(LOOP_MAX_EVENTS, sizeof(*l->events));
    if (l->events == NULL) {
        close(l->epfd);
        l->epfd = -1;
        return -ENOMEM;
    }
    return 0;
}

void loop_release(struct loop *l)
{
    if (l->epfd >= 0) close(l->epfd);
    l->epfd = -1;
    free(l->events);
    l->events = NULL;
}

int loop_add(struct loop *l, struct loop_fd *h, unsigned events)
{
    struct epoll_event ev = { .events = events, .data.ptr = h };

    if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, h->fd, &ev) == -1) return -errno;
    return 0;
}

int loop_mod(struct loop *l, struct loop_fd *h, unsigned events)
{
    struct epoll_event ev = { .events = events, .data.ptr = h };

    if (epoll_ctl(l->epfd, EPOLL_CTL_MOD, h->fd, &ev) == -1) return -errno;
    return 0;
}

int loop_del(struct loop *l, struct loop_fd *h)
{
    if (epoll_ctl(l->epfd, EPOLL_CTL_DEL, h->fd, NULL) == -1) return -errno;
    return 0;
}

static int loop_wait(struct loop *l, uint64_t timeout_ns)
{
    struct timespec ts;
    int n;

    if (timeout_ns != UINT64_MAX) {
        ts.tv_sec = (time_t)(timeout_ns / NS_PER_S);
        ts.tv_nsec = (long)(timeout_ns % NS_PER_S);
    }
    n = epoll_pwait2(l->epfd, l->events, l->nevents, timeout_ns == UINT64_MAX ? NULL : &ts, NULL);
    if (n == -1 && errno == ENOSYS) {
        /* Before Linux 5.11: milliseconds, rounded up so a pending timer is never spun on. */
        uint64_t ms = (timeout_ns + NS_PER_MS - 1) / NS_PER_MS;
        int wait_ms = timeout_ns == UINT64_MAX ? -1 : ms > 1000000 ? 1000000 : (int)ms;
        n = epoll_wait(l->epfd, l->events, l->nevents, wait_ms);
    }
    return n;
}

void loop_defer(struct loop *l, struct loop_task *t)
{
    if (!l->dispatching) {
        t->fn(t->data);
        return;
    }
    if (t->queued) return;
    t->queued = true;
    t->next = NULL;
    *l->tail = t;
    l->tail = &t->next;
}

/* Runs the deferred tasks in order; one a task defers joins the queue's tail and runs too. */
static void loop_run_deferred(struct loop *l)
{
    while (l->head != NULL) {
        struct loop_task *t = l->head;

        l->head = t->next;
        if (l->head == NULL) l->tail = &l->head;
        t->queued = false;
        t->fn(t->data);
    }
}

void loop_begin_batch(struct loop *l)
{
    l->dispatching = true;
}

void loop_end_batch(struct loop *l)
{
    loop_run_deferred(l);
    l->dispatching = false;
}

int loop_poll(struct loop *l, uint64_t timeout_ns)
{
    int n = loop_wait(l, timeout_ns);

    if (n == -1) return errno == EINTR ? 0 : -errno;
    loop_begin_batch(l);
    for (int i = 0; i < n; i++) {
        struct loop_fd *h = l->events[i].data.ptr;
        h->fn(l, h->fd, h->data, l->events[i].events);
    }
    loop_end_batch(l);
    return n;
}

void tq_init(struct tq *q, uint64_t delay_ns)
{
    q->head.prev = q->head.next = &q->head;
    q->head.deadline_ns = 0;
    q->delay_ns = delay_ns;
}
