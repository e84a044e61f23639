/*
 * test_service: the words of --service, --watch and --label. service_parse's
 * syntax, service_add's checks against the system (a pid that runs, a
 * directory on a cgroup file system, a name not used twice), the split of
 * NAME=ENDPOINT, the --label order and its conflicts.
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
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "host/service.h"

static void test_parse_kinds(void **state)
{
    struct service_spec s;
    struct hb_err err = { 0 };

    (void)state;
    assert_int_equal(service_parse("httpd=pid:42", &s, &err), 0);
    assert_string_equal(s.name, "httpd");
    assert_int_equal(s.kind, SERVICE_PID);
    assert_int_equal(s.pid, 42);
    assert_int_equal(service_parse("fpm.pool-1_a=tree:4194304", &s, &err), 0);
    assert_string_equal(s.name, "fpm.pool-1_a");
    assert_int_equal(s.kind, SERVICE_TREE);
    assert_int_equal(s.pid, 4194304);
    assert_int_equal(service_parse("db=cgroup:/sys/fs/cgroup/x=y:z", &s, &err), 0);
    assert_string_equal(s.name, "db");
    assert_int_equal(s.kind, SERVICE_CGROUP);
    assert_string_equal(s.dir, "/sys/fs/cgroup/x=y:z");
    assert_string_equal(service_kind_name(SERVICE_PID), "pid");
    assert_string_equal(service_kind_name(SERVICE_TREE), "tree");
    assert_string_equal(service_kind_name(SERVICE_CGROUP), "cgroup");
    assert_int_equal(service_parse("nginx=comm:nginx", &s, &err), 0);
    assert_int_equal(s.kind, SERVICE_COMM);
    assert_string_equal(s.comm, "nginx");
    assert_string_equal(service_kind_name(SERVICE_COMM), "comm");
}

/* Each bad word is refused with a message that names the part at fault. */
static void test_parse_errors(void **state)
{
    static const struct {
        const char *arg, *says;
    } bad[] = {
        { "httpd", "expected NAME=" },
        { "=pid:1", "a name is" },
        { "-x=pid:1", "a name is" },
        { "a b=pid:1", "a name is" },
        { "abcdefghijabcdefghijabcdefghijab=pid:1", "a name is" }, /* 32 characters */
        { "client=pid:1", "'client' names a column" },
        { "a=comm:", "a command name is 1 to 15 bytes" },
        { "a=comm:abcdefghijklmnop", "a command name is 1 to 15 bytes" },
        { "a=comm:usr/bin/x", "without '/'" },
        { "sum=pid:1", "'sum' names a column" },
        { "system=pid:1", "'system' names a column" },
        { "x=pid", "missing KIND:ARG" },
        { "x=proc:1", "unknown kind 'proc'" },
        { "x=:1", "unknown kind ''" },
        { "x=pidx:1", "unknown kind 'pidx'" },
        { "x=pid:", "'' is not a pid" },
        { "x=pid:0", "'0' is not a pid" },
        { "x=pid:-3", "'-3' is not a pid" },
        { "x=tree:12a", "'12a' is not a pid" },
        { "x=pid:4194305", "'4194305' is not a pid" },
        { "x=pid:99999999999999999999", "is not a pid" },
        { "x=cgroup:", "missing the cgroup DIR" },
    };

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct service_spec s;
        struct hb_err err = { 0 };
        int rc = service_parse(bad[i].arg, &s, &err);

        if (rc != -EINVAL || strstr(err.msg, bad[i].says) == NULL)
            fail_msg("'%s': rc %d, message '%s', wanted '%s'", bad[i].arg, rc, err.msg,
                     bad[i].says);
    }
}

static void test_name_valid(void **state)
{
    (void)state;
    assert_true(service_name_valid("a"));
    assert_true(service_name_valid("9front"));
    assert_true(service_name_valid("abcdefghijabcdefghijabcdefghija")); /* 31 */
    assert_false(service_name_valid("abcdefghijabcdefghijabcdefghijab"));
    assert_false(service_name_valid(""));
    assert_false(service_name_valid(NULL));
    assert_false(service_name_valid(".hidden"));
    assert_false(service_name_valid("a/b"));
    assert_false(service_name_valid("a=b"));
}

