/*
 * measure: the run children of a stack, their evidence read back, the
 * stack's table, --hold (see measure.h).
 */
#include "stack/measure.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cost.h"
#include "endpoint.h"
#include "report/saving.h"
#include "stats.h"

/* How long a run child gets to end after the SIGINT it was forwarded. */
#define CHILD_STOP_NS (15 * NS_PER_S)

void stack_arg(struct stack_args *a, const char *fmt, ...)
{
    va_list ap;
    size_t room = sizeof(a->store) - a->used;
    int n;

    if (a->n >= STACK_MAX_ARGS || room == 0) return;
    va_start(ap, fmt);
    n = vsnprintf(a->store + a->used, room, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= room) {
        a->store[a->used] = '\0';
        return;
    }
    a->v[a->n++] = a->store + a->used;
    a->v[a->n] = NULL;
    a->used += (size_t)n + 1;
}

int stack_free_port(unsigned *port, struct hb_err *err)
{
    uint64_t seed = now_ns() ^ ((uint64_t)getpid() << 32);

    /* 10000..31999: under Linux's default ephemeral range, so no client's port can take it. */
    for (int i = 0; i < 200; i++) {
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        unsigned p = 10000 + (unsigned)((seed >> 33) % 22000);
        struct sockaddr_in a = { .sin_family = AF_INET,
                                 .sin_port = htons((uint16_t)p),
                                 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd == -1) return hb_fail(err, -errno, "socket: %s", strerror(errno));
        int rc = bind(fd, (struct sockaddr *)&a, sizeof(a));
        close(fd);
        if (rc == 0) {
            *port = p;
            return 0;
        }
    }
    return hb_fail(err, -EADDRINUSE, "no free TCP port on 127.0.0.1 between 10000 and 31999");
}

bool stack_stopping(struct stack_ctx *c)
{
    if (atomic_load(c->stop)) c->interrupted = true;
    return c->interrupted;
}

/* Forks /proc/self/exe with argv, stdout to log; returns its pid or a negative errno. */
static pid_t child_spawn(const struct stack_args *a, const char *log)
{
    int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    char *argv[STACK_MAX_ARGS + 1];
    pid_t pid;

    /* execv's argv is char *const[]: the same pointers, copied, not cast */
    memcpy(argv, a->v, sizeof(argv));
    if (fd == -1) return -errno;
    pid = fork();
    if (pid == 0) {
        if (dup2(fd, STDOUT_FILENO) == -1) _exit(127);
        signal(SIGPIPE, SIG_DFL);
        execv("/proc/self/exe", argv);
        _exit(127);
    }
    close(fd);
    return pid == -1 ? -errno : pid;
}

/* Waits for the run child; a stop signal is forwarded to it once as SIGINT. Its wait status. */
static int child_wait(struct stack_ctx *c, pid_t pid)
{
    uint64_t stopped_at = 0;
    int st = 0;

    for (;;) {
        pid_t got = waitpid(pid, &st, WNOHANG);
        if (got == pid || (got == -1 && errno != EINTR)) return st;
        if (stopped_at == 0 && atomic_load(c->stop)) {
            c->interrupted = true;
            stopped_at = now_ns();
            kill(pid, SIGINT);
        }
        if (stopped_at != 0 && now_ns() > stopped_at + CHILD_STOP_NS) kill(pid, SIGKILL);
        sleep_until_ns(now_ns() + 20 * NS_PER_MS, NULL);
    }
}

/* A number in the evidence, or NAN (absent, or {"unavailable": why}). */
static double jnum(const json_t *o, const char *path)
{
    char key[64];
    const char *dot;

    while ((dot = strchr(path, '.')) != NULL) {
        snprintf(key, sizeof(key), "%.*s", (int)(dot - path), path);
        o = json_object_get(o, key);
        path = dot + 1;
    }
    o = json_object_get(o, path);
    return json_is_number(o) ? json_number_value(o) : NAN;
}

void stack_cell_init(struct stack_cell *cell, const char *label, const char *a, const char *b)
{
    memset(cell, 0, sizeof(*cell));
    snprintf(cell->label, sizeof(cell->label), "%s", label);
    snprintf(cell->arm[0].transport, sizeof(cell->arm[0].transport), "%s", a);
    snprintf(cell->arm[1].transport, sizeof(cell->arm[1].transport), "%s", b);
}

