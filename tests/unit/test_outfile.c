/*
 * test_outfile: output files in a private directory under /tmp: a new or
 * existing regular file replaced whole at commit and untouched by an abort
 * (its mode kept, no temporary file left), symbolic links followed (relative,
 * chained, across directories, dangling, looping) with the links kept, a
 * FIFO, /dev/null and append mode written in place, and the kinds refused;
 * appends whole or not at all (a write cut short by RLIMIT_FSIZE is cut back),
 * a file whose last line has no end refused for appending, a new file's mode
 * 0644 less the umask, another user's file's mode not kept and, in a sticky
 * directory, the file refused (those two as root only).
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
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "outfile.h"

struct dir {
    char path[64];
};

static int setup_dir(void **state)
{
    struct dir *d = calloc(1, sizeof(*d));

    if (d == NULL) return -1;
    snprintf(d->path, sizeof(d->path), "/tmp/hb_outfile_XXXXXX");
    if (mkdtemp(d->path) == NULL) {
        free(d);
        return -1;
    }
    *state = d;
    return 0;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static int teardown_dir(void **state)
{
    struct dir *d = *state;

    nftw(d->path, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
    free(d);
    return 0;
}

/* dir/name into buf. */
static const char *at(const struct dir *d, const char *name, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s/%s", d->path, name);
    return buf;
}

/* How many entries dir holds (. and .. not counted). */
static int entries(const char *dir)
{
    DIR *dp = opendir(dir);
    struct dirent *e;
    int n = 0;

    assert_non_null(dp);
    while ((e = readdir(dp)) != NULL)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(dp);
    return n;
}

/* The whole content of path, or "" when it cannot be read. */
static const char *content(const char *path)
{
    static char buf[256];
    int fd = open(path, O_RDONLY);
    ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;

    if (fd >= 0) close(fd);
    buf[n > 0 ? n : 0] = '\0';
    return buf;
}

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");

    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

/* Writes text to path with mode, commits; returns outfile_commit's result (or open's). */
static int write_whole(const char *path, enum outfile_mode mode, const char *text)
{
    struct outfile o;
    struct hb_err err = { 0 };
    int rc = outfile_open(&o, path, mode, &err);

    if (rc < 0) return rc;
    assert_int_equal(outfile_write(&o, text, strlen(text), &err), 0);
    return outfile_commit(&o, &err);
}

static void test_new_file_and_abort(void **state)
{
    struct dir *d = *state;
    struct outfile o;
    struct hb_err err = { 0 };
    char p[128];

    at(d, "new.json", p, sizeof(p));
    assert_int_equal(outfile_open(&o, p, OUTFILE_REPLACE, &err), 0);
    assert_int_equal(outfile_write(&o, "{}", 2, &err), 0);
    assert_int_equal(access(p, F_OK), -1); /* not there until the commit */
    outfile_abort(&o);
    assert_int_equal(entries(d->path), 0);

    assert_int_equal(write_whole(p, OUTFILE_REPLACE, "{\"a\":1}"), 0);
    assert_string_equal(content(p), "{\"a\":1}");
    assert_int_equal(entries(d->path), 1);
}