/* A pid that ran and has been reaped: no process has it (until it is reused). */
static pid_t gone_pid(void)
{
    pid_t pid = fork();

    if (pid == 0) _exit(0);
    assert_true(pid > 0);
    assert_int_equal(waitpid(pid, NULL, 0), pid);
    return pid;
}

/* A directory on a cgroup file system of this host, or NULL. */
static const char *some_cgroup(void)
{
    static const char *const dirs[] = { "/sys/fs/cgroup/cpuacct", "/sys/fs/cgroup/memory",
                                        "/sys/fs/cgroup/cpu", "/sys/fs/cgroup/unified",
                                        "/sys/fs/cgroup" };
    struct service_spec s = { .name = "x", .kind = SERVICE_CGROUP };
    struct hb_err err = { 0 };

    for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
        snprintf(s.dir, sizeof(s.dir), "%s", dirs[i]);
        if (service_check(&s, &err) == 0) return dirs[i];
    }
    return NULL;
}

static void test_add_checks(void **state)
{
    struct service_set set = { 0 };
    struct hb_err err = { 0 };
    char arg[PATH_MAX + 32], tmp[] = "/tmp/test_service.XXXXXX", file[sizeof(tmp) + 4];
    const char *cg = some_cgroup();

    (void)state;
    snprintf(arg, sizeof(arg), "me=pid:%d", (int)getpid());
    assert_int_equal(service_add(&set, arg, &err), 0);
    snprintf(arg, sizeof(arg), "mine=tree:%d", (int)getpid());
    assert_int_equal(service_add(&set, arg, &err), 0);
    assert_int_equal(set.n, 2);

    snprintf(arg, sizeof(arg), "me=tree:%d", (int)getpid());
    assert_int_equal(service_add(&set, arg, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "the name 'me' is given twice"));

    snprintf(arg, sizeof(arg), "gone=pid:%d", (int)gone_pid());
    assert_int_equal(service_add(&set, arg, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "no such process"));

    assert_non_null(mkdtemp(tmp));
    snprintf(arg, sizeof(arg), "tmp=cgroup:%s", tmp);
    assert_int_equal(service_add(&set, arg, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "is not a cgroup directory"));
    snprintf(file, sizeof(file), "%s/f", tmp);
    fclose(fopen(file, "w"));
    snprintf(arg, sizeof(arg), "file=cgroup:%s", file);
    assert_int_equal(service_add(&set, arg, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "is not a directory"));
    snprintf(arg, sizeof(arg), "none=cgroup:%s/none", tmp);
    assert_int_equal(service_add(&set, arg, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "is not a directory"));
    unlink(file);
    rmdir(tmp);
    assert_int_equal(set.n, 2); /* nothing refused was added */

    if (cg == NULL) {
        skip();
        return;
    }
    snprintf(arg, sizeof(arg), "cg=cgroup:%s", cg);
    assert_int_equal(service_add(&set, arg, &err), 0);
    assert_int_equal(set.n, 3);
}

/* A child named name (its comm) with kids children of the same name (a master and its
 * workers), each ready when this returns: its pid. On SIGTERM it kills and reaps its
 * children, then exits (nothing is left for a PID 1 that may not reap). */
static pid_t named_child(const char *name, int kids)
{
    int ready[2];
    char c;
    pid_t pid;

    assert_int_equal(pipe(ready), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        pid_t kid[4];
        sigset_t term;
        int sig;

        sigemptyset(&term);
        sigaddset(&term, SIGTERM);
        sigprocmask(SIG_BLOCK, &term, NULL);
        prctl(PR_SET_NAME, name);
        for (int i = 0; i < kids && i < 4; i++) {
            kid[i] = fork();
            if (kid[i] == 0) {
                (void)!write(ready[1], "k", 1);
                pause();
                _exit(0);
            }
        }
        (void)!write(ready[1], "x", 1);
        sigwait(&term, &sig);
        for (int i = 0; i < kids && i < 4; i++) {
            kill(kid[i], SIGKILL);
            waitpid(kid[i], NULL, 0);
        }
        _exit(0);
    }
    close(ready[1]);
    for (int i = 0; i <= kids; i++) /* the master and each worker */
        assert_int_equal(read(ready[0], &c, 1), 1);
    close(ready[0]);
    return pid;
}