/*
 * Adds each kind the invalid run saw (an error count, a non-2xx status class,
 * or "saturated" for an open loop below 99 % of its rate) to a->kinds.
 */
static void arm_kinds(struct stack_arm *a, const json_t *run)
{
    static const char *const objs[] = { "errors", "status" };
    size_t len = strlen(a->kinds);

    if (json_is_true(json_object_get(json_object_get(run, "open_loop"), "saturated")) &&
        strstr(a->kinds, "saturated") == NULL && len + 12 < sizeof(a->kinds))
        len += (size_t)snprintf(a->kinds + len, sizeof(a->kinds) - len, "%ssaturated",
                                len ? ", " : "");

    for (unsigned i = 0; i < ARRAY_LEN(objs); i++) {
        const char *key;
        json_t *v;
        json_object_foreach(json_object_get(run, objs[i]), key, v)
        {
            char name[40];
            if (!json_is_integer(v) || json_integer_value(v) == 0 || strcmp(key, "2xx") == 0)
                continue;
            snprintf(name, sizeof(name), "%s%s", i ? "status " : "", key);
            if (strstr(a->kinds, name) != NULL || len + strlen(name) + 3 > sizeof(a->kinds))
                continue;
            len += (size_t)snprintf(a->kinds + len, sizeof(a->kinds) - len, "%s%s", len ? ", " : "",
                                    name);
        }
    }
}

/* One run record into arm k, or into its endpoint's arm when k is negative. */
static void cell_add(struct stack_cell *cell, const json_t *run, int k)
{
    struct stack_arm *a;

    if (k < 0) {
        double e = jnum(run, "cell");
        if (!(e == 0 || e == 1)) return;
        k = (int)e;
    }
    a = &cell->arm[k];
    if (a->n == STACK_MAX_REPS) return;
    a->requests += (unsigned long long)jnum(run, "requests");
    if (json_is_true(json_object_get(json_object_get(run, "open_loop"), "saturated")))
        a->saturated++;
    if (json_is_false(json_object_get(run, "valid"))) {
        a->failed++;
        a->errors += (unsigned long long)jnum(run, "errors_total");
        arm_kinds(a, run);
    }
    if (!json_is_true(json_object_get(run, "valid")) ||
        json_is_true(json_object_get(run, "interrupted")))
        return; /* counted in requests, left out of the figures */
    a->ops_s[a->n] = jnum(run, "ops_per_s");
    a->p50_us[a->n] = jnum(run, "latency_ns.p50") / 1e3;
    a->p99_us[a->n] = jnum(run, "latency_ns.p99") / 1e3;
    a->mean_us[a->n] = jnum(run, "latency_ns.mean") / 1e3;
    a->rate[a->n] = isnan(jnum(run, "open_loop.rate")) ? 0 : jnum(run, "open_loop.rate");
    a->client_us[a->n] = jnum(run, "client_cpu_ns_per_op") / 1e3;
    a->svc_us[a->n] = jnum(run, "observed.cpu.cgroup_ns_per_op") / 1e3;
    a->pids_us[a->n] = jnum(run, "observed.cpu.server_ns_per_op") / 1e3;
    if (!isnan(a->svc_us[a->n])) a->nsvc++;
    a->n++;
}

/* The child's JSONL file, run records only, into cell (arm k, or by endpoint when negative). */
static int cell_read(struct stack_cell *cell, const char *path, int k, struct hb_err *err)
{
    json_error_t jerr;
    FILE *f = fopen(path, "re");
    char *big = NULL;
    size_t cap = 0;

    if (f == NULL) return hb_fail(err, -errno, "cannot read %s: %s", path, strerror(errno));
    while (getline(&big, &cap, f) > 0) {
        json_t *rec = json_loads(big, 0, &jerr);
        const char *kind = json_string_value(json_object_get(rec, "record"));
        if (kind != NULL && strcmp(kind, "run") == 0) cell_add(cell, rec, k);
        json_decref(rec);
    }
    free(big);
    fclose(f);
    return 0;
}

/* Appends the child's JSONL file to --jsonl. */
static int jsonl_pass(struct stack_ctx *c, const char *path, struct hb_err *err)
{
    char buf[65536];
    ssize_t got;
    int fd, rc = 0;

    if (!c->jsonl_open) return 0;
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd == -1) return hb_fail(err, -errno, "cannot read %s: %s", path, strerror(errno));
    while (rc == 0 && (got = read(fd, buf, sizeof(buf))) > 0)
        rc = outfile_write(&c->jsonl, buf, (size_t)got, err);
    close(fd);
    return rc;
}

