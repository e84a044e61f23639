/*
 * leftover: the owner marks, the watcher and the later run's clean-up (see
 * leftover.h).
 */
#include "host/leftover.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "host/counters.h"

#define LEFTOVER_POLL_NS (20 * NS_PER_MS)
#define LEFTOVER_BATCH   512 /* processes signalled per cgroup and round */
#define LEFTOVER_DEPTH   8   /* cgroups below a run's: a service's, and what a server makes */

static int pidns_ino(uint64_t *ino)
{
    struct stat st;

    if (stat("/proc/self/ns/pid", &st) == -1) return -errno;
    *ino = (uint64_t)st.st_ino;
    return 0;
}

int leftover_mark(char *buf, size_t cap)
{
    struct proc_stat st;
    uint64_t ns = 0;
    int rc = proc_stat_read(0, &st);

    if (rc == 0) rc = pidns_ino(&ns);
    if (rc < 0) return rc;
    rc = snprintf(buf, cap, "%ld-%llu-%llu", (long)getpid(), (unsigned long long)st.start_ticks,
                  (unsigned long long)ns);
    return rc < 0 || (size_t)rc >= cap ? -ENAMETOOLONG : 0;
}

/* A mark's number at p, ended by stop; what follows stop, or NULL when it is not one. */
static const char *mark_num(const char *p, char stop, uint64_t *v)
{
    const char *from = p;
    uint64_t x = 0;

    for (; *p >= '0' && *p <= '9'; p++) {
        if (x > (UINT64_MAX - 9) / 10) return NULL;
        x = x * 10 + (uint64_t)(*p - '0');
    }
    if (p == from || *p != stop) return NULL;
    *v = x;
    return stop != '\0' ? p + 1 : p;
}

enum leftover_owner leftover_owner(const char *mark, long *pid)
{
    uint64_t p = 0, start = 0, ns = 0, ours = 0;
    const char *q = mark_num(mark, '-', &p);
    struct proc_stat st;
    int rc;

    *pid = 0;
    if (q != NULL) q = mark_num(q, '-', &start);
    if (q == NULL || mark_num(q, '\0', &ns) == NULL || p == 0 || p > INT_MAX)
        return LEFTOVER_UNKNOWN;
    *pid = (long)p;
    if (pidns_ino(&ours) < 0 || ours != ns) return LEFTOVER_UNKNOWN;
    rc = proc_stat_read((pid_t)p, &st);
    if (rc == -ESRCH) return LEFTOVER_DEAD;
    if (rc < 0) return LEFTOVER_UNKNOWN;
    return proc_state_exited(st.state) || st.start_ticks != start ? LEFTOVER_DEAD : LEFTOVER_ALIVE;
}

int leftover_mark_dir(const char *dir, const char *mark)
{
    char path[PATH_MAX];
    size_t len = strlen(mark);
    int n = snprintf(path, sizeof(path), "%s/%s", dir, LEFTOVER_OWNER_FILE), fd, rc;

    if (n < 0 || n >= (int)sizeof(path)) return -ENAMETOOLONG;
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd == -1) return -errno;
    ssize_t w = write(fd, mark, len);
    rc = w == (ssize_t)len ? 0 : w < 0 ? -errno : -EIO;
    if (close(fd) == -1 && rc == 0) rc = -errno;
    return rc;
}

/* The mark in tmp's directory name (opened as tmpfd), or a negative errno. */
static int mark_of_dir(int tmpfd, const char *name, char *mark, size_t cap)
{
    char path[NAME_MAX + sizeof(LEFTOVER_OWNER_FILE) + 2];
    ssize_t got;
    int fd;

    snprintf(path, sizeof(path), "%s/%s", name, LEFTOVER_OWNER_FILE);
    fd = openat(tmpfd, path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd == -1) return -errno;
    got = read(fd, mark, cap - 1);
    close(fd);
    if (got <= 0) return got == 0 ? -ENODATA : -errno;
    while (got > 0 && (mark[got - 1] == '\n' || mark[got - 1] == ' '))
        got--;
    mark[got] = '\0';
    return 0;
}

/*
 * The pids in dir/cgroup.procs, the first cap into pids; how many there are,
 * or a negative errno. A pid 0 (a process of another pid namespace) is not one.
 */
static int procs_list(const char *dir, pid_t *pids, size_t cap)
{
    char file[PATH_MAX + 16];
    long pid;
    int n = 0;
    FILE *f;

    snprintf(file, sizeof(file), "%s/cgroup.procs", dir);
    f = fopen(file, "re");
    if (f == NULL) return -errno;
    while (fscanf(f, "%ld", &pid) == 1) {
        if (pid <= 0 || pid > INT_MAX) continue;
        if ((size_t)n < cap) pids[n] = (pid_t)pid;
        n++;
    }
    fclose(f);
    return n;
}

