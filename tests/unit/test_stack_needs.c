/*
 * test_stack_needs: every server binary a stack starts (stack_def.needs: its
 * path, or a pattern such as /usr/sbin/php-fpm[0-9]* whose newest match runs,
 * and the Debian package its "is not installed" line names) is in
 * scripts/programs.txt (a pattern: some line's path matches it), the list `make deps-check` proves
 * a fresh Debian 12 gets from scripts/deps.sh test, with the same package and the test purpose: a
 * stack that starts a new binary, or names another package, fails here until the list says so. Run
 * from the top of the tree (tests/run.sh is); PROGRAMS names another list.
 */
/* cmocka.h needs these four first, in this order */
/* clang-format off */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
/* clang-format on */

#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stack/stack.h"

/* One line of the list: PATH PACKAGE FOR WHO... */
struct prog {
    char path[256];
    char pkg[64];
    char purposes[64];
};

#define MAX_PROGS 256

static struct prog g_progs[MAX_PROGS];
static unsigned g_nprogs;

static int progs_read(void **state)
{
    const char *name = getenv("PROGRAMS");
    char line[1024];
    FILE *f;

    (void)state;
    if (name == NULL) name = "scripts/programs.txt";
    f = fopen(name, "r");
    if (f == NULL) {
        fprintf(stderr, "cannot open %s (run from the top of the tree)\n", name);
        return -1;
    }
    while (fgets(line, sizeof(line), f) != NULL && g_nprogs < MAX_PROGS) {
        struct prog *p = &g_progs[g_nprogs];
        if (line[0] != '/') continue;
        if (sscanf(line, "%255s %63s %63s", p->path, p->pkg, p->purposes) == 3) g_nprogs++;
    }
    fclose(f);
    return g_nprogs > 0 ? 0 : -1;
}

/* The line whose path is path, or that the pattern path matches (the first). */
static const struct prog *prog_find(const char *path)
{
    for (unsigned i = 0; i < g_nprogs; i++)
        if (fnmatch(path, g_progs[i].path, FNM_PATHNAME) == 0) return &g_progs[i];
    return NULL;
}

/* "test" is one of the comma-separated purposes. */
static bool for_test(const char *purposes)
{
    char buf[64];

    snprintf(buf, sizeof(buf), "%s", purposes);
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t != NULL;
         t = strtok_r(NULL, ",", &save))
        if (strcmp(t, "test") == 0) return true;
    return false;
}

static void test_needs_listed(void **state)
{
    unsigned checked = 0, bad = 0;

    (void)state;
    for (unsigned s = 0; stack_defs[s] != NULL; s++) {
        const struct stack_def *d = stack_defs[s];
        for (unsigned i = 0; d->needs[i] != NULL; i += 2) {
            const struct prog *p = prog_find(d->needs[i]);
            checked++;
            if (p == NULL) {
                fprintf(stderr, "stack %s starts %s, which scripts/programs.txt does not list\n",
                        d->name, d->needs[i]);
                bad++;
            } else if (strcmp(p->pkg, d->needs[i + 1]) != 0) {
                fprintf(stderr, "stack %s names package %s for %s, scripts/programs.txt %s\n",
                        d->name, d->needs[i + 1], d->needs[i], p->pkg);
                bad++;
            } else if (!for_test(p->purposes)) {
                fprintf(stderr, "stack %s: scripts/programs.txt has %s for %s, not test\n", d->name,
                        d->needs[i], p->purposes);
                bad++;
            }
        }
    }
    assert_true(checked >= 6); /* redis, nginx, apache2, php-fpm, postgres, mariadbd at least */
    assert_int_equal(bad, 0);
}

/* The check can fail: a path the list lacks, or another package, is found. */
static void test_check_can_tell(void **state)
{
    const struct prog *p = prog_find("/usr/bin/redis-server");

    (void)state;
    assert_non_null(p);
    assert_string_equal(p->pkg, "redis-server");
    assert_true(for_test(p->purposes));
    assert_null(prog_find("/usr/sbin/redis-server"));
    /* a pattern finds the line of the version Debian 12 has; a slash is not a wildcard's */
    p = prog_find("/usr/lib/postgresql/*/bin/postgres");
    assert_non_null(p);
    assert_string_equal(p->pkg, "postgresql");
    assert_null(prog_find("/usr/lib/*/bin/postgres"));
    assert_false(for_test("image,bench"));
    assert_true(for_test("image,test"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_needs_listed),
        cmocka_unit_test(test_check_can_tell),
    };
    return cmocka_run_group_tests(tests, progs_read, NULL);
}
