/*
 * counters: readers for the kernel counters snapshotted around a run
 * (netstat/snmp, /proc/stat, per-process CPU and PSS, cgroup CPU and working
 * set). Parsers work on NUL-terminated text and never write to it; readers
 * slurp a file and hand it to the parser. Unknown figures become not-ok
 * struct ctr_val with a reason. See counters.h for each contract.
 *
 * Left out: caching file descriptors between snapshots (each call reopens;
 * these run before and after a run, not during it), and any sampling loop.
 */
#include "host/counters.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "util.h"

#define READ_MAX       (64u << 20) /* no /proc or cgroup file we read comes near this */
#define TREE_MAX_DEPTH 256
#define PATH_CAP       PATH_MAX

/* ---- small helpers ------------------------------------------------------------------------- */

static void val_set(struct ctr_val *v, uint64_t x)
{
    v->ok = true;
    v->v = x;
    v->why[0] = '\0';
}

__attribute__((format(printf, 2, 3))) static void val_fail(struct ctr_val *v, const char *fmt, ...)
{
    va_list ap;

    v->ok = false;
    v->v = 0;
    va_start(ap, fmt);
    vsnprintf(v->why, sizeof(v->why), fmt, ap);
    va_end(ap);
}

/* "path: strerror(-err)" */
static void val_errno(struct ctr_val *v, const char *path, int err)
{
    char buf[128];

    val_fail(v, "%s: %s", path, strerror_r(-err, buf, sizeof(buf)));
}

/* -errno, never 0 (so "rc == 0" always means the output was written). */
static int neg_errno(void)
{
    return errno > 0 ? -errno : -EIO;
}

static bool is_blank(char c)
{
    return c == ' ' || c == '\t';
}

static bool is_eol(char c)
{
    return c == '\n' || c == '\0';
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static bool is_alpha(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static const char *skip_blanks(const char *p)
{
    while (is_blank(*p))
        p++;
    return p;
}

/* The start of the line after the one p is in (or the terminating NUL). */
static const char *next_line(const char *p)
{
    while (*p != '\n' && *p != '\0')
        p++;
    return *p == '\n' ? p + 1 : p;
}

/*
 * Parses a decimal u64 at p (with a leading '-' if neg is not NULL: then
 * *neg says whether it was there). The number must end at a blank or end of
 * line. Returns the position after it, or NULL if malformed or overflowing.
 */
static const char *parse_dec(const char *p, uint64_t *v, bool *neg)
{
    uint64_t x = 0;
    const char *start;

    if (neg != NULL) {
        *neg = *p == '-';
        p += *neg;
    }
    for (start = p; is_digit(*p); p++) {
        uint64_t d = (uint64_t)(*p - '0');

        if (x > (UINT64_MAX - d) / 10) return NULL;
        x = x * 10 + d;
    }
    if (p == start || !(is_blank(*p) || is_eol(*p))) return NULL;
    *v = x;
    return p;
}

/* dir + "/" + name into buf[cap]; 0 or -ENAMETOOLONG. */
static int path_join(char *buf, size_t cap, const char *dir, const char *name)
{
    int n = snprintf(buf, cap, "%s/%s", dir, name);

    return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
}

/* Reads from fd to EOF into a malloc'd NUL-terminated buffer; NULL with *err set on failure. */
static char *read_all(int fd, int *err)
{
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);

    while (buf != NULL) {
        ssize_t r;

        if (len + 1 == cap) {
            char *nb = cap >= READ_MAX ? NULL : realloc(buf, cap * 2);

            if (nb == NULL) break;
            buf = nb;
            cap *= 2;
        }
        r = read(fd, buf + len, cap - 1 - len);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            *err = neg_errno();
            free(buf);
            return NULL;
        }
        if (r == 0) {
            buf[len] = '\0';
            return buf;
        }
        len += (size_t)r;
    }
    free(buf);
    *err = cap >= READ_MAX ? -EFBIG : -ENOMEM;
    return NULL;
}

char *read_text(const char *path, int *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    char *text;

    if (fd < 0) {
        *err = neg_errno();
        return NULL;
    }
    text = read_all(fd, err);
    close(fd);
    return text;
}

/* A file holding one decimal number (cpuacct.usage, memory.current); 0 or negative errno. */
static int read_u64_file(const char *path, uint64_t *v)
{
    const char *end;
    int rc = 0;
    char *text = read_text(path, &rc);

    if (text == NULL) return rc;
    end = parse_dec(skip_blanks(text), v, NULL);
    rc = end != NULL && *next_line(end) == '\0' && is_eol(*skip_blanks(end)) ? 0 : -EINVAL;
    free(text);
    return rc;
}

/* ---- /proc/net/netstat and /proc/net/snmp -------------------------------------------------- */

/* Length of "Prefix" in "Prefix: ..." (letters and digits before ':'), or 0 if none. */
static size_t prefix_len(const char *line)
{
    size_t n = 0;

    while (is_alpha(line[n]) || is_digit(line[n]))
        n++;
    return line[n] == ':' && n > 0 ? n : 0;
}

static int netstat_add(struct netstat *ns, const char *prefix, size_t plen, const char *name,
                       size_t nlen, uint64_t v, bool neg)
{
    struct netstat_entry *e;

    if (ns->n >= NETSTAT_MAX) return -ENOSPC;
    if (plen + 1 + nlen >= NETSTAT_NAME_MAX) return -ENAMETOOLONG;
    e = &ns->e[ns->n++];
    memcpy(e->name, prefix, plen);
    e->name[plen] = '.';
    memcpy(e->name + plen + 1, name, nlen);
    e->name[plen + 1 + nlen] = '\0';
    e->v = neg ? 0 : v;
    e->neg = neg;
    return 0;
}

/* One header line h and its value line v; appends every column. */
static int netstat_pair(struct netstat *ns, const char *h, const char *v)
{
    const char *prefix = h;
    size_t plen = prefix_len(h);

    if (plen == 0 || prefix_len(v) != plen || memcmp(h, v, plen) != 0) return -EINVAL;
    h += plen + 1;
    v += plen + 1;
    for (;;) {
        const char *name;
        uint64_t x;
        bool neg;
        int rc;

        h = skip_blanks(h);
        v = skip_blanks(v);
        if (is_eol(*h) || is_eol(*v)) return is_eol(*h) && is_eol(*v) ? 0 : -EINVAL;
        if (!is_alpha(*h)) return -EINVAL;
        for (name = h; !is_blank(*h) && !is_eol(*h); h++)
            ;
        v = parse_dec(v, &x, &neg);
        if (v == NULL) return -EINVAL;
        rc = netstat_add(ns, prefix, plen, name, (size_t)(h - name), x, neg);
        if (rc != 0) return rc;
    }
}

