/*
 * main: the table of commands (src/cmd/: each its options, help, parser and
 * work), the signals, and the exit code of a command line it cannot take.
 * Below the commands nothing prints an error or picks an exit code.
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
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "cmd/options.h"
#include "cmd/session.h"
#include "registry.h"
#include "suggest.h"
#include "util.h"

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
    _Atomic pid_t server;
    /*
     * stack: every stop signal only sets the stop flag. Its tear-down (the
     * services stopped, cgroups and files removed) is bounded, and an abort
     * would leave the services running.
     */
    atomic_bool no_abort;
    char abort_sock[272];
    char abort_mark[272]; /* a file in abort_dir: the lab directory's owner mark */
    char abort_dir[272];
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
    pid_t mirror = atomic_load(&g_main.server);
    pid_t server = mirror < 0 ? -mirror : mirror; /* < 0: being stopped */

    if (server > 0) {
        kill(server, SIGTERM);
        kill(server, SIGCONT);
    }
    if (g_main.abort_sock[0]) unlink(g_main.abort_sock);
    if (g_main.abort_mark[0]) unlink(g_main.abort_mark);
    if (g_main.abort_dir[0]) rmdir(g_main.abort_dir);
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
 * (g_main.server is then negative) or a stop signal came first, the current
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

    if (atomic_load(&g_main.server) <= 0) return;
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
static const struct command *const commands[] = { &cmd_lab,     &cmd_run,   &cmd_serve,
                                                  &cmd_compare, &cmd_merge, &cmd_report,
                                                  &cmd_cost,    &cmd_stack, &cmd_agent };

/* The command called name, or NULL. */
static const struct command *command_named(const char *name)
{
    for (size_t i = 0; i < ARRAY_LEN(commands); i++)
        if (strcmp(name, commands[i]->name) == 0) return commands[i];
    return NULL;
}

/* "; did you mean 'run'?" for a mistyped command (suggest.h), or "". */
static const char *near_command(const char *word, char *buf, size_t cap)
{
    struct suggest s;

    suggest_init(&s, word);
    for (size_t i = 0; i < ARRAY_LEN(commands); i++)
        suggest_add(&s, commands[i]->name);
    suggest_add(&s, "help");
    suggest_add(&s, "version");
    return suggest_text(&s, false, buf, cap);
}

/*
 * `hopbench help CMD [WORD...]`: what `hopbench CMD [WORD...] --help` prints
 * (`help stack nginx-fpm` the stack's own), from the command's own parser.
 */
static int help_command(const struct command *c, int argc, char **argv)
{
    char **words = xcalloc((size_t)argc + 2, sizeof(*words));
    char help_word[] = "--help";
    struct hb_err err = { 0 };
    int rc;

    words[0] = argv[0];
    for (int i = 1; i < argc; i++)
        words[i] = argv[i];
    words[argc] = help_word;
    rc = c->parse(argc + 1, words, stdout, &err);
    free(words);
    if (rc == CLI_HELP) return HB_EXIT_OK;
    return cmd_fail(NULL, &err, HB_EXIT_USAGE);
}

/*
 * `hopbench help`: the top-level help; `hopbench help CMD`, CMD's. Not in it,
 * for scripts: `help --commands` lists the commands' names, `help --options
 * NAME` the options of NAME's table (cmd_options_dump: test_man.sh holds the
 * man page to it, the bash completion offers it), `help --values NAME` the
 * words its first word and its options take (cmd_values_dump: the bash
 * completion offers them).
 */
static int help(int argc, char **argv)
{
    char shown[TEXT_SAFE_CAP], near[160]; /* argv[1] or argv[2], text_safe */
    const struct command *c;

    if (argc == 2 && strcmp(argv[1], "--commands") == 0) {
        for (size_t i = 0; i < ARRAY_LEN(commands); i++)
            printf("%s\n", commands[i]->name);
        return HB_EXIT_OK;
    }
    if (argc == 3 && (strcmp(argv[1], "--options") == 0 || strcmp(argv[1], "--values") == 0)) {
        if ((c = command_named(argv[2])) != NULL) {
            (argv[1][2] == 'o' ? cmd_options_dump : cmd_values_dump)(c, stdout);
            return HB_EXIT_OK;
        }
        fprintf(stderr, "hopbench help: %s: no command '%s'%s\n", argv[1],
                text_safe(shown, sizeof(shown), argv[2]),
                near_command(argv[2], near, sizeof(near)));
        return HB_EXIT_USAGE;
    }
    if (argc == 1 || strcmp(argv[1], "help") == 0 || strcmp(argv[1], "version") == 0) {
        cmd_usage(stdout, commands, ARRAY_LEN(commands));
        return HB_EXIT_OK;
    }
    if ((c = command_named(argv[1])) != NULL) return help_command(c, argc - 1, argv + 1);
    fprintf(stderr, "hopbench help: no command '%s' (hopbench help lists them)%s\n",
            text_safe(shown, sizeof(shown), argv[1]), near_command(argv[1], near, sizeof(near)));
    return HB_EXIT_USAGE;
}

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
    char shown[TEXT_SAFE_CAP], near[160]; /* cmd, text_safe */

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
                              .server = &g_main.server,
                              .abort_sock = g_main.abort_sock,
                              .abort_mark = g_main.abort_mark,
                              .abort_dir = g_main.abort_dir,
                              .abort_cap = sizeof(g_main.abort_dir),
                              .argc = g_main.argc,
                              .argv = g_main.argv,
                              .started_unix_s = g_main.started_unix_s,
                              .started_ns = g_main.started_ns,
                              .signals = signals };

    if (argc == 1 || cmd[0] == '-') {
        int c = argc == 1 ? 0 : cmd_option(cmd_top_options, cmd);
        if (c == 'h') return help(1, argv);
        if (c == 'V') {
            printf("hopbench %s\n", HOPBENCH_VERSION);
            return HB_EXIT_OK;
        }
        return command(&cmd_lab, argc, argv); /* "hopbench --quick" is "hopbench lab --quick" */
    }
    if (command_named(cmd) != NULL) return command(command_named(cmd), argc - 1, argv + 1);
    if (strcmp(cmd, "help") == 0) return help(argc - 1, argv + 1);
    if (strcmp(cmd, "version") == 0) {
        printf("hopbench %s\n", HOPBENCH_VERSION);
        return HB_EXIT_OK;
    }
    fprintf(stderr, "hopbench: unknown subcommand '%s' (", text_safe(shown, sizeof(shown), cmd));
    for (size_t i = 0; i < ARRAY_LEN(commands); i++)
        fprintf(stderr, "%s, ", commands[i]->name);
    fprintf(stderr, "help)%s\n", near_command(cmd, near, sizeof(near)));
    return HB_EXIT_USAGE;
}
