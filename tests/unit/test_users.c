/*
 * test_users: the passwd and group files read without the name service. A
 * user's uid, primary group and the groups that list it come from the files
 * given; a missing user is -ENOENT; names of a uid and a gid; the permission
 * bits the kernel would pick (owner, then group, then other; root always),
 * including a directory the user cannot search: the stacks' socket check.
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stack/users.h"

static char g_dir[] = "/tmp/test_users.XXXXXX";
static char g_passwd[64], g_group[64];

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");

    assert_non_null(f);
    assert_int_equal(fputs(text, f) >= 0, 1);
    assert_int_equal(fclose(f), 0);
}

static int files_up(void **state)
{
    (void)state;
    if (mkdtemp(g_dir) == NULL) return -1;
    snprintf(g_passwd, sizeof(g_passwd), "%s/passwd", g_dir);
    snprintf(g_group, sizeof(g_group), "%s/group", g_dir);
    put(g_passwd, "root:x:0:0:root:/root:/bin/bash\n"
                  "www-data:x:33:33:www-data:/var/www:/usr/sbin/nologin\n"
                  "alice:x:1000:1000::/home/alice:/bin/sh\n");
    put(g_group, "root:x:0:\nwww-data:x:33:\nalice:x:1000:\n"
                 "sock:x:2000:alice,www-data\nother:x:2001:alice\n");
    return 0;
}

static int files_down(void **state)
{
    (void)state;
    unlink(g_passwd);
    unlink(g_group);
    return rmdir(g_dir);
}

static void test_lookup_user_and_groups(void **state)
{
    struct users_id id;

    (void)state;
    assert_int_equal(users_lookup(g_passwd, g_group, "www-data", &id), 0);
    assert_int_equal(id.uid, 33);
    assert_int_equal(id.gid, 33);
    assert_int_equal(id.ngroups, 1);
    assert_int_equal(id.groups[0], 2000);
    assert_int_equal(users_lookup(g_passwd, g_group, "alice", &id), 0);
    assert_int_equal(id.ngroups, 2);
    assert_int_equal(users_lookup(g_passwd, g_group, "nobody-here", &id), -ENOENT);
    assert_int_equal(users_lookup("/nonexistent/passwd", g_group, "alice", &id), -ENOENT);
}

static void test_names(void **state)
{
    char buf[32];

    (void)state;
    assert_int_equal(users_name_of_uid(g_passwd, 1000, buf, sizeof(buf)), 0);
    assert_string_equal(buf, "alice");
    assert_int_equal(users_name_of_gid(g_group, 2000, buf, sizeof(buf)), 0);
    assert_string_equal(buf, "sock");
    assert_int_equal(users_name_of_uid(g_passwd, 4242, buf, sizeof(buf)), -ENOENT);
    assert_int_equal(users_name_of_gid(g_group, 4242, buf, sizeof(buf)), -ENOENT);
}

/* A path owned by uid:gid with mode. */
static struct stat path_of(uid_t uid, gid_t gid, unsigned mode)
{
    struct stat st;

    memset(&st, 0, sizeof(st));
    st.st_uid = uid;
    st.st_gid = gid;
    st.st_mode = (mode_t)mode;
    return st;
}

static void test_permissions(void **state)
{
    struct users_id web, root;
    struct stat st;

    (void)state;
    assert_int_equal(users_lookup(g_passwd, g_group, "www-data", &web), 0);
    assert_int_equal(users_lookup(g_passwd, g_group, "root", &root), 0);
    /* a private directory of alice's: www-data cannot search it (the stacks' 502) */
    st = path_of(1000, 1000, 0700);
    assert_false(users_may(&web, &st, 1));
    assert_true(users_may(&root, &st, 1));
    /* a socket 0660 of group sock, which lists www-data: it may write */
    st = path_of(1000, 2000, 0660);
    assert_true(users_may(&web, &st, 2));
    /* of group other, which does not list it: the other bits decide */
    st = path_of(1000, 2001, 0660);
    assert_false(users_may(&web, &st, 2));
    st = path_of(1000, 2001, 0662);
    assert_true(users_may(&web, &st, 2));
    /* the owner's bits, not the other bits, for the owner */
    st = path_of(33, 33, 0077);
    assert_false(users_may(&web, &st, 2));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lookup_user_and_groups),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_permissions),
    };
    return cmocka_run_group_tests(tests, files_up, files_down);
}
