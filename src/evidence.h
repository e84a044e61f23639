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
 * Files are read with jansson and checked for the schema; a run's histogram is
 * turned back into a struct hist only when it must be added to another.
 * Both entry points print their own messages and return an exit code.
 */
#ifndef HOPBENCH_EVIDENCE_H
#define HOPBENCH_EVIDENCE_H

#include <jansson.h>

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
 * Reads the evidence file at path into *doc (the caller owns it: json_decref).
 * Checks that it is a JSON object whose "schema" is REPORT_SCHEMA and that
 * "runs" is an array. A --jsonl file (its first line a header record) becomes
 * one such document: the first header's fields, and as "runs" the run lines of
 * every invocation in it, each without its "record" key; every header must
 * have our schema. Returns 0, or a negative errno with err naming the file
 * (and the line, for JSONL) and the problem (*doc is then NULL): -errno when
 * it cannot be read (-EISDIR for a directory), -EINVAL when it is not JSON or
 * not evidence.
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

#endif
