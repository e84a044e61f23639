/*
 * ksym: the kernel's text symbols from /proc/kallsyms, sorted by address, so
 * that a sampled kernel address finds the function it is in (--profile).
 * Readable addresses need root or kernel.kptr_restrict 0: without them every
 * address reads 0 and loading fails.
 */
#ifndef HOPBENCH_HOST_KSYM_H
#define HOPBENCH_HOST_KSYM_H

#include <stddef.h>
#include <stdint.h>

#include "util.h"

/* Beyond this many bytes past a symbol's start an address is in none (a gap, data). */
#define KSYM_MAX_SIZE (256ULL * 1024)

struct ksym_table {
    uint64_t *addr; /* sorted */
    uint32_t *name; /* offset into names */
    int8_t *subsys; /* each symbol's subsystem, -2 until asked (profile.c) */
    char *names;    /* NUL-terminated names, a module's without its "[module]" */
    size_t n;
};

/*
 * Parses the text of /proc/kallsyms: the text symbols (types t, T, w, W) with
 * their addresses. 0, or -ENOENT with err set when it has none, -EACCES when
 * every address is 0 (hidden), -ENOMEM.
 */
int ksym_parse(struct ksym_table *t, const char *text, struct hb_err *err);

/* ksym_parse of the file at path (/proc/kallsyms); -errno with err set when unreadable. */
int ksym_load(struct ksym_table *t, const char *path, struct hb_err *err);

/* The index of the symbol addr is in, or -1 (before the first, or KSYM_MAX_SIZE past one). */
long ksym_find(const struct ksym_table *t, uint64_t addr);

/* Symbol i's name. */
const char *ksym_name(const struct ksym_table *t, size_t i);

void ksym_free(struct ksym_table *t);

#endif
