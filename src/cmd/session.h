/*
 * session: what the commands that measure (run, lab, stack) and those that
 * read evidence (cost, report) do alike around their work: one-line
 * failures, the output files checked before any work and written after it
 * (the evidence, --jsonl, --csv, --html), the placement line, and the exit
 * code the finished runs earn.
 */
#ifndef HOPBENCH_CMD_SESSION_H
#define HOPBENCH_CMD_SESSION_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cmd/cmd.h"
#include "host/place.h"
#include "outfile.h"
#include "report/report.h"

/* "hopbench CMD: MSG" (cmd NULL: "hopbench: MSG") on stderr, the message made safe; returns code.
 */
int cmd_fail(const char *cmd, const struct hb_err *err, int code);

/*
 * Whether something printed to stdout was lost for another reason than its
 * reader going away (a full disk, `>/dev/full`): exit 1 once all is done.
 */
bool cmd_stdout_failed(void);

/*
 * Before any work: whether an output file can be written to path, so that a
 * directory or a read-only place is said at once, not after the runs.
 * HB_EXIT_OK, or HB_EXIT_RUNTIME after one line.
 */
int cmd_check_output(const char *cmd, const char *path);

/* cmd_check_output for the evidence, and --csv and --html where given (NULL: not). */
int cmd_check_outputs(const char *cmd, const char *json, const char *csv, const char *html);

/*
 * Refuses at once, with one line, a plan whose fds (`load` besides those open
 * now, budget_fds) the hard open-files limit cannot hold, or whose memory
 * (`mem` bytes) is more than is available; raises the soft open-files limit
 * when that is enough. HB_EXIT_OK or HB_EXIT_LIMITS.
 */
int cmd_check_budget(const char *cmd, uint64_t load, size_t mem);

struct profile;
struct shared_opts;

/*
 * --profile: the profiler into *out (NULL without it). HB_EXIT_OK, or after
 * one line HB_EXIT_NOPERM (no right to sample: nothing ran) or HB_EXIT_RUNTIME.
 */
int cmd_open_profile(const char *cmd, const struct shared_opts *o, struct profile **out);

/* --json FILE, or hopbench-CMD-DATE-TIME.json in the current directory (in buf). */
const char *cmd_evidence_path(const char *cmd, const char *given, char *buf, size_t cap);

/* {reps, order, seed, cooldown_s}, owned by the caller. */
json_t *cmd_plan_json(unsigned reps, bool random, uint64_t seed, uint64_t cooldown_ns);

/*
 * Opens --jsonl FILE for appending through out (OUTFILE_APPEND: a device or
 * FIFO is appended to in place, never replaced) and appends this invocation's
 * header line. Returns out, NULL when not asked for; *failed tells a failure,
 * after one line on stderr with the reason.
 */
struct outfile *cmd_open_jsonl(const char *cmd, const char *path, const struct report_meta *meta,
                               struct outfile *out, bool *failed);

/* Closes the --jsonl file; HB_EXIT_RUNTIME after one line if that fails. */
int cmd_close_jsonl(const char *cmd, struct outfile *out);

/*
 * Writes the evidence (and --csv, csv_path not NULL) with the stop signals
 * held back (only this thread runs by now), so an abort cannot leave its
 * temporary file behind. When it cannot be written (a full disk), the one
 * line says so and that the tables printed before it are what remains.
 * HB_EXIT_OK or HB_EXIT_RUNTIME.
 */
int cmd_write_evidence(const struct cmd_env *env, const char *cmd, const char *path,
                       const char *csv_path, const struct report_meta *meta,
                       const struct run_record *recs, size_t n);

/*
 * --html: the evidence just written to json_path drawn as a report at
 * html_path (NULL: none), read back as `hopbench report` reads it.
 */
int cmd_write_html(const char *cmd, const char *html_path, const char *json_path);

/* Whether a load thread's failed wait cut one of the runs short (the invocation then fails). */
bool cmd_wait_failed(const struct run_record *recs, size_t n);

/*
 * The exit code for finished runs: 2 if a run saw errors, or an open-loop
 * run not cut short was saturated, or (when not interrupted) a run completed
 * no op; else 130 if interrupted; else 0.
 */
int cmd_verdict(const struct run_record *recs, size_t n, bool interrupted);

/*
 * The exit code of a failure: the agent's refusals have their own; a log-in
 * the client refused (run_preflight) is an authentication refused, as the
 * agent's token is.
 */
int cmd_failure_exit(int code);

/*
 * The two settings a ping-pong's latency depends on most, besides the
 * transport. The server's CPUs say where they come from, as the evidence
 * does; `unseen` says why CPUs that are only expected were not observed.
 */
void cmd_print_placement(const struct place *p, const char *wait, const char *unseen);

#endif
