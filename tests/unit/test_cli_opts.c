/*
 * test_cli_opts: the options run and lab share (struct shared_opts) are
 * parsed once for both: each sets the same field to the same value under
 * either command, run's load starts from them, and a bad value gets the same
 * one-line message from both.
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
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "lab.h"
#include "run.h"

#define MAX_ARGS 12

/* run and lab parsed from the same options; run gets a protocol and an endpoint after them. */
struct parsed {
    struct run_opts run;
    struct lab_opts lab;
    struct hb_err run_err;
    struct hb_err lab_err;
    int run_rc;
    int lab_rc;
};

static struct parsed parsed, defaults;

/* The words of a command line, writable as argv is. */
static char words[MAX_ARGS + 4][64];

static char *word(size_t i, const char *s)
{
    assert_true(i < ARRAY_LEN(words) && strlen(s) < sizeof(words[i]));
    memcpy(words[i], s, strlen(s) + 1);
    return words[i];
}

static void parse_both(struct parsed *p, const char *const *opts)
{
    char *run_argv[MAX_ARGS + 4], *lab_argv[MAX_ARGS + 2];
    int n = 0;

    memset(p, 0, sizeof(*p));
    while (opts[n] != NULL)
        n++;
    assert_true(n <= MAX_ARGS);
    /* getopt_long permutes argv: each command gets a fresh copy */
    run_argv[0] = word(0, "run");
    for (int i = 0; i < n; i++)
        run_argv[1 + i] = word(1 + (size_t)i, opts[i]);
    run_argv[1 + n] = word(1 + (size_t)n, "echo");
    run_argv[2 + n] = word(2 + (size_t)n, "tcp://127.0.0.1:9");
    p->run_rc = cli_parse_run(n + 3, run_argv, &p->run, stdout, &p->run_err);
    lab_argv[0] = word(0, "lab");
    for (int i = 0; i < n; i++)
        lab_argv[1 + i] = word(1 + (size_t)i, opts[i]);
    p->lab_rc = cli_parse_lab(n + 1, lab_argv, &p->lab, stdout, &p->lab_err);
}

/* One shared option and the field it sets (a flag of what was given, if any). */
struct field_case {
    const char *opts[5]; /* NULL-terminated */
    size_t offset, size;
    size_t given; /* offset of its *_given flag; 0 when it has none */
};

#define FIELD(f) offsetof(struct shared_opts, f), sizeof(((struct shared_opts *)0)->f)
#define GIVEN(f) offsetof(struct shared_opts, f)

static const struct field_case field_cases[] = {
    { { "-c", "7" }, FIELD(conns), GIVEN(conns_given) },
    { { "--connections", "9" }, FIELD(conns), GIVEN(conns_given) },
    { { "-t", "3", "-c", "6" }, FIELD(threads), 0 },
    { { "-d", "1.5" }, FIELD(duration_ns), GIVEN(duration_given) },
    { { "--warmup", "0" }, FIELD(warmup_ns), GIVEN(warmup_given) },
    { { "--timeout", "0.25" }, FIELD(timeout_ns), 0 },
    { { "--pin", "same" }, FIELD(pin), GIVEN(pin_given) },
    { { "--close", "rst" }, FIELD(close), GIVEN(close_given) },
    { { "--wait", "block" }, FIELD(block_wait), 0 },
    { { "--sample-ms", "100" }, FIELD(sample_ns), 0 },
    { { "--noisy-threshold", "0.25" }, FIELD(noisy_cpus), 0 },
    { { "--json", "x.json" }, FIELD(json_path), 0 },
    { { "--jsonl", "x.jsonl" }, FIELD(jsonl_path), 0 },
    { { "--reps", "3" }, FIELD(reps), GIVEN(reps_given) },
    { { "--cooldown", "0.5" }, FIELD(cooldown_ns), 0 },
    { { "--seed", "42" }, FIELD(seed), 0 },
};

/* The lab alone parsed from opts (NULL-terminated); returns cli_parse_lab's result. */
static int parse_lab(const char *const *opts, struct lab_opts *o)
{
    char *argv[MAX_ARGS + 2];
    struct hb_err err = { 0 };
    int n = 0;

    argv[0] = word(0, "lab");
    while (opts[n] != NULL) {
        assert_true(n < MAX_ARGS);
        argv[1 + n] = word(1 + (size_t)n, opts[n]);
        n++;
    }
    return cli_parse_lab(n + 1, argv, o, stdout, &err);
}

/* What one lab command line makes of the runs: reps per cell, measured and warm-up ms. */
struct lab_case {
    const char *opts[5];
    unsigned reps;
    uint64_t duration_ms, warmup_ms;
};

/*
 * The default lab gives verdicts (5 runs of 0.6 s after 0.15 s per cell); -d, --reps,
 * --quick and overload keep their own meaning, and --warmup alone only sets the warm-up.
 */
