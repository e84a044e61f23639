/*
 * profile: CPU-clock sampling of every CPU over a run's window, each sample
 * attributed to a side and a kernel subsystem (profile.h).
 */
#include "host/profile.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include "host/counters.h"
#include "host/ksym.h"

#define PROFILE_CPUS     256
#define RING_PAGES       64   /* a ring's data: 256 KiB of 4 KiB pages, a power of 2 */
#define PID_SLOTS        8192 /* the pid cache: open addressing, a power of 2 */
#define FOLD_SLOTS       8192 /* the stacks' hash, a power of 2 */
#define FOLD_FILL        (FOLD_SLOTS * 7 / 8)
#define SYM_UNKNOWN      UINT32_MAX
#define ANCESTORS_MAX    64
#define DRAIN_POLL_MS    50
#define LOAD_THREAD_NAME "hb-load"

struct ring {
    int fd;
    struct perf_event_mmap_page *meta;
    unsigned char *data;
    uint64_t size; /* bytes of data, a power of 2 */
    size_t map_len;
};

struct pid_slot {
    pid_t key; /* 0: empty; a pid, or for hopbench's own process a thread id */
    int8_t side;
};

struct fold {
    uint64_t hash;
    uint64_t count;
    uint8_t used, side, user, n;
    uint32_t f[PROFILE_STACK_MAX]; /* symbol indices, leaf first */
};

struct profile {
    uint64_t period_ns;
    struct ksym_table ks;
    char *mountinfo; /* /proc/self/mountinfo, for cgroup paths */
    /* the sides of the window */
    struct profile_cfg cfg;
    pid_t server_pids[PROFILE_SERVER_PIDS];
    struct service_set set;
    int side_server, side_svc[SERVICE_MAX], side_other;
    struct profile_result acc;
    /* the events */
    struct ring ring[PROFILE_CPUS];
    unsigned nring;
    uint64_t last_t[PROFILE_CPUS]; /* each CPU's last sample's time in the window, 0: none yet */
    unsigned char scratch[65536];  /* the record being read, whole (its size is 16 bits) */
    pthread_t thread;
    bool running;
    int stop_fd;
    /* caches */
    struct pid_slot pids[PID_SLOTS];
    struct fold *fold; /* FOLD_SLOTS */
    size_t nfold;
    uint64_t fold_rest[PROFILE_SIDES]; /* samples of stacks the hash had no room for */
};

/* ---- permission ---------------------------------------------------------------------------- */

