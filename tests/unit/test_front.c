/*
 * test_front: the fpm stacks' table of web fronts (src/stack/front.h, one
 * entry per front) and what is written from it, with no server started:
 *   - each front's configuration and php-fpm.conf, for each profile and for
 *     the failure cases' settings, as root and not, are byte for byte the
 *     files in tests/fixtures/front (those the stacks wrote before the fronts
 *     became entries: see its README);
 *   - the requests each front holds at once and the FastCGI connections it
 *     keeps, by its own rule;
 *   - the ablation's steps follow the front: an .htaccess step only where it
 *     reads them, a reuse step only where it keeps connections, nginx's with
 *     a worker per kept connection;
 *   - every fpm stack's entry agrees with itself: its needs name php-fpm and
 *     its front's binary and package, optimized-reuse and --starve only where
 *     the front keeps connections, a configuration for each of its profiles,
 *     its --help naming its profiles and cases and no other;
 *   - a server's binary is the newest installed (sup_need over a directory
 *     of versions).
 * Run from the top of the tree (HOPBENCH_FIXTURES names another fixtures root).
 */
/* cmocka.h needs these four first, in this order */
/* clang-format off */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
/* clang-format on */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stack/fpm.h"
#include "stack/fpm_cases.h"
#include "stack/front.h"
#include "stack/stack.h"

#include "fixture.h"

#define DIR  "/run/hb-test"
#define SOCK DIR "/fpm.sock"

/* The fpm stack of web front name ("nginx"): its entry. */
static const struct stack_def *fpm_stack(const char *name)
{
    for (unsigned i = 0; stack_defs[i] != NULL; i++)
        if (stack_defs[i]->front != NULL && strcmp(stack_defs[i]->front->name, name) == 0 &&
            stack_defs[i]->help_write != NULL)
            return stack_defs[i];
    return NULL;
}

static const struct web_front *front_of(const char *name)
{
    const struct stack_def *d = fpm_stack(name);

    if (d == NULL) fail_msg("no fpm stack in front of %s", name);
    return d != NULL ? d->front : NULL;
}

/* The fixture tests/fixtures/front/name, whole; the caller frees it. */
static char *fixture(const char *name)
{
    return fixture_read("front", name);
}

/* Renders front w's configuration (NULL: php-fpm.conf) of k at a fixed site, checks it. */
static void conf_is(const char *name, const struct web_front *w, const struct fpm_knobs *k,
                    bool root, unsigned conns, const char *host)
{
    struct front_site s = { .dir = DIR,
                            .host = host,
                            .port = { 20001, 20002 },
                            .fpm_port = 20003,
                            .sock = SOCK,
                            .user = root ? "www-data" : NULL,
                            .conns = conns };
    char *buf = malloc(FRONT_CONF_MAX), *want = fixture(name);

    assert_non_null(buf);
    assert_int_equal(
        w != NULL ? w->conf(&s, k, buf, FRONT_CONF_MAX) : fpm_conf(&s, k, buf, FRONT_CONF_MAX), 0);
    if (strcmp(buf, want) != 0) {
        fprintf(stderr, "%s: written:\n%s\n", name, buf);
        fail_msg("%s differs from the fixture", name);
    }
    free(want);
    free(buf);
}

/* The settings of profile p as the fixtures were made: pm.max_children fixed, not per CPU. */
static void knobs(enum fpm_profile p, struct fpm_knobs *k)
{
    fpm_knobs_of(p, k);
    k->children = p == FPM_BASELINE ? 5 : 8;
    if (p == FPM_REUSE) k->kept = 2;
}

static void test_profiles_as_before(void **state)
{
    static const char *const tag[] = { "baseline", "optimized", "reuse" };
    const struct web_front *nginx = front_of("nginx"), *apache = front_of("apache");
    char name[96];

    (void)state;
    for (unsigned p = FPM_BASELINE; p <= FPM_REUSE; p++) {
        struct fpm_knobs k;
        knobs((enum fpm_profile)p, &k);
        snprintf(name, sizeof(name), "nginx-%s-c1-root.conf", tag[p]);
        conf_is(name, nginx, &k, true, 1, "127.0.0.1");
        snprintf(name, sizeof(name), "apache-%s-root.conf", tag[p]);
        conf_is(name, apache, &k, true, 1, "127.0.0.1");
        snprintf(name, sizeof(name), "php-fpm-%s-root.conf", tag[p]);
        conf_is(name, NULL, &k, true, 1, "127.0.0.1");
    }
    /* nginx's keepalive follows the client's connections when it keeps them all */
    struct fpm_knobs k;
    knobs(FPM_REUSE, &k);
    conf_is("nginx-reuse-c16-root.conf", nginx, &k, true, 16, "127.0.0.1");
    /* not root: no user lines, the socket hopbench's own */
    knobs(FPM_OPTIMIZED, &k);
    conf_is("nginx-optimized-c1-user.conf", nginx, &k, false, 1, "127.0.0.1");
    conf_is("apache-optimized-user.conf", apache, &k, false, 1, "127.0.0.1");
    conf_is("php-fpm-optimized-user.conf", NULL, &k, false, 1, "127.0.0.1");
}

