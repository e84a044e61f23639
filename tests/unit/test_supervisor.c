/*
 * test_supervisor: the stacks' services, with /bin/sh as the server. A
 * service runs in the cgroups made for it (each hierarchy hopbench is in),
 * its children too; sup_release stops it, its children included, also when
 * it ignores SIGTERM (SIGKILL after SUP_TERM_NS), and removes the cgroups and
 * the private directory. A service that exits, or a binary that cannot be
 * run, is one error naming it (and its log's last line). Cgroups need root:
 * the tests that make them are skipped otherwise.
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
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "stack/supervisor.h"
#include "stack/users.h"

static struct sup g_sup;

/* A sup with its directory and cgroups, or a skip where cgroups cannot be made. */
static void sup_ready(void)
{
    struct hb_err err = { 0 };

    if (geteuid() != 0) skip();
    if (sup_init(&g_sup, &err) < 0) {
        sup_release(&g_sup, &err);
        skip();
    }
}

static void start_sh(const char *name, const char *script)
{
    struct hb_err err = { 0 };
    const char *argv[] = { "/bin/sh", "-c", script, NULL };
    struct sup_spec spec = { .name = name, .argv = argv };

    assert_int_equal(sup_start(&g_sup, &spec, &err), 0);
}

/* Waits (5 s at most) until the service's cgroup holds n processes. */
static int wait_procs(const struct sup_svc *v, int n)
{
    for (int i = 0; i < 500; i++) {
        if (sup_procs(v) == n) return n;
        usleep(10000);
    }
    return sup_procs(v);
}

static bool exists(const char *path)
{
    struct stat st;

    return stat(path, &st) == 0;
}

/* Whether /proc/pid/cgroup names dir's cgroup (the path under its hierarchy's mount). */
static bool in_cgroup(pid_t pid, const char *name)
{
    char path[64], buf[4096];
    FILE *f;
    size_t n;

    snprintf(path, sizeof(path), "/proc/%ld/cgroup", (long)pid);
    f = fopen(path, "r");
    if (f == NULL) return false;
    n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    return strstr(buf, name) != NULL;
}

static void test_service_and_its_children_stop(void **state)
{
    struct hb_err err = { 0 };
    char dir[PATH_MAX], cg[SUP_MAX_HIER][PATH_MAX], tag[128];

    (void)state;
    sup_ready();
    /* a child that forks one more: both in its cgroups */
    start_sh("svc", "sleep 60 & exec sleep 61");
    struct sup_svc *v = sup_find(&g_sup, "svc");
    assert_non_null(v);
    assert_int_equal(wait_procs(v, 2), 2);
    snprintf(tag, sizeof(tag), "%s/svc", strrchr(g_sup.cg_run[0], '/') + 1); /* DIRNAME.MARK */
    assert_true(in_cgroup(v->pid, tag));
    assert_int_equal(sup_alive(&g_sup, &err), 0);
    snprintf(dir, sizeof(dir), "%s", g_sup.dir);
    for (unsigned i = 0; i < g_sup.ncg; i++)
        snprintf(cg[i], sizeof(cg[i]), "%s", g_sup.cg_run[i]);
    pid_t pid = v->pid;
    assert_int_equal(sup_release(&g_sup, &err), 0);
    assert_int_not_equal(kill(pid, 0), 0);
    assert_false(exists(dir));
    for (unsigned i = 0; i < g_sup.ncg; i++)
        assert_false(exists(cg[i]));
}

static void test_sigterm_ignored_gets_sigkill(void **state)
{
    struct hb_err err = { 0 };

    (void)state;
    sup_ready();
    /* sh and its sleep both ignore SIGTERM (an ignored signal stays ignored across exec) */
    start_sh("deaf", "trap '' TERM; sleep 60 & sleep 61; wait");
    struct sup_svc *v = sup_find(&g_sup, "deaf");
    assert_int_equal(wait_procs(v, 3), 3);
    uint64_t t0 = now_ns();
    assert_int_equal(sup_release(&g_sup, &err), 0);
    uint64_t took = now_ns() - t0;
    assert_true(took >= SUP_TERM_NS);
    assert_true(took < SUP_TERM_NS + SUP_KILL_NS + NS_PER_S);
    assert_true(v->exited);
    assert_true(WIFSIGNALED(v->status) && WTERMSIG(v->status) == SIGKILL);
}

