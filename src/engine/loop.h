/*
 * loop: a thin per-thread epoll loop. It knows file descriptors, readiness and
 * time, nothing about protocols or connections.
 *
 * A handler is registered once per fd with the events its owner asks for
 * (the client asks edge-triggered IN|RDHUP: one EPOLL_CTL_ADD, no MOD per
 * request) and is called with the ready events.
 * A handler may defer work to the end of the batch of events it was called
 * from (loop_defer): the loop runs it once every ready fd of that epoll_wait
 * has been handled, as wrk flushes its writes after its reads.
 * Timeouts that share one delay go in a `struct tq`: arming appends to the
 * tail, so the list stays sorted by deadline and arm, disarm and "what has
 * expired" are all O(1). One loop per thread; nothing here is thread-safe.
 */
#ifndef HOPBENCH_LOOP_H
#define HOPBENCH_LOOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util.h"

struct loop;
typedef void loop_fn(struct loop *l, int fd, void *data, unsigned events);

/* What a registered fd carries; caller-owned, must outlive the registration. */
struct loop_fd {
    loop_fn *fn;
    void *data;
    int fd;
};

/* Work deferred to the end of a batch of events; caller-owned, queued at most once. */
struct loop_task {
    void (*fn)(void *data);
    void *data;
    struct loop_task *next;
    bool queued;
};

#define LOOP_MAX_EVENTS 256

struct loop {
    int epfd;
    int nevents;
    struct epoll_event *events; /* LOOP_MAX_EVENTS, allocated by loop_init */
    bool dispatching;           /* loop_poll is calling handlers */
    struct loop_task *head;     /* deferred tasks, in the order they were deferred */
    struct loop_task **tail;
};

/* Creates the epoll instance. Returns 0 or a negative errno. */
int loop_init(struct loop *l);

/* Closes the epoll instance and frees the event array. */
void loop_release(struct loop *l);

/*
 * Registers h->fd for `events` (EPOLLIN, EPOLLOUT, EPOLLET, EPOLLEXCLUSIVE...).
 * Returns 0 or a negative errno. Closing the fd removes it from the loop.
 */
int loop_add(struct loop *l, struct loop_fd *h, unsigned events);

/* Changes the events h->fd is registered for. Returns 0 or a negative errno. */
int loop_mod(struct loop *l, struct loop_fd *h, unsigned events);

/* Unregisters h->fd. Returns 0 or a negative errno. */
int loop_del(struct loop *l, struct loop_fd *h);

/*
 * Waits at most timeout_ns (0 = poll, UINT64_MAX = forever), calls the
 * handler of each ready fd, then runs the tasks those handlers deferred
 * (and any those tasks defer). Returns the number of events handled, 0 on
 * timeout or EINTR, or a negative errno.
 */
int loop_poll(struct loop *l, uint64_t timeout_ns);

/*
 * For a caller that waits on something else and dispatches what it got
 * itself (the io_uring wait): between these, loop_defer queues as inside
 * loop_poll; loop_end_batch runs the deferred tasks. Not inside loop_poll.
 */
void loop_begin_batch(struct loop *l);
void loop_end_batch(struct loop *l);

/*
 * Called from a handler inside loop_poll: queues t to run after the last
 * handler of this batch (a task already queued stays where it is). Called
 * anywhere else: runs t now.
 */
void loop_defer(struct loop *l, struct loop_task *t);

/* A deadline in a timeout queue; embed it in the object that times out. */
struct tq_node {
    struct tq_node *prev, *next; /* NULL when not armed */
    uint64_t deadline_ns;
};

/* A list of deadlines that all use the same delay, so arming keeps it sorted. */
struct tq {
    struct tq_node head; /* sentinel */
    uint64_t delay_ns;
};

/* Makes q an empty queue whose deadlines are armed at now + delay_ns. */
void tq_init(struct tq *q, uint64_t delay_ns);

static inline bool tq_armed(const struct tq_node *n)
{
    return n->next != NULL;
}

static inline void tq_disarm(struct tq_node *n)
{
    if (!tq_armed(n)) return;
    n->prev->next = n->next;
    n->next->prev = n->prev;
    n->prev = n->next = NULL;
}

/*
 * (Re)arms n to expire at now + q->delay_ns, or at the last armed deadline
 * when that is later: a caller's now may be a little stale (a send deferred
 * to the end of its batch of events arms with the time the batch was taken
 * up), and the queue stays sorted only if no deadline goes in before the
 * tail's. So a deadline is never earlier than asked, at most that staleness later.
 */
static inline void tq_arm(struct tq *q, struct tq_node *n, uint64_t now)
{
    uint64_t deadline = now + q->delay_ns;

    tq_disarm(n);
    if (q->head.prev != &q->head && q->head.prev->deadline_ns > deadline)
        deadline = q->head.prev->deadline_ns;
    n->deadline_ns = deadline;
    n->prev = q->head.prev;
    n->next = &q->head;
    q->head.prev->next = n;
    q->head.prev = n;
}

/* The earliest deadline, or UINT64_MAX when nothing is armed. */
static inline uint64_t tq_next(const struct tq *q)
{
    return q->head.next == &q->head ? UINT64_MAX : q->head.next->deadline_ns;
}

/* Disarms and returns the first node whose deadline is <= now, or NULL. */
static inline struct tq_node *tq_pop_expired(struct tq *q, uint64_t now)
{
    struct tq_node *n = q->head.next;

    if (n == &q->head || n->deadline_ns > now) return NULL;
    tq_disarm(n);
    return n;
}

#endif
