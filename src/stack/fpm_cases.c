/*
 * The study's cases of the web server → PHP-FPM stacks, each instead of a
 * profile's measurement:
 *   --ablation  the cumulative steps from baseline to optimized-reuse, one
 *               change at a time, each a fresh stack measured tcp against unix;
 *   --pool      the pool-size sweep, pm static with N children;
 *   --overload  4 workers, listen.backlog 4, many connections: how each
 *               transport fails, from the client's evidence and the servers'
 *               own logs (statuses, backend errors, pm.max_children) and the
 *               TIME_WAIT sockets left on the backend port;
 *   --starve    the front (nginx) keeping more FastCGI connections than pm.max_children:
 *               the pool starves, and the output says so by name.
 * In the last two errors are what is measured: they do not fail the gate.
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stack/fpm.h"
#include "stack/fpm_cases.h"
#include "stack/readings.h"
#include "stats.h"

#define CLIENT_TIMEOUT  "3" /* the client's --timeout in the failure cases, s */
#define BACKEND_TIMEOUT 2u  /* the web server's FastCGI timeouts in the failure cases, s */

/* What one run of a failure case gave, from its evidence. */
struct case_run {
    bool have;
    double ops_s, p50_ms, p99_ms, p999_ms, mean_ms; /* of what succeeded */
    unsigned long long requests, s2xx, s5xx, timeouts;
    unsigned long long failed; /* the client's errors, every kind (a 5xx among them) */
    double syn_retrans;        /* TcpExt.TCPSynRetrans over the run: each a 1-s stall; NAN n/a */
    char errors[256];          /* the client's errors by kind, "timeout 3, reset 2", or "none" */
    double overflows;   /* the kernel's TcpExt.ListenOverflows over the run (all TCP); NAN: n/a */
    double drops;       /* TcpExt.ListenDrops likewise */
    double accept_peak; /* the backend socket's accept queue at its peak (sock_diag); NAN: n/a */
    char agent[1024];   /* stack --agent: the agent's rows of the run (stack_agent_run_rows) */
};

/* php-fpm's own listen-queue figures of one pool, from its status page. */
struct fpm_lq {
    bool ok;
    long long queue; /* "listen queue": connections waiting now */
    long long max;   /* "max listen queue": the most that waited since the pool started */
    long long len;   /* "listen queue len": the socket's backlog */
    char why[sizeof(((struct hb_err *)0)->msg) + 16]; /* when not ok */
};

/* What the servers' own logs and the kernel say of one transport. */
struct case_logs {
    char statuses[160];          /* the front's status log: "200 1234, 502 12" */
    unsigned long long s5xx;     /* its 5xx lines */
    unsigned long long s504;     /* its 504 lines */
    unsigned long long kinds[6]; /* the web server's log lines on this backend, by log_kinds */
    unsigned long long reached;  /* php-fpm's "server reached pm.max_children" for the pool */
    long tw_delta;               /* TIME_WAIT sockets on the backend port, after - before */
    struct fpm_lq lq;            /* php-fpm's status page of the pool, after the run */
};

/* The web server's log lines about its backend, by what failed (the first match names it). */
static const struct {
    const char *text;
    const char *kind;
} log_kinds[] = {
    { "Resource temporarily unavailable", "connect EAGAIN (backlog full)" },
    { "Connection refused", "connect refused" },
    { "timed out", "timed out" },
    { "timeout specified has expired", "timed out" },
    { "Connection reset by peer", "reset" },
};
#define KIND_OTHER 5 /* a line on the backend matching none of log_kinds */

static double median_of(const double *x, unsigned n)
{
    struct stats_summary s;

    return n > 0 && stats_summarize(x, n, &s) == 0 ? s.median : NAN;
}

/* A fresh private directory and cgroups for the next step; the last step's are removed. */
static int case_fresh(struct stack_ctx *c, struct hb_err *err)
{
    struct hb_err rel = { 0 };
    int rc;

    if (sup_release(&c->sup, &rel) < 0) {
        *err = rel;
        return -EBUSY;
    }
    rc = sup_init(&c->sup, err);
    if (c->sup.dir[0] != '\0')
        fprintf(c->out, "hopbench stack %s: directory %s\n", c->o->name, c->sup.dir);
    return rc;
}

/* Starts the stack of k; one line naming its services. */
static int case_up(struct stack_ctx *c, const struct web_front *w, const char *label,
                   const struct fpm_knobs *k, bool starve, struct fpm_eps *e, struct hb_err *err)
{
    int rc = fpm_up(c, w, k, starve, e, err);

    if (rc == 0) rc = fpm_front_up(c, w, k, e, err);
    if (rc == -EINTR) c->interrupted = true;
    if (rc < 0) return rc;
    fprintf(c->out,
            "%s: %s pid %ld on %s (backend tcp) and %s (backend unix); php-fpm pid %ld on %s "
            "and %s, pm %s %u, listen.backlog %u, kept per process %u\n",
            label, w->name, (long)sup_find(&c->sup, w->name)->pid, e->front[0], e->front[1],
            (long)sup_find(&c->sup, "php-fpm")->pid, e->fpm[0], e->fpm[1],
            k->fpm_static ? "static" : "dynamic, at most", k->children, k->backlog, k->kept);
    fflush(c->out);
    return 0;
}

