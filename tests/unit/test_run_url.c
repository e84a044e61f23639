/*
 * test_run_url: run takes the endpoints users type as URLs. An http:// or
 * http+unix:// URL is the native endpoint (its text), its /PATH the requests'
 * path as --path would set it, and it names its protocol, so PROTO may be
 * left out; a URL of another protocol, two paths, or a path and another
 * --path are refused with one line.
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
#include <string.h>

#include "cmd/cmd.h"
#include "proto/http.h"
#include "registry.h"
#include "run.h"

#define MAX_WORDS 8

static struct run_opts o;
static struct hb_err err;

/* run followed by words (NULL-terminated): what cli_parse_run returns. */
static int parse(const char *const *words)
{
    static char copy[MAX_WORDS + 1][96];
    char *argv[MAX_WORDS + 2];
    int n = 0;

    memset(&err, 0, sizeof(err));
    snprintf(copy[0], sizeof(copy[0]), "run");
    argv[n++] = copy[0];
    for (; *words != NULL; words++) {
        assert_true(n <= MAX_WORDS);
        snprintf(copy[n], sizeof(copy[n]), "%s", *words);
        argv[n] = copy[n];
        n++;
    }
    argv[n] = NULL;
    return cli_parse_run(n, argv, &o, stdout, &err);
}

/* The path the parsed run's http requests ask for (NULL: the default). */
static const char *http_path(void)
{
    return ((const struct http_opts *)(const void *)&o.codec)->path;
}

static void test_taken(void **state)
{
    (void)state;
    assert_int_equal(parse((const char *const[]){ "http", "http://127.0.0.1:8080/", NULL }), 0);
    assert_ptr_equal(o.proto, proto_find("http"));
    assert_string_equal(o.eps[0].text, "tcp://127.0.0.1:8080");
    assert_string_equal(http_path(), "/");

    /* PROTO left out: the URL names it; the path goes into the requests */
    assert_int_equal(parse((const char *const[]){ "http://127.0.0.1:8080/index.php?x=1",
                                                  "http+unix://%2Frun%2Fa.sock/index.php?x=1", "-d",
                                                  "1", NULL }),
                     0);
    assert_ptr_equal(o.proto, proto_find("http"));
    assert_int_equal(o.neps, 2);
    assert_string_equal(o.eps[1].text, "unix:/run/a.sock");
    assert_string_equal(http_path(), "/index.php?x=1");

    /* a label before it, a URL beside a native endpoint, the same --path */
    assert_int_equal(parse((const char *const[]){ "front=http://127.0.0.1:8080/x",
                                                  "tcp://127.0.0.1:9", "--path", "/x", NULL }),
                     0);
    assert_string_equal(o.eps[0].label, "front");
    assert_string_equal(http_path(), "/x");

    /* no path: the protocol's default */
    assert_int_equal(parse((const char *const[]){ "http://localhost:8080", NULL }), 0);
    assert_null(http_path());
    assert_string_equal(o.eps[0].text, "tcp://127.0.0.1:8080");
}

static void test_refused(void **state)
{
    (void)state;
    assert_int_equal(parse((const char *const[]){ "fcgi", "http://127.0.0.1:8080/", NULL }),
                     -EINVAL);
    assert_string_equal(err.msg, "run fcgi: http://127.0.0.1:8080/ is a URL of another protocol; "
                                 "give the address as tcp://HOST:PORT or unix:PATH");
    assert_int_equal(
        parse((const char *const[]){ "http://127.0.0.1:1/a", "http://127.0.0.1:2/b", NULL }),
        -EINVAL);
    assert_non_null(strstr(err.msg, "one path is for every endpoint"));
    assert_int_equal(
        parse((const char *const[]){ "http", "http://127.0.0.1:1/a", "--path", "/b", NULL }),
        -EINVAL);
    assert_non_null(strstr(err.msg, "one path is for every endpoint"));
    /* --path's own check holds for a URL's path */
    assert_int_equal(parse((const char *const[]){ "http://127.0.0.1:1/a b", NULL }), -EINVAL);
    assert_int_equal(parse((const char *const[]){ "gopher://127.0.0.1:1/", NULL }), -EINVAL);
    assert_non_null(strstr(err.msg, "unknown protocol 'gopher://127.0.0.1:1/'"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_taken),
        cmocka_unit_test(test_refused),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
