/*
 * test_sockdiag: socket counts against real sockets on loopback and in a
 * private directory under /tmp. Each test opens its own listener on a fresh
 * port or name, so sockets of other processes cannot match, except TIME_WAIT
 * sockets (60 s) left by an earlier run: a client's TIME_WAIT does not hold
 * the server port, so bind(port 0) may hand that port out again while they
 * live. TIME_WAIT is therefore checked with ">=" and left out of exact totals.
 *
 * What the kernel reports (Linux 6.x, checked against `ss -tan` / `ss -xap`):
 * - TCP: a connection the kernel completed but nobody accept()ed yet is a
 *   full socket in the listener's accept queue. The dump shows it as
 *   ESTABLISHED on both sides (client and server), and the listener's
 *   idiag_rqueue counts it: 3 pending clients give ESTABLISHED 6, rqueue 3.
 * - AF_UNIX: the server-side socket of a not-yet-accepted connection has no
 *   inode until accept(2) gives it a struct socket, and unix_diag skips
 *   inode-0 sockets. The pending client is ESTABLISHED, unnamed, with peer
 *   inode 0. So before accept only listen_rqueue shows the connections
 *   (established 0, peers 0); after accept established and peers count them.
 *   When a client closes, its server socket stays ESTABLISHED with peer inode
 *   0 until the server closes it too.
 */
/* cmocka needs these first, in this order. */
/* clang-format off */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
/* clang-format on */

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "host/sockdiag.h"

#define N_TCP   3
#define N_UNIX  2
#define BACKLOG 16
#define POLL_MS 5000 /* a state change waited for: 1 s was short at load 5 (FIN_WAIT2 not seen) */
#define SUN_OFF offsetof(struct sockaddr_un, sun_path)

/* A listener and the clients connected to it; a = accepted sockets (-1 until accepted). */
struct hop {
    int listener;
    int c[N_TCP];
    int a[N_TCP];
    size_t n;
    struct sockaddr_storage addr;
    socklen_t addr_len;
};

static void sleep_ms(long ms)
{
    struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };

    nanosleep(&ts, NULL);
}

static void hop_init(struct hop *h)
{
    memset(h, 0, sizeof(*h));
    h->listener = -1;
    for (size_t i = 0; i < N_TCP; i++)
        h->c[i] = h->a[i] = -1;
}

/* Listens on family's loopback, port 0. Returns the port, or 0 if there is no such loopback. */
static unsigned tcp_listen_loopback(struct hop *h, int family)
{
    struct sockaddr_in *in = (struct sockaddr_in *)&h->addr;
    struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&h->addr;

    hop_init(h);
    h->addr.ss_family = (sa_family_t)family;
    if (family == AF_INET)
        in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    else
        in6->sin6_addr = in6addr_loopback;
    h->addr_len = family == AF_INET ? sizeof(*in) : sizeof(*in6);
    h->listener = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (h->listener == -1 || bind(h->listener, (struct sockaddr *)&h->addr, h->addr_len) == -1) {
        assert_true(family == AF_INET6);
        return 0;
    }
    assert_int_equal(listen(h->listener, BACKLOG), 0);
    assert_int_equal(getsockname(h->listener, (struct sockaddr *)&h->addr, &h->addr_len), 0);
    return ntohs(family == AF_INET ? in->sin_port : in6->sin6_port);
}

/* Connects n clients (blocking: the kernel completes the handshake without accept). */
static void hop_connect(struct hop *h, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        h->c[i] = socket(h->addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
        assert_int_not_equal(h->c[i], -1);
        assert_int_equal(connect(h->c[i], (struct sockaddr *)&h->addr, h->addr_len), 0);
    }
    h->n = n;
}

static void hop_accept(struct hop *h)
{
    for (size_t i = 0; i < h->n; i++) {
        h->a[i] = accept4(h->listener, NULL, NULL, SOCK_CLOEXEC);
        assert_int_not_equal(h->a[i], -1);
    }
}

static void close_all(int *fds, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (fds[i] != -1) close(fds[i]);
        fds[i] = -1;
    }
}

static void hop_close(struct hop *h)
{
    close_all(h->c, N_TCP);
    close_all(h->a, N_TCP);
    close_all(&h->listener, 1);
}

/*
 * The counts of a hop of address family `family`: asking for both families
 * finds nothing more, and asking for the other one finds nothing.
 */
static struct sockdiag_tcp tcp_count_family(unsigned port, int family)
{
    struct sockdiag_tcp mine, both, other, again;

