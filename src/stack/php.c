/*
 * The php-method stack: the PHP image-benchmark method on this machine.
 * nginx in front of php-fpm (fpm.h, front_nginx.c: two pools, one on a TCP
 * port and one on a Unix socket, one nginx port per backend) serving three workloads,
 * reported apart (no composite score): hello.php (nearly all of its cost is
 * the nginx -> FPM hop), a static file nginx serves itself (the web server
 * alone: its two fronts are a control, the backend is not on its path) and
 * cpu.php (a bounded loop of a few ms of PHP work). For each workload and
 * backend: the closed-loop maximum (reps, ABBA), then an open loop at 60 %
 * of that endpoint's own closed-loop median (an absolute --rate, one base per
 * endpoint, not probed again), its latency counted from each request's
 * intended send time. Every run passes the zero-error gate or the result is
 * invalid, named per workload and backend. Figures: median +- SD with n.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "stack/fpm.h"
#include "stack/measure.h"
#include "stack/stack.h"
#include "stats.h"

#define PHP_CONNS      16u     /* -c of every run unless given: the method's 16 */
#define PHP_OPEN       0.6     /* the open loop's share of the closed-loop maximum */
#define PHP_CPU_LOOP   300000u /* cpu.php's iterations: a few ms of PHP */
#define PHP_CPU_MOD    1000003u
#define PHP_WORKLOADS  3u
#define PHP_OPEN_OPS   300.0 /* an open-loop run lasts for at least this many requests, */
#define PHP_OPEN_MAX_S 10.0  /* unless that takes longer than this */

/* One workload: its name, request target, file under www and the body it answers with. */
struct php_load {
    const char *name;
    const char *path;
    char body[32];
    struct stack_cell closed, open; /* closed loop: by endpoint; open loop: arm per backend */
};

/* cpu.php's answer: the same loop in C. */
static unsigned long php_cpu_answer(void)
{
    unsigned long h = 0;

    for (unsigned long i = 0; i < PHP_CPU_LOOP; i++)
        h = (h * 31 + i) % PHP_CPU_MOD;
    return h;
}

/* hello.php, static.txt and cpu.php in the docroot fpm_build made; the workloads' bodies. */
static int php_files(struct stack_ctx *c, struct php_load *w, struct hb_err *err)
{
    char cpu[256];
    int rc;

    snprintf(cpu, sizeof(cpu),
             "<?php\n$h = 0;\nfor ($i = 0; $i < %u; $i++) {\n    $h = ($h * 31 + $i) %% %u;\n}\n"
             "echo $h;\n",
             PHP_CPU_LOOP, PHP_CPU_MOD);
    rc = sup_write(&c->sup, "www/hello.php", "<?php echo \"hello\";\n", err);
    if (rc == 0) rc = sup_write(&c->sup, "www/static.txt", "static", err);
    if (rc == 0) rc = sup_write(&c->sup, "www/cpu.php", cpu, err);
    w[0] = (struct php_load){ .name = "hello.php", .path = "/hello.php", .body = "hello" };
    w[1] = (struct php_load){ .name = "static", .path = "/static.txt", .body = "static" };
    w[2] = (struct php_load){ .name = "cpu.php", .path = "/cpu.php" };
    snprintf(w[2].body, sizeof(w[2].body), "%lu", php_cpu_answer());
    return rc;
}

/* The run child's arguments for workload w on the fronts [from, to) of e. */
static void php_args(struct stack_ctx *c, struct stack_args *a, const struct fpm_eps *e,
                     const struct php_load *w, unsigned from, unsigned to)
{
    stack_arg(a, "hopbench");
    stack_arg(a, "run");
    stack_arg(a, "http");
    for (unsigned i = from; i < to; i++)
        stack_arg(a, "%s", e->front[i]);
    stack_arg(a, "--path");
    stack_arg(a, "%s", w->path);
    stack_arg(a, "--expect-body");
    stack_arg(a, "%s", w->body);
    fpm_observe_args(c, &front_nginx, e, a);
}

/* The median of an arm's figure, or NAN without a run. */
static double php_median(const double *x, unsigned n)
{
    struct stats_summary s;

    return stats_summarize(x, n, &s) == 0 ? s.median : NAN;
}

