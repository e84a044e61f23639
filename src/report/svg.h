/*
 * svg: what the HTML report draws with: text escaped for HTML, the axes of a
 * chart (linear, logarithmic, or the "nines" of a percentile: 90 %, 99 %,
 * 99.9 % equally spaced) and the SVG elements of a chart, written to a FILE.
 * No layout beyond one plot rectangle, no JavaScript: a chart is static SVG
 * inline in the page.
 */
#ifndef HOPBENCH_REPORT_SVG_H
#define HOPBENCH_REPORT_SVG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/*
 * Writes s to f as HTML text (also fit for an attribute in double or single
 * quotes): & < > " ' become entities, every control character (C0 but tab and
 * newline, DEL) and every byte that is not part of valid UTF-8 becomes a
 * visible \xNN, so a label or command line from a file cannot add markup.
 * NULL writes nothing.
 */
void html_text(FILE *f, const char *s);

/* The highest percentile the nines axis shows: 99.99 %, 4 nines. */
#define SVG_NINES_MAX 4.0

/*
 * A percentile (0 .. 100) as its "nines": -log10(1 - p / 100), so 0 % is 0,
 * 90 % is 1, 99 % is 2, 99.9 % is 3; capped at SVG_NINES_MAX (and 0 below 0).
 */
double svg_nines(double percentile);

/* The percentile at n nines: 100 * (1 - 10^-n); the inverse of svg_nines. */
double svg_percentile_at(double nines);

enum svg_scale {
    SVG_LINEAR = 0,
    SVG_LOG,   /* log10 of the value: lo and hi must be > 0 */
    SVG_NINES, /* the value is a percentile, placed by svg_nines */
};

/* One axis: values lo .. hi onto pixels px0 .. px1 (px1 < px0 for a y axis). */
struct svg_axis {
    enum svg_scale scale;
    double lo, hi;
    double px0, px1;
};

/*
 * v's pixel on a (v clamped to lo .. hi; a log axis takes v <= 0 as lo).
 * lo == hi maps everything to the middle.
 */
double svg_map(const struct svg_axis *a, double v);

/*
 * Widens [*lo, *hi] to round bounds for the scale: a log axis to powers of
 * ten, a linear one from 0 to a round figure above *hi. A degenerate range
 * (nothing measured) becomes a usable one.
 */
void svg_axis_round(enum svg_scale scale, double *lo, double *hi);

/* The palette the report gives series: colour i (any i, it wraps). */
const char *svg_colour(size_t i);

/* A number for a reader: "12,345", "1.23", "0.012" (three significant digits below 100). */
void svg_number(char *buf, size_t cap, double v);

/*
 * Opens an <svg> of w x h pixels with class "chart KIND" and a <title> (what
 * the chart shows, escaped); svg_close ends it.
 */
void svg_open(FILE *f, const char *kind, int w, int h, const char *title);
void svg_close(FILE *f);

/*
 * Draws the x axis along y = at (ticks, their labels, a grid line each from
 * at up to top) and its title under it; unit follows each label ("" for none).
 * The nines axis labels its ticks 0 %, 90 %, 99 %, 99.9 %, 99.99 %.
 */
void svg_axis_x(FILE *f, const struct svg_axis *a, double at, double top, const char *title);

/* The y axis along x = at, grid lines to right; its title rotated on the left. */
void svg_axis_y(FILE *f, const struct svg_axis *a, double at, double right, const char *title);

/* Text at (x, y) with class cls and anchor ("start", "middle", "end"), s escaped. */
void svg_text(FILE *f, double x, double y, const char *cls, const char *anchor, const char *s);

#endif
