/*
 * test_probe: the machine facts of the evidence. The sysctls are read from
 * a fixture tree (tests/fixtures/sysctl, or $HOPBENCH_FIXTURES/sysctl) that
 * has three of the eight: the others must be null in "machine.sysctl", as
 * before, with the reason under the same name in "machine.sysctl_unavailable",
 * where a readable one is null. The live machine is read too: every sysctl is either
 * a value or has a reason. The placement names the pod, namespace, node and
 * container the environment gives (a pod's downward API), and nothing without.
 */
/* cmocka needs these first, in this order. */
/* clang-format off */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
/* clang-format on */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/place.h"
#include "host/probe.h"
#include "report/report.h"

static const char *fixture(const char *rel)
{
    static char buf[4096];
    const char *root = getenv("HOPBENCH_FIXTURES");

    snprintf(buf, sizeof(buf), "%s/%s", root != NULL ? root : "tests/fixtures", rel);
    return buf;
}

/* The evidence document of no runs on machine m. */
static json_t *doc_for(const struct machine *m)
{
    struct hb_err err = { 0 };
    struct place pl;
    static char name[] = "hopbench";
    char *argv[] = { name, NULL };
    struct report_meta meta = { .command = "run", .argc = 1, .argv = argv, .machine = m };

    assert_int_equal(place_init(&pl, PLACE_NONE, &err), 0);
    meta.place = &pl;
    return report_json(&meta, NULL, 0);
}

static void test_sysctl_fixture(void **state)
{
    static struct machine m;
    json_t *doc, *sysctl, *why;
    const char *reason;

    (void)state;
    memset(&m, 0, sizeof(m));
    probe_sysctls(&m, fixture("sysctl"));
    assert_string_equal(m.sysctl[0].name, "net.ipv4.tcp_tw_reuse");
    assert_string_equal(m.sysctl[0].value, "2");
    assert_string_equal(m.sysctl[0].why, "");
    assert_string_equal(m.sysctl[1].value, "32768 60999"); /* the tab made a space */
    assert_string_equal(m.sysctl[2].name, "net.core.somaxconn");
    assert_string_equal(m.sysctl[2].value, "4096");
    assert_string_equal(m.sysctl[6].name, "net.ipv4.tcp_tw_reuse_delay");
    assert_string_equal(m.sysctl[6].value, "");
    assert_non_null(strstr(m.sysctl[6].why, "net/ipv4/tcp_tw_reuse_delay: No such file"));

    doc = doc_for(&m);
    assert_non_null(doc);
    sysctl = json_object_get(json_object_get(doc, "machine"), "sysctl");
    why = json_object_get(json_object_get(doc, "machine"), "sysctl_unavailable");
    assert_true(json_is_object(sysctl) && json_is_object(why));
    assert_int_equal(json_object_size(sysctl), PROBE_SYSCTLS);
    assert_string_equal(json_string_value(json_object_get(sysctl, "net.ipv4.tcp_tw_reuse")), "2");
    assert_true(json_is_null(json_object_get(sysctl, "net.ipv4.tcp_fin_timeout")));
    assert_int_equal(json_object_size(why), PROBE_SYSCTLS); /* a fixed shape */
    assert_true(json_is_null(json_object_get(why, "net.ipv4.tcp_tw_reuse")));
    reason = json_string_value(json_object_get(why, "net.ipv4.tcp_fin_timeout"));
    assert_non_null(reason);
    assert_non_null(strstr(reason, "No such file or directory"));
    json_decref(doc);
}

static void test_sysctl_live(void **state)
{
    static struct machine m;

    (void)state;
    probe_machine(&m);
    for (int i = 0; i < PROBE_SYSCTLS; i++) {
        const struct probe_sysctl *s = &m.sysctl[i];
        print_message("  %-30s %s%s\n", s->name, s->value, s->why);
        assert_true((s->value[0] != '\0') != (s->why[0] != '\0')); /* a value or a reason */
    }
}

static const char *const where_env[] = { "HOPBENCH_POD_NAME", "HOPBENCH_POD_NAMESPACE",
                                         "HOPBENCH_NODE_NAME", "HOPBENCH_CONTAINER_NAME" };
static const char *const where_keys[] = { "pod", "namespace", "node", "container" };

/* placement's KEY: its string, "null" for JSON null, NULL when absent. */
static const char *where_key(json_t *doc, const char *key)
{
    json_t *v = json_object_get(json_object_get(doc, "placement"), key);

    if (v == NULL) return NULL;
    return json_is_null(v) ? "null" : json_string_value(v);
}

static void test_placement_where(void **state)
{
    /* the four variables (NULL: unset), then the kind and the four keys written */
    static const struct {
        const char *env[4], *kind, *want[4];
    } cases[] = {
        { { NULL, NULL, NULL, NULL }, NULL, { NULL, NULL, NULL, NULL } }, /* a plain process */
        { { NULL, NULL, NULL, "lab" }, "container", { "null", "null", "null", "lab" } },
        /* empty: null; not UTF-8: null, not a failed document */
        { { "hopbench-load-2", "", "node\xff", NULL },
          "pod",
          { "hopbench-load-2", "null", "null", "null" } },
        { { "web", "bench", "worker-1", "load" }, "pod", { "web", "bench", "worker-1", "load" } },
    };
    static struct machine m;

    (void)state;
    memset(&m, 0, sizeof(m));
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        json_t *doc;

        for (size_t i = 0; i < 4; i++)
            if (cases[c].env[i] != NULL)
                setenv(where_env[i], cases[c].env[i], 1);
            else
                unsetenv(where_env[i]);
        doc = doc_for(&m);
        assert_non_null(doc);
        assert_string_equal(where_key(doc, "pin"), "none"); /* the CPU placement stays */
        if (cases[c].kind == NULL)
            assert_null(where_key(doc, "kind"));
        else
            assert_string_equal(where_key(doc, "kind"), cases[c].kind);
        for (size_t i = 0; i < 4; i++)
            if (cases[c].want[i] == NULL)
                assert_null(where_key(doc, where_keys[i]));
            else
                assert_string_equal(where_key(doc, where_keys[i]), cases[c].want[i]);
        json_decref(doc);
    }
    for (size_t i = 0; i < 4; i++)
        unsetenv(where_env[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sysctl_fixture),
        cmocka_unit_test(test_sysctl_live),
        cmocka_unit_test(test_placement_where),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
