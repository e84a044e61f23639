/*
 * cost: what a Unix socket saves over TCP loopback per request, and what that
 * is worth (`hopbench cost`): CPU saved per month at a traffic volume, as a
 * share of one vCPU and at a price, the sustained request rate that saves one
 * whole vCPU, the response time saved, and how application work per request
 * dilutes the saving.
 *
 * Two parts. The arithmetic is pure (no I/O, no globals): parsing --traffic
 * and --app-work, the saving of one figure with its interval, and every figure
 * derived from it. The cells are an evidence file's runs grouped as compare
 * groups them (evidence_run_cell, evidence_key_order), with the endpoint left
 * out of the key and the transport (tcp, unix) as the two sides. A label
 * NAME.tcp or NAME.unix (as the stacks label a cell's arms) puts the run in
 * cell NAME on the side it names, whatever the client's endpoint: it is the
 * transport of the hop under test (behind a web server both of the client's
 * endpoints are TCP and the backend differs). Any other label leaves the run
 * in the cell of unlabelled ones, on its endpoint's transport. cost_read fills them through
 * evidence_read. report/saving.c prints them.
 *
 * A saving is tcp - unix: positive when the Unix socket costs less, negative
 * when it costs more, and every derived figure keeps that sign.
 */
#ifndef HOPBENCH_COST_H
#define HOPBENCH_COST_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "evidence.h"
#include "util.h"

#define COST_MONTH_S     (30.0 * 86400.0) /* the month of every monthly figure: 30 days */
#define COST_MAX_LIST    8                /* items of --traffic and --app-work */
#define COST_PRICE_USD   25.0             /* default --price, USD per vCPU-month: an assumption */
#define COST_BOOTSTRAP   10000            /* bootstrap rounds of an interval */
#define COST_LEVEL       0.95             /* the intervals' confidence level */
#define COST_NAME_CAP    48
#define COST_MAX_FIGURES 24 /* figures a run can hold: CPU per service, latency */

/* A traffic volume as given ("1M/day") and as requests per 30-day month. */
struct cost_traffic {
    char text[32];
    double per_month;
};

/*
 * Parses "N[k|M|G]/UNIT" with N a decimal number > 0 (k = 1e3, M = 1e6,
 * G = 1e9) and UNIT one of s, min, h, day, month (30 days). Returns 0, or
 * -EINVAL with err saying what is wrong (without the option's name).
 */
int cost_traffic_parse(const char *s, struct cost_traffic *t, struct hb_err *err);

/* Average requests per second of t over its month. */
double cost_traffic_per_s(const struct cost_traffic *t);

/*
 * Parses application work per request, "N" followed by ns, us, µs, ms or s
 * (a unit is required), N a decimal number >= 0, into ns. Returns 0 or
 * -EINVAL with err set.
 */
int cost_app_work_parse(const char *s, double *ns, struct hb_err *err);

/* A figure and its interval; lo and hi are NAN when there is none. */
struct cost_range {
    double v, lo, hi;
};

bool cost_range_has_interval(struct cost_range r);

/* r times k, the interval's ends swapped when k < 0 (every figure linear in a saving). */
struct cost_range cost_range_scale(struct cost_range r, double k);

/* One figure of one cell: both transports' medians and what the socket saves. */
struct cost_saving {
    double tcp, uds; /* medians over the runs of each transport */
    size_t n_tcp, n_uds;
    struct cost_range saved; /* tcp - uds, in the figure's unit */
    double p;                /* Mann-Whitney p of the two sides (NAN without an interval) */
    bool significant;        /* p < STATS_ALPHA and the interval excludes 0, with runs enough
                              * for that (stats_mw_min_p below it): only then priced */
};

/*
 * The saving of one figure from its values per run: medians, saved = median
 * tcp - median unix. With at least two runs per transport and every value > 0,
 * the interval is the COST_LEVEL bootstrap interval of the ratio
 * r = median(unix) / median(tcp) (stats_bootstrap_ratio, COST_BOOTSTRAP
 * rounds, seeded: the same inputs give the same interval) carried to the
 * saving, median(tcp) * (1 - r); otherwise there is none. Returns 0, -EINVAL
 * when a side has no value or a value is not finite, -ENOMEM.
 */
