/*
 * series: ops and p99 per interval across a run's window, so that a stall
 * shows (docs/evidence.md, runs[].series).
 *
 * An op costs the hot path one compare: before a load thread records an op
 * into its latency histogram, it checks whether the op ended past the end of
 * the interval it is in. When it did, the thread reads its histogram taken
 * 128 counters at a time (216 coarse counters, each at most 12.5 % wide
 * above 2 µs, 128 ns below), adds what each gained since the last such
 * reading into the run's slot of the interval that ended (relaxed atomic adds,
 * the non-zero ones only: no lock), and starts the new interval: a scan of
 * the histogram (27,648 counters) once an interval at most. After the threads
 * are joined, load_run reads the slots: per interval the ops that ended in it
 * and its p99, the upper edge of the coarse counter holding the rank
 * hist_percentile_rank gives.
 *
 * Intervals are SERIES_STEP_NS (100 ms), or a multiple of it that keeps a
 * duration-bound window (an open loop's with its drain) to SERIES_POINTS; a
 * count-bound run, whose length is not known, has SERIES_COUNT_SLOTS of
 * 100 ms and is coarsened at the end to at most SERIES_POINTS + SERIES_SLACK.
 * Ops ending past the last slot are only counted (beyond).
 */
#ifndef HOPBENCH_ENGINE_SERIES_H
#define HOPBENCH_ENGINE_SERIES_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "hist.h"
#include "util.h"

#define SERIES_SHIFT       7                             /* hist counters per coarse one: 2^7 */
#define SERIES_BUCKETS     (HIST_COUNTS >> SERIES_SHIFT) /* 216 */
#define SERIES_STEP_NS     (100 * NS_PER_MS)
#define SERIES_POINTS      600  /* intervals of a duration-bound window, at most about */
#define SERIES_SLACK       16   /* slots past the planned window: threads that began late */
#define SERIES_COUNT_SLOTS 3000 /* a count-bound run's slots: 300 s of 100 ms */

/* The run's intervals, shared by its load threads. */
struct series_run {
    uint64_t origin_ns;   /* the first interval begins here (no op of the window before it) */
    uint64_t interval_ns; /* 0: no series */
    size_t nslots;
    _Atomic uint32_t *counts; /* nslots × SERIES_BUCKETS coarse counters */
    _Atomic uint64_t beyond;  /* ops that ended past the last slot */
};

/* One load thread's current interval. */
struct series_mine {
    struct series_run *run;
    const struct hist *h; /* the thread's latency histogram, which its ops are recorded into */
    uint64_t next_ns;     /* the current interval ends here: an op ending at or after it turns it */
    size_t slot;          /* the current interval; SIZE_MAX before the first op */
    uint64_t seen[SERIES_BUCKETS]; /* h's coarse counters when the current interval began */
};

/* What a run's series says, per interval: owned arrays, released by series_result_release. */
struct series_result {
    uint64_t interval_ns; /* 0: no series */
    uint64_t end_ns;      /* from the first interval's start to the last thread's end */
    size_t n;             /* intervals: the last one may be partial (end_ns) */
    uint64_t *ops;        /* ops that ended in each interval */
    uint64_t *p99_ns;     /* their p99 (the coarse counter's upper edge); 0 for none */
    uint64_t beyond;      /* ops past the last interval (count-bound runs past 300 s) */
};

/*
 * The interval and slots of a window of duration_ns (0: count-bound) plus
 * drain_ns (an open loop's drain: its timeout), into r (counts not yet
 * allocated). Pure.
 */
void series_plan(struct series_run *r, uint64_t duration_ns, uint64_t drain_ns);

/* The bytes series_alloc takes for r's plan. */
size_t series_mem(const struct series_run *r);

/* Allocates r's slots (setup time: exits on OOM, as xcalloc), every page touched. */
void series_alloc(struct series_run *r);

void series_free(struct series_run *r);

/* A thread's state, before its first op; h is the histogram it records its ops into. */
void series_mine_init(struct series_mine *m, struct series_run *r, const struct hist *h);

/* Ends m's interval (what h gained into the run's slot) and starts the one at at_ns. */
void series_turn(struct series_mine *m, uint64_t at_ns);

/* Adds m's current interval to the run (at the thread's end). */
void series_flush(struct series_mine *m);

/*
 * An op that ended at at_ns is about to be recorded into m's histogram: a
 * compare, and when it ended past the interval, the turn to the next.
 */
static inline void series_note(struct series_mine *m, uint64_t at_ns)
{
    if (at_ns >= m->next_ns) series_turn(m, at_ns);
}

/* The upper edge of coarse counter b: the p99 an interval shows when its rank falls there. */
uint64_t series_bucket_high(size_t b);

/*
 * The p99 of coarse counters c holding total values: the upper edge of the
 * counter where the running count first reaches hist_percentile_rank(99,
 * total); 0 when total is 0.
 */
uint64_t series_p99(const uint64_t *c, uint64_t total);

/*
 * The series of r once every thread has flushed, its window ending end_ns
 * after r's origin: ceil(end_ns / interval) intervals, adjacent ones added
 * in groups when there are more than SERIES_POINTS + SERIES_SLACK
 * (allocated as xcalloc does).
 */
void series_result_of(const struct series_run *r, uint64_t end_ns, struct series_result *out);

void series_result_release(struct series_result *s);

#endif