int netstat_parse(struct netstat *ns, const char *text)
{
    unsigned n0 = ns->n;
    const char *p = text;
    int rc = 0;

    while (rc == 0) {
        const char *vals;

        while (*p != '\0' && is_eol(*skip_blanks(p)))
            p = next_line(p);
        if (*p == '\0') break;
        vals = next_line(p);
        rc = *vals == '\0' ? -EINVAL : netstat_pair(ns, p, vals);
        p = next_line(vals);
    }
    if (rc != 0) ns->n = n0;
    return rc;
}

/* One hex column of a softnet_stat line; NULL at the end of the line. */
static const char *softnet_col(const char *p, uint64_t *v)
{
    int digits = 0;

    p = skip_blanks(p);
    *v = 0;
    for (; !is_blank(*p) && !is_eol(*p); p++, digits++) {
        int d = *p >= '0' && *p <= '9'   ? *p - '0'
                : *p >= 'a' && *p <= 'f' ? *p - 'a' + 10
                : *p >= 'A' && *p <= 'F' ? *p - 'A' + 10
                                         : -1;
        if (d < 0 || digits >= 16) return NULL;
        *v = *v << 4 | (uint64_t)d;
    }
    return digits > 0 ? p : NULL;
}

int softnet_parse(struct netstat *ns, const char *text)
{
    uint64_t dropped = 0, squeezed = 0;
    unsigned lines = 0;
    int rc;

    for (const char *p = text; *p != '\0'; p = next_line(p)) {
        uint64_t processed, drop, squeeze;
        if (is_eol(*skip_blanks(p))) continue;
        p = softnet_col(p, &processed);
        if (p != NULL) p = softnet_col(p, &drop);
        if (p != NULL) p = softnet_col(p, &squeeze);
        if (p == NULL) return -EINVAL;
        dropped += drop;
        squeezed += squeeze;
        lines++;
    }
    if (lines == 0) return -EINVAL;
    rc = netstat_add(ns, "Softnet", 7, "Dropped", 7, dropped, false);
    if (rc == 0) rc = netstat_add(ns, "Softnet", 7, "TimeSqueeze", 11, squeezed, false);
    return rc;
}

int netstat_read(struct netstat *ns)
{
    static const char *const files[] = { "/proc/net/netstat", "/proc/net/snmp",
                                         "/proc/net/softnet_stat" };

    ns->n = 0;
    for (size_t i = 0; i < ARRAY_LEN(files); i++) {
        int rc = 0;
        char *text = read_text(files[i], &rc);

        if (text == NULL) return rc;
        rc = i < 2 ? netstat_parse(ns, text) : softnet_parse(ns, text);
        free(text);
        if (rc != 0) return rc;
    }
    return 0;
}

static const struct netstat_entry *netstat_find(const struct netstat *ns, const char *name)
{
    for (unsigned i = 0; i < ns->n && i < NETSTAT_MAX; i++)
        if (strcmp(ns->e[i].name, name) == 0) return &ns->e[i];
    return NULL;
}

int netstat_get(const struct netstat *ns, const char *name, uint64_t *v)
{
    const struct netstat_entry *e = netstat_find(ns, name);

    if (e == NULL) return -ENOENT;
    if (e->neg) return -ERANGE;
    *v = e->v;
    return 0;
}

struct ctr_val netstat_delta(const struct netstat *before, const struct netstat *after,
                             const char *name)
{
    const struct netstat_entry *a = netstat_find(before, name);
    const struct netstat_entry *b = netstat_find(after, name);
    struct ctr_val r;

    if (a == NULL || b == NULL)
        val_fail(&r, "%s: not in the %s snapshot", name, a == NULL ? "before" : "after");
    else if (a->neg || b->neg)
        val_fail(&r, "%s: negative (a constant, not a counter)", name);
    else if (b->v < a->v)
        val_fail(&r, "%s went backwards: %" PRIu64 " -> %" PRIu64, name, a->v, b->v);
    else
        val_set(&r, b->v - a->v);
    return r;
}

/* ---- /proc/stat ---------------------------------------------------------------------------- */

int procstat_parse(const char *text, struct cpu_jiffies *out)
{
    uint64_t f[8];
    const char *p = text;

    while (*p != '\0' && strncmp(p, "cpu ", 4) != 0)
        p = next_line(p);
    if (*p == '\0') return -ENOENT;
    p += 4;
    for (size_t i = 0; i < ARRAY_LEN(f); i++) {
        p = parse_dec(skip_blanks(p), &f[i], NULL);
        if (p == NULL) return -EINVAL;
    }
    out->user = f[0];
    out->nice = f[1];
    out->system = f[2];
    out->idle = f[3];
    out->iowait = f[4];
    out->irq = f[5];
    out->softirq = f[6];
    out->steal = f[7];
    out->cpus = 0;
    for (p = next_line(p); *p != '\0'; p = next_line(p))
        if (strncmp(p, "cpu", 3) == 0 && is_digit(p[3])) out->cpus++;
    return 0;
}

int procstat_read(struct cpu_jiffies *out)
{
    int rc = 0;
    char *text = read_text("/proc/stat", &rc);

    if (text == NULL) return rc;
    rc = procstat_parse(text, out);
    free(text);
    return rc;
}

static uint64_t delta0(uint64_t a, uint64_t b)
{
    return b > a ? b - a : 0;
}

uint64_t clock_ticks_ns(uint64_t ticks)
{
    long tck = sysconf(_SC_CLK_TCK);
    uint64_t hz = tck > 0 ? (uint64_t)tck : 100;

    /* split so ticks * 1e9 cannot overflow */
    return ticks / hz * NS_PER_S + ticks % hz * NS_PER_S / hz;
}

