/*
 * supervisor: the private directory, the cgroups and the processes of a
 * stack's services (see supervisor.h). Services run in the foreground, each
 * its own process group; hopbench is their child subreaper, so the workers a
 * master leaves behind are reaped here too.
 */
#include "stack/supervisor.h"

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "host/counters.h"
#include "host/leftover.h"
#include "registry.h"
#include "sockio.h"

/* The hierarchies a service joins: CPU accounting, memory, and v2 (""). */
static const char *const sup_ctls[] = { "cpuacct", "cpu", "memory", "" };

#define SUP_POLL_NS (20 * NS_PER_MS)

int sup_need(const char *pattern, const char *package, char *path, size_t cap, struct hb_err *err)
{
    const char *base = strrchr(pattern, '/');
    char best[PATH_MAX] = "";
    glob_t g;

    if (glob(pattern, 0, NULL, &g) == 0) {
        for (size_t i = 0; i < g.gl_pathc; i++)
            if (access(g.gl_pathv[i], X_OK) == 0 &&
                (best[0] == '\0' || strverscmp(g.gl_pathv[i], best) > 0))
                snprintf(best, sizeof(best), "%s", g.gl_pathv[i]);
        globfree(&g);
    }
    if (best[0] != '\0') {
        if (path != NULL && (size_t)snprintf(path, cap, "%s", best) >= cap)
            return hb_fail(err, -ENAMETOOLONG, "path too long: %s", best);
        return 0;
    }
    base = base ? base + 1 : pattern;
    /* the program's name without the pattern's wildcards: "php-fpm" of "php-fpm[0-9]*" */
    return hb_fail(err, -ENOENT, "%.*s is not installed (no %s): apt-get install -y %s",
                   (int)strcspn(base, "*?["), base, pattern, package);
}

int sup_path(const struct sup *s, const char *name, char *buf, size_t cap)
{
    int n = snprintf(buf, cap, "%s/%s", s->dir, name);

    return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
}

int sup_write(const struct sup *s, const char *name, const char *text, struct hb_err *err)
{
    char path[PATH_MAX];
    size_t len = strlen(text), done = 0;
    int fd;

    if (sup_path(s, name, path, sizeof(path)) < 0)
        return hb_fail(err, -ENAMETOOLONG, "path too long: %s/%s", s->dir, name);
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd == -1) return hb_fail(err, -errno, "cannot write %s: %s", path, strerror(errno));
    if (fchmod(fd, 0644) == -1) { /* whatever the umask: the servers' workers read it */
        int e = errno;
        close(fd);
        return hb_fail(err, -e, "cannot chmod %s: %s", path, strerror(e));
    }
    while (done < len) {
        ssize_t w = write(fd, text + done, len - done);
        if (w == -1 && errno == EINTR) continue;
        if (w == -1) {
            int e = errno;
            close(fd);
            return hb_fail(err, -e, "cannot write %s: %s", path, strerror(e));
        }
        done += (size_t)w;
    }
    close(fd);
    return 0;
}

/* Whether dir was already taken by an earlier hierarchy (a combined cpu,cpuacct mount). */
static bool cg_seen(char (*parents)[PATH_MAX], unsigned n, const char *dir)
{
    for (unsigned i = 0; i < n; i++)
        if (strcmp(parents[i], dir) == 0) return true;
    return false;
}

/* The cgroup hopbench is in, in each hierarchy a stack uses (sup_ctls); how many. */
static unsigned cg_parents(char (*parents)[PATH_MAX])
{
    unsigned n = 0;

    for (size_t i = 0; i < ARRAY_LEN(sup_ctls); i++) {
        if (cgroup_self_dir(sup_ctls[i], parents[n], PATH_MAX) < 0) continue;
        if (!cg_seen(parents, n, parents[n])) n++;
    }
    return n;
}

