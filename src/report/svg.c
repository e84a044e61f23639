/*
 * svg: HTML text, chart axes and SVG elements for the HTML report (see
 * svg.h). Every string that reaches the page goes through html_text.
 */
#include "report/svg.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

/* The length of the valid UTF-8 sequence at p (2 .. 4), or 0 when it is not one. */
static size_t utf8_len(const unsigned char *p)
{
    size_t n;
    uint32_t cp;

    if (p[0] >= 0xC2 && p[0] <= 0xDF) {
        n = 2;
        cp = p[0] & 0x1Fu;
    } else if (p[0] >= 0xE0 && p[0] <= 0xEF) {
        n = 3;
        cp = p[0] & 0x0Fu;
    } else if (p[0] >= 0xF0 && p[0] <= 0xF4) {
        n = 4;
        cp = p[0] & 0x07u;
    } else {
        return 0;
    }
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (p[i] & 0x3Fu);
    }
    if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF))) return 0;
    if (cp >= 0xD800 && cp <= 0xDFFF) return 0;
    /* C1 controls act on some terminals and mean nothing on a page */
    if (cp >= 0x80 && cp <= 0x9F) return 0;
    return n;
}

void html_text(FILE *f, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;

    if (s == NULL) return;
    while (*p != '\0') {
        size_t n;
        switch (*p) {
        case '&':
            fputs("&amp;", f);
            break;
        case '<':
            fputs("&lt;", f);
            break;
        case '>':
            fputs("&gt;", f);
            break;
        case '"':
            fputs("&quot;", f);
            break;
        case '\'':
            fputs("&#39;", f);
            break;
        default:
            if (*p == '\t' || *p == '\n' || (*p >= 0x20 && *p < 0x7F)) {
                fputc(*p, f);
            } else if (*p >= 0x80 && (n = utf8_len(p)) > 0) {
                fwrite(p, 1, n, f);
                p += n;
                continue;
            } else {
                fprintf(f, "\\x%02x", *p);
            }
        }
        p++;
    }
}

double svg_nines(double percentile)
{
    double n;

    if (!(percentile > 0)) return 0;
    if (percentile >= 100) return SVG_NINES_MAX;
    n = -log10(1 - percentile / 100);
    return n > SVG_NINES_MAX ? SVG_NINES_MAX : n;
}

double svg_percentile_at(double nines)
{
    return 100 * (1 - pow(10, -nines));
}

/* Where v lies between lo and hi on the scale, 0 .. 1. */
static double axis_frac(const struct svg_axis *a, double v)
{
    double lo = a->lo, hi = a->hi;

    if (a->scale == SVG_LOG) {
        lo = log10(lo);
        hi = log10(hi);
        v = v > 0 ? log10(v) : lo;
    } else if (a->scale == SVG_NINES) {
        lo = svg_nines(lo);
        hi = svg_nines(hi);
        v = svg_nines(v);
    }
    if (!(hi > lo)) return 0.5;
    if (v < lo) v = lo;
    if (v > hi) v = hi;
    return (v - lo) / (hi - lo);
}

double svg_map(const struct svg_axis *a, double v)
{
    return a->px0 + axis_frac(a, v) * (a->px1 - a->px0);
}

/* A round step (1, 2 or 5 times a power of ten) for a linear axis of about five ticks up to hi. */
static double linear_step(double hi)
{
    double raw = hi / 5, mag = pow(10, floor(log10(raw))), norm = raw / mag;

    if (norm <= 1) return mag;
    if (norm <= 2) return 2 * mag;
    if (norm <= 5) return 5 * mag;
    return 10 * mag;
}

void svg_axis_round(enum svg_scale scale, double *lo, double *hi)
{
    if (scale == SVG_NINES) {
        *lo = 0;
        *hi = svg_percentile_at(SVG_NINES_MAX);
        return;
    }
    if (scale == SVG_LOG) {
        if (!(*lo > 0)) *lo = *hi > 0 ? *hi / 10 : 1;
        if (!(*hi > 0)) *hi = *lo * 10;
        *lo = pow(10, floor(log10(*lo)));
        *hi = pow(10, ceil(log10(*hi)));
        if (*hi <= *lo) *hi = *lo * 10;
        return;
    }
    *lo = 0;
    if (!(*hi > 0)) {
        *hi = 1;
        return;
    }
    double step = linear_step(*hi);
    *hi = ceil(*hi / step) * step;
}