static void test_cases_as_before(void **state)
{
    const struct web_front *nginx = front_of("nginx"), *apache = front_of("apache");
    struct fpm_knobs o, s, a;

    (void)state;
    /* overload: status logs, short FastCGI timeouts, a request worker per connection */
    fpm_knobs_of(FPM_OPTIMIZED, &o);
    o.children = 4;
    o.backlog = 4;
    o.status_log = true;
    o.timeout_s = 2;
    o.web_workers = 128;
    conf_is("nginx-overload-root.conf", nginx, &o, true, 128, "127.0.0.1");
    conf_is("apache-overload-root.conf", apache, &o, true, 128, "127.0.0.1");
    conf_is("php-fpm-overload-root.conf", NULL, &o, true, 128, "127.0.0.1");
    /* starve: 8 kept per worker, not raised to the client's connections */
    fpm_knobs_of(FPM_REUSE, &s);
    s.children = 4;
    s.kept = 8;
    s.keep_all = false;
    s.status_log = true;
    s.timeout_s = 2;
    conf_is("nginx-starve-root.conf", nginx, &s, true, 16, "127.0.0.1");
    /* the ablation's lean step while .htaccess is still read; a front on another address */
    fpm_knobs_of(FPM_BASELINE, &a);
    a.children = 8;
    a.fpm_static = true;
    a.backlog = 1024;
    a.web_lean = true;
    conf_is("apache-lean-htaccess-root.conf", apache, &a, true, 1, "127.0.0.1");
    conf_is("nginx-lean-other-host-root.conf", nginx, &a, true, 1, "127.0.0.2");
}

/* A configuration that does not fit is refused, not cut. */
static void test_conf_too_long(void **state)
{
    struct front_site s = { .dir = DIR, .host = "127.0.0.1", .sock = SOCK };
    struct fpm_knobs k;
    char buf[128];

    (void)state;
    fpm_knobs_of(FPM_OPTIMIZED, &k);
    for (unsigned i = 0; stack_defs[i] != NULL; i++)
        if (stack_defs[i]->front != NULL)
            assert_int_equal(stack_defs[i]->front->conf(&s, &k, buf, sizeof(buf)), -ENAMETOOLONG);
    assert_int_equal(fpm_conf(&s, &k, buf, 64), -ENAMETOOLONG);
}

static void test_capacity_and_kept(void **state)
{
    const struct web_front *nginx = front_of("nginx"), *apache = front_of("apache");
    struct fpm_knobs k;
    char how[160];

    (void)state;
    fpm_knobs_of(FPM_BASELINE, &k);
    assert_int_equal(apache->capacity(&k), 150); /* the stock MaxRequestWorkers */
    assert_int_equal(nginx->capacity(&k), 1024); /* 2 workers x 1024 connections, 2 a request */
    fpm_knobs_of(FPM_OPTIMIZED, &k);
    assert_int_equal(apache->capacity(&k), 64); /* 2 x 32 threads */
    k.web_workers = 129;
    assert_int_equal(apache->capacity(&k), 130); /* raised: 2 x 65 */
    fpm_knobs_of(FPM_REUSE, &k);
    k.kept = 2;
    /* nginx: each worker up to one per client connection (later runs share them out anew) */
    assert_int_equal(nginx->kept(&k, 16, how, sizeof(how)), 32);
    assert_non_null(strstr(how, "keepalive 16 per worker keeps all it opens"));
    assert_int_equal(nginx->kept(&k, 1, how, sizeof(how)), 2);
    /* kept connections never outnumber the workers: fitted, the pool has one for each */
    fpm_knobs_fit(nginx, &k, 16);
    assert_int_equal(k.children, 32);
    assert_int_equal(k.web_workers, 16);
    fpm_knobs_of(FPM_REUSE, &k);
    assert_int_equal(apache->kept(&k, 96, how, sizeof(how)), k.children); /* the pod's 16 for 16 */
    fpm_knobs_fit(apache, &k, 96);
    assert_int_equal(k.children, FPM_STUDY_POOL); /* Apache queues its threads: no more workers */
    assert_int_equal(apache->capacity(&k), 96);   /* a request worker per client connection */
    fpm_knobs_of(FPM_REUSE, &k);
    k.kept = 2;
    /* its keepalive bounds what it keeps when not raised; Apache's enablereuse max always */
    k.keep_all = false;
    k.kept = 8;
    assert_int_equal(nginx->kept(&k, 16, how, sizeof(how)), 16);
    assert_string_equal(how, "2 x 8");
    k.kept = 2;
    assert_int_equal(apache->kept(&k, 16, how, sizeof(how)), 4);
    assert_string_equal(how, "2 x 2");
}

