/*
 * spawn: a built-in server as a child process (see spawn.h).
 */
#include "spawn.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

/*
 * The child: serve until SIGTERM. The terminal's signals (SIGINT, SIGHUP,
 * SIGQUIT reach the whole process group) are the parent's: it ends the run
 * first, then stops the child. It starts with the stop signals blocked (see
 * spawn_server), so one sent right after the fork stays pending (SIGTERM for
 * server_run's sigwait, the others to be dropped here) instead of reaching
 * the parent's inherited handler. SIGPIPE stays ignored, as in the parent.
 */
static void spawn_child(struct server *srv, pid_t parent, const char *who)
{
    struct hb_err err = { 0 };
    int rc;

    signal(SIGTERM, SIG_DFL);
    signal(SIGINT, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
    signal(SIGQUIT, SIG_IGN);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(1);
    rc = server_run(srv, &err);
    server_close(srv, true);
    if (rc < 0) {
        char msg[TEXT_SAFE_CAP];
        fprintf(stderr, "hopbench: %s: %s\n", who, text_safe(msg, sizeof(msg), err.msg));
    }
    _exit(rc < 0 ? 1 : 0);
}

static void spawn_set(pid_t *pid, _Atomic pid_t *mirror, pid_t value)
{
    *pid = value;
    if (mirror != NULL) atomic_store(mirror, value);
}

int spawn_server(const struct server_cfg *cfg, const struct netns *ns, enum netns_side side,
                 const char *who, _Atomic pid_t *mirror, pid_t *pid, struct hb_err *err)
{
    struct server srv;
    sigset_t block, old;
    pid_t parent = getpid(), child;
    int fork_errno, rc = netns_enter(ns, side);

    /* The listeners and the child are made in side's namespace: both stay there. */
    if (rc < 0) return hb_fail(err, rc, "cannot enter the server's namespace: %s", strerror(-rc));
    rc = server_open(&srv, cfg, err);
    if (rc < 0) {
        netns_enter(ns, NETNS_HOST);
        return rc;
    }
    stop_signal_set(&block);
    fflush(NULL);
    sigprocmask(SIG_BLOCK, &block, &old);
    child = fork();
    fork_errno = errno;
    if (child == 0) spawn_child(&srv, parent, who);
    /* The pid is mirrored before a signal can come: an abort stops this child too. */
    if (child > 0) spawn_set(pid, mirror, child);
    sigprocmask(SIG_SETMASK, &old, NULL);
    server_close(&srv, child == -1); /* the child holds the listeners now */
    rc = netns_enter(ns, NETNS_HOST);
    if (child == -1)
        return hb_fail(err, -fork_errno, "cannot start the %s: %s", who, strerror(fork_errno));
    if (rc < 0) return hb_fail(err, rc, "cannot leave the server's namespace: %s", strerror(-rc));
    return 0;
}

void spawn_stop(pid_t *pid, _Atomic pid_t *mirror)
{
    pid_t p = *pid;
    int status;

    if (p <= 0) return;
    if (mirror != NULL) atomic_store(mirror, -p);
    kill(p, SIGTERM);
    while (waitpid(p, &status, 0) == -1 && errno == EINTR)
        ;
    spawn_set(pid, mirror, 0);
}

int spawn_check(pid_t *pid, _Atomic pid_t *mirror, char *how, size_t len)
{
    pid_t got;
    int status = 0;

    if (*pid <= 0) return 0;
    do
        got = waitpid(*pid, &status, WNOHANG);
    while (got == -1 && errno == EINTR);
    if (got == 0) return 0;
    if (got == -1)
        snprintf(how, len, "is gone (%s)", strerror(errno));
    else
        wait_status_text(how, len, status);
    spawn_set(pid, mirror, 0);
    return -ECHILD;
}
