/*
 * main: subcommand dispatch, signals, messages and exit codes. Nothing below
 * this file prints an error or exits.
 *
 * Ctrl-C: the first stop signal (SIGINT, SIGTERM, SIGHUP, SIGQUIT: util.h)
 * ends the current run early; the table is printed and the evidence written
 * from what was measured, and the exit code is 130 whichever signal it was.
 * Another one within SIGNAL_SAME_NS of it is the same interrupt (GNU timeout
 * signals its child and then the child's process group). One after that stops
 * the lab's server, removes its directory and exits at once. In `stack` no
 * signal aborts: its tear-down (every service stopped, its cgroups and files
 * removed) is bounded, and an abort would leave the services running.
 *
 * lab and run ignore SIGPIPE. A stdout whose reader is gone (`| head`,
 * fd_reader_gone) ends the work as the first signal does, before the next run
 * or cell (run_all, lab_run), so the lab still cleans up and the evidence is still
 * written; once every run is done it is no longer an interrupt, nor an error.
 * Any other stdout write error (a full disk) stops nothing: it is said once on
 * stderr at the end, and the exit code is 1 unless it was already not 0.
 *
 * The lab's server exiting on its own (killed, crashed) ends the current cell
 * at once (on_child); the tables and evidence hold what was measured, that
 * cell marked cut short, and one line says how the server ended: exit 1.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cmd/cmd.h"
#include "cmd/options.h"
#include "cmd/session.h"
#include "cost.h"
#include "engine/load.h"
#include "evidence.h"
#include "host/budget.h"
#include "host/place.h"
#include "host/probe.h"
#include "lab.h"
#include "outfile.h"
#include "progress.h"
#include "registry.h"
#include "report/csv.h"
#include "report/html.h"
#include "report/report.h"
#include "report/saving.h"
#include "report/summary.h"
#include "run.h"
#include "server/server.h"
#include "stack/measure.h"
#include "stack/stack.h"

/* A second signal this soon after the first is part of the same interrupt, not an abort. */
#define SIGNAL_SAME_NS (250 * NS_PER_MS)

/* main's mutable state, all of it: the signal handlers' and the invocation's. */
struct main_state {
    /*
     * The stop flag: set from the signal handler, or by run_all once
     * stdout's reader is gone. The handler runs in whichever thread the
     * kernel picks, a load or sampler thread as well as this one, and the load
     * threads read the flag while they run: so a lock-free atomic (which a
     * handler may use), not a volatile sig_atomic_t, which is only safe within
     * one thread.
     */
    atomic_int stop; /* 0, STOP_INTERRUPT or STOP_SERVER_EXIT (util.h) */
    /*
     * When the first signal came (CLOCK_MONOTONIC ns, 0 = none yet): the
     * handler's own memory. Atomic (lock-free), since it may run in two threads
     * at once.
     */
    _Atomic uint64_t first_signal_ns;
    /*
     * What the second Ctrl-C must clean up, readable from the handler. The
     * server's pid changes while the lab runs (it restarts the server between
     * cells), so it is atomic like stop; the paths are written once, before
     * any thread starts.
     */
    _Atomic pid_t lab_server;
    /*
     * stack: every stop signal only sets the stop flag. Its tear-down (the
     * services stopped, cgroups and files removed) is bounded, and an abort
     * would leave the services running.
     */
    atomic_bool no_abort;
    char lab_sock[256];
    char lab_dir[256];
    /* The command line as typed: getopt_long permutes argv, the evidence must not. */
    int argc;
    char **argv;
    uint64_t started_unix_s; /* when the invocation started */
    uint64_t started_ns;     /* the same, CLOCK_MONOTONIC: for the evidence's elapsed_s */
};
_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "the stop flag is set from a signal handler");
_Static_assert(ATOMIC_INT_LOCK_FREE == 2 && sizeof(pid_t) == sizeof(int),
               "the lab server's pid is read from a signal handler");

static struct main_state g_main;

/* What the commands run with: main's state as they may see it. */
static struct cmd_env g_env;

/* The second Ctrl-C: only async-signal-safe calls. SIGCONT wakes a stopped server to die. */
static void abort_now(void)
{
    pid_t mirror = atomic_load(&g_main.lab_server);
    pid_t server = mirror < 0 ? -mirror : mirror; /* < 0: being stopped */

    if (server > 0) {
        kill(server, SIGTERM);
        kill(server, SIGCONT);
    }
    if (g_main.lab_sock[0]) unlink(g_main.lab_sock);
    if (g_main.lab_dir[0]) rmdir(g_main.lab_dir);
    _exit(HB_EXIT_INTERRUPTED);
}