/* The run's cgroup in each of them, named after the private directory and its owner's mark. */
static int cg_run_init(struct sup *s, const char *mark, struct hb_err *err)
{
    char parents[SUP_MAX_HIER][PATH_MAX];
    const char *tag = strrchr(s->dir, '/') + 1; /* hopbench-stack.XXXXXX */
    unsigned n = cg_parents(parents);

    for (unsigned i = 0; i < n; i++) {
        char *run = s->cg_run[s->ncg];
        int len = snprintf(run, PATH_MAX, "%s/%s.%s", parents[i], tag, mark);
        if (len < 0 || len >= PATH_MAX)
            return hb_fail(err, -ENAMETOOLONG, "cgroup path too long under %s", parents[i]);
        if (mkdir(run, 0755) == -1) {
            int e = errno;
            run[0] = '\0';
            return hb_fail(err, -e,
                           "cannot make a cgroup in %s: %s (a stack needs root or a delegated "
                           "cgroup)",
                           parents[i], strerror(e));
        }
        s->ncg++;
    }
    if (s->ncg == 0) return hb_fail(err, -ENOENT, "no cgroup hierarchy found in /proc/self/cgroup");
    return 0;
}

/* Where the private directory goes: $TMPDIR when it is absolute, else /tmp. */
static const char *sup_tmp(void)
{
    const char *tmp = getenv("TMPDIR");

    return tmp != NULL && tmp[0] == '/' ? tmp : "/tmp";
}

void sup_clean_leftovers(FILE *out)
{
    char parents[SUP_MAX_HIER][PATH_MAX];
    const char *p[SUP_MAX_HIER];
    unsigned n = cg_parents(parents);

    for (unsigned i = 0; i < n; i++)
        p[i] = parents[i];
    leftover_clean(&(struct leftover_scan){ .who = "stack",
                                            .tmp = sup_tmp(),
                                            .prefix = "hopbench-stack.",
                                            .cg_parents = p,
                                            .ncg = n },
                   out);
}

int sup_init(struct sup *s, struct hb_err *err)
{
    const char *tmp = sup_tmp(), *cgs[SUP_MAX_HIER];
    char mark[LEFTOVER_MARK_CAP];
    int n, rc;

    memset(s, 0, sizeof(*s));
    n = snprintf(s->dir, sizeof(s->dir), "%s/hopbench-stack.XXXXXX", tmp);
    if (n < 0 || (size_t)n >= sizeof(s->dir)) {
        s->dir[0] = '\0';
        return hb_fail(err, -ENAMETOOLONG, "TMPDIR is too long");
    }
    if (mkdtemp(s->dir) == NULL) {
        int e = errno;
        s->dir[0] = '\0';
        return hb_fail(err, -e, "cannot make a temporary directory in %s: %s", tmp, strerror(e));
    }
    rc = leftover_mark(mark, sizeof(mark));
    if (rc == 0) rc = leftover_mark_dir(s->dir, mark);
    if (rc < 0) return hb_fail(err, rc, "cannot mark %s as ours: %s", s->dir, strerror(-rc));
    /* Workers whose master exits before them become ours: reaped, never zombies in our cgroups. */
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    rc = cg_run_init(s, mark, err);
    if (rc < 0) return rc;
    /* hopbench killed outright: the watcher kills what is in the cgroups, removes them and dir */
    for (unsigned i = 0; i < s->ncg; i++)
        cgs[i] = s->cg_run[i];
    return leftover_watch_start(&s->watch, s->dir, cgs, s->ncg, err);
}

struct sup_svc *sup_find(struct sup *s, const char *name)
{
    for (unsigned i = 0; i < s->nsvc; i++)
        if (strcmp(s->svc[i].name, name) == 0) return &s->svc[i];
    return NULL;
}

const char *sup_cgroup_cpu(const struct sup_svc *v)
{
    return v->cg[0]; /* sup_ctls puts cpuacct first; on a v2-only host it is the v2 one */
}

