/*
 * test_leftover: the owner marks (alive, dead once exited or reaped, dead
 * when the pid's start time differs, not judged when malformed or of another
 * pid namespace); leftover_clean removes a dead owner's marked directory and
 * nothing else (a live owner's, an unmarked one, a symbolic link, another
 * prefix); the watcher removes its directory once the process that started it
 * is killed, and nothing when stopped; and, as root, the cgroups of a dead
 * owner go with the process in them, in a v1 hierarchy (pidfds) and in v2
 * (cgroup.kill), while a live owner's stay.
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
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "host/counters.h"
#include "host/leftover.h"

#define MAX_KIDS 4

static char g_tmp[PATH_MAX];   /* the test's directory, "" when none */
static char g_cg[2][PATH_MAX]; /* cgroups it made, "" when none */
static pid_t g_kids[MAX_KIDS]; /* processes it started, 0 when reaped */

/* snprintf that fails the test when the text does not fit. */
__attribute__((format(printf, 3, 4))) static char *fmt(char *buf, size_t cap, const char *f, ...)
{
    va_list ap;
    int n;

    va_start(ap, f);
    n = vsnprintf(buf, cap, f, ap);
    va_end(ap);
    assert_true(n >= 0 && (size_t)n < cap);
    return buf;
}

static bool exists(const char *path)
{
    struct stat st;

    return lstat(path, &st) == 0;
}

static void make_tmp(void)
{
    snprintf(g_tmp, sizeof(g_tmp), "/tmp/test_leftover.XXXXXX");
    assert_non_null(mkdtemp(g_tmp));
}

/* g_tmp/name into buf. */
static const char *in_tmp(char *buf, size_t cap, const char *name)
{
    return fmt(buf, cap, "%s/%s", g_tmp, name);
}

/* A process that pauses until killed, in slot i. */
static pid_t start_kid(unsigned i)
{
    pid_t pid = fork();

    assert_true(pid >= 0);
    if (pid == 0) {
        for (;;)
            pause();
    }
    g_kids[i] = pid;
    return pid;
}

/* Kills and reaps slot i; its wait status. */
static int end_kid(unsigned i)
{
    int st = 0;

    if (g_kids[i] <= 0) return 0;
    kill(g_kids[i], SIGKILL);
    waitpid(g_kids[i], &st, 0);
    g_kids[i] = 0;
    return st;
}

/* Reaps slot i once it has ended by itself (5 s at most): its wait status, or -1 when it runs on.
 */
static int reap_kid(unsigned i)
{
    int st = 0;

    for (int n = 0; n < 500; n++) {
        if (waitpid(g_kids[i], &st, WNOHANG) == g_kids[i]) {
            g_kids[i] = 0;
            return st;
        }
        usleep(10000);
    }
    return -1;
}