int cost_saving_of(const double *tcp, size_t n_tcp, const double *uds, size_t n_uds, uint64_t seed,
                   struct cost_saving *out);

/*
 * The saving tcp - uds from the two medians and the interval [lo, hi] of the
 * ratio uds/tcp: tcp (1 - r), the ratio's high end the saving's low one, the
 * ends held around the point (NAN ends when lo or hi is NAN).
 */
struct cost_range cost_saving_range(double tcp, double uds, double lo, double hi);

/* CPU seconds saved per month at per_month requests, from saved ns per request. */
struct cost_range cost_month_cpu_s(struct cost_range saved_ns, double per_month);

/* CPU seconds per month as a share of one vCPU for the whole month (1 = one vCPU). */
struct cost_range cost_vcpu_share(struct cost_range month_s);

/* A share of one vCPU priced at usd per vCPU-month. */
struct cost_range cost_price(struct cost_range share, double usd);

/*
 * The sustained request rate at which |saved_ns| per request adds up to one
 * whole vCPU: 1e9 / |saved|, INFINITY when nothing is saved. Its interval: from
 * the largest |end| to the smallest; INFINITY above when the saving's interval
 * holds 0 (the saving may be none).
 */
struct cost_range cost_breakeven_rate(struct cost_range saved_ns);

/*
 * The saving as a share of all CPU a request takes once the application does
 * app_ns of work: saved / (hop_ns + app_ns), hop_ns the tcp figure (what the
 * request costs over TCP with no application work). NAN when that is not > 0.
 */
struct cost_range cost_diluted(struct cost_range saved_ns, double hop_ns, double app_ns);

/* ---- cells --------------------------------------------------------------------------- */

enum cost_side { COST_TCP = 0, COST_UDS = 1 };
enum cost_kind { COST_CPU, COST_LATENCY };

/* One figure's values per run, by transport. */
struct cost_series {
    char name[COST_NAME_CAP]; /* "client", "server", "system", a --service's name, "p50"... */
    enum cost_kind kind;
    double *v[2];
    size_t n[2], cap[2];
};

struct cost_cell {
    struct run_key key; /* endpoint "", label NAME or "": spans both transports; strings owned */
    char *endpoint[2];  /* the first endpoint seen on each side, owned; NULL for none */
    char *label[2];     /* the label of the first run of each side, owned; NULL for none */
    /*
     * A side holds runs of more than one place: of two labels, labelled and
     * unlabelled runs, or (without labels) of two endpoints. Runs
     * of one label on several endpoints (each invocation its own free port)
     * are one place: the label names the hop.
     */
    bool mixed[2];
    bool several_endpoints[2]; /* a side's runs were on more than one endpoint */
    size_t runs[2];            /* runs of each side */
    size_t counted[2];         /* the runs that count (valid, not cut short) */
    struct cost_series *series;
    size_t nseries, cap;
};

struct cost_set {
    struct cost_cell *cells; /* in the order first seen */
    size_t ncells, cap;
};

/*
 * Adds one record of "runs" (as evidence_read hands it) to its cell. A run of
 * another transport than tcp or unix, or a placeholder, is left out. Returns 0,
 * -EINVAL with err set (not a run, no cell key, impossible figures), -ENOMEM.
 */
int cost_set_add(struct cost_set *s, const json_t *run, struct hb_err *err);

/*
 * Reads the evidence file at path (a document or --jsonl, merged or not) into
 * s. Returns what evidence_read returns, err naming the file (and the run).
 */
int cost_read(const char *path, struct cost_set *s, struct hb_err *err);

void cost_set_release(struct cost_set *s);

/* The series named name in cell c, or NULL. */
const struct cost_series *cost_cell_series(const struct cost_cell *c, const char *name);

/* What cost computes and prints: the command line's choices. */
struct cost_plan {
    struct cost_traffic traffic[COST_MAX_LIST];
    size_t ntraffic;
    double app_ns[COST_MAX_LIST];
    size_t napp;
    double price_usd; /* per vCPU-month */
    bool price_given; /* --price was given (else COST_PRICE_USD, an assumption) */
    uint64_t seed;    /* of the bootstrap */
};

#endif
