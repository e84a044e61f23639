/*
 * listener: the processes listening at a local endpoint (see listener.h).
 */
#include "host/listener.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>
#include <unistd.h>

#include "host/sockdiag.h"

/* The most holders kept (nginx with many workers, php-fpm's pool): the rest are not servers. */
#define HOLDERS_MAX 4096

/* The inodes of the sockets listening at ep: *n of them in ino[SOCKDIAG_MAX_LISTENERS]. */
static int listen_inodes(const struct endpoint *ep, uint32_t *ino, size_t *n)
{
    const struct sockaddr_un *sun = (const struct sockaddr_un *)&ep->addr;
    const struct sockaddr_in *in4 = (const struct sockaddr_in *)&ep->addr;
    const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)&ep->addr;
    struct sockdiag_unix u;
    char name[sizeof(sun->sun_path) + 1];
    int rc;

    *n = 0;
    if (ep->kind == ENDPOINT_TCP)
        return sockdiag_tcp_listeners(endpoint_port(ep), ep->addr.ss_family,
                                      ep->addr.ss_family == AF_INET ? (const void *)&in4->sin_addr
                                                                    : (const void *)&in6->sin6_addr,
                                      ino, SOCKDIAG_MAX_LISTENERS, n);
    /* the name as sockdiag takes it: a path, or "@" and the abstract name */
    if (ep->kind == ENDPOINT_ABSTRACT)
        snprintf(name, sizeof(name), "@%.*s",
                 (int)(ep->addr_len - offsetof(struct sockaddr_un, sun_path) - 1),
                 sun->sun_path + 1);
    else
        snprintf(name, sizeof(name), "%s", sun->sun_path);
    rc = sockdiag_unix_count(name, &u);
    if (rc == 0 && u.listen_ino != 0) ino[(*n)++] = u.listen_ino;
    return rc;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

    return (x > y) - (x < y);
}

/* Whether pid's fds hold one of the n sorted inodes: 1, 0, or -errno (EACCES: not ours). */
static int holds(pid_t pid, const uint32_t *ino, size_t n)
{
    char path[64], link[64];
    struct dirent *d;
    DIR *dir;
    int found = 0;

    snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
    dir = opendir(path);
    if (dir == NULL) return -errno;
    while (found == 0 && (d = readdir(dir)) != NULL) {
        ssize_t len = readlinkat(dirfd(dir), d->d_name, link, sizeof(link) - 1);
        unsigned long v;
        uint32_t key;

        if (len <= 0) continue;
        link[len] = '\0';
        if (sscanf(link, "socket:[%lu]", &v) != 1 || v > UINT32_MAX) continue;
        key = (uint32_t)v;
        found = bsearch(&key, ino, n, sizeof(*ino), cmp_u32) != NULL;
    }
    closedir(dir);
    return found;
}

/* The holders of the n inodes among every process, into pids[HOLDERS_MAX]. */
static int find_holders(const uint32_t *ino, size_t n, pid_t *pids, struct listener *out)
{
    DIR *dir = opendir("/proc");
    struct dirent *d;
    pid_t self = getpid();

    if (dir == NULL) return -errno;
    while ((d = readdir(dir)) != NULL) {
        char *end = NULL;
        long pid = strtol(d->d_name, &end, 10);
        int rc;

        if (end == d->d_name || *end != '\0' || pid <= 1 || pid > INT_MAX || pid == self) continue;
        rc = holds((pid_t)pid, ino, n);
        if (rc == -EACCES || rc == -EPERM) out->unreadable++;
        if (rc != 1) continue; /* gone during the scan, unreadable, or not a holder */
        if (out->holders < HOLDERS_MAX) pids[out->holders] = (pid_t)pid;
        out->holders++;
    }
    closedir(dir);
    return 0;
}

/* The holders whose parent is none of them: the servers, with their names. */
static void find_roots(const pid_t *pids, unsigned n, struct listener *out)
{
    for (unsigned i = 0; i < n && out->nroots < LISTENER_MAX; i++) {
        struct proc_stat st;
        bool child = false;

        if (proc_stat_read(pids[i], &st) != 0 || proc_state_exited(st.state)) continue;
        for (unsigned j = 0; j < n && !child; j++)
            child = pids[j] == st.ppid;
        if (child) continue;
        out->roots[out->nroots] = pids[i];
        snprintf(out->comm[out->nroots], sizeof(out->comm[0]), "%s", st.comm);
        out->nroots++;
    }
}

int listener_find(const struct endpoint *ep, struct listener *out)
{
    uint32_t ino[SOCKDIAG_MAX_LISTENERS];
    pid_t *pids;
    size_t n = 0;
    int rc;

    memset(out, 0, sizeof(*out));
    rc = listen_inodes(ep, ino, &n);
    if (rc < 0 || n == 0) return rc;
    out->sockets = (unsigned)n;
    qsort(ino, n, sizeof(*ino), cmp_u32);
    pids = calloc(HOLDERS_MAX, sizeof(*pids));
    if (pids == NULL) return -ENOMEM;
    rc = find_holders(ino, n, pids, out);
    if (rc == 0) find_roots(pids, out->holders < HOLDERS_MAX ? out->holders : HOLDERS_MAX, out);
    free(pids);
    return rc;
}

const char *listener_why(const struct listener *l, char *buf, size_t cap)
{
    size_t len;

    if (l->nroots == 1)
        snprintf(buf, cap, "%s", "");
    else if (l->nroots > 1) {
        /* SO_REUSEPORT, or a socket passed on: whose CPU is the hop's is not known */
        snprintf(buf, cap, "%s%u processes listen there, not one tree:",
                 l->nroots == LISTENER_MAX ? "at least " : "", l->nroots);
        for (unsigned i = 0; i < l->nroots && (len = strlen(buf)) + 1 < cap; i++)
            snprintf(buf + len, cap - len, "%s %s (pid %ld)", i > 0 ? "," : "", l->comm[i],
                     (long)l->roots[i]);
    } else if (l->sockets == 0)
        snprintf(buf, cap, "%s", "no socket listens there");
    else if (l->unreadable > 0 && geteuid() != 0)
        snprintf(buf, cap, "%s",
                 "none of this user's processes holds it; only root sees others' fds");
    else
        snprintf(buf, cap, "%s", "no process holds it but pid 1, or one of another pid namespace");
    return buf;
}