static void child_end(pid_t pid)
{
    kill(pid, SIGTERM);
    waitpid(pid, NULL, 0);
}

/* comm: found when the run starts (not when added), as the tree of the master; none, or two
 * masters, refused with the service named. */
static void test_comm_resolve(void **state)
{
    struct service_set set = { 0 };
    struct hb_err err = { 0 };
    char name[16], arg[64], src[64];
    pid_t master, other;
    uint64_t t0;

    (void)state;
    snprintf(name, sizeof(name), "hbt%d", (int)getpid() % 1000000);
    snprintf(arg, sizeof(arg), "web=comm:%s", name);
    assert_int_equal(service_add(&set, arg, &err), 0); /* none runs yet: not looked for */
    t0 = now_ns();
    assert_int_equal(service_resolve(&set, now_ns() + 120 * NS_PER_MS, NULL, &err), -ESRCH);
    assert_true(now_ns() - t0 >= 100 * NS_PER_MS); /* asked again until the time was up */
    assert_non_null(strstr(err.msg, "--service web: no process is named"));
    assert_int_equal(set.svc[0].kind, SERVICE_COMM);

    master = named_child(name, 2);
    assert_int_equal(service_resolve(&set, 0, NULL, &err), 0);
    assert_int_equal(set.svc[0].kind, SERVICE_TREE);
    assert_int_equal(set.svc[0].pid, master); /* not a worker of the same name */
    service_source(&set.svc[0], src, sizeof(src));
    snprintf(arg, sizeof(arg), "tree of pid %d, comm %s", (int)master, name);
    assert_string_equal(src, arg);

    other = named_child(name, 0);
    set.svc[0].kind = SERVICE_COMM;
    assert_int_equal(service_resolve(&set, 0, NULL, &err), -EEXIST);
    assert_non_null(strstr(err.msg, "2 processes named"));
    child_end(other);
    child_end(master);
}

static void test_add_cap(void **state)
{
    struct service_set set = { 0 };
    struct hb_err err = { 0 };
    char arg[64];

    (void)state;
    for (int i = 0; i < SERVICE_MAX; i++) {
        snprintf(arg, sizeof(arg), "s%d=pid:%d", i, (int)getpid());
        assert_int_equal(service_add(&set, arg, &err), 0);
    }
    snprintf(arg, sizeof(arg), "one-more=pid:%d", (int)getpid());
    assert_int_equal(service_add(&set, arg, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "at most"));
}

static void test_label_split(void **state)
{
    char label[SERVICE_NAME_MAX];
    const char *rest = NULL;
    struct hb_err err = { 0 };

    (void)state;
    assert_int_equal(
        service_label_split("front=tcp://127.0.0.1:80", label, sizeof(label), &rest, &err), 0);
    assert_string_equal(label, "front");
    assert_string_equal(rest, "tcp://127.0.0.1:80");
    /* An endpoint may hold '=' itself: a word that begins with a scheme has no label. */
    assert_int_equal(service_label_split("unix:/run/a=b.sock", label, sizeof(label), &rest, &err),
                     0);
    assert_string_equal(label, "");
    assert_string_equal(rest, "unix:/run/a=b.sock");
    assert_int_equal(service_label_split("tcp://127.0.0.1:80", label, sizeof(label), &rest, &err),
                     0);
    assert_string_equal(label, "");
    assert_int_equal(service_label_split("b=unix:/x=y", label, sizeof(label), &rest, &err), 0);
    assert_string_equal(label, "b");
    assert_string_equal(rest, "unix:/x=y");
    assert_int_equal(service_label_split("=unix:/x", label, sizeof(label), &rest, &err), -EINVAL);
    assert_int_equal(service_label_split("a b=unix:/x", label, sizeof(label), &rest, &err),
                     -EINVAL);
    assert_non_null(strstr(err.msg, "a label"));
    /* No '=' and no scheme: left to endpoint_parse, which names the scheme. */
    assert_int_equal(service_label_split("http://x", label, sizeof(label), &rest, &err), 0);
    assert_string_equal(rest, "http://x");
}

