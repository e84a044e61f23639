/*
 * ksym: /proc/kallsyms as a sorted table of text symbols (ksym.h).
 */
#include "host/ksym.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "host/counters.h"

/* Whether type letter c is a text symbol's. */
static bool text_type(char c)
{
    return c == 't' || c == 'T' || c == 'w' || c == 'W';
}

/* One parsed line: its address, whether it is text, its name [name, name + len). */
struct ksym_line {
    uint64_t addr;
    bool text;
    const char *name;
    size_t len;
};

/* Parses the line at p ("ADDR TYPE NAME[\t[MODULE]]"); returns the next line's start. */
static const char *line_parse(const char *p, struct ksym_line *l)
{
    const char *end = strchr(p, '\n'), *next = end != NULL ? end + 1 : p + strlen(p);
    char *q;

    if (end == NULL) end = next;
    l->text = false;
    l->addr = strtoull(p, &q, 16);
    if (q == p || *q != ' ' || q + 3 >= end || q[2] != ' ') return next;
    l->text = text_type(q[1]);
    l->name = q + 3;
    l->len = 0;
    while (l->name + l->len < end && l->name[l->len] != '\t' && l->name[l->len] != ' ')
        l->len++;
    if (l->len == 0) l->text = false;
    return next;
}

/* The order of two symbols' indices by address, then by index (so the sort is stable). */
static const uint64_t *sort_addr;
static int by_addr(const void *a, const void *b)
{
    uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;

    if (sort_addr[i] != sort_addr[j]) return sort_addr[i] < sort_addr[j] ? -1 : 1;
    return i < j ? -1 : i > j;
}

int ksym_parse(struct ksym_table *t, const char *text, struct hb_err *err)
{
    size_t n = 0, bytes = 0, nonzero = 0;
    struct ksym_line l;
    uint64_t *addr;
    uint32_t *name, *order;
    char *names;

    memset(t, 0, sizeof(*t));
    for (const char *p = text; *p != '\0';) {
        p = line_parse(p, &l);
        if (!l.text) continue;
        n++;
        bytes += l.len + 1;
        nonzero += l.addr != 0;
    }
    if (n == 0) return hb_fail(err, -ENOENT, "%s", "no kernel text symbols in /proc/kallsyms");
    if (nonzero == 0)
        return hb_fail(err, -EACCES, "%s",
                       "/proc/kallsyms hides the kernel's addresses (kernel.kptr_restrict; "
                       "root sees them)");
    if (bytes > UINT32_MAX) return hb_fail(err, -EFBIG, "%s", "/proc/kallsyms is too large");
    addr = malloc(n * sizeof(*addr));
    name = malloc(n * sizeof(*name));
    order = malloc(n * sizeof(*order));
    names = malloc(bytes);
    t->addr = malloc(n * sizeof(*t->addr));
    t->name = malloc(n * sizeof(*t->name));
    t->subsys = malloc(n);
    if (addr == NULL || name == NULL || order == NULL || names == NULL || t->addr == NULL ||
        t->name == NULL || t->subsys == NULL) {
        free(addr);
        free(name);
        free(order);
        free(names);
        ksym_free(t);
        return hb_fail(err, -ENOMEM, "%s", "out of memory for the kernel's symbols");
    }
    size_t k = 0, off = 0;
    for (const char *p = text; *p != '\0';) {
        p = line_parse(p, &l);
        if (!l.text) continue;
        addr[k] = l.addr;
        name[k] = (uint32_t)off;
        order[k] = (uint32_t)k;
        memcpy(names + off, l.name, l.len);
        names[off + l.len] = '\0';
        off += l.len + 1;
        k++;
    }
    sort_addr = addr;
    qsort(order, n, sizeof(*order), by_addr);
    for (size_t i = 0; i < n; i++) {
        t->addr[i] = addr[order[i]];
        t->name[i] = name[order[i]];
    }
    memset(t->subsys, -2, n);
    t->names = names;
    t->n = n;
    free(addr);
    free(name);
    free(order);
    return 0;
}

int ksym_load(struct ksym_table *t, const char *path, struct hb_err *err)
{
    int rc = 0;
    char *text = read_text(path, &rc);

    memset(t, 0, sizeof(*t));
    if (text == NULL) return hb_fail(err, rc, "cannot read %s: %s", path, strerror(-rc));
    rc = ksym_parse(t, text, err);
    free(text);
    return rc;
}

long ksym_find(const struct ksym_table *t, uint64_t addr)
{
    size_t lo = 0, hi = t->n;

    if (t->n == 0 || addr < t->addr[0]) return -1;
    while (hi - lo > 1) { /* the last symbol at or below addr */
        size_t mid = lo + (hi - lo) / 2;
        if (t->addr[mid] <= addr)
            lo = mid;
        else
            hi = mid;
    }
    return addr - t->addr[lo] < KSYM_MAX_SIZE ? (long)lo : -1;
}

const char *ksym_name(const struct ksym_table *t, size_t i)
{
    return t->names + t->name[i];
}

void ksym_free(struct ksym_table *t)
{
    free(t->addr);
    free(t->name);
    free(t->subsys);
    free(t->names);
    memset(t, 0, sizeof(*t));
}
