/*
 * report/services: the named services (--service) and watched hops (--watch)
 * of `run`, as tables and as keys of each run's evidence.
 */
#ifndef HOPBENCH_REPORT_SERVICES_H
#define HOPBENCH_REPORT_SERVICES_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "endpoint.h"
#include "host/observe.h"
#include "host/service.h"
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

/* A counter of the host (host/counters.h) as the evidence holds it (evidence_count_json). */
json_t *report_ctr_json(const struct ctr_val *v);

/* A gauge of the host (host/observe.h) as the evidence holds it (evidence_gauge_json). */
json_t *report_gauge_json(const struct obs_gauge *g);

/*
 * A service's figures as the evidence holds them: name, kind, source, CPU,
 * PSS and working set at the window's start and end, processes; with its CPU
 * per op (taken over) when per_op is not NULL. A new object, or NULL.
 */
json_t *report_service_json(const struct service_spec *sp, const struct obs_service *o,
                            json_t *per_op);

/*
 * A hop's sockets as the evidence holds them: its endpoint (and label, when
 * label), transport, the gauges g (by enum obs_gauge_index) and the listen
 * backlog. A new object, or NULL.
 */
json_t *report_hop_json(const struct endpoint *ep, bool label,
                        const struct obs_gauge *const g[OBS_GAUGES], const struct ctr_val *backlog);

/*
 * Adds to a run's evidence object its endpoint's "label" when it has one, and
 * to its "observed" object "services" and "services_total" when it had
 * services, "watch" when it had watched hops. Returns 0, or -ENOMEM when a key
 * or an element could not be set (a cgroup directory that is not UTF-8 cannot
 * be a JSON string): the run is then written as one that could not be encoded.
 */
int report_services_json(json_t *run, const struct run_record *r);

#endif
