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
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cost.h"
#include "endpoint.h"
#include "evidence.h"
#include "evidence/runview.h"
#include "evidence/schema.h"
#include "progress.h"
#include "report/csv.h"
#include "report/html.h"
#include "report/profile.h"
#include "report/saving.h"
#include "stack/readings.h"
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

void stack_plan(struct stack_ctx *c, unsigned children, unsigned runs_each)
{
    c->plan_children += children;
    c->plan_runs += children * runs_each;
}

/*
 * The environment of the next run child, which starts runs runs: this
 * process's, with PROGRESS_ENV saying the child's place in the plan (in
 * place of any it had). env holds at least as many entries as environ plus
 * two; var is the child's PROGRESS_ENV entry.
 */
static void child_env(struct stack_ctx *c, unsigned runs, char **env, char *var, size_t cap)
{
    static const char name[] = PROGRESS_ENV "=";
    unsigned k = c->nchild, n = c->plan_children > k ? c->plan_children : k;
    unsigned after = c->plan_runs > c->runs_begun + runs ? c->plan_runs - c->runs_begun - runs : 0;
    uint64_t after_ms = (uint64_t)after * (c->warmup_ns + c->duration_ns) / NS_PER_MS;
    size_t i = 0;

    c->runs_begun += runs;
    for (char **e = environ; *e != NULL; e++)
        if (strncmp(*e, name, sizeof(name) - 1) != 0) env[i++] = *e;
    snprintf(var, cap, "%s%u/%u+%llu", name, k, n, (unsigned long long)after_ms);
    env[i++] = var;
    env[i] = NULL;
}

/*
 * Forks /proc/self/exe with argv and the environment of a run child of runs
 * runs (child_env), stdout to log, in the run children's namespace (--netns);
 * returns its pid or a negative errno.
 */
static pid_t child_spawn(struct stack_ctx *c, enum netns_side side, const struct stack_args *a,
                         unsigned runs, const char *log)
{
    size_t nenv = 0;
    char *argv[STACK_MAX_ARGS + 1], **env, var[64];
    int fd;
    pid_t pid, parent = getpid();

    for (char **e = environ; *e != NULL; e++)
        nenv++;
    env = calloc(nenv + 2, sizeof(*env));
    if (env == NULL) return -ENOMEM;
    child_env(c, runs, env, var, sizeof(var));
    /* execve's argv is char *const[]: the same pointers, copied, not cast */
    memcpy(argv, a->v, sizeof(argv));
    fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd == -1) {
        free(env);
        return -errno;
    }
    pid = fork();
    if (pid == 0) {
        /* hopbench killed outright: its run child goes too (kept across the exec of itself) */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(127);
        if (dup2(fd, STDOUT_FILENO) == -1) _exit(127);
        if (netns_enter(&c->netns, side) < 0) _exit(127);
        signal(SIGPIPE, SIG_DFL);
        execve("/proc/self/exe", argv, env);
        _exit(127);
    }
    if (pid == -1) pid = -errno;
    close(fd);
    free(env);
    return pid;
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

void stack_cell_init(struct stack_cell *cell, const char *label, const char *a, const char *b)
{
    size_t k = 0;

    memset(cell, 0, sizeof(*cell));
    snprintf(cell->label, sizeof(cell->label), "%s", label);
    for (const char *p = label; *p != '\0' && k + 6 < sizeof(cell->title); p++) {
        if (p[0] == '-' && p[1] == '>') {
            memcpy(cell->title + k, " \xe2\x86\x92 ", 5); /* " → " */
            k += 5;
            p++;
        } else {
            cell->title[k++] = *p;
        }
    }
    cell->title[k] = '\0';
    snprintf(cell->arm[0].transport, sizeof(cell->arm[0].transport), "%s", a);
    snprintf(cell->arm[1].transport, sizeof(cell->arm[1].transport), "%s", b);
}

/* Adds name to the kinds of arm a ("status 4xx, reset"), once, when it fits. */
static void kind_add(struct stack_arm *a, const char *name)
{
    size_t len = strlen(a->kinds);

    if (strstr(a->kinds, name) != NULL || len + strlen(name) + 3 > sizeof(a->kinds)) return;
    snprintf(a->kinds + len, sizeof(a->kinds) - len, "%s%s", len ? ", " : "", name);
}

/*
 * Adds each kind the invalid run saw (an error count, a non-2xx status class,
 * or "saturated" for an open loop below 99 % of its rate) to a->kinds.
 */
static void arm_kinds(struct stack_arm *a, const struct run_view *v)
{
    char name[40];

    if (v->saturated) kind_add(a, "saturated");
    for (unsigned i = 0; i < v->nerrors; i++)
        if (v->errors[i].n != 0) kind_add(a, v->errors[i].kind);
    for (unsigned i = 0; i < v->nstatus; i++) {
        if (v->status[i].n == 0 || strcmp(v->status[i].kind, "2xx") == 0) continue;
        snprintf(name, sizeof(name), "status %s", v->status[i].kind);
        kind_add(a, name);
    }
}

/*
 * The run's services (observed.services, in the child's --service order) into
 * its arm: each one's CPU per op, PSS and working set; their sum with the
 * client's and the system's CPU per op. The cell takes the names of the first
 * run that has them.
 */
