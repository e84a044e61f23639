/*
 * procs: `run --procs N`, one run's load made by N child processes, for more
 * connections than one process may open (its RLIMIT_NOFILE) or than one
 * process's threads should hold (docs/connections.md).
 *
 * Each child is forked with its share of the connections, threads, count and
 * rate (procs_share; its connections numbered as the whole run's, so keys,
 * seeds and source addresses spread over the whole), runs load_run, and
 * sends its result back to the parent over a socketpair, every counter and
 * its histograms in the evidence's encoding (procs_result_json). The parent
 * adds the children's results into one load_result exactly
 * (procs_result_add): every counter, error kind and status class summed,
 * each histogram counter by counter, the CPU summed, the window the longest;
 * ops and p99 per interval come from slots every child adds to (memory they
 * all map) from one origin.
 *
 * The windows open together. Each child, its warm-up done (its connections
 * open), says so ('R') and waits; once every child has, the parent calls
 * cfg->on_window (LOAD_WINDOW_OPEN: the window's counters), sets the
 * intervals' origin and lets them all in ('G'), then calls OPENED. At the
 * end each child says it has stopped ('C') and waits, its sockets still open,
 * until the parent has called CLOSED ('E'). Each child reads its own PSS
 * after the fork and once its window has closed (every connection and buffer
 * in place): the memory the load took, per connection.
 *
 * A stop (*cfg->stop) reaches the children as SIGTERM: each ends its run
 * early as load_run does, and its result still comes back. The terminal's
 * SIGINT, SIGHUP and SIGQUIT are the parent's alone. A child dies with the
 * parent (PR_SET_PDEATHSIG).
 */
#ifndef HOPBENCH_PROCS_H
#define HOPBENCH_PROCS_H

#include <jansson.h>

#include "engine/load.h"
#include "report/record.h"
#include "util.h"

#define PROCS_MAX RECORD_MAX_PROCS

/*
 * Child k's share of cfg's load among n (1 <= n <= cfg->conns, n <= cfg->threads) into
 * *out: connections and threads spread as evenly as they go, the first
 * cfg->conns % n children one more; its first connection's number in the
 * run (conn_base); a count in proportion to its connections, as load_run
 * splits one over threads; the open loop's rate likewise. *first_thread: the
 * number of its first thread in the run. Pure.
 */
void procs_share(const struct load_cfg *cfg, unsigned k, unsigned n, struct load_cfg *out,
                 unsigned *first_thread);

/*
 * A child's result as it sends it: res's counters, error kinds by name,
 * status classes, replies by kind, window, CPU and connections open, its
 * histograms as the evidence writes them (report_hist_json), with `me`'s
 * PSS readings, and `error` (a load that could not run) or null. Owned by
 * the caller.
 */
json_t *procs_result_json(const struct load_result *res, const struct record_proc *me,
                          const char *error);

/*
 * Adds a child's result j into dst (whose histograms are allocated, a
 * service one when j has one) as load_result_add adds a thread's: counters
 * summed (checked for overflow), the window and drain the longest, the
 * window's start the earliest, histograms added counter by counter; and
 * fills *me from it (its share of conns and threads are the caller's).
 * Returns 0, or -EINVAL with err set when j is not such a result (dst may then
 * be partly updated); a child that could not run gives -EIO with its error.
 */
int procs_result_add(struct load_result *dst, const json_t *j, struct record_proc *me,
                     struct hb_err *err);

/*
 * Runs cfg's load in n child processes (1 <= n <= PROCS_MAX, n <= threads
 * <= conns) and merges their results into res (caller-owned, as
 * load_run's), each child's figures into *procs (its pids as soon as each is
 * forked, before any call of cfg->on_window). Returns 0, or a negative errno
 * with err set: a child could not be started, could not run its load, or
 * ended without its result (res then holds the others').
 */
int procs_run(const struct load_cfg *cfg, unsigned n, struct load_result *res,
              struct record_procs *procs, struct hb_err *err);

#endif