uint64_t procstat_busy_ns(const struct cpu_jiffies *a, const struct cpu_jiffies *b)
{
    return clock_ticks_ns(delta0(a->user, b->user) + delta0(a->nice, b->nice) +
                          delta0(a->system, b->system) + delta0(a->irq, b->irq) +
                          delta0(a->softirq, b->softirq));
}

uint64_t procstat_steal_ns(const struct cpu_jiffies *a, const struct cpu_jiffies *b)
{
    return clock_ticks_ns(delta0(a->steal, b->steal));
}

uint64_t procstat_idle_busy_ns(const struct cpu_jiffies *a, const struct cpu_jiffies *b,
                               uint64_t window_ns)
{
    uint64_t all = (uint64_t)b->cpus * window_ns;
    uint64_t off = clock_ticks_ns(delta0(a->idle, b->idle) + delta0(a->iowait, b->iowait) +
                                  delta0(a->steal, b->steal));

    return all > off ? all - off : 0;
}

/* ---- processes ----------------------------------------------------------------------------- */

/* "/proc/PID/name", or "/proc/self/name" for pid 0. */
static void proc_path(char *buf, size_t cap, pid_t pid, const char *name)
{
    if (pid == 0)
        snprintf(buf, cap, "/proc/self/%s", name);
    else
        snprintf(buf, cap, "/proc/%d/%s", (int)pid, name);
}

struct ctr_val proc_cpu_ns(pid_t pid)
{
    struct ctr_val r;
    struct timespec ts;
    clockid_t cid;
    char buf[128];
    int e = pid < 0 ? EINVAL : clock_getcpuclockid(pid, &cid);

    if (e == 0 && clock_gettime(cid, &ts) != 0) e = -neg_errno();
    if (e != 0)
        val_fail(&r, "pid %d: CPU clock: %s", (int)pid, strerror_r(e, buf, sizeof(buf)));
    else
        val_set(&r, (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec);
    return r;
}

/* The start of blank-separated field `skip` fields after p (p at a field), or NULL. */
static const char *skip_fields(const char *p, unsigned skip)
{
    for (unsigned i = 0; i < skip; i++) {
        while (!is_blank(*p) && !is_eol(*p))
            p++;
        p = skip_blanks(p);
        if (is_eol(*p)) return NULL;
    }
    return p;
}

/* *v = the u64 field that follows skip fields after *p; *p moves to it. false if malformed. */
static bool stat_field(const char **p, unsigned skip, uint64_t *v)
{
    const char *f = skip_fields(*p, skip);

    if (f == NULL || parse_dec(f, v, NULL) == NULL) return false;
    *p = f;
    return true;
}

int proc_stat_parse(const char *text, struct proc_stat *out)
{
    const char *p = strrchr(text, ')'), *open = strchr(text, '(');
    uint64_t ppid, cutime, cstime, start;
    size_t clen;

    if (p == NULL || p[1] != ' ' || open == NULL || open > p) return -EINVAL;
    /* the kernel's name holds 15 bytes at most: a longer one (not from /proc) is cut to those */
    clen = (size_t)(p - open - 1);
    if (clen >= sizeof(out->comm)) clen = sizeof(out->comm) - 1;
    memcpy(out->comm, open + 1, clen);
    out->comm[clen] = '\0';
    p = skip_blanks(p + 1); /* field 3, the state */
    if (is_eol(*p) || !is_blank(p[1])) return -EINVAL;
    out->state = *p;
    if (!stat_field(&p, 1, &ppid) || ppid > INT_MAX || !stat_field(&p, 12, &cutime) ||
        !stat_field(&p, 1, &cstime) || !stat_field(&p, 5, &start))
        return -EINVAL;
    out->ppid = (pid_t)ppid;
    if (cutime > UINT64_MAX - cstime) return -EINVAL;
    out->children_ticks = cutime + cstime;
    out->start_ticks = start;
    return 0;
}

int proc_stat_read(pid_t pid, struct proc_stat *out)
{
    char path[48];
    char *text;
    int rc = 0;

    if (pid < 0) return -ESRCH;
    proc_path(path, sizeof(path), pid, "stat");
    text = read_text(path, &rc);
    if (text == NULL) return rc == -ENOENT ? -ESRCH : rc; /* ESRCH: it died while read */
    rc = proc_stat_parse(text, out);
    free(text);
    return rc;
}

bool proc_state_exited(char state)
{
    return state == 'Z' || state == 'X' || state == 'x';
}

ssize_t proc_comm_roots(const char *comm, pid_t *out, size_t cap)
{
    DIR *dir = opendir("/proc");
    struct dirent *d;
    ssize_t n = 0;

    if (dir == NULL) return neg_errno();
    while ((d = readdir(dir)) != NULL) {
        struct proc_stat st = { 0 }, parent = { 0 };
        uint64_t pid;

        if (parse_dec(d->d_name, &pid, NULL) == NULL || pid == 0 || pid > INT_MAX) continue;
        /* a process gone during the scan, or unreadable, is none of them */
        if (proc_stat_read((pid_t)pid, &st) != 0 || proc_state_exited(st.state) ||
            strcmp(st.comm, comm) != 0)
            continue;
        if (st.ppid > 0 && proc_stat_read(st.ppid, &parent) == 0 && strcmp(parent.comm, comm) == 0)
            continue;
        if ((size_t)n < cap) out[n] = (pid_t)pid;
        n++;
    }
    closedir(dir);
    return n;
}

struct tree_walk {
    pid_t *out;
    size_t cap;
    size_t n;
};

static int tree_visit(struct tree_walk *w, pid_t pid, unsigned depth);

/* Visits every pid in a children file's text ("12 34 "). */
static int tree_kids(struct tree_walk *w, const char *text, unsigned depth)
{
    const char *p = text;

    while (!is_eol(*(p = skip_blanks(p)))) {
        uint64_t x;
        int rc;

        p = parse_dec(p, &x, NULL);
        if (p == NULL || x == 0 || x > INT_MAX) return -EINVAL;
        rc = tree_visit(w, (pid_t)x, depth + 1);
        if (rc != 0) return rc;
    }
    return 0;
}

/* The children forked by thread tid of pid. */
static int tree_thread(struct tree_walk *w, pid_t pid, pid_t tid, unsigned depth)
{
    char path[64];
    char *text;
    int rc = 0;

    snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid, (int)tid);
    text = read_text(path, &rc);
    if (text == NULL && (rc == -ENOENT || rc == -ESRCH)) {
        /* the thread has gone (nothing to add), or the kernel lacks the file */
        snprintf(path, sizeof(path), "/proc/%d/task/%d", (int)pid, (int)tid);
        return access(path, F_OK) == 0 ? -EOPNOTSUPP : 0;
    }
    if (text == NULL) return rc;
    rc = tree_kids(w, text, depth);
    free(text);
    return rc;
}

