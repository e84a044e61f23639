/*
 * flame: the HTML report's --profile charts (report/flame.h): what a request
 * costs more over TCP by subsystem first, then each cell's side stacked by
 * subsystem, then a flame graph of each cell's stacks. Static SVG, no script:
 * each frame's <title> names it with its samples.
 */
#include "report/flame.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "evidence/schema.h"
#include "host/subsys.h"
#include "report/svg.h"
#include "util.h"

#define W         900
#define LEFT      20
#define RIGHT     740
#define ROW_H     30
#define FRAME_H   15
#define MIN_PX    1.0 /* a frame narrower than this is left out */
#define DEPTH_MAX 70

/* Each subsystem's colour, and a side's (the flame graph's first row). */
static const char *const sub_colour[SUBSYS_COUNT] = {
    [SUB_SYSCALL] = "#9e9e9e", [SUB_EPOLL] = "#8d6e63",   [SUB_TCP] = "#e53935",
    [SUB_IP] = "#fb8c00",      [SUB_SOFTIRQ] = "#fdd835", [SUB_NETFILTER] = "#6d4c41",
    [SUB_UNIX] = "#1e88e5",    [SUB_SOCKET] = "#8e24aa",  [SUB_COPY] = "#00897b",
    [SUB_SCHED] = "#43a047",   [SUB_USER] = "#90caf9",    [SUB_OTHER] = "#cfcfcf",
};
#define SIDE_COLOUR "#e0e0e0"

static double num(const json_t *o, const char *k)
{
    const json_t *v = json_object_get(o, k);
    return json_is_number(v) ? json_number_value(v) : 0;
}

static void legend(FILE *f, double y)
{
    double x = LEFT;

    for (int k = 0; k < SUBSYS_COUNT; k++) {
        const char *name = subsys_name((enum prof_subsys)k);
        fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"10\" height=\"10\" fill=\"%s\"/>\n", x,
                y - 9, sub_colour[k]);
        svg_text(f, x + 13, y, "tick", "start", name);
        x += 22 + 7 * (double)strlen(name);
    }
}

/* One bar of subsystem segments from v[k] (µs); negative ones to the left of 0. */
static void bar(FILE *f, const double *v, const struct svg_axis *x, double y, const char *what)
{
    double pos = 0, neg = 0;

    for (int k = 0; k < SUBSYS_COUNT; k++) {
        double a = v[k] >= 0 ? pos : neg + v[k], b = a + fabs(v[k]);
        if (fabs(v[k]) < 1e-9) continue;
        fprintf(f,
                "<rect class=\"bar\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"12\" "
                "fill=\"%s\"><title>",
                svg_map(x, a), y, svg_map(x, b) - svg_map(x, a) + 0.01, sub_colour[k]);
        html_text(f, what);
        fprintf(f, ": %s %+.2f µs</title></rect>\n", subsys_name((enum prof_subsys)k), v[k]);
        if (v[k] >= 0)
            pos += v[k];
        else
            neg += v[k];
    }
}

/* The subsystems of an object {"tcp": {KEY: v}, ...} into v. */
static void subs_of(const json_t *subs, const char *key, double *v)
{
    for (int k = 0; k < SUBSYS_COUNT; k++)
        v[k] = num(json_object_get(subs, subsys_name((enum prof_subsys)k)), key);
}

