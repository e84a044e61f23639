/*
 * evidence: reading evidence files (docs/evidence.md) back, for the
 * subcommands that work on results after the fact:
 *
 * - `hopbench compare OLD.json NEW.json`: cells matched by (endpoint, mode,
 *   size, connections, pipeline); per metric the median of each side and the
 *   benchstat-style delta (ratio of medians, bootstrap interval, Mann-Whitney p).
 * - `hopbench merge A.json B.json... [-o OUT.json]`: runs of the same cell and
 *   rep from several processes or hosts added into one run, histograms exactly.
 *
 * Files (at most EVIDENCE_MAX_BYTES) are read with jansson a run at a time
 * and checked for the schema, every run for figures no run can have; a run's
 * histogram is kept as [index, count] pairs and turned back into a struct
 * hist only when it must be added to another. Both entry points print their
 * own messages (strings from files escaped with text_safe) and return an
 * exit code.
 */
#ifndef HOPBENCH_EVIDENCE_H
#define HOPBENCH_EVIDENCE_H

#include <jansson.h>
#include <stdbool.h>

#include "hist.h"
#include "util.h"

/*
 * `hopbench compare`: argv[0] is "compare", then OLD.json NEW.json (or --help).
 * Prints the tables to stdout, a one-line error to stderr. Returns HB_EXIT_OK
 * (also after --help), HB_EXIT_USAGE for a bad command line, HB_EXIT_RUNTIME
 * when a file cannot be read or is not hopbench evidence, HB_EXIT_INVALID
 * when nothing was comparable (no cell has a valid run in both files).
 */
int evidence_compare_main(int argc, char **argv);

/*
 * `hopbench merge`: argv[0] is "merge", then two or more evidence files and
 * optionally -o OUT.json (default: the merged document on stdout). Returns
 * HB_EXIT_OK, HB_EXIT_USAGE for a bad command line, HB_EXIT_RUNTIME when a
 * file cannot be read, is not evidence, holds runs that cannot be added (a
 * different histogram layout, a missing field) or the output cannot be written.
 */
int evidence_merge_main(int argc, char **argv);

/*
 * The largest evidence file compare and merge read: 256 MiB, twenty times a
 * big lab's. A regular file above it is refused before it is read; a pipe or
 * device is refused once that much has been read without reaching its end.
 */
#define EVIDENCE_MAX_BYTES ((size_t)256 << 20)

/*
 * What reads the runs of an evidence file, one at a time: run(ctx, idx, run,
 * err) gets each record of "runs" in order (idx counts from 0), lent for the
 * call only (json_incref what is kept; it may be changed). It returns 0, or a
 * negative errno with err set to stop the reading.
 */
struct evidence_reader {
    int (*run)(void *ctx, size_t idx, json_t *run, struct hb_err *err);
    void *ctx;
};

/*
 * Reads the evidence file at path (at most EVIDENCE_MAX_BYTES), handing its
 * runs to reader as they are read, so that no more than one run's JSON need
 * be held: a --jsonl file (its first line a header record) is parsed line by
 * line; a document's runs are found in its text and parsed one at a time (one
 * laid out otherwise, or not JSON, is parsed whole, each run freed once
 * handed over).
 * *head becomes the document's other fields (the first header's, for JSONL,
 * without "record"), owned by the caller. Checks that a document is a JSON
 * object whose "schema" is REPORT_SCHEMA with a "runs" array, and that every
 * JSONL header has our schema. Returns 0, or a negative errno with err naming
 * the file (and the line, for JSONL) and the problem (*head is then NULL):
 * -errno when it cannot be read (-EISDIR for a directory, -EFBIG above the
 * cap), -EINVAL when it is not JSON or not evidence, or what reader returned.
 */
int evidence_read(const char *path, const struct evidence_reader *reader, json_t **head,
                  struct hb_err *err);

/*
 * Reads the evidence file at path into *doc (the caller owns it: json_decref),
 * as evidence_read does, with "runs" the array of every run (for JSONL, the
 * run lines of every invocation, each without its "record" key). Returns what
 * evidence_read does; *doc is NULL on failure.
 */
int evidence_load(const char *path, json_t **doc, struct hb_err *err);

/*
 * Adds the histogram JSON j (the "histogram" of a run, as report_hist_json
 * writes it) into dst: counts index by index, total and overflow summed, min
 * and max widened. Decoding is hist_init followed by this. j must have this
 * build's layout (unit "ns", lowest 1, highest HIST_MAX_NS, 3 significant
 * digits), indices below HIST_COUNTS, and counts that add up to total.
 * Returns 0, or -EINVAL with err set; dst may then be partly updated.
 */
int evidence_hist_add(struct hist *dst, const json_t *j, struct hb_err *err);

/* What identifies a run: compare matches cells, merge matches cells and reps. */
struct run_key {
    const char *endpoint, *mode;
    const char *proto; /* "" in evidence from before the protocols */
    json_int_t size, connections, pipeline;
    json_int_t rep; /* -1 when the record has none */
    double rate;    /* open loop: the rate asked for; 0 = closed loop */
};

/*
 * The cell of one record of "runs", as compare reads it: checks that it is
 * an object with a cell's key and possible figures, fills *k (its strings
 * lent from run) and *counts (valid and not cut short, the runs compare
 * counts). Returns 0; 1 for the placeholder of a run the writer could not
 * encode (nothing filled); -EINVAL with err set (without the file and run).
 */
int evidence_run_cell(const json_t *run, struct run_key *k, bool *counts, struct hb_err *err);

/*
 * The order compare sorts cells in: by endpoint, mode, proto, open-loop rate,
 * size, connections, pipeline (not rep). 0 when a and b are the same cell.
 */
int evidence_key_order(const struct run_key *a, const struct run_key *b);

/*
 * The cell as compare names it, "echo tcp://127.0.0.1:9000 reuse 64 B c=1 p=1"
 * (then " rate=60%" or " rate=2000/s"; no endpoint when it is ""), escaped with
 * text_safe, into buf (cap bytes, at least TEXT_SAFE_CAP).
 */
void evidence_cell_label(char *buf, size_t cap, const struct run_key *k);

#endif