/* The common options of every run child. */
static void args_common(struct stack_ctx *c, struct stack_args *a, unsigned reps,
                        uint64_t duration_ns, const char *json, const char *jsonl)
{
    stack_arg(a, "--reps");
    stack_arg(a, "%u", reps);
    stack_arg(a, "--order");
    stack_arg(a, "abba");
    stack_arg(a, "-d");
    stack_arg(a, "%.3f", (double)duration_ns / 1e9);
    stack_arg(a, "--warmup");
    stack_arg(a, "%.3f", (double)c->warmup_ns / 1e9);
    stack_arg(a, "-c");
    stack_arg(a, "%u", c->conns);
    stack_arg(a, "--json");
    stack_arg(a, "%s", json);
    stack_arg(a, "--jsonl");
    stack_arg(a, "%s", jsonl);
}

/*
 * The label of arm i of cell, "set-pipeline-1.tcp": the cell's label (a space
 * as '-', what a label cannot hold left out, from its first letter or digit)
 * and the arm's name, numbered when both arms have the same. The same from one
 * stack run to the next, so compare matches their runs whatever free port and
 * socket path each had.
 */
static void arm_label(char *buf, size_t cap, const struct stack_cell *cell, unsigned i)
{
    const char *arm = cell->arm[i].transport;
    bool same = strcmp(cell->arm[0].transport, cell->arm[1].transport) == 0;
    size_t n = 0, room = cap - strlen(arm) - 4; /* '.', the number, the NUL */

    for (const char *p = cell->label; *p != '\0' && n < room; p++) {
        char ch = *p;
        if (ch == ' ') ch = '-';
        if (isalnum((unsigned char)ch) || (n > 0 && strchr("-_.", ch) != NULL)) buf[n++] = ch;
    }
    if (n == 0)
        snprintf(buf, cap, "%s", arm);
    else
        snprintf(buf + n, cap - n, ".%s", arm);
    if (same) snprintf(buf + strlen(buf), cap - strlen(buf), "%u", i + 1);
}

/* Copies the child's log (its tables: which errors the gate saw) to out. */
static void log_copy(FILE *out, const char *path)
{
    char line[512];
    FILE *f = fopen(path, "re");

    if (f == NULL) return;
    while (fgets(line, sizeof(line), f) != NULL)
        fputs(line, out);
    fclose(f);
}

/* One line per arm (arm k, or both when negative) the gate failed: runs, errors, their kinds. */
static void gate_lines(FILE *out, const struct stack_cell *cell, int k)
{
    for (unsigned t = 0; t < 2; t++) {
        const struct stack_arm *a = &cell->arm[t];
        if (a->failed == 0 || (k >= 0 && (unsigned)k != t)) continue;
        fprintf(out,
                "gate: %s over %s: %u run(s) failed with %llu error(s) (%s): the result is "
                "invalid\n",
                cell->label, a->transport, a->failed, a->errors,
                a->kinds[0] ? a->kinds : "no op completed");
    }
}

/* A run child with reps runs of duration_ns; its runs into cell (arm k, or by endpoint when
 * negative). */