unsigned fpm_ablation_steps(const struct web_front *w, unsigned conns, struct fpm_step *s)
{
    struct fpm_knobs opt, reuse;
    unsigned n = 0;

    fpm_knobs_of(FPM_OPTIMIZED, &opt);
    fpm_knobs_of(FPM_REUSE, &reuse);
    fpm_knobs_of(FPM_BASELINE, &s[n].k);
    snprintf(s[n++].label, sizeof(s->label), "baseline");
    s[n].k = s[n - 1].k;
    s[n].k.fpm_static = true;
    s[n].k.children = opt.children;
    s[n].k.backlog = opt.backlog;
    snprintf(s[n++].label, sizeof(s->label), "+fpm static %u", opt.children);
    s[n].k = s[n - 1].k;
    s[n].k.web_lean = true;
    snprintf(s[n++].label, sizeof(s->label), "+lean %s", w->name);
    if (w->htaccess) {
        s[n].k = s[n - 1].k;
        s[n].k.htaccess = false;
        snprintf(s[n++].label, sizeof(s->label), "+no .htaccess");
    }
    s[n].k = s[n - 1].k;
    s[n].k.php_ini = true;
    snprintf(s[n++].label, sizeof(s->label), "+php.ini");
    if (w->kept == NULL) return n;
    s[n].k = s[n - 1].k;
    s[n].k.kept = reuse.kept;
    s[n].k.keep_all = reuse.keep_all;
    snprintf(s[n].label, sizeof(s->label), "+reuse");
    fpm_knobs_fit(w, &s[n].k, conns);
    if (s[n].k.children > s[n - 1].k.children)
        snprintf(s[n].label, sizeof(s->label), "+reuse, pm %u", s[n].k.children);
    for (unsigned i = 0; i <= n; i++)
        fpm_knobs_fit(w, &s[i].k, conns); /* a request worker per connection in each */
    return n + 1;
}

/* now against before as a ratio ("1.12×"), or blank. */
static void print_change(FILE *f, double now, double before)
{
    char ratio[32] = "";

    if (!isnan(now) && !isnan(before) && before != 0)
        text_ratio(ratio, sizeof(ratio), now / before, 2);
    fputc(' ', f);
    put_columns(f, 8, ratio);
}

/* Each step's change from the one before, per transport: ops/s and the services' CPU per op. */
static void change_table(FILE *f, const struct stack_cell *cells, unsigned n)
{
    fprintf(f,
            "\nagainst the step before (medians; CPU = web server + php-fpm per op)\n"
            "%-16s %11s %8s %10s %8s %11s %8s %10s %8s %9s\n",
            "step", "tcp ops/s", "", "CPU µs", "", "unix ops/s", "", "CPU µs", "", "unix/tcp");
    for (unsigned i = 0; i < n; i++) {
        double ops[2], cpu[2];
        char num[32];
        fprintf(f, "%-16s", cells[i].label);
        for (unsigned t = 0; t < 2; t++) {
            ops[t] = median_of(cells[i].arm[t].ops_s, cells[i].arm[t].n);
            cpu[t] = stack_services_cpu(&cells[i], &cells[i].arm[t]);
            text_number(num, sizeof(num), ops[t], 0);
            fprintf(f, " %11s", num);
            print_change(f, ops[t],
                         i ? median_of(cells[i - 1].arm[t].ops_s, cells[i - 1].arm[t].n) : NAN);
            text_number(num, sizeof(num), cpu[t], 1);
            fprintf(f, " %9s", num);
            print_change(f, cpu[t],
                         i ? stack_services_cpu(&cells[i - 1], &cells[i - 1].arm[t]) : NAN);
        }
        print_change(f, ops[1], ops[0]);
        fprintf(f, "\n");
    }
}

/* The connections of the ablation and the sweep: -c, else enough to fill the pool. */
static unsigned case_conns(const struct stack_ctx *c, unsigned dflt)
{
    return c->o->conns ? c->o->conns : dflt;
}

/* The connections of the ablation's and the sweep's steps: the pod study's, unless -c. */
static unsigned steps_conns(const struct stack_ctx *c)
{
    return case_conns(c, FPM_STUDY_CONNS);
}

