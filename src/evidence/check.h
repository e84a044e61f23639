/*
 * check: a run record as compare and merge read it back: the key that names
 * its cell (and rep), whether it counts, and checks that it is a record with
 * figures a run can have (rates and costs finite and not negative, ops/s what
 * its ops and window give, each latency object in order from min to max).
 */
#ifndef HOPBENCH_EVIDENCE_CHECK_H
#define HOPBENCH_EVIDENCE_CHECK_H

#include <jansson.h>
#include <stdbool.h>

#include "util.h"

/*
 * What identifies a run: compare matches cells, merge matches cells and reps.
 * A run whose endpoint has a label is placed by its label, not its address:
 * the label names the hop, the address (a free port, a temporary socket path)
 * may change from one invocation to the next.
 */
struct run_key {
    const char *endpoint, *mode;
    const char *label; /* "" when the endpoint has none */
    const char *proto; /* "" in evidence from before the protocols */
    json_int_t size, connections, pipeline;
    json_int_t rep; /* -1 when the record has none */
    double rate;    /* open loop: the rate asked for; 0 = closed loop */
    /* placement.key ("process", "netns other"), "" in evidence from before it; not in the
     * cell's identity: compare sets two placements of one cell side by side */
    const char *placement;
    /* the wait the client used: "epoll", "block", "" when the record has none or another;
     * static strings, not the cell's identity: compare shows two waits of one cell */
    const char *wait;
};

/*
 * Fills k from run (its strings point into run; label "" when the run has no
 * string "label"); false when endpoint, mode, size, connections or pipeline is
 * missing.
 */
bool evidence_run_key(const json_t *run, struct run_key *k);

/*
 * The placement a run is shown under, into buf (cap bytes; not escaped): the
 * container or pod the document's placement names ("pod web-0 on node n1",
 * "container load"), with the run's own key after it when that is not
 * "process" ("pod web-0 on node n1, netns other"); for a merged document of
 * several, each of its placements[] that names one, joined by " + "; else
 * the run's key ("process", "netns other", "" in evidence from before it).
 * doc_place may be NULL.
 */
void evidence_place_label(char *buf, size_t cap, const json_t *doc_place, const char *run_key);

/*
 * Appends " [WHATa -> b]" to the text in buf (cap bytes in all), escaped with
 * text_safe, when a and b are both known (not "") and differ: how compare,
 * merge and report say that the runs of one cell differed in a setting kept
 * beside its key ("[wait epoll -> block]", "[process -> netns other]").
 */
void evidence_label_change(char *buf, size_t cap, const char *what, const char *a, const char *b);

/* a and b name the same cell (the rep aside): evidence_key_order is 0. */
bool evidence_same_cell(const struct run_key *a, const struct run_key *b);

/*
 * The order of cells: unlabelled before labelled runs, then by label (or, for
 * runs without one, endpoint), mode, proto, rate, size, connections, pipeline.
 * Two labelled runs with the same label are in one place whatever their
 * endpoints; a labelled and an unlabelled run never are.
 */
int evidence_key_order(const struct run_key *a, const struct run_key *b);

/* The run says it is valid. */
bool evidence_run_valid(const json_t *run);

/* The run counts in a comparison: valid and not cut short by Ctrl-C. */
bool evidence_run_counts(const json_t *run);

/* What the writer puts in place of a run it could not encode: {"error": "..."}. */
bool evidence_run_placeholder(const json_t *run);

/* A record of "runs" is an object; else -EINVAL, err saying what it is. */
int evidence_check_record(const json_t *run, struct hb_err *err);

/*
 * A run's figures are possible ones: ops/s and CPU per op finite and not
 * negative, ops/s equal to ops / window_s when the run has both (a rate no run
 * could have measured is refused), each latency object (the run's, the open
 * loop's service time, each phase's) in order from min to max. 0, or -EINVAL
 * with err naming the figure.
 */
int evidence_check_figures(const json_t *run, struct hb_err *err);

/*
 * The cell of one record of "runs", as compare reads it: checks that it is
 * an object with a cell's key and possible figures, fills *k (its strings
 * lent from run) and *counts (valid and not cut short, the runs compare
 * counts). Returns 0; 1 for the placeholder of a run the writer could not
 * encode (nothing filled); -EINVAL with err set (without the file and run).
 */
int evidence_run_cell(const json_t *run, struct run_key *k, bool *counts, struct hb_err *err);

#endif