    /* Three dumps are three instants: while a close is under way a socket may come or go
     * between two (CI once read 5 and 6), so they are taken again until the family's own
     * dumps on either side agree, as they do once the exchange has settled. */
    for (int tries = 0;; tries++) {
        assert_int_equal(sockdiag_tcp_count(port, family, &mine), 0);
        assert_int_equal(sockdiag_tcp_count(port, AF_UNSPEC, &both), 0);
        assert_int_equal(sockdiag_tcp_count(port, family == AF_INET ? AF_INET6 : AF_INET, &other),
                         0);
        assert_int_equal(sockdiag_tcp_count(port, family, &again), 0);
        if ((mine.total == again.total &&
             memcmp(mine.state, again.state, sizeof(mine.state)) == 0) ||
            tries == 100)
            break;
        sleep_ms(10);
    }
    assert_int_equal(mine.total, both.total);
    assert_int_equal(other.total, 0);
    return mine;
}

static struct sockdiag_tcp tcp_count(unsigned port)
{
    return tcp_count_family(port, AF_INET);
}

/* Polls up to POLL_MS until at least min sockets of port are in state (FIN exchanges are async). */
static struct sockdiag_tcp tcp_wait_state(unsigned port, int state, uint64_t min)
{
    struct sockdiag_tcp t = tcp_count(port);

    for (int waited = 0; t.state[state] < min && waited < POLL_MS; waited += 10) {
        sleep_ms(10);
        t = tcp_count(port);
    }
    return t;
}

static void test_state_names(void **state)
{
    (void)state;
    assert_string_equal(sockdiag_tcp_state_name(TCP_TIME_WAIT), "TIME_WAIT");
    assert_string_equal(sockdiag_tcp_state_name(6), "TIME_WAIT");
    assert_string_equal(sockdiag_tcp_state_name(TCP_ESTABLISHED), "ESTABLISHED");
    assert_string_equal(sockdiag_tcp_state_name(TCP_LISTEN), "LISTEN");
    assert_string_equal(sockdiag_tcp_state_name(TCP_CLOSING), "CLOSING");
    for (int s = 1; s < SOCKDIAG_TCP_NSTATES; s++)
        assert_string_not_equal(sockdiag_tcp_state_name(s), "UNKNOWN");
    assert_string_equal(sockdiag_tcp_state_name(0), "UNKNOWN");
    assert_string_equal(sockdiag_tcp_state_name(12), "UNKNOWN");
    assert_string_equal(sockdiag_tcp_state_name(-1), "UNKNOWN");
}

static void test_tcp_bad_port(void **state)
{
    struct sockdiag_tcp t;

    (void)state;
    memset(&t, 0xff, sizeof(t));
    assert_int_equal(sockdiag_tcp_count(0, AF_INET, &t), -EINVAL);
    assert_int_equal(sockdiag_tcp_count(80, AF_UNIX, &t), -EINVAL);
    assert_false(t.have_listener);
    assert_int_equal(t.total, 0);
    assert_int_equal(sockdiag_tcp_count(65536, AF_INET, &t), -EINVAL);
}

/* Nothing on the port but, possibly, TIME_WAIT of an earlier user (see the file comment). */
static void assert_tcp_empty(const struct sockdiag_tcp *t)
{
    assert_false(t->have_listener);
    assert_int_equal(t->total, t->state[TCP_TIME_WAIT]);
    assert_int_equal(t->listen_rqueue, 0);
    assert_int_equal(t->listen_backlog, 0);
}

/*
 * A port that is only bound (not listening, not connected) counts nothing:
 * recent kernels (6.18 here) report it as TCP_BOUND_INACTIVE (13) when asked
 * for all states, and sockdiag asks for states 1..11 only. After close the
 * port is empty.
 */
static void test_tcp_unused_port(void **state)
{
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t len = sizeof(a);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockdiag_tcp t;
    unsigned port;

    (void)state;
    assert_int_not_equal(fd, -1);
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    port = ntohs(a.sin_port);
    t = tcp_count(port);
    assert_tcp_empty(&t);
    close(fd);
    t = tcp_count(port);
    assert_tcp_empty(&t);
}