/*
 * The open loop of w: each backend at PHP_OPEN of its own closed-loop median,
 * one run per child, the children in ABBA order; a backend without a valid
 * closed-loop run is left out, with a line saying so. A run lasts -d, or
 * longer when -d holds fewer than PHP_OPEN_OPS requests at its rate (up to
 * PHP_OPEN_MAX_S): the achieved rate is then exact to within 1 % (one request
 * of its window at most) and the saturation flag (below 99 %) means it.
 */
static int php_open(struct stack_ctx *c, const struct fpm_eps *e, struct php_load *w,
                    struct hb_err *err)
{
    double rate[2];
    int rc = 0;

    for (unsigned t = 0; t < 2; t++) {
        const struct stack_arm *a = &w->closed.arm[t];
        rate[t] = PHP_OPEN * php_median(a->ops_s, a->n);
        if (!(rate[t] > 0))
            fprintf(c->out, "%s over %s: no open loop: no valid closed-loop run to take 60 %% of\n",
                    w->name, a->transport);
    }
    if (!(rate[0] > 0) && !(rate[1] > 0)) return 0;
    fprintf(c->out,
            "measuring %s: open loop at 60 %% of each backend's maximum (%.1f, %.1f ops/s) ...\n",
            w->name, rate[0], rate[1]);
    fflush(c->out);
    for (unsigned r = 0; r < c->reps && rc == 0; r++) {
        for (unsigned k = 0; k < 2 && rc == 0 && !stack_stopping(c); k++) {
            unsigned t = k ^ (r & 1); /* tcp unix, unix tcp, ...: ABBA */
            struct stack_args a = { .n = 0 };
            if (!(rate[t] > 0)) continue;
            double need_s = fmin(PHP_OPEN_OPS / rate[t], PHP_OPEN_MAX_S);
            uint64_t d = need_s * 1e9 > (double)c->duration_ns ? (uint64_t)(need_s * 1e9) : 0;
            php_args(c, &a, e, w, t, t + 1);
            stack_arg(&a, "--rate");
            stack_arg(&a, "%.3f", rate[t]);
            rc = stack_measure_one(c, &a, &w->open, t, d, err);
            if (rc == 0) rc = sup_alive(&c->sup, err);
        }
    }
    return rc;
}

/* Workload w: the closed loop over both backends, then its open loop. */
static int php_workload(struct stack_ctx *c, const struct fpm_eps *e, struct php_load *w,
                        struct hb_err *err)
{
    struct stack_args a = { .n = 0 };
    int rc;

    stack_cell_init(&w->closed, w->name, "tcp", "unix");
    stack_cell_init(&w->open, w->name, "tcp", "unix");
    php_args(c, &a, e, w, 0, 2);
    fprintf(c->out, "measuring %s: closed loop (the maximum), backend tcp and unix ...\n", w->name);
    fflush(c->out);
    rc = stack_measure(c, &a, &w->closed, err);
    if (rc == 0) rc = sup_alive(&c->sup, err);
    if (rc == 0 && !stack_stopping(c)) rc = php_open(c, e, w, err);
    return rc;
}

/* "14513 ± 120" (one decimal below 100), or "n/a" without a run. */
static const char *php_msd(char *buf, size_t cap, const double *x, unsigned n)
{
    struct stats_summary s;

    if (stats_summarize(x, n, &s) < 0) {
        snprintf(buf, cap, "n/a");
        return buf;
    }
    int prec = s.median < 100 ? 1 : 0;
    char med[24], sd[20];

    text_number(med, sizeof(med), s.median, prec);
    text_number(sd, sizeof(sd), s.sd, prec);
    snprintf(buf, cap, "%s ± %s", med, sd);
    return buf;
}

/* One row: a workload's arm, closed loop or (with its rate asked) open loop. */
static void php_row(FILE *f, const char *name, const struct stack_arm *a, bool open)
{
    char ops[64], p50[64], p99[64], p999[64], mean[64], rate[24] = "";

    if (open && a->n > 0) text_number(rate, sizeof(rate), php_median(a->rate, a->n), 1);
    if (open && a->n == 0) snprintf(rate, sizeof(rate), "n/a");
    fprintf(f, "%-10s %-7s %10s", name, a->transport, open ? rate : "");
    fputc(' ', f);
    put_columns(f, 20, php_msd(ops, sizeof(ops), a->ops_s, a->n));
    fputc(' ', f);
    put_columns(f, 16, php_msd(p50, sizeof(p50), a->p50_us, a->n));
    fputc(' ', f);
    put_columns(f, 18, php_msd(p99, sizeof(p99), a->p99_us, a->n));
    fputc(' ', f);
    put_columns(f, 20, php_msd(p999, sizeof(p999), a->p999_us, a->n));
    fputc(' ', f);
    put_columns(f, 16, php_msd(mean, sizeof(mean), a->mean_us, a->n));
    fprintf(f, " %3u", a->n);
    if (open && a->saturated) fprintf(f, "  %u saturated (below 99 %% of the rate)", a->saturated);
    if (a->failed) fprintf(f, "  %u failed the gate", a->failed);
    fputc('\n', f);
}

