/*
 * The stacks NAME-fpm (fpm_stack.h): profile "optimized" by default, the web
 * front's http keep-alive load (each service by name from its own cgroup,
 * the web server -> FPM hop watched), then hopbench fcgi straight to FPM, the
 * bare hop; or one of the study's cases (fpm_cases.c).
 */
#include "stack/fpm_stack.h"

#include <errno.h>
#include <string.h>

#include "stack/fpm.h"
#include "stack/fpm_cases.h"
#include "stack/front.h"
#include "stack/measure.h"
#include "stack/readings.h"

/*
 * The bare hop, hopbench fcgi straight to php-fpm before the web server holds
 * any worker: on kept connections (one per worker at most), then with a
 * connection per request at the stack's connections (a pool smaller than
 * them queues in php-fpm's backlog: measured).
 */
static int fpm_bare(struct stack_ctx *c, const struct fpm_knobs *k, const struct fpm_eps *e,
                    struct stack_cell *kept, struct stack_cell *connect, struct hb_err *err)
{
    struct stack_args a = { .n = 0 }, b = { .n = 0 };
    int rc;

    kept->conns = fpm_bare_kept(k, c->conns);
    connect->conns = c->conns;
    fprintf(c->out,
            "the bare hop: %u kept connection(s) (one per php-fpm worker at most: a kept FastCGI "
            "connection holds its worker; pm.max_children %u), then a connection per request "
            "at %u connection(s)%s\n",
            kept->conns, k->children, c->conns,
            c->conns > k->children ? ", more than the workers: they queue in php-fpm's backlog"
                                   : "");
    if (c->conns > kept->conns)
        fprintf(c->out,
                "clients outnumber kept connections: the bare hop keeps %u for -c %u (its "
                "connect-mode measurement takes %u)\n",
                kept->conns, c->conns, c->conns);
    fpm_bare_args(c, e, &a);
    fprintf(c->out, "measuring fcgi -> php-fpm (the bare hop), tcp and unix ...\n");
    fflush(c->out);
    rc = stack_measure(c, &a, kept, err);
    if (rc == 0) rc = sup_alive(&c->sup, err);
    if (rc < 0 || stack_stopping(c)) return rc;
    fpm_bare_args(c, e, &b);
    stack_arg(&b, "--mode");
    stack_arg(&b, "connect");
    fprintf(c->out,
            "measuring fcgi -> php-fpm (the bare hop), a connection per request, tcp and unix "
            "...\n");
    fflush(c->out);
    rc = stack_measure(c, &b, connect, err);
    if (rc == 0) rc = sup_alive(&c->sup, err);
    return rc;
}

/* The stack's line: its servers, where they listen, its cgroups, its runs. */
static void fpm_header(struct stack_ctx *c, const struct web_front *w, enum fpm_profile p,
                       const struct fpm_knobs *k, const struct fpm_eps *e)
{
    struct sup_svc *web = sup_find(&c->sup, w->name), *fpm = sup_find(&c->sup, "php-fpm");

    fprintf(c->out,
            "hopbench stack %s (profile %s): %s pid %ld on %s (backend tcp) and %s "
            "(backend unix); php-fpm pid %ld on %s and %s, pm %s %u per pool\n"
            "cgroup: %s\ncgroup: %s\n"
            "runs: tcp and unix %u times each in ABBA order, %.2f s after %.2f s warm-up, "
            "%u connection(s); status: %s\n",
            c->def->name, fpm_profile_names[p], w->name, (long)web->pid, e->front[0], e->front[1],
            (long)fpm->pid, e->fpm[0], e->fpm[1], k->fpm_static ? "static" : "dynamic, at most",
            k->children, sup_cgroup_cpu(web), sup_cgroup_cpu(fpm), c->reps,
            (double)c->duration_ns / 1e9, (double)c->warmup_ns / 1e9, c->conns, w->status);
}

/* The web server's load, backend tcp against unix. */
static int fpm_front(struct stack_ctx *c, const struct web_front *w, const struct fpm_eps *e,
                     struct stack_cell *cell, struct hb_err *err)
{
    struct stack_args a = { .n = 0 };
    int rc;

    fpm_front_args(c, w, e, &a);
    fprintf(c->out, "measuring http keep-alive -> %s -> php-fpm, backend tcp and unix ...\n",
            w->name);
    fflush(c->out);
    rc = stack_measure(c, &a, cell, err);
    if (rc == 0) rc = sup_alive(&c->sup, err);
    return rc;
}