static int perf_open(struct perf_event_attr *a, int cpu)
{
    return (int)syscall(SYS_perf_event_open, a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

static void attr_init(struct perf_event_attr *a, uint64_t period_ns)
{
    memset(a, 0, sizeof(*a));
    a->size = sizeof(*a);
    a->type = PERF_TYPE_SOFTWARE;
    a->config = PERF_COUNT_SW_CPU_CLOCK;
    a->sample_period = period_ns;
    a->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
                     PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN;
    a->disabled = 1;
    a->exclude_callchain_user = 1; /* user frames are not symbolized: the kernel need not copy */
    a->sample_max_stack = PROFILE_STACK_MAX;
    a->watermark = 1;
    a->wakeup_watermark = RING_PAGES * 4096 / 4;
}

int profile_check(struct hb_err *err)
{
    struct perf_event_attr a;
    int fd, paranoid = 2;
    FILE *f;

    attr_init(&a, PROFILE_PERIOD_NS);
    fd = perf_open(&a, 0);
    if (fd >= 0) {
        close(fd);
        return 0;
    }
    if (errno != EACCES && errno != EPERM)
        return hb_fail(err, -errno, "--profile: perf_event_open: %s", strerror(errno));
    f = fopen("/proc/sys/kernel/perf_event_paranoid", "re");
    if (f != NULL) {
        if (fscanf(f, "%d", &paranoid) != 1) paranoid = 2;
        fclose(f);
    }
    return hb_fail(err, -EACCES,
                   "--profile needs root, CAP_PERFMON or kernel.perf_event_paranoid <= 0 (it is "
                   "%d); run without --profile, or as root",
                   paranoid);
}

/* ---- set-up -------------------------------------------------------------------------------- */

static void rings_close(struct profile *p)
{
    for (unsigned i = 0; i < p->nring; i++) {
        if (p->ring[i].meta != NULL) munmap(p->ring[i].meta, p->ring[i].map_len);
        close(p->ring[i].fd);
    }
    p->nring = 0;
}

static int rings_open(struct profile *p, struct hb_err *err)
{
    long page = sysconf(_SC_PAGESIZE);
    int ncpu = get_nprocs_conf();
    struct perf_event_attr a;

    attr_init(&a, p->period_ns);
    a.wakeup_watermark = (uint32_t)(RING_PAGES * (uint64_t)page / 4);
    for (int cpu = 0; cpu < ncpu && p->nring < PROFILE_CPUS; cpu++) {
        struct ring *r = &p->ring[p->nring];
        int fd = perf_open(&a, cpu);
        if (fd < 0 && (errno == ENODEV || errno == EINVAL)) continue; /* offline */
        if (fd < 0)
            return hb_fail(err, -errno, "--profile: perf_event_open on CPU %d: %s", cpu,
                           strerror(errno));
        r->fd = fd;
        r->map_len = (size_t)(RING_PAGES + 1) * (size_t)page;
        void *m = mmap(NULL, r->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (m == MAP_FAILED) {
            int e = errno;
            close(fd);
            return hb_fail(err, -e, "--profile: cannot map CPU %d's samples: %s", cpu, strerror(e));
        }
        r->meta = m;
        r->data = (unsigned char *)m + page;
        r->size = (uint64_t)RING_PAGES * (uint64_t)page;
        p->nring++;
    }
    if (p->nring == 0) return hb_fail(err, -ENODEV, "%s", "--profile: no CPU to sample");
    return 0;
}

struct profile *profile_new(uint64_t period_ns, const char *kallsyms_text, bool events,
                            struct hb_err *err)
{
    struct profile *p = calloc(1, sizeof(*p));
    int rc = 0;

    if (p == NULL) {
        hb_fail(err, -ENOMEM, "%s", "--profile: out of memory");
        return NULL;
    }
    p->period_ns = period_ns ? period_ns : PROFILE_PERIOD_NS;
    p->stop_fd = -1;
    p->fold = calloc(FOLD_SLOTS, sizeof(*p->fold));
    if (p->fold == NULL) rc = hb_fail(err, -ENOMEM, "%s", "--profile: out of memory");
    if (rc == 0)
        rc = kallsyms_text != NULL ? ksym_parse(&p->ks, kallsyms_text, err)
                                   : ksym_load(&p->ks, "/proc/kallsyms", err);
    if (rc == 0) p->mountinfo = read_text("/proc/self/mountinfo", &rc);
    if (p->mountinfo == NULL && rc == 0) rc = -ENOMEM;
    if (rc < 0 && err->msg[0] == '\0')
        hb_fail(err, rc, "--profile: cannot read /proc/self/mountinfo: %s", strerror(-rc));
    if (rc == 0 && events) rc = rings_open(p, err);
    if (rc < 0) {
        profile_free(p);
        return NULL;
    }
    return p;
}

void profile_free(struct profile *p)
{
    if (p == NULL) return;
    rings_close(p);
    ksym_free(&p->ks);
    free(p->mountinfo);
    free(p->fold);
    free(p);
}

void profile_result_release(struct profile_result *r)
{
    free(r->folded);
    r->folded = NULL;
}

/* ---- sides --------------------------------------------------------------------------------- */

static int side_add(struct profile *p, const char *name)
{
    struct profile_side *s = &p->acc.side[p->acc.nsides];

    snprintf(s->name, sizeof(s->name), "%s", name);
    return (int)p->acc.nsides++;
}

/* The sides of cfg: client, hopbench, the server when there is one, each service, other. */
static void sides_set(struct profile *p, const struct profile_cfg *cfg)
{
    memset(&p->acc, 0, sizeof(p->acc));
    memset(p->pids, 0, sizeof(p->pids));
    memset(p->fold, 0, FOLD_SLOTS * sizeof(*p->fold));
    memset(p->fold_rest, 0, sizeof(p->fold_rest));
    memset(p->last_t, 0, sizeof(p->last_t));
    p->nfold = 0;
    p->cfg = *cfg;
    p->cfg.nserver_pids =
        cfg->nserver_pids < PROFILE_SERVER_PIDS ? cfg->nserver_pids : PROFILE_SERVER_PIDS;
    if (p->cfg.nserver_pids > 0)
        memcpy(p->server_pids, cfg->server_pids, p->cfg.nserver_pids * sizeof(pid_t));
    p->cfg.server_pids = p->server_pids;
    memset(&p->set, 0, sizeof(p->set));
    if (cfg->set != NULL) p->set = *cfg->set;
    p->cfg.set = &p->set;
    side_add(p, "client");
    side_add(p, "hopbench");
    p->side_server =
        p->cfg.nserver_pids > 0 || cfg->server_cgroup != NULL ? side_add(p, "server") : -1;
    for (unsigned i = 0; i < p->set.n; i++)
        p->side_svc[i] = side_add(p, p->set.svc[i].name);
    p->side_other = side_add(p, "other");
    p->acc.period_ns = p->period_ns;
    p->acc.cpus = p->nring;
}

/* Whether hopbench's thread tid is a load thread (by its name). */
static bool load_thread(pid_t self, pid_t tid)
{
    char path[64], comm[32] = "";
    FILE *f;

    snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)self, (int)tid);
    f = fopen(path, "re");
    if (f == NULL) return false;
    if (fgets(comm, sizeof(comm), f) == NULL) comm[0] = '\0';
    fclose(f);
    return strncmp(comm, LOAD_THREAD_NAME, strlen(LOAD_THREAD_NAME)) == 0;
}

/* Whether cgroup directory dir is sub or above it. */
static bool dir_within(const char *sub, const char *dir)
{
    size_t n = strlen(dir);

    while (n > 1 && dir[n - 1] == '/')
        n--;
    return strncmp(sub, dir, n) == 0 && (sub[n] == '\0' || sub[n] == '/');
}

/* Whether process pid is in cgroup directory dir (or one below it), in any hierarchy. */
static bool in_cgroup(const struct profile *p, const char *cg_text, const char *dir)
{
    static const char *const ctrl[] = { "", "cpuacct", "cpu", "memory", "pids", "name=systemd" };
    char buf[4096];

    for (size_t i = 0; i < ARRAY_LEN(ctrl); i++)
        if (cgroup_dir_resolve(cg_text, p->mountinfo, ctrl[i], buf, sizeof(buf)) == 0 &&
            dir_within(buf, dir))
            return true;
    return false;
}

static bool pid_listed(const pid_t *v, unsigned n, pid_t pid)
{
    for (unsigned i = 0; i < n; i++)
        if (v[i] == pid) return true;
    return false;
}

/* The side of a process tree's member: pid or an ancestor is a tree's root. -1: none. */
static int side_by_tree(const struct profile *p, pid_t pid)
{
    for (unsigned depth = 0; pid > 1 && depth < ANCESTORS_MAX; depth++) {
        struct proc_stat st;
        if (p->cfg.server_tree && pid_listed(p->server_pids, p->cfg.nserver_pids, pid))
            return p->side_server;
        for (unsigned i = 0; i < p->set.n; i++)
            if (p->set.svc[i].kind == SERVICE_TREE && p->set.svc[i].pid == pid)
                return p->side_svc[i];
        if (proc_stat_read(pid, &st) != 0) return -1;
        pid = st.ppid;
    }
    return -1;
}

/* The side of a cgroup's member, -1: none. */
static int side_by_cgroup(const struct profile *p, pid_t pid)
{
    char path[48];
    char *cg;
    int rc = 0, side = -1;
    bool any = p->side_server >= 0 && p->cfg.server_cgroup != NULL;

    for (unsigned i = 0; i < p->set.n; i++)
        any |= p->set.svc[i].kind == SERVICE_CGROUP;
    if (!any) return -1;
    snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
    cg = read_text(path, &rc);
    if (cg == NULL) return -1;
    if (p->side_server >= 0 && p->cfg.server_cgroup != NULL &&
        in_cgroup(p, cg, p->cfg.server_cgroup))
        side = p->side_server;
    for (unsigned i = 0; i < p->set.n && side < 0; i++)
        if (p->set.svc[i].kind == SERVICE_CGROUP && in_cgroup(p, cg, p->set.svc[i].dir))
            side = p->side_svc[i];
    free(cg);
    return side;
}

/* The side of process pid's thread tid, found from /proc (once per pid: side_of caches it). */
static int side_find(const struct profile *p, pid_t pid, pid_t tid)
{
    int side;

    if (pid == p->cfg.self) return load_thread(pid, tid) ? 0 : 1;
    if (p->side_server >= 0 && pid_listed(p->server_pids, p->cfg.nserver_pids, pid))
        return p->side_server;
    for (unsigned i = 0; i < p->set.n; i++)
        if (p->set.svc[i].kind != SERVICE_CGROUP && p->set.svc[i].pid == pid) return p->side_svc[i];
    side = side_by_tree(p, pid);
    if (side < 0) side = side_by_cgroup(p, pid);
    return side >= 0 ? side : p->side_other;
}

static int side_of(struct profile *p, pid_t pid, pid_t tid)
{
    pid_t key = pid == p->cfg.self ? tid : pid;
    size_t i = ((size_t)key * 2654435761u) & (PID_SLOTS - 1);

    for (size_t probes = 0; probes < PID_SLOTS; probes++, i = (i + 1) & (PID_SLOTS - 1)) {
        if (p->pids[i].key == key) return p->pids[i].side;
        if (p->pids[i].key == 0) {
            p->pids[i].key = key;
            p->pids[i].side = (int8_t)side_find(p, pid, tid);
            return p->pids[i].side;
        }
    }
    return side_find(p, pid, tid); /* full: found each time */
}

/* ---- samples ------------------------------------------------------------------------------- */

static int8_t sym_subsys(struct profile *p, long k)
{
    if (k < 0) return -1;
    if (p->ks.subsys[k] == -2)
        p->ks.subsys[k] = (int8_t)subsys_of_symbol(ksym_name(&p->ks, (size_t)k));
    return p->ks.subsys[k];
}

static void fold_add(struct profile *p, int side, bool user, const uint32_t *f, unsigned n,
                     uint64_t count)
{
    uint64_t h = 1469598103934665603ULL;

    h = (h ^ (uint64_t)side) * 1099511628211ULL;
    h = (h ^ (uint64_t)user) * 1099511628211ULL;
    for (unsigned i = 0; i < n; i++)
        h = (h ^ f[i]) * 1099511628211ULL;
    for (size_t i = h & (FOLD_SLOTS - 1), probes = 0; probes < FOLD_SLOTS;
         probes++, i = (i + 1) & (FOLD_SLOTS - 1)) {
        struct fold *e = &p->fold[i];
        if (e->used && e->hash == h && e->side == side && e->user == user && e->n == n &&
            memcmp(e->f, f, n * sizeof(*f)) == 0) {
            e->count += count;
            return;
        }
        if (!e->used) {
            if (p->nfold >= FOLD_FILL) break;
            *e = (struct fold){ .hash = h,
                                .count = count,
                                .used = 1,
                                .side = (uint8_t)side,
                                .user = user,
                                .n = (uint8_t)n };
            memcpy(e->f, f, n * sizeof(*f));
            p->nfold++;
            return;
        }
    }
    p->fold_rest[side] += count;
}

void profile_feed(struct profile *p, pid_t pid, pid_t tid, bool user, const uint64_t *ips,
                  unsigned nips, uint64_t period)
{
    int8_t sub[PROFILE_STACK_MAX];
    uint32_t sym[PROFILE_STACK_MAX];
    unsigned n = nips < PROFILE_STACK_MAX ? nips : PROFILE_STACK_MAX;
    enum prof_subsys s;
    int side;

    if (user) n = 0; /* the kernel frames of a user-mode sample are none */
    for (unsigned i = 0; i < n; i++) {
        long k = ksym_find(&p->ks, ips[i]);
        sym[i] = k < 0 ? SYM_UNKNOWN : (uint32_t)k;
        sub[i] = sym_subsys(p, k);
    }
    s = subsys_of_chain(sub, n, user);
    p->acc.samples++;
    if (pid == 0 && s == SUB_OTHER) { /* the idle loop */
        p->acc.idle++;
        p->acc.idle_ns += period;
        return;
    }
    side = pid == 0 ? p->side_other : side_of(p, pid, tid);
    p->acc.side[side].samples++;
    p->acc.side[side].ns[s] += period;
    fold_add(p, side, user, sym, n, 1);
}

void profile_sample(struct profile *p, unsigned cpu, uint64_t t_ns, pid_t pid, pid_t tid, bool user,
                    const uint64_t *ips, unsigned nips)
{
    uint64_t periods = 1;

    if (cpu < PROFILE_CPUS) {
        uint64_t prev = p->last_t[cpu];
        if (prev != 0 && t_ns > prev) {
            periods = (t_ns - prev + p->period_ns / 2) / p->period_ns;
            if (periods == 0) periods = 1;
        }
        if (t_ns > prev) p->last_t[cpu] = t_ns;
    }
    p->acc.missed += periods - 1;
    profile_feed(p, pid, tid, user, ips, nips, periods * p->period_ns);
}

/* ---- the rings ----------------------------------------------------------------------------- */

/* Copies len bytes at ring offset off (wrapping) into dst. */
static void ring_copy(const struct ring *r, uint64_t off, void *dst, size_t len)
{
    size_t at = (size_t)(off & (r->size - 1)), first = (size_t)r->size - at;

    if (first >= len) {
        memcpy(dst, r->data + at, len);
        return;
    }
    memcpy(dst, r->data + at, first);
    memcpy((unsigned char *)dst + first, r->data, len - first);
}

/* One PERF_RECORD_SAMPLE of the layout attr_init asks for, from CPU cpu's ring. */
static void sample_take(struct profile *p, unsigned cpu, const struct perf_event_header *h,
                        const unsigned char *b)
{
    const unsigned char *end = b + h->size, *q = b + sizeof(*h);
    uint64_t ips[PROFILE_STACK_MAX], ip, t, nr;
    uint32_t pid, tid;
    unsigned n = 0;
    bool kernel = false;

    if (end - q < (ptrdiff_t)(6 * 8)) return;
    memcpy(&ip, q, 8);
    memcpy(&pid, q + 8, 4);
    memcpy(&tid, q + 12, 4);
    memcpy(&t, q + 16, 8);
    q += 8 + 8 + 8 + 8 + 8; /* ip, pid/tid, time, cpu/res, period (the nominal one) */
    memcpy(&nr, q, 8);
    q += 8;
    if (nr > (uint64_t)(end - q) / 8) return;
    for (uint64_t i = 0; i < nr; i++) {
        uint64_t a;
        memcpy(&a, q + 8 * i, 8);
        if (a >= (uint64_t)PERF_CONTEXT_MAX) {
            kernel = a == (uint64_t)PERF_CONTEXT_KERNEL;
            continue;
        }
        if (kernel && n < PROFILE_STACK_MAX) ips[n++] = a;
    }
    bool user = (h->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_USER;
    if (!user && n == 0) ips[n++] = ip;
    profile_sample(p, cpu, t, (pid_t)pid, (pid_t)tid, user, ips, n);
}

static void ring_drain(struct profile *p, unsigned cpu)
{
    struct ring *r = &p->ring[cpu];
    uint64_t head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
    uint64_t tail = r->meta->data_tail;

    while (tail + sizeof(struct perf_event_header) <= head) {
        struct perf_event_header h;
        ring_copy(r, tail, &h, sizeof(h));
        if (h.size < sizeof(h) || tail + h.size > head) break;
        ring_copy(r, tail, p->scratch, h.size); /* a u16 size: the scratch holds any record */
        if (h.type == PERF_RECORD_SAMPLE) sample_take(p, cpu, &h, p->scratch);
        if (h.type == PERF_RECORD_THROTTLE) p->acc.throttled++;
        if (h.type == PERF_RECORD_LOST && h.size >= sizeof(h) + 16) {
            uint64_t lost;
            memcpy(&lost, p->scratch + sizeof(h) + 8, 8);
            p->acc.lost += lost;
        }
        tail += h.size;
    }
    __atomic_store_n(&r->meta->data_tail, tail, __ATOMIC_RELEASE);
}

static void *drain_main(void *arg)
{
    struct profile *p = arg;
    struct pollfd fds[PROFILE_CPUS + 1];

    uint64_t cpu0 = thread_cpu_ns();

    prctl(PR_SET_NAME, "hb-profile");
    for (unsigned i = 0; i < p->nring; i++)
        fds[i] = (struct pollfd){ .fd = p->ring[i].fd, .events = POLLIN };
    fds[p->nring] = (struct pollfd){ .fd = p->stop_fd, .events = POLLIN };
    for (;;) {
        for (unsigned i = 0; i < p->nring; i++)
            ring_drain(p, i);
        if (poll(fds, p->nring + 1, DRAIN_POLL_MS) > 0 && fds[p->nring].revents != 0) break;
    }
    p->acc.self_ns = thread_cpu_ns() - cpu0;
    return NULL;
}

int profile_begin(struct profile *p, const struct profile_cfg *cfg)
{
    sides_set(p, cfg);
    if (p->nring == 0) return 0;
    for (unsigned i = 0; i < p->nring; i++) {
        struct ring *r = &p->ring[i];
        r->meta->data_tail = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
        ioctl(r->fd, PERF_EVENT_IOC_RESET, 0);
    }
    p->stop_fd = eventfd(0, EFD_CLOEXEC);
    if (p->stop_fd < 0) return -errno;
    for (unsigned i = 0; i < p->nring; i++)
        ioctl(p->ring[i].fd, PERF_EVENT_IOC_ENABLE, 0);
    p->running = pthread_create(&p->thread, NULL, drain_main, p) == 0;
    return p->running ? 0 : -EAGAIN;
}

/* Sorts the stacks by count, most first. */
static int by_count(const void *a, const void *b)
{
    const struct fold *x = *(const struct fold *const *)a, *y = *(const struct fold *const *)b;

    return x->count != y->count ? (x->count < y->count ? 1 : -1) : 0;
}

/* Appends line to the growing text *t (len *n, capacity *cap); false when out of memory. */
static bool text_add(char **t, size_t *n, size_t *cap, const char *s, size_t len)
{
    if (*n + len + 1 > *cap) {
        size_t nc = (*cap ? *cap * 2 : 16384) + len;
        char *x = realloc(*t, nc);
        if (x == NULL) return false;
        *t = x;
        *cap = nc;
    }
    memcpy(*t + *n, s, len);
    *n += len;
    (*t)[*n] = '\0';
    return true;
}

static bool fold_line(struct profile *p, const struct fold *e, char **t, size_t *n, size_t *cap)
{
    char num[32];
    const char *side = p->acc.side[e->side].name;
    bool ok = text_add(t, n, cap, side, strlen(side));

    if (e->user) ok = ok && text_add(t, n, cap, ";[user]", 7);
    for (unsigned i = e->n; i-- > 0;) {
        const char *name = e->f[i] == SYM_UNKNOWN ? "[unknown]" : ksym_name(&p->ks, e->f[i]);
        ok = ok && text_add(t, n, cap, ";", 1) && text_add(t, n, cap, name, strlen(name));
    }
    snprintf(num, sizeof(num), " %llu\n", (unsigned long long)e->count);
    return ok && text_add(t, n, cap, num, strlen(num));
}

/* The folded text of the window's stacks (profile_result.folded). */
static char *fold_text(struct profile *p)
{
    struct fold **v = malloc((p->nfold + 1) * sizeof(struct fold *));
    uint64_t rest[PROFILE_SIDES], busy = p->acc.samples - p->acc.idle;
    size_t k = 0, n = 0, cap = 0;
    char *t = NULL;
    bool ok = true;

    if (v == NULL) return NULL;
    memcpy(rest, p->fold_rest, sizeof(rest));
    for (size_t i = 0; i < FOLD_SLOTS; i++)
        if (p->fold[i].used) v[k++] = &p->fold[i];
    qsort(v, k, sizeof(struct fold *), by_count);
    for (size_t i = 0; i < k && ok; i++) {
        if (i < PROFILE_FOLD_MAX && (double)v[i]->count >= PROFILE_FOLD_SHARE * (double)busy)
            ok = fold_line(p, v[i], &t, &n, &cap);
        else
            rest[v[i]->side] += v[i]->count;
    }
    for (unsigned s = 0; s < p->acc.nsides && ok; s++) {
        char line[SERVICE_NAME_MAX + 48];
        if (rest[s] == 0) continue;
        int len = snprintf(line, sizeof(line), "%s;[rest] %llu\n", p->acc.side[s].name,
                           (unsigned long long)rest[s]);
        ok = text_add(&t, &n, &cap, line, (size_t)len);
    }
    free(v);
    if (!ok) {
        free(t);
        return NULL;
    }
    return t;
}

void profile_end(struct profile *p, struct profile_result *out)
{
    for (unsigned i = 0; i < p->nring; i++)
        ioctl(p->ring[i].fd, PERF_EVENT_IOC_DISABLE, 0);
    if (p->running) {
        eventfd_write(p->stop_fd, 1);
        pthread_join(p->thread, NULL);
        p->running = false;
    }
    if (p->stop_fd >= 0) close(p->stop_fd);
    p->stop_fd = -1;
    for (unsigned i = 0; i < p->nring; i++)
        ring_drain(p, i);
    *out = p->acc;
    out->folded = fold_text(p);
}
