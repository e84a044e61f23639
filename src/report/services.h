/*
 * report/services: the named services (--service) and watched hops (--watch)
 * of `run`, as tables and as keys of each run's evidence.
 */
#ifndef HOPBENCH_REPORT_SERVICES_H
#define HOPBENCH_REPORT_SERVICES_H

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

#include "report/report.h"

/*
 * CPU µs per request of the client, each service, their sum and the whole
 * system; each service's PSS and working set; each watched hop's sockets;
 * with more than one run per cell, the median of each figure per cell and
 * each cell against the first (ratio, bootstrap interval from seed, p). Prints
 * nothing when the runs had no service and no watched hop.
 */
void report_services(FILE *f, const struct run_record *recs, size_t n, unsigned ncells,
                     uint64_t seed);

/*
 * Adds to a run's evidence object its endpoint's "label" when it has one, and
 * to its "observed" object "services" and "services_total" when it had
 * services, "watch" when it had watched hops. Returns 0, or -ENOMEM when a key
 * or an element could not be set (a cgroup directory that is not UTF-8 cannot
 * be a JSON string): the run is then written as one that could not be encoded.
 */
int report_services_json(json_t *run, const struct run_record *r);

#endif
