/*
 * session: what the commands do alike around their work (see session.h).
 */
#include "cmd/session.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "evidence.h"
#include "host/budget.h"
#include "host/profile.h"
#include "plan.h"
#include "report/csv.h"
#include "report/html.h"
#include "util.h"

bool cmd_stdout_failed(void)
{
    return (fflush(stdout) != 0 || ferror(stdout)) && !fd_reader_gone(STDOUT_FILENO);
}

int cmd_fail(const char *what, const struct hb_err *err, int code)
{
    char msg[TEXT_SAFE_CAP];

    fprintf(stderr, "hopbench%s%s: %s\n", what ? " " : "", what ? what : "",
            text_safe(msg, sizeof(msg), err->msg));
    return code;
}

/*
 * --csv: the evidence document's runs as CSV rows, their source column the
 * evidence's path. Returns 0, or -EIO once the one line has said why not.
 */
static int write_csv(const char *cmd, const char *csv_path, const char *evidence, json_t *doc)
{
    struct hb_err err = { 0 };
    struct csv_source src = { evidence, json_object_get(doc, EV_RUNS), doc };
    char shown[TEXT_SAFE_CAP];

    if (doc != NULL && report_csv_write(csv_path, &src, 1, &err) == 0) {
        printf("csv: %s\n", text_safe(shown, sizeof(shown), csv_path));
        return 0;
    }
    fprintf(stderr, "hopbench %s: --csv: %s\n", cmd,
            text_safe(shown, sizeof(shown), doc == NULL ? "out of memory" : err.msg));
    return -EIO;
}

int cmd_write_evidence(const struct cmd_env *env, const char *cmd, const char *path,
                       const char *csv_path, const struct report_meta *meta,
                       const struct run_record *recs, size_t n)
{
    struct hb_err err = { 0 };
    struct report_meta m = *meta;
    char shown[TEXT_SAFE_CAP]; /* path, text_safe */
    json_t *doc;
    sigset_t held, old;
    int rc;

    m.elapsed_ns = now_ns() - env->started_ns;
    doc = report_json(&m, recs, n);

    stop_signal_set(&held);
    pthread_sigmask(SIG_BLOCK, &held, &old);
    rc = report_json_write(path, doc, &err);
    text_safe(shown, sizeof(shown), path);
    if (rc == 0) printf("evidence: %s\n", shown);
    if (rc == 0 && cmd_stdout_failed())
        fprintf(stderr, "hopbench: stdout could not be written; evidence: %s\n", shown);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc == 0 && csv_path != NULL && write_csv(cmd, csv_path, path, doc) < 0) {
        json_decref(doc);
        return HB_EXIT_RUNTIME; /* write_csv said why */
    }
    json_decref(doc);
    if (rc == 0) return HB_EXIT_OK;
    fprintf(stderr,
            "hopbench %s: %s; the evidence was not saved (the tables above show the runs)\n", cmd,
            err.msg);
    return HB_EXIT_RUNTIME;
}

int cmd_write_html(const char *cmd, const char *html_path, const char *json_path)
{
    struct hb_err err = { 0 };
    char shown[TEXT_SAFE_CAP]; /* html_path, text_safe */

    if (html_path == NULL) return HB_EXIT_OK;
    if (report_html_write(html_path, &json_path, 1, &err) < 0) {
        cmd_fail(cmd, &err, HB_EXIT_RUNTIME);
        fprintf(stderr, "hopbench %s: the report was not written (the evidence was)\n", cmd);
        return HB_EXIT_RUNTIME;
    }
    printf("report: %s\n", text_safe(shown, sizeof(shown), html_path));
    return HB_EXIT_OK;
}

int cmd_check_output(const char *cmd, const char *path)
{
    struct hb_err err = { 0 };

    if (outfile_check(path, OUTFILE_REPLACE, &err) == 0) return HB_EXIT_OK;
    fprintf(stderr, "hopbench %s: %s\n", cmd, err.msg);
    return HB_EXIT_RUNTIME;
}

int cmd_check_outputs(const char *cmd, const char *json, const char *csv, const char *html)
{
    int rc = cmd_check_output(cmd, json);

    if (rc == HB_EXIT_OK && csv != NULL) rc = cmd_check_output(cmd, csv);
    if (rc == HB_EXIT_OK && html != NULL) rc = cmd_check_output(cmd, html);
    return rc;
}

bool cmd_wait_failed(const struct run_record *recs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (recs[i].res.wait_err != 0) return true;
    return false;
}

