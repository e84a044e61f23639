/*
 * sendq: when each open-loop connection sends next. A binary min-heap of
 * nodes embedded in the connections, keyed by the intended send time, so the
 * loop finds the next due send in O(1) and (re)schedules in O(log n). The
 * heap's array is allocated once, for every connection of the thread.
 */
#ifndef HOPBENCH_SENDQ_H
#define HOPBENCH_SENDQ_H

#include <stdint.h>

#define SENDQ_NONE UINT32_MAX /* sendq_node.idx when not queued */

struct sendq_node {
    uint64_t at;  /* intended time, ns (CLOCK_MONOTONIC) */
    uint32_t idx; /* position in the heap, or SENDQ_NONE */
};

struct sendq {
    struct sendq_node **h;
    uint32_t n, cap;
};

/* Room for cap nodes. 0 or -ENOMEM. */
int sendq_init(struct sendq *s, uint32_t cap);
void sendq_release(struct sendq *s);

/* Queues x (not queued yet; at most cap at once) at x->at. */
void sendq_push(struct sendq *s, struct sendq_node *x);

/* Removes x if queued. */
void sendq_remove(struct sendq *s, struct sendq_node *x);

/* The earliest node due at or before now, removed; NULL when none is due. */
struct sendq_node *sendq_pop_due(struct sendq *s, uint64_t now);

/* The earliest intended time queued, or UINT64_MAX. */
static inline uint64_t sendq_next(const struct sendq *s)
{
    return s->n ? s->h[0]->at : UINT64_MAX;
}

#endif
