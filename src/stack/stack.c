/*
 * stack: the list of stacks and what every one does around its own part:
 * its servers checked for, the private directory and cgroups made, --jsonl
 * opened, the stack's run, and everything stopped and removed (stack.h).
 */
#include "stack/stack.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "stack/measure.h"

/* The stacks, each defined in its own file (an fpm stack at the end of its front's). */
extern const struct stack_def stack_redis, stack_nginx_fpm, stack_apache_fpm, stack_php_method,
    stack_redis_mariadb, stack_postgres;
extern const struct stack_def stack_lighttpd_fpm;
extern const struct stack_def stack_memcached;

/* one stack a line, as a new stack adds one */
/* clang-format off */
const struct stack_def *const stack_defs[] = {
    &stack_redis,
    &stack_nginx_fpm,
    &stack_apache_fpm,
    &stack_lighttpd_fpm,
    &stack_php_method,
    &stack_redis_mariadb,
    &stack_postgres,
    &stack_memcached,
    NULL,
};
/* clang-format on */

const struct stack_private stack_private_fastcgi = {
    .port = "FastCGI",
    .why = "FastCGI has no authentication",
    .risk = "send it requests, which run code as php-fpm's workers",
};

const struct stack_def *stack_find(const char *name)
{
    for (unsigned i = 0; stack_defs[i] != NULL; i++)
        if (strcmp(stack_defs[i]->name, name) == 0) return stack_defs[i];
    return NULL;
}

void stack_help(const struct stack_def *d, FILE *f)
{
    if (d->help_write != NULL)
        d->help_write(d, f);
    else
        fputs(d->help, f);
}

int stack_profile_check(const struct stack_def *d, const char *name, struct hb_err *err)
{
    char names[128] = "";
    size_t len = 0;

    if (d->profiles == NULL)
        return hb_fail(err, -EINVAL, "stack %s: --profile: this stack has no profiles", d->name);
    for (unsigned i = 0; d->profiles[i] != NULL; i++) {
        if (strcmp(d->profiles[i], name) == 0) return 0;
        if (len < sizeof(names))
            len += (size_t)snprintf(names + len, sizeof(names) - len, "%s%s", i ? ", " : "",
                                    d->profiles[i]);
    }
    return hb_fail(err, -EINVAL, "stack %s: --profile: '%s' is not one of %s", d->name, name,
                   names);
}

void stack_list(FILE *f)
{
    for (unsigned i = 0; stack_defs[i] != NULL; i++)
        fprintf(f, "  %-13s %s\n", stack_defs[i]->name, stack_defs[i]->summary);
}

/* Every server binary the stack starts is there, or one line naming the package. */
static int needs_check(const struct stack_def *d, struct hb_err *err)
{
    for (unsigned i = 0; d->needs[i] != NULL; i += 2) {
        int rc = sup_need(d->needs[i], d->needs[i + 1], NULL, 0, err);
        if (rc < 0) return rc;
    }
    return 0;
}

/* The options, or the stack's defaults (a quick pass with --short). */
static void ctx_defaults(struct stack_ctx *c, const struct stack_opts *o)
{
    c->reps = o->reps ? o->reps : o->short_mode ? 2 : 4;
    c->duration_ns = o->duration_ns  ? o->duration_ns
                     : o->short_mode ? 300 * NS_PER_MS
                                     : 2 * NS_PER_S;
    c->warmup_ns = o->warmup_ns != UINT64_MAX ? o->warmup_ns
                   : o->short_mode            ? 100 * NS_PER_MS
                                              : 500 * NS_PER_MS;
    c->conns = stack_conns(c, c->def->conns ? c->def->conns : 1);
}

unsigned stack_conns(const struct stack_ctx *c, unsigned study)
{
    return c->o->conns ? c->o->conns : study;
}

/*
 * The words of the "netns:" line; implied: the namespace is the stack's
 * default (stack_def.private_net), not --netns's.
 */
