/*
 * test_load: the load engine's pure helpers, without threads or sockets: how
 * an errno becomes an error kind, the names of kinds, phases and close modes
 * (the keys of the JSON), and how a merged result is totalled and judged.
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
#include <string.h>

#include "load.h"

/* Every name is set, not "?", and differs from every other of its set. */
static void check_names(const char *(*name)(int), int n)
{
    for (int i = 0; i < n; i++) {
        assert_non_null(name(i));
        assert_string_not_equal(name(i), "?");
        assert_true(strlen(name(i)) > 0);
        for (int j = 0; j < i; j++)
            assert_string_not_equal(name(i), name(j));
    }
    assert_string_equal(name(n), "?");
    assert_string_equal(name(-1), "?");
}

static const char *err_name(int i)
{
    return op_err_name((enum op_err)i);
}

static const char *phase_name(int i)
{
    return load_phase_name((enum load_phase)i);
}

static void test_names(void **state)
{
    (void)state;
    check_names(err_name, OP_ERR_KINDS);
    check_names(phase_name, PHASES);
    assert_string_equal(load_close_name(CLOSE_CLIENT), "client");
    assert_string_equal(load_close_name(CLOSE_SERVER), "server");
    assert_string_equal(load_close_name(CLOSE_RST), "rst");
    assert_string_equal(load_close_name((enum load_close)99), "?");
}

static void test_errno_kinds(void **state)
{
    static const struct {
        int err;
        enum op_err kind;
    } cases[] = {
        { ECONNREFUSED, OP_ERR_REFUSED },
        { ENOENT, OP_ERR_REFUSED },
        { ECONNRESET, OP_ERR_RESET },
        { EPIPE, OP_ERR_RESET },
        { ECONNABORTED, OP_ERR_RESET },
        { ETIMEDOUT, OP_ERR_TIMEOUT },
        { EADDRNOTAVAIL, OP_ERR_ADDRNOTAVAIL },
        { EAGAIN, OP_ERR_AGAIN },
        { EMFILE, OP_ERR_FDS },
        { ENFILE, OP_ERR_FDS },
        { EINVAL, OP_ERR_OTHER },
        { 0, OP_ERR_OTHER },
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        assert_int_equal(op_err_from_errno(cases[i].err), cases[i].kind);
}

static void test_errors_total_and_valid(void **state)
{
    struct load_result r = { 0 };
    uint64_t want = 0;

    (void)state;
    assert_int_equal(load_errors_total(&r), 0);
    assert_false(load_result_valid(&r)); /* no op completed */
    r.ops = 1;
    assert_true(load_result_valid(&r));

    /* Each kind counts in the total, and any one of them invalidates the run. */
    for (int k = 0; k < OP_ERR_KINDS; k++) {
        struct load_result one = { .ops = 10 };
        one.errors[k] = 1;
        assert_int_equal(load_errors_total(&one), 1);
        assert_false(load_result_valid(&one));

        r.errors[k] = (uint64_t)k + 1;
        want += (uint64_t)k + 1;
    }
    assert_int_equal(load_errors_total(&r), want);
    assert_false(load_result_valid(&r));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_errno_kinds),
        cmocka_unit_test(test_errors_total_and_valid),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