static int measure_child(struct stack_ctx *c, struct stack_args *args, struct stack_cell *cell,
                         int arm, unsigned reps, uint64_t duration_ns, struct hb_err *err)
{
    char json[PATH_MAX], jsonl[PATH_MAX], log[PATH_MAX], name[32];
    unsigned k = ++c->nchild;
    int st, rc;

    snprintf(name, sizeof(name), "run-%u.json", k);
    sup_path(&c->sup, name, json, sizeof(json));
    snprintf(name, sizeof(name), "run-%u.jsonl", k);
    sup_path(&c->sup, name, jsonl, sizeof(jsonl));
    snprintf(name, sizeof(name), "run-%u.out", k);
    sup_path(&c->sup, name, log, sizeof(log));
    args_common(c, args, reps, duration_ns, json, jsonl);
    /* each endpoint its label: both arms, or the one arm this child loads */
    for (unsigned i = arm < 0 ? 0 : (unsigned)arm; i < (arm < 0 ? 2u : (unsigned)arm + 1); i++) {
        char label[ENDPOINT_LABEL_MAX];
        arm_label(label, sizeof(label), cell, i);
        stack_arg(args, "--label");
        stack_arg(args, "%s", label);
    }
    if (args->n >= STACK_MAX_ARGS) return hb_fail(err, -E2BIG, "too many arguments for run");
    pid_t pid = child_spawn(args, log);
    if (pid < 0) return hb_fail(err, pid, "cannot start hopbench run: %s", strerror(-pid));
    st = child_wait(c, pid);
    if (WIFEXITED(st) && WEXITSTATUS(st) == 130) c->interrupted = true;
    if (WIFEXITED(st) && WEXITSTATUS(st) == 2) {
        c->invalid = true;
        log_copy(c->out, log);
    }
    if (!WIFEXITED(st) ||
        (WEXITSTATUS(st) != 0 && WEXITSTATUS(st) != 2 && WEXITSTATUS(st) != 130)) {
        log_copy(c->out, log);
        return hb_fail(err, -ECHILD, "the run of %s ended badly (wait status %d)", cell->label, st);
    }
    rc = jsonl_pass(c, jsonl, err);
    if (rc == 0 && access(jsonl, R_OK) == 0) rc = cell_read(cell, jsonl, arm, err);
    if (rc == 0 && WIFEXITED(st) && WEXITSTATUS(st) == 2) gate_lines(c->out, cell, arm);
    if (rc == 0 && arm < 0 && c->ncosted < STACK_MAX_COSTED && access(jsonl, R_OK) == 0) {
        struct stack_costed *m = &c->costed[c->ncosted++];
        snprintf(m->label, sizeof(m->label), "%s", cell->label);
        snprintf(m->jsonl, sizeof(m->jsonl), "%s", jsonl);
        for (unsigned t = 0; t < 2; t++)
            snprintf(m->transport[t], sizeof(m->transport[t]), "%s", cell->arm[t].transport);
    }
    return rc;
}

int stack_measure(struct stack_ctx *c, struct stack_args *args, struct stack_cell *cell,
                  struct hb_err *err)
{
    return measure_child(c, args, cell, -1, c->reps, c->duration_ns, err);
}

int stack_measure_one(struct stack_ctx *c, struct stack_args *args, struct stack_cell *cell,
                      unsigned arm, uint64_t duration_ns, struct hb_err *err)
{
    return measure_child(c, args, cell, arm == 0 ? 0 : 1, 1,
                         duration_ns ? duration_ns : c->duration_ns, err);
}

struct costed_reading {
    struct cost_set *set;
    const struct stack_costed *m;
};

/* One run of a measurement into the cost set, its transport the hop under test's. */
static int costed_take(void *ctx, size_t idx, json_t *run, struct hb_err *err)
{
    const struct costed_reading *r = ctx;
    double k = jnum(run, "cell");

    (void)idx;
    if ((k == 0 || k == 1) &&
        json_object_set_new(run, "transport", json_string(r->m->transport[(int)k])) < 0)
        return hb_fail(err, -ENOMEM, "out of memory");
    return cost_set_add(r->set, run, err);
}

/* The cost set of measurement m: 0 or a negative errno with err set. */
static int costed_read(const struct stack_costed *m, struct cost_set *set, struct hb_err *err)
{
    struct costed_reading r = { set, m };
    struct evidence_reader reader = { .run = costed_take, .ctx = &r };
    json_t *head = NULL;
    int rc = evidence_read(m->jsonl, &reader, &head, err);

    json_decref(head);
    return rc;
}

void stack_cost(struct stack_ctx *c)
{
    struct cost_plan plan = { .price_usd = COST_PRICE_USD, .seed = 1 };

    if (c->ncosted == 0) return;
    fprintf(c->out,
            "\nWhat the Unix socket saves, per request: 'hopbench cost' on each measurement's "
            "own runs,\neach run as the transport of the hop under test (saved = tcp - unix, "
            "medians;\n[95 %% bootstrap interval], seed %llu; the monthly figures: 'hopbench cost' "
            "on that\nmeasurement's part of --jsonl). Covers:",
            (unsigned long long)plan.seed);
    for (unsigned i = 0; i < c->ncosted; i++)
        fprintf(c->out, "%s %s", i ? "," : "", c->costed[i].label);
    fprintf(c->out, ".\nFigures: client = hopbench; server = the run's --server-pid processes, "
                    "server cgroup =\nits --server-cgroup (the tables above name them); system = "
                    "every CPU of the machine.\n");
    for (unsigned i = 0; i < c->ncosted; i++) {
        struct cost_set set = { 0 };
        struct hb_err e = { 0 };
        if (costed_read(&c->costed[i], &set, &e) < 0)
            fprintf(c->out, "%s: cannot be priced: %s\n", c->costed[i].label, e.msg);
        else
            report_saving_brief(c->out, c->costed[i].label, &set, &plan);
        cost_set_release(&set);
    }
}