static bool pid_listed(const pid_t *pids, int n, pid_t pid)
{
    for (int i = 0; i < n; i++)
        if (pids[i] == pid) return true;
    return false;
}

static int procs_count(const char *dir)
{
    return procs_list(dir, NULL, 0);
}

/*
 * SIGKILL to the processes in dir itself: each through a pidfd opened before
 * the cgroup is listed again, signalled only when still listed.
 */
static int procs_kill(const char *dir)
{
    pid_t pids[LEFTOVER_BATCH], again[LEFTOVER_BATCH];
    int fds[LEFTOVER_BATCH], n = procs_list(dir, pids, LEFTOVER_BATCH), m;
    bool no_pidfd = false;

    if (n <= 0) return n;
    if (n > LEFTOVER_BATCH) n = LEFTOVER_BATCH; /* the rest in the caller's next round */
    for (int i = 0; i < n; i++) {
        fds[i] = pidfd_open(pids[i], 0);
        if (fds[i] < 0 && errno == ENOSYS) no_pidfd = true;
    }
    m = procs_list(dir, again, LEFTOVER_BATCH);
    if (m > LEFTOVER_BATCH) m = LEFTOVER_BATCH;
    for (int i = 0; i < n; i++) {
        if (pid_listed(again, m, pids[i])) {
            if (fds[i] >= 0)
                pidfd_send_signal(fds[i], SIGKILL, NULL, 0);
            else if (no_pidfd)
                kill(pids[i], SIGKILL); /* no pidfds: the listing is the check */
        }
        if (fds[i] >= 0) close(fds[i]);
    }
    return 0;
}

static int cg_rmdir(const char *dir)
{
    return rmdir(dir) == -1 && errno != ENOENT ? -errno : 0;
}

/*
 * fn on every cgroup below dir, the deepest first, then on dir: the sum of
 * what it returned, or the first negative errno (every cgroup is visited).
 */
static int cg_walk(const char *dir, int (*fn)(const char *), unsigned depth)
{
    struct dirent *e;
    int sum = 0, first = 0, rc;
    DIR *d = opendir(dir);

    if (d == NULL) return -errno;
    while ((e = readdir(d)) != NULL) {
        char sub[PATH_MAX];
        if (e->d_type != DT_DIR || strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        rc = snprintf(sub, sizeof(sub), "%s/%s", dir, e->d_name);
        if (rc < 0 || rc >= (int)sizeof(sub))
            rc = -ENAMETOOLONG;
        else
            rc = depth < LEFTOVER_DEPTH ? cg_walk(sub, fn, depth + 1) : -ELOOP;
        if (rc < 0 && first == 0) first = rc;
        if (rc > 0) sum += rc;
    }
    closedir(d);
    rc = fn(dir);
    if (rc < 0 && first == 0) first = rc;
    return first < 0 ? first : sum + rc;
}

int cg_tree_count(const char *dir)
{
    return cg_walk(dir, procs_count, 0);
}

int cg_tree_kill(const char *dir)
{
    char file[PATH_MAX + 16];
    int fd;

    snprintf(file, sizeof(file), "%s/cgroup.kill", dir);
    fd = open(file, O_WRONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t w = write(fd, "1", 1);
        close(fd);
        if (w == 1) return 0; /* v2: the whole tree, at once */
    }
    return cg_walk(dir, procs_kill, 0);
}

int cg_trees_end(const char *const *dirs, unsigned n, uint64_t timeout_ns, const char **failed)
{
    uint64_t deadline = now_ns() + timeout_ns;

    for (;;) {
        int rc = 0;
        for (unsigned i = 0; i < n; i++)
            if (dirs[i][0] != '\0') cg_tree_kill(dirs[i]);
        for (unsigned i = 0; i < n; i++) {
            int r = dirs[i][0] != '\0' ? cg_walk(dirs[i], cg_rmdir, 0) : 0;
            if (r < 0 && r != -ENOENT) {
                rc = r;
                if (failed != NULL) *failed = dirs[i];
            }
        }
        if (rc == 0 || now_ns() >= deadline) return rc;
        sleep_until_ns(now_ns() + LEFTOVER_POLL_NS, NULL);
    }
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path) == -1 && errno != ENOENT ? -1 : 0;
}

int dir_tree_remove(const char *dir)
{
    if (nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS) == 0 || errno == ENOENT) return 0;
    return errno != 0 ? -errno : -EIO;
}

