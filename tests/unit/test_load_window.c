/*
 * test_load_window: load_run's measured window, against an echo thread on a
 * Unix socket in a private temporary directory. The window hooks come once
 * each, in order, and not before the warm-up ends; a run that ends at its
 * deadline measured exactly its duration; a count is met exactly however the
 * connections are split over threads; a stop ends the run early, marked
 * interrupted. An open loop whose window ends inside a stall of the server
 * sends and awaits every op intended inside the window, none after it, and
 * counts what is unanswered `timeout` after the window as timeouts. The ops
 * per interval (series.h) add up to the run's, the stall's ops in the p99 of
 * the interval they end in. Every run is bounded (at most a few seconds).
 */
/* cmocka.h needs these four first, in this order */
/* clang-format off */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
/* clang-format on */

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "engine/load.h"
#include "registry.h"

#define ECHO_MAX_CONNS 8

/* The echo server: one thread polling the listener and every accepted connection. */
struct echo {
    char dir[64];
    char path[96]; /* fits sun_path */
    int lfd;
    atomic_bool stop;
    unsigned stall_after; /* > 0: after this many reads, the thread sleeps stall_ms once */
    unsigned stall_ms;
    unsigned reads;
    bool tcp; /* on 127.0.0.1, port in `port` (else the socket) */
    unsigned port;
    uint32_t peers[ECHO_MAX_CONNS]; /* TCP: each accepted connection's address */
    _Atomic unsigned npeers;
    bool running; /* tid runs echo_main */
    pthread_t tid;
};

/* After e->stall_after reads (with one request in flight at a time, requests), once. */
static void echo_stall(struct echo *e)
{
    struct timespec ts = { .tv_sec = e->stall_ms / 1000,
                           .tv_nsec = (long)(e->stall_ms % 1000) * 1000000L };

    if (e->stall_after > 0 && ++e->reads == e->stall_after) nanosleep(&ts, NULL);
}

static void echo_serve(struct echo *e, struct pollfd *fds, nfds_t *n, nfds_t i)
{
    char buf[4096];
    ssize_t got = read(fds[i].fd, buf, sizeof(buf));

    if (got > 0) echo_stall(e);
    /* MSG_NOSIGNAL: a client that closed first is no SIGPIPE for the test process */
    if (got <= 0 || send(fds[i].fd, buf, (size_t)got, MSG_NOSIGNAL) != got) {
        close(fds[i].fd);
        fds[i] = fds[--*n];
    }
}

static void *echo_main(void *arg)
{
    struct echo *e = arg;
    struct pollfd fds[1 + ECHO_MAX_CONNS] = { { .fd = e->lfd, .events = POLLIN } };
    nfds_t n = 1;

    while (!atomic_load(&e->stop)) {
        if (poll(fds, n, 20) <= 0) continue;
        for (nfds_t i = n; i-- > 1;)
            if (fds[i].revents != 0) echo_serve(e, fds, &n, i);
        if ((fds[0].revents & POLLIN) != 0) {
            struct sockaddr_in peer = { 0 };
            socklen_t len = sizeof(peer);
            int fd = accept(e->lfd, (struct sockaddr *)&peer, &len);
            if (fd >= 0 && e->tcp && atomic_load(&e->npeers) < ECHO_MAX_CONNS)
                e->peers[atomic_fetch_add(&e->npeers, 1)] = ntohl(peer.sin_addr.s_addr);
            if (fd >= 0 && n < ARRAY_LEN(fds))
                fds[n++] = (struct pollfd){ .fd = fd, .events = POLLIN };
            else if (fd >= 0)
                close(fd);
        }
    }
    for (nfds_t i = 1; i < n; i++)
        close(fds[i].fd);
    return NULL;
}

/* Each test's setup: the server's directory and socket, removed by echo_teardown whatever happens.
 */
