/*
 * place: client and server CPU sets (see place.h).
 */
#include "host/place.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/counters.h"

/* Processes of one server's tree read for place_observe_server; more are left out. */
#define PLACE_MAX_TREE 4096

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

/*
 * Ends buf (holding len bytes of whole items) with ",..." once the next item
 * does not fit, dropping whole items until the mark does: never half a CPU.
 */
static void place_format_cut(char *buf, size_t cap, size_t len)
{
    static const char mark[] = ",...";

    while (len > 0 && len + sizeof(mark) > cap) {
        char *comma = strrchr(buf, ',');
        len = comma != NULL ? (size_t)(comma - buf) : 0;
        buf[len] = '\0';
    }
    snprintf(buf + len, cap - len, "%s", len > 0 ? mark : mark + 1);
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
    for (unsigned i = 0; i < n; i++) {
        char item[32];
        unsigned j = i;
        while (j + 1 < n && cpus[j + 1] == cpus[j] + 1)
            j++;
        int w = j > i ? snprintf(item, sizeof(item), "%s%d-%d", i ? "," : "", cpus[i], cpus[j])
                      : snprintf(item, sizeof(item), "%s%d", i ? "," : "", cpus[i]);
        if (w < 0 || len + (size_t)w >= cap) {
            place_format_cut(buf, cap, len);
            return;
        }
        memcpy(buf + len, item, (size_t)w + 1);
        len += (size_t)w;
        i = j;
    }
}

unsigned place_spare_cpus(const struct place *p, const cpu_set_t *allowed, cpu_set_t *spare)
{
    CPU_ZERO(spare);
    if (p->nclient == 0 || p->nserver == 0) return 0;
    *spare = *allowed;
    for (unsigned i = 0; i < p->nclient; i++)
        CPU_CLR(p->client[i], spare);
    for (unsigned i = 0; i < p->nserver; i++)
        CPU_CLR(p->server[i], spare);
    return (unsigned)CPU_COUNT(spare);
}

unsigned place_spare_now(const struct place *p, cpu_set_t *spare)
{
    cpu_set_t set;

    if (sched_getaffinity(0, sizeof(set), &set) == -1) {
        CPU_ZERO(spare);
        return 0;
    }
    return place_spare_cpus(p, &set, spare);
}

const char *place_source_name(enum place_source src)
{
    switch (src) {
    case PLACE_SRC_EXPECTED:
        return "expected";
    case PLACE_SRC_SET:
        return "set";
    case PLACE_SRC_OBSERVED:
        return "observed";
    }
    return "?";
}

/*
 * Adds to *set the CPUs each thread of pid may run on. A thread that exits
 * meanwhile is skipped. Returns 0, or -ESRCH when pid has no thread left.
 */
static int add_threads(pid_t pid, cpu_set_t *set)
{
    char path[48];
    struct dirent *d;
    unsigned found = 0;
    DIR *dir;

    snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
    dir = opendir(path);
    if (dir == NULL) return errno == ENOENT ? -ESRCH : -errno;
    while ((d = readdir(dir)) != NULL) {
        cpu_set_t one;
        char *end;
        long tid = strtol(d->d_name, &end, 10);

        if (d->d_name[0] < '0' || d->d_name[0] > '9' || *end != '\0' || tid <= 0) continue;
        if (sched_getaffinity((pid_t)tid, sizeof(one), &one) == -1) continue;
        CPU_OR(set, set, &one);
        found++;
    }
    closedir(dir);
    return found > 0 ? 0 : -ESRCH;
}

int place_observe_server(struct place *p, const pid_t *pids, unsigned npids, bool tree,
                         struct hb_err *err)
{
    pid_t *procs = tree ? xcalloc(PLACE_MAX_TREE, sizeof(*procs)) : NULL;
    cpu_set_t set;
    int rc = 0;