static void on_signal(int sig)
{
    uint64_t now = now_ns(), first = 0; /* clock_gettime is async-signal-safe */

    UNUSED(sig);
    if (atomic_compare_exchange_strong(&g_main.first_signal_ns, &first, now)) {
        atomic_store(&g_main.stop, STOP_INTERRUPT);
        return;
    }
    if (now < first + SIGNAL_SAME_NS || atomic_load(&g_main.no_abort)) return;
    abort_now();
}

/*
 * lab and run: every stop signal goes to on_signal, except a SIGHUP that was
 * ignored from the start (nohup): that one stays ignored. SIGPIPE is ignored.
 */
static void install_signals(void)
{
    static const int sigs[] = { STOP_SIGNALS };
    struct sigaction sa, was;

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < ARRAY_LEN(sigs); i++) {
        if (sigs[i] == SIGHUP && sigaction(SIGHUP, NULL, &was) == 0 && was.sa_handler == SIG_IGN)
            continue;
        sigaction(sigs[i], &sa, NULL);
    }
    signal(SIGPIPE, SIG_IGN);
}

/*
 * SIGCHLD in the lab: its server exited. Unless the lab stopped it itself
 * (g_main.lab_server is then negative) or a stop signal came first, the current
 * run ends at once (the load threads check g_main.stop at least every 50 ms); lab_run then
 * reaps the server and says how it ended. Nothing else on the hot path. A stop
 * signal handled at the same time in another thread (timeout(1) signals the
 * lab, then its process group, the server included) must win: on_signal sets
 * g_main.first_signal_ns before g_main.stop, and this reads it after its own write.
 */
static void on_child(int sig)
{
    UNUSED(sig);
    int none = 0;

    if (atomic_load(&g_main.lab_server) <= 0) return;
    if (!atomic_compare_exchange_strong(&g_main.stop, &none, STOP_SERVER_EXIT)) return;
    if (atomic_load(&g_main.first_signal_ns) != 0) atomic_store(&g_main.stop, STOP_INTERRUPT);
}

/* SA_RESTART: a write to stdout that the signal interrupts goes on, not fails. */
static void install_child_watch(void)
{
    struct sigaction sa;

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_child;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_NOCLDSTOP | SA_RESTART;
    sigaction(SIGCHLD, &sa, NULL);
}

/*
 * After the runs: the tables, the evidence (its summary over repetitions
 * included) and the exit code, from run_rc (the runs' own) on.
 */
static int run_finish(struct run *run, const char *json_path, const char *csv_path,
                      struct report_meta *meta, int run_rc)
{
    int rc;

    run_report(run, stdout);
    /* not stdout failing now: the runs are done */
    meta->interrupted = atomic_load(&g_main.stop) || cmd_wait_failed(run->recs, run->nrecs);
    meta->summary = run_summary_json(run);
    rc = cmd_write_evidence(&g_env, "run", json_path, csv_path, meta, run->recs, run->nrecs);
    if (rc == HB_EXIT_OK) rc = cmd_write_html("run", run->opts->shared.html_path, json_path);
    json_decref(meta->summary);
    meta->summary = NULL;
    if (rc != HB_EXIT_OK && run_rc == HB_EXIT_OK) run_rc = rc;
    rc = run_rc != HB_EXIT_OK ? run_rc
                              : cmd_verdict(run->recs, run->nrecs, atomic_load(&g_main.stop));
    if (rc == HB_EXIT_OK && cmd_stdout_failed()) rc = HB_EXIT_RUNTIME;
    return rc;
}

/* Runs the plan (run_all); what went wrong is said at once, before the tables. */
static int run_plan(struct run *run, struct outfile *jsonl)
{
    struct hb_err err = { 0 };
    char msg[TEXT_SAFE_CAP];
    int rc = HB_EXIT_RUNTIME;

    if (run_all(run, jsonl, stdout, &g_main.stop, &err) == 0) return HB_EXIT_OK;
    if (err.code != 0) rc = cmd_fail("run", &err, cmd_failure_exit(err.code));
    if (run->jsonl_err.code != 0)
        fprintf(stderr, "hopbench run: --jsonl: %s\n",
                text_safe(msg, sizeof(msg), run->jsonl_err.msg));
    return rc;
}