static void test_exit_is_named_with_its_log(void **state)
{
    struct hb_err err = { 0 };
    struct sup_check k = { .svc = "boom", .proto = "redis" };

    (void)state;
    sup_ready();
    start_sh("boom", "echo 'first line'; echo 'cannot bind: Address in use' >&2; exit 3");
    /* nobody listens there: the readiness wait sees the exit instead */
    assert_int_equal(endpoint_parse(&k.ep, "tcp://127.0.0.1:1", &err), 0);
    assert_int_equal(sup_wait_ready(&g_sup, &k, 1, 5 * NS_PER_S, NULL, &err), -ECHILD);
    assert_non_null(strstr(err.msg, "boom"));
    assert_non_null(strstr(err.msg, "exited with status 3"));
    assert_non_null(strstr(err.msg, "cannot bind: Address in use"));
    assert_int_equal(sup_release(&g_sup, &err), 0);
}

static void test_no_answer_in_time(void **state)
{
    struct hb_err err = { 0 };
    struct sup_check k = { .svc = "mute", .proto = "redis" };

    (void)state;
    sup_ready();
    start_sh("mute", "echo 'starting'; exec sleep 60");
    assert_int_equal(endpoint_parse(&k.ep, "tcp://127.0.0.1:1", &err), 0);
    uint64_t t0 = now_ns();
    assert_int_equal(sup_wait_ready(&g_sup, &k, 1, 300 * NS_PER_MS, NULL, &err), -ETIMEDOUT);
    assert_true(now_ns() - t0 < 2 * NS_PER_S);
    assert_non_null(strstr(err.msg, "mute did not answer"));
    assert_non_null(strstr(err.msg, "starting"));
    assert_int_equal(sup_release(&g_sup, &err), 0);
}

static void test_cannot_exec(void **state)
{
    struct hb_err err = { 0 };
    const char *argv[] = { "/nonexistent/server", NULL };
    struct sup_spec spec = { .name = "ghost", .argv = argv };

    (void)state;
    sup_ready();
    assert_int_equal(sup_start(&g_sup, &spec, &err), -ENOENT);
    assert_non_null(strstr(err.msg, "cannot start ghost: exec"));
    assert_int_equal(sup_release(&g_sup, &err), 0);
}

static void test_missing_package_line(void **state)
{
    struct hb_err err = { 0 };

    (void)state;
    assert_int_equal(sup_need("/bin/sh", "dash", NULL, 0, &err), 0);
    assert_int_equal(sup_need("/nonexistent/redis-server", "redis-server", NULL, 0, &err), -ENOENT);
    assert_string_equal(err.msg, "redis-server is not installed (no /nonexistent/redis-server): "
                                 "apt-get install -y redis-server");
}

/* A one-off step runs to its end: exit 0 is done, another status is one error with its log. */
static void test_task(void **state)
{
    struct hb_err err = { 0 };
    const char *ok[] = { "/bin/sh", "-c", "echo made > \"$0\"", NULL, NULL };
    const char *fail[] = { "/bin/sh", "-c", "echo 'initdb: no space left' >&2; exit 2", NULL };
    const char *slow[] = { "/bin/sh", "-c", "exec sleep 60", NULL };
    struct sup_spec spec = { .name = "init", .argv = ok };
    char path[PATH_MAX];

    (void)state;
    sup_ready();
    assert_int_equal(sup_path(&g_sup, "made", path, sizeof(path)), 0);
    ok[3] = path;
    assert_int_equal(sup_task(&g_sup, &spec, 10 * NS_PER_S, NULL, &err), 0);
    assert_true(exists(path));
    assert_int_equal(g_sup.nsvc, 0); /* done: no service, no cgroup of it left */
    spec.argv = fail;
    assert_int_equal(sup_task(&g_sup, &spec, 10 * NS_PER_S, NULL, &err), -ECHILD);
    assert_non_null(strstr(err.msg, "init"));
    assert_non_null(strstr(err.msg, "exited with status 2"));
    assert_non_null(strstr(err.msg, "initdb: no space left"));
    spec.argv = slow;
    uint64_t t0 = now_ns();
    assert_int_equal(sup_task(&g_sup, &spec, 300 * NS_PER_MS, NULL, &err), -ETIMEDOUT);
    assert_true(now_ns() - t0 < SUP_TERM_NS + NS_PER_S);
    assert_int_equal(g_sup.nsvc, 0);
    assert_int_equal(sup_release(&g_sup, &err), 0);
}

