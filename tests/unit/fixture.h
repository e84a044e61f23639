/*
 * fixture: a file of tests/fixtures read whole, for unit tests only. Run them
 * from the top of the tree; HOPBENCH_FIXTURES names another fixtures root.
 * These need cmocka.h first (a missing file fails the test).
 */
#ifndef HOPBENCH_TESTS_FIXTURE_H
#define HOPBENCH_TESTS_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>

/* The fixture tests/fixtures/dir/name, whole and NUL-ended; the caller frees it. */
static inline char *fixture_read(const char *dir, const char *name)
{
    const char *root = getenv("HOPBENCH_FIXTURES");
    char path[512], *text;
    FILE *f;
    long len;

    snprintf(path, sizeof(path), "%s/%s/%s", root != NULL ? root : "tests/fixtures", dir, name);
    f = fopen(path, "r");
    if (f == NULL) fail_msg("cannot open %s (run from the top of the tree)", path);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    len = ftell(f);
    rewind(f);
    text = calloc(1, (size_t)len + 1);
    assert_non_null(text);
    assert_int_equal(fread(text, 1, (size_t)len, f), (size_t)len);
    fclose(f);
    return text;
}

#endif