/*
 * --netns: the namespaces and the built-in server, made with the stop signals
 * held (one that comes meanwhile is the first interrupt once they are let
 * through); the server's exit on its own ends the current run (on_child).
 */
static int run_start_server(struct run *run, struct run_opts *o, struct hb_err *err)
{
    sigset_t held, old;
    int rc;

    if (o->netns == NETNS_NONE) return run_serve(run, o, NULL, err); /* --in-netns, or nothing */
    install_signals();
    install_child_watch();
    stop_signal_set(&held);
    pthread_sigmask(SIG_BLOCK, &held, &old);
    rc = run_serve(run, o, &g_main.lab_server, err);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}

/* --netns: where the server and the client run, and the server's pid. */
static void run_netns_header(const struct run *run)
{
    char tail[48];

    snprintf(tail, sizeof(tail), "; server pid %ld", (long)run->server_pid);
    netns_describe(&run->netns,
                   &(struct netns_words){ .same = "built-in server and client in one network "
                                                  "namespace made for the run (its own loopback)",
                                          .in_a = "built-in server",
                                          .in_b = "client in",
                                          .after_b = ", joined by a veth pair",
                                          .tail = tail },
                   stdout);
}

/*
 * --wait uring where the placement line said uring (its probe set a ring up):
 * one line for the runs some of whose load threads could not set theirs up and
 * waited with epoll (as each run's wait in the evidence says), and why.
 */
static void run_ring_note(const struct run *run)
{
    unsigned fell = 0;
    int why = 0;

    for (size_t i = 0; i < run->nrecs; i++) {
        const struct run_record *r = &run->recs[i];
        if (!r->cfg.uring_wait || r->res.ring_err == 0) continue; /* each thread's ring was up */
        fell++;
        if (why == 0) why = r->res.ring_err;
    }
    if (fell > 0)
        fprintf(stderr,
                "hopbench run: --wait uring: %u of %zu runs waited with epoll, not as the "
                "placement line says (a load thread could not set up io_uring: %s)\n",
                fell, run->nrecs, strerror(why));
}

/* After the checks: the runs, the tables and the evidence. */
static int run_measure(struct run *run, struct run_opts *o, const char *json_path,
                       const char *server)
{
    static struct progress progress;
    struct hb_err err = { 0 };
    struct machine m;
    struct outfile jsonl_out, *jsonl;
    bool failed;
    const char *unseen = "no --server-pid";
    char wait[160];
    int rc, run_rc, ring = -1;

    install_signals();
    /* Where the server really runs, when it is named; else what --pin expects (not observed). */
    if (run_place_server(run, &err) < 0) {
        char msg[TEXT_SAFE_CAP];
        fprintf(stderr, "hopbench run: the server's CPUs were not observed: %s\n",
                text_safe(msg, sizeof(msg), err.msg));
        unseen = "its threads could not be read";
    }
    probe_machine(&m);
    struct report_meta meta = { .command = "run",
                                .argc = g_main.argc,
                                .argv = g_main.argv,
                                .place = &run->place,
                                .machine = &m,
                                .started_unix_s = g_main.started_unix_s,
                                .server = server,
                                .plan = cmd_plan_json(o->shared.reps, o->order_random,
                                                      o->shared.seed, o->shared.cooldown_ns) };
    jsonl = cmd_open_jsonl("run", o->shared.jsonl_path, &meta, &jsonl_out, &failed);
    if (failed) {
        json_decref(meta.plan);
        return HB_EXIT_RUNTIME;
    }
    if (o->load.uring_wait) {
        ring = load_ring_probe();
        snprintf(wait, sizeof(wait), ring == 0 ? "uring" : "epoll (io_uring cannot be set up: %s)",
                 strerror(-ring));
    }
    cmd_print_placement(&run->place,
                        o->load.uring_wait   ? wait
                        : o->wait_auto       ? "block (the default with one kept connection per "
                                               "thread, closed loop)"
                        : o->load.block_wait ? "block"
                                             : "epoll",
                        unseen);
    run_netns_header(run);
    report_sysctls(stdout, &m);
    /* Without a terminal (or with --quiet) there is no line and no thread. */
    progress_start(&progress, STDERR_FILENO, !o->shared.quiet, run_planned_runs(o),
                   run_planned_ns(o));
    run->progress = &progress;
    run_rc = run_plan(run, jsonl);
    progress_stop(&progress);
    run->progress = NULL;
    if (ring == 0) run_ring_note(run);
    if (jsonl != NULL && cmd_close_jsonl("run", &jsonl_out) != HB_EXIT_OK && run_rc == HB_EXIT_OK)
        run_rc = HB_EXIT_RUNTIME;
    /* Its own server's exit, unless a stop signal took it: said once, exit 1. */
    if (run_serve_check(run, &err) < 0 && atomic_load(&g_main.stop) != STOP_INTERRUPT) {
        cmd_fail("run", &err, HB_EXIT_RUNTIME);
        atomic_store(&g_main.stop, STOP_SERVER_EXIT);
        run_rc = HB_EXIT_RUNTIME;
    }
    rc = run_finish(run, json_path, o->shared.csv_path, &meta, run_rc);
    json_decref(meta.plan);
    return rc;
}