static void stack_netns_line(struct stack_ctx *c, const struct stack_private *implied)
{
    char tail[256] = "";

    if (implied != NULL)
        snprintf(tail, sizeof(tail),
                 ", this stack's default: no other local user reaches its %s port (%s)",
                 implied->port, implied->why);
    netns_describe(&c->netns,
                   &(struct netns_words){ .same = "services and run children in one network "
                                                  "namespace made for the stack (its own loopback)",
                                          .in_a = "services",
                                          .in_b = "run children in",
                                          .after_b = ", joined by a veth pair: the front hop "
                                                     "crosses it",
                                          .tail = tail },
                   c->out);
}

/*
 * --netns: makes the namespaces and moves this thread into A, where the
 * services start (netns.h: the children of a thread begin in its namespace);
 * the run children go to A or B (child_spawn). Without it, the host's; but a
 * stack with a port without authentication (private_net: php-fpm's FastCGI,
 * whoever reaches it runs code as its workers) makes one namespace for itself
 * when it can (root, no --agent, whose run children talk to an agent
 * outside), else says that its port is open to every local user.
 */
static int stack_netns(struct stack_ctx *c, const struct stack_def *d, struct hb_err *err)
{
    const struct stack_private *implied = c->o->netns == NETNS_NONE ? d->private_net : NULL;
    const char *why = c->o->agent != NULL ? "--agent: its run children reach the agent there"
                      : geteuid() != 0    ? "not root: no network namespace"
                                          : NULL;
    int rc = netns_init(&c->netns, implied != NULL && why == NULL ? NETNS_SAME : c->o->netns, err);

    c->front_host = "127.0.0.1";
    if (rc < 0 && implied != NULL) { /* root without CAP_SYS_ADMIN: the host's, said so */
        why = err->msg;
        netns_release(&c->netns);
        rc = netns_init(&c->netns, NETNS_NONE, err);
    }
    if (implied != NULL && why != NULL)
        fprintf(c->out,
                "warning: the %s TCP port is on the host's loopback (%s): any local user may %s, "
                "while the stack runs\n",
                implied->port, why, implied->risk);
    if (rc < 0 || c->netns.mode == NETNS_NONE) return rc;
    c->child_side = c->netns.mode == NETNS_OTHER ? NETNS_B : NETNS_A;
    if (c->netns.mode == NETNS_OTHER) c->front_host = c->netns.addr_a;
    rc = netns_enter(&c->netns, NETNS_A);
    if (rc < 0) return hb_fail(err, rc, "cannot enter namespace A: %s", strerror(-rc));
    stack_netns_line(c, implied);
    return 0;
}

/* --html: what the stack prints goes to its stdout and, its colours left out, into its text. */
struct stack_tee {
    FILE *out, *text;
    bool esc; /* inside an ANSI escape sequence */
};

static ssize_t tee_write(void *cookie, const char *buf, size_t n)
{
    struct stack_tee *t = cookie;

    if (fwrite(buf, 1, n, t->out) != n) return -1;
    fflush(t->out); /* the tee is line-buffered: the lines keep their order with stderr's */
    for (size_t i = 0; i < n; i++) {
        if (buf[i] == '\033') t->esc = true;
        if (!t->esc) fputc(buf[i], t->text);
        if (t->esc && ((buf[i] >= 'A' && buf[i] <= 'Z') || (buf[i] >= 'a' && buf[i] <= 'z')))
            t->esc = false;
    }
    return (ssize_t)n;
}