/* Each step a fresh stack, http keep-alive load on both fronts; one table of them all. */
static int case_steps(struct stack_ctx *c, const struct web_front *w, const char *what,
                      const struct fpm_step *s, unsigned n, struct hb_err *err)
{
    static struct stack_cell cells[FPM_MAX_STEPS];
    static struct fpm_eps e;
    unsigned done = 0;
    int rc = 0;

    c->conns = steps_conns(c);
    fprintf(c->out,
            "%s: %u steps, each a fresh stack; http keep-alive load with %u connection(s), "
            "backend tcp and unix %u times each in ABBA order, %.2f s after %.2f s warm-up\n",
            what, n, c->conns, c->reps, (double)c->duration_ns / 1e9, (double)c->warmup_ns / 1e9);
    stack_plan(c, n, 2 * c->reps);
    for (unsigned i = 0; i < n && rc == 0 && !stack_stopping(c); i++) {
        struct stack_args a = { .n = 0 };
        if (i > 0) rc = case_fresh(c, err);
        if (rc == 0) rc = case_up(c, w, s[i].label, &s[i].k, false, &e, err);
        if (rc < 0) break;
        stack_cell_init(&cells[i], s[i].label, "tcp", "unix");
        fpm_front_args(c, w, &e, &a);
        fprintf(c->out, "measuring %s ...\n", s[i].label);
        fflush(c->out);
        rc = stack_measure(c, &a, &cells[i], err);
        if (rc == 0) rc = sup_alive(&c->sup, err);
        done = i + 1;
    }
    if (rc == -EINTR) rc = 0;
    if (done > 0) {
        stack_table(c->out, cells, done);
        change_table(c->out, cells, done);
    }
    /* the pod study's 33 against 12 us: the step before keeping connections against it */
    for (unsigned i = 1; i < done; i++)
        if (s[i].k.kept > 0 && s[i - 1].k.kept == 0)
            stack_lifecycle_cpu_print(c->out, &cells[i], &cells[i - 1], false);
    return rc;
}

static int case_ablation(struct stack_ctx *c, const struct web_front *w, struct hb_err *err)
{
    struct fpm_step s[FPM_MAX_STEPS];
    unsigned n = fpm_ablation_steps(w, steps_conns(c), s);

    return case_steps(c, w, "ablation, baseline to optimized-reuse", s, n, err);
}

static int case_pool(struct stack_ctx *c, const struct web_front *w, struct hb_err *err)
{
    struct fpm_step s[STACK_MAX_POOL];

    for (unsigned i = 0; i < c->o->npool; i++) {
        fpm_knobs_of(FPM_OPTIMIZED, &s[i].k);
        s[i].k.children = c->o->pool[i];
        fpm_knobs_fit(w, &s[i].k, steps_conns(c));
        snprintf(s[i].label, sizeof(s[i].label), "pm static %u", c->o->pool[i]);
    }
    return case_steps(c, w, "pool sweep (profile optimized)", s, c->o->npool, err);
}

/*
 * The kernel's view of the run: its listen-queue counters over the window,
 * and the accept queue's peak on the watched backend hop of transport t.
 */
static void run_kernel(struct case_run *r, const struct run_view *v, unsigned t)
{
    const struct run_hop *w = run_view_watch(v, t ? "unix" : "tcp");

    r->overflows = v->listen_overflows;
    r->drops = v->listen_drops;
    r->syn_retrans = v->syn_retrans;
    r->accept_peak = w != NULL ? w->listen_queue.peak : NAN;
}

/* The agent's rows of the run (stack --agent), as the stack's table has them, into r->agent. */
static void run_agent(struct case_run *r, const struct run_view *v)
{
    FILE *m = fmemopen(r->agent, sizeof(r->agent), "w");

    r->agent[0] = '\0';
    if (m == NULL) return;
    stack_agent_run_rows(m, v);
    if (fclose(m) != 0) r->agent[0] = '\0';
    r->agent[sizeof(r->agent) - 1] = '\0'; /* a full buffer is not terminated */
}

/* The count of kind in c[0 .. n - 1], 0 without it. */
static unsigned long long count_of(const struct run_count *c, unsigned n, const char *kind)
{
    for (unsigned i = 0; i < n; i++)
        if (strcmp(c[i].kind, kind) == 0) return c[i].n;
    return 0;
}

/* x, or 0 when it is not a number (a figure the run does not hold, printed as 0). */
static double or0(double x)
{
    return isnan(x) ? 0 : x;
}

/*
 * The last run of the run child (its evidence, as stack_measure_one read it:
 * c->last_run) into r; t: its backend. Nothing when the child wrote no run.
 */
static int run_read(struct stack_ctx *c, struct case_run *r, unsigned t, struct hb_err *err)
{
    struct run_view v;
    size_t len = 0;
    int rc;

    memset(r, 0, sizeof(*r));
    if (c->last_run == NULL) return 0;
    rc = run_view_of(c->last_run, &v, err);
    if (rc != 0) return rc < 0 ? rc : 0; /* measure.c's reading refused it already */
    r->have = true;
    r->ops_s = or0(v.ops_per_s);
    r->p50_ms = or0(v.latency.p50) / 1e6;
    r->p99_ms = or0(v.latency.p99) / 1e6;
    r->p999_ms = or0(v.latency.p999) / 1e6;
    r->mean_ms = or0(v.latency.mean) / 1e6;
    r->failed = v.errors_total;
    r->requests = v.requests;
    r->s2xx = count_of(v.status, v.nstatus, "2xx");
    r->s5xx = count_of(v.status, v.nstatus, "5xx");
    r->timeouts = count_of(v.errors, v.nerrors, "timeout");
    r->errors[0] = '\0';
    for (unsigned i = 0; i < v.nerrors; i++) {
        if (v.errors[i].n == 0 || len >= sizeof(r->errors)) continue;
        len +=
            (size_t)snprintf(r->errors + len, sizeof(r->errors) - len, "%s%s %llu", len ? ", " : "",
                             v.errors[i].kind, (unsigned long long)v.errors[i].n);
    }
    if (len == 0) snprintf(r->errors, sizeof(r->errors), "none");
    run_kernel(r, &v, t);
    run_agent(r, &v);
    return 0;
}