int fpm_stack_run(struct stack_ctx *c, struct hb_err *err)
{
    static struct fpm_eps e;
    static struct stack_cell cells[3]; /* in front of the web server, the bare hop kept, connect */
    const struct web_front *w = c->def->front;
    enum fpm_profile p = fpm_profile_of(c->o);
    struct fpm_knobs k;
    char label[48];
    int rc;

    if (c->o->cases != 0) return fpm_cases(c, w, err);
    fpm_knobs_of(p, &k);
    fpm_knobs_fit(w, &k, c->conns);
    snprintf(label, sizeof(label), "%s->fpm", w->name);
    stack_cell_init(&cells[0], label, "tcp", "unix");
    stack_cell_init(&cells[1], "fcgi->fpm", "tcp", "unix");
    stack_cell_init(&cells[2], "fcgi->fpm connect", "tcp", "unix");
    snprintf(cells[0].title, sizeof(cells[0].title), "%s \xe2\x86\x92 php-fpm", w->name);
    snprintf(cells[1].title, sizeof(cells[1].title), "bare FastCGI hop");
    snprintf(cells[2].title, sizeof(cells[2].title), "bare FastCGI hop, connect");
    stack_plan(c, 3, 2 * c->reps);
    rc = fpm_up(c, w, &k, false, &e, err);
    if (rc == 0 && !stack_stopping(c)) rc = fpm_bare(c, &k, &e, &cells[1], &cells[2], err);
    if (rc == 0 && !stack_stopping(c)) {
        rc = fpm_front_up(c, w, &k, &e, err);
        if (rc == 0) fpm_header(c, w, p, &k, &e);
        if (rc == 0) rc = fpm_front(c, w, &e, &cells[0], err);
    }
    if (rc == -EINTR) {
        c->interrupted = true;
        rc = 0;
    }
    stack_table(c->out, cells, 3);
    stack_lifecycle_cpu_print(c->out, &cells[1], &cells[2], true);
    return rc;
}

/* "baseline, optimized (default) or optimized-reuse": the stack's profiles. */
static void help_profiles(const struct stack_def *d, FILE *f)
{
    for (unsigned i = 0; d->profiles[i] != NULL; i++)
        fprintf(f, "%s%s%s",
                i == 0                       ? ""
                : d->profiles[i + 1] == NULL ? " or "
                                             : ", ",
                d->profiles[i], i == FPM_OPTIMIZED ? " (default)" : "");
}

/* What it builds, the profiles, the checks and what it measures. */
static void help_builds(const struct stack_def *d, FILE *f)
{
    const struct front_help *h = &d->front->help;

    fprintf(f,
            "Builds: Debian's php-fpm (the newest installed: php8.2-fpm on Debian 12) running\n"
            "<?php echo \"bench\"; with two pools, one on its own port on 127.0.0.1 and one on "
            "its\nown Unix socket, behind %s\n"
            "with one port per backend; everything in a private temporary directory, each "
            "server\nin its own cgroups under hopbench's. --profile (default optimized):\n"
            "  baseline         stock-like: %s,\n"
            "                   access logs, pm dynamic with at most 5 children, a new FastCGI\n"
            "                   connection per request\n"
            "  optimized        %s, no access logs, pm static\n"
            "                   16 (the pod study's), opcache.validate_timestamps=0, a new "
            "FastCGI\n                   connection per request\n",
            h->title, h->stock, h->lean);
    if (h->reuse != NULL)
        fprintf(f, "  optimized-reuse  optimized, and FastCGI connections kept (%s\n", h->reuse);
    fputs("As root only the masters (php-fpm's and the web server's) are root; every worker is\n"
          "www-data. FastCGI has no authentication: the services and the run children are in a\n"
          "network namespace of the stack's own (--netns same) so that no other local user\n"
          "reaches php-fpm's TCP port; not root, or with --agent, on the host's loopback, which "
          "a\nwarning line says is open to every local user.\n"
          "Checks, one line each: the web server's workers may connect to the socket (else "
          "every\nrequest is a 502 'Permission denied'); kept FastCGI connections fit "
          "pm.max_children (each\nholds a worker: as many as the workers, as the pod study kept "
          "16 for 16); client\nconnections that outnumber them are said so (they queue for one "
          "in the web server).\n"
          "Measures, at the pod study's load by default (-c 96; a pool smaller than the load is "
          "a\nqueue, measured): hopbench fcgi straight to php-fpm before the web server starts "
          "(the\nbare hop), on kept connections (one per worker at most) and with a connection "
          "per\nrequest at -c; then hopbench http keep-alive load on the web server, backend "
          "tcp\nagainst unix (the web server and php-fpm each measured by name from its own "
          "cgroup,\nthe web server -> php-fpm hop watched). Each --reps times in ABBA order. "
          "Every reply\nmust be 2xx with the body 'bench': a 5xx, a reset or a wrong body fails "
          "the gate\n(exit 2). Per measurement, for tcp, unix and unix/tcp (95 % interval, '~' "
          "when not\nsignificant): connections, ops/s, p50, p99, p99.9, mean; CPU us per request "
          "of the\nclient, each service, their sum and the system (softirq included); each "
          "service's PSS\nand working set; TIME_WAIT per side of the front hop and of the "
          "backend hop (+ what\neach run added), the backend's established connections; the "
          "noisy runs; the CPUs each\nside kept busy and what saturated (the machine, the "
          "client, a service); the\nlifecycle's share of the saving (connect + close against "
          "the transfer, the client's\nphases), and in CPU per request the bare hop's connect "
          "mode less its kept one, the\npod study's arithmetic.\n"
          "Takes: 3 measurements x 2 backends x --reps (default 4) x (-d 2 s + --warmup 0.5 "
          "s),\nabout 60 s; --short about 10 s and is a check, not a result.\n",
          f);
}

