/*
 * coloc: where the client's and the server's threads ran (see coloc.h).
 */
#include "host/coloc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

void coloc_count(struct coloc_result *r, const int *client_cpus, unsigned nc,
                 const int *server_cpus, unsigned ns)
{
    if (nc == 0 || ns == 0) return;
    r->both++;
    for (unsigned i = 0; i < nc; i++)
        for (unsigned j = 0; j < ns; j++)
            if (client_cpus[i] == server_cpus[j]) {
                r->same++;
                return;
            }
}

bool coloc_share(const struct coloc_result *r, double *share)
{
    if (!r->observed || r->both == 0) return false;
    *share = (double)r->same / (double)r->both;
    return true;
}

/* ---- reading the threads --------------------------------------------------------------------- */

/* Reads fd from its start into buf (NUL-terminated); the length, or -1. */
static ssize_t read_at0(int fd, char *buf, size_t cap)
{
    ssize_t n = pread(fd, buf, cap - 1, 0);

    if (n < 0) return -1;
    buf[n] = '\0';
    return n;
}

/* A thread's run time (schedstat's first field, ns) and last CPU (stat's field 39). */
static int thread_read(const struct coloc_thread *t, uint64_t *run_ns, int *cpu)
{
    char buf[1024];
    const char *p;
    int field = 2; /* the comm, up to the last ')' */

    if (read_at0(t->sched_fd, buf, sizeof(buf)) <= 0 || sscanf(buf, "%" SCNu64, run_ns) != 1)
        return -1;
    if (read_at0(t->stat_fd, buf, sizeof(buf)) <= 0 || (p = strrchr(buf, ')')) == NULL) return -1;
    for (p++; *p != '\0' && field < 39; p++)
        if (*p == ' ' && p[1] != '\0' && p[1] != ' ') field++;
    return field == 39 && sscanf(p, "%d", cpu) == 1 ? 0 : -1;
}

/* The CPUs of the threads of one side that ran since the last sample; how many. */
static unsigned side_ran(struct coloc_thread *t, unsigned n, int *cpus)
{
    unsigned k = 0;

    for (unsigned i = 0; i < n; i++) {
        uint64_t run_ns;
        int cpu;
        if (thread_read(&t[i], &run_ns, &cpu) < 0) continue; /* exited: it ran no more */
        if (run_ns > t[i].run_ns) cpus[k++] = cpu;
        t[i].run_ns = run_ns;
    }
    return k;
}

static void sample(struct coloc *c)
{
    int cc[COLOC_MAX_THREADS], sc[COLOC_MAX_THREADS];
    unsigned nc = side_ran(c->client, c->nclient, cc), ns = side_ran(c->server, c->nserver, sc);

    coloc_count(&c->res, cc, nc, sc, ns);
}

static void *sampler_main(void *arg)
{
    struct coloc *c = arg;
    struct pollfd pfd = { .fd = c->stop_fd, .events = POLLIN };

    prctl(PR_SET_NAME, "hb-coloc");
    if (c->ncpus > 0) pthread_setaffinity_np(pthread_self(), sizeof(c->cpus), &c->cpus);
    /* nice 19, not SCHED_IDLE: on a loaded machine an idle-priority thread may never run */
    setpriority(PRIO_PROCESS, (id_t)gettid(), 19);
    sample(c); /* the run times to count from */
    c->res.both = c->res.same = 0;
    while (poll(&pfd, 1, COLOC_PERIOD_MS) == 0)
        sample(c);
    return NULL;
}

/* Opens thread tid of pid (pid 0: this process) on side *t; 0 or -1. */
static int thread_open(struct coloc_thread *t, pid_t pid, const char *tid)
{
    char path[PATH_MAX];

    snprintf(path, sizeof(path), "/proc/%d/task/%s/stat", pid > 0 ? (int)pid : (int)getpid(), tid);
    t->stat_fd = open(path, O_RDONLY | O_CLOEXEC);
    snprintf(path, sizeof(path), "/proc/%d/task/%s/schedstat", pid > 0 ? (int)pid : (int)getpid(),
             tid);
    t->sched_fd = open(path, O_RDONLY | O_CLOEXEC);
    t->run_ns = 0;
    if (t->stat_fd >= 0 && t->sched_fd >= 0) return 0;
    if (t->stat_fd >= 0) close(t->stat_fd);
    if (t->sched_fd >= 0) close(t->sched_fd);
    return -1;
}

/* Whether thread tid of this process is named name. */
static bool thread_named(const char *tid, const char *name)
{
    char path[PATH_MAX], comm[32] = "";
    FILE *f;

    snprintf(path, sizeof(path), "/proc/self/task/%s/comm", tid);
    f = fopen(path, "re");
    if (f == NULL) return false;
    if (fgets(comm, sizeof(comm), f) == NULL) comm[0] = '\0';
    fclose(f);
    comm[strcspn(comm, "\n")] = '\0';
    return strcmp(comm, name) == 0;
}

/* Opens the threads of pid (0: this process's named name) into t, after *n of them. */
static void threads_open(struct coloc_thread *t, unsigned *n, pid_t pid, const char *name)
{
    char path[64];
    struct dirent *e;
    DIR *d;

    if (pid > 0)
        snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
    else
        snprintf(path, sizeof(path), "/proc/self/task");
    d = opendir(path);
    if (d == NULL) return;
    while ((e = readdir(d)) != NULL && *n < COLOC_MAX_THREADS) {
        if (e->d_name[0] == '.') continue;
        if (name != NULL && !thread_named(e->d_name, name)) continue;
        if (thread_open(&t[*n], pid, e->d_name) == 0) (*n)++;
    }
    closedir(d);
}

static void threads_close(struct coloc_thread *t, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        close(t[i].stat_fd);
        close(t[i].sched_fd);
    }
}

void coloc_begin(struct coloc *c, const pid_t *pids, unsigned npids, const cpu_set_t *cpus,
                 unsigned ncpus)
{
    memset(&c->res, 0, sizeof(c->res));
    c->nclient = c->nserver = 0;
    c->running = false;
    c->stop_fd = -1;
    c->ncpus = ncpus;
    if (ncpus > 0) c->cpus = *cpus;
    if (npids == 0) {
        snprintf(c->res.why, sizeof(c->res.why), "%s", "the server's pid is not known");
        return;
    }
    threads_open(c->client, &c->nclient, 0, COLOC_LOAD_NAME);
    for (unsigned i = 0; i < npids; i++)
        threads_open(c->server, &c->nserver, pids[i], NULL);
    if (c->nclient == 0 || c->nserver == 0) {
        snprintf(c->res.why, sizeof(c->res.why), "%s",
                 c->nclient == 0 ? "no load thread (" COLOC_LOAD_NAME ") of this process to read"
                                 : "the server's threads' schedstat cannot be read");
        return;
    }
    c->stop_fd = eventfd(0, EFD_CLOEXEC);
    if (c->stop_fd >= 0) c->running = pthread_create(&c->thread, NULL, sampler_main, c) == 0;
    if (!c->running) snprintf(c->res.why, sizeof(c->res.why), "%s", "cannot start its sampler");
}

void coloc_end(struct coloc *c, struct coloc_result *out)
{
    if (c->running) {
        eventfd_write(c->stop_fd, 1);
        pthread_join(c->thread, NULL);
        c->res.observed = true;
        c->running = false;
    }
    if (c->stop_fd >= 0) close(c->stop_fd);
    c->stop_fd = -1;
    threads_close(c->client, c->nclient);
    threads_close(c->server, c->nserver);
    c->nclient = c->nserver = 0;
    *out = c->res;
}
