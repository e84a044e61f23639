/*
 * test_server_wait: the built-in server's --wait block (server/frame.c,
 * srv_wait_next) keeps its promises while a worker sits in a blocking recv()
 * for its one kept connection: a second client connecting then is accepted and
 * answered within WAIT_BOUND_MS, whether the first connection is idle or busy,
 * and the stop event ends the server within WAIT_BOUND_MS. The server runs
 * echo on a Unix socket in a mkdtemp directory, one worker thread, in a thread
 * of this process; the test first sees the worker blocked in recvfrom
 * (/proc/self/task/T/syscall), so each check starts from the wait it is about.
 * WAIT_BOUND_MS is far above the delay the server documents (one receive
 * timeout, SRV_RECV_NS) so that a loaded machine does not fail it, and far
 * below what a wait that never returned to the loop would take (the client's
 * 5-s receive timeout). The socket file and directory are removed.
 */
/* cmocka needs these first, in this order. */
/* clang-format off */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
/* clang-format on */

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "endpoint.h"
#include "server/server.h"
#include "util.h"

#define WAIT_BOUND_MS    250
#define CLIENT_TIMEOUT_S 5
#define MSG              "ping-64"

struct fix {
    char dir[64];
    char path[128];
    struct endpoint ep;
    struct server_cfg cfg;
    struct server s;
    pthread_t tid;
    int rc;
};

static void *fix_run(void *arg)
{
    struct fix *f = arg;
    struct hb_err err = { 0 };

    f->rc = server_run(&f->s, &err);
    return NULL;
}

static void fix_start(struct fix *f)
{
    struct hb_err err = { 0 };
    char spec[160];
    sigset_t set;

    memset(f, 0, sizeof(*f));
    snprintf(f->dir, sizeof(f->dir), "/tmp/hb-wait-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    snprintf(f->path, sizeof(f->path), "%s/s.sock", f->dir);
    snprintf(spec, sizeof(spec), "unix:%s", f->path);
    assert_int_equal(endpoint_parse(&f->ep, spec, &err), 0);
    f->cfg = (struct server_cfg){ .proto = &server_echo,
                                  .eps = &f->ep,
                                  .neps = 1,
                                  .threads = 1,
                                  .mode = 0600,
                                  .block_wait = true };
    assert_int_equal(server_open(&f->s, &f->cfg, &err), 0);
    /* SIGTERM stays blocked here, so only the server's sigwait takes the one sent to it. */
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    assert_int_equal(pthread_create(&f->tid, NULL, fix_run, f), 0);
}

/* Sends the stop signal; returns how long server_run took to return, in ms. */
static uint64_t fix_stop(struct fix *f)
{
    uint64_t t0 = now_ns();

    assert_int_equal(pthread_kill(f->tid, SIGTERM), 0);
    assert_int_equal(pthread_join(f->tid, NULL), 0);
    t0 = (now_ns() - t0) / NS_PER_MS;
    assert_int_equal(f->rc, 0);
    server_close(&f->s, true);
    assert_int_equal(rmdir(f->dir), 0);
    return t0;
}

static int client_connect(const struct fix *f)
{
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    struct timeval tv = { .tv_sec = CLIENT_TIMEOUT_S };
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

    assert_true(fd >= 0);
    assert_true(strlen(f->path) < sizeof(sa.sun_path));
    memcpy(sa.sun_path, f->path, strlen(f->path) + 1);
    assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)), 0);
    assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    return fd;
}

/* One request and its echo; false if the reply did not come (the client's timeout). */
static bool client_roundtrip(int fd)
{
    char got[sizeof(MSG)];
    size_t have = 0;

    if (send(fd, MSG, sizeof(MSG), MSG_NOSIGNAL) != (ssize_t)sizeof(MSG)) return false;
    while (have < sizeof(got)) {
        ssize_t n = recv(fd, got + have, sizeof(got) - have, 0);
        if (n <= 0) return false;
        have += (size_t)n;
    }
    return memcmp(got, MSG, sizeof(MSG)) == 0;
}

