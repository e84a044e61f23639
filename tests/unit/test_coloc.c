/*
 * test_coloc: where the client's and the server's threads ran (host/coloc.c):
 * the count of a sample (both sides ran; on one CPU or not), the share, the
 * threshold past which two shares differ, and the sampler on real threads:
 * a "load" thread and a "server" thread spinning on one CPU share it in every
 * sample, on two CPUs in none.
 */
/* cmocka.h needs these four first, in this order */
/* clang-format off */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
/* clang-format on */

#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "evidence.h"
#include "host/coloc.h"

static void test_count(void **state)
{
    struct coloc_result r = { .observed = true };
    const int c01[] = { 0, 1 }, c1[] = { 1 }, c2[] = { 2 };
    double share = -1;

    (void)state;
    assert_false(coloc_share(&r, &share)); /* nothing counted: no share */
    coloc_count(&r, c01, 2, NULL, 0);      /* the server did not run: not counted */
    coloc_count(&r, NULL, 0, c1, 1);       /* the client did not run */
    assert_int_equal(r.both, 0);
    coloc_count(&r, c01, 2, c1, 1); /* one of the client's threads on the server's CPU */
    coloc_count(&r, c1, 1, c2, 1);  /* apart */
    coloc_count(&r, c2, 1, c2, 1);  /* together */
    coloc_count(&r, c01, 2, c2, 1); /* apart */
    assert_int_equal(r.both, 4);
    assert_int_equal(r.same, 2);
    assert_true(coloc_share(&r, &share));
    assert_true(share == 0.5);
    r.observed = false; /* counts without a sampler that ran say nothing */
    assert_false(coloc_share(&r, &share));
}

static void test_differs(void **state)
{
    (void)state;
    assert_true(evidence_coloc_differs(0.95, 0.03));
    assert_true(evidence_coloc_differs(0.0, 0.51));
    assert_false(evidence_coloc_differs(0.0, 0.5)); /* more than 0.5 apart, not 0.5 */
    assert_false(evidence_coloc_differs(0.8, 0.4));
    assert_false(evidence_coloc_differs(NAN, 0.0)); /* one side not observed: no claim */
    assert_false(evidence_coloc_differs(1.0, NAN));
}

/* A thread that spins on cpu under name until stop: the load's or the "server's". */
struct spinner {
    int cpu;
    const char *name;
    atomic_bool *stop;
    atomic_bool ready;
};

static void *spin(void *arg)
{
    struct spinner *s = arg;
    cpu_set_t set;

    CPU_ZERO(&set);
    CPU_SET(s->cpu, &set);
    pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
    prctl(PR_SET_NAME, s->name);
    atomic_store(&s->ready, true);
    while (!atomic_load(s->stop))
        sched_yield();
    return NULL;
}

static void sleep_ms(long ms)
{
    struct timespec t = { ms / 1000, (ms % 1000) * 1000000L };

    nanosleep(&t, NULL);
}

/*
 * The share over 300 ms of a load thread on CPU a and a server process's
 * thread on CPU b (the server a child: coloc reads another process's threads).
 */
static double share_of(int a, int b, unsigned *samples)
{
    atomic_bool stop = false;
    struct spinner load = { .cpu = a, .name = COLOC_LOAD_NAME, .stop = &stop };
    struct coloc *c = calloc(1, sizeof(*c));
    struct coloc_result r;
    pthread_t t;
    pid_t child;
    double share = NAN;

    assert_non_null(c);
    child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        atomic_bool never = false;
        struct spinner srv = { .cpu = b, .name = "server", .stop = &never };
        alarm(10);
        spin(&srv);
        _exit(0);
    }
    assert_int_equal(pthread_create(&t, NULL, spin, &load), 0);
    while (!atomic_load(&load.ready))
        sleep_ms(1);
    sleep_ms(20); /* the child pinned */
    coloc_begin(c, &child, 1, NULL, 0);
    sleep_ms(300);
    coloc_end(c, &r);
    atomic_store(&stop, true);
    pthread_join(t, NULL);
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    free(c);
    assert_true(r.observed);
    *samples = r.both;
    if (!coloc_share(&r, &share)) fail_msg("no sample counted: %u", r.both);
    return share;
}

static void test_sampler(void **state)
{
    unsigned n;
    double same, apart;
    cpu_set_t allowed;

    if (sched_getaffinity(0, sizeof(allowed), &allowed) < 0 || !CPU_ISSET(0, &allowed) ||
        !CPU_ISSET(1, &allowed))
        skip(); /* needs CPUs 0 and 1 */
    (void)state;
    same = share_of(0, 0, &n);
    assert_true(n >= 5);
    apart = share_of(0, 1, &n);
    assert_true(n >= 5);
    if (same < 0.9 || apart > 0.1) fail_msg("same CPU %.2f, apart %.2f", same, apart);
}

static void test_no_server(void **state)
{
    struct coloc c;
    struct coloc_result r;

    (void)state;
    coloc_begin(&c, NULL, 0, NULL, 0);
    coloc_end(&c, &r);
    assert_false(r.observed);
    assert_string_equal(r.why, "the server's pid is not known");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_count),
        cmocka_unit_test(test_differs),
        cmocka_unit_test(test_sampler),
        cmocka_unit_test(test_no_server),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
