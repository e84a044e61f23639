/*
 * html: `hopbench report` and `--html FILE`: evidence files (documents or
 * --jsonl files, read back through evidence_read) drawn as one self-contained
 * HTML page: inline SVG charts and CSS, no script, nothing fetched, so it
 * opens from a file:// URL or a mail. Per file: ops/s per cell with every
 * rep and the median, latency percentile curves on a nines axis (the open
 * loop's intended and service time both), CPU per op stacked by who pays,
 * connection phases, latency against the offered rate, the verdicts, the
 * kernel evidence, the machine, placement, sysctls and command line; with
 * several files, their cells side by side first. Every string from a file
 * is escaped (html_text); n/a figures carry their reasons.
 */
#ifndef HOPBENCH_REPORT_HTML_H
#define HOPBENCH_REPORT_HTML_H

#include <stddef.h>

#include "report/htmldata.h"
#include "util.h"

/*
 * Reads the evidence files paths[0 .. npaths-1] (1 .. HTML_MAX_FILES) and
 * writes the report to out (atomically, through outfile_replace). Returns
 * 0, or a negative errno with err set: a file cannot be read or is not
 * evidence (-EINVAL, the message naming the file and the run), or the report
 * cannot be written. Nothing is written when a file fails.
 */
int report_html_write(const char *out, const char *const *paths, size_t npaths, struct hb_err *err);

/*
 * report_html_write for the parts of one measurement (a stack's run
 * children): each file's section and its cells in the bottom line named by
 * titles[i] ("nginx → php-fpm", "bare FastCGI hop"), not by its path, and
 * no "side by side" of files that are not alternatives of each other. text:
 * what the stack printed (its tables and what it reads beside them, UTF-8),
 * shown whole after the bottom line; NULL for none.
 */
int report_html_write_parts(const char *out, const char *const *paths, const char *const *titles,
                            size_t npaths, const char *text, struct hb_err *err);

#endif