/* The last line of a log, at most cap - 1 bytes of it; "(empty)" when there is none. */
static void log_last_line(const char *path, char *buf, size_t cap)
{
    char tail[1024];
    ssize_t got = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);

    snprintf(buf, cap, "(empty)");
    if (fd == -1) return;
    off_t size = lseek(fd, 0, SEEK_END);
    off_t from = size > (off_t)sizeof(tail) - 1 ? size - (off_t)sizeof(tail) + 1 : 0;
    if (size > 0) got = pread(fd, tail, sizeof(tail) - 1, from);
    close(fd);
    if (got <= 0) return;
    while (got > 0 && (tail[got - 1] == '\n' || tail[got - 1] == '\r' || tail[got - 1] == ' '))
        got--;
    tail[got] = '\0';
    const char *line = strrchr(tail, '\n');
    const char *from_line = line ? line + 1 : tail;
    size_t len = strlen(from_line) < cap - 1 ? strlen(from_line) : cap - 1;
    if (got > 0) {
        memcpy(buf, from_line, len);
        buf[len] = '\0';
    }
}

/* Reaps the service if it exited; true when it has. */
static bool svc_reap(struct sup_svc *v)
{
    int st;

    if (v->exited || v->pid <= 0) return true;
    if (waitpid(v->pid, &st, WNOHANG) != v->pid) return false;
    v->exited = true;
    v->status = st;
    return true;
}

int sup_alive(struct sup *s, struct hb_err *err)
{
    for (unsigned i = 0; i < s->nsvc; i++) {
        struct sup_svc *v = &s->svc[i];
        char how[64], last[120];
        if (!svc_reap(v)) continue;
        wait_status_text(how, sizeof(how), v->status);
        log_last_line(v->log, last, sizeof(last));
        return hb_fail(err, -ECHILD, "%s (pid %ld) %s; the last line of its log: %s", v->name,
                       (long)v->pid, how, last);
    }
    return 0;
}

/* Small and async-signal-safe: the child formats its pid with this between fork and exec. */
static size_t u64_text(uint64_t v, char *buf)
{
    char tmp[24];
    size_t n = 0, len = 0;

    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v > 0);
    while (n > 0)
        buf[len++] = tmp[--n];
    return len;
}

/* What the child could not do, sent to the parent before it exits. */
struct child_fail {
    int step; /* enum child_step */
    int err;
};

enum child_step { STEP_CGROUP = 0, STEP_LOG, STEP_USER, STEP_EXEC };

/* Takes the identity as (groups first: after setuid the process may not change them). */
static int child_become(const struct users_id *as)
{
    if (as == NULL) return 0;
    if (setgroups(as->ngroups, as->groups) == -1) return -1;
    if (setgid(as->gid) == -1) return -1;
    return setuid(as->uid);
}

/*
 * In the child, between fork and exec: only async-signal-safe calls. Joins
 * the cgroups (procs: one open cgroup.procs per hierarchy), takes its own
 * process group, its user (spec->as), the log on stdout and stderr, the
 * default signals.
 */
static void child_exec(const struct sup_spec *spec, const int *procs, unsigned nprocs, int log,
                       int report, pid_t parent)
{
    static const char *const path_only[] = { "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:"
                                             "/usr/bin:/sbin:/bin",
                                             NULL };
    struct child_fail f = { 0, 0 };
    char *const *argv, *const *env;
    char pid[24];
    size_t len = u64_text((uint64_t)getpid(), pid);

    /* execve's vectors are char *const[]: the same pointers, not cast (memcpy is safe here) */
    memcpy(&argv, &spec->argv, sizeof(argv));
    if (spec->env != NULL)
        memcpy(&env, &spec->env, sizeof(env));
    else
        memcpy(&env, &(const char *const *){ path_only }, sizeof(env));
    struct sigaction dfl;
    sigset_t none;

    for (unsigned i = 0; i < nprocs; i++)
        if (write(procs[i], pid, len) != (ssize_t)len) goto fail;
    setpgid(0, 0);
    f.step = STEP_USER;
    if (child_become(spec->as) == -1) goto fail;
    /* after the user change, which clears it: hopbench killed outright, its services go too */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127); /* killed before that: no signal will come */
    f.step = STEP_LOG;
    if (dup2(log, STDOUT_FILENO) == -1 || dup2(log, STDERR_FILENO) == -1) goto fail;
    int null = open("/dev/null", O_RDONLY);
    if (null == -1 || dup2(null, STDIN_FILENO) == -1) goto fail;
    memset(&dfl, 0, sizeof(dfl));
    dfl.sa_handler = SIG_DFL;
    for (int sig = 1; sig < NSIG; sig++)
        if (sig != SIGKILL && sig != SIGSTOP) sigaction(sig, &dfl, NULL);
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    /* Nothing but 0, 1 and 2 passes to the server, whatever hopbench inherited. */
    close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
    f.step = STEP_EXEC;
    execve(spec->argv[0], argv, env);