static void php_tables(struct stack_ctx *c, const struct php_load *w, unsigned n)
{
    struct stack_cell closed[PHP_WORKLOADS];
    FILE *f = c->out;

    for (unsigned open = 0; open < 2; open++) {
        if (open)
            fprintf(f,
                    "\nOpen loop at 60 %% of each backend's closed-loop median; latency from each "
                    "request's\nintended send time (corrected for coordinated omission)\n");
        else
            fprintf(f, "\nClosed loop: the maximum, %u connection(s)\n", c->conns);
        fprintf(f, "%-10s %-7s %10s ", "workload", "backend", open ? "rate asked" : "");
        put_columns(f, 20, "ops/s (median ± SD)");
        fputc(' ', f);
        put_columns(f, 16, "p50 µs");
        fputc(' ', f);
        put_columns(f, 18, "p99 µs");
        fputc(' ', f);
        put_columns(f, 20, "p99.9 µs");
        fputc(' ', f);
        put_columns(f, 16, "mean µs");
        fprintf(f, " %3s\n", "n");
        for (unsigned i = 0; i < n; i++)
            for (unsigned t = 0; t < 2; t++)
                php_row(f, t == 0 ? w[i].name : "", open ? &w[i].open.arm[t] : &w[i].closed.arm[t],
                        open != 0);
    }
    for (unsigned i = 0; i < n; i++)
        closed[i] = w[i].closed;
    fprintf(f, "\nClosed loop, CPU per request (the static file never reaches php-fpm: a control)");
    stack_table(f, closed, n);
    fprintf(f, "\nThe open loop is not priced below: each backend ran at its own rate.\n");
}

static int php_run(struct stack_ctx *c, struct hb_err *err)
{
    static struct fpm_eps e;
    static struct php_load w[PHP_WORKLOADS];
    enum fpm_profile p = fpm_profile_of(c->o);
    struct fpm_knobs k;
    unsigned n = 0;
    int rc;

    rc = fpm_build(c, &front_nginx, p, &k, &e, err);
    if (rc == 0) rc = php_files(c, w, err);
    if (rc == -EINTR) {
        c->interrupted = true;
        return 0;
    }
    if (rc < 0) return rc;
    struct sup_svc *web = sup_find(&c->sup, "nginx"), *fpm = sup_find(&c->sup, "php-fpm");
    fprintf(c->out,
            "hopbench stack php-method (profile %s): nginx pid %ld on %s (backend tcp) and %s "
            "(backend unix); php-fpm pid %ld on %s and %s, pm %s %u per pool\n"
            "cgroup: %s\ncgroup: %s\n"
            "workloads: hello.php, static (static.txt, served by nginx), cpu.php (%u loop "
            "iterations); each closed loop then open loop at 60 %%\n"
            "runs: tcp and unix %u times each in ABBA order, %.2f s after %.2f s warm-up, "
            "%u connection(s); status: /nginx_status\n",
            fpm_profile_names[p], (long)web->pid, e.front[0], e.front[1], (long)fpm->pid, e.fpm[0],
            e.fpm[1], k.fpm_static ? "static" : "dynamic, at most", k.children, sup_cgroup_cpu(web),
            sup_cgroup_cpu(fpm), PHP_CPU_LOOP, c->reps, (double)c->duration_ns / 1e9,
            (double)c->warmup_ns / 1e9, c->conns);
    /* per workload: the closed loop's child, then one child per open-loop run */
    stack_plan(c, PHP_WORKLOADS, 2 * c->reps);
    stack_plan(c, PHP_WORKLOADS * 2 * c->reps, 1);
    for (; n < PHP_WORKLOADS && rc == 0 && !stack_stopping(c); n++)
        rc = php_workload(c, &e, &w[n], err);
    if (n > 0) php_tables(c, w, n);
    return rc;
}