static int echo_setup(void **state)
{
    static struct echo echo;
    struct echo *e = &echo;
    const char *tmp = getenv("TMPDIR");
    struct sockaddr_un sa = { .sun_family = AF_UNIX };

    memset(e, 0, sizeof(*e));
    e->lfd = -1;
    snprintf(e->dir, sizeof(e->dir), "%s/hb-window.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    assert_non_null(mkdtemp(e->dir));
    assert_true(strlen(e->dir) + strlen("/echo.sock") < sizeof(e->path));
    memcpy(e->path, e->dir, strlen(e->dir));
    memcpy(e->path + strlen(e->dir), "/echo.sock", sizeof("/echo.sock"));
    memcpy(sa.sun_path, e->path, strlen(e->path) + 1);
    e->lfd = socket(AF_UNIX, SOCK_STREAM, 0);
    assert_true(e->lfd >= 0);
    assert_int_equal(bind(e->lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    assert_int_equal(listen(e->lfd, 16), 0);
    assert_int_equal(pthread_create(&e->tid, NULL, echo_main, e), 0);
    e->running = true;
    *state = e;
    return 0;
}

/* The same server on 127.0.0.1, a port the kernel picks. */
static int echo_setup_tcp(void **state)
{
    static struct echo echo;
    struct echo *e = &echo;
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t len = sizeof(sa);

    memset(e, 0, sizeof(*e));
    e->tcp = true;
    e->lfd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(e->lfd >= 0);
    assert_int_equal(bind(e->lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    assert_int_equal(getsockname(e->lfd, (struct sockaddr *)&sa, &len), 0);
    e->port = ntohs(sa.sin_port);
    assert_int_equal(listen(e->lfd, 16), 0);
    assert_int_equal(pthread_create(&e->tid, NULL, echo_main, e), 0);
    e->running = true;
    *state = e;
    return 0;
}

/* Stops the server (its thread ends within 20 ms) and removes its socket and directory. */
static void echo_stop(struct echo *e)
{
    if (e->running) {
        atomic_store(&e->stop, true);
        pthread_join(e->tid, NULL);
        e->running = false;
    }
    if (e->lfd >= 0) close(e->lfd);
    e->lfd = -1;
    if (e->tcp) return;
    unlink(e->path);
    rmdir(e->dir);
}

static int echo_teardown(void **state)
{
    echo_stop(*state);
    return 0;
}

/* What the window hooks saw: the calls in order, when each came. */
struct hooks {
    enum load_window at[8];
    uint64_t when_ns[8];
    unsigned n;
    atomic_int *stop_at_opened; /* set to STOP_INTERRUPT at LOAD_WINDOW_OPENED; may be NULL */
    struct series_run *series;  /* the caller's intervals: their origin set at LOAD_WINDOW_OPEN */
};

static void on_window(void *arg, enum load_window at)
{
    struct hooks *h = arg;

    if (h->n < ARRAY_LEN(h->at)) {
        h->at[h->n] = at;
        h->when_ns[h->n] = now_ns();
    }
    h->n++;
    if (at == LOAD_WINDOW_OPEN && h->series != NULL) h->series->origin_ns = now_ns();
    if (at == LOAD_WINDOW_OPENED && h->stop_at_opened != NULL)
        atomic_store(h->stop_at_opened, STOP_INTERRUPT);
}

static void cfg_init(struct load_cfg *cfg, const struct echo *e, struct hooks *h)
{
    struct hb_err err = { 0 };
    char ep[160];

    memset(cfg, 0, sizeof(*cfg));
    if (e->tcp)
        snprintf(ep, sizeof(ep), "tcp://127.0.0.1:%u", e->port);
    else
        snprintf(ep, sizeof(ep), "unix:%s", e->path);
    assert_int_equal(endpoint_parse(&cfg->ep, ep, &err), 0);
    cfg->codec = codec_find("echo");
    assert_non_null(cfg->codec);
    cfg->size = 64;
    cfg->mode = LOAD_REUSE;
    cfg->conns = 1;
    cfg->threads = 1;
    cfg->pipeline = 1;
    cfg->timeout_ns = 2 * NS_PER_S;
    cfg->on_window = on_window;
    cfg->on_window_arg = h;
}

static void assert_hook_order(const struct hooks *h)
{
    assert_int_equal(h->n, 3);
    assert_int_equal(h->at[0], LOAD_WINDOW_OPEN);
    assert_int_equal(h->at[1], LOAD_WINDOW_OPENED);
    assert_int_equal(h->at[2], LOAD_WINDOW_CLOSED);
}

/* The ops per interval add up to the ops; the p99 of each with ops, none without. */
static void assert_series(const struct load_result *r)
{
    uint64_t sum = r->series.beyond;

    assert_int_equal(r->series.interval_ns, SERIES_STEP_NS);
    assert_true(r->series.n > 0);
    for (size_t i = 0; i < r->series.n; i++) {
        sum += r->series.ops[i];
        assert_true((r->series.ops[i] > 0) == (r->series.p99_ns[i] > 0));
        assert_true(r->series.p99_ns[i] <= r->lat->max + r->lat->max / 8 + 128);
    }
    assert_int_equal(sum, r->ops);
    assert_int_equal(r->series.beyond, 0);
    /* the last interval holds the window's end */
    assert_true(r->series.end_ns > (r->series.n - 1) * r->series.interval_ns);
    assert_true(r->series.end_ns <= r->series.n * r->series.interval_ns);
}

/* Every measured op is in the latency histogram once, and no op failed. */
static void assert_clean(const struct load_result *r)
{
    assert_true(r->ops > 0);
    assert_int_equal(load_errors_total(r), 0);
    assert_int_equal(r->lat->total, r->ops);
    assert_series(r);
    assert_true(r->requests >= r->ops); /* the warm-up's requests count too */
}

static void test_deadline(void **state)
{
    struct echo *e = *state;
    struct hooks h = { 0 };
    struct load_cfg cfg;
    struct load_result r;
    struct hb_err err = { 0 };
    uint64_t t0;

    cfg_init(&cfg, e, &h);
    cfg.warmup_ns = 50 * NS_PER_MS;
    cfg.duration_ns = 150 * NS_PER_MS;
    t0 = now_ns();
    assert_int_equal(load_run(&cfg, &r, &err), 0);
    echo_stop(e);

    assert_hook_order(&h);
    assert_true(h.when_ns[0] >= t0 + cfg.warmup_ns); /* the window opens after the warm-up */
    assert_int_equal(r.window_ns, cfg.duration_ns);
    assert_false(r.interrupted);
    assert_clean(&r);
    load_result_release(&r);
}

/* Count mode, 5 connections over 2 threads: the quota is split and met exactly. */
static void test_count(void **state)
{
    struct echo *e = *state;
    struct hooks h = { 0 };
    struct load_cfg cfg;
    struct load_result r;
    struct hb_err err = { 0 };

    cfg_init(&cfg, e, &h);
    cfg.conns = 5;
    cfg.threads = 2;
    cfg.count = 301;
    assert_int_equal(load_run(&cfg, &r, &err), 0);
    echo_stop(e);

    assert_hook_order(&h); /* without a warm-up, OPEN and OPENED before the threads start */
    assert_int_equal(r.ops, 301);
    assert_true(r.window_ns > 0);
    assert_false(r.interrupted);
    assert_clean(&r);
    load_result_release(&r);
}

/* A stop once the window is open ends a 10 s run early, interrupted, with what it measured. */
static void test_stop(void **state)
{
    struct echo *e = *state;
    atomic_int stop = 0;
    struct hooks h = { .stop_at_opened = &stop };
    struct load_cfg cfg;
    struct load_result r;
    struct hb_err err = { 0 };
    uint64_t t0;

    cfg_init(&cfg, e, &h);
    cfg.warmup_ns = 20 * NS_PER_MS;
    cfg.duration_ns = 10 * NS_PER_S;
    cfg.stop = &stop;
    t0 = now_ns();
    assert_int_equal(load_run(&cfg, &r, &err), 0);
    echo_stop(e);

    assert_hook_order(&h);
    assert_true(r.interrupted);
    assert_true(r.window_ns < cfg.duration_ns);
    assert_true(now_ns() - t0 < 5 * NS_PER_S);
    assert_int_equal(load_errors_total(&r), 0);
    assert_int_equal(r.lat->total, r.ops);
    load_result_release(&r);
}

/* An open loop of one connection, 1000 ops/s for 200 ms, no warm-up, the server's stall at its
 * 150th request lasting stall_ms. */
static void open_run(struct echo *e, unsigned stall_ms, uint64_t timeout_ns, struct load_result *r)
{
    struct hooks h = { 0 };
    struct load_cfg cfg;
    struct hb_err err = { 0 };

    e->stall_after = 150;
    e->stall_ms = stall_ms;
    cfg_init(&cfg, e, &h);
    cfg.rate = 1000;
    cfg.duration_ns = 200 * NS_PER_MS;
    cfg.timeout_ns = timeout_ns;
    assert_int_equal(load_run(&cfg, r, &err), 0);
    assert_hook_order(&h);
    assert_false(r->interrupted);
    /* The window is the intended one and the drain after it. */
    assert_int_equal(r->window_ns, cfg.duration_ns + r->drain_ns);
}

/* The window ends 50 ms into a 150 ms stall: all 200 ops intended inside it answered, no more. */
static void test_open_drain(void **state)
{
    struct echo *e = *state;
    struct load_result r;

    open_run(e, 150, 2 * NS_PER_S, &r);
    assert_int_equal(r.ops, 200);
    assert_int_equal(r.requests, 200);
    assert_int_equal(r.replies, 200);
    assert_clean(&r);
    assert_int_equal(r.service->total, 200);
    assert_true(r.drain_ns > 0 && r.drain_ns < 2 * NS_PER_S);
    assert_true(r.lat->max >= 50 * NS_PER_MS); /* the stall is measured, not cut off */
    /* and shows in the series: an interval whose p99 is the ops that waited through it */
    {
        uint64_t top = 0;
        for (size_t i = 0; i < r.series.n; i++)
            if (r.series.p99_ns[i] > top) top = r.series.p99_ns[i];
        assert_true(top >= 50 * NS_PER_MS);
    }
    load_result_release(&r);
    echo_stop(e);
}

/* A stall of 1 s with a 100 ms timeout: what the drain's 100 ms do not answer is a timeout. */
static void test_open_drain_timeout(void **state)
{
    struct echo *e = *state;
    struct load_result r;

    open_run(e, 1000, 100 * NS_PER_MS, &r);
    assert_true(r.errors[OP_ERR_TIMEOUT] > 0);
    assert_int_equal(load_errors_total(&r), r.errors[OP_ERR_TIMEOUT]);
    assert_int_equal(r.ops + r.errors[OP_ERR_TIMEOUT], 200);
    assert_int_equal(r.lat->total, r.ops);
    assert_true(r.requests <= 200);
    assert_true(r.drain_ns >= 100 * NS_PER_MS && r.drain_ns < 600 * NS_PER_MS);
    load_result_release(&r);
    echo_stop(e);
}

/*
 * A load that is one part of a larger one (run --procs): its connections numbered from
 * conn_base, so connection i binds source (conn_base + i) mod nsrc; its ops added to the
 * caller's intervals, whose origin the caller set, the part's own series only its end. Every
 * connection was open when the window began and when it ended.
 */
static void test_part(void **state)
{
    struct echo *e = *state;
    struct series_run shared;
    struct hooks h = { .series = &shared };
    struct endpoint_sources src;
    struct series_result all;
    struct load_cfg cfg;
    struct load_result r;
    struct hb_err err = { 0 };
    uint64_t origin, sum = 0;
    unsigned seen[3] = { 0 };

    assert_int_equal(endpoint_sources_parse(&src, "127.0.0.2-127.0.0.4", &err), 0);
    cfg_init(&cfg, e, &h);
    cfg.conns = 2;
    cfg.conn_base = 1;
    cfg.src = src.addr;
    cfg.nsrc = src.n;
    cfg.warmup_ns = 50 * NS_PER_MS;
    cfg.duration_ns = 150 * NS_PER_MS;
    series_plan(&shared, cfg.duration_ns, 0);
    series_alloc(&shared);
    cfg.series = &shared;
    assert_int_equal(load_run(&cfg, &r, &err), 0);
    origin = shared.origin_ns;
    echo_stop(e);

    assert_hook_order(&h);
    assert_true(origin > 0 && origin <= h.when_ns[1]); /* the hook's, not load_run's */
    assert_int_equal(r.open_start, 2);
    assert_int_equal(r.open_end, 2);
    /* connections 1 and 2 of the whole: sources .3 and .4, not .2 */
    assert_int_equal(atomic_load(&e->npeers), 2);
    for (unsigned i = 0; i < 2; i++) {
        assert_true(e->peers[i] >= 0x7f000002 && e->peers[i] <= 0x7f000004);
        seen[e->peers[i] - 0x7f000002]++;
    }
    assert_int_equal(seen[0], 0);
    assert_int_equal(seen[1], 1);
    assert_int_equal(seen[2], 1);
    /* the part's series is the caller's to read: only its end */
    assert_int_equal(r.series.n, 0);
    assert_true(r.series.end_ns >= cfg.duration_ns);
    series_result_of(&shared, r.series.end_ns, &all);
    for (size_t i = 0; i < all.n; i++)
        sum += all.ops[i];
    assert_true(r.ops > 0);
    assert_int_equal(sum + all.beyond, r.ops);
    series_result_release(&all);
    series_free(&shared);
    load_result_release(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_deadline, echo_setup, echo_teardown),
        cmocka_unit_test_setup_teardown(test_count, echo_setup, echo_teardown),
        cmocka_unit_test_setup_teardown(test_stop, echo_setup, echo_teardown),
        cmocka_unit_test_setup_teardown(test_open_drain, echo_setup, echo_teardown),
        cmocka_unit_test_setup_teardown(test_open_drain_timeout, echo_setup, echo_teardown),
        cmocka_unit_test_setup_teardown(test_part, echo_setup_tcp, echo_teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