static void test_existing_file_replaced_mode_kept(void **state)
{
    struct dir *d = *state;
    struct outfile o;
    struct hb_err err = { 0 };
    struct stat st;
    char p[128];

    at(d, "old.json", p, sizeof(p));
    put(p, "old");
    assert_int_equal(chmod(p, 0640), 0);
    assert_int_equal(outfile_open(&o, p, OUTFILE_REPLACE, &err), 0);
    assert_int_equal(outfile_write(&o, "new", 3, &err), 0);
    outfile_abort(&o);
    assert_string_equal(content(p), "old");

    assert_int_equal(write_whole(p, OUTFILE_REPLACE, "new"), 0);
    assert_string_equal(content(p), "new");
    assert_int_equal(lstat(p, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    assert_int_equal(st.st_mode & 07777, 0640);
    assert_int_equal(entries(d->path), 1);
}

static void test_stream(void **state)
{
    struct dir *d = *state;
    struct outfile o;
    struct hb_err err = { 0 };
    char p[128];
    FILE *f;

    at(d, "s.json", p, sizeof(p));
    assert_int_equal(outfile_open(&o, p, OUTFILE_REPLACE, &err), 0);
    f = outfile_stream(&o);
    assert_non_null(f);
    assert_ptr_equal(outfile_stream(&o), f);
    fprintf(f, "[%d]", 42);
    assert_int_equal(outfile_commit(&o, &err), 0);
    outfile_abort(&o); /* after a commit: nothing */
    assert_string_equal(content(p), "[42]");
    assert_int_equal(entries(d->path), 1);
}

/* d/l1 -> sub/l2 (relative to d), d/sub/l2 -> ../real (relative to sub): d/real is written. */
static void test_link_chain(void **state)
{
    struct dir *d = *state;
    char l1[128], sub[128], l2[128], real[128], got[64];
    struct stat st;
    ssize_t n;

    at(d, "l1", l1, sizeof(l1));
    at(d, "sub", sub, sizeof(sub));
    at(d, "sub/l2", l2, sizeof(l2));
    at(d, "real", real, sizeof(real));
    assert_int_equal(mkdir(sub, 0700), 0);
    assert_int_equal(symlink("sub/l2", l1), 0);
    assert_int_equal(symlink("../real", l2), 0);
    put(real, "old");

    assert_int_equal(write_whole(l1, OUTFILE_REPLACE, "new"), 0);
    assert_string_equal(content(real), "new");
    assert_int_equal(lstat(l1, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_int_equal(lstat(l2, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    n = readlink(l1, got, sizeof(got) - 1);
    assert_true(n > 0);
    got[n] = '\0';
    assert_string_equal(got, "sub/l2");
    assert_int_equal(entries(d->path), 3); /* l1, sub, real: no temporary file */
    assert_int_equal(entries(sub), 1);
}

static void test_dangling_link_target_created(void **state)
{
    struct dir *d = *state;
    char link[128], sub[128], target[128];
    struct stat st;

    at(d, "dangling", link, sizeof(link));
    at(d, "sub", sub, sizeof(sub));
    at(d, "sub/made.json", target, sizeof(target));
    assert_int_equal(mkdir(sub, 0700), 0);
    assert_int_equal(symlink("sub/made.json", link), 0);
    assert_int_equal(write_whole(link, OUTFILE_REPLACE, "doc"), 0);
    assert_int_equal(lstat(link, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_string_equal(content(target), "doc");
    assert_int_equal(entries(sub), 1);
}

static void test_link_loop_refused(void **state)
{
    struct dir *d = *state;
    struct outfile o;
    struct hb_err err = { 0 };
    char a[128], b[128];

    at(d, "a", a, sizeof(a));
    at(d, "b", b, sizeof(b));
    assert_int_equal(symlink("b", a), 0);
    assert_int_equal(symlink("a", b), 0);
    assert_int_equal(outfile_open(&o, a, OUTFILE_REPLACE, &err), -ELOOP);
    assert_non_null(strstr(err.msg, "cannot write "));
    assert_null(strchr(err.msg, '\n'));
    assert_int_equal(outfile_check(a, OUTFILE_REPLACE, &err), -ELOOP);
    assert_int_equal(entries(d->path), 2);
}

static void test_refused_kinds(void **state)
{
    struct dir *d = *state;
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    struct outfile o;
    struct hb_err err = { 0 };
    char dir[128], sock[96]; /* fits sun_path */
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);

    at(d, "adir", dir, sizeof(dir));
    at(d, "s.sock", sock, sizeof(sock));
    assert_int_equal(mkdir(dir, 0700), 0);
    assert_true(fd >= 0);
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock);
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);

    for (int m = OUTFILE_REPLACE; m <= OUTFILE_APPEND; m++) {
        assert_int_equal(outfile_open(&o, dir, (enum outfile_mode)m, &err), -EPERM);
        assert_non_null(strstr(err.msg, "is a directory"));
        assert_int_equal(outfile_check(dir, (enum outfile_mode)m, &err), -EPERM);
        assert_int_equal(outfile_open(&o, sock, (enum outfile_mode)m, &err), -EPERM);
        assert_non_null(strstr(err.msg, "is a socket"));
    }
    close(fd);
    assert_int_equal(entries(dir), 0);
    assert_int_equal(entries(d->path), 2);
}

static void test_check_leaves_nothing(void **state)
{
    struct dir *d = *state;
    struct hb_err err = { 0 };
    char p[128], missing[128];

    at(d, "later.json", p, sizeof(p));
    at(d, "nodir/x.json", missing, sizeof(missing));
    assert_int_equal(outfile_check(p, OUTFILE_REPLACE, &err), 0);
    assert_int_equal(entries(d->path), 0);
    assert_int_equal(outfile_check(missing, OUTFILE_REPLACE, &err), -ENOENT);
    assert_non_null(strstr(err.msg, "No such file or directory"));
}

static void test_fifo_in_place(void **state)
{
    struct dir *d = *state;
    struct outfile o;
    struct hb_err err = { 0 };
    struct stat st;
    char p[128], got[16] = "";
    int reader;

    at(d, "fifo", p, sizeof(p));
    assert_int_equal(mkfifo(p, 0600), 0);
    assert_int_equal(outfile_open(&o, p, OUTFILE_REPLACE, &err), -ENXIO);
    assert_non_null(strstr(err.msg, "no process has the FIFO open for reading"));

    reader = open(p, O_RDONLY | O_NONBLOCK);
    assert_true(reader >= 0);
    assert_int_equal(write_whole(p, OUTFILE_REPLACE, "doc"), 0);
    assert_int_equal(read(reader, got, sizeof(got) - 1), 3);
    assert_string_equal(got, "doc");
    close(reader);
    assert_int_equal(lstat(p, &st), 0);
    assert_true(S_ISFIFO(st.st_mode));
    assert_int_equal(entries(d->path), 1);
}

static void test_dev_null_in_place(void **state)
{
    struct stat before, after;

    (void)state;
    assert_int_equal(stat("/dev/null", &before), 0);
    assert_int_equal(write_whole("/dev/null", OUTFILE_REPLACE, "doc"), 0);
    assert_int_equal(write_whole("/dev/null", OUTFILE_APPEND, "line\n"), 0);
    assert_int_equal(lstat("/dev/null", &after), 0);
    assert_true(S_ISCHR(after.st_mode));
    assert_int_equal(after.st_ino, before.st_ino);
    assert_int_equal(after.st_rdev, before.st_rdev);
}

static void test_append(void **state)
{
    struct dir *d = *state;
    char p[128], link[128];
    struct stat st;

    at(d, "lines.jsonl", p, sizeof(p));
    at(d, "link", link, sizeof(link));
    assert_int_equal(symlink("lines.jsonl", link), 0);
    assert_int_equal(write_whole(link, OUTFILE_APPEND, "1\n"), 0); /* created through the link */
    assert_int_equal(write_whole(p, OUTFILE_APPEND, "2\n"), 0);
    assert_string_equal(content(p), "1\n2\n");
    assert_int_equal(lstat(link, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_int_equal(entries(d->path), 2);
}

/* A write past RLIMIT_FSIZE stops part-way (then EFBIG): the part is cut back off the file. */
static void test_append_whole_or_nothing(void **state)
{
    struct dir *d = *state;
    struct sigaction ign = { .sa_handler = SIG_IGN }, prev;
    struct rlimit old, low;
    struct outfile o;
    struct hb_err err = { 0 };
    char p[128], line[300];
    int rc;

    at(d, "cut.jsonl", p, sizeof(p));
    put(p, "{\"a\":1}\n");
    memset(line, 'x', sizeof(line));
    line[sizeof(line) - 1] = '\n';
    assert_int_equal(outfile_open(&o, p, OUTFILE_APPEND, &err), 0);
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
    low = old;
    low.rlim_cur = 100; /* room for 92 bytes of the line after the 8 there */
    assert_int_equal(sigaction(SIGXFSZ, &ign, &prev), 0);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &low), 0);
    rc = outfile_append(&o, line, sizeof(line), &err);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
    assert_int_equal(sigaction(SIGXFSZ, &prev, NULL), 0);
    assert_int_equal(rc, -EFBIG);
    if (strstr(err.msg, p) == NULL || strstr(err.msg, strerror(EFBIG)) == NULL ||
        strchr(err.msg, '\n') != NULL)
        fail_msg("want one line naming %s and why, got '%s'", p, err.msg);
    assert_string_equal(content(p), "{\"a\":1}\n"); /* the part line cut back off */

    assert_int_equal(outfile_append(&o, "{\"b\":2}\n", 8, &err), 0); /* the next one lands */
    assert_int_equal(outfile_commit(&o, &err), 0);
    assert_string_equal(content(p), "{\"a\":1}\n{\"b\":2}\n");
}

/* A file whose last line has no end is not appended to: the line would join it. */
static void test_append_refuses_cut_line(void **state)
{
    struct dir *d = *state;
    struct outfile o;
    struct hb_err err = { 0 };
    char p[128];

    at(d, "torn.jsonl", p, sizeof(p));
    put(p, "{\"a\":1}\n{\"b\"");
    assert_int_equal(outfile_check(p, OUTFILE_APPEND, &err), -EBADMSG);
    assert_int_equal(outfile_open(&o, p, OUTFILE_APPEND, &err), -EBADMSG);
    if (strstr(err.msg, p) == NULL || strstr(err.msg, "bytes 8 to 12") == NULL ||
        strstr(err.msg, "to 8 bytes") == NULL || strchr(err.msg, '\n') != NULL)
        fail_msg("want one line naming %s and bytes 8 to 12, got '%s'", p, err.msg);
    assert_string_equal(content(p), "{\"a\":1}\n{\"b\"");         /* nothing removed */
    assert_int_equal(outfile_check(p, OUTFILE_REPLACE, &err), 0); /* a whole document may */

    put(p, "no line end at all");
    assert_int_equal(outfile_open(&o, p, OUTFILE_APPEND, &err), -EBADMSG);
    assert_non_null(strstr(err.msg, "bytes 0 to 18"));
    assert_int_equal(truncate(p, 0), 0);
    assert_int_equal(write_whole(p, OUTFILE_APPEND, "1\n"), 0);
    assert_string_equal(content(p), "1\n");
}

/* umask 0: a new file is 0644 (appended to or replaced), not writable by others. */
static void test_new_file_mode(void **state)
{
    struct dir *d = *state;
    mode_t mask = umask(0);
    char p[128], q[128];
    struct stat st;

    at(d, "new.jsonl", p, sizeof(p));
    at(d, "new.json", q, sizeof(q));
    assert_int_equal(write_whole(p, OUTFILE_APPEND, "1\n"), 0);
    assert_int_equal(write_whole(q, OUTFILE_REPLACE, "{}"), 0);
    umask(mask);
    assert_int_equal(stat(p, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0644);
    assert_int_equal(stat(q, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0644);
}

/* The uid nobody has on Debian: another user's. */
#define OTHER_UID 65534

/* Another user's 0666 file replaced (a directory of ours): ours now, and not 0666. */
static void test_foreign_mode_not_kept(void **state)
{
    struct dir *d = *state;
    mode_t mask;
    char p[128];
    struct stat st;
    int rc;

    if (geteuid() != 0) skip(); /* only root gives a file to another user */
    at(d, "theirs.json", p, sizeof(p));
    put(p, "old");
    assert_int_equal(chown(p, OTHER_UID, OTHER_UID), 0);
    assert_int_equal(chmod(p, 0666), 0);
    mask = umask(0);
    rc = write_whole(p, OUTFILE_REPLACE, "new");
    umask(mask);
    assert_int_equal(rc, 0);
    assert_string_equal(content(p), "new");
    assert_int_equal(stat(p, &st), 0);
    assert_int_equal(st.st_uid, geteuid());
    assert_int_equal(st.st_mode & 07777, 0644);
}

/* In a sticky directory (as /tmp) another user's file is refused, both ways, and left alone. */
static void test_foreign_file_in_sticky_dir(void **state)
{
    struct dir *d = *state;
    struct outfile o;
    struct hb_err err = { 0 };
    char sub[128], p[160];
    struct stat st;

    if (geteuid() != 0) skip();
    at(d, "sticky", sub, sizeof(sub));
    assert_int_equal(mkdir(sub, 0700), 0);
    assert_int_equal(chmod(sub, 01777), 0);
    snprintf(p, sizeof(p), "%s/theirs.json", sub);
    put(p, "old");
    assert_int_equal(chown(p, OTHER_UID, OTHER_UID), 0);
    assert_int_equal(chmod(p, 0666), 0);
    for (int m = OUTFILE_REPLACE; m <= OUTFILE_APPEND; m++) {
        assert_int_equal(outfile_open(&o, p, (enum outfile_mode)m, &err), -EPERM);
        if (strstr(err.msg, p) == NULL ||
            strstr(err.msg, "another user's file (uid 65534)") == NULL)
            fail_msg("want a line naming %s and its owner, got '%s'", p, err.msg);
        assert_int_equal(outfile_check(p, (enum outfile_mode)m, &err), -EPERM);
    }
    assert_string_equal(content(p), "old");
    assert_int_equal(stat(p, &st), 0);
    assert_int_equal(st.st_uid, OTHER_UID);
    assert_int_equal(entries(sub), 1);
    at(d, "sticky/mine.json", p, sizeof(p)); /* a new name there is fine */
    assert_int_equal(write_whole(p, OUTFILE_REPLACE, "doc"), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_new_file_and_abort, setup_dir, teardown_dir),
        cmocka_unit_test_setup_teardown(test_existing_file_replaced_mode_kept, setup_dir,
                                        teardown_dir),
        cmocka_unit_test_setup_teardown(test_stream, setup_dir, teardown_dir),
        cmocka_unit_test_setup_teardown(test_link_chain, setup_dir, teardown_dir),
        cmocka_unit_test_setup_teardown(test_dangling_link_target_created, setup_dir, teardown_dir),
        cmocka_unit_test_setup_teardown(test_link_loop_refused, setup_dir, teardown_dir),
        cmocka_unit_test_setup_teardown(test_refused_kinds, setup_dir, teardown_dir),
        cmocka_unit_test_setup_teardown(test_check_leaves_nothing, setup_dir, teardown_dir),
        cmocka_unit_test_setup_teardown(test_fifo_in_place, setup_dir, teardown_dir),
        cmocka_unit_test(test_dev_null_in_place),
        cmocka_unit_test_setup_teardown(test_append, setup_dir, teardown_dir),
        cmocka_unit_test_setup_teardown(test_append_whole_or_nothing, setup_dir, teardown_dir),
        cmocka_unit_test_setup_teardown(test_append_refuses_cut_line, setup_dir, teardown_dir),
        cmocka_unit_test_setup_teardown(test_new_file_mode, setup_dir, teardown_dir),
        cmocka_unit_test_setup_teardown(test_foreign_mode_not_kept, setup_dir, teardown_dir),
        cmocka_unit_test_setup_teardown(test_foreign_file_in_sticky_dir, setup_dir, teardown_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
