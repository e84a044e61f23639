/*
 * metric: the metrics summaries and compare share (see metric.h).
 */
#include "evidence/metric.h"

#include "evidence/schema.h"

static const struct metric_def defs[METRICS] = {
    [METRIC_OPS_PER_S] = { EV_OPS_PER_S, "ops/s", "ops/s", NULL, EV_OPS_PER_S, 1, 0 },
    [METRIC_P50] = { "p50_ns", "p50 µs", "p50 µs", EV_LATENCY_NS, EV_P50, 1e-3, 2 },
    [METRIC_MEAN] = { "mean_ns", "mean µs", "mean µs", EV_LATENCY_NS, EV_MEAN, 1e-3, 2 },
    [METRIC_P99] = { "p99_ns", "p99 µs", "p99 µs", EV_LATENCY_NS, EV_P99, 1e-3, 2 },
    [METRIC_P999] = { "p999_ns", "p99.9 µs", "p99.9 µs", EV_LATENCY_NS, EV_P999, 1e-3, 2 },
    [METRIC_CPU_PER_OP] = { EV_CLIENT_CPU_NS_PER_OP, "cpu µs/op", "client cpu µs/op", NULL,
                            EV_CLIENT_CPU_NS_PER_OP, 1e-3, 2 },
};

const struct metric_def *metric_def(enum summary_metric m)
{
    return &defs[(unsigned)m < METRICS ? m : 0];
}
