/*
 * test_listener: the server of a local endpoint found by its listening
 * socket (host/listener.h), against real sockets held by children this test
 * forks: the inode sock_diag gives is the one fstat gives, a TCP address is
 * taken by a listener on it, on the wildcard or on IPv6's [::] (dual stack),
 * not by one on another address; a child holding the socket is the server,
 * its own child (a worker) is in its tree, not another server; two unrelated
 * holders are two; hopbench itself never is one; no listener says so.
 */
/* cmocka needs these first, in this order. */
/* clang-format off */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
/* clang-format on */

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "endpoint.h"
#include "host/listener.h"
#include "host/sockdiag.h"

/* A TCP listener on addr (family's text form) port 0; returns the fd, its port in *port. */
static int tcp_listen(int family, const char *addr, unsigned *port)
{
    struct sockaddr_storage ss = { 0 };
    socklen_t len;
    int one = 1, fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);

    assert_true(fd >= 0);
    if (family == AF_INET6) {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
        a->sin6_family = AF_INET6;
        assert_int_equal(inet_pton(AF_INET6, addr, &a->sin6_addr), 1);
        len = sizeof(*a);
    } else {
        struct sockaddr_in *a = (struct sockaddr_in *)&ss;
        a->sin_family = AF_INET;
        assert_int_equal(inet_pton(AF_INET, addr, &a->sin_addr), 1);
        len = sizeof(*a);
    }
    assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)), 0);
    assert_int_equal(bind(fd, (struct sockaddr *)&ss, len), 0);
    assert_int_equal(listen(fd, 4), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&ss, &len), 0);
    *port = ntohs(family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                     : ((struct sockaddr_in *)&ss)->sin_port);
    return fd;
}

/*
 * A child that holds the listener (every fd of this process: a fork keeps them), and with
 * worker a child of its own that holds it too, until killed; each writes a byte to ready.
 */
static pid_t holder(bool worker, int ready)
{
    pid_t pid = fork();

    assert_true(pid >= 0);
    if (pid == 0) {
        char c = 'r';
        if (worker && fork() == 0) {
            (void)write(ready, &c, 1);
            pause();
            _exit(0);
        }
        (void)write(ready, &c, 1);
        pause();
        _exit(0);
    }
    return pid;
}

/* Waits for n bytes on fd (a holder's "ready"). */
static void wait_ready(int fd, int n)
{
    char c;

    for (int i = 0; i < n; i++)
        assert_int_equal(read(fd, &c, 1), 1);
}

/* Ends a holder and its worker, both reaped here (this process is their subreaper). */
static void stop(pid_t pid)
{
    char path[64];
    FILE *f;
    int child = 0;

    snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid, (int)pid);
    f = fopen(path, "r");
    if (f != NULL) {
        if (fscanf(f, "%d", &child) != 1) child = 0;
        fclose(f);
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    if (child > 0) { /* an orphan now, ours */
        kill(child, SIGKILL);
        waitpid(child, NULL, 0);
    }
}

/* tcp://127.0.0.1:port */
static void parse_ep(struct endpoint *ep, unsigned port)
{
    char text[64];
    struct hb_err err = { 0 };

    snprintf(text, sizeof(text), "tcp://127.0.0.1:%u", port);
    assert_int_equal(endpoint_parse(ep, text, &err), 0);
}

static void test_inode_and_addresses(void **state)
{
    uint32_t ino[SOCKDIAG_MAX_LISTENERS];
    struct in_addr lo, other;
    struct stat st;
    unsigned port;
    size_t n = 0;
    int fd = tcp_listen(AF_INET, "127.0.0.1", &port);

    (void)state;
    assert_int_equal(fstat(fd, &st), 0);
    inet_pton(AF_INET, "127.0.0.1", &lo);
    inet_pton(AF_INET, "127.0.0.2", &other);
    assert_int_equal(sockdiag_tcp_listeners(port, AF_INET, &lo, ino, SOCKDIAG_MAX_LISTENERS, &n),
                     0);
    assert_int_equal(n, 1);
    assert_int_equal(ino[0], (uint32_t)st.st_ino);
    /* bound to 127.0.0.1: no listener of 127.0.0.2 */
    assert_int_equal(sockdiag_tcp_listeners(port, AF_INET, &other, ino, SOCKDIAG_MAX_LISTENERS, &n),
                     0);
    assert_int_equal(n, 0);
    close(fd);

    /* [::] takes IPv4 too (a dual-stack listener), 0.0.0.0 every IPv4 address */
    fd = tcp_listen(AF_INET6, "::", &port);
    assert_int_equal(fstat(fd, &st), 0);
    assert_int_equal(sockdiag_tcp_listeners(port, AF_INET, &lo, ino, SOCKDIAG_MAX_LISTENERS, &n),
                     0);
    assert_int_equal(n, 1);
    assert_int_equal(ino[0], (uint32_t)st.st_ino);
    close(fd);
    fd = tcp_listen(AF_INET, "0.0.0.0", &port);
    assert_int_equal(sockdiag_tcp_listeners(port, AF_INET, &other, ino, SOCKDIAG_MAX_LISTENERS, &n),
                     0);
    assert_int_equal(n, 1);
    close(fd);
    assert_int_equal(sockdiag_tcp_listeners(port, AF_INET, &other, ino, SOCKDIAG_MAX_LISTENERS, &n),
                     0);
    assert_int_equal(n, 0);
}

static void test_holders(void **state)
{
    struct listener l;
    struct endpoint ep;
    char why[160];
    unsigned port;
    int p[2], fd = tcp_listen(AF_INET, "127.0.0.1", &port);
    pid_t a, b;

    (void)state;
    parse_ep(&ep, port);
    /* only hopbench (this process) holds it: never the server */
    assert_int_equal(listener_find(&ep, &l), 0);
    assert_int_equal(l.sockets, 1);
    assert_int_equal(l.nroots, 0);
    assert_true(listener_why(&l, why, sizeof(why))[0] != '\0'); /* as root, or not */

    /* a server and its worker: one server, the one whose parent holds none */
    assert_int_equal(pipe(p), 0);
    a = holder(true, p[1]);
    wait_ready(p[0], 2);
    assert_int_equal(listener_find(&ep, &l), 0);
    assert_int_equal(l.holders, 2);
    assert_int_equal(l.nroots, 1);
    assert_int_equal(l.roots[0], a);
    assert_string_equal(listener_why(&l, why, sizeof(why)), "");

    /* another holder, not a's child: two servers, and why none is counted */
    b = holder(false, p[1]);
    wait_ready(p[0], 1);
    assert_int_equal(listener_find(&ep, &l), 0);
    assert_int_equal(l.nroots, 2);
    assert_non_null(strstr(listener_why(&l, why, sizeof(why)), "2 processes listen there, not "
                                                               "one tree: "));
    stop(a);
    stop(b);
    close(p[0]);
    close(p[1]);
    close(fd);

    /* nothing listens there any more */
    assert_int_equal(listener_find(&ep, &l), 0);
    assert_int_equal(l.sockets, 0);
    assert_string_equal(listener_why(&l, why, sizeof(why)), "no socket listens there");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_inode_and_addresses),
        cmocka_unit_test(test_holders),
    };

    /* a holder's worker, orphaned when the holder ends, is reaped here, not left to pid 1 */
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