/* Whether a thread of this process other than the caller is in recvfrom(2) now. */
static bool some_thread_in_recv(void)
{
    DIR *d = opendir("/proc/self/task");
    pid_t self = (pid_t)syscall(SYS_gettid);
    bool found = false;
    struct dirent *e;

    assert_non_null(d);
    while (!found && (e = readdir(d)) != NULL) {
        char path[64];
        long nr = -1;
        FILE *fp;
        int tid = atoi(e->d_name);
        if (tid <= 0 || tid == self) continue;
        snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", tid);
        fp = fopen(path, "r");
        if (fp == NULL) continue;
        found = fscanf(fp, "%ld", &nr) == 1 && nr == SYS_recvfrom;
        fclose(fp);
    }
    closedir(d);
    return found;
}

/*
 * Round trips on fd until the worker is seen blocked in recv for it (it waits
 * so from the second answered request on); fails if it never is.
 */
static void wait_until_blocked(int fd)
{
    for (int i = 0; i < 50; i++) {
        uint64_t until = now_ns() + 20 * NS_PER_MS;
        assert_true(client_roundtrip(fd));
        while (now_ns() < until)
            if (some_thread_in_recv()) return;
    }
    fail_msg("the worker was never seen blocked in recv for its kept connection");
}

/* A second connection's first reply, timed from its connect, in ms. */
static uint64_t second_client_ms(const struct fix *f, int *fd_out)
{
    uint64_t t0 = now_ns();
    int fd = client_connect(f);

    assert_true(client_roundtrip(fd));
    *fd_out = fd;
    return (now_ns() - t0) / NS_PER_MS;
}

/* The first connection idle, its worker blocked in recv: a second one is served in time. */
static void test_second_conn_while_idle(void **state)
{
    struct fix f;
    int a, b;
    uint64_t ms;

    (void)state;
    fix_start(&f);
    a = client_connect(&f);
    wait_until_blocked(a);
    ms = second_client_ms(&f, &b);
    print_message("second connection answered after %llu ms (first one idle)\n",
                  (unsigned long long)ms);
    assert_true(ms < WAIT_BOUND_MS);
    /* both are served on from now on */
    assert_true(client_roundtrip(a));
    assert_true(client_roundtrip(b));
    close(a);
    close(b);
    fix_stop(&f);
}

struct busy {
    int fd;
    bool stop;
    unsigned long trips;
    bool failed;
};

static void *busy_main(void *arg)
{
    struct busy *b = arg;

    while (!__atomic_load_n(&b->stop, __ATOMIC_ACQUIRE)) {
        if (!client_roundtrip(b->fd)) {
            b->failed = true;
            break;
        }
        __atomic_fetch_add(&b->trips, 1, __ATOMIC_RELAXED);
    }
    return NULL;
}

/* The first connection in a back-to-back ping-pong: a second one is served in time. */
static void test_second_conn_while_busy(void **state)
{
    struct fix f;
    struct busy bz = { 0 };
    pthread_t t;
    unsigned long before;
    int b;
    uint64_t ms;

    (void)state;
    fix_start(&f);
    bz.fd = client_connect(&f);
    wait_until_blocked(bz.fd);
    assert_int_equal(pthread_create(&t, NULL, busy_main, &bz), 0);
    usleep(20000);
    ms = second_client_ms(&f, &b);
    before = __atomic_load_n(&bz.trips, __ATOMIC_RELAXED);
    assert_true(client_roundtrip(b));
    usleep(20000);
    __atomic_store_n(&bz.stop, true, __ATOMIC_RELEASE);
    assert_int_equal(pthread_join(t, NULL), 0);
    print_message("second connection answered after %llu ms (first one busy, %lu round trips)\n",
                  (unsigned long long)ms, bz.trips);
    assert_false(bz.failed);
    assert_true(bz.trips > before); /* the first one was served on alongside */
    assert_true(ms < WAIT_BOUND_MS);
    close(bz.fd);
    close(b);
    fix_stop(&f);
}

/* The worker blocked in recv for an idle kept connection: the stop ends the server in time. */
static void test_stop_while_blocked(void **state)
{
    struct fix f;
    uint64_t ms;
    int a;

    (void)state;
    fix_start(&f);
    a = client_connect(&f);
    wait_until_blocked(a);
    ms = fix_stop(&f);
    print_message("server stopped %llu ms after the signal\n", (unsigned long long)ms);
    assert_true(ms < WAIT_BOUND_MS);
    close(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_second_conn_while_idle),
        cmocka_unit_test(test_second_conn_while_busy),
        cmocka_unit_test(test_stop_while_blocked),
    };

    alarm(60); /* a server that never stops fails here, not as a hang */
    return cmocka_run_group_tests(tests, NULL, NULL);
}