/* The watcher's signals: the default ones, but none from the terminal; none held. */
static void watch_signals(void)
{
    struct sigaction sa;
    sigset_t none;

    memset(&sa, 0, sizeof(sa));
    for (int sig = 1; sig < NSIG; sig++) {
        if (sig == SIGKILL || sig == SIGSTOP) continue;
        bool ign = sig == SIGINT || sig == SIGQUIT || sig == SIGHUP || sig == SIGPIPE ||
                   sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
        sa.sa_handler = ign ? SIG_IGN : SIG_DFL;
        sigaction(sig, &sa, NULL);
    }
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
}

/*
 * The watcher, a fork of hopbench (parent): keeps only fd 3, its end of the
 * socket pair, and 4, parent's pidfd (where there are pidfds); waits until
 * parent has ended or a byte comes (stand down), then ends the cgroups and
 * removes the directory.
 */
static void watch_run(pid_t parent, int sock, const char *dir, const char *const *cgs, unsigned ncg)
{
    int pfd = pidfd_open(parent, 0), null = open("/dev/null", O_RDWR | O_CLOEXEC);
    int a = fcntl(sock, F_DUPFD, 10), b = pfd >= 0 ? fcntl(pfd, F_DUPFD, 10) : -1;
    struct pollfd p[2];
    char c;

    setpgid(0, 0); /* no signal to hopbench's process group reaches it */
    prctl(PR_SET_NAME, "hopbench-watch");
    watch_signals();
    if (null >= 0) /* before 3 and 4 are taken: null may be one of them */
        for (int fd = 0; fd <= 2; fd++)
            dup2(null, fd);
    if (a < 0 || dup2(a, 3) == -1) _exit(1);
    pfd = b >= 0 && dup2(b, 4) == 4 ? 4 : -1;
    close_range(pfd >= 0 ? 5 : 4, ~0U, 0);
    p[0] = (struct pollfd){ .fd = 3, .events = POLLIN };
    p[1] = (struct pollfd){ .fd = pfd, .events = POLLIN };
    while (getppid() == parent) {
        if (poll(p, pfd >= 0 ? 2 : 1, -1) == -1) {
            if (errno != EINTR) sleep(1);
            continue;
        }
        if (pfd >= 0 && (p[1].revents & POLLIN)) break; /* parent has ended */
        if (p[0].revents == 0) continue;
        ssize_t got = read(3, &c, 1);
        if (got == 1) _exit(0); /* stand down */
        if (got == 0) break;    /* every end of hopbench's closed: it has ended */
    }
    cg_trees_end(cgs, ncg, LEFTOVER_END_NS, NULL);
    if (dir != NULL && dir[0] != '\0') dir_tree_remove(dir);
    _exit(0);
}

int leftover_watch_start(struct leftover_watch *w, const char *dir, const char *const *cgs,
                         unsigned ncg, struct hb_err *err)
{
    pid_t parent = getpid();
    int sv[2], e;

    w->pid = 0;
    w->fd = -1;
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == -1)
        return hb_fail(err, -errno, "cannot start the watcher: socketpair: %s", strerror(errno));
    w->pid = fork();
    e = errno;
    if (w->pid == 0) watch_run(parent, sv[1], dir, cgs, ncg);
    close(sv[1]);
    if (w->pid == -1) {
        w->pid = 0;
        close(sv[0]);
        return hb_fail(err, -e, "cannot start the watcher: fork: %s", strerror(e));
    }
    w->fd = sv[0];
    return 0;
}

void leftover_watch_stop(struct leftover_watch *w)
{
    uint64_t deadline = now_ns() + NS_PER_S;
    int st;

    if (w->pid <= 0) return;
    (void)send(w->fd, "x", 1, MSG_NOSIGNAL); /* fails when it is gone: reaped below all the same */
    close(w->fd);
    for (;;) {
        pid_t got = waitpid(w->pid, &st, WNOHANG);
        if (got == w->pid || (got == -1 && errno != EINTR)) break;
        if (now_ns() >= deadline) {
            kill(w->pid, SIGKILL); /* not reaped yet: still our child, its pid still its own */
            while (waitpid(w->pid, &st, 0) == -1 && errno == EINTR)
                ;
            break;
        }
        sleep_until_ns(now_ns() + 2 * NS_PER_MS, NULL);
    }
    w->pid = 0;
    w->fd = -1;
}

/* One leftover of a dead owner. */
struct found {
    char path[PATH_MAX];
    char mark[LEFTOVER_MARK_CAP];
    long pid;
    bool cg;   /* a cgroup, else a directory */
    bool done; /* taken up with its owner's */
};

struct founds {
    struct found *v;
    size_t n, cap;
};

