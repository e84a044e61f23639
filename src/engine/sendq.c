/*
 * sendq: a binary min-heap of embedded nodes (see sendq.h).
 */
#include "engine/sendq.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>

int sendq_init(struct sendq *s, uint32_t cap)
{
    s->n = 0;
    s->cap = cap;
    s->h = calloc(cap ? cap : 1, sizeof(struct sendq_node *));
    return s->h != NULL ? 0 : -ENOMEM;
}

void sendq_release(struct sendq *s)
{
    free(s->h);
    s->h = NULL;
    s->n = s->cap = 0;
}

static void sendq_place(struct sendq *s, uint32_t i, struct sendq_node *x)
{
    s->h[i] = x;
    x->idx = i;
}

static void sendq_up(struct sendq *s, uint32_t i)
{
    struct sendq_node *x = s->h[i];

    while (i > 0) {
        uint32_t parent = (i - 1) / 2;
        if (s->h[parent]->at <= x->at) break;
        sendq_place(s, i, s->h[parent]);
        i = parent;
    }
    sendq_place(s, i, x);
}

static void sendq_down(struct sendq *s, uint32_t i)
{
    struct sendq_node *x = s->h[i];

    for (;;) {
        uint32_t child = 2 * i + 1;
        if (child >= s->n) break;
        if (child + 1 < s->n && s->h[child + 1]->at < s->h[child]->at) child++;
        if (x->at <= s->h[child]->at) break;
        sendq_place(s, i, s->h[child]);
        i = child;
    }
    sendq_place(s, i, x);
}

void sendq_push(struct sendq *s, struct sendq_node *x)
{
    sendq_remove(s, x);    /* queued at most once */
    assert(s->n < s->cap); /* one node per connection, cap = the connections */
    sendq_place(s, s->n++, x);
    sendq_up(s, x->idx);
}

void sendq_remove(struct sendq *s, struct sendq_node *x)
{
    uint32_t i = x->idx;
    struct sendq_node *last;

    if (i == SENDQ_NONE || i >= s->n || s->h[i] != x) return;
    x->idx = SENDQ_NONE;
    last = s->h[--s->n];
    if (i == s->n) return;
    sendq_place(s, i, last);
    sendq_up(s, i);
    sendq_down(s, last->idx);
}

struct sendq_node *sendq_pop_due(struct sendq *s, uint64_t now)
{
    struct sendq_node *x;

    if (s->n == 0 || s->h[0]->at > now) return NULL;
    x = s->h[0];
    sendq_remove(s, x);
    return x;
}