/* Completed but unaccepted connections: ESTABLISHED on both sides, and in the accept queue. */
static void test_tcp_accept_queue(void **state)
{
    struct hop h;
    unsigned port = tcp_listen_loopback(&h, AF_INET);
    struct sockdiag_tcp t;

    (void)state;
    hop_connect(&h, N_TCP);
    t = tcp_count(port);
    assert_true(t.have_listener);
    assert_int_equal(t.listen_rqueue, N_TCP);
    assert_int_equal(t.listen_backlog, BACKLOG);
    assert_int_equal(t.state[TCP_LISTEN], 1);
    assert_int_equal(t.state[TCP_ESTABLISHED], 2 * N_TCP);
    assert_int_equal(t.state[TCP_SYN_RECV], 0);
    assert_int_equal(t.total - t.state[TCP_TIME_WAIT], 2 * N_TCP + 1);

    hop_accept(&h);
    t = tcp_count(port);
    assert_int_equal(t.listen_rqueue, 0);
    assert_int_equal(t.state[TCP_ESTABLISHED], 2 * N_TCP);
    hop_close(&h);
}

/* Clients close first, then the server: the clients hold TIME_WAIT (dport == port). */
static void test_tcp_time_wait_client_first(void **state)
{
    struct hop h;
    unsigned port = tcp_listen_loopback(&h, AF_INET);
    struct sockdiag_tcp t;

    (void)state;
    hop_connect(&h, N_TCP);
    hop_accept(&h);
    close_all(h.c, N_TCP);
    /*
     * Let the half-close finish before the server closes. Wait for FIN_WAIT2,
     * not CLOSE_WAIT: the server is in CLOSE_WAIT before its ACK reaches the
     * client, which is seen in FIN_WAIT1 for a moment.
     */
    t = tcp_wait_state(port, TCP_FIN_WAIT2, N_TCP);
    assert_int_equal(t.state[TCP_FIN_WAIT2], N_TCP);
    assert_int_equal(t.state[TCP_CLOSE_WAIT], N_TCP);
    close_all(h.a, N_TCP);
    t = tcp_wait_state(port, TCP_TIME_WAIT, N_TCP);
    assert_true(t.state[TCP_TIME_WAIT] >= N_TCP);
    assert_int_equal(t.state[TCP_ESTABLISHED], 0);
    assert_int_equal(t.state[TCP_LISTEN], 1);
    hop_close(&h);
}

/* The server closes first: the accepted sockets hold TIME_WAIT, matched by sport == port. */
static void test_tcp_time_wait_server_first(void **state)
{
    struct hop h;
    unsigned port = tcp_listen_loopback(&h, AF_INET);
    struct sockdiag_tcp t;

    (void)state;
    hop_connect(&h, N_TCP);
    hop_accept(&h);
    close_all(h.a, N_TCP);
    close_all(&h.listener, 1);
    t = tcp_wait_state(port, TCP_FIN_WAIT2, N_TCP);
    assert_int_equal(t.state[TCP_FIN_WAIT2], N_TCP);
    assert_int_equal(t.state[TCP_CLOSE_WAIT], N_TCP);
    close_all(h.c, N_TCP);
    t = tcp_wait_state(port, TCP_TIME_WAIT, N_TCP);
    assert_true(t.state[TCP_TIME_WAIT] >= N_TCP);
    assert_int_equal(t.state[TCP_ESTABLISHED], 0);
    assert_false(t.have_listener);
    hop_close(&h);
}

static void test_tcp_ipv6(void **state)
{
    struct hop h;
    unsigned port = tcp_listen_loopback(&h, AF_INET6);
    struct sockdiag_tcp t;

    (void)state;
    if (port == 0) {
        hop_close(&h);
        skip();
    }
    hop_connect(&h, 1);
    t = tcp_count_family(port, AF_INET6);
    assert_true(t.have_listener);
    assert_int_equal(t.listen_rqueue, 1);
    assert_int_equal(t.state[TCP_LISTEN], 1);
    assert_int_equal(t.state[TCP_ESTABLISHED], 2);
    hop_close(&h);
}

/* Closes client i of h first, then its server socket once the client is in FIN_WAIT2. */
static void close_client_first(struct hop *h, unsigned port, size_t i)
{
    struct sockdiag_tcp t;

    close_all(&h->c[i], 1);
    t = tcp_wait_state(port, TCP_FIN_WAIT2, 1);
    assert_int_equal(t.state[TCP_FIN_WAIT2], 1);
    close_all(&h->a[i], 1);
    t = tcp_wait_state(port, TCP_TIME_WAIT, 1);
    assert_true(t.client_state[TCP_TIME_WAIT] >= 1);
}

