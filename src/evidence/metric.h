/*
 * metric: the figures of a run that repetitions are summarized and compared
 * by (ops/s, p50, mean latency, p99, p99.9, client CPU per op), listed once for the run
 * summary, the lab's summaries and compare: their names in JSON, their
 * labels, where a run record of the evidence holds them and how they are
 * shown. Their value in a struct run_record is report/metric.h's.
 */
#ifndef HOPBENCH_EVIDENCE_METRIC_H
#define HOPBENCH_EVIDENCE_METRIC_H

enum summary_metric {
    METRIC_OPS_PER_S = 0,
    METRIC_P50,
    METRIC_MEAN,
    METRIC_P99,
    METRIC_P999,
    METRIC_CPU_PER_OP,
    METRICS
};

struct metric_def {
    const char *name;      /* in the summary's JSON: "ops_per_s", "p50_ns", ... */
    const char *label;     /* the summary's label, with its unit: "p50 µs" */
    const char *cmp_label; /* compare's table title, with its unit: "client cpu µs/op" */
    const char *obj;       /* the run's object holding key ("latency_ns"), NULL for the run */
    const char *key;       /* its key there: "p50", "ops_per_s" */
    double scale;          /* compare shows value * scale (1e-3: ns to µs); the run summary shows
                            * latencies and CPU as value / 1000, which rounds some values to the
                            * other side of a printed digit, so each keeps its own */
    int digits;            /* decimals shown */
};

/* The metric m (METRIC_OPS_PER_S .. METRICS - 1). */
const struct metric_def *metric_def(enum summary_metric m);

#endif