static int tree_visit(struct tree_walk *w, pid_t pid, unsigned depth)
{
    char path[32];
    struct dirent *d;
    DIR *dir;
    int rc = 0;

    if (depth > TREE_MAX_DEPTH) return -ELOOP;
    snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
    dir = opendir(path);
    if (dir == NULL && errno == ENOENT)
        return depth == 0 ? -ESRCH : 0; /* a descendant that exited during the walk */
    if (dir == NULL) return neg_errno();
    if (w->n < w->cap) w->out[w->n] = pid;
    w->n++;
    while (rc == 0 && (d = readdir(dir)) != NULL) {
        uint64_t tid;

        if (parse_dec(d->d_name, &tid, NULL) != NULL && tid > 0 && tid <= INT_MAX)
            rc = tree_thread(w, pid, (pid_t)tid, depth);
    }
    closedir(dir);
    return rc;
}

ssize_t proc_tree(pid_t pid, pid_t *out, size_t cap)
{
    struct tree_walk w = { .out = out, .cap = out == NULL ? 0 : cap, .n = 0 };
    int rc;

    if (pid < 0) return -ESRCH;
    rc = tree_visit(&w, pid == 0 ? getpid() : pid, 0);
    return rc != 0 ? rc : (ssize_t)w.n;
}

/* The "Key:  N kB" line of text (smaps_rollup, meminfo) in bytes; 0, -ENOENT or -EINVAL. */
static int kb_line_get(const char *text, const char *key, uint64_t *bytes)
{
    const char *p = text;
    size_t klen = strlen(key);
    uint64_t kb;

    while (*p != '\0' && strncmp(p, key, klen) != 0)
        p = next_line(p);
    if (*p == '\0') return -ENOENT;
    p = parse_dec(skip_blanks(p + klen), &kb, NULL);
    if (p == NULL) return -EINVAL;
    p = skip_blanks(p);
    if (strncmp(p, "kB", 2) != 0 || !is_eol(*skip_blanks(p + 2)) || kb > UINT64_MAX / 1024)
        return -EINVAL;
    *bytes = kb * 1024;
    return 0;
}

int smaps_rollup_parse(const char *text, uint64_t *pss_bytes)
{
    return kb_line_get(text, "Pss:", pss_bytes);
}

int meminfo_parse(const char *text, const char *key, uint64_t *bytes)
{
    char k[64];

    if (snprintf(k, sizeof(k), "%s:", key) >= (int)sizeof(k)) return -ENAMETOOLONG;
    return kb_line_get(text, k, bytes);
}

int meminfo_read(const char *path, const char *key, uint64_t *bytes)
{
    int rc = 0;
    char *text = read_text(path, &rc);

    if (text == NULL) return rc;
    rc = meminfo_parse(text, key, bytes);
    free(text);
    return rc;
}

struct ctr_val proc_pss_bytes(pid_t pid)
{
    char path[48];
    char *text;
    struct ctr_val r;
    uint64_t b;
    int rc = 0;

    proc_path(path, sizeof(path), pid, "smaps_rollup");
    text = read_text(path, &rc);
    if (text == NULL) {
        val_errno(&r, path, rc);
        return r;
    }
    rc = smaps_rollup_parse(text, &b);
    free(text);
    if (rc == -ENOENT)
        val_fail(&r, "%s: no Pss line (kernel thread or exited process)", path);
    else if (rc != 0)
        val_fail(&r, "%s: malformed Pss line", path);
    else
        val_set(&r, b);
    return r;
}

/* ---- cgroups: locating the directory ------------------------------------------------------- */

int cgroup_keyed_get(const char *text, const char *key, uint64_t *v)
{
    size_t klen = strlen(key);

    for (const char *p = text; *p != '\0'; p = next_line(p)) {
        const char *end;
        uint64_t x;

        if (klen == 0 || strncmp(p, key, klen) != 0 || !is_blank(p[klen])) continue;
        end = parse_dec(skip_blanks(p + klen), &x, NULL);
        if (end == NULL || !is_eol(*skip_blanks(end))) return -EINVAL;
        *v = x;
        return 0;
    }
    return -ENOENT;
}

/* Whether comma-separated list[len] has the item tok. */
static bool list_has(const char *list, size_t len, const char *tok)
{
    size_t tlen = strlen(tok);
    const char *end = list + len;

    while (list < end) {
        const char *comma = memchr(list, ',', (size_t)(end - list));
        size_t n = (size_t)((comma != NULL ? comma : end) - list);

        if (n == tlen && memcmp(list, tok, n) == 0) return true;
        list += n + 1;
    }
    return false;
}

/* The first c in the line at p, or NULL. */
static const char *line_chr(const char *p, char c)
{
    for (; !is_eol(*p); p++)
        if (*p == c) return p;
    return NULL;
}

/* The path on controller's line of /proc/PID/cgroup text ("4:memory:/a/b"). */
static int cg_find_path(const char *text, const char *controller, const char **path, size_t *plen)
{
    for (const char *p = text; *p != '\0'; p = next_line(p)) {
        const char *c1 = line_chr(p, ':');
        const char *c2 = c1 != NULL ? line_chr(c1 + 1, ':') : NULL;
        size_t llen;

        if (is_eol(*p)) continue;
        if (c2 == NULL || c2[1] != '/') return -EINVAL;
        llen = (size_t)(c2 - c1 - 1);
        if (controller[0] == '\0' ? llen != 0 : !list_has(c1 + 1, llen, controller)) continue;
        *path = c2 + 1;
        for (*plen = 0; !is_eol((*path)[*plen]); (*plen)++)
            ;
        return 0;
    }
    return -ENOENT;
}

