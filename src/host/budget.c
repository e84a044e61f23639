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
