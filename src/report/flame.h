/*
 * flame: the HTML report's section of --profile (docs/profile.md): a bar per
 * tcp - unix pair of what a request costs more over TCP by kernel subsystem
 * (the difference first), a stacked bar per cell and side (µs per request by
 * subsystem), and a flame graph per cell from its runs' folded stacks, each
 * frame coloured by its subsystem. Drawn from the document's "profile" and
 * the runs' own; nothing when the evidence was not profiled.
 */
#ifndef HOPBENCH_REPORT_FLAME_H
#define HOPBENCH_REPORT_FLAME_H

#include <stdio.h>

#include "report/htmldata.h"

#define PROF_LABEL_CAP 160

/* The section's charts for one file (its head has "profile"). */
void chart_profile(FILE *f, const struct hfile *hf);

#endif