static void cell_services(struct stack_cell *cell, struct stack_arm *a, const struct run_view *v)
{
    unsigned r = a->n;

    if (cell->nsvc == 0)
        for (unsigned i = 0; i < v->nsvc && i < STACK_MAX_SVC; i++) {
            snprintf(cell->svc[i], sizeof(cell->svc[i]), "%s",
                     v->svc[i].name ? v->svc[i].name : "?");
            cell->nsvc = i + 1;
        }
    for (unsigned i = 0; i < STACK_MAX_SVC; i++) {
        bool has = i < v->nsvc;
        a->svc_us[i][r] = has ? v->svc[i].cpu_ns_per_op / 1e3 : NAN;
        a->pss_mib[i][r] = has ? v->svc[i].pss_end / (1024.0 * 1024.0) : NAN;
        a->ws_mib[i][r] = has ? v->svc[i].ws_end / (1024.0 * 1024.0) : NAN;
    }
    a->sum_us[r] = v->sum_ns_per_op / 1e3;
    a->system_us[r] = v->system_ns_per_op / 1e3;
}

/*
 * The agent's figures of the run (its "agent": stack --agent) into its arm:
 * each of the cell's services' CPU per op as the agent read it, found by
 * name among the agent's services; NAN for one the agent did not give.
 */
static void cell_agent(struct stack_cell *cell, struct stack_arm *a, const struct run_view *v)
{
    unsigned r = a->n;

    if (v->agent) cell->agent = true;
    for (unsigned k = 0; k < STACK_MAX_SVC; k++) {
        a->agent_us[k][r] = NAN;
        if (k >= cell->nsvc) continue;
        for (unsigned i = 0; i < v->nagent; i++) {
            const char *name = v->agent_svc[i].name;
            if (name != NULL && strcmp(name, cell->svc[k]) == 0) {
                a->agent_us[k][r] = v->agent_svc[i].cpu_ns_per_op / 1e3;
                break;
            }
        }
    }
}

/*
 * Gauge g of a hop into figure k of the arm's run: its peak and what the run
 * added (its peak less its start); 0 for a TIME_WAIT of a Unix socket (it has
 * no such state).
 */
static void hop_fig(struct stack_arm *a, unsigned k, const struct run_gauge *g, bool no_state)
{
    a->hop[k][a->n] = no_state ? 0 : g->peak;
    a->hop_added[k][a->n] = no_state ? 0 : g->peak - g->start;
}

/*
 * The socket figures of the run into its arm: the front hop's TIME_WAIT (the
 * endpoint loaded), and the watched hop of the arm's transport (the backend).
 */
static void cell_hops(struct stack_cell *cell, struct stack_arm *a, const struct run_view *v)
{
    const struct run_hop *back = run_view_watch(v, a->transport);
    bool unix_front = strcmp(v->transport, "unix") == 0;
    unsigned r = a->n;

    hop_fig(a, STACK_TW_FRONT_CLIENT, &v->front.tw_client, unix_front);
    hop_fig(a, STACK_TW_FRONT_SERVER, &v->front.tw_server, unix_front);
    for (unsigned k = STACK_TW_BACK_CLIENT; k <= STACK_EST_BACK; k++)
        a->hop[k][r] = a->hop_added[k][r] = NAN;
    if (back == NULL) return;
    cell->backend = true;
    bool unix_back = strcmp(a->transport, "unix") == 0;
    hop_fig(a, STACK_TW_BACK_CLIENT, &back->tw_client, unix_back);
    hop_fig(a, STACK_TW_BACK_SERVER, &back->tw_server, unix_back);
    hop_fig(a, STACK_EST_BACK, &back->established, false);
}

/*
 * What loaded the machine in the run: its connections, the client's threads,
 * the CPUs it could use, other processes' CPU and steal (in CPUs), whether it
 * was noisy, and where its system figure came from.
 */
static void cell_load(struct stack_arm *a, const struct run_view *v)
{
    double cpus = v->cpus_allowed, share = v->other_share + v->steal_share;

    a->conns = v->connections;
    a->threads = v->threads;
    if (isfinite(cpus) && cpus > 0) a->cpus = (unsigned)cpus;
    a->other_cpus[a->n] = isfinite(cpus) ? share * cpus : NAN;
    a->machine_cpus[a->n] = v->system_busy_ns / v->window_ns;
    a->noisy += v->noisy;
    if (v->system_source != NULL)
        snprintf(a->sys_source, sizeof(a->sys_source), "%s", v->system_source);
}

/* One run into arm k, or into its endpoint's arm when k is negative. */
static void cell_add(struct stack_cell *cell, const struct run_view *v, int k)
{
    struct stack_arm *a;

    if (k < 0) {
        if (v->cell != 0 && v->cell != 1) return;
        k = v->cell;
    }
    a = &cell->arm[k];
    if (a->n == STACK_MAX_REPS) return;
    a->requests += v->requests;
    if (v->saturated) a->saturated++;
    if (!v->valid) {
        a->failed++;
        a->errors += v->errors_total;
        arm_kinds(a, v);
    }
    if (!v->valid || v->interrupted) return; /* counted in requests, left out of the figures */
    a->ops_s[a->n] = v->ops_per_s;
    a->p50_us[a->n] = v->latency.p50 / 1e3;
    a->p99_us[a->n] = v->latency.p99 / 1e3;
    a->p999_us[a->n] = v->latency.p999 / 1e3;
    a->mean_us[a->n] = v->latency.mean / 1e3;
    a->connect_us[a->n] = v->connect.mean / 1e3;
    a->response_us[a->n] = v->response.mean / 1e3;
    a->close_us[a->n] = v->close.mean / 1e3;
    cell_load(a, v);
    a->rate[a->n] = v->rate;
    a->client_us[a->n] = v->client_cpu_ns_per_op / 1e3;
    cell_services(cell, a, v);
    cell_agent(cell, a, v);
    cell_hops(cell, a, v);
    a->n++;
}