int cmd_verdict(const struct run_record *recs, size_t n, bool interrupted)
{
    bool empty = false;
    size_t saturated = 0;

    for (size_t i = 0; i < n; i++) {
        if (load_errors_total(&recs[i].res) != 0) {
            fprintf(stderr, "hopbench: results are invalid: some runs saw errors (see above)\n");
            return HB_EXIT_INVALID;
        }
        empty |= recs[i].res.ops == 0;
        saturated += report_saturated_invalid(&recs[i]);
    }
    if (saturated > 0) {
        fprintf(stderr,
                "hopbench: results are invalid: %zu open-loop run%s saturated (below 99 %% of "
                "the rate; see above)\n",
                saturated, saturated == 1 ? "" : "s");
        return HB_EXIT_INVALID;
    }
    if (interrupted) return HB_EXIT_INTERRUPTED;
    if (empty) {
        fprintf(stderr, "hopbench: results are invalid: a run completed no op (see above)\n");
        return HB_EXIT_INVALID;
    }
    return HB_EXIT_OK;
}

int cmd_failure_exit(int code)
{
    if (code == -EKEYREJECTED) return HB_EXIT_AGENT_AUTH;
    if (code == -EPROTO || code == -EMSGSIZE) return HB_EXIT_PROTOCOL;
    return HB_EXIT_RUNTIME;
}

void cmd_print_placement(const struct place *p, const char *wait, const char *unseen)
{
    char client[128], server[128], from[96] = "";

    place_format(p, PLACE_CLIENT, client, sizeof(client));
    place_format(p, PLACE_SERVER, server, sizeof(server));
    if (p->server_source == PLACE_SRC_OBSERVED)
        snprintf(from, sizeof(from), ", observed");
    else if (p->server_source == PLACE_SRC_EXPECTED)
        snprintf(from, sizeof(from), " if it runs with --pin %s: not observed, %s",
                 place_name(p->mode), unseen);
    printf("placement: --pin %s (client CPUs %s, server CPUs %s%s); --wait %s\n",
           place_name(p->mode), client, server, from, wait);
}

int cmd_check_budget(const char *cmd, uint64_t load, size_t mem)
{
    struct hb_err err = { 0 };
    struct budget_mem m;
    int open = budget_fds_open();

    /* Unknown (no /proc): the standard three, whatever else may be open. */
    if (budget_fds_ensure(budget_fds(open > 0 ? (uint64_t)open : 3, load), &err) < 0)
        return cmd_fail(cmd, &err, HB_EXIT_LIMITS);
    budget_mem_read("/proc/meminfo", &m);
    if (budget_mem_check(mem, &m, &err) < 0) return cmd_fail(cmd, &err, HB_EXIT_LIMITS);
    return HB_EXIT_OK;
}

int cmd_open_profile(const char *cmd, const struct shared_opts *o, struct profile **out)
{
    struct hb_err err = { 0 };
    uint64_t period_ns = o->profile_hz ? NS_PER_S / o->profile_hz : 0;

    *out = NULL;
    if (!o->profile) return HB_EXIT_OK;
    if (profile_check(&err) < 0 || (*out = profile_new(period_ns, NULL, true, &err)) == NULL)
        return cmd_fail(cmd, &err,
                        err.code == -EACCES || err.code == -EPERM ? HB_EXIT_NOPERM
                                                                  : HB_EXIT_RUNTIME);
    return HB_EXIT_OK;
}

const char *cmd_evidence_path(const char *cmd, const char *given, char *buf, size_t cap)
{
    time_t now = time(NULL);
    char date[32];
    struct tm tm;

    if (given != NULL) return given;
    localtime_r(&now, &tm);
    strftime(date, sizeof(date), "%Y%m%d-%H%M%S", &tm);
    snprintf(buf, cap, "hopbench-%s-%s.json", cmd, date);
    return buf;
}

json_t *cmd_plan_json(unsigned reps, bool random, uint64_t seed, uint64_t cooldown_ns)
{
    return json_pack("{s:i, s:s, s:I, s:f}", "reps", (int)reps, "order", random ? "random" : "abba",
                     "seed", (json_int_t)seed, "cooldown_s", (double)cooldown_ns / 1e9);
}

struct outfile *cmd_open_jsonl(const char *cmd, const char *path, const struct report_meta *meta,
                               struct outfile *out, bool *failed)
{
    char shown[TEXT_SAFE_CAP]; /* err.msg, text_safe */
    struct hb_err err = { 0 };

    *failed = false;
    if (path == NULL) return NULL;
    if (outfile_open(out, path, OUTFILE_APPEND, &err) == 0) {
        if (report_jsonl_header(out, meta, &err) == 0) return out;
        outfile_abort(out);
    }
    fprintf(stderr, "hopbench %s: --jsonl: %s\n", cmd, text_safe(shown, sizeof(shown), err.msg));
    *failed = true;
    return NULL;
}

int cmd_close_jsonl(const char *cmd, struct outfile *out)
{
    struct hb_err err = { 0 };

    if (outfile_commit(out, &err) == 0) return HB_EXIT_OK;
    fprintf(stderr, "hopbench %s: --jsonl: %s\n", cmd, err.msg);
    return HB_EXIT_RUNTIME;
}