/* TIME_WAIT sockets on 127.0.0.1:port, either side (/proc/net/tcp), or -1. */
static long time_wait_count(unsigned port)
{
    char line[512];
    FILE *f = fopen("/proc/net/tcp", "re");
    long n = 0;

    if (f == NULL) return -1;
    while (fgets(line, sizeof(line), f) != NULL) {
        unsigned lport, rport, st;
        if (sscanf(line, " %*u: %*x:%x %*x:%x %x", &lport, &rport, &st) != 3) continue;
        if (st == 0x06 && (lport == port || rport == port)) n++;
    }
    fclose(f);
    return n;
}

/* Lines of the file at path, from byte from on, that contain a (and b, when not NULL). */
static unsigned long long log_count(const char *path, long from, const char *a, const char *b)
{
    char line[2048];
    FILE *f = fopen(path, "re");
    unsigned long long n = 0;

    if (f == NULL) return 0;
    if (fseek(f, from, SEEK_SET) == 0)
        while (fgets(line, sizeof(line), f) != NULL)
            if (strstr(line, a) != NULL && (b == NULL || strstr(line, b) != NULL)) n++;
    fclose(f);
    return n;
}

/* The size of the file at path, 0 when there is none. */
static long file_size(const char *path)
{
    struct stat st;

    return stat(path, &st) == 0 ? (long)st.st_size : 0;
}

/* The front's status log (one status a line) into l: the counts by status, the 5xx, the 504. */
static void status_read(struct stack_ctx *c, const char *transport, struct case_logs *l)
{
    char path[PATH_MAX], name[32], line[32];
    unsigned code[16] = { 0 };
    unsigned long long count[16] = { 0 };
    unsigned n = 0;
    size_t len = 0;
    FILE *f;

    snprintf(name, sizeof(name), "status-%s.log", transport);
    sup_path(&c->sup, name, path, sizeof(path));
    snprintf(l->statuses, sizeof(l->statuses), "none");
    f = fopen(path, "re");
    if (f == NULL) return;
    while (fgets(line, sizeof(line), f) != NULL) {
        unsigned s = (unsigned)strtoul(line, NULL, 10), i = 0;
        while (i < n && code[i] != s)
            i++;
        if (i == n && n < ARRAY_LEN(code)) code[n++] = s;
        if (i < n) count[i]++;
        l->s5xx += s >= 500 && s < 600;
        l->s504 += s == 504;
    }
    fclose(f);
    for (unsigned k = 0; k < n && len < sizeof(l->statuses); k++)
        len += (size_t)snprintf(l->statuses + len, sizeof(l->statuses) - len, "%s%u %llu",
                                k ? ", " : "", code[k], count[k]);
}

/*
 * What the servers logged while one transport was loaded: the web server's
 * and php-fpm's log lines from the offsets taken before its run (one front
 * is loaded at a time, and the logs settle after each), its front's status log.
 */
static void logs_read(struct stack_ctx *c, const struct web_front *w, const char *transport,
                      const long from[2], struct case_logs *l)
{
    const char *web = sup_find(&c->sup, w->name)->log, *fpm = sup_find(&c->sup, "php-fpm")->log;
    unsigned long long all = log_count(web, from[0], w->error_mark, NULL), known = 0;

    status_read(c, transport, l);
    for (unsigned i = 0; i < ARRAY_LEN(log_kinds); i++) {
        unsigned long long k = log_count(web, from[0], w->error_mark, log_kinds[i].text);
        /* two texts may name one kind: the first entry of a kind holds the count */
        unsigned j = 0;
        while (strcmp(log_kinds[j].kind, log_kinds[i].kind) != 0)
            j++;
        l->kinds[j] += k;
        known += k;
    }
    l->kinds[KIND_OTHER] = all > known ? all - known : 0;
    l->reached = log_count(fpm, from[1], "reached pm.max_children", NULL);
}

/* The web server's backend errors by kind, "timed out 3, reset 1", or "none". */
static void kinds_text(const struct case_logs *l, char *buf, size_t cap)
{
    size_t len = 0;

    snprintf(buf, cap, "none");
    for (unsigned i = 0; i <= KIND_OTHER && len < cap; i++)
        if (l->kinds[i] > 0)
            len += (size_t)snprintf(buf + len, cap - len, "%s%s %llu", len ? ", " : "",
                                    i < KIND_OTHER ? log_kinds[i].kind : "other", l->kinds[i]);
}

/*
 * Runs the http load on one front only (a run with errors ends its child, so
 * each transport has its own), reps 1, with the client's timeout shorter than
 * the run; errors are what is measured: the gate's verdict is not the stack's.
 */