/* Copies a mountinfo field, undoing its octal escapes ("\040" is a space). */
static int mi_unescape(const char *s, size_t len, char *out, size_t cap)
{
    size_t o = 0;

    for (size_t i = 0; i < len; i++) {
        char c = s[i];

        if (c == '\\' && i + 3 < len && s[i + 1] >= '0' && s[i + 1] <= '3' && s[i + 2] >= '0' &&
            s[i + 2] <= '7' && s[i + 3] >= '0' && s[i + 3] <= '7') {
            c = (char)((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
            i += 3;
        }
        if (o + 1 >= cap) return -ENAMETOOLONG;
        out[o++] = c;
    }
    out[o] = '\0';
    return 0;
}

#define MI_FIELDS 32

/* Splits the mountinfo line at p into blank-separated fields; returns how many (≤ MI_FIELDS). */
static size_t mi_split(const char *p, const char **f, size_t *flen)
{
    size_t n = 0;

    while (n < MI_FIELDS && !is_eol(*(p = skip_blanks(p)))) {
        f[n] = p;
        while (!is_blank(*p) && !is_eol(*p))
            p++;
        flen[n] = (size_t)(p - f[n]);
        n++;
    }
    return n;
}

static bool field_is(const char *f, size_t len, const char *s)
{
    return len == strlen(s) && memcmp(f, s, len) == 0;
}

/* The index of the "-" that ends the optional fields of a split mountinfo line; n if none. */
static size_t mi_sep(const char **f, const size_t *flen, size_t n)
{
    size_t k = 6; /* optional fields start here and end at "-" */

    while (k < n && !field_is(f[k], flen[k], "-"))
        k++;
    return k;
}

/* Whether the split mountinfo line is the cgroup mount serving controller. */
static bool mi_serves(const char **f, const size_t *flen, size_t n, const char *controller)
{
    size_t k = mi_sep(f, flen, n);

    if (n < 5 || k + 3 >= n) return false;
    if (controller[0] == '\0') return field_is(f[k + 1], flen[k + 1], "cgroup2");
    return field_is(f[k + 1], flen[k + 1], "cgroup") && list_has(f[k + 3], flen[k + 3], controller);
}

/* mountpoint + (path − root) into buf; -ENOENT if root does not cover path. */
static int mi_build(const char *root, const char *mp, const char *path, size_t plen, char *buf,
                    size_t cap)
{
    size_t rlen = strcmp(root, "/") == 0 ? 0 : strlen(root);
    int n;

    if (plen < rlen || memcmp(path, root, rlen) != 0 || (plen > rlen && path[rlen] != '/'))
        return -ENOENT;
    path += rlen;
    plen -= rlen;
    if (plen == 1) /* just "/" */
        plen = 0;
    if (strcmp(mp, "/") == 0 && plen > 0) mp = "";
    n = snprintf(buf, cap, "%s%.*s", mp, (int)plen, path);
    return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
}

/* One mountinfo line: 0 and buf set if it serves controller and covers path, else -ENOENT etc. */
static int mi_match(const char *line, const char *controller, const char *path, size_t plen,
                    char *buf, size_t cap)
{
    const char *f[MI_FIELDS] = { NULL };
    size_t flen[MI_FIELDS] = { 0 };
    size_t n = mi_split(line, f, flen);
    char root[PATH_CAP], mp[PATH_CAP];

    if (!mi_serves(f, flen, n, controller)) return -ENOENT;
    if (mi_unescape(f[3], flen[3], root, sizeof(root)) != 0 ||
        mi_unescape(f[4], flen[4], mp, sizeof(mp)) != 0)
        return -ENAMETOOLONG;
    return mi_build(root, mp, path, plen, buf, cap);
}

int cgroup_dir_resolve(const char *cgroup_text, const char *mountinfo_text, const char *controller,
                       char *buf, size_t cap)
{
    const char *path;
    size_t plen;
    int rc = cg_find_path(cgroup_text, controller, &path, &plen);

    if (rc != 0) return rc;
    for (const char *p = mountinfo_text; *p != '\0'; p = next_line(p)) {
        rc = mi_match(p, controller, path, plen, buf, cap);
        if (rc != -ENOENT) return rc;
    }
    return -ENOENT;
}

/* Whether prefix is dir or a directory above it ("/" is above everything). */
static bool path_under(const char *dir, const char *prefix)
{
    size_t n = strlen(prefix);

    if (strcmp(prefix, "/") == 0) return dir[0] == '/';
    return strncmp(dir, prefix, n) == 0 && (dir[n] == '\0' || dir[n] == '/');
}

/*
 * The v1 cgroup mount holding dir (the longest mount point above it): its
 * root joined with the rest of dir, the cgroup's path, into path[cap].
 */
static int mi_v1_path(const char *dir, const char *mountinfo, char *path, size_t cap)
{
    size_t best = 0;
    int rc = -ENOENT;

    for (const char *p = mountinfo; *p != '\0'; p = next_line(p)) {
        const char *f[MI_FIELDS] = { NULL };
        size_t flen[MI_FIELDS] = { 0 };
        size_t n = mi_split(p, f, flen), k = mi_sep(f, flen, n);
        char root[PATH_CAP], mp[PATH_CAP];

        if (n < 5 || k + 1 >= n || !field_is(f[k + 1], flen[k + 1], "cgroup")) continue;
        if (mi_unescape(f[3], flen[3], root, sizeof(root)) != 0 ||
            mi_unescape(f[4], flen[4], mp, sizeof(mp)) != 0 || !path_under(dir, mp) ||
            strlen(mp) < best)
            continue;
        best = strlen(mp);
        const char *rest = strcmp(mp, "/") == 0 ? dir : dir + best;
        int len = snprintf(path, cap, "%s%s", strcmp(root, "/") == 0 && rest[0] ? "" : root, rest);
        rc = len < 0 || (size_t)len >= cap ? -ENAMETOOLONG : 0;
    }
    return rc;
}

int cgroup_v1_sibling_resolve(const char *dir, const char *mountinfo_text, const char *controller,
                              char *buf, size_t cap)
{
    char path[PATH_CAP];
    int rc = mi_v1_path(dir, mountinfo_text, path, sizeof(path));

    if (rc != 0) return rc;
    for (const char *p = mountinfo_text; *p != '\0'; p = next_line(p)) {
        rc = mi_match(p, controller, path, strlen(path), buf, cap);
        if (rc != -ENOENT) return rc;
    }
    return -ENOENT;
}

int cgroup_pid_dir(pid_t pid, const char *controller, char *buf, size_t cap)
{
    char path[48];
    char *cg, *mi;
    int rc = 0;

    proc_path(path, sizeof(path), pid, "cgroup");
    cg = read_text(path, &rc);
    if (cg == NULL) return rc;
    mi = read_text("/proc/self/mountinfo", &rc);
    if (mi != NULL) {
        rc = cgroup_dir_resolve(cg, mi, controller, buf, cap);
        free(mi);
    }
    free(cg);
    return rc;
}

int cgroup_self_dir(const char *controller, char *buf, size_t cap)
{
    return cgroup_pid_dir(0, controller, buf, cap);
}

/* ---- the whole machine's CPU to the nanosecond ------------------------------------------- */

const char *machine_cpu_source_name(enum machine_cpu_source s)
{
    static const char *const names[] = { "none", "schedstat", "cpuacct", "idle" };

    return (unsigned)s < ARRAY_LEN(names) ? names[s] : "none";
}

int schedstat_parse(const char *text, uint64_t *run_ns)
{
    uint64_t sum = 0, v = 0;
    bool any = false;

    for (const char *p = text; *p != '\0'; p = next_line(p)) {
        if (strncmp(p, "version ", 8) == 0 && (!parse_dec(p + 8, &v, NULL) || v < 15))
            return -EINVAL;
        if (strncmp(p, "cpu", 3) != 0 || !is_digit(p[3])) continue;
        const char *q = p + 3;
        while (is_digit(*q))
            q++;
        for (unsigned i = 0; i < 7; i++) {
            q = parse_dec(skip_blanks(q), &v, NULL);
            if (q == NULL) return -EINVAL;
        }
        sum += v;
        any = true;
    }
    if (!any) return -ENOENT;
    *run_ns = sum;
    return 0;
}

int cgroup_root_cpuacct_resolve(const char *mountinfo_text, char *buf, size_t cap)
{
    for (const char *p = mountinfo_text; *p != '\0'; p = next_line(p)) {
        const char *f[MI_FIELDS] = { NULL };
        size_t flen[MI_FIELDS] = { 0 };
        size_t n = mi_split(p, f, flen);

        if (!mi_serves(f, flen, n, "cpuacct") || !field_is(f[3], flen[3], "/")) continue;
        return mi_unescape(f[4], flen[4], buf, cap);
    }
    return -ENOENT;
}

bool kconfig_set(const char *text, const char *name)
{
    size_t n = strlen(name);

    for (const char *p = text; *p != '\0'; p = next_line(p))
        if (strncmp(p, name, n) == 0 && strncmp(p + n, "=y", 2) == 0 && is_eol(p[n + 2]))
            return true;
    return false;
}

/* The running kernel's configuration text (/proc/config.gz, else /boot's), or NULL. */
static char *kconfig_text(void)
{
    char path[PATH_CAP], *text = NULL;
    struct utsname u;
    int rc = 0;
    gzFile z = gzopen("/proc/config.gz", "rb");

    if (z != NULL) {
        size_t cap = 1 << 20, len = 0;
        int got;
        text = malloc(cap);
        while (text != NULL && len + 1 < cap &&
               (got = gzread(z, text + len, (unsigned)(cap - 1 - len))) > 0)
            len += (size_t)got;
        if (text != NULL) text[len] = '\0';
        gzclose(z);
        return text;
    }
    if (uname(&u) != 0) return NULL;
    snprintf(path, sizeof(path), "/boot/config-%s", u.release);
    return read_text(path, &rc);
}

/* The root cpuacct.usage's path and whether interrupt time is kept apart, found once. */
static char root_usage[PATH_CAP];
static bool root_irq_apart;
static pthread_once_t root_once = PTHREAD_ONCE_INIT;

static void root_find(void)
{
    char dir[PATH_CAP];
    int rc = 0;
    char *mi = read_text("/proc/self/mountinfo", &rc), *conf;

    if (mi != NULL && cgroup_root_cpuacct_resolve(mi, dir, sizeof(dir)) == 0 &&
        path_join(root_usage, sizeof(root_usage), dir, "cpuacct.usage") != 0)
        root_usage[0] = '\0';
    free(mi);
    conf = kconfig_text();
    root_irq_apart = conf != NULL && kconfig_set(conf, "CONFIG_IRQ_TIME_ACCOUNTING");
    free(conf);
}

int machine_cpu_read(struct machine_cpu *m)
{
    int rc = 0;
    char *text = read_text("/proc/schedstat", &rc);

    memset(m, 0, sizeof(*m));
    if (text != NULL) {
        rc = schedstat_parse(text, &m->run_ns);
        free(text);
        if (rc == 0) {
            m->source = MACHINE_CPU_SCHEDSTAT;
            return 0;
        }
    }
    pthread_once(&root_once, root_find);
    if (root_usage[0] == '\0' || read_u64_file(root_usage, &m->run_ns) != 0) return -ENOENT;
    m->source = MACHINE_CPU_CPUACCT;
    m->irq_added = root_irq_apart;
    return 0;
}

/* ---- cgroups: CPU and memory --------------------------------------------------------------- */

/* 2 if dir has cgroup.controllers, else 1; negative errno if dir is not a readable directory. */
static int cgroup_version(const char *dir)
{
    char path[PATH_CAP];
    struct stat st;

    if (stat(dir, &st) != 0) return neg_errno();
    if (!S_ISDIR(st.st_mode)) return -ENOTDIR;
    if (path_join(path, sizeof(path), dir, "cgroup.controllers") != 0) return -ENAMETOOLONG;
    return access(path, F_OK) == 0 ? 2 : 1;
}

/* v = key's value in text × mul / div, or not ok naming path and key. */
static void keyed_val(struct ctr_val *v, const char *text, const char *path, const char *key,
                      uint64_t mul, uint64_t div)
{
    uint64_t x;
    int rc = cgroup_keyed_get(text, key, &x);

    if (rc == -ENOENT)
        val_fail(v, "%s: no %s", path, key);
    else if (rc != 0 || x > UINT64_MAX / mul)
        val_fail(v, "%s: malformed %s", path, key);
    else
        val_set(v, x * mul / div);
}

/* cpu.stat of dir: throttling (v1 and v2) and usage (v2). */
static void cpu_stat_vals(const char *dir, struct cgroup_cpu *out)
{
    char path[PATH_CAP];
    char *text = NULL;
    int rc = path_join(path, sizeof(path), dir, "cpu.stat");

    if (rc == 0) text = read_text(path, &rc);
    if (text == NULL) {
        val_errno(&out->nr_throttled, path, rc);
        out->throttled_us = out->nr_throttled;
        if (out->version == 2) out->usage_ns = out->nr_throttled;
        return;
    }
    keyed_val(&out->nr_throttled, text, path, "nr_throttled", 1, 1);
    if (out->version == 2) {
        keyed_val(&out->usage_ns, text, path, "usage_usec", 1000, 1);
        keyed_val(&out->throttled_us, text, path, "throttled_usec", 1, 1);
    } else {
        keyed_val(&out->throttled_us, text, path, "throttled_time", 1, 1000);
    }
    free(text);
}

/* v = the number in dir/name, or not ok with the reason. */
static bool file_val(struct ctr_val *v, const char *dir, const char *name)
{
    char path[PATH_CAP];
    uint64_t x = 0;
    int rc = path_join(path, sizeof(path), dir, name);

    if (rc == 0) rc = read_u64_file(path, &x);
    if (rc == -EINVAL)
        val_fail(v, "%s: malformed", path);
    else if (rc != 0)
        val_errno(v, path, rc);
    else
        val_set(v, x);
    return rc == 0;
}

int cgroup_cpu_read(const char *dir, struct cgroup_cpu *out)
{
    int ver = cgroup_version(dir);

    if (ver < 0) {
        out->version = 0;
        val_errno(&out->usage_ns, dir, ver);
        out->nr_throttled = out->usage_ns;
        out->throttled_us = out->usage_ns;
        return ver;
    }
    out->version = ver;
    if (ver == 1) file_val(&out->usage_ns, dir, "cpuacct.usage");
    cpu_stat_vals(dir, out);
    return 0;
}

/* All figures not ok: pid's cgroup could not be found. Returns err. */
static int cpu_fail(struct cgroup_cpu *out, pid_t pid, const char *what, int err)
{
    char buf[128];

    out->version = 0;
    val_fail(&out->usage_ns, "pid %d: %s cgroup: %s", (int)pid, what,
             strerror_r(-err, buf, sizeof(buf)));
    out->nr_throttled = out->usage_ns;
    out->throttled_us = out->usage_ns;
    return err;
}

int cgroup_cpu_pid(pid_t pid, struct cgroup_cpu *out)
{
    char acct[PATH_CAP], cpu[PATH_CAP];
    struct cgroup_cpu thr;
    int rc = cgroup_pid_dir(pid, "cpuacct", acct, sizeof(acct));

    if (rc == -ENOENT) rc = cgroup_pid_dir(pid, "", acct, sizeof(acct));
    if (rc != 0) return cpu_fail(out, pid, "cpuacct or v2", rc);
    rc = cgroup_cpu_read(acct, out);
    if (rc != 0 || out->version != 1) return rc;
    /* v1: throttling lives in the cpu controller's directory, maybe a separate mount */
    rc = cgroup_pid_dir(pid, "cpu", cpu, sizeof(cpu));
    if (rc != 0) {
        cpu_fail(&thr, pid, "v1 cpu", rc);
    } else if (strcmp(cpu, acct) == 0) {
        return 0;
    } else {
        cgroup_cpu_read(cpu, &thr);
    }
    out->nr_throttled = thr.nr_throttled;
    out->throttled_us = thr.throttled_us;
    return 0;
}

/* v = key in dir/memory.stat, or not ok with the reason. */
static bool memory_stat_val(struct ctr_val *v, const char *dir, const char *key)
{
    char path[PATH_CAP];
    char *text = NULL;
    int rc = path_join(path, sizeof(path), dir, "memory.stat");

    if (rc == 0) text = read_text(path, &rc);
    if (text == NULL) {
        val_errno(v, path, rc);
        return false;
    }
    keyed_val(v, text, path, key, 1, 1);
    free(text);
    return v->ok;
}

struct ctr_val cgroup_working_set(const char *dir)
{
    struct ctr_val usage, inactive;
    int ver = cgroup_version(dir);

    if (ver < 0) {
        val_errno(&usage, dir, ver);
        return usage;
    }
    if (!file_val(&usage, dir, ver == 2 ? "memory.current" : "memory.usage_in_bytes")) return usage;
    if (!memory_stat_val(&inactive, dir, ver == 2 ? "inactive_file" : "total_inactive_file"))
        return inactive;
    val_set(&usage, delta0(inactive.v, usage.v));
    return usage;
}

struct ctr_val cgroup_working_set_pid(pid_t pid)
{
    char dir[PATH_CAP], buf[128];
    struct ctr_val r;
    int rc = cgroup_pid_dir(pid, "memory", dir, sizeof(dir));

    if (rc == -ENOENT) rc = cgroup_pid_dir(pid, "", dir, sizeof(dir));
    if (rc == 0) return cgroup_working_set(dir);
    val_fail(&r, "pid %d: memory or v2 cgroup: %s", (int)pid, strerror_r(-rc, buf, sizeof(buf)));
    return r;
}

/* ---- cgroups: memory left under a limit ---------------------------------------------------- */

/* v1 writes "no limit" as LONG_MAX rounded down to a page (9223372036854771712). */
#define CGROUP_V1_NO_LIMIT (1ULL << 62)

/* A limit file (memory.max: "max" or bytes). 1 with *v set, 0 for "max", or a negative errno. */
static int limit_file_read(const char *path, uint64_t *v)
{
    int rc = 0;
    char *text = read_text(path, &rc);
    const char *p, *end;

    if (text == NULL) return rc;
    p = skip_blanks(text);
    if (strncmp(p, "max", 3) == 0) {
        end = p + 3;
        rc = 0;
    } else {
        end = parse_dec(p, v, NULL);
        rc = 1;
    }
    if (end == NULL || !is_eol(*skip_blanks(end)) || *next_line(end) != '\0') rc = -EINVAL;
    free(text);
    return rc;
}

/* limit − working set of dir, clamped at 0; a negative errno when the working set is unknown. */
static int room_under(const char *dir, uint64_t limit, uint64_t *room)
{
    struct ctr_val ws = cgroup_working_set(dir);

    if (!ws.ok) return -EINVAL;
    *room = delta0(ws.v, limit);
    return 0;
}

/* v1: the lower of memory.limit_in_bytes and memory.stat's hierarchical_memory_limit. */
static int mem_room_v1(const char *dir, uint64_t *room)
{
    char path[PATH_CAP];
    uint64_t limit = 0, hier;
    char *text;
    int rc = path_join(path, sizeof(path), dir, "memory.limit_in_bytes");

    if (rc == 0) rc = read_u64_file(path, &limit);
    if (rc != 0) return rc;
    if (path_join(path, sizeof(path), dir, "memory.stat") != 0) return -ENAMETOOLONG;
    text = read_text(path, &rc);
    if (text == NULL) return rc;
    if (cgroup_keyed_get(text, "hierarchical_memory_limit", &hier) == 0 && hier < limit)
        limit = hier;
    free(text);
    if (limit >= CGROUP_V1_NO_LIMIT) return 0;
    rc = room_under(dir, limit, room);
    return rc < 0 ? rc : 1;
}

/*
 * v2: the lowest room over dir and its ancestors, up to the root (the last
 * directory with cgroup.controllers); one without memory.max (the root, or
 * where the memory controller is not enabled) sets no limit.
 */
static int mem_room_v2(const char *dir, uint64_t *room)
{
    char cur[PATH_CAP], path[PATH_CAP];
    int found = 0;

    if (str_copy(cur, sizeof(cur), dir) < 0) return -ENAMETOOLONG;
    while (cgroup_version(cur) == 2) {
        uint64_t limit = 0, r;
        char *slash;
        int rc = path_join(path, sizeof(path), cur, "memory.max");

        if (rc == 0) rc = limit_file_read(path, &limit);
        if (rc < 0 && rc != -ENOENT) return rc;
        if (rc == 1) {
            if (room_under(cur, limit, &r) < 0) return -EINVAL;
            if (!found || r < *room) *room = r;
            found = 1;
        }
        slash = strrchr(cur, '/');
        if (slash == NULL || slash == cur) break;
        *slash = '\0';
    }
    return found;
}

int cgroup_mem_room(const char *dir, uint64_t *room)
{
    int ver = cgroup_version(dir);

    if (ver < 0) return ver;
    return ver == 2 ? mem_room_v2(dir, room) : mem_room_v1(dir, room);
}

int cgroup_mem_room_pid(pid_t pid, uint64_t *room)
{
    char dir[PATH_CAP];
    int rc = cgroup_pid_dir(pid, "memory", dir, sizeof(dir));

    if (rc == -ENOENT) rc = cgroup_pid_dir(pid, "", dir, sizeof(dir));
    return rc < 0 ? rc : cgroup_mem_room(dir, room);
}

/* ---- cgroups: --server-cgroup on either version -------------------------------------------- */

/*
 * The directory, in the hierarchy of v1 controller, of the cgroup a process
 * of dir is in: the first pid of dir/cgroup.procs, through cgroup_pid_dir.
 * -ENOENT for a cgroup without a process.
 */
static int v1_member_dir(const char *dir, const char *controller, char *buf, size_t cap)
{
    char path[PATH_CAP];
    char *procs;
    long pid;
    int rc = 0;

    if (snprintf(path, sizeof(path), "%s/cgroup.procs", dir) >= (int)sizeof(path))
        return -ENAMETOOLONG;
    procs = read_text(path, &rc);
    if (procs == NULL) return rc;
    pid = strtol(procs, NULL, 10);
    free(procs);
    return pid > 0 ? cgroup_pid_dir((pid_t)pid, controller, buf, cap) : -ENOENT;
}

/*
 * The directory of v1 controller for the cgroup of dir into buf: dir made
 * absolute, then cgroup_v1_sibling_resolve over mountinfo (NULL: read it).
 * Reading the live system (mountinfo NULL), when that directory does not
 * exist, the hierarchies do not nest alike (a process put in one under a
 * path the others lack): the directory of the cgroup dir's first process is
 * in there instead.
 */
static int v1_sibling(const char *dir, const char *mountinfo, const char *controller, char *buf,
                      size_t cap)
{
    char abs[PATH_CAP];
    char *own = NULL;
    struct stat st;
    bool live = mountinfo == NULL;
    int rc = 0;

    if (realpath(dir, abs) == NULL) return neg_errno();
    if (mountinfo == NULL && (mountinfo = own = read_text("/proc/self/mountinfo", &rc)) == NULL)
        return rc;
    rc = cgroup_v1_sibling_resolve(abs, mountinfo, controller, buf, cap);
    free(own);
    if (live && (rc == -ENOENT || (rc == 0 && stat(buf, &st) != 0)))
        rc = v1_member_dir(abs, controller, buf, cap);
    return rc;
}

int cgroup_cpu_read_any(const char *dir, const char *mountinfo_text, struct cgroup_cpu *out)
{
    char other[PATH_CAP];
    struct cgroup_cpu o = { 0 };
    int rc = cgroup_cpu_read(dir, out);

    if (rc != 0 || out->version != 1) return rc;
    if (!out->usage_ns.ok &&
        v1_sibling(dir, mountinfo_text, "cpuacct", other, sizeof(other)) == 0 &&
        cgroup_cpu_read(other, &o) == 0 && o.usage_ns.ok)
        out->usage_ns = o.usage_ns;
    if (!out->throttled_us.ok &&
        v1_sibling(dir, mountinfo_text, "cpu", other, sizeof(other)) == 0 &&
        cgroup_cpu_read(other, &o) == 0 && o.throttled_us.ok) {
        out->nr_throttled = o.nr_throttled;
        out->throttled_us = o.throttled_us;
    }
    return 0;
}

struct ctr_val cgroup_working_set_any(const char *dir, const char *mountinfo_text)
{
    char other[PATH_CAP];
    struct ctr_val ws = cgroup_working_set(dir), o;

    if (ws.ok || cgroup_version(dir) != 1 ||
        v1_sibling(dir, mountinfo_text, "memory", other, sizeof(other)) != 0)
        return ws;
    o = cgroup_working_set(other);
    return o.ok ? o : ws;
}