/*
 * A service of another user (nobody): it runs with that uid and gid, in a
 * directory made for it that it may write, and is stopped as any other.
 */
static void test_as_user(void **state)
{
    struct hb_err err = { 0 };
    struct users_id nobody;
    const char *argv[] = { "/bin/sh", "-c", "id -u > \"$0/uid\"; id -g >> \"$0/uid\"", NULL, NULL };
    struct sup_spec spec = { .name = "other", .argv = argv, .as = &nobody };
    char dir[PATH_MAX], file[PATH_MAX + 8], got[64] = "", want[64];
    struct stat st;
    FILE *f;

    (void)state;
    sup_ready();
    if (users_lookup(USERS_PASSWD, USERS_GROUP, "nobody", &nobody) < 0) skip();
    assert_int_equal(sup_mkdir(&g_sup, "theirs", &nobody, &err), 0);
    assert_int_equal(sup_path(&g_sup, "theirs", dir, sizeof(dir)), 0);
    assert_int_equal(stat(dir, &st), 0);
    assert_int_equal(st.st_uid, nobody.uid);
    assert_int_equal(st.st_mode & 0777, 0700);
    argv[3] = dir;
    assert_int_equal(sup_task(&g_sup, &spec, 10 * NS_PER_S, NULL, &err), 0);
    snprintf(file, sizeof(file), "%s/uid", dir);
    f = fopen(file, "r");
    assert_non_null(f);
    assert_int_equal(fread(got, 1, sizeof(got) - 1, f) > 0, 1);
    fclose(f);
    snprintf(want, sizeof(want), "%u\n%u\n", (unsigned)nobody.uid, (unsigned)nobody.gid);
    assert_string_equal(got, want);
    assert_int_equal(sup_release(&g_sup, &err), 0);
    assert_false(exists(dir));
}

/* A directory above the private one that the service's user may not search: one line naming it. */
static void test_unreachable(void **state)
{
    struct hb_err err = { 0 };
    struct users_id nobody;
    char closed[] = "/tmp/hopbench-closed.XXXXXX", want[128], old[PATH_MAX] = "";
    const char *tmp = getenv("TMPDIR");
    int rc;

    (void)state;
    if (geteuid() != 0 || users_lookup(USERS_PASSWD, USERS_GROUP, "nobody", &nobody) < 0) skip();
    if (tmp != NULL) snprintf(old, sizeof(old), "%s", tmp);
    assert_non_null(mkdtemp(closed)); /* 0700, root's */
    setenv("TMPDIR", closed, 1);
    rc = sup_init(&g_sup, &err);
    if (tmp != NULL)
        setenv("TMPDIR", old, 1);
    else
        unsetenv("TMPDIR");
    if (rc == 0) rc = sup_mkdir(&g_sup, "theirs", &nobody, &err);
    snprintf(want, sizeof(want), "no search permission on %s ", closed);
    sup_release(&g_sup, &(struct hb_err){ 0 });
    rmdir(closed);
    assert_int_equal(rc, -EACCES);
    assert_non_null(strstr(err.msg, "user nobody, which runs a service, cannot reach"));
    assert_non_null(strstr(err.msg, want));
}

/* After each test, passed or not: nothing it started or made is left. */
static int teardown(void **state)
{
    struct hb_err err = { 0 };

    (void)state;
    sup_release(&g_sup, &err);
    memset(&g_sup, 0, sizeof(g_sup));
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_service_and_its_children_stop, teardown),
        cmocka_unit_test_teardown(test_sigterm_ignored_gets_sigkill, teardown),
        cmocka_unit_test_teardown(test_exit_is_named_with_its_log, teardown),
        cmocka_unit_test_teardown(test_no_answer_in_time, teardown),
        cmocka_unit_test_teardown(test_cannot_exec, teardown),
        cmocka_unit_test_teardown(test_task, teardown),
        cmocka_unit_test_teardown(test_as_user, teardown),
        cmocka_unit_test_teardown(test_unreachable, teardown),
        cmocka_unit_test(test_missing_package_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