/* With --html, c->out becomes a tee of out into c->text. 0 or -ENOMEM. */
static int tee_open(struct stack_ctx *c, FILE *out, struct stack_tee *t)
{
    static const cookie_io_functions_t io = { .write = tee_write };

    c->out = c->term = out;
    if (c->o->html_path == NULL) return 0;
    c->text = open_memstream(&c->text_buf, &c->text_len);
    if (c->text == NULL) return -ENOMEM;
    *t = (struct stack_tee){ .out = out, .text = c->text };
    c->out = fopencookie(t, "w", io);
    if (c->out == NULL) {
        c->out = out;
        return -ENOMEM;
    }
    setvbuf(c->out, NULL, _IOLBF, 0);
    return 0;
}

/* The tee and its text closed, c->out the command's stdout again. */
static void tee_close(struct stack_ctx *c)
{
    if (c->out != c->term) fclose(c->out);
    c->out = c->term;
    if (c->text != NULL) fclose(c->text);
    c->text = NULL;
    free(c->text_buf);
    c->text_buf = NULL;
}

/* The stack's own part, between the set-up and the tear-down. */
static int stack_body(struct stack_ctx *c, const struct stack_def *d, struct hb_err *err)
{
    int rc = 0;

    if (c->o->jsonl_path != NULL) {
        rc = outfile_open(&c->jsonl, c->o->jsonl_path, OUTFILE_APPEND, err);
        c->jsonl_open = rc == 0;
    }
    if (rc == 0) rc = d->run(c, err);
    if (rc == 0 && !stack_stopping(c)) stack_cost(c);
    if (rc == 0) stack_bottom(c);              /* the answer last, what was measured when stopped */
    if (rc == 0) rc = stack_csv_write(c, err); /* before --hold: the file is there while held */
    if (rc == 0 && c->o->hold && !stack_stopping(c)) rc = stack_hold(c, err);
    if (c->jsonl_open) {
        struct hb_err e2 = { 0 };
        if (outfile_commit(&c->jsonl, &e2) < 0 && rc == 0) {
            *err = e2;
            rc = -EIO;
        }
        c->jsonl_open = false;
    }
    return rc;
}

int stack_run(const struct stack_opts *o, FILE *out, const atomic_int *stop,
              enum stack_verdict *verdict, struct hb_err *err)
{
    static struct stack_ctx c;
    static struct stack_tee tee;
    const struct stack_def *d = stack_find(o->name);
    struct hb_err rel = { 0 };
    int rc;

    *verdict = STACK_VALID;
    if (d == NULL) return hb_fail(err, -EINVAL, "no stack '%s' (hopbench stack list)", o->name);
    rc = needs_check(d, err);
    if (rc < 0) return rc;
    sup_clean_leftovers(out); /* of stacks whose hopbench was killed with their watcher */
    memset(&c, 0, sizeof(c));
    c.o = o;
    c.def = d;
    c.stop = stop;
    if (tee_open(&c, out, &tee) < 0) return hb_fail(err, -ENOMEM, "--html: out of memory");
    out = c.out;
    ctx_defaults(&c, o);
    rc = stack_netns(&c, d, err);
    if (rc < 0) {
        netns_release(&c.netns);
        tee_close(&c);
        return rc;
    }
    rc = sup_init(&c.sup, err);
    if (c.sup.dir[0] != '\0') {
        fprintf(out, "hopbench stack %s: directory %s\n", d->name, c.sup.dir);
        fflush(out);
    }
    if (rc == 0) rc = stack_body(&c, d, err);
    stack_cost_release(&c);
    /* the runs measured, when an error or a stop came before stack_body wrote them */
    if (stack_csv_write(&c, &rel) < 0 && rc == 0) {
        *err = rel;
        rc = -EIO;
    }
    /* Whatever happened, nothing is left: an error here is the error if there was none. */
    if (sup_release(&c.sup, &rel) < 0 && rc == 0) {
        *err = rel;
        rc = -EBUSY;
    }
    netns_release(&c.netns); /* its services have exited: the namespaces go */
    tee_close(&c);
    if (c.invalid)
        *verdict = STACK_INVALID;
    else if (c.interrupted)
        *verdict = STACK_INTERRUPTED;
    return rc;
}
