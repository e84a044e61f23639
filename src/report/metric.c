/*
 * metric: a metric's value in a run record (see metric.h).
 */
#include "report/metric.h"

double metric_of_record(const struct run_record *r, enum summary_metric m)
{
    switch (m) {
    case METRIC_OPS_PER_S:
        return report_ops_per_s(r);
    case METRIC_P50:
        return (double)hist_percentile(r->res.lat, 50);
    case METRIC_MEAN:
        return hist_mean(r->res.lat);
    case METRIC_P99:
        return (double)hist_percentile(r->res.lat, 99);
    case METRIC_P999:
        return (double)hist_percentile(r->res.lat, 99.9);
    case METRIC_CPU_PER_OP:
        return report_cpu_ns_per_op(r);
    case METRICS:
        break;
    }
    return 0;
}