fail:
    f.err = errno;
    if (write(report, &f, sizeof(f)) < 0) _exit(126);
    _exit(127);
}

/* Opens cgroup.procs of each of the service's cgroups (made first). */
static int svc_cgroups(const struct sup *s, struct sup_svc *v, const char *name, int *procs,
                       struct hb_err *err)
{
    for (unsigned i = 0; i < s->ncg; i++) {
        char file[PATH_MAX + 16], dir[PATH_MAX];
        int n = snprintf(dir, sizeof(dir), "%s/%s", s->cg_run[i], name);
        if (n < 0 || n >= PATH_MAX) return hb_fail(err, -ENAMETOOLONG, "cgroup path too long");
        memcpy(v->cg[i], dir, sizeof(dir));
        if (mkdir(v->cg[i], 0755) == -1) {
            int e = errno;
            v->cg[i][0] = '\0';
            return hb_fail(err, -e, "cannot make cgroup %s: %s", s->cg_run[i], strerror(e));
        }
        snprintf(file, sizeof(file), "%s/cgroup.procs", v->cg[i]);
        procs[i] = open(file, O_WRONLY | O_CLOEXEC);
        if (procs[i] == -1)
            return hb_fail(err, -errno, "cannot open %s: %s", file, strerror(errno));
    }
    return 0;
}

/* The parent's side of the start: what the child reported, if anything. */
static int svc_started(struct sup_svc *v, int report, struct hb_err *err)
{
    static const char *const steps[] = {
        [STEP_CGROUP] = "join its cgroups",
        [STEP_LOG] = "set up its log",
        [STEP_USER] = "take its user",
        [STEP_EXEC] = "exec",
    };
    struct child_fail f;
    ssize_t got;

    do {
        got = read(report, &f, sizeof(f));
    } while (got == -1 && errno == EINTR);
    if (got != (ssize_t)sizeof(f)) return 0; /* closed by the exec: it runs */
    waitpid(v->pid, &v->status, 0);
    v->exited = true;
    return hb_fail(err, -f.err, "cannot start %s: %s: %s", v->name,
                   steps[f.step >= 0 && f.step <= STEP_EXEC ? f.step : STEP_EXEC], strerror(f.err));
}