/* The mark of a process that has exited and been reaped. */
static void dead_mark(char *mark, size_t cap)
{
    int p[2], st;
    pid_t pid;

    assert_int_equal(pipe(p), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        char m[LEFTOVER_MARK_CAP];
        if (leftover_mark(m, sizeof(m)) == 0 && write(p[1], m, strlen(m) + 1) > 0) _exit(0);
        _exit(1);
    }
    close(p[1]);
    assert_true(read(p[0], mark, cap) > 0);
    close(p[0]);
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static void test_marks(void **state)
{
    char mark[LEFTOVER_MARK_CAP], other[LEFTOVER_MARK_CAP + 8];
    unsigned long long start, ns;
    long pid, me;
    static const char *const bad[] = { "",      "12",      "12-3",   "a-b-c",          "1-2-3-4",
                                       "0-1-2", "1-2-3\n", "-1-2-3", "99999999999-1-2" };

    (void)state;
    assert_int_equal(leftover_mark(mark, sizeof(mark)), 0);
    assert_int_equal(leftover_owner(mark, &pid), LEFTOVER_ALIVE);
    assert_int_equal(pid, (long)getpid());
    assert_int_equal(sscanf(mark, "%ld-%llu-%llu", &me, &start, &ns), 3);
    /* the same pid started at another time: a reused pid, its owner dead */
    snprintf(other, sizeof(other), "%ld-%llu-%llu", me, start + 1, ns);
    assert_int_equal(leftover_owner(other, &pid), LEFTOVER_DEAD);
    /* another pid namespace's: not ours to judge */
    snprintf(other, sizeof(other), "%ld-%llu-%llu", me, start, ns + 1);
    assert_int_equal(leftover_owner(other, &pid), LEFTOVER_UNKNOWN);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_int_equal(leftover_owner(bad[i], &pid), LEFTOVER_UNKNOWN);
    dead_mark(mark, sizeof(mark));
    assert_int_equal(leftover_owner(mark, &pid), LEFTOVER_DEAD);
    assert_true(pid > 0 && pid != me);
}

/* An exited process not yet reaped (a zombie) is dead too. */
static void test_zombie_is_dead(void **state)
{
    char mark[LEFTOVER_MARK_CAP] = "";
    struct proc_stat st;
    long pid;
    int p[2];

    (void)state;
    assert_int_equal(pipe(p), 0);
    g_kids[0] = fork();
    assert_true(g_kids[0] >= 0);
    if (g_kids[0] == 0) {
        char m[LEFTOVER_MARK_CAP];
        if (leftover_mark(m, sizeof(m)) == 0 && write(p[1], m, strlen(m) + 1) > 0) _exit(0);
        _exit(1);
    }
    close(p[1]);
    assert_true(read(p[0], mark, sizeof(mark)) > 0);
    close(p[0]);
    for (int i = 0; i < 500; i++) {
        if (proc_stat_read(g_kids[0], &st) == 0 && st.state == 'Z') break;
        usleep(10000);
    }
    assert_int_equal(proc_stat_read(g_kids[0], &st), 0);
    assert_int_equal(st.state, 'Z');
    assert_int_equal(leftover_owner(mark, &pid), LEFTOVER_DEAD);
    assert_int_equal(pid, (long)g_kids[0]);
    end_kid(0);
}

/* dir g_tmp/name with an owner file holding mark (none when NULL) and a file and a subdirectory. */
static void make_dir(const char *name, const char *mark)
{
    char path[PATH_MAX], sub[PATH_MAX + 16];
    FILE *f;

    assert_int_equal(mkdir(in_tmp(path, sizeof(path), name), 0700), 0);
    if (mark != NULL) assert_int_equal(leftover_mark_dir(path, mark), 0);
    f = fopen(fmt(sub, sizeof(sub), "%s/run.log", path), "w");
    assert_non_null(f);
    fputs("a line\n", f);
    fclose(f);
    assert_int_equal(mkdir(fmt(sub, sizeof(sub), "%s/data", path), 0700), 0);
}

static void test_clean_dirs(void **state)
{
    char dead[LEFTOVER_MARK_CAP], live[LEFTOVER_MARK_CAP], path[PATH_MAX], want[PATH_MAX + 128];
    char *text = NULL;
    size_t len = 0;
    long pid;
    FILE *out;

    (void)state;
    make_tmp();
    dead_mark(dead, sizeof(dead));
    assert_int_equal(leftover_mark(live, sizeof(live)), 0);
    make_dir("hopbench-x.dead", dead);
    make_dir("hopbench-x.live", live);
    make_dir("hopbench-x.nomark", NULL);
    make_dir("other.dead", dead);
    make_dir("target", dead); /* reached only through a symbolic link named like a leftover */
    assert_int_equal(symlink("target", in_tmp(path, sizeof(path), "hopbench-x.link")), 0);
    out = open_memstream(&text, &len);
    assert_non_null(out);
    assert_int_equal(
        leftover_clean(&(struct leftover_scan){ .who = "t", .tmp = g_tmp, .prefix = "hopbench-x." },
                       out),
        1);
    fclose(out);
    leftover_owner(dead, &pid);
    snprintf(want, sizeof(want), "hopbench t: removed leftovers of hopbench pid %ld (dead): %s\n",
             pid, in_tmp(path, sizeof(path), "hopbench-x.dead"));
    assert_string_equal(text, want);
    free(text);
    assert_false(exists(in_tmp(path, sizeof(path), "hopbench-x.dead")));
    assert_true(exists(in_tmp(path, sizeof(path), "hopbench-x.live/run.log")));
    assert_true(exists(in_tmp(path, sizeof(path), "hopbench-x.nomark/run.log")));
    assert_true(exists(in_tmp(path, sizeof(path), "other.dead/run.log")));
    assert_true(exists(in_tmp(path, sizeof(path), "hopbench-x.link")));
    assert_true(exists(in_tmp(path, sizeof(path), "target/run.log")));
}

/*
 * A process that starts a watcher of g_tmp/name and then waits to be killed;
 * returns when the watcher is started. The test is the subreaper: the orphaned
 * watcher becomes its child.
 */
static pid_t start_watched(const char *name)
{
    char path[PATH_MAX], c;
    int p[2];
    pid_t pid;

    assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
    make_dir(name, NULL);
    assert_int_equal(pipe(p), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct leftover_watch w;
        struct hb_err err = { 0 };
        close(p[0]);
        if (leftover_watch_start(&w, in_tmp(path, sizeof(path), name), NULL, 0, &err) < 0) _exit(1);
        if (write(p[1], "r", 1) != 1) _exit(1);
        for (;;)
            pause();
    }
    g_kids[0] = pid;
    close(p[1]);
    assert_int_equal(read(p[0], &c, 1), 1);
    close(p[0]);
    return pid;
}

static void test_watch_removes_when_killed(void **state)
{
    char path[PATH_MAX];
    int st = 0;
    pid_t got = 0;

    (void)state;
    make_tmp();
    start_watched("killed");
    assert_true(exists(in_tmp(path, sizeof(path), "killed/run.log")));
    end_kid(0);
    /* the watcher ends: it removed the directory first */
    for (int i = 0; i < 500 && got == 0; i++) {
        got = waitpid(-1, &st, WNOHANG);
        if (got == 0) usleep(10000);
    }
    assert_true(got > 0);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    assert_false(exists(path));
}

static void test_watch_stop_touches_nothing(void **state)
{
    struct leftover_watch w;
    struct hb_err err = { 0 };
    char path[PATH_MAX];

    (void)state;
    make_tmp();
    make_dir("kept", NULL);
    assert_int_equal(leftover_watch_start(&w, in_tmp(path, sizeof(path), "kept"), NULL, 0, &err),
                     0);
    pid_t watcher = w.pid;
    assert_true(watcher > 0);
    leftover_watch_stop(&w);
    assert_int_equal(w.pid, 0);
    assert_int_equal(waitpid(watcher, NULL, WNOHANG), -1); /* reaped */
    assert_int_equal(errno, ECHILD);
    leftover_watch_stop(&w); /* twice: nothing */
    assert_true(exists(in_tmp(path, sizeof(path), "kept/run.log")));
}

/* Moves pid into cgroup dir (made first). */
static void cg_join(const char *dir, pid_t pid)
{
    char file[PATH_MAX + 16];
    FILE *f;

    assert_int_equal(mkdir(dir, 0755), 0);
    f = fopen(fmt(file, sizeof(file), "%s/cgroup.procs", dir), "w");
    assert_non_null(f);
    fprintf(f, "%ld\n", (long)pid);
    assert_int_equal(fclose(f), 0);
}

/*
 * In the hierarchy of controller ctl ("" for v2): a dead owner's run cgroup
 * with a process in its service cgroup goes with that process; a live owner's
 * stays until cg_trees_end ends it.
 */
static void cgroups_in(const char *ctl)
{
    char parent[PATH_MAX], dead[LEFTOVER_MARK_CAP], live[LEFTOVER_MARK_CAP], svc[PATH_MAX + 8];
    char *text = NULL, want[PATH_MAX * 2];
    const char *p[1] = { parent }, *failed = NULL;
    size_t len = 0;
    long pid;
    FILE *out;

    if (geteuid() != 0 || cgroup_self_dir(ctl, parent, sizeof(parent)) < 0) skip();
    dead_mark(dead, sizeof(dead));
    assert_int_equal(leftover_mark(live, sizeof(live)), 0);
    fmt(g_cg[0], sizeof(g_cg[0]), "%s/hopbench-x.t%d.%s", parent, (int)getpid(), dead);
    fmt(g_cg[1], sizeof(g_cg[1]), "%s/hopbench-x.t%d.%s", parent, (int)getpid(), live);
    for (unsigned i = 0; i < 2; i++) {
        pid_t kid = start_kid(i);
        assert_int_equal(mkdir(g_cg[i], 0755), 0);
        fmt(svc, sizeof(svc), "%s/svc", g_cg[i]);
        cg_join(svc, kid);
        assert_int_equal(cg_tree_count(g_cg[i]), 1);
    }
    out = open_memstream(&text, &len);
    assert_non_null(out);
    assert_int_equal(leftover_clean(&(struct leftover_scan){ .who = "t",
                                                             .tmp = "/nonexistent",
                                                             .prefix = "hopbench-x.t",
                                                             .cg_parents = p,
                                                             .ncg = 1 },
                                    out),
                     1);
    fclose(out);
    leftover_owner(dead, &pid);
    snprintf(want, sizeof(want),
             "hopbench t: removed leftovers of hopbench pid %ld (dead): 1 cgroup, 1 process\n",
             pid);
    assert_string_equal(text, want);
    free(text);
    int st = reap_kid(0);
    assert_true(st != -1 && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
    assert_false(exists(g_cg[0]));
    g_cg[0][0] = '\0';
    /* the live owner's: untouched, its process running */
    assert_true(exists(g_cg[1]));
    assert_int_equal(kill(g_kids[1], 0), 0);
    const char *mine[1] = { g_cg[1] };
    assert_int_equal(cg_trees_end(mine, 1, LEFTOVER_END_NS, &failed), 0);
    st = reap_kid(1);
    assert_true(st != -1 && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
    assert_false(exists(g_cg[1]));
    g_cg[1][0] = '\0';
}

static void test_cgroups_v1(void **state)
{
    (void)state;
    cgroups_in("cpuacct");
}

static void test_cgroups_v2(void **state)
{
    (void)state;
    cgroups_in("");
}

/* After each test, passed or not: its processes, cgroups and files are gone. */
static int teardown(void **state)
{
    (void)state;
    for (unsigned i = 0; i < MAX_KIDS; i++)
        end_kid(i);
    while (waitpid(-1, NULL, WNOHANG) > 0)
        ;
    for (unsigned i = 0; i < 2; i++) {
        const char *d[1] = { g_cg[i] };
        if (g_cg[i][0] != '\0') cg_trees_end(d, 1, LEFTOVER_END_NS, NULL);
        g_cg[i][0] = '\0';
    }
    if (g_tmp[0] != '\0') dir_tree_remove(g_tmp);
    g_tmp[0] = '\0';
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_marks, teardown),
        cmocka_unit_test_teardown(test_zombie_is_dead, teardown),
        cmocka_unit_test_teardown(test_clean_dirs, teardown),
        cmocka_unit_test_teardown(test_watch_removes_when_killed, teardown),
        cmocka_unit_test_teardown(test_watch_stop_touches_nothing, teardown),
        cmocka_unit_test_teardown(test_cgroups_v1, teardown),
        cmocka_unit_test_teardown(test_cgroups_v2, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