/* A hop of n connections, one of them closed by its client (a TIME_WAIT): its exact counts. */
static void assert_hop_counts(unsigned port, size_t n)
{
    struct sockdiag_tcp t = tcp_count(port);

    assert_true(t.have_listener);
    assert_int_equal(t.state[TCP_LISTEN], 1);
    assert_int_equal(t.server_state[TCP_ESTABLISHED], n - 1);
    assert_int_equal(t.client_state[TCP_ESTABLISHED], n - 1);
    assert_true(t.client_state[TCP_TIME_WAIT] >= 1);
    assert_int_equal(t.server_state[TCP_TIME_WAIT], 0);
    assert_int_equal(t.total - t.state[TCP_TIME_WAIT], 1 + 2 * (n - 1));
    /* The kernel sent the hop's sockets and no other: the port filter ran there. */
    assert_int_equal(t.dumped, t.total);
}

/*
 * Two hops side by side, each with a listener, established pairs and a
 * client's TIME_WAIT: each port counts exactly its own, and the kernel sends
 * nothing of the other (dumped == total), so sockets on other ports cost no
 * messages.
 */
static void test_tcp_other_port(void **state)
{
    struct hop a, b;
    unsigned pa = tcp_listen_loopback(&a, AF_INET);
    unsigned pb = tcp_listen_loopback(&b, AF_INET);

    (void)state;
    assert_int_not_equal(pa, pb);
    hop_connect(&a, 2);
    hop_accept(&a);
    hop_connect(&b, N_TCP);
    hop_accept(&b);
    close_client_first(&a, pa, 0);
    close_client_first(&b, pb, 0);
    assert_hop_counts(pa, 2);
    assert_hop_counts(pb, N_TCP);
    hop_close(&a);
    hop_close(&b);
}

/* ---- AF_UNIX ---- */

struct unix_hop {
    int listener;
    int c[N_UNIX];
    int a[N_UNIX];
    struct sockaddr_un addr;
    socklen_t addr_len;
    char name[128]; /* as sockdiag wants it: the path, or "@" + abstract name */
    char dir[64];   /* "" for an abstract name */
};

static void unix_hop_init(struct unix_hop *u)
{
    memset(u, 0, sizeof(*u));
    u->listener = -1;
    for (size_t i = 0; i < N_UNIX; i++)
        u->c[i] = u->a[i] = -1;
    u->addr.sun_family = AF_UNIX;
}

static void unix_listen(struct unix_hop *u)
{
    u->listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_int_not_equal(u->listener, -1);
    assert_int_equal(bind(u->listener, (struct sockaddr *)&u->addr, u->addr_len), 0);
    assert_int_equal(listen(u->listener, BACKLOG), 0);
}

static void unix_listen_path(struct unix_hop *u)
{
    unix_hop_init(u);
    snprintf(u->dir, sizeof(u->dir), "/tmp/hopbench-sockdiag-XXXXXX");
    assert_non_null(mkdtemp(u->dir));
    snprintf(u->addr.sun_path, sizeof(u->addr.sun_path), "%s/s.sock", u->dir);
    u->addr_len = sizeof(u->addr);
    snprintf(u->name, sizeof(u->name), "%s", u->addr.sun_path);
    unix_listen(u);
}

static void unix_listen_abstract(struct unix_hop *u)
{
    int n;

    unix_hop_init(u);
    n = snprintf(u->name, sizeof(u->name), "@hopbench-sockdiag-%ld", (long)getpid());
    /* sun_path[0] stays NUL; the length is exact, so the name has no trailing NULs. */
    memcpy(u->addr.sun_path + 1, u->name + 1, (size_t)n - 1);
    u->addr_len = (socklen_t)(SUN_OFF + (size_t)n);
    unix_listen(u);
}

static void unix_connect(struct unix_hop *u)
{
    for (size_t i = 0; i < N_UNIX; i++) {
        u->c[i] = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        assert_int_not_equal(u->c[i], -1);
        assert_int_equal(connect(u->c[i], (struct sockaddr *)&u->addr, u->addr_len), 0);
    }
}

static void unix_close(struct unix_hop *u)
{
    close_all(u->c, N_UNIX);
    close_all(u->a, N_UNIX);
    close_all(&u->listener, 1);
    if (u->dir[0] != '\0') {
        assert_int_equal(unlink(u->addr.sun_path), 0);
        assert_int_equal(rmdir(u->dir), 0);
    }
}