/* stack_child_read's reader: each run through the run view into the cell, and priced. */
static int child_take(void *ctx, size_t idx, json_t *run, struct hb_err *err)
{
    struct stack_child_read *r = ctx;
    struct run_view v;
    char msg[sizeof(err->msg)];
    int rc = run_view_of(run, &v, err);

    UNUSED(idx);
    if (rc < 0) {
        memcpy(msg, err->msg, sizeof(msg));
        return hb_fail(err, rc, "%s: line %zu: not valid evidence: %s", r->path, r->line, msg);
    }
    if (rc == 1) return 0; /* the writer's placeholder: nothing to show */
    cell_add(r->cell, &v, r->arm);
    if (r->cost != NULL && r->cost_rc == 0) {
        struct hb_err e = { 0 }, where = { 0 };
        r->cost_rc = cost_set_add(r->cost, run, &e);
        if (r->cost_rc < 0) {
            hb_fail(&where, r->cost_rc, "%s: line %zu: %s", r->path, r->line, e.msg);
            memcpy(r->cost_why, where.msg, sizeof(r->cost_why));
        }
    }
    if (r->keep_last) {
        json_decref(r->last);
        r->last = json_incref(run);
    }
    return 0;
}

int stack_child_read(struct stack_child_read *r, struct hb_err *err)
{
    struct evidence_reader reader = { .take = child_take, .ctx = r, .line = &r->line };
    json_t *head = NULL;
    int rc = evidence_read(r->path, &reader, &head, err);

    json_decref(head);
    return rc;
}

/*
 * Appends the child's JSONL file to --jsonl, a line at a time, each whole or
 * not at all (outfile_append); a last line without its end is not passed on.
 */
static int jsonl_pass(struct stack_ctx *c, const char *path, struct hb_err *err)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t got;
    FILE *f;
    int rc = 0;

    if (!c->jsonl_open) return 0;
    f = fopen(path, "re");
    if (f == NULL) return hb_fail(err, -errno, "cannot read %s: %s", path, strerror(errno));
    while (rc == 0 && (got = getline(&line, &cap, f)) > 0)
        if (line[got - 1] == '\n') rc = outfile_append(&c->jsonl, line, (size_t)got, err);
    free(line);
    fclose(f);
    return rc;
}

/* The common options of every run child. */
static void args_common(struct stack_ctx *c, struct stack_args *a, unsigned reps,
                        uint64_t duration_ns, unsigned conns, const char *json, const char *jsonl,
                        enum netns_side side)
{
    if (c->o->quiet) stack_arg(a, "--quiet");
    if (c->o->kernel_profile) stack_arg(a, "--profile");
    stack_arg(a, "--reps");
    stack_arg(a, "%u", reps);
    stack_arg(a, "--order");
    stack_arg(a, "abba");
    stack_arg(a, "-d");
    stack_arg(a, "%.3f", (double)duration_ns / 1e9);
    stack_arg(a, "--warmup");
    stack_arg(a, "%.3f", (double)c->warmup_ns / 1e9);
    stack_arg(a, "-c");
    stack_arg(a, "%u", conns);
    stack_arg(a, "--json");
    stack_arg(a, "%s", json);
    stack_arg(a, "--jsonl");
    stack_arg(a, "%s", jsonl);
    if (c->o->agent != NULL) {
        stack_arg(a, "--agent");
        stack_arg(a, "%s", c->o->agent);
    }
    if (c->o->agent_token_file != NULL) {
        stack_arg(a, "--agent-token-file");
        stack_arg(a, "%s", c->o->agent_token_file);
    }
    if (c->netns.mode == NETNS_NONE) return;
    /* its evidence says where each end ran; in B its endpoints are A's veth address */
    stack_arg(a, "--in-netns");
    stack_arg(a, "%s", side == NETNS_B ? "other" : "same");
    if (side == NETNS_B) stack_arg(a, "--allow-remote");
}

/*
 * Where a run child runs: with --netns other in B when it loads the front at
 * A's veth address, else in A beside the services (a bare hop to php-fpm, on
 * A's loopback or a socket, is in one namespace: it is placed as same).
 */
static enum netns_side child_side(const struct stack_ctx *c, const struct stack_args *a)
{
    char prefix[NETNS_ADDR_CAP + 8];

    if (c->netns.mode != NETNS_OTHER) return c->child_side;
    snprintf(prefix, sizeof(prefix), "tcp://%s:", c->netns.addr_a);
    for (unsigned i = 0; i < a->n; i++)
        if (strncmp(a->v[i], prefix, strlen(prefix)) == 0) return NETNS_B;
    return NETNS_A;
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

/*
 * --csv, --html: keeps the child's --json document doc under source (the
 * child's directory goes before the stack's end).
 */
static int csv_keep(struct stack_ctx *c, json_t *doc, const char *source, const char *title,
                    struct hb_err *err)
{
    json_t *entry;

