/*
 * readings: the lifecycle's share of the saving and what saturated, beside a
 * stack's tables (readings.h).
 */
#include "stack/readings.h"

#include <errno.h>
#include <math.h>

#include "stats.h"

/* The median of the finite values of x[0 .. n - 1], NAN with none. */
static double med(const double *x, unsigned n)
{
    double m;

    stats_median_known(x, n, &m);
    return m;
}

int stack_lifecycle_of(const struct stack_cell *c, struct stack_lifecycle *out)
{
    double total[2];

    for (unsigned t = 0; t < 2; t++) {
        const struct stack_arm *a = &c->arm[t];
        double life[STACK_MAX_REPS];
        for (unsigned r = 0; r < a->n; r++)
            life[r] = a->connect_us[r] + a->close_us[r]; /* NAN when either was not measured */
        out->life[t] = med(life, a->n);
        out->transfer[t] = med(a->response_us, a->n);
        if (isnan(out->life[t]) || isnan(out->transfer[t])) return -ENOENT;
        total[t] = out->life[t] + out->transfer[t];
    }
    out->saved = total[0] - total[1];
    out->saved_life = out->life[0] - out->life[1];
    out->share = out->saved > 0 ? out->saved_life / out->saved : NAN;
    return 0;
}

void stack_lifecycle_print(FILE *f, const struct stack_cell *c)
{
    struct stack_lifecycle l;

    if (c->arm[0].n == 0 || c->arm[1].n == 0) return;
    if (stack_lifecycle_of(c, &l) < 0) {
        if (c->backend)
            fprintf(f, "  lifecycle: the client keeps its connections; a backend connection's "
                       "lifecycle is in the services'\n    CPU (its share: the bare hop's "
                       "connect-mode measurement, and the lifecycle in CPU per request)\n");
        else
            fprintf(f, "  lifecycle: every connection kept for the run, none opened per request: "
                       "none of the saving\n    is a connection's lifecycle\n");
        return;
    }
    fprintf(f,
            "  lifecycle (a connection per request: the client's phases, mean µs per request, "
            "medians):\n    tcp connect + close %.1f, transfer %.1f; unix connect + close %.1f, "
            "transfer %.1f\n",
            l.life[0], l.transfer[0], l.life[1], l.transfer[1]);
    if (isnan(l.share))
        fprintf(f, "    the socket saves nothing here (tcp - unix = %.1f µs): no share to give\n",
                l.saved);
    else
        fprintf(f,
                "    the socket saves %.1f µs per request: the lifecycle %.1f (%.0f %%), the "
                "transfer %.1f (%.0f %%)\n",
                l.saved, l.saved_life, 100 * l.share, l.saved - l.saved_life, 100 * (1 - l.share));
}

/* The median over arm a's runs of its CPU per request: client + services, or the services. */
static double cpu_of(const struct stack_cell *c, const struct stack_arm *a, bool client)
{
    double x[STACK_MAX_REPS];

    if (client) return med(a->sum_us, a->n);
    for (unsigned r = 0; r < a->n; r++) {
        x[r] = c->nsvc > 0 ? 0 : NAN;
        for (unsigned k = 0; k < c->nsvc; k++)
            x[r] += a->svc_us[k][r];
    }
    return med(x, a->n);
}

void stack_lifecycle_cpu_print(FILE *f, const struct stack_cell *kept,
                               const struct stack_cell *connect, bool client)
{
    double k[2], n[2];

    for (unsigned t = 0; t < 2; t++) {
        k[t] = cpu_of(kept, &kept->arm[t], client);
        n[t] = cpu_of(connect, &connect->arm[t], client);
        if (isnan(k[t]) || isnan(n[t])) return;
    }
    double saved = n[0] - n[1], life = (n[0] - k[0]) - (n[1] - k[1]);
    fprintf(f,
            "\nlifecycle in CPU per request (%s, medians: %s less %s, the pod study's "
            "arithmetic):\n    tcp %.1f µs, unix %.1f µs;",
            client ? "client + services" : "the services", connect->label, kept->label, n[0] - k[0],
            n[1] - k[1]);
    if (saved > 0)
        fprintf(f,
                " of the %.1f µs the socket saves with a connection per request, %.1f (%.0f %%)\n",
                saved, life, 100 * life / saved);
    else
        fprintf(f, " the socket saves nothing with a connection per request (%.1f µs)\n", saved);
}