static struct sockdiag_unix unix_count(const char *name)
{
    struct sockdiag_unix s;

    assert_int_equal(sockdiag_unix_count(name, &s), 0);
    return s;
}

/* Pending connections show only in the listener's queue; accepted ones as established + peers. */
static void check_unix_hop(struct unix_hop *u)
{
    struct sockdiag_unix s;

    unix_connect(u);
    s = unix_count(u->name);
    assert_true(s.have_listener);
    assert_int_equal(s.listening, 1);
    assert_int_equal(s.listen_rqueue, N_UNIX);
    assert_int_equal(s.listen_backlog, BACKLOG);
    assert_int_equal(s.established, 0); /* see the file comment */
    assert_int_equal(s.peers, 0);
    assert_true(s.total_unix >= 1 + N_UNIX);

    for (size_t i = 0; i < N_UNIX; i++) {
        u->a[i] = accept4(u->listener, NULL, NULL, SOCK_CLOEXEC);
        assert_int_not_equal(u->a[i], -1);
    }
    s = unix_count(u->name);
    assert_int_equal(s.listening, 1);
    assert_int_equal(s.listen_rqueue, 0);
    assert_int_equal(s.established, N_UNIX);
    assert_int_equal(s.peers, N_UNIX);
    assert_true(s.total_unix >= 1 + 2 * N_UNIX);

    /* A hung-up client's server socket stays ESTABLISHED (peer inode 0) until the server closes. */
    close_all(&u->c[0], 1);
    s = unix_count(u->name);
    assert_int_equal(s.established, N_UNIX);
    assert_int_equal(s.peers, N_UNIX - 1);
    close_all(&u->a[0], 1);
    s = unix_count(u->name);
    assert_int_equal(s.established, N_UNIX - 1);
}

static void test_unix_path(void **state)
{
    struct unix_hop u;
    struct sockdiag_unix s;
    char abstract[sizeof(u.name) + 1];

    (void)state;
    unix_listen_path(&u);
    check_unix_hop(&u);
    /* The same bytes as an abstract name are a different socket. */
    snprintf(abstract, sizeof(abstract), "@%s", u.name);
    s = unix_count(abstract);
    assert_false(s.have_listener);
    assert_int_equal(s.listening + s.established + s.peers, 0);
    unix_close(&u);
}

static void test_unix_abstract(void **state)
{
    struct unix_hop u;
    struct sockdiag_unix s;

    (void)state;
    unix_listen_abstract(&u);
    check_unix_hop(&u);
    /* Without '@' it is a path, and no file of that name is bound. */
    s = unix_count(u.name + 1);
    assert_int_equal(s.listening + s.established + s.peers, 0);
    unix_close(&u);
}

static void test_unix_unknown_name(void **state)
{
    int sv[2];
    struct sockdiag_unix s;

    (void)state;
    /* A pair of our own, so the dump holds at least two sockets even in an empty netns. */
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    s = unix_count("/nonexistent/hopbench-sockdiag.sock");
    assert_false(s.have_listener);
    assert_int_equal(s.listening + s.established + s.peers, 0);
    assert_int_equal(s.listen_rqueue + s.listen_backlog, 0);
    assert_true(s.total_unix >= 2);
    close(sv[0]);
    close(sv[1]);
}

static void test_unix_bad_name(void **state)
{
    char long_name[200];
    struct sockdiag_unix s;

    (void)state;
    memset(long_name, 'x', sizeof(long_name) - 1);
    long_name[sizeof(long_name) - 1] = '\0';
    assert_int_equal(sockdiag_unix_count(NULL, &s), -EINVAL);
    assert_int_equal(sockdiag_unix_count("", &s), -EINVAL);
    assert_int_equal(sockdiag_unix_count(long_name, &s), -ENAMETOOLONG);
    assert_int_equal(s.total_unix, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_state_names),
        cmocka_unit_test(test_tcp_bad_port),
        cmocka_unit_test(test_tcp_unused_port),
        cmocka_unit_test(test_tcp_accept_queue),
        cmocka_unit_test(test_tcp_time_wait_client_first),
        cmocka_unit_test(test_tcp_time_wait_server_first),
        cmocka_unit_test(test_tcp_ipv6),
        cmocka_unit_test(test_tcp_other_port),
        cmocka_unit_test(test_unix_path),
        cmocka_unit_test(test_unix_abstract),
        cmocka_unit_test(test_unix_unknown_name),
        cmocka_unit_test(test_unix_bad_name),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