/* The labels of w's ablation steps with conns connections, joined by '|'. */
static void steps_of(const struct web_front *w, unsigned conns, char *buf, size_t cap)
{
    struct fpm_step s[FPM_MAX_STEPS];
    unsigned n = fpm_ablation_steps(w, conns, s);
    size_t len = 0;

    assert_true(n <= FPM_MAX_STEPS);
    buf[0] = '\0';
    for (unsigned i = 0; i < n; i++)
        len += (size_t)snprintf(buf + len, cap - len, "%s%s", i ? "|" : "", s[i].label);
}

static void test_ablation_steps(void **state)
{
    char got[512], want[512];
    unsigned opt = fpm_children(FPM_OPTIMIZED);
    struct fpm_step s[FPM_MAX_STEPS];

    (void)state;
    steps_of(front_of("apache"), 16, got, sizeof(got));
    snprintf(want, sizeof(want),
             "baseline|+fpm static %u|+lean apache|+no .htaccess|+php.ini|+reuse", opt);
    assert_string_equal(got, want);
    steps_of(front_of("nginx"), 16, got, sizeof(got));
    snprintf(want, sizeof(want), "baseline|+fpm static %u|+lean nginx|+php.ini|+reuse%s", opt,
             opt < 32 ? ", pm 32" : "");
    assert_string_equal(got, want);
    /* lighttpd reads no .htaccess and keeps no FastCGI connection: no such steps */
    steps_of(front_of("lighttpd"), 16, got, sizeof(got));
    snprintf(want, sizeof(want), "baseline|+fpm static %u|+lean lighttpd|+php.ini", opt);
    assert_string_equal(got, want);
    /* each step one change: the last one's children are nginx's kept connections */
    unsigned n = fpm_ablation_steps(front_of("nginx"), 16, s);
    assert_int_equal(s[n - 1].k.children, opt < 32 ? 32 : opt);
    /* Apache's reuse step keeps one connection per worker, the pod study's 16 for 16 */
    n = fpm_ablation_steps(front_of("apache"), 96, s);
    assert_int_equal(WEB_PROCS * s[n - 1].k.kept, s[n - 1].k.children);
    assert_string_equal(s[n - 1].label, "+reuse");
    assert_true(s[n - 1].k.keep_all && s[n - 1].k.kept > 0 && s[n - 2].k.kept == 0);
    assert_false(s[0].k.fpm_static || s[0].k.web_lean || s[0].k.php_ini);
    assert_true(s[0].k.htaccess);
}

/* Whether the NULL-terminated list has name. */
static bool has(const char *const *list, const char *name)
{
    for (unsigned i = 0; list != NULL && list[i] != NULL; i++)
        if (strcmp(list[i], name) == 0) return true;
    return false;
}

/* Whether the needs (pairs) have binary with package. */
static bool needs_pair(const char *const *needs, const char *binary, const char *package)
{
    for (unsigned i = 0; needs[i] != NULL; i += 2)
        if (strcmp(needs[i], binary) == 0 && strcmp(needs[i + 1], package) == 0) return true;
    return false;
}