    if ((c->o->csv_path == NULL && c->o->html_path == NULL) || doc == NULL) return 0;
    if (c->csv == NULL) c->csv = json_array();
    entry = json_pack("{s:s, s:s, s:O}", "source", source, "title", title, "doc", doc);
    if (c->csv == NULL || entry == NULL || json_array_append_new(c->csv, entry) < 0)
        return hb_fail(err, -ENOMEM, "--csv: out of memory");
    return 0;
}

/*
 * --html: each kept document written again into the stack's directory, named
 * by its measurement, and drawn as one report (its first HTML_MAX_FILES).
 */
static int stack_html_write(struct stack_ctx *c, struct hb_err *err)
{
    size_t n = json_array_size(c->csv), k = n < HTML_MAX_FILES ? n : HTML_MAX_FILES;
    char(*paths)[PATH_MAX] = calloc(k + 1, sizeof(*paths));
    const char **ptrs = calloc(k + 1, sizeof(*ptrs)), **titles = calloc(k + 1, sizeof(*titles));
    int rc = 0;

    if (paths == NULL || ptrs == NULL || titles == NULL) {
        rc = hb_fail(err, -ENOMEM, "--html: out of memory");
        goto out;
    }
    for (size_t i = 0; i < k && rc == 0; i++) {
        const json_t *e = json_array_get(c->csv, i);
        const char *src = json_string_value(json_object_get(e, "source"));
        char name[64];
        size_t j = 0;

        for (; src != NULL && src[j] != '\0' && j + 1 < sizeof(name); j++)
            name[j] =
                isalnum((unsigned char)src[j]) || src[j] == '.' || src[j] == '-' ? src[j] : '_';
        name[j] = '\0';
        if (snprintf(paths[i], PATH_MAX, "%.3900s/%zu-%s.json", c->sup.dir, i, name) >= PATH_MAX)
            rc = hb_fail(err, -ENAMETOOLONG, "--html: the stack's directory name is too long");
        ptrs[i] = paths[i];
        titles[i] = json_string_value(json_object_get(e, "title"));
        if (titles[i] == NULL) titles[i] = src != NULL ? src : "";
        if (rc == 0 && json_dump_file(json_object_get(e, "doc"), paths[i], JSON_COMPACT) < 0)
            rc = hb_fail(err, -EIO, "--html: cannot write %s", paths[i]);
    }
    /* one page for the stack: its measurements by name, not the files they were kept in */
    if (c->text != NULL) fflush(c->out);
    if (c->text != NULL) fflush(c->text);
    if (rc == 0)
        rc = report_html_write_parts(c->o->html_path, ptrs, titles, k,
                                     c->text != NULL ? c->text_buf : NULL, err);
    if (rc == 0) fprintf(c->out, "html: %s (%zu of %zu measurement(s))\n", c->o->html_path, k, n);
    for (size_t i = 0; i < k; i++)
        if (ptrs[i] != NULL) unlink(ptrs[i]);
out:
    free(paths);
    free(ptrs);
    free(titles);
    return rc;
}

int stack_csv_write(struct stack_ctx *c, struct hb_err *err)
{
    size_t n = json_array_size(c->csv);
    struct csv_source *src = NULL;
    int rc = 0;

    if (n > 0 && c->o->html_path != NULL) rc = stack_html_write(c, err);
    if (c->o->csv_path == NULL || n == 0 || rc < 0) goto out;
    src = calloc(n, sizeof(*src));
    if (src == NULL) {
        rc = hb_fail(err, -ENOMEM, "--csv: out of memory");
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        const json_t *e = json_array_get(c->csv, i);
        src[i].name = json_string_value(json_object_get(e, "source"));
        src[i].doc = json_object_get(e, "doc");
        src[i].runs = json_object_get(src[i].doc, "runs");
    }
    rc = report_csv_write(c->o->csv_path, src, n, err);
    if (rc == 0) fprintf(c->out, "csv: %s (%zu measurement(s))\n", c->o->csv_path, n);
out:
    free(src);
    json_decref(c->csv);
    c->csv = NULL;
    return rc;
}

/*
 * The run child's bottom line (its --json document doc's, report/bottom.h),
 * added to the stack's under the measurement's title. A child without one
 * (cut short before two runs a side) adds nothing.
 */
static int bottom_keep(struct stack_ctx *c, const json_t *doc, const char *title,
                       struct hb_err *err)
{
    const json_t *j = json_object_get(doc, EV_BOTTOM_LINE);
    struct bottom_line b;
    int rc = 0;

    if (j != NULL && bottom_from_json(j, &b) == 0) {
        rc = bottom_append(&c->bottom, &b, title);
        bottom_release(&b);
    }
    return rc < 0 ? hb_fail(err, rc, "the bottom line: out of memory") : 0;
}

/*
 * The child's --json document at path, when it wrote one and the stack needs
 * it (a measurement of both arms has a bottom line; --csv and --html keep
 * every one), into *doc (NULL otherwise). -EINVAL when it is not JSON.
 */
static int doc_load(struct stack_ctx *c, const char *path, int arm, json_t **doc,
                    struct hb_err *err)
{
    json_error_t jerr;