static void test_lab_defaults(void **state)
{
    static const struct lab_case cases[] = {
        { { NULL }, 5, 600, 150 },
        { { "--warmup", "0.5" }, 5, 600, 500 },
        { { "--sizes", "64" }, 5, 600, 150 },
        { { "-d", "2" }, 1, 2000, 1000 },
        { { "-d", "2", "--warmup", "0" }, 1, 2000, 0 },
        { { "--reps", "3" }, 3, 3000, 1000 },
        { { "--reps", "4", "-d", "0.5" }, 4, 500, 1000 },
        { { "--quick" }, 1, 750, 250 },
        { { "--quick", "--reps", "3" }, 3, 750, 250 },
        { { "overload" }, 1, 3000, 0 },
    };
    static struct lab_opts o;

    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        const struct lab_case *c = &cases[i];
        assert_int_equal(parse_lab(c->opts, &o), 0);
        assert_int_equal(o.shared.reps, c->reps);
        assert_int_equal(o.shared.duration_ns, c->duration_ms * NS_PER_MS);
        assert_int_equal(o.shared.warmup_ns, c->warmup_ms * NS_PER_MS);
    }
}

static const unsigned char *field(const struct shared_opts *o, size_t offset)
{
    return (const unsigned char *)o + offset;
}

/* Each option sets its field to the same value under run and lab, and changes it from run's
 * default. */
static void test_same_field(void **state)
{
    (void)state;
    parse_both(&defaults, (const char *const[]){ NULL });
    assert_int_equal(defaults.run_rc, 0);
    assert_int_equal(defaults.lab_rc, 0);
    for (size_t i = 0; i < ARRAY_LEN(field_cases); i++) {
        const struct field_case *c = &field_cases[i];
        const struct shared_opts *run = &parsed.run.shared, *lab = &parsed.lab.shared;

        parse_both(&parsed, c->opts);
        assert_int_equal(parsed.run_rc, 0);
        assert_int_equal(parsed.lab_rc, 0);
        assert_memory_equal(field(run, c->offset), field(lab, c->offset), c->size);
        assert_memory_not_equal(field(run, c->offset), field(&defaults.run.shared, c->offset),
                                c->size);
        if (c->given != 0) {
            assert_true(*(const bool *)field(run, c->given));
            assert_true(*(const bool *)field(lab, c->given));
            assert_false(*(const bool *)field(&defaults.run.shared, c->given));
            assert_false(*(const bool *)field(&defaults.lab.shared, c->given));
        }
    }
}

/* run's load starts from the shared options: what each run of the plan is made of. */
static void test_run_load(void **state)
{
    const struct load_cfg *l = &parsed.run.load;

    (void)state;
    parse_both(&parsed, (const char *const[]){ "-c", "4", "-t", "2", "-d", "2", "--warmup", "0.5",
                                               "--timeout", "3", NULL });
    assert_int_equal(parsed.run_rc, 0);
    assert_int_equal(l->conns, 4);
    assert_int_equal(l->threads, 2);
    assert_int_equal(l->duration_ns, 2 * NS_PER_S);
    assert_int_equal(l->warmup_ns, NS_PER_S / 2);
    assert_int_equal(l->timeout_ns, 3 * NS_PER_S);

    parse_both(&parsed, (const char *const[]){ "--close", "server", "--mode", "connect", "--seed",
                                               "7", NULL });
    assert_int_equal(parsed.run_rc, 0);
    assert_int_equal(l->close, CLOSE_SERVER);
    assert_false(l->close_auto); /* --close given: the protocol's closer does not decide */
    assert_int_equal(l->seed, 7);

    parse_both(&parsed, (const char *const[]){ "--wait", "block", NULL });
    assert_int_equal(parsed.run_rc, 0);
    assert_true(l->block_wait);
    assert_true(parsed.lab.shared.block_wait);
}