static void found_add(struct founds *f, const char *dir, const char *name, const char *mark,
                      bool cg)
{
    struct found x = { .cg = cg };

    if (leftover_owner(mark, &x.pid) != LEFTOVER_DEAD) return;
    if (snprintf(x.path, sizeof(x.path), "%s/%s", dir, name) >= (int)sizeof(x.path)) return;
    snprintf(x.mark, sizeof(x.mark), "%s", mark);
    if (f->n == f->cap) {
        size_t cap = f->cap ? f->cap * 2 : 8;
        struct found *v = realloc(f->v, cap * sizeof(*v));
        if (v == NULL) return;
        f->v = v;
        f->cap = cap;
    }
    f->v[f->n++] = x;
}

/* This user's directories PREFIX* in sc->tmp with a mark (symbolic links not followed). */
static void scan_dirs(const struct leftover_scan *sc, struct founds *f)
{
    size_t plen = strlen(sc->prefix);
    struct dirent *e;
    DIR *d = opendir(sc->tmp);

    if (d == NULL) return;
    while ((e = readdir(d)) != NULL) {
        char mark[LEFTOVER_MARK_CAP] = "";
        struct stat st;
        if (strncmp(e->d_name, sc->prefix, plen) != 0) continue;
        if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == -1 || !S_ISDIR(st.st_mode) ||
            st.st_uid != geteuid())
            continue;
        if (mark_of_dir(dirfd(d), e->d_name, mark, sizeof(mark)) == 0)
            found_add(f, sc->tmp, e->d_name, mark, false);
    }
    closedir(d);
}

/* The cgroups PREFIX*.MARK in each of sc->cg_parents. */
static void scan_cgroups(const struct leftover_scan *sc, struct founds *f)
{
    size_t plen = strlen(sc->prefix);

    for (unsigned i = 0; i < sc->ncg; i++) {
        struct dirent *e;
        DIR *d = opendir(sc->cg_parents[i]);
        if (d == NULL) continue;
        while ((e = readdir(d)) != NULL) {
            const char *dot = strrchr(e->d_name, '.');
            if (e->d_type != DT_DIR || strncmp(e->d_name, sc->prefix, plen) != 0 ||
                dot < e->d_name + plen)
                continue;
            found_add(f, sc->cg_parents[i], e->d_name, dot + 1, true);
        }
        closedir(d);
    }
}

/* Ends and removes every leftover of the owner of f->v[first]; its line to out. */
static void clean_owner(const struct leftover_scan *sc, struct founds *f, size_t first, FILE *out)
{
    const char **cgs = xcalloc(f->n, sizeof(*cgs)), *failed = NULL;
    char dirs[1024] = "";
    size_t len = 0;
    unsigned ncg = 0;
    int procs = 0, rc;

    for (size_t j = first; j < f->n; j++) {
        struct found *x = &f->v[j];
        if (x->done || strcmp(x->mark, f->v[first].mark) != 0) continue;
        x->done = true;
        if (x->cg) {
            int n = cg_tree_count(x->path);
            cgs[ncg++] = x->path;
            if (n > procs) procs = n; /* each process is in every hierarchy */
        } else if (len < sizeof(dirs)) {
            len += (size_t)snprintf(dirs + len, sizeof(dirs) - len, "%s, ", x->path);
        }
    }
    rc = cg_trees_end(cgs, ncg, LEFTOVER_END_NS, &failed);
    for (size_t j = first; j < f->n; j++) {
        struct found *x = &f->v[j];
        int r = 0;
        if (!x->cg && strcmp(x->mark, f->v[first].mark) == 0) r = dir_tree_remove(x->path);
        if (r < 0 && rc == 0) {
            rc = r;
            failed = x->path;
        }
    }
    if (rc < 0)
        fprintf(out,
                "hopbench %s: cannot remove all leftovers of hopbench pid %ld (dead): %s: %s\n",
                sc->who, f->v[first].pid, failed, strerror(-rc));
    else if (sc->ncg > 0)
        fprintf(out,
                "hopbench %s: removed leftovers of hopbench pid %ld (dead): %s%u cgroup%s, %d "
                "process%s\n",
                sc->who, f->v[first].pid, dirs, ncg, ncg == 1 ? "" : "s", procs,
                procs == 1 ? "" : "es");
    else
        fprintf(out, "hopbench %s: removed leftovers of hopbench pid %ld (dead): %.*s\n", sc->who,
                f->v[first].pid, len >= 2 ? (int)(len - 2) : 0, dirs);
    fflush(out);
    free(cgs);
}

unsigned leftover_clean(const struct leftover_scan *sc, FILE *out)
{
    struct founds f = { 0 };
    unsigned owners = 0;

    scan_dirs(sc, &f);
    scan_cgroups(sc, &f);
    for (size_t i = 0; i < f.n; i++) {
        if (f.v[i].done) continue;
        clean_owner(sc, &f, i, out);
        owners++;
    }
    free(f.v);
    return owners;
}
