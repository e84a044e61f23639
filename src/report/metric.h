/*
 * metric: a metric's value in a struct run_record (the metrics themselves, and
 * where the evidence holds each, are evidence/metric.h's).
 */
#ifndef HOPBENCH_REPORT_METRIC_H
#define HOPBENCH_REPORT_METRIC_H

#include "evidence/metric.h"
#include "report/record.h"

/* m's value for r: ops/s, a latency percentile in ns, or client CPU ns per op. */
double metric_of_record(const struct run_record *r, enum summary_metric m);

#endif