/* A bad value of a shared option: the same error and message from run and lab. */
static void test_same_message(void **state)
{
    static const char *const opts[] = { "-c",
                                        "--threads",
                                        "-d",
                                        "--warmup",
                                        "--timeout",
                                        "--pin",
                                        "--close",
                                        "--wait",
                                        "--sample-ms",
                                        "--reps",
                                        "--cooldown",
                                        "--seed",
                                        "--noisy-threshold" };
    static const char *const bad[] = { "0", "-1", "abc", "99999999999999999999", "" };

    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(opts); i++) {
        for (size_t j = 0; j < ARRAY_LEN(bad); j++) {
            /* "0" is a valid --warmup, --cooldown, --sample-ms and --seed */
            parse_both(&parsed, (const char *const[]){ opts[i], bad[j], NULL });
            assert_int_equal(parsed.run_rc, parsed.lab_rc);
            assert_string_equal(parsed.run_err.msg, parsed.lab_err.msg);
            if (parsed.run_rc == 0) continue;
            assert_int_equal(parsed.run_rc, -EINVAL);
            assert_non_null(strstr(parsed.run_err.msg, opts[i][1] == '-' ? opts[i] : "--"));
            assert_non_null(strstr(parsed.run_err.msg, bad[j]));
        }
    }
    /* the same two words as the messages users see */
    parse_both(&parsed, (const char *const[]){ "--pin", "bogus", NULL });
    assert_string_equal(parsed.run_err.msg, "--pin: 'bogus' is not one of none, same, split");
    parse_both(&parsed, (const char *const[]){ "--noisy-threshold", "5000", NULL });
    assert_string_equal(
        parsed.run_err.msg,
        "--noisy-threshold: '5000' is not a number of CPUs in (0, 4096] (e.g. 0.1)");
}

/* A time is seconds, or has its unit (-d 10s, --warmup 500ms, --timeout 2m): run and lab alike. */
static void test_durations(void **state)
{
    static const struct {
        const char *val;
        uint64_t ns;
    } good[] = {
        { "10", 10 * NS_PER_S },      { "0.5", NS_PER_S / 2 },      { "10s", 10 * NS_PER_S },
        { "500ms", 500 * NS_PER_MS }, { "2m", 120 * NS_PER_S },     { "2min", 120 * NS_PER_S },
        { "1.5h", 5400 * NS_PER_S },  { "250us", 250 * NS_PER_US }, { "250µs", 250 * NS_PER_US },
        { "1e3ms", NS_PER_S },        { "24h", 86400 * NS_PER_S },  { "1500ns", 1500 },
    };
    static const char *const bad[] = { "10x", "s",   "10 s", "-1s", "0x10",   "2d", "inf",
                                       "nan", "25h", "10S",  "ms",  "1.5.2s", "" };

    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(good); i++) {
        parse_both(&parsed, (const char *const[]){ "-d", good[i].val, NULL });
        assert_int_equal(parsed.run_rc, 0);
        assert_int_equal(parsed.lab_rc, 0);
        assert_int_equal(parsed.run.shared.duration_ns, good[i].ns);
        assert_int_equal(parsed.lab.shared.duration_ns, good[i].ns);
    }
    for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
        parse_both(&parsed, (const char *const[]){ "--timeout", bad[i], NULL });
        assert_int_equal(parsed.run_rc, -EINVAL);
        assert_non_null(strstr(parsed.run_err.msg, "is not a duration in (0, 1 day]"));
    }
    /* a zero with a unit is none where none is allowed */
    parse_both(&parsed, (const char *const[]){ "--warmup", "0s", NULL });
    assert_int_equal(parsed.run_rc, 0);
    assert_int_equal(parsed.run.shared.warmup_ns, 0);
    parse_both(&parsed, (const char *const[]){ "-d", "0ms", NULL });
    assert_int_equal(parsed.run_rc, -EINVAL);
    assert_string_equal(parsed.run_err.msg,
                        "--duration: '0ms' is not a duration in (0, 1 day] (seconds, or with a "
                        "unit: 500ms, 10s, 2m, 1h)");
}

/* The lab's message for opts (NULL-terminated), which it must refuse. */
static const char *lab_refusal(const char *const *opts)
{
    static struct lab_opts o;
    static struct hb_err err;
    char *argv[MAX_ARGS + 2];
    int n = 0;

    memset(&err, 0, sizeof(err));
    argv[0] = word(0, "lab");
    while (opts[n] != NULL) {
        argv[1 + n] = word(1 + (size_t)n, opts[n]);
        n++;
    }
    assert_int_equal(cli_parse_lab(n + 1, argv, &o, stdout, &err), -EINVAL);
    return err.msg;
}

/*
 * An option getopt refuses is named as it was given: a long one without its
 * value by its name (getopt's optopt is then the table's enum, once printed
 * as a control character), a short one by its letter.
 */
static void test_bad_option_named(void **state)
{
    static const struct {
        const char *opts[3];
        const char *want;
    } cases[] = {
        { { "--pin" }, "lab: option --pin needs a value" },
        { { "--cooldown" }, "lab: option --cooldown needs a value" },
        { { "--connections" }, "lab: option --connections needs a value" },
        { { "--cool" }, "lab: option --cooldown needs a value" },
        { { "-c" }, "lab: option -c needs a value" },
        { { "--quick=3" }, "lab: option --quick takes no value" },
        { { "--bogus=1" }, "lab: unknown option '--bogus'" },
        { { "--s", "1" },
          "lab: ambiguous option '--s'; did you mean one of --server-threads, --sizes, "
          "--sample-ms, --seed?" },
        { { "--sizs", "64" }, "lab: unknown option '--sizs'; did you mean --sizes?" },
        { { "--quick", "-Z" }, "lab: unknown option -Z" },
        { { "--quick", "-Zq" }, "lab: unknown option -Z" },
    };

    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(cases); i++)
        assert_string_equal(lab_refusal(cases[i].opts), cases[i].want);
}

