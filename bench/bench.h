/*
 * bench.h: the few helpers bench/floor.c and bench/protofloor.c share (each a
 * program of its own: everything here is static). BENCH_PROG, the program's
 * name, is defined before the include.
 */
#ifndef HOPBENCH_BENCH_H
#define HOPBENCH_BENCH_H

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NS_PER_S 1000000000ULL

/* One line on stderr, "PROG: ..." */
__attribute__((format(printf, 1, 2))) static inline void report_error(const char *fmt, ...)
{
    va_list ap;

    fputs(BENCH_PROG ": ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

/* `return fail(...)`: reports and yields -1 (a macro, so -1 is visible to the analyzer). */
#define fail(...) (report_error(__VA_ARGS__), -1)

static inline uint64_t clock_ns(clockid_t clock)
{
    struct timespec ts;

    clock_gettime(clock, &ts);
    return (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec;
}

/* Whole decimal number in [min, max]; no sign, spaces or suffix. */
static inline int parse_count(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
    char *end = NULL;
    unsigned long long v;

    if (s[0] < '0' || s[0] > '9') return -1;
    errno = 0;
    v = strtoull(s, &end, 10);
    if (errno != 0 || *end != '\0' || v < min || v > max) return -1;
    *out = v;
    return 0;
}

/* The index of s in names[0..count), or -1. */
static inline int parse_name(const char *s, const char *const *names, int count)
{
    for (int i = 0; i < count; i++) {
        if (strcmp(s, names[i]) == 0) return i;
    }
    return -1;
}

#endif