/* The study's cases the stack runs. */
static void help_cases(const struct stack_def *d, FILE *f)
{
    const struct web_front *w = d->front;

    fprintf(f,
            "\nThe study's cases, instead of a profile (the web server's load only, no bare "
            "hop):\n"
            "  --ablation       baseline, then one change added at a time: php-fpm pm static "
            "16, the\n                   lean web server (its modules, fixed pool, no "
            "access log),\n%s"
            "                   php.ini (opcache.validate_timestamps=0)%s;\n"
            "                   each step a fresh stack, tcp against unix; one table, each "
            "step's\n                   change from the one before, and the lifecycle in CPU "
            "per request\n                   across the step that keeps connections (-c default "
            "96; ~20 s\n                   short)%s\n",
            w->htaccess ? "                   AllowOverride None (no .htaccess read),\n" : "",
            w->kept != NULL ? ", FastCGI connections kept" : "", w->help.reuse_step);
    fputs("  --pool N,N,..    the optimized profile with pm static N, each N (at most 8 sizes)\n",
          f);
    if (d->cases & STACK_CASE_OVERLOAD)
        fputs(
            "  --overload       pm static 4, listen.backlog 4, 128 connections (64 with "
            "--short) for\n                   5 s (1 s) per transport, the web server holding "
            "a request for each\n                   (Apache's workers raised to match) so that "
            "the limit is php-fpm's:\n                   where each transport hit it ('limit "
            "hit: ...') and how it fails, from\n                   the client's errors by "
            "kind, the web server's status log and error\n                   log, php-fpm's "
            "log, its status page's listen queue per pool (listen\n                   queue, "
            "max listen queue, listen queue len) beside the kernel's\n                   "
            "ListenOverflows (TCP) and the backend's accept queue, and the\n                   "
            "TIME_WAIT sockets on the backend port; then both ways, unix against\n                   "
            "tcp: what succeeded (p50, p99, p99.9, mean), what failed and\n                   "
            "how, TCP's SYN retransmits;\n                   errors do not fail the "
            "gate\n",
            f);
    if (d->cases & STACK_CASE_STARVE) fputs(w->help.starve, f);
}

void fpm_stack_help(const struct stack_def *d, FILE *f)
{
    fprintf(f,
            "usage: hopbench stack %s [--profile P] [--short] [--reps N] [-d S] [--warmup S]\n"
            "                              [-c N] [--jsonl FILE] [--csv FILE] [-q] [--hold]\n"
            "       hopbench stack %s --ablation | --pool N,N,..%s%s\n\n",
            d->name, d->name, d->cases & STACK_CASE_OVERLOAD ? " | --overload" : "",
            d->cases & STACK_CASE_STARVE ? " | --starve" : "");
    help_builds(d, f);
    help_cases(d, f);
    fputs("\n  --profile P      ", f);
    help_profiles(d, f);
    fputs("\n  --short          a quick pass: 2 reps, -d 0.3, --warmup 0.1\n"
          "  --reps N         runs per backend and measurement (default 4; 2 with --short)\n"
          "  -d, --duration S each run's measured seconds (default 2)\n"
          "      --warmup S   each run's discarded start (default 0.5)\n"
          "  -c, --connections N  connections of each run (default 96, the pod study's; -c 1: "
          "a\n                   ping-pong; the bare hop keeps one per worker at most)\n"
          "      --jsonl FILE append every run's evidence (hopbench run --jsonl lines) to FILE\n"
          "      --csv FILE   one CSV row per run of every measurement (source: the "
          "measurement)\n"
          "  -q, --quiet      no live progress line from the runs\n"
          "      --hold       after measuring keep the services up until Ctrl-C (to look at "
          "them)\n"
          "  -h, --help       this text\n",
          f);
}