/* What a request costs more over TCP, the hop's sides together, a bar per pair. */
static void chart_diffs(FILE *f, const json_t *diffs)
{
    size_t n = json_array_size(diffs), i;
    double lo = 0, hi = 0, v[SUBSYS_COUNT];
    const json_t *d;

    if (n == 0) return;
    json_array_foreach(diffs, i, d)
    {
        double p = 0, m = 0;
        subs_of(json_object_get(json_array_get(json_object_get(d, "sides"), 0), "subsystems"),
                "diff", v);
        for (int k = 0; k < SUBSYS_COUNT; k++)
            *(v[k] > 0 ? &p : &m) += v[k];
        if (p > hi) hi = p;
        if (m < lo) lo = m;
    }
    struct svg_axis x = { SVG_LINEAR, lo, hi > lo ? hi : lo + 1, LEFT, RIGHT };
    double top = 26;
    svg_open(
        f, "profile-diff", W, (int)(top + ROW_H * (double)n + 44),
        "What a request costs more over TCP than over the Unix socket, by kernel subsystem, "
        "the hop's sides together (medians subtracted); left of 0: what the socket costs more");
    legend(f, 14);
    svg_axis_x(f, &x, top + ROW_H * (double)n + 4, top, "µs per request, tcp − unix");
    json_array_foreach(diffs, i, d)
    {
        const json_t *hop = json_array_get(json_object_get(d, "sides"), 0);
        char label[2 * PROF_LABEL_CAP], val[64];
        double y = top + ROW_H * (double)i;
        snprintf(label, sizeof(label), "%s − %s", json_string_value(json_object_get(d, "tcp")),
                 json_string_value(json_object_get(d, "unix")));
        svg_text(f, LEFT, y + 10, "row-label", "start", label);
        subs_of(json_object_get(hop, "subsystems"), "diff", v);
        bar(f, v, &x, y + 13, label);
        snprintf(val, sizeof(val), "%+.2f µs", num(json_object_get(hop, "total"), "diff"));
        svg_text(f, RIGHT + 10, y + 24, "cpu-val", "start", val);
    }
    svg_close(f);
}

/* Each cell's sides, stacked by subsystem (medians). */
static void chart_sides(FILE *f, const json_t *cells)
{
    size_t rows = 0, i, j;
    double hi = 0, v[SUBSYS_COUNT];
    const json_t *c, *s;

    json_array_foreach(cells, i, c)
    {
        json_array_foreach(json_object_get(c, "sides"), j, s)
        {
            double t = num(json_object_get(s, "total"), EV_MEDIAN);
            if (t <= 0) continue;
            rows++;
            if (t > hi) hi = t;
        }
    }
    if (rows == 0) return;
    struct svg_axis x = { SVG_LINEAR, 0, hi, LEFT, RIGHT };
    double top = 26, y = top;
    svg_open(f, "profile-sides", W, (int)(top + ROW_H * (double)rows + 44),
             "µs per request of each side of each cell, stacked by kernel subsystem (medians); "
             "hop: the client, the server and the services together");
    legend(f, 14);
    svg_axis_x(f, &x, top + ROW_H * (double)rows + 4, top, "µs per request");
    json_array_foreach(cells, i, c)
    {
        json_array_foreach(json_object_get(c, "sides"), j, s)
        {
            char label[2 * PROF_LABEL_CAP], val[32];
            double t = num(json_object_get(s, "total"), EV_MEDIAN);
            if (t <= 0) continue;
            snprintf(label, sizeof(label), "%s (%s): %s",
                     json_string_value(json_object_get(c, "cell")),
                     json_string_value(json_object_get(c, "transport")),
                     json_string_value(json_object_get(s, EV_NAME)));
            svg_text(f, LEFT, y + 10, "row-label", "start", label);
            subs_of(json_object_get(s, "subsystems"), EV_MEDIAN, v);
            bar(f, v, &x, y + 13, label);
            snprintf(val, sizeof(val), "%.2f µs", t);
            svg_text(f, RIGHT + 10, y + 24, "cpu-val", "start", val);
            y += ROW_H;
        }
    }
    svg_close(f);
}

/* ---- flame graphs ---------------------------------------------------------------------- */

struct node {
    char *name;
    uint64_t count;
    struct node *kid;
    size_t nkid, cap;
};

static struct node *child(struct node *n, const char *name, size_t len)
{
    for (size_t i = 0; i < n->nkid; i++)
        if (strncmp(n->kid[i].name, name, len) == 0 && n->kid[i].name[len] == '\0')
            return &n->kid[i];
    if (n->nkid == n->cap) {
        n->cap = n->cap ? n->cap * 2 : 4;
        n->kid = realloc(n->kid, n->cap * sizeof(*n->kid));
        if (n->kid == NULL) abort();
    }
    struct node *k = &n->kid[n->nkid++];
    memset(k, 0, sizeof(*k));
    k->name = strndup(name, len);
    if (k->name == NULL) abort();
    return k;
}

/* Adds one folded line "a;b;c COUNT" under root. */
static void fold_add(struct node *root, const char *line)
{
    const char *sp = strrchr(line, ' ');
    uint64_t count;
    struct node *n = root;

    if (sp == NULL) return;
    count = strtoull(sp + 1, NULL, 10);
    root->count += count;
    for (const char *p = line; p < sp;) {
        const char *e = memchr(p, ';', (size_t)(sp - p));
        size_t len = e != NULL ? (size_t)(e - p) : (size_t)(sp - p);
        n = child(n, p, len);
        n->count += count;
        p += len + 1;
    }
}