static const char php_help[] =
    "usage: hopbench stack php-method [--profile P] [--short] [--reps N] [-d S] [--warmup S]\n"
    "                                 [-c N] [--jsonl FILE] [--csv FILE] [-q] [--hold]\n"
    "\n"
    "The PHP image-benchmark method on this machine.\n"
    "Builds: Debian's php-fpm (the newest installed: php8.2-fpm on Debian 12) with two pools,\n"
    "one on its own port on 127.0.0.1 and one on its own Unix socket, behind nginx with one\n"
    "port per backend (as nginx-fpm, --profile baseline, optimized (default) or\n"
    "optimized-reuse); everything in a private temporary directory, each server in its own\n"
    "cgroups under hopbench's, all in a network namespace of the stack's own, as nginx-fpm\n"
    "(FastCGI has no authentication). Three workloads, each reported on its own (no\n"
    "composite score):\n"
    "  hello.php  <?php echo \"hello\";: nearly all of its cost is the nginx -> FPM hop\n"
    "  static     a 6-byte file nginx serves itself: php-fpm is not on its path, so its two\n"
    "             backends are a control (they should not differ)\n"
    "  cpu.php    a loop of 300000 iterations: a few ms of PHP per request\n"
    "Measures, per workload and backend (tcp, unix): the closed-loop maximum (hopbench http\n"
    "keep-alive load, -c 16 unless given, --reps runs in ABBA order); then an open loop at\n"
    "60 % of that backend's own closed-loop median (one base per endpoint, measured once;\n"
    "--reps runs of one endpoint each, interleaved ABBA, each -d or as long as 300 requests\n"
    "take at its rate, at most 10 s), its latency from each request's intended send time;\n"
    "a run below 99 % of its rate is flagged saturated. Every reply must be 2xx with the\n"
    "workload's body: any error fails the gate (exit 2), named per workload and backend.\n"
    "Prints median ± SD with n of ops/s and of latency p50, p99, p99.9 and mean; CPU per\n"
    "request of nginx and php-fpm (each its cgroup) and the client, the CPUs each kept busy\n"
    "and what saturated; then what the Unix socket saves per request, the rate that saves\n"
    "one vCPU and its worth a month ('hopbench cost' on each closed-loop measurement; the\n"
    "open loop is not priced: each backend has its own rate). With optimized-reuse nginx\n"
    "keeps a FastCGI connection per client connection and php-fpm gets a worker for each\n"
    "(-c + 1: kept connections never outnumber the workers that serve them).\n"
    "Takes: 3 workloads x 2 loops x 2 backends x --reps (default 4) x (-d 2 s + --warmup\n"
    "0.5 s), about 130 s; --short (2 reps of 0.3 s after 0.1 s) about 20 s and is a\n"
    "check, not a result.\n"
    "\n"
    "  --profile P      baseline, optimized (default) or optimized-reuse (as nginx-fpm)\n"
    "  --short          a quick pass: 2 reps, -d 0.3, --warmup 0.1\n"
    "  --reps N         runs per backend, workload and loop (default 4; 2 with --short)\n"
    "  -d, --duration S each run's measured seconds (default 2)\n"
    "      --warmup S   each run's discarded start (default 0.5)\n"
    "  -c, --connections N  connections of each run (default 16)\n"
    "      --jsonl FILE append every run's evidence (hopbench run --jsonl lines) to FILE:\n"
    "                   one header line per run child, then its runs\n"
    "      --csv FILE   one CSV row per run of every measurement (source: the measurement)\n"
    "  -q, --quiet      no live progress line from the runs\n"
    "      --hold       after measuring keep the services up until Ctrl-C (to look at them)\n"
    "  -h, --help       this text\n";

const struct stack_def stack_php_method = {
    .name = "php-method",
    .summary = "the PHP image-benchmark method: nginx -> php-fpm, hello.php, a static file, "
               "cpu.php; max, then open loop at 60 %",
    .help = php_help,
    .needs = nginx_needs,
    .profiles = fpm_profile_names,
    .private_net = &stack_private_fastcgi,
    .conns = PHP_CONNS,
    .run = php_run,
};