    CPU_ZERO(&set);
    for (unsigned i = 0; i < npids && rc == 0; i++) {
        ssize_t n = 1;

        if (tree) {
            n = proc_tree(pids[i], procs, PLACE_MAX_TREE);
            if (n < 0) {
                rc = hb_fail(err, (int)n, "process tree of pid %d: %s", (int)pids[i],
                             strerror((int)-n));
                break;
            }
            if (n > PLACE_MAX_TREE) n = PLACE_MAX_TREE;
        }
        /* A descendant may exit during the walk; the server pid itself must be there. */
        for (ssize_t j = 0; j < n && rc == 0; j++) {
            int got = add_threads(tree ? procs[j] : pids[i], &set);
            if (got < 0 && j == 0)
                rc = hb_fail(err, got, "threads of pid %d: %s", (int)pids[i], strerror(-got));
        }
    }
    free(procs);
    if (rc < 0) return rc;
    if (npids == 0 || CPU_COUNT(&set) == 0)
        return hb_fail(err, -ESRCH, "no server thread to read the CPUs of");
    p->nserver = 0;
    for (int c = 0; c < CPU_SETSIZE && p->nserver < PLACE_MAX_CPUS; c++)
        if (CPU_ISSET(c, &set)) p->server[p->nserver++] = c;
    p->server_source = PLACE_SRC_OBSERVED;
    return 0;
}

/* The tier a path's component after "kubepods" or "kubepods.slice" names; NULL if none. */
static const char *qos_tier(const char *c, size_t len)
{
    static const struct {
        const char *prefix, *class;
    } tiers[] = { { "burstable", "Burstable" },          { "besteffort", "BestEffort" },
                  { "kubepods-burstable", "Burstable" }, { "kubepods-besteffort", "BestEffort" },
                  { "kubepods-pod", "Guaranteed" },      { "pod", "Guaranteed" } };

    for (size_t i = 0; i < ARRAY_LEN(tiers); i++) {
        size_t n = strlen(tiers[i].prefix);

        if (len >= n && strncmp(c, tiers[i].prefix, n) == 0) return tiers[i].class;
    }
    return NULL;
}

const char *place_qos_cgroup(const char *cgroup_text)
{
    const char *p = cgroup_text;

    while (p != NULL && *p != '\0') {
        const char *end = strchr(p, '\n'), *k = p;
        size_t line = end != NULL ? (size_t)(end - p) : strlen(p);

        /* "ID:CONTROLLERS:/kubepods[.slice]/TIER..." : the component after kubepods */
        while ((k = strstr(k, "/kubepods")) != NULL && k < p + line) {
            const char *c = k + strlen("/kubepods");
            const char *class = NULL;

            if (strncmp(c, ".slice", 6) == 0) c += 6;
            if (*c == '/') {
                size_t n = strcspn(c + 1, "/\n");

                class = qos_tier(c + 1, n);
            }
            if (class != NULL) return class;
            k = c;
        }
        p = end != NULL ? end + 1 : NULL;
    }
    return NULL;
}

/* s as a whole number (digits only) into *v; false if it is not one. */
static bool whole(const char *s, unsigned long long *v)
{
    char *end = NULL;

    if (s == NULL || s[0] < '0' || s[0] > '9') return false;
    errno = 0;
    *v = strtoull(s, &end, 10);
    return errno == 0 && *end == '\0';
}

const char *place_qos_resources(const char *cpu_req, const char *cpu_lim, const char *mem_req,
                                const char *mem_lim)
{
    unsigned long long cr, cl, mr, ml;

    if (!whole(cpu_req, &cr) || !whole(cpu_lim, &cl) || !whole(mem_req, &mr) ||
        !whole(mem_lim, &ml))
        return NULL;
    if (cr == 0 && mr == 0) return "BestEffort";
    return cr == cl && mr == ml ? "Guaranteed" : "Burstable";
}

/* The first line of dir/name into buf, without its end: 0 or a negative errno. */
static int first_line(const char *dir, const char *name, char *buf, size_t cap)
{
    char path[PATH_MAX];
    FILE *f;
    int rc = 0;

    if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path)) return -ENAMETOOLONG;
    f = fopen(path, "re");
    if (f == NULL) return -errno;
    if (fgets(buf, (int)cap, f) == NULL) rc = -ENODATA;
    fclose(f);
    if (rc == 0) buf[strcspn(buf, "\n")] = '\0';
    return rc == 0 && buf[0] == '\0' ? -ENODATA : rc;
}

int place_cpuset_self(char *buf, size_t cap)
{
    static const char *const files[] = { "cpuset.cpus.effective", "cpuset.effective_cpus",
                                         "cpuset.cpus" };
    char dir[PATH_MAX];
    int rc = cgroup_self_dir("cpuset", dir, sizeof(dir));

    if (rc == -ENOENT) rc = cgroup_self_dir("", dir, sizeof(dir)); /* v2: one hierarchy */
    if (rc != 0) return rc;
    for (size_t i = 0; i < ARRAY_LEN(files); i++) {
        rc = first_line(dir, files[i], buf, cap);
        if (rc != -ENOENT) return rc;
    }
    return rc;
}