/* Every fpm stack's entry against itself: needs, profiles, cases, configurations, --help. */
static void test_fpm_stacks_consistent(void **state)
{
    unsigned fronts = 0;

    (void)state;
    for (unsigned i = 0; stack_defs[i] != NULL; i++) {
        const struct stack_def *d = stack_defs[i];
        const struct web_front *w = d->front;
        char *help = NULL, *conf = malloc(FRONT_CONF_MAX), name[64];
        size_t len = 0;
        bool conf_arg = false;
        if (w == NULL || d->help_write == NULL) {
            free(conf);
            continue;
        }
        fronts++;
        snprintf(name, sizeof(name), "%s-fpm", w->name);
        assert_string_equal(d->name, name);
        assert_ptr_equal(d->private_net, &stack_private_fastcgi);
        assert_true(needs_pair(d->needs, FPM_BINARY, FPM_PACKAGE));
        assert_true(needs_pair(d->needs, w->binary, w->package));
        assert_true(has(d->profiles, "baseline") && has(d->profiles, "optimized"));
        /* a front that keeps no FastCGI connection has no profile or case that keeps them */
        assert_int_equal(has(d->profiles, "optimized-reuse"), w->kept != NULL);
        assert_int_equal(w->help.reuse != NULL, w->kept != NULL);
        if (d->cases & STACK_CASE_STARVE) assert_true(w->kept != NULL && w->help.starve != NULL);
        assert_true(w->status[0] == '/' && w->error_mark[0] != '\0');
        for (unsigned a = 0; a < FRONT_MAX_ARGS && w->args[a] != NULL; a++)
            conf_arg |= strstr(w->args[a], "{conf}") != NULL;
        assert_true(conf_arg);
        for (unsigned p = 0; d->profiles[p] != NULL; p++) {
            struct stack_opts o = { .profile = d->profiles[p] };
            struct front_site s = { .dir = DIR, .host = "127.0.0.1", .sock = SOCK, .conns = 1 };
            struct fpm_knobs k;
            fpm_knobs_of(fpm_profile_of(&o), &k);
            assert_non_null(conf);
            assert_int_equal(w->conf(&s, &k, conf, FRONT_CONF_MAX), 0);
            assert_non_null(strstr(conf, SOCK)); /* its unix backend */
            /* the failure cases read a status log per front, status-tcp.log and status-unix.log */
            for (unsigned log = 0; log < 2; log++) {
                k.status_log = log == 1;
                assert_int_equal(w->conf(&s, &k, conf, FRONT_CONF_MAX), 0);
                assert_int_equal(strstr(conf, DIR "/status-tcp.log") != NULL, k.status_log);
                assert_int_equal(strstr(conf, DIR "/status-unix.log") != NULL, k.status_log);
                /* the files it opens as its workers': plain names its configuration names */
                const char *names[FRONT_MAX_ARGS];
                unsigned nf = w->worker_files != NULL ? w->worker_files(&k, names) : 0;
                assert_true(nf <= FRONT_MAX_ARGS);
                for (unsigned f = 0; f < nf; f++) {
                    char path[96];
                    snprintf(path, sizeof(path), DIR "/%s", names[f]);
                    assert_true(names[f][0] != '\0' && strchr(names[f], '/') == NULL);
                    assert_non_null(strstr(conf, path));
                }
            }
        }
        FILE *f = open_memstream(&help, &len);
        assert_non_null(f);
        stack_help(d, f);
        assert_int_equal(fclose(f), 0);
        snprintf(name, sizeof(name), "usage: hopbench stack %s ", d->name);
        assert_true(strncmp(help, name, strlen(name)) == 0);
        for (unsigned p = 0; d->profiles[p] != NULL; p++)
            assert_non_null(strstr(help, d->profiles[p]));
        assert_int_equal(strstr(help, "optimized-reuse") != NULL, w->kept != NULL);
        assert_int_equal(strstr(help, "--starve") != NULL, (d->cases & STACK_CASE_STARVE) != 0);
        assert_int_equal(strstr(help, "--overload") != NULL, (d->cases & STACK_CASE_OVERLOAD) != 0);
        assert_non_null(strstr(help, w->help.title));
        free(help);
        free(conf);
    }
    assert_true(fronts >= 3);
}

/* A server's binary is the newest executable the pattern matches, in version order. */
static void test_newest_binary(void **state)
{
    char dir[] = "/tmp/test_front.XXXXXX", pattern[64], path[128], got[128];
    static const char *const made[] = { "php-fpm8.2", "php-fpm8.10", "php-fpm8.4", "php-fpm9.0" };
    struct hb_err err = { 0 };

    (void)state;
    assert_non_null(mkdtemp(dir));
    for (unsigned i = 0; i < 4; i++) {
        snprintf(path, sizeof(path), "%s/%s", dir, made[i]);
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fclose(f);
        assert_int_equal(chmod(path, i == 3 ? 0644 : 0755), 0); /* 9.0 not executable */
    }
    snprintf(pattern, sizeof(pattern), "%s/php-fpm[0-9]*", dir);
    assert_int_equal(sup_need(pattern, "php-fpm", got, sizeof(got), &err), 0);
    snprintf(path, sizeof(path), "%s/php-fpm8.10", dir);
    assert_string_equal(got, path);
    for (unsigned i = 0; i < 4; i++) {
        snprintf(path, sizeof(path), "%s/%s", dir, made[i]);
        unlink(path);
    }
    assert_int_equal(sup_need(pattern, "php-fpm", got, sizeof(got), &err), -ENOENT);
    snprintf(path, sizeof(path),
             "php-fpm is not installed (no %s/php-fpm[0-9]*): apt-get install -y php-fpm", dir);
    assert_string_equal(err.msg, path);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_profiles_as_before), cmocka_unit_test(test_cases_as_before),
        cmocka_unit_test(test_conf_too_long),      cmocka_unit_test(test_capacity_and_kept),
        cmocka_unit_test(test_ablation_steps),     cmocka_unit_test(test_fpm_stacks_consistent),
        cmocka_unit_test(test_newest_binary),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