const char *svg_colour(size_t i)
{
    static const char *const palette[] = { "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                           "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22" };

    return palette[i % (sizeof(palette) / sizeof(palette[0]))];
}

void svg_number(char *buf, size_t cap, double v)
{
    char raw[64];
    size_t len, out = 0;

    if (!isfinite(v)) {
        snprintf(buf, cap, "n/a");
        return;
    }
    if (fabs(v) >= 100 || v == 0) {
        snprintf(raw, sizeof(raw), "%.0f", v);
    } else {
        snprintf(buf, cap, "%.3g", v);
        return;
    }
    /* thousands separated by commas, as the terminal tables print them */
    len = strlen(raw);
    for (size_t i = 0; i < len && out + 2 < cap; i++) {
        size_t left = len - i;
        buf[out++] = raw[i];
        if (left > 1 && (left - 1) % 3 == 0 && raw[i] != '-') buf[out++] = ',';
    }
    if (cap > 0) buf[out < cap ? out : cap - 1] = '\0';
}

void svg_open(FILE *f, const char *kind, int w, int h, const char *title)
{
    fprintf(f,
            "<svg class=\"chart %s\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
            "height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\"><title>",
            kind, w, h, w, h);
    html_text(f, title);
    fputs("</title>\n", f);
}

void svg_close(FILE *f)
{
    fputs("</svg>\n", f);
}

void svg_text(FILE *f, double x, double y, const char *cls, const char *anchor, const char *s)
{
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" class=\"%s\" text-anchor=\"%s\">", x, y, cls, anchor);
    html_text(f, s);
    fputs("</text>\n", f);
}

/* The ticks of a, through tick(f, value, label, ctx) each. */
static void axis_ticks(const struct svg_axis *a,
                       void (*tick)(FILE *f, const struct svg_axis *a, double v, const char *label,
                                    double at, double far),
                       FILE *f, double at, double far)
{
    char label[48];

    if (a->scale == SVG_NINES) {
        static const char *const names[] = { "0 %", "90 %", "99 %", "99.9 %", "99.99 %" };
        for (int n = 0; n <= (int)SVG_NINES_MAX; n++)
            tick(f, a, svg_percentile_at(n), names[n], at, far);
    } else if (a->scale == SVG_LOG && a->lo > 0) {
        /* a tick per power of ten, counted in whole decades */
        int decades = (int)lround(log10(a->hi / a->lo));
        for (int i = 0; i <= decades && i <= 30; i++) {
            double v = a->lo * pow(10, i);
            svg_number(label, sizeof(label), v);
            tick(f, a, v, label, at, far);
        }
    } else if (a->scale == SVG_LINEAR && a->hi > a->lo) {
        double step = linear_step(a->hi - a->lo);
        int steps = (int)floor((a->hi - a->lo) / step + 1e-9);
        for (int i = 0; i <= steps && i <= 100; i++) {
            double v = a->lo + step * i;
            svg_number(label, sizeof(label), v);
            tick(f, a, v, label, at, far);
        }
    }
}

static void tick_x(FILE *f, const struct svg_axis *a, double v, const char *label, double at,
                   double far)
{
    double x = svg_map(a, v);

    fprintf(f, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", x, at, x,
            far);
    svg_text(f, x, at + 14, "tick", "middle", label);
}

static void tick_y(FILE *f, const struct svg_axis *a, double v, const char *label, double at,
                   double far)
{
    double y = svg_map(a, v);

    fprintf(f, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", at, y,
            far, y);
    svg_text(f, at - 4, y + 4, "tick", "end", label);
}

void svg_axis_x(FILE *f, const struct svg_axis *a, double at, double top, const char *title)
{
    fprintf(f, "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", a->px0,
            at, a->px1, at);
    axis_ticks(a, tick_x, f, at, top);
    svg_text(f, (a->px0 + a->px1) / 2, at + 30, "axis-title", "middle", title);
}

void svg_axis_y(FILE *f, const struct svg_axis *a, double at, double right, const char *title)
{
    fprintf(f, "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", at,
            a->px0, at, a->px1);
    axis_ticks(a, tick_y, f, at, right);
    fprintf(f,
            "<text class=\"axis-title\" text-anchor=\"middle\" "
            "transform=\"translate(%.1f %.1f) rotate(-90)\">",
            at - 52, (a->px0 + a->px1) / 2);
    html_text(f, title);
    fputs("</text>\n", f);
}