    *doc = NULL;
    if (arm >= 0 && c->o->csv_path == NULL && c->o->html_path == NULL) return 0;
    if (access(path, R_OK) != 0) return 0;
    *doc = json_load_file(path, 0, &jerr);
    if (*doc == NULL)
        return hb_fail(err, -EINVAL, "%s: line %d: not JSON: %s", path, jerr.line, jerr.text);
    return 0;
}

/*
 * The child's JSONL file, read once: its runs into cell (arm k, or by endpoint
 * when negative), priced for stack_cost when it measured both arms, its last
 * run kept in c->last_run. stopped: the child was killed, its last line may be
 * cut short: what was read before it is kept.
 */
static int child_read(struct stack_ctx *c, const char *jsonl, struct stack_cell *cell, int arm,
                      bool stopped, struct hb_err *err)
{
    struct stack_child_read r = { .path = jsonl, .cell = cell, .arm = arm, .keep_last = true };
    struct stack_costed *m = NULL;
    int rc;

    json_decref(c->last_run);
    c->last_run = NULL;
    if (access(jsonl, R_OK) != 0) return 0;
    if (arm < 0 && c->ncosted < STACK_MAX_COSTED) {
        m = &c->costed[c->ncosted++];
        memset(m, 0, sizeof(*m));
        snprintf(m->label, sizeof(m->label), "%s", cell->label);
        r.cost = &m->set;
    }
    rc = stack_child_read(&r, err);
    c->last_run = r.last;
    if (m != NULL) {
        m->read = rc == 0 && r.cost_rc == 0;
        snprintf(m->why, sizeof(m->why), "%s", r.cost_rc < 0 ? r.cost_why : rc < 0 ? err->msg : "");
    }
    return stopped ? 0 : rc;
}

/* A run child with reps runs of duration_ns; its runs into cell (arm k, or by endpoint when
 * negative). */
static int measure_child(struct stack_ctx *c, struct stack_args *args, struct stack_cell *cell,
                         int arm, unsigned reps, uint64_t duration_ns, struct hb_err *err)
{
    char json[PATH_MAX], jsonl[PATH_MAX], log[PATH_MAX], name[32];
    unsigned k = ++c->nchild;
    json_t *doc = NULL;
    int st, rc;

    snprintf(name, sizeof(name), "run-%u.json", k);
    sup_path(&c->sup, name, json, sizeof(json));
    snprintf(name, sizeof(name), "run-%u.jsonl", k);
    sup_path(&c->sup, name, jsonl, sizeof(jsonl));
    snprintf(name, sizeof(name), "run-%u.out", k);
    sup_path(&c->sup, name, log, sizeof(log));
    enum netns_side side = child_side(c, args);
    args_common(c, args, reps, duration_ns, cell->conns ? cell->conns : c->conns, json, jsonl,
                side);
    /* each endpoint its label: both arms, or the one arm this child loads */
    for (unsigned i = arm < 0 ? 0 : (unsigned)arm; i < (arm < 0 ? 2u : (unsigned)arm + 1); i++) {
        char label[ENDPOINT_LABEL_MAX];
        arm_label(label, sizeof(label), cell, i);
        stack_arg(args, "--label");
        stack_arg(args, "%s", label);
    }
    if (args->n >= STACK_MAX_ARGS) return hb_fail(err, -E2BIG, "too many arguments for run");
    pid_t pid = child_spawn(c, side, args, arm < 0 ? 2 * reps : reps, log);
    if (pid < 0) return hb_fail(err, pid, "cannot start hopbench run: %s", strerror(-pid));
    st = child_wait(c, pid);
    /*
     * Killed by the SIGINT child_wait sent (before the child had its handler:
     * it was starting) or by the SIGKILL after CHILD_STOP_NS: the stack was
     * stopped, not a run that failed; what it wrote, if anything, is kept.
     */
    bool stopped =
        c->interrupted && WIFSIGNALED(st) && (WTERMSIG(st) == SIGINT || WTERMSIG(st) == SIGKILL);
    if (stopped && access(jsonl, R_OK) != 0) return 0;
    if (WIFEXITED(st) && WEXITSTATUS(st) == 130) c->interrupted = true;
    if (WIFEXITED(st) && WEXITSTATUS(st) == 2) {
        c->invalid = true;
        log_copy(c->out, log);
    }
    if (!stopped && (!WIFEXITED(st) ||
                     (WEXITSTATUS(st) != 0 && WEXITSTATUS(st) != 2 && WEXITSTATUS(st) != 130))) {
        log_copy(c->out, log);
        /* a run's exits 3 (a refused authentication: the agent's token, or the server's way
         * of logging in) and 76 (the agent's protocol) go on */
        rc = !WIFEXITED(st)          ? -ECHILD
             : WEXITSTATUS(st) == 3  ? STACK_AGENT_AUTH
             : WEXITSTATUS(st) == 76 ? STACK_AGENT_PROTOCOL
                                     : -ECHILD;
        return hb_fail(err, rc, "the run of %s ended badly (wait status %d)", cell->label, st);
    }
    rc = jsonl_pass(c, jsonl, err);
    if (rc == 0) rc = doc_load(c, json, arm, &doc, err);
    if (rc == 0) {
        char source[64], title[sizeof(cell->title) + 16];
        if (arm < 0) {
            snprintf(source, sizeof(source), "%s", cell->label);
            snprintf(title, sizeof(title), "%s", cell->title);
        } else {
            arm_label(source, sizeof(source), cell, (unsigned)arm);
            snprintf(title, sizeof(title), "%s, %s", cell->title, cell->arm[arm].transport);
        }
        rc = csv_keep(c, doc, source, title, err);
    }
    if (rc == 0 && arm < 0) rc = bottom_keep(c, doc, cell->title, err);
    json_decref(doc);
    if (rc == 0) rc = child_read(c, jsonl, cell, arm, stopped, err);
    if (rc == 0 && c->o->kernel_profile && access(jsonl, R_OK) == 0) {
        fprintf(c->out, "\n%s:", cell->label);
        profile_summary_jsonl(c->out, jsonl, 1);
    }
    if (rc == 0 && WIFEXITED(st) && WEXITSTATUS(st) == 2) gate_lines(c->out, cell, arm);
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

void stack_cost(struct stack_ctx *c)
{
    struct cost_plan plan = { .price_usd = COST_PRICE_USD, .seed = 1, .ntraffic = 1 };
    struct hb_err e = { 0 };

    if (c->ncosted == 0) return;
    if (cost_traffic_parse(STACK_TRAFFIC, &plan.traffic[0], &e) < 0) plan.ntraffic = 0;
    fprintf(c->out,
            "\nWhat the Unix socket saves, per request: 'hopbench cost' on each measurement's "
            "own runs,\neach run on the side its label names, the transport of the hop under "
            "test (saved =\ntcp - unix, medians; [95 %% bootstrap interval], seed %llu; the "
            "monthly figures: 'hopbench\ncost' on that measurement's part of --jsonl). Covers:",
            (unsigned long long)plan.seed);
    for (unsigned i = 0; i < c->ncosted; i++)
        fprintf(c->out, "%s %s", i ? "," : "", c->costed[i].label);
    fprintf(c->out, ".\nFigures: client = hopbench; each service by its name (its cgroup); "
                    "client+services = their\nsum; system = every CPU of the machine.\n");
    if (plan.ntraffic > 0)
        fprintf(c->out,
                "A month: only the whole CPU per request (client+services), only where its "
                "difference\nis significant, as 'hopbench cost' prices it in full, at a stated "
                "traffic of %s\n(%g requests/s) sustained, %.4g billion requests in 30 days, and "
                "$%g per vCPU-month:\nboth assumptions, not measurements ('hopbench cost "
                "--traffic LIST --price USD' on\n--jsonl for others).\n",
                plan.traffic[0].text, cost_traffic_per_s(&plan.traffic[0]),
                plan.traffic[0].per_month / 1e9, plan.price_usd);
    for (unsigned i = 0; i < c->ncosted; i++) {
        const struct stack_costed *m = &c->costed[i];
        if (!m->read)
            fprintf(c->out, "%s: cannot be priced: %s\n", m->label, m->why);
        else
            report_saving_brief(c->out, m->label, &m->set, &plan);
    }
}

void stack_cost_release(struct stack_ctx *c)
{
    for (unsigned i = 0; i < c->ncosted; i++)
        cost_set_release(&c->costed[i].set);
    c->ncosted = 0;
    bottom_release(&c->bottom);
    json_decref(c->last_run);
    c->last_run = NULL;
}

void stack_bottom(struct stack_ctx *c)
{
    bottom_print(c->out, &c->bottom, bottom_colour(c->term), NULL);
}

/* The finite values of x[0 .. n - 1] into out; how many. */
static unsigned finite_of(const double *x, unsigned n, double *out)
{
    unsigned k = 0;

    for (unsigned i = 0; i < n; i++)
        if (isfinite(x[i])) out[k++] = x[i];
    return k;
}

/* The median of the finite values of x, or NAN when there is none (stats_median_known). */
static double median_of(const double *x, unsigned n)
{
    double med;

    stats_median_known(x, n, &med);
    return med;
}

/*
 * After a row: each transport whose median is of fewer than its n runs (the
 * others lack the figure), as " [tcp: 1 of 2 runs]" (stats_known_note).
 */
static void known_notes(FILE *f, const struct stack_cell *c, const size_t known[2])
{
    char note[48];

    for (unsigned i = 0; i < 2; i++) {
        stats_known_note(note, sizeof(note), known[i], c->arm[i].n);
        if (note[0] != '\0') fprintf(f, " [%s: %s]", c->arm[i].transport, note);
    }
}

/*
 * The unix÷tcp verdict of one figure ("~ 1.030× [0.980×, 1.090×] (p=.. n=..)")
 * over each side's finite values, or "-" when it cannot be had (fewer than
 * two runs a side, or a ratio of zeros).
 */
static void verdict_of(const double *a, unsigned na, const double *b, unsigned nb, char *buf,
                       size_t cap)
{
    double x[STACK_MAX_REPS], y[STACK_MAX_REPS], ratio, lo, hi, u, p;
    unsigned nx = finite_of(a, na, x), ny = finite_of(b, nb, y);
    snprintf(buf, cap, "-");
    if (nx < 2 || ny < 2) return;
    if (stats_bootstrap_ratio(x, nx, y, ny, 2000, 0.95, 1, &ratio, &lo, &hi) < 0) return;
    if (!isfinite(ratio) || stats_mann_whitney(x, nx, y, ny, &u, &p) < 0) return;
    stats_format_delta(buf, cap, ratio, lo, hi, p, 0.05, nx, ny);
}

static void print_figure(FILE *f, double v, int width, int prec)
{
    char num[48] = "n/a";

    if (!isnan(v)) text_number(num, sizeof(num), v, prec);
    fprintf(f, " %*s", width, num);
}

/*
 * One figure's row: each transport's median of the runs that have it and the
 * verdict, then the transports whose runs not all have it; none when neither
 * has a value.
 */
static void figure_row(FILE *f, const struct stack_cell *c, const char *name, const double *tcp,
                       const double *ux, int prec)
{
    double mt, mu;
    size_t known[2] = { stats_median_known(tcp, c->arm[0].n, &mt),
                        stats_median_known(ux, c->arm[1].n, &mu) };
    char verdict[96];

    if (isnan(mt) && isnan(mu)) return;
    verdict_of(tcp, c->arm[0].n, ux, c->arm[1].n, verdict, sizeof(verdict));
    fputs("  ", f);
    put_columns(f, -30, name);
    print_figure(f, mt, 11, prec);
    print_figure(f, mu, 11, prec);
    fprintf(f, "  %s", verdict);
    known_notes(f, c, known);
    fputc('\n', f);
}

/* A figure each service has. */
enum svc_fig { SVC_CPU, SVC_PSS, SVC_WS };

static const double *svc_values(const struct stack_arm *a, enum svc_fig w, unsigned k)
{
    return w == SVC_CPU ? a->svc_us[k] : w == SVC_PSS ? a->pss_mib[k] : a->ws_mib[k];
}

/* The rows of figure w of each service, named "what NAME". */
static void service_rows(FILE *f, const struct stack_cell *c, const char *what, enum svc_fig w,
                         int prec)
{
    char name[64];

    for (unsigned k = 0; k < c->nsvc; k++) {
        snprintf(name, sizeof(name), "%s %s", what, c->svc[k]);
        figure_row(f, c, name, svc_values(&c->arm[0], w, k), svc_values(&c->arm[1], w, k), prec);
    }
}

/*
 * The ratio of the agent's figure of service k to this host's over arm a's
 * runs that have both: their median into *med, their range into *lo, *hi
 * (widened, not reset); returns how many runs have both.
 */
static size_t agent_ratio(const struct stack_arm *a, unsigned k, double *med, double *lo,
                          double *hi)
{
    double x[STACK_MAX_REPS];

    for (unsigned r = 0; r < a->n; r++) {
        double ag = a->agent_us[k][r], local = a->svc_us[k][r];
        x[r] = isfinite(ag) && isfinite(local) && local > 0 ? ag / local : NAN;
        if (isnan(x[r])) continue;
        *lo = fmin(*lo, x[r]);
        *hi = fmax(*hi, x[r]);
    }
    return stats_median_known(x, a->n, med);
}

/*
 * With an agent's evidence: each service's CPU per request as the agent read
 * it ("n/a ... the agent gave none" when no run has it), then, for each
 * service both measured, the agent's figure over this host's: each
 * transport's median ratio and the range over the runs.
 */
static void agent_rows(FILE *f, const struct stack_cell *c)
{
    const struct stack_arm *t = &c->arm[0], *u = &c->arm[1];
    char name[64], rlo[24], rhi[24];

    for (unsigned k = 0; k < c->nsvc; k++) {
        snprintf(name, sizeof(name), "agent CPU µs/req %s", c->svc[k]);
        if (isnan(median_of(t->agent_us[k], t->n)) && isnan(median_of(u->agent_us[k], u->n))) {
            fputs("  ", f);
            put_columns(f, -30, name);
            fprintf(f, " %11s %11s  the agent gave none\n", "n/a", "n/a");
        } else
            figure_row(f, c, name, t->agent_us[k], u->agent_us[k], 2);
    }
    for (unsigned k = 0; k < c->nsvc; k++) {
        double med[2], lo = INFINITY, hi = -INFINITY;
        size_t known[2];

        for (unsigned i = 0; i < 2; i++)
            known[i] = agent_ratio(&c->arm[i], k, &med[i], &lo, &hi);
        if (known[0] + known[1] == 0) continue;
        snprintf(name, sizeof(name), "agent/local CPU %s", c->svc[k]);
        fprintf(f, "  %-30s", name);
        for (unsigned i = 0; i < 2; i++) {
            char v[24] = "n/a";
            if (!isnan(med[i])) text_ratio(v, sizeof(v), med[i], 3);
            fputc(' ', f);
            put_columns(f, 11, v);
        }
        text_ratio(rlo, sizeof(rlo), lo, 3);
        text_ratio(rhi, sizeof(rhi), hi, 3);
        fprintf(f, "  runs %s to %s", rlo, rhi);
        known_notes(f, c, known);
        fputc('\n', f);
    }
}

void stack_agent_run_rows(FILE *f, const struct run_view *v)
{
    struct stack_cell *c;
    const struct stack_arm *a;
    char name[64], ratio[24];

    if (!v->agent) return;
    c = xcalloc(1, sizeof(*c));
    a = &c->arm[0];
    cell_services(c, &c->arm[0], v);
    cell_agent(c, &c->arm[0], v);
    for (unsigned k = 0; k < c->nsvc; k++) {
        snprintf(name, sizeof(name), "agent CPU µs/req %s", c->svc[k]);
        fputs("  ", f);
        put_columns(f, -30, name);
        print_figure(f, a->agent_us[k][0], 11, 2);
        fprintf(f, "%s\n", isnan(a->agent_us[k][0]) ? "  the agent gave none" : "");
    }
    for (unsigned k = 0; k < c->nsvc; k++) {
        double ag = a->agent_us[k][0], local = a->svc_us[k][0];
        if (!isfinite(ag) || !isfinite(local) || local <= 0) continue;
        snprintf(name, sizeof(name), "agent/local CPU %s", c->svc[k]);
        text_ratio(ratio, sizeof(ratio), ag / local, 3);
        fprintf(f, "  %-30s ", name);
        put_columns(f, 11, ratio);
        fputc('\n', f);
    }
    free(c);
}

/*
 * The median of figure k's peaks and what the runs added over arm a, counts
 * as every text figure (text_number): "12,478 (+1,024)", or "n/a".
 */
static void hop_text(char *buf, size_t cap, const struct stack_arm *a, unsigned k)
{
    double peak = median_of(a->hop[k], a->n), add = median_of(a->hop_added[k], a->n);
    char p[24], d[24];

    text_number(p, sizeof(p), peak, 0);
    text_number(d, sizeof(d), add, 0);
    if (isnan(peak) || isnan(add))
        snprintf(buf, cap, "%s", p);
    else
        snprintf(buf, cap, "%s (%s%s)", p, d[0] == '-' ? "" : "+", d);
}

/*
 * The socket rows: each figure's peak over the run, the median of the runs,
 * and in brackets what the runs added (peak - start): a count left by the
 * measurement before is not this one's.
 */
static void hop_rows(FILE *f, const struct stack_cell *c)
{
    static const char *const hop_names[STACK_HOP_FIGS] = {
        "TIME_WAIT front, client side",  "TIME_WAIT front, server side",
        "TIME_WAIT backend, web server", "TIME_WAIT backend, FPM side",
        "established backend",
    };

    for (unsigned k = 0; k < STACK_HOP_FIGS; k++) {
        char v[2][64];
        if (k >= STACK_TW_BACK_CLIENT && !c->backend) continue;
        for (unsigned t = 0; t < 2; t++)
            hop_text(v[t], sizeof(v[t]), &c->arm[t], k);
        fprintf(f, "  %-30s %11s %11s\n", hop_names[k], v[0], v[1]);
    }
}

/*
 * After the system row: a transport whose system figure is below the sum of
 * the parts it contains, and why it can be (its source, readings.h).
 */
static void system_note(FILE *f, const struct stack_cell *c)
{
    for (unsigned t = 0; t < 2; t++) {
        const struct stack_arm *a = &c->arm[t];
        double sys = median_of(a->system_us, a->n), sum = median_of(a->sum_us, a->n);
        if (isnan(sys) || isnan(sum) || sys >= sum) continue;
        fprintf(f, "  (%s: system %.2f below client + services %.2f: %s)\n", a->transport, sys, sum,
                strcmp(a->sys_source, "idle") == 0
                    ? "the machine's idle time is counted to a tick per CPU, the parts to the ns"
                : a->sys_source[0] == '\0' || strcmp(a->sys_source, "none") == 0
                    ? "this evidence does not say how the system figure was counted"
                    : "the parts were read a few microseconds apart from the whole");
    }
}

static void cell_block(FILE *f, const struct stack_cell *c)
{
    const struct stack_arm *t = &c->arm[0], *u = &c->arm[1];

    fprintf(f, "\n%-32s %11s %11s  %s\n", c->label, t->transport, u->transport,
            "unix/tcp (95 % interval; ~ not significant)");
    char tn[32], un[32];

    text_number(tn, sizeof(tn), t->n, 0);
    text_number(un, sizeof(un), u->n, 0);
    fprintf(f, "  %-30s %11s %11s\n", "runs", tn, un);
    text_number(tn, sizeof(tn), t->conns, 0);
    text_number(un, sizeof(un), u->conns, 0);
    fprintf(f, "  %-30s %11s %11s\n", "connections", tn, un);
    figure_row(f, c, "ops/s", t->ops_s, u->ops_s, 0);
    figure_row(f, c, "latency p50 µs", t->p50_us, u->p50_us, 1);
    figure_row(f, c, "latency p99 µs", t->p99_us, u->p99_us, 1);
    figure_row(f, c, "latency p99.9 µs", t->p999_us, u->p999_us, 1);
    figure_row(f, c, "latency mean µs", t->mean_us, u->mean_us, 1);
    figure_row(f, c, "CPU µs/req client", t->client_us, u->client_us, 2);
    service_rows(f, c, "CPU µs/req", SVC_CPU, 2);
    figure_row(f, c, "CPU µs/req sum", t->sum_us, u->sum_us, 2);
    figure_row(f, c, "CPU µs/req system", t->system_us, u->system_us, 2);
    system_note(f, c);
    if (c->agent) agent_rows(f, c);
    service_rows(f, c, "PSS MiB", SVC_PSS, 1);
    service_rows(f, c, "working set MiB", SVC_WS, 1);
    hop_rows(f, c);
    fprintf(f, "  %-30s %11u %11u\n", "noisy runs", t->noisy, u->noisy);
    stack_lifecycle_print(f, c);
    stack_busy_print(f, c);
}

void stack_table(FILE *f, const struct stack_cell *cells, unsigned n)
{
    unsigned runs = 0;

    for (unsigned i = 0; i < n; i++)
        runs += cells[i].arm[0].n + cells[i].arm[1].n;
    if (runs == 0) return;
    fprintf(f, "\nmedians of the valid runs; CPU per request: client = hopbench, each service "
               "its cgroup,\nsum = client + services, system = every CPU's busy time (softirq "
               "included, counted as\nthe scheduler counts run time); memory at the end of each "
               "run; TIME_WAIT and connections:\npeaks over the run and (+ what the run added: "
               "peak - start; a Unix socket has no\nTIME_WAIT: 0); noisy runs: other processes' "
               "CPU + steal above the threshold; load: CPUs\nkept busy (CPU per request x "
               "ops/s) and what saturated; a figure not every run has: the\nmedian of those that "
               "have it, how many after the row ([tcp: 1 of 2 runs])\n");
    for (unsigned i = 0; i < n; i++)
        if (cells[i].agent) {
            fprintf(f, "agent CPU µs/req: each service's cgroup as the agent (--agent) read it "
                       "over its own\nwindow; agent/local: the agent's figure over this host's, "
                       "median of the runs and their range\n");
            break;
        }
    for (unsigned i = 0; i < n; i++)
        if (cells[i].arm[0].n + cells[i].arm[1].n > 0) cell_block(f, &cells[i]);
}

double stack_services_cpu(const struct stack_cell *cell, const struct stack_arm *a)
{
    double sum[STACK_MAX_REPS];

    for (unsigned r = 0; r < a->n; r++) {
        sum[r] = cell->nsvc > 0 ? 0 : NAN;
        for (unsigned k = 0; k < cell->nsvc; k++)
            sum[r] += a->svc_us[k][r];
    }
    return median_of(sum, a->n);
}

void stack_services(struct stack_ctx *c, struct stack_args *a, const char *const *names)
{
    for (unsigned i = 0; names[i] != NULL; i++) {
        const struct sup_svc *v = sup_find(&c->sup, names[i]);
        if (v == NULL) continue;
        stack_arg(a, "--service");
        stack_arg(a, "%s=cgroup:%s", names[i], sup_cgroup_cpu(v));
        if (c->o->agent == NULL) continue;
        /* the agent beside the services reads the same cgroup */
        stack_arg(a, "--agent-service");
        stack_arg(a, "%s=cgroup:%s", names[i], sup_cgroup_cpu(v));
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