static int case_load(struct stack_ctx *c, const struct web_front *w, const char *label,
                     const struct fpm_eps *e, unsigned t, struct case_run *r, struct hb_err *err)
{
    struct stack_args a = { .n = 0 };
    struct stack_cell cell;
    bool invalid = c->invalid;
    int rc;

    stack_arg(&a, "hopbench");
    stack_arg(&a, "run");
    stack_arg(&a, "http");
    stack_arg(&a, "%s", e->front[t]);
    stack_arg(&a, "--path");
    stack_arg(&a, "/bench.php");
    stack_arg(&a, "--expect-body");
    stack_arg(&a, "bench");
    stack_arg(&a, "--timeout");
    stack_arg(&a, CLIENT_TIMEOUT);
    fpm_observe_args(c, w, e, &a);
    /* the case's cell, both arms named: this child loads arm t, labelled "overload.unix" */
    stack_cell_init(&cell, label, "tcp", "unix");
    fprintf(c->out, "measuring %s, backend %s ...\n", w->name, t ? "unix" : "tcp");
    fflush(c->out);
    rc = stack_measure_one(c, &a, &cell, t, 0, err);
    c->invalid = invalid;
    if (rc == 0) rc = run_read(c, r, t, err);
    if (rc == 0) rc = sup_alive(&c->sup, err);
    return rc;
}

/* The failure cases' run settings: reps 1, -c and -d of the case unless given. */
static void case_timing(struct stack_ctx *c, unsigned conns, uint64_t short_ns, uint64_t long_ns)
{
    c->reps = 1;
    c->conns = case_conns(c, conns);
    if (c->o->duration_ns == 0) c->duration_ns = c->o->short_mode ? short_ns : long_ns;
}

/* The summed sizes of the web server's log and the two status logs. */
static long long logs_size(struct stack_ctx *c, const struct web_front *w)
{
    const char *names[] = { "status-tcp.log", "status-unix.log" };
    char path[PATH_MAX];
    long long sum = file_size(sup_find(&c->sup, w->name)->log);

    for (unsigned i = 0; i < ARRAY_LEN(names); i++) {
        sup_path(&c->sup, names[i], path, sizeof(path));
        sum += file_size(path);
    }
    return sum;
}

/*
 * Waits until the requests still in the web server have ended and are logged:
 * those the client left when it stopped are still answered, and a backend
 * connection the kernel dropped fails only after the web server's timeouts
 * (connect, then read: twice BACKEND_TIMEOUT), and a front that holds its log
 * lines back writes them up to w->log_lag_s later, so at least that long,
 * then until the logs stop growing for the lag and 0.5 s (a request that ends
 * late puts its error line in the log at once and its status line only at
 * the front's next write), 10 s at most (and twice the lag).
 */
static void logs_settle(struct stack_ctx *c, const struct web_front *w)
{
    uint64_t t0 = now_ns(), still_since = t0, lag = (uint64_t)w->log_lag_s * NS_PER_S;
    uint64_t least = t0 + (uint64_t)2 * BACKEND_TIMEOUT * NS_PER_S + lag,
             end = t0 + 10 * NS_PER_S + 2 * lag, still = lag + NS_PER_S / 2;
    long long last = logs_size(c, w);

    while (now_ns() < end && (now_ns() < least || now_ns() < still_since + still) &&
           !atomic_load(c->stop)) {
        sleep_until_ns(now_ns() + 50 * NS_PER_MS, c->stop);
        long long size = logs_size(c, w);
        if (size != last) still_since = now_ns();
        last = size;
    }
}