static int old_run(int argc, char **argv)
{
    static struct run_opts o;
    static struct run run;
    struct hb_err err = { 0 };
    const char *json_path;
    char path[64], server[64] = "";
    int rc = cli_parse_run(argc, argv, &o, stdout, &err);

    if (rc == CLI_HELP) return HB_EXIT_OK;
    if (rc < 0) return cmd_fail(NULL, &err, HB_EXIT_USAGE);
    if (run_init(&run, &o, &err) < 0) return cmd_fail("run", &err, HB_EXIT_USAGE);
    json_path = cmd_evidence_path("run", o.shared.json_path, path, sizeof(path));
    rc = cmd_check_output("run", json_path);
    if (rc == HB_EXIT_OK && o.shared.csv_path != NULL)
        rc = cmd_check_output("run", o.shared.csv_path);
    if (rc == HB_EXIT_OK && o.shared.html_path != NULL)
        rc = cmd_check_output("run", o.shared.html_path);
    if (rc == HB_EXIT_OK) rc = cmd_check_budget("run", run_fd_need(&o), run_mem_need(&o));
    if (rc == HB_EXIT_OK && (rc = run_start_server(&run, &o, &err)) < 0)
        rc = cmd_fail("run", &err, rc == -EPERM ? HB_EXIT_NOPERM : HB_EXIT_RUNTIME);
    if (rc == HB_EXIT_OK && run_preflight(&o, &g_main.stop, &err) < 0)
        rc = cmd_fail("run", &err, cmd_failure_exit(err.code));
    if (run.server_pid > 0)
        snprintf(server, sizeof(server), "built-in %s (pid %ld)", o.proto->name,
                 (long)run.server_pid);
    if (rc == HB_EXIT_OK) rc = run_measure(&run, &o, json_path, server[0] ? server : NULL);
    run_serve_stop(&run);
    run_release(&run);
    return rc;
}

/*
 * A closed fd 0, 1 or 2 (`hopbench >&-`) gets /dev/null, so that no file or
 * socket opened later becomes stdin, stdout or stderr: the --jsonl file would
 * take fd 1 and the placement lines would go into it.
 */
