/*
 * report/saving: the tables and the JSON of `hopbench cost` (cost.h computes,
 * this prints). Strings from the evidence (endpoints, protocols) are escaped
 * with text_safe before they reach a terminal.
 */
#ifndef HOPBENCH_REPORT_SAVING_H
#define HOPBENCH_REPORT_SAVING_H

#include <jansson.h>
#include <stdio.h>

#include "cost.h"

#define REPORT_SAVING_SCHEMA "hopbench.cost/1"

/* The cells that hold runs that count over both transports (one endpoint each). */
bool report_saving_cell_ok(const struct cost_cell *c);

/*
 * Prints what the Unix socket saves in each cell of s, from the evidence at
 * path (named in the heading), with the traffic, price and application work
 * of p. Cells without counted runs over both transports get one line saying so.
 */
void report_saving_table(FILE *f, const char *path, const struct cost_set *s,
                         const struct cost_plan *p);

/*
 * The short form, under label: per cell of s, per CPU figure, the saving per
 * request with its interval and share, and the rate that saves one whole
 * vCPU, each printed as report_saving_table prints it; that rate only for a
 * significant difference (cost_saving.significant), and for the cell's key
 * figure (the whole CPU per request, whose month report_saving_table prints in
 * full) with it what the saving is worth a month at p's first traffic (when p
 * has one), in the words of that table's row; else why it is not priced
 * ("no significant difference (p=.., n=..): not priced").
 */
void report_saving_brief(FILE *f, const char *label, const struct cost_set *s,
                         const struct cost_plan *p);

/* The same figures as JSON (docs/evidence.md, "hopbench cost"); NULL when a string is not
 * UTF-8 or memory runs out. */
json_t *report_saving_json(const char *path, const struct cost_set *s, const struct cost_plan *p);

#endif