/* The number after "NAME:" at the start of a line of text, or -1. */
static long long status_field(const char *text, const char *name)
{
    size_t n = strlen(name);

    for (const char *p = text; p != NULL && *p != '\0';
         p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        if (strncmp(p, name, n) == 0 && p[n] == ':') return strtoll(p + n + 1, NULL, 10);
    return -1;
}

/* php-fpm's status page of the pool of transport t: its listen-queue figures into q. */
static void fpm_lq_read(const struct fpm_eps *e, unsigned t, struct fpm_lq *q)
{
    struct sup_check chk = { .svc = "php-fpm", .proto = "fcgi" };
    struct hb_err err = { 0 };
    char page[4096];

    memset(q, 0, sizeof(*q));
    chk.opts.fcgi.path = "/status";
    chk.opts.fcgi.script = "/status";
    if (endpoint_parse(&chk.ep, e->fpm[t], &err) < 0) {
        snprintf(q->why, sizeof(q->why), "%s", err.msg);
        return;
    }
    if (sup_fcgi_get(&chk, 2 * NS_PER_S, page, sizeof(page), q->why, sizeof(q->why)) < 0) return;
    q->queue = status_field(page, "listen queue");
    q->max = status_field(page, "max listen queue");
    q->len = status_field(page, "listen queue len");
    q->ok = q->queue >= 0 && q->max >= 0 && q->len >= 0;
    if (!q->ok) snprintf(q->why, sizeof(q->why), "no listen queue on its status page");
}

/* Measures both transports of a failure case into r, l (index: 0 tcp, 1 unix). */
static int case_both(struct stack_ctx *c, const struct web_front *w, const char *label,
                     const struct fpm_eps *e, struct case_run r[2], struct case_logs l[2],
                     struct hb_err *err)
{
    int rc = 0;

    memset(l, 0, 2 * sizeof(*l));
    for (unsigned t = 0; t < 2 && rc == 0 && !stack_stopping(c); t++) {
        long before = time_wait_count(e->fpm_port), after;
        long from[2] = { file_size(sup_find(&c->sup, w->name)->log),
                         file_size(sup_find(&c->sup, "php-fpm")->log) };
        rc = case_load(c, w, label, e, t, &r[t], err);
        logs_settle(c, w);
        after = time_wait_count(e->fpm_port);
        logs_read(c, w, t ? "unix" : "tcp", from, &l[t]);
        fpm_lq_read(e, t, &l[t].lq);
        l[t].tw_delta = before < 0 || after < 0 ? 0 : after - before;
    }
    return rc;
}

/* The failure mode of one transport, named from what was measured. */
static void failure_mode(const struct case_run *r, const struct case_logs *l, char *buf, size_t cap)
{
    size_t len = 0;

    buf[0] = '\0';
    if (l->kinds[0] > 0)
        len += (size_t)snprintf(buf + len, cap - len,
                                "; fast 5xx: connect() to the full backlog fails at once (EAGAIN)");
    if (len < cap && l->kinds[1] > 0)
        len += (size_t)snprintf(buf + len, cap - len, "; connect refused");
    if (len < cap && l->kinds[2] > 0)
        len += (size_t)snprintf(buf + len, cap - len,
                                "; stalls: the backend did not answer within %u s (timed out)",
                                BACKEND_TIMEOUT);
    if (len < cap && l->kinds[4] > 0)
        len += (size_t)snprintf(buf + len, cap - len, "; backend connections reset");
    if (len < cap && r->timeouts > 0)
        len +=
            (size_t)snprintf(buf + len, cap - len, "; client timeouts after " CLIENT_TIMEOUT " s");
    if (len < cap && r->p99_ms >= 900)
        len += (size_t)snprintf(buf + len, cap - len, "; p99 %.0f ms: stalls of a second or more",
                                r->p99_ms);
    if (len < cap && len == 0 && r->s5xx + l->s5xx == 0)
        snprintf(buf, cap, "; none: every reply 2xx, p99 %.1f ms", r->p99_ms);
    else if (len == 0)
        snprintf(buf, cap, "; 5xx without a backend error in the log");
}

/* A kernel figure of the run, "+12" or "n/a". */
static const char *kernel_text(char *buf, size_t cap, double v, bool delta)
{
    if (isnan(v))
        snprintf(buf, cap, "n/a");
    else
        snprintf(buf, cap, delta ? "%+.0f" : "%.0f", v);
    return buf;
}

/*
 * How the backlog of one transport's pool fared: php-fpm's own status page
 * (its listen queue now, at its most since the pool started, its length) and
 * the kernel's counters over the run.
 */
static void queue_report(FILE *f, unsigned t, const struct case_run *r, const struct fpm_lq *q)
{
    char a[32], b[32], c[32];

    if (q->ok)
        fprintf(f,
                "  php-fpm status page (pool %s): listen queue %lld, max listen queue %lld, "
                "listen queue len %lld%s\n",
                t ? "unix" : "tcp", q->queue, q->max, q->len,
                q->len > 0 && q->max >= q->len ? " (the queue was full)" : "");
    else
        fprintf(f, "  php-fpm status page (pool %s): n/a (%s)\n", t ? "unix" : "tcp", q->why);
    kernel_text(c, sizeof(c), r->accept_peak, false);
    if (t == 0)
        fprintf(f,
                "  kernel: ListenOverflows %s, ListenDrops %s over the run (TCP, the whole "
                "machine); backend accept queue peak %s (sock_diag)\n",
                kernel_text(a, sizeof(a), r->overflows, true),
                kernel_text(b, sizeof(b), r->drops, true), c);
    else
        fprintf(f,
                "  kernel: backend accept queue peak %s (sock_diag); ListenOverflows counts TCP "
                "only\n",
                c);
}

/*
 * Where the load met its limit on one transport: php-fpm's backlog (its
 * status page's max listen queue reached the queue's length, or the backend
 * socket's accept queue reached listen.backlog), its workers (its log's
 * "reached pm.max_children"), the backend's errors in the web server's log,
 * the front's own request slots (fewer than the client's connections).
 */
static void limit_line(FILE *f, const struct web_front *w, const struct fpm_knobs *k,
                       unsigned conns, const struct case_run *r, const struct case_logs *l)
{
    unsigned long long backend = 0;
    unsigned front = w->capacity(k);
    const char *sep = "";

    for (unsigned i = 0; i < KIND_OTHER; i++)
        backend += l->kinds[i];
    fprintf(f, "  limit hit:");
    if (l->lq.ok && l->lq.len > 0 && l->lq.max >= l->lq.len) {
        fprintf(f, " php-fpm's listen backlog (max listen queue %lld of %lld)", l->lq.max,
                l->lq.len);
        sep = ";";
    } else if (k->backlog > 0 && r->accept_peak >= k->backlog) {
        fprintf(f, " php-fpm's listen backlog (accept queue peak %.0f of %u)", r->accept_peak,
                k->backlog);
        sep = ";";
    }
    if (l->reached > 0) {
        fprintf(f, "%s php-fpm's workers (pm.max_children reached %llu time(s))", sep, l->reached);
        sep = ";";
    }
    if (backend > 0) {
        fprintf(f, "%s php-fpm's pool (%llu backend error(s) in %s's log)", sep, backend, w->name);
        sep = ";";
    }
    if (front < conns) {
        fprintf(f, "%s %s's own %u request slots for %u connections", sep, w->name, front, conns);
        sep = ";";
    }
    fprintf(f, "%s\n", sep[0] ? "" : " none seen");
}

/*
 * The two transports side by side, each way it can be read: the latency of
 * what succeeded at each percentile (which is lower where), what failed and
 * how, and TCP's SYN retransmits (each a connect that waited a second): a
 * queue that answers late and a backlog that fails fast or stalls read
 * opposite ways at the median and at the tail.
 */
static void both_ways(FILE *f, const struct case_run r[2])
{
    static const char *const names[] = { "p50", "p99", "p99.9", "mean" };
    const char *lower = "", *higher = "";
    char lo[64] = "", hi[64] = "", syn[48];

    if (!r[0].have || !r[1].have) return;
    fprintf(f, "both ways, unix against tcp:\n  what succeeded, ms:");
    for (unsigned i = 0; i < ARRAY_LEN(names); i++) {
        const double v[2][4] = { { r[0].p50_ms, r[0].p99_ms, r[0].p999_ms, r[0].mean_ms },
                                 { r[1].p50_ms, r[1].p99_ms, r[1].p999_ms, r[1].mean_ms } };
        fprintf(f, "%s %s %.2f against %.2f", i ? "," : "", names[i], v[1][i], v[0][i]);
        char *into = v[1][i] < v[0][i] ? lo : v[1][i] > v[0][i] ? hi : NULL;
        if (into != NULL)
            snprintf(into + strlen(into), 64 - strlen(into), "%s%s", into[0] ? ", " : "", names[i]);
    }
    lower = lo[0] ? lo : "none";
    higher = hi[0] ? hi : "none";
    fprintf(f,
            "\n  what failed: unix %llu of %llu (5xx %llu, client timeouts %llu), tcp %llu of %llu "
            "(5xx %llu, client timeouts %llu); SYN retransmits over the tcp run: %s\n"
            "  unix lower at: %s; higher at: %s\n",
            r[1].failed, r[1].requests, r[1].s5xx, r[1].timeouts, r[0].failed, r[0].requests,
            r[0].s5xx, r[0].timeouts, kernel_text(syn, sizeof(syn), r[0].syn_retrans, false), lower,
            higher);
}

static void case_report(FILE *f, const struct web_front *w, const struct fpm_knobs *k,
                        unsigned conns, const struct case_run r[2], const struct case_logs l[2])
{
    for (unsigned t = 0; t < 2; t++) {
        char kinds[256], mode[512];
        if (!r[t].have) continue;
        char ops[32], req[32], ok2[32], s5[32], failed[32], s5log[32], tw[32];
        kinds_text(&l[t], kinds, sizeof(kinds));
        failure_mode(&r[t], &l[t], mode, sizeof(mode));
        text_number(ops, sizeof(ops), r[t].ops_s, 0);
        text_number(req, sizeof(req), (double)r[t].requests, 0);
        text_number(ok2, sizeof(ok2), (double)r[t].s2xx, 0);
        text_number(s5, sizeof(s5), (double)r[t].s5xx, 0);
        text_number(failed, sizeof(failed), (double)r[t].failed, 0);
        text_number(s5log, sizeof(s5log), (double)l[t].s5xx, 0);
        text_number(tw, sizeof(tw), (double)l[t].tw_delta, 0);
        fprintf(f,
                "%s:\n  client: %s ops/s; %s requests, 2xx %s, 5xx %s; errors: %s\n"
                "  succeeded: p50 %.2f ms, p99 %.2f ms, p99.9 %.2f ms, mean %.2f ms; failed: "
                "%s of %s\n"
                "  %s status log: %s (5xx %s)\n"
                "  %s log, backend errors: %s\n"
                "  php-fpm log: server reached pm.max_children %llu time(s)\n",
                t ? "unix" : "tcp", ops, req, ok2, s5, r[t].errors, r[t].p50_ms, r[t].p99_ms,
                r[t].p999_ms, r[t].mean_ms, failed, req, w->name, l[t].statuses, s5log, w->name,
                kinds, l[t].reached);
        queue_report(f, t, &r[t], &l[t].lq);
        fputs(r[t].agent, f);
        fprintf(f, "  TIME_WAIT on the backend port: %s%s\n", l[t].tw_delta > 0 ? "+" : "", tw);
        limit_line(f, w, k, conns, &r[t], &l[t]);
        fprintf(f, "  failure mode: %s\n", mode + 2);
    }
    both_ways(f, r);
}

/*
 * A failure case: the stack of k (with a status log per front and short
 * FastCGI timeouts) under the load of c, each transport alone; its report.
 */
static int case_failing(struct stack_ctx *c, const struct web_front *w, const char *label,
                        struct fpm_knobs *k, bool starve, struct case_run r[2],
                        struct case_logs l[2], struct hb_err *err)
{
    static struct fpm_eps e;
    int rc;

    k->status_log = true;
    k->timeout_s = BACKEND_TIMEOUT;
    memset(r, 0, 2 * sizeof(*r));
    rc = case_up(c, w, label, k, starve, &e, err);
    if (rc == -EINTR) return 0;
    if (rc < 0) return rc;
    fprintf(c->out,
            "%s: %u connection(s), %.2f s per transport after %.2f s warm-up; %s's FastCGI "
            "timeouts %u s, the client's " CLIENT_TIMEOUT " s; errors are the result here, not "
            "a failed gate\n",
            label, c->conns, (double)c->duration_ns / 1e9, (double)c->warmup_ns / 1e9, w->name,
            BACKEND_TIMEOUT);
    fprintf(c->out,
            "%s: limits: %u client connection(s); %s holds %u request(s) at once%s; php-fpm %u "
            "worker(s), listen.backlog %u\n",
            label, c->conns, w->name, w->capacity(k),
            w->capacity(k) < c->conns ? " (fewer: the front is a limit too)" : "", k->children,
            k->backlog);
    stack_plan(c, 2, 1); /* each transport alone, once */
    rc = case_both(c, w, label, &e, r, l, err);
    fprintf(c->out, "\n");
    case_report(c->out, w, k, c->conns, r, l);
    return rc;
}

static int case_overload(struct stack_ctx *c, const struct web_front *w, struct hb_err *err)
{
    struct case_run r[2];
    struct case_logs l[2];
    struct fpm_knobs k;

    fpm_knobs_of(FPM_OPTIMIZED, &k);
    k.children = 4;
    k.backlog = 4;
    case_timing(c, c->o->short_mode ? 64 : 128, 1 * NS_PER_S, 5 * NS_PER_S);
    /* a request slot in front for every connection: the overload is at php-fpm's pool */
    k.web_workers = c->conns;
    return case_failing(c, w, "overload", &k, false, r, l, err);
}

/* The starvation named, or its absence, for one transport. */
static void starve_line(FILE *f, const struct web_front *w, const struct fpm_knobs *k,
                        const char *t, const struct case_run *r, const struct case_logs *l)
{
    char how[160];
    unsigned kept = w->kept(k, 0, how, sizeof(how));

    if (l->s504 + l->kinds[2] + r->timeouts > 0)
        fprintf(f,
                "pool starved: %u kept FastCGI connections for %u workers (backend %s): %llu "
                "request(s) waited for a worker until %s's %u s FastCGI timeout (504 in "
                "%s's status log: %llu; 'timed out' in its error log: %llu; client timeouts: "
                "%llu); p99 %.1f ms against p50 %.2f ms\n",
                kept, k->children, t, l->s504 > l->kinds[2] ? l->s504 : l->kinds[2], w->name,
                BACKEND_TIMEOUT, w->name, l->s504, l->kinds[2], r->timeouts, r->p99_ms, r->p50_ms);
    else
        fprintf(f,
                "pool not starved in this run (backend %s): %u kept FastCGI connections for %u "
                "workers, yet no 504, no timeout; p99 %.1f ms against p50 %.2f ms\n",
                t, kept, k->children, r->p99_ms, r->p50_ms);
}

static int case_starve(struct stack_ctx *c, const struct web_front *w, struct hb_err *err)
{
    struct case_run r[2];
    struct case_logs l[2];
    struct fpm_knobs k;
    int rc;

    fpm_knobs_of(FPM_REUSE, &k);
    k.children = 4;
    k.kept = 8;
    k.keep_all = false;
    case_timing(c, 16, 3 * NS_PER_S, 6 * NS_PER_S);
    rc = case_failing(c, w, "starve", &k, true, r, l, err);
    for (unsigned t = 0; t < 2; t++)
        if (r[t].have) starve_line(c->out, w, &k, t ? "unix" : "tcp", &r[t], &l[t]);
    return rc;
}

int fpm_cases(struct stack_ctx *c, const struct web_front *w, struct hb_err *err)
{
    switch (c->o->cases) {
    case STACK_CASE_ABLATION:
        return case_ablation(c, w, err);
    case STACK_CASE_POOL:
        return case_pool(c, w, err);
    case STACK_CASE_OVERLOAD:
        return case_overload(c, w, err);
    case STACK_CASE_STARVE:
        return case_starve(c, w, err);
    }
    return hb_fail(err, -EINVAL, "stack: no such case");
}
