/*
 * test_agent: what the agent and its client read before they talk: the
 * schedule's text (agent_schedule_parse), line by line, accepted and refused;
 * the shared token from a file (its first line, its permissions) or from
 * HOPBENCH_AGENT_TOKEN, and its length bounds.
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
#include <sys/stat.h>
#include <unistd.h>

#include "agent/agent.h"
#include "agent/client.h"

static void test_schedule(void **state)
{
    static struct agent_schedule s;
    struct hb_err err = { 0 };

    (void)state;
    assert_int_equal(agent_schedule_parse("# configurations\n"
                                          "tcp-1  30   systemctl reload nginx && sleep 1\n"
                                          "\n"
                                          "  unix.2 2.5s -\n"
                                          "min 2m\n"
                                          "last next\n",
                                          &s, &err),
                     0);
    assert_int_equal(s.n, 4);
    assert_string_equal(s.step[0].name, "tcp-1");
    assert_true(s.step[0].duration_ns == 30 * NS_PER_S);
    assert_string_equal(s.step[0].cmd, "systemctl reload nginx && sleep 1");
    assert_string_equal(s.step[1].name, "unix.2");
    assert_true(s.step[1].duration_ns == 2500 * NS_PER_MS);
    assert_string_equal(s.step[1].cmd, "");
    assert_true(s.step[2].duration_ns == 120 * NS_PER_S); /* a time with its unit, as -d takes */
    assert_string_equal(s.step[3].name, "last");
    assert_true(s.step[3].duration_ns == 0);
    assert_string_equal(s.step[3].cmd, "");
}

static void test_schedule_refused(void **state)
{
    static const char *const bad[] = {
        "",
        "# only a comment\n\n",
        "a/b 10 true\n",
        "a\n",
        "a 0 true\n",
        "a -1 true\n",
        "a 10x true\n",
        "a 2d true\n",
        "a soon true\n",
        "a 10 true\nb 5\na 3\n",
    };
    static struct agent_schedule s;
    static char big[AGENT_SCHED_MAX * 8 + 64];
    struct hb_err err = { 0 };
    size_t n = 0;

    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
        err.msg[0] = '\0';
        if (agent_schedule_parse(bad[i], &s, &err) != -EINVAL) fail_msg("accepted: %s", bad[i]);
        assert_true(err.msg[0] != '\0');
        assert_null(strchr(err.msg, '\n'));
    }
    /* AGENT_SCHED_MAX lines are taken, one more is not */
    for (int i = 0; i < AGENT_SCHED_MAX; i++)
        n += (size_t)snprintf(big + n, sizeof(big) - n, "s%d 1\n", i);
    assert_int_equal(agent_schedule_parse(big, &s, &err), 0);
    assert_int_equal(s.n, AGENT_SCHED_MAX);
    snprintf(big + n, sizeof(big) - n, "over 1\n");
    assert_int_equal(agent_schedule_parse(big, &s, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "more than"));
}

/* A file holding text, with mode; its path into path. */
static void token_file(char *path, size_t cap, const char *text, mode_t mode)
{
    FILE *f;
    int fd;

    snprintf(path, cap, "/tmp/test_agent_XXXXXX");
    fd = mkstemp(path);
    assert_true(fd >= 0);
    f = fdopen(fd, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    assert_int_equal(chmod(path, mode), 0);
}

static void test_token(void **state)
{
    static struct agent_token t;
    struct hb_err err = { 0 };
    char path[64];

    (void)state;
    token_file(path, sizeof(path), "0123456789abcdef-token\r\nsecond line\n", 0600);
    assert_int_equal(agent_token_read(&t, path, "--token-file", &err), 0);
    assert_int_equal(t.len, strlen("0123456789abcdef-token"));
    assert_memory_equal(t.b, "0123456789abcdef-token", t.len);
    /* others may read it: refused */
    assert_int_equal(chmod(path, 0644), 0);
    assert_int_equal(agent_token_read(&t, path, "--token-file", &err), -EPERM);
    assert_non_null(strstr(err.msg, "--token-file"));
    unlink(path);
    /* too short */
    token_file(path, sizeof(path), "short\n", 0400);
    assert_int_equal(agent_token_read(&t, path, "--token-file", &err), -EINVAL);
    unlink(path);
    assert_int_equal(agent_token_read(&t, "/nonexistent/token", "--token-file", &err), -ENOENT);

    /* from the environment */
    unsetenv(AGENT_TOKEN_ENV);
    assert_int_equal(agent_token_read(&t, NULL, "agent", &err), -EINVAL);
    assert_non_null(strstr(err.msg, AGENT_TOKEN_ENV));
    setenv(AGENT_TOKEN_ENV, "sixteen-bytes-ok", 1);
    assert_int_equal(agent_token_read(&t, NULL, "agent", &err), 0);
    assert_int_equal(t.len, 16);
    setenv(AGENT_TOKEN_ENV, "fifteen-bytes!!", 1);
    assert_int_equal(agent_token_read(&t, NULL, "agent", &err), -EINVAL);
    unsetenv(AGENT_TOKEN_ENV);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_schedule),
        cmocka_unit_test(test_schedule_refused),
        cmocka_unit_test(test_token),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