int sup_start(struct sup *s, const struct sup_spec *spec, struct hb_err *err)
{
    int procs[SUP_MAX_HIER], pipefd[2] = { -1, -1 }, log = -1, rc;
    pid_t parent = getpid();
    struct sup_svc *v;

    if (s->nsvc == SUP_MAX_SVC) return hb_fail(err, -ENOSPC, "too many services");
    v = &s->svc[s->nsvc++];
    memset(v, 0, sizeof(*v));
    snprintf(v->name, sizeof(v->name), "%s", spec->name);
    for (unsigned i = 0; i < SUP_MAX_HIER; i++)
        procs[i] = -1;
    rc = svc_cgroups(s, v, spec->name, procs, err);
    if (rc < 0) goto out;
    char file[48], logpath[PATH_MAX];
    snprintf(file, sizeof(file), "%.31s.log", spec->name);
    if (sup_path(s, file, logpath, sizeof(logpath)) < 0) {
        rc = hb_fail(err, -ENAMETOOLONG, "path too long: %s", s->dir);
        goto out;
    }
    memcpy(v->log, logpath, sizeof(v->log));
    log = open(v->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (log == -1) {
        rc = hb_fail(err, -errno, "cannot open %s: %s", v->log, strerror(errno));
        goto out;
    }
    if (pipe2(pipefd, O_CLOEXEC) == -1) {
        rc = hb_fail(err, -errno, "pipe: %s", strerror(errno));
        goto out;
    }
    v->pid = fork();
    if (v->pid == -1) {
        v->pid = 0;
        v->exited = true;
        rc = hb_fail(err, -errno, "cannot start %s: fork: %s", v->name, strerror(errno));
        goto out;
    }
    if (v->pid == 0) child_exec(spec, procs, s->ncg, log, pipefd[1], parent);
    close(pipefd[1]);
    pipefd[1] = -1;
    rc = svc_started(v, pipefd[0], err);
out:
    for (unsigned i = 0; i < SUP_MAX_HIER; i++)
        if (procs[i] >= 0) close(procs[i]);
    if (pipefd[0] >= 0) close(pipefd[0]);
    if (pipefd[1] >= 0) close(pipefd[1]);
    if (log >= 0) close(log);
    if (rc < 0 && v->pid == 0) v->exited = true;
    return rc;
}

/* Reads and parses one reply before deadline. */
static int read_reply(int fd, const struct codec_ops *ops, void *st, uint64_t deadline,
                      struct codec_msg *msg)
{
    uint8_t buf[4096];

    for (;;) {
        ssize_t got = sock_recv(fd, buf, sizeof(buf), deadline);
        if (got < 0) return (int)got;
        enum codec_rc r;
        size_t used = 0;
        if (got == 0)
            r = ops->eof ? ops->eof(st, msg) : CODEC_ERROR;
        else
            r = ops->feed(st, buf, (size_t)got, &used, msg);
        if (r == CODEC_DONE) return 0;
        if (r == CODEC_ERROR) return -EPROTO;
    }
}

/* The exchange of sup_ask on a connected fd; why says what went wrong. */
static int ask_on(int fd, const struct sup_check *c, uint64_t deadline, char *why, size_t cap)
{
    const struct codec_ops *ops = codec_find(c->proto);
    struct codec_cfg cfg = { .opts = &c->opts.room, .local = c->ep.kind != ENDPOINT_TCP };
    struct codec_msg msg;
    void *st = xcalloc(1, ops->state_size);
    size_t need = ops->max_request(&cfg);
    uint8_t *req = xcalloc(1, need);
    int rc = 0;

    ops->init(st, &cfg);
    memset(&msg, 0, sizeof(msg));
    if (codec_session(ops, &cfg) && (rc = sock_log_in(fd, ops, st, deadline, &msg)) < 0) {
        snprintf(why, cap, "the log-in failed (%s)",
                 rc != -EPROTO     ? strerror(-rc)
                 : msg.why != NULL ? msg.why
                 : msg.error_reply ? "refused"
                                   : codec_err_str(msg.err));
        free(req);
        free(st);
        return rc;
    }
    size_t len = ops->encode(st, req, need); /* after the log-in: a request follows the session's */
    rc = len == 0 ? -EINVAL : sock_send_all(fd, req, len, deadline);
    if (rc == 0) rc = read_reply(fd, ops, st, deadline, &msg);
    if (rc == -EPROTO)
        snprintf(why, cap, "a malformed %s reply (%s)", c->proto, codec_err_str(msg.err));
    else if (rc < 0)
        snprintf(why, cap, "%s", rc == -ETIMEDOUT ? "no reply in time" : strerror(-rc));
    if (rc == 0 && msg.error_reply) {
        snprintf(why, cap, "an error reply");
        rc = -EPROTO;
    }
    if (rc == 0 && msg.status != 0 && (msg.status < 200 || msg.status > 299)) {
        snprintf(why, cap, "status %u", msg.status);
        rc = -EPROTO;
    }
    free(req);
    free(st);
    return rc;
}

int sup_ask(const struct sup_check *c, uint64_t timeout_ns, char *why, size_t cap)
{
    uint64_t deadline = now_ns() + timeout_ns;
    int fd, rc;

    if (codec_find(c->proto) == NULL) {
        snprintf(why, cap, "no %s client", c->proto);
        return -EINVAL;
    }
    fd = sock_connect(&c->ep, deadline);
    if (fd < 0) {
        snprintf(why, cap, "connect: %s", fd == -ETIMEDOUT ? "no answer in time" : strerror(-fd));
        return fd;
    }
    rc = ask_on(fd, c, deadline, why, cap);
    close(fd);
    return rc;
}

/*
 * The FastCGI records in buf[0 .. len - 1]: STDOUT content appended to out
 * (*olen of cap, the rest dropped); 1 when an END_REQUEST came, 0 when more
 * is needed; *used the whole records consumed.
 */
static int fcgi_records(const uint8_t *buf, size_t len, size_t *used, char *out, size_t cap,
                        size_t *olen)
{
    size_t off = 0;

    while (len - off >= 8) {
        size_t clen = (size_t)buf[off + 4] << 8 | buf[off + 5], plen = buf[off + 6];
        uint8_t type = buf[off + 1];
        if (len - off < 8 + clen + plen) break;
        if (type == 6) /* FCGI_STDOUT */
            for (size_t i = 0; i < clen && *olen + 1 < cap; i++)
                out[(*olen)++] = (char)buf[off + 8 + i];
        off += 8 + clen + plen;
        if (type == 3) { /* FCGI_END_REQUEST */
            *used = off;
            return 1;
        }
    }
    *used = off;
    return 0;
}

int sup_fcgi_get(const struct sup_check *c, uint64_t timeout_ns, char *out, size_t cap, char *why,
                 size_t whycap)
{
    const struct codec_ops *ops = codec_find("fcgi");
    struct codec_cfg cfg = { .opts = &c->opts.fcgi };
    uint64_t deadline = now_ns() + timeout_ns;
    uint8_t buf[16384], *req = NULL;
    size_t have = 0, olen = 0, need;
    bool pending = false;
    void *st = NULL;
    int fd, rc = 0, done = 0;

    out[0] = '\0';
    fd = endpoint_connect(&c->ep, &pending);
    if (fd < 0) {
        snprintf(why, whycap, "connect: %s", strerror(-fd));
        return fd;
    }
    st = xcalloc(1, ops->state_size);
    need = ops->max_request(&cfg);
    req = xcalloc(1, need);
    ops->init(st, &cfg);
    size_t len = ops->encode(st, req, need);
    if (pending) rc = sock_wait(fd, POLLOUT, deadline);
    if (rc == 0) rc = len == 0 ? -EINVAL : sock_send_all(fd, req, len, deadline);
    while (rc == 0 && !done) {
        ssize_t got = recv(fd, buf + have, sizeof(buf) - have, 0);
        size_t used = 0;
        if (got == -1 && (errno == EAGAIN || errno == EINTR)) {
            rc = sock_wait(fd, POLLIN, deadline);
            continue;
        }
        if (got <= 0) {
            rc = got == 0 ? -ECONNRESET : -errno;
            break;
        }
        have += (size_t)got;
        done = fcgi_records(buf, have, &used, out, cap, &olen);
        memmove(buf, buf + used, have - used);
        have -= used;
        if (!done && have == sizeof(buf)) rc = -E2BIG; /* a record larger than buf */
    }
    if (rc < 0) snprintf(why, whycap, "%s", rc == -ETIMEDOUT ? "no reply in time" : strerror(-rc));
    out[olen] = '\0';
    free(req);
    free(st);
    close(fd);
    return rc;
}

/* Waits for one check to be answered before deadline. */
static int wait_one(struct sup *s, const struct sup_check *c, uint64_t deadline,
                    const atomic_int *stop, struct hb_err *err)
{
    char why[128] = "", last[120];
    struct sup_svc *v = sup_find(s, c->svc);

    for (;;) {
        int rc = sup_alive(s, err);
        if (rc < 0) return rc;
        if (stop && atomic_load(stop)) return -EINTR;
        uint64_t now = now_ns();
        if (now >= deadline) break;
        uint64_t slice = deadline - now < NS_PER_S ? deadline - now : NS_PER_S;
        if (sup_ask(c, slice, why, sizeof(why)) == 0) return 0;
        sleep_until_ns(now_ns() + 50 * NS_PER_MS, stop);
    }
    log_last_line(v ? v->log : "", last, sizeof(last));
    return hb_fail(err, -ETIMEDOUT,
                   "%s did not answer at %s in time (%s); the last line of its "
                   "log: %s",
                   c->svc, c->ep.text, why, last);
}

int sup_wait_ready(struct sup *s, const struct sup_check *checks, unsigned n, uint64_t timeout_ns,
                   const atomic_int *stop, struct hb_err *err)
{
    uint64_t deadline = now_ns() + timeout_ns;

    for (unsigned i = 0; i < n; i++) {
        int rc = wait_one(s, &checks[i], deadline, stop, err);
        if (rc < 0) return rc;
    }
    return 0;
}

int sup_procs(const struct sup_svc *v)
{
    return v->cg[0][0] != '\0' ? cg_tree_count(v->cg[0]) : 0;
}

/* Reaps every child that ended (the services, and their workers we are subreaper of). */
static void reap_all(struct sup *s)
{
    int st;
    pid_t pid;

    while ((pid = waitpid(-1, &st, WNOHANG)) > 0)
        for (unsigned i = 0; i < s->nsvc; i++)
            if (s->svc[i].pid == pid && !s->svc[i].exited) {
                s->svc[i].exited = true;
                s->svc[i].status = st;
            }
}

/* Waits until the service and everything in its cgroup is gone, for at most wait_ns. */
static bool svc_gone(struct sup *s, struct sup_svc *v, uint64_t wait_ns)
{
    uint64_t deadline = now_ns() + wait_ns;

    for (;;) {
        reap_all(s);
        if (v->exited && sup_procs(v) <= 0) return true;
        if (now_ns() >= deadline) return false;
        sleep_until_ns(now_ns() + SUP_POLL_NS, NULL);
    }
}

/* Removes a cgroup directory; busy for a moment while its last member is reaped. */
static int cg_remove(struct sup *s, char *dir)
{
    uint64_t deadline = now_ns() + NS_PER_S;

    if (dir[0] == '\0') return 0;
    while (rmdir(dir) == -1) {
        if (errno == ENOENT) break;
        if (errno != EBUSY || now_ns() >= deadline) return -errno;
        reap_all(s);
        sleep_until_ns(now_ns() + SUP_POLL_NS, NULL);
    }
    dir[0] = '\0';
    return 0;
}

/* SIGTERM, a bounded wait, SIGKILL to all that is left in its cgroup; its cgroups removed. */
static int svc_stop(struct sup *s, struct sup_svc *v, struct hb_err *err)
{
    int rc = 0;

    if (!v->exited && v->pid > 0) kill(v->pid, SIGTERM);
    if (!svc_gone(s, v, SUP_TERM_NS)) {
        if (!v->exited && v->pid > 0) kill(v->pid, SIGKILL);
        for (unsigned i = 0; i < SUP_MAX_HIER; i++)
            if (v->cg[i][0] != '\0') cg_tree_kill(v->cg[i]);
        if (!svc_gone(s, v, SUP_KILL_NS))
            rc = hb_fail(err, -EBUSY, "%s (pid %ld) could not be stopped", v->name, (long)v->pid);
    }
    for (unsigned i = 0; i < SUP_MAX_HIER; i++) {
        char dir[PATH_MAX];
        snprintf(dir, sizeof(dir), "%s", v->cg[i]);
        if (cg_remove(s, v->cg[i]) < 0 && rc == 0)
            rc = hb_fail(err, -EBUSY, "cannot remove cgroup %s: %s", dir, strerror(errno));
    }
    return rc;
}

int sup_task(struct sup *s, const struct sup_spec *spec, uint64_t timeout_ns,
             const atomic_int *stop, struct hb_err *err)
{
    uint64_t deadline = now_ns() + timeout_ns;
    struct hb_err stop_err = { 0 };
    char how[64], last[120];
    struct sup_svc *v;
    int rc = sup_start(s, spec, err);

    if (rc < 0) return rc;
    v = &s->svc[s->nsvc - 1];
    while (!svc_reap(v) && rc == 0) {
        if (stop && atomic_load(stop))
            rc = -EINTR;
        else if (now_ns() >= deadline)
            rc = hb_fail(err, -ETIMEDOUT, "%s (pid %ld) did not end within %.0f s", v->name,
                         (long)v->pid, (double)timeout_ns / 1e9);
        else
            sleep_until_ns(now_ns() + SUP_POLL_NS, stop);
    }
    if (rc == 0 && !(WIFEXITED(v->status) && WEXITSTATUS(v->status) == 0)) {
        wait_status_text(how, sizeof(how), v->status);
        log_last_line(v->log, last, sizeof(last));
        rc = hb_fail(err, -ECHILD, "%s (pid %ld) %s; the last line of its log: %s", v->name,
                     (long)v->pid, how, last);
    }
    /* Its processes and cgroups go now; its log stays in the directory. */
    if (svc_stop(s, v, &stop_err) < 0) {
        if (rc == 0) *err = stop_err;
        return rc < 0 ? rc : -EBUSY;
    }
    s->nsvc--;
    return rc;
}

/* One line when as may not search dir or a directory above it. */
static int reach_check(const char *dir, const struct users_id *as, struct hb_err *err)
{
    char path[PATH_MAX], who[64] = "?";
    struct stat st;

    snprintf(path, sizeof(path), "%s", dir);
    for (char *slash = strrchr(path, '/'); slash != NULL; slash = strrchr(path, '/')) {
        *slash = '\0';
        const char *d = path[0] != '\0' ? path : "/";
        if (stat(d, &st) == 0 && users_may(as, &st, 1)) continue;
        users_name_of_uid(USERS_PASSWD, as->uid, who, sizeof(who));
        return hb_fail(err, -EACCES,
                       "user %s, which runs a service, cannot reach %s: no search permission "
                       "on %s (set TMPDIR to a directory it can search)",
                       who, dir, d);
    }
    return 0;
}

int sup_mkdir(struct sup *s, const char *name, const struct users_id *as, struct hb_err *err)
{
    char path[PATH_MAX];

    if (sup_path(s, name, path, sizeof(path)) < 0)
        return hb_fail(err, -ENAMETOOLONG, "path too long: %s/%s", s->dir, name);
    if (mkdir(path, 0700) == -1)
        return hb_fail(err, -errno, "cannot make %s: %s", path, strerror(errno));
    if (as == NULL) return 0;
    if (chmod(s->dir, 0711) == -1 || chown(path, as->uid, as->gid) == -1)
        return hb_fail(err, -errno, "cannot give %s to uid %ld: %s", path, (long)as->uid,
                       strerror(errno));
    return reach_check(s->dir, as, err);
}

int sup_release(struct sup *s, struct hb_err *err)
{
    struct hb_err first = { 0 };
    int rc = 0;

    for (unsigned i = s->nsvc; i-- > 0;) {
        if (svc_stop(s, &s->svc[i], err) < 0 && rc == 0) {
            rc = -EBUSY;
            first = *err;
        }
    }
    for (unsigned i = 0; i < s->ncg; i++) {
        char dir[PATH_MAX];
        snprintf(dir, sizeof(dir), "%s", s->cg_run[i]);
        if (cg_remove(s, s->cg_run[i]) < 0 && rc == 0)
            rc = hb_fail(&first, -EBUSY, "cannot remove cgroup %s: %s", dir, strerror(errno));
    }
    if (s->dir[0] != '\0') {
        int r = dir_tree_remove(s->dir);
        if (r < 0 && rc == 0)
            rc = hb_fail(&first, -EBUSY, "cannot remove %s: %s", s->dir, strerror(-r));
        else if (r == 0)
            s->dir[0] = '\0';
    }
    /* All removed, or named in err: the watcher has nothing left to do. */
    leftover_watch_stop(&s->watch);
    if (rc < 0) *err = first;
    return rc;
}
