/*
 * budget: file descriptors and memory a plan needs, against the process's
 * limits (see budget.h).
 */
#include "host/budget.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "host/counters.h"
#include "host/probe.h"

uint64_t budget_fds(uint64_t open, uint64_t load)
{
    return open + load + BUDGET_FD_SPARE;
}

uint64_t budget_server_fds(uint64_t conns, unsigned threads, unsigned listeners)
{
    return 2 * conns + listeners + threads + 1;
}

int budget_fds_open(void)
{
    DIR *dir = opendir("/proc/self/fd");
    struct dirent *d;
    int n = 0;

    if (dir == NULL) return errno > 0 ? -errno : -EIO;
    while ((d = readdir(dir)) != NULL)
        if (d->d_name[0] != '.') n++;
    closedir(dir);
    return n > 0 ? n - 1 : 0; /* the directory's own fd was listed too */
}

int budget_fds_plan(uint64_t need, uint64_t cur, uint64_t max, uint64_t *soft)
{
    *soft = cur;
    if (need <= cur) return 0;
    if (need > max) return -EMFILE;
    *soft = need;
    return 1;
}

int budget_fds_ensure(uint64_t need, struct hb_err *err)
{
    struct rlimit rl;
    uint64_t soft, was;
    int rc;

    if (getrlimit(RLIMIT_NOFILE, &rl) == -1)
        return hb_fail(err, -errno, "cannot read the open-files limit: %s", strerror(errno));
    rc = budget_fds_plan(need, rl.rlim_cur, rl.rlim_max, &soft);
    if (rc == -EMFILE)
        return hb_fail(err, rc,
                       "needs %llu file descriptors, the hard limit is %llu: raise it "
                       "(ulimit -n %llu, as root or in /etc/security/limits.conf) and run again",
                       (unsigned long long)need, (unsigned long long)rl.rlim_max,
                       (unsigned long long)need);
    if (rc == 0) return 0;
    was = rl.rlim_cur;
    rl.rlim_cur = soft;
    if (setrlimit(RLIMIT_NOFILE, &rl) == -1)
        return hb_fail(err, -errno, "needs %llu file descriptors, the limit is %llu: %s",
                       (unsigned long long)need, (unsigned long long)was, strerror(errno));
    return 0;
}

void budget_mem_read(const char *meminfo_path, struct budget_mem *m)
{
    *m = (struct budget_mem){ 0 };
    m->meminfo_ok = meminfo_read(meminfo_path, "MemAvailable", &m->meminfo) == 0;
    m->cgroup_ok = cgroup_mem_room_pid(0, &m->cgroup) == 1;
}

int budget_mem_check(uint64_t need, const struct budget_mem *m, struct hb_err *err)
{
    bool cg = m->cgroup_ok && (!m->meminfo_ok || m->cgroup < m->meminfo);
    uint64_t avail = cg ? m->cgroup : m->meminfo;
    char needs[32], has[32];

    if ((!m->meminfo_ok && !m->cgroup_ok) || need <= avail) return 0;
    bytes_format(needs, sizeof(needs), need);
    bytes_format(has, sizeof(has), avail);
    return hb_fail(
        err, -ENOMEM, "needs %s of memory for its buffers and histograms, %s is available (%s)",
        needs, has, cg ? "under the limit of its memory cgroup" : "MemAvailable in /proc/meminfo");
}

/* The first number of a one-line file, or 0. */
static uint64_t read_u64(const char *path)
{
    char line[128];
    unsigned long long v = 0;

    if (probe_read_line(path, line, sizeof(line)) < 0 || sscanf(line, "%llu", &v) != 1) return 0;
    return v;
}

void budget_limits_read(const char *meminfo_path, struct budget_limits *l)
{
    struct rlimit rl;
    char line[64];

    *l = (struct budget_limits){ 0 };
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
        l->nofile_soft = rl.rlim_cur == RLIM_INFINITY ? UINT64_MAX : rl.rlim_cur;
        l->nofile_hard = rl.rlim_max == RLIM_INFINITY ? UINT64_MAX : rl.rlim_max;
    }
    l->file_max = read_u64("/proc/sys/fs/file-max");
    l->file_nr = read_u64("/proc/sys/fs/file-nr");
    if (probe_read_line("/proc/sys/net/ipv4/ip_local_port_range", line, sizeof(line)) < 0 ||
        sscanf(line, "%u %u", &l->port_lo, &l->port_hi) != 2 || l->port_hi < l->port_lo)
        l->port_lo = l->port_hi = 0;
    l->somaxconn = (int)read_u64("/proc/sys/net/core/somaxconn");
    budget_mem_read(meminfo_path, &l->mem);
}

const char *budget_limit_name(enum budget_limit b)
{
    static const char *const names[BUDGET_LIMITS] = { "fds", "system fds", "ports", "memory" };

    return (unsigned)b < BUDGET_LIMITS ? names[b] : "?";
}

enum budget_limit budget_limits_room(const struct budget_limits *l, const struct budget_plan *p,
                                     uint64_t room[BUDGET_LIMITS])
{
    const struct budget_mem *m = &l->mem;
    bool cg = m->cgroup_ok && (!m->meminfo_ok || m->cgroup < m->meminfo);
    uint64_t avail = cg ? m->cgroup : m->meminfo;
    enum budget_limit first = BUDGET_FDS;

    for (int i = 0; i < BUDGET_LIMITS; i++)
        room[i] = UINT64_MAX;
    if (l->nofile_hard != 0 && l->nofile_hard != UINT64_MAX)
        room[BUDGET_FDS] = l->nofile_hard > p->fds_per_proc
                               ? (l->nofile_hard - p->fds_per_proc) * (p->procs ? p->procs : 1)
                               : 0;
    if (l->file_max != 0 && l->file_max < UINT64_MAX / 2)
        room[BUDGET_SYSTEM_FDS] =
            l->file_max > l->file_nr ? (l->file_max - l->file_nr) / (p->local ? 2 : 1) : 0;
    if (p->sources > 0 && l->port_hi != 0)
        room[BUDGET_PORTS] = (uint64_t)(l->port_hi - l->port_lo + 1) * p->sources;
    if ((m->meminfo_ok || m->cgroup_ok) && p->mem_per_conn > 0)
        room[BUDGET_MEMORY] = avail > p->mem_fixed ? (avail - p->mem_fixed) / p->mem_per_conn : 0;
    for (int i = 1; i < BUDGET_LIMITS; i++)
        if (room[i] < room[first]) first = (enum budget_limit)i;
    return first;
}
