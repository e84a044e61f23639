/*
 * place: client and server CPU sets (see place.h).
 */
#include "place.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

int place_parse(const char *s, enum place_mode *mode)
{
    if (strcmp(s, "none") == 0)
        *mode = PLACE_NONE;
    else if (strcmp(s, "same") == 0)
        *mode = PLACE_SAME;
    else if (strcmp(s, "split") == 0)
        *mode = PLACE_SPLIT;
    else
        return -EINVAL;
    return 0;
}

const char *place_name(enum place_mode mode)
{
    switch (mode) {
    case PLACE_NONE:
        return "none";
    case PLACE_SAME:
        return "same";
    case PLACE_SPLIT:
        return "split";
    }
    return "?";
}

static unsigned allowed_cpus(int *cpus, unsigned cap)
{
    cpu_set_t set;
    unsigned n = 0;

    if (sched_getaffinity(0, sizeof(set), &set) == -1) return 0;
    for (int i = 0; i < CPU_SETSIZE && n < cap; i++)
        if (CPU_ISSET(i, &set)) cpus[n++] = i;
    return n;
}

unsigned place_allowed_cpus(void)
{
    int cpus[PLACE_MAX_CPUS];

    return allowed_cpus(cpus, PLACE_MAX_CPUS);
}

int place_init(struct place *p, enum place_mode mode, struct hb_err *err)
{
    int cpus[PLACE_MAX_CPUS];
    unsigned n = allowed_cpus(cpus, PLACE_MAX_CPUS), half;

    memset(p, 0, sizeof(*p));
    p->mode = mode;
    if (mode == PLACE_NONE) return 0;
    if (n == 0) return hb_fail(err, -EINVAL, "cannot read the allowed CPUs (sched_getaffinity)");
    if (mode == PLACE_SAME) {
        p->client[0] = p->server[0] = cpus[0];
        p->nclient = p->nserver = 1;
        return 0;
    }
    if (n < 2)
        return hb_fail(err, -EINVAL, "--pin split needs at least 2 CPUs; this process may use %u",
                       n);
    half = n / 2;
    for (unsigned i = 0; i < n; i++) {
        if (i < half)
            p->client[p->nclient++] = cpus[i];
        else
            p->server[p->nserver++] = cpus[i];
    }
    return 0;
}

void place_format(const struct place *p, enum place_role role, char *buf, size_t cap)
{
    const int *cpus = role == PLACE_CLIENT ? p->client : p->server;
    unsigned n = role == PLACE_CLIENT ? p->nclient : p->nserver;
    size_t len = 0;

    if (n == 0) {
        snprintf(buf, cap, "any");
        return;
    }
    buf[0] = '\0';
    for (unsigned i = 0; i < n && len + 1 < cap; i++) {
        unsigned j = i;
        while (j + 1 < n && cpus[j + 1] == cpus[j] + 1)
            j++;
        int w = j > i ? snprintf(buf + len, cap - len, "%s%d-%d", i ? "," : "", cpus[i], cpus[j])
                      : snprintf(buf + len, cap - len, "%s%d", i ? "," : "", cpus[i]);
        if (w < 0 || (size_t)w >= cap - len) break;
        len += (size_t)w;
        i = j;
    }
}