static void parse_eps(struct endpoint *eps, unsigned n, const char *const *texts)
{
    struct hb_err err = { 0 };

    for (unsigned i = 0; i < n; i++)
        assert_int_equal(endpoint_parse(&eps[i], texts[i], &err), 0);
}

static void test_labels_apply(void **state)
{
    static const char *const texts[] = { "tcp://127.0.0.1:80", "unix:/run/a.sock",
                                         "tcp://127.0.0.1:81" };
    static const char *const two[] = { "front", "back" };
    static const char *const same[] = { "x", "x" };
    static const char *const bad[] = { "ok", "no way" };
    struct endpoint eps[3];
    struct hb_err err = { 0 };

    (void)state;
    parse_eps(eps, 3, texts);
    assert_int_equal(service_labels_apply(eps, 3, two, 2, &err), 0);
    assert_string_equal(endpoint_name(&eps[0]), "front");
    assert_string_equal(endpoint_name(&eps[1]), "back");
    assert_string_equal(endpoint_name(&eps[2]), "tcp://127.0.0.1:81"); /* unlabelled: its text */
    assert_string_equal(eps[0].text, "tcp://127.0.0.1:80");

    parse_eps(eps, 3, texts);
    assert_int_equal(service_labels_apply(eps, 1, two, 2, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "2 labels for 1 endpoints"));

    parse_eps(eps, 3, texts);
    assert_int_equal(service_labels_apply(eps, 3, same, 2, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "label 'x' is given to two endpoints"));

    parse_eps(eps, 3, texts);
    assert_int_equal(service_labels_apply(eps, 3, bad, 2, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "--label no way"));

    /* Labelled by NAME=ENDPOINT and by --label: refused, not overwritten. */
    parse_eps(eps, 3, texts);
    strcpy(eps[0].label, "given");
    assert_int_equal(service_labels_apply(eps, 3, two, 1, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "labelled 'given' already"));

    /* A NAME=ENDPOINT label that another endpoint's --label repeats. */
    parse_eps(eps, 3, texts);
    strcpy(eps[2].label, "back");
    assert_int_equal(service_labels_apply(eps, 3, two, 2, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "label 'back' is given to two endpoints"));
}

static void test_watch_add(void **state)
{
    struct service_set set = { 0 };
    struct hb_err err = { 0 };

    (void)state;
    assert_int_equal(service_watch_add(&set, "fpm=tcp://127.0.0.1:9000", &err), 0);
    assert_int_equal(service_watch_add(&set, "unix:/run/php.sock", &err), 0);
    assert_int_equal(set.nwatch, 2);
    assert_string_equal(set.watch[0].label, "fpm");
    assert_string_equal(set.watch[0].text, "tcp://127.0.0.1:9000");
    assert_string_equal(set.watch[1].label, "");
    assert_int_equal(service_watch_add(&set, "tcp://127.0.0.1:9000", &err), -EINVAL);
    assert_non_null(strstr(err.msg, "watched twice"));
    assert_int_equal(service_watch_add(&set, "tcp://127.0.0.1:0", &err), -EINVAL);
    assert_non_null(strstr(err.msg, "port 0"));
    assert_int_equal(service_watch_add(&set, "x=udp://127.0.0.1:1", &err), -EINVAL);
    assert_non_null(strstr(err.msg, "unknown scheme"));
    assert_int_equal(set.nwatch, 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_kinds),  cmocka_unit_test(test_parse_errors),
        cmocka_unit_test(test_name_valid),   cmocka_unit_test(test_add_checks),
        cmocka_unit_test(test_add_cap),      cmocka_unit_test(test_label_split),
        cmocka_unit_test(test_labels_apply), cmocka_unit_test(test_watch_add),
        cmocka_unit_test(test_comm_resolve),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
