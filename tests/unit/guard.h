/*
 * guard: buffers that end exactly at a PROT_NONE page, so a parser that reads
 * (or an encoder that writes) even one byte past the end dies with SIGSEGV
 * instead of silently touching a neighbour. For unit tests only: each buffer
 * is its own mapping, and a failure to set one up aborts.
 */
#ifndef HOPBENCH_TESTS_GUARD_H
#define HOPBENCH_TESTS_GUARD_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

struct guard {
    uint8_t *map; /* the whole mapping: data pages, then the guard page */
    size_t map_len;
    uint8_t *data; /* data[0 .. len-1] is read-write, data[len] is the guard page */
    size_t len;
};

static inline size_t guard_page_size(void)
{
    long ps = sysconf(_SC_PAGESIZE);

    if (ps <= 0) {
        perror("sysconf(_SC_PAGESIZE)");
        abort();
    }
    return (size_t)ps;
}

/* Maps len bytes (len may be 0) that end at a PROT_NONE page; returns g->data. */
static inline uint8_t *guard_alloc(struct guard *g, size_t len)
{
    size_t page = guard_page_size();
    size_t data_len = (len + page - 1) / page * page;
    void *m;

    g->map_len = data_len + page;
    m = mmap(NULL, g->map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) {
        perror("mmap");
        abort();
    }
    g->map = m;
    if (mprotect(g->map + data_len, page, PROT_NONE) != 0) {
        perror("mprotect");
        abort();
    }
    g->data = g->map + data_len - len;
    g->len = len;
    return g->data;
}

/* The last n bytes of the buffer: a piece of length n that ends at the guard. */
static inline uint8_t *guard_tail(const struct guard *g, size_t n)
{
    return g->data + g->len - n;
}

static inline void guard_free(struct guard *g)
{
    if (g->map != NULL && munmap(g->map, g->map_len) != 0) {
        perror("munmap");
        abort();
    }
    g->map = NULL;
    g->data = NULL;
}

#endif
