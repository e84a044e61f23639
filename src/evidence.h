/*
 * evidence: evidence files (docs/evidence.md) read back, for the commands
 * that work on results after the fact:
 *
 * - compare (`hopbench compare OLD.json NEW.json`): cells matched by (proto,
 *   endpoint, or its label when it has one, mode, size, connections,
 *   pipeline, open-loop rate); per metric the median of each side and the
 *   benchstat-style delta (ratio of medians, bootstrap interval, Mann-Whitney
 *   p).
 * - merge (`hopbench merge A.json B.json... [-o OUT.json]`): runs of the same
 *   cell and rep (by label too) from several processes or hosts added into
 *   one run, histograms exactly.
 *
 * Files (at most EVIDENCE_MAX_BYTES) are read with jansson a run at a time
 * and checked for the schema, every run for figures no run can have. The
 * code is in src/evidence/: read.c (the reading), check.c (run keys and
 * checks), hist_json.c (histograms encoded and decoded), schema.c (the keys
 * the writer and the readers share, the document head), compare.c, merge.c.
 * Nothing here prints an error or picks an exit code: failures come back in
 * a struct hb_err, whose messages hold strings from files as they are (the
 * caller escapes them with text_safe).
 */
#ifndef HOPBENCH_EVIDENCE_H
#define HOPBENCH_EVIDENCE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "evidence/check.h"
#include "evidence/hist_json.h"
#include "hist.h"
#include "util.h"

/*
 * Two co-location shares (runs[].placement.colocated.share: of the samples in which a load
 * thread and a server thread ran, those on one CPU; NAN: not observed) further apart than
 * this: where the scheduler put the threads differed, and with it a large round trip 5x
 * (docs/placement.md). compare and the bottom line then say so in place of a verdict.
 */
#define EVIDENCE_COLOC_DIFFERS 0.5

/* Whether shares a and b are both known and differ by more than EVIDENCE_COLOC_DIFFERS. */
bool evidence_coloc_differs(double a, double b);

/* How many cells of a comparison both files have, and how many have a valid run in both. */
struct evidence_compare_result {
    size_t matched, comparable;
};

/*
 * Compares the evidence files old_path and new_path: prints the tables to
 * out (one per metric, then the cells only one file has) and fills *res
 * (comparable 0: nothing was compared). Returns 0, or a negative errno with
 * err set when a file cannot be read or is not evidence (nothing printed).
 */
int evidence_compare(const char *old_path, const char *new_path, FILE *out,
                     struct evidence_compare_result *res, struct hb_err *err);

/*
 * Merges the evidence files paths[0 .. npaths-1] and writes the merged
 * document to out (atomically, through outfile_replace), or to stdout when
 * out is NULL. argv (argc words, argv[0] "merge") goes into the document as
 * typed. Each output run added from runs that waited differently is named on
 * notes (unless NULL), one line with the cell as compare names it and
 * "[wait epoll -> block]" after it; its "wait" is null. Every output run is built once before
 * anything is written, so a failure leaves nothing half-written. Returns 0, or a negative errno
 * with err set: a file cannot be read, is not evidence, holds runs that cannot be added (another
 * histogram layout, a missing field), or the output cannot be written.
 */
int evidence_merge(const char *const *paths, size_t npaths, const char *out, FILE *notes, int argc,
                   char **argv, struct hb_err *err);

/*
 * The largest evidence file compare and merge read: 256 MiB, twenty times a
 * big lab's. A regular file above it is refused before it is read; a pipe or
 * device is refused once that much has been read without reaching its end.
 */
#define EVIDENCE_MAX_BYTES ((size_t)256 << 20)

/*
 * What reads the runs of an evidence file, one at a time: take(ctx, idx, run,
 * err) gets each record of "runs" in order (idx counts from 0), lent for the
 * call only (json_incref what is kept; it may be changed). It returns 0, or a
 * negative errno with err set to stop the reading. With line not NULL, *line
 * names where the run is, for take's messages.
 */
struct evidence_reader {
    int (*take)(void *ctx, size_t idx, json_t *run, struct hb_err *err);
    void *ctx;
    size_t *line; /* when not NULL: set to a --jsonl run's line before take (0 in a document) */
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
 * object whose "schema" is EVIDENCE_SCHEMA with a "runs" array, and that every
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
 * The cell as compare names it, "echo tcp://127.0.0.1:9000 reuse 64 B c=1 p=1"
 * (then " rate=60%" or " rate=2000/s"; the label in place of the endpoint when
 * the run has one, "echo backend.tcp reuse ..."; neither when both are ""),
 * escaped with text_safe, into buf (cap bytes, at least TEXT_SAFE_CAP).
 */
void evidence_cell_label(char *buf, size_t cap, const struct run_key *k);

#endif