static void tree_free(struct node *n)
{
    for (size_t i = 0; i < n->nkid; i++)
        tree_free(&n->kid[i]);
    free(n->kid);
    free(n->name);
}

static unsigned depth_of(const struct node *n, double px_per, unsigned d)
{
    unsigned m = d;

    for (size_t i = 0; i < n->nkid; i++)
        if ((double)n->kid[i].count * px_per >= MIN_PX) {
            unsigned k = depth_of(&n->kid[i], px_per, d + 1);
            if (k > m) m = k;
        }
    return m;
}

static void frames(FILE *f, const struct node *n, double x, double px_per, unsigned d,
                   unsigned depth, uint64_t total)
{
    for (size_t i = 0; i < n->nkid && d < DEPTH_MAX; i++) {
        const struct node *k = &n->kid[i];
        double w = (double)k->count * px_per;
        if (w >= MIN_PX) {
            double y = (double)(depth - d) * FRAME_H + 4;
            int s = d == 0                           ? -1
                    : strcmp(k->name, "[user]") == 0 ? SUB_USER
                                                     : subsys_of_symbol(k->name);
            fprintf(f,
                    "<g><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" fill=\"%s\" "
                    "stroke=\"#fff\" stroke-width=\"0.5\"/><title>",
                    x, y, w, FRAME_H - 1, s < 0 ? SIDE_COLOUR : sub_colour[s]);
            html_text(f, k->name);
            fprintf(f, " (%s): %llu samples, %.1f %%</title>",
                    s < 0 ? "no subsystem" : subsys_name((enum prof_subsys)s),
                    (unsigned long long)k->count, 100.0 * (double)k->count / (double)total);
            if (w > 40) {
                char label[128];
                size_t fit = (size_t)(w / 6.5);
                snprintf(label, sizeof(label), "%.*s",
                         (int)(fit < sizeof(label) - 1 ? fit : sizeof(label) - 1), k->name);
                svg_text(f, x + 2, y + FRAME_H - 4, "flame", "start", label);
            }
            fputs("</g>\n", f);
            frames(f, k, x, px_per, d + 1, depth, total);
        }
        x += w;
    }
}

/* One cell's stacks merged (the runs that count), drawn root at the bottom. */
static void chart_flame(FILE *f, const struct hcell *cell, const char *name)
{
    struct node root = { 0 };
    const json_t *run, *line;
    size_t i, j;

    json_array_foreach(cell->runs, i, run)
    {
        if (!json_is_true(json_object_get(run, EV_VALID)) ||
            json_is_true(json_object_get(run, EV_INTERRUPTED)))
            continue;
        json_array_foreach(json_object_get(json_object_get(run, EV_PROFILE), "folded"), j,
                           line) if (json_is_string(line)) fold_add(&root, json_string_value(line));
    }
    if (root.count > 0) {
        double px_per = (double)(W - 2 * LEFT) / (double)root.count;
        unsigned depth = depth_of(&root, px_per, 0);
        char title[TEXT_SAFE_CAP + 160];
        snprintf(title, sizeof(title),
                 "Flame graph of %s: every sample's kernel stack, the side at the bottom, "
                 "the sampled function at the top, each frame as wide as its samples",
                 name);
        fputs("<p class=\"muted\">", f);
        html_text(f, name);
        fputs("</p>\n", f);
        svg_open(f, "flame", W, (int)((depth + 1) * FRAME_H + 10), title);
        frames(f, &root, LEFT, px_per, 0, depth, root.count);
        svg_close(f);
    }
    tree_free(&root);
}

void chart_profile(FILE *f, const struct hfile *hf)
{
    const json_t *p = json_object_get(hf->head, EV_PROFILE);
    char name[TEXT_SAFE_CAP];

    chart_diffs(f, json_object_get(p, "differences"));
    chart_sides(f, json_object_get(p, "cells"));
    for (size_t c = 0; c < hf->ncells; c++) {
        hd_cell_name(name, sizeof(name), &hf->cells[c]);
        chart_flame(f, &hf->cells[c], name);
    }
}