static void open_std_fds(void)
{
    for (int fd = 0; fd <= 2; fd++) {
        if (fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
        int got = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
        if (got >= 0 && got != fd) close(got); /* fds below it are open: cannot happen */
    }
}

/*
 * The value of an option the registry marks secret (a password: --password
 * VAL, --password=VAL) is hidden from other users' ps and from the evidence:
 * the parser gets a copy, the process's own argument memory
 * (/proc/PID/cmdline) is overwritten with 'x', and the command line the
 * evidence keeps (shown) says "(hidden)".
 */
static char *copy_of(const char *s)
{
    size_t n = strlen(s) + 1;

    return memcpy(xcalloc(n, 1), s, n);
}

/* argv[i] is "NAME=VALUE" with NAME secret: shown as "NAME=(hidden)". */
static void hide_joined(char **argv, char **shown, int i, size_t name_len)
{
    static const char hidden[] = "=(hidden)";
    char *val = argv[i] + name_len + 1;

    shown[i] = xcalloc(name_len + sizeof(hidden), 1);
    memcpy(shown[i], argv[i], name_len);
    memcpy(shown[i] + name_len, hidden, sizeof(hidden));
    argv[i] = copy_of(argv[i]);
    memset(val, 'x', strlen(val));
}

static void hide_secrets(int argc, char **argv, char **shown)
{
    static char hidden[] = "(hidden)";

    for (int i = 1; i < argc; i++) {
        const char *eq = strchr(argv[i], '=');
        char *val;

        if (strcmp(argv[i], "--") == 0) break;
        if (eq != NULL && proto_option_secret(argv[i], (size_t)(eq - argv[i]))) {
            hide_joined(argv, shown, i, (size_t)(eq - argv[i]));
        } else if (eq == NULL && i + 1 < argc && proto_option_secret(argv[i], strlen(argv[i]))) {
            val = argv[++i];
            shown[i] = hidden;
            argv[i] = copy_of(val);
            memset(val, 'x', strlen(val));
        }
    }
}

/* What cmd_env.signals does: main's handlers put in place, as the command asks. */
static void signals(unsigned what)
{
    if (what & CMD_SIG_NO_ABORT) atomic_store(&g_main.no_abort, true);
    if (what & CMD_SIG_STOP) install_signals();
    if (what & CMD_SIG_CHILD) install_child_watch();
}

/* The commands, in the order the top-level help lists them. */
static const struct command *const commands[] = { &cmd_lab,  &cmd_compare, &cmd_merge, &cmd_report,
                                                  &cmd_cost, &cmd_stack,   &cmd_agent, &cmd_serve };

/* A command's words: its help (exit 0), a bad command line (one line, exit 64), or its work. */
static int command(const struct command *c, int argc, char **argv)
{
    struct hb_err err = { 0 };
    char msg[TEXT_SAFE_CAP];
    int rc = c->parse(argc, argv, stdout, &err);

    if (rc == CLI_HELP) return HB_EXIT_OK;
    if (rc < 0 && c->hint) {
        fprintf(stderr, "hopbench %s: %s (see hopbench %s --help)\n", c->name,
                text_safe(msg, sizeof(msg), err.msg), c->name);
        return HB_EXIT_USAGE;
    }
    if (rc < 0) return cmd_fail(NULL, &err, HB_EXIT_USAGE);
    return c->exec(&g_env);
}

int main(int argc, char **argv)
{
    const char *cmd = argc > 1 ? argv[1] : "lab";
    char shown[TEXT_SAFE_CAP]; /* cmd, text_safe */

    open_std_fds();
    /* Line by line even into a file or pipe: an abort (second Ctrl-C) loses no printed line. */
    setvbuf(stdout, NULL, _IOLBF, 0);
    g_main.started_unix_s = (uint64_t)time(NULL);
    g_main.started_ns = now_ns();
    g_main.argc = argc;
    g_main.argv = xcalloc((size_t)argc + 1, sizeof(*g_main.argv));
    memcpy(g_main.argv, argv, (size_t)argc * sizeof(*g_main.argv));
    hide_secrets(argc, argv, g_main.argv);
    g_env = (struct cmd_env){ .stop = &g_main.stop,
                              .server = &g_main.lab_server,
                              .abort_sock = g_main.lab_sock,
                              .abort_dir = g_main.lab_dir,
                              .abort_cap = sizeof(g_main.lab_dir),
                              .argc = g_main.argc,
                              .argv = g_main.argv,
                              .started_unix_s = g_main.started_unix_s,
                              .started_ns = g_main.started_ns,
                              .signals = signals };

    if (argc == 1 || cmd[0] == '-') {
        int c = argc == 1 ? 0 : cli_option(&cli_spec_top, cmd);
        if (c == 'h') {
            cli_usage(stdout);
            return HB_EXIT_OK;
        }
        if (c == 'V') {
            printf("hopbench %s\n", HOPBENCH_VERSION);
            return HB_EXIT_OK;
        }
        return command(&cmd_lab, argc, argv); /* "hopbench --quick" is "hopbench lab --quick" */
    }
    for (size_t i = 0; i < ARRAY_LEN(commands); i++)
        if (strcmp(cmd, commands[i]->name) == 0) return command(commands[i], argc - 1, argv + 1);
    if (strcmp(cmd, "run") == 0) return old_run(argc - 1, argv + 1);
    if (strcmp(cmd, "help") == 0 || strcmp(cmd, "version") == 0) {
        if (cmd[0] == 'v')
            printf("hopbench %s\n", HOPBENCH_VERSION);
        else
            cli_usage(stdout);
        return HB_EXIT_OK;
    }
    fprintf(stderr,
            "hopbench: unknown subcommand '%s' (lab, run, serve, compare, merge, report, cost, "
            "stack, agent, help)\n",
            text_safe(shown, sizeof(shown), cmd));
    return HB_EXIT_USAGE;
}