/* What a command line waits with: --wait as given, else block where it applies. */
struct wait_case {
    const char *opts[5];
    bool block, automatic;
};

/* Lab and run alike: block without --wait when each thread holds one kept connection. */
static const struct wait_case wait_common[] = {
    { { NULL }, true, true },
    { { "-c", "2", "-t", "2" }, true, true },
    { { "--wait", "epoll" }, false, false },
    { { "--wait", "block" }, true, false },
    { { "-c", "2" }, false, false },
    { { "--pipeline", "2" }, false, false },
};

/* Each case parsed by the lab (run false) or by run; the wait it picked is the case's. */
static void check_waits(const struct wait_case *cases, size_t n, bool run)
{
    struct lab_opts o;

    for (size_t i = 0; i < n; i++) {
        bool block, automatic;

        if (run) {
            parse_both(&parsed, cases[i].opts);
            assert_int_equal(parsed.run_rc, 0);
            block = parsed.run.load.block_wait;
            automatic = parsed.run.wait_auto;
        } else {
            assert_int_equal(parse_lab(cases[i].opts, &o), 0);
            block = o.shared.block_wait;
            automatic = o.wait_auto;
        }
        assert_int_equal(block, cases[i].block);
        assert_int_equal(automatic, cases[i].automatic);
    }
}

/*
 * Without --wait the lab's reuse cells block when each thread holds one kept
 * connection with one request at a time, closed loop; anything else polls.
 */
static void test_lab_wait(void **state)
{
    static const struct wait_case lab_only[] = {
        { { "--rates", "50%" }, false, false },
        { { "overload" }, false, false },
    };

    (void)state;
    check_waits(wait_common, ARRAY_LEN(wait_common), false);
    check_waits(lab_only, ARRAY_LEN(lab_only), false);
}

/* A run without --wait picks its wait as the lab's reuse cells do; an open loop, the
 * connect mode and a --timeout under 1 ms (the engine polls then) poll. */
static void test_run_wait(void **state)
{
    static const struct wait_case run_only[] = {
        { { "--rate", "100" }, false, false },     { { "--rate", "50%" }, false, false },
        { { "--mode", "connect" }, false, false }, { { "--timeout", "0.0005" }, false, false },
        { { "--timeout", "0.001" }, true, true },
    };

    (void)state;
    check_waits(wait_common, ARRAY_LEN(wait_common), true);
    check_waits(run_only, ARRAY_LEN(run_only), true);
}

/*
 * --wait uring is run's: it keeps any -c, -t and --pipeline and never blocks; the connect
 * mode and an open loop refuse it, and so do the lab and serve.
 */
static void test_run_uring(void **state)
{
    static const char *const ok_cases[][7] = {
        { "--wait", "uring", NULL },
        { "--wait", "uring", "-c", "64", "-t", "2", NULL },
        { "--wait", "uring", "--pipeline", "8", NULL },
    };
    static const char *const refused[][5] = {
        { "--wait", "uring", "--mode", "connect", NULL },
        { "--wait", "uring", "--rate", "100", NULL },
        { "--wait", "uring", "--rate", "50%", NULL },
    };
    static const char *const lab[] = { "--wait", "uring", NULL };
    struct lab_opts o;

    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(ok_cases); i++) {
        parse_both(&parsed, ok_cases[i]);
        assert_int_equal(parsed.run_rc, 0);
        assert_true(parsed.run.load.uring_wait);
        assert_false(parsed.run.load.block_wait);
        assert_false(parsed.run.wait_auto);
    }
    for (size_t i = 0; i < ARRAY_LEN(refused); i++) {
        parse_both(&parsed, refused[i]);
        assert_int_equal(parsed.run_rc, -EINVAL);
        assert_non_null(strstr(parsed.run_err.msg, "--wait uring"));
    }
    assert_int_equal(parse_lab(lab, &o), -EINVAL);
    /* epoll and block leave it off */
    parse_both(&parsed, (const char *const[]){ "--wait", "block", NULL });
    assert_false(parsed.run.load.uring_wait);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_field),       cmocka_unit_test(test_run_load),
        cmocka_unit_test(test_same_message),     cmocka_unit_test(test_durations),
        cmocka_unit_test(test_bad_option_named), cmocka_unit_test(test_lab_defaults),
        cmocka_unit_test(test_lab_wait),         cmocka_unit_test(test_run_wait),
        cmocka_unit_test(test_run_uring),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