static double median_of(const double *x, unsigned n)
{
    struct stats_summary s;

    return stats_summarize(x, n, &s) == 0 ? s.median : NAN;
}

/* The unix÷tcp verdict of one figure ("x1.03 ~ +3 % [-2 %, +9 %] (p=.. n=..)"), or "-" when it
 * cannot be had. */
static void verdict_of(const double *a, unsigned na, const double *b, unsigned nb, char *buf,
                       size_t cap)
{
    double ratio, lo, hi, u, p;

    snprintf(buf, cap, "-");
    if (na < 2 || nb < 2) return;
    if (stats_bootstrap_ratio(a, na, b, nb, 2000, 0.95, 1, &ratio, &lo, &hi) < 0) return;
    if (stats_mann_whitney(a, na, b, nb, &u, &p) < 0) return;
    char delta[80];
    stats_format_delta(delta, sizeof(delta), ratio, lo, hi, p, 0.05, na, nb);
    snprintf(buf, cap, "x%.2f %s", ratio, delta);
}

static void print_figure(FILE *f, double v, int width, int prec)
{
    if (isnan(v))
        fprintf(f, " %*s", width, "n/a");
    else
        fprintf(f, " %*.*f", width, prec, v);
}

void stack_table(FILE *f, const char *svc, const char *pids, const struct stack_cell *cells,
                 unsigned n)
{
    fprintf(f, "\n%-16s %-9s %11s %9s %9s %12s", "cell", "transport", "ops/s", "p50 us", "p99 us",
            svc);
    if (pids) fprintf(f, " %12s", pids);
    fprintf(f, " %12s %5s\n%-16s %-9s %11s %9s %9s %12s", "client", "runs", "", "", "(median)", "",
            "", "CPU us/op");
    if (pids) fprintf(f, " %12s", "CPU us/op");
    fprintf(f, " %12s\n", "CPU us/op");
    for (unsigned i = 0; i < n; i++) {
        const struct stack_cell *c = &cells[i];
        for (unsigned t = 0; t < 2; t++) {
            const struct stack_arm *a = &c->arm[t];
            fprintf(f, "%-16s %-9s", t == 0 ? c->label : "", a->transport);
            print_figure(f, median_of(a->ops_s, a->n), 11, 0);
            print_figure(f, median_of(a->p50_us, a->n), 9, 1);
            print_figure(f, median_of(a->p99_us, a->n), 9, 1);
            print_figure(f, a->nsvc == a->n ? median_of(a->svc_us, a->n) : NAN, 12, 2);
            if (pids) print_figure(f, median_of(a->pids_us, a->n), 12, 2);
            print_figure(f, median_of(a->client_us, a->n), 12, 2);
            fprintf(f, " %5u\n", a->n);
        }
        char ops[96], cpu[96];
        const struct stack_arm *tcp = &c->arm[0], *ux = &c->arm[1];
        verdict_of(tcp->ops_s, tcp->n, ux->ops_s, ux->n, ops, sizeof(ops));
        if (tcp->nsvc == tcp->n && ux->nsvc == ux->n)
            verdict_of(tcp->svc_us, tcp->n, ux->svc_us, ux->n, cpu, sizeof(cpu));
        else
            snprintf(cpu, sizeof(cpu), "-");
        fprintf(f, "%-16s unix/tcp  ops/s %s; %s CPU/op %s\n", "", ops, svc, cpu);
    }
}

int stack_hold(struct stack_ctx *c, struct hb_err *err)
{
    fprintf(c->out, "holding: the services stay up until Ctrl-C (SIGINT) or SIGTERM\n");
    fflush(c->out);
    while (!atomic_load(c->stop)) {
        int rc = sup_alive(&c->sup, err);
        if (rc < 0) return rc;
        sleep_until_ns(now_ns() + 100 * NS_PER_MS, c->stop);
    }
    return 0;
}