int stack_busy_of(const struct stack_cell *c, const struct stack_arm *a, struct stack_busy *out)
{
    double cl[STACK_MAX_REPS], sv[STACK_MAX_REPS];

    if (a->n == 0) return -ENOENT;
    for (unsigned r = 0; r < a->n; r++)
        cl[r] = a->client_us[r] * a->ops_s[r] / 1e6;
    out->machine = med(a->machine_cpus, a->n);
    out->client = med(cl, a->n);
    out->other = med(a->other_cpus, a->n);
    out->cpus = a->cpus;
    out->threads = a->threads ? a->threads : 1;
    out->what = STACK_SAT_NONE;
    out->svc_at = 0;
    for (unsigned k = 0; k < STACK_MAX_SVC; k++)
        out->svc[k] = NAN;
    for (unsigned k = 0; k < c->nsvc && k < STACK_MAX_SVC; k++) {
        for (unsigned r = 0; r < a->n; r++)
            sv[r] = a->svc_us[k][r] * a->ops_s[r] / 1e6;
        out->svc[k] = med(sv, a->n);
        if (out->svc[k] > out->svc[out->svc_at] || isnan(out->svc[out->svc_at])) out->svc_at = k;
    }
    if (out->cpus > 0 && out->machine >= STACK_SATURATED * out->cpus)
        out->what = STACK_SAT_MACHINE;
    else if (out->client >= STACK_SATURATED * out->threads)
        out->what = STACK_SAT_CLIENT;
    else if (c->nsvc > 0 && out->svc[out->svc_at] >= STACK_SATURATED)
        out->what = STACK_SAT_SERVICE;
    return 0;
}

/* " 0.71" or " n/a". */
static void cpus_text(FILE *f, double v)
{
    if (isnan(v))
        fprintf(f, " n/a");
    else
        fprintf(f, " %.2f", v);
}

/* Who kept the machine busiest: the client, a service, or other processes. */
static const char *most(const struct stack_cell *c, const struct stack_busy *b)
{
    const char *who = "the client";
    double top = b->client;

    if (c->nsvc > 0 && b->svc[b->svc_at] > top) {
        who = c->svc[b->svc_at];
        top = b->svc[b->svc_at];
    }
    return b->other > top ? "other processes: what was left of the machine was measured" : who;
}

void stack_busy_print(FILE *f, const struct stack_cell *c)
{
    for (unsigned t = 0; t < 2; t++) {
        const struct stack_arm *a = &c->arm[t];
        struct stack_busy b;

        if (stack_busy_of(c, a, &b) < 0) continue;
        fprintf(f,
                "  load %s: %u connection(s), %u client thread(s); busy, CPUs (medians): machine",
                a->transport, a->conns, b.threads);
        cpus_text(f, b.machine);
        fprintf(f, " of %u, client", b.cpus);
        cpus_text(f, b.client);
        for (unsigned k = 0; k < c->nsvc && k < STACK_MAX_SVC; k++) {
            fprintf(f, ", %s", c->svc[k]);
            cpus_text(f, b.svc[k]);
        }
        fprintf(f, ", other processes and steal");
        cpus_text(f, b.other);
        switch (b.what) {
        case STACK_SAT_MACHINE:
            fprintf(f, "\n    saturated: the machine (its %u CPUs %.0f %% busy; the most: %s)\n",
                    b.cpus, fmin(100, 100 * b.machine / b.cpus), most(c, &b));
            break;
        case STACK_SAT_CLIENT:
            fprintf(f, "\n    saturated: the client (its %u load thread(s) at %.2f CPU)\n",
                    b.threads, b.client);
            break;
        case STACK_SAT_SERVICE:
            fprintf(f,
                    "\n    saturated if it serves on one thread: %s on a whole CPU (%.2f); the "
                    "machine had %.2f CPU idle\n",
                    c->svc[b.svc_at], b.svc[b.svc_at], b.cpus - b.machine);
            break;
        default:
            fprintf(f, "\n    not saturated: %.2f of %u CPUs idle\n", b.cpus - b.machine, b.cpus);
        }
    }
}
