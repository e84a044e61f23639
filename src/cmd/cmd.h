/*
 * cmd: the commands of hopbench, one file each (src/cmd/NAME.c), each ending
 * in one `const struct command`: its name, its lines in the top-level help,
 * its usage, its option table, its parser and what it does. main.c holds the
 * table of them, the signals and the exit codes of a command line it cannot
 * take; a command's --help is drawn from its table (cmd_help), and so is the
 * list `hopbench help --options NAME` prints, which the man page's option
 * lists are checked against (tests/integration/test_man.sh).
 */
#ifndef HOPBENCH_CMD_CMD_H
#define HOPBENCH_CMD_CMD_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/* Exit codes (README.md, "Exit codes", lists them for users). */
enum hb_exit {
    HB_EXIT_OK = 0,      /* every run valid */
    HB_EXIT_RUNTIME = 1, /* could not run: nothing listening, no threads, cannot write evidence */
    HB_EXIT_INVALID = 2, /* ran, but a run saw errors or was saturated: not valid */
    HB_EXIT_USAGE = 64,  /* bad command line (EX_USAGE) */
    HB_EXIT_LIMITS = 71, /* the plan needs more fds or memory than the limits give (EX_OSERR) */
    HB_EXIT_NOPERM = 77, /* --netns without the right to make a namespace (EX_NOPERM) */
    HB_EXIT_INTERRUPTED = 130, /* Ctrl-C: what was measured was still written */

    /* run --agent: the agent refused the token; run pg, mysql: the client refused the
     * server's way of authenticating (--auth-method, --server-public-key) */
    HB_EXIT_AGENT_AUTH = 3,
    /* run --agent: the agent refused a request as bad or too large, or broke the protocol */
    HB_EXIT_PROTOCOL = 76,
};

/* A parser returns this when --help was printed. */
#define CLI_HELP 1

/*
 * One entry of a command's option table: an option, or (name NULL) a line of
 * text that --help prints at its place among them (a heading, a paragraph).
 * --help prints an option as "  -c, --connections N" or "      --mode M",
 * then its help from the command's column on, each further line of it there
 * too. id is what the command's parser is handed for it: its short letter, or
 * an OPT_* value (cmd/options.h) past the letters.
 */
struct cmd_option {
    const char *name; /* the long name, without "--"; NULL: text */
    int letter;       /* the short letter, or 0 */
    const char *arg;  /* the value's name ("N", "FILE"); NULL: the option takes none */
    const char *help; /* its text, lines joined by '\n'; for text, printed as it is */
    int id;           /* the value the parser sees */
};

/*
 * An option of a command's table that takes one of a few words (by its id),
 * and the list its parser checks the value against (opt_choice), which
 * `hopbench help --values NAME` prints for the bash completion.
 */
struct cmd_value {
    int id;
    const char *const *words; /* NULL-terminated; NULL ends a command's list */
};

#define CMD_TEXT(text)                                                                             \
    {                                                                                              \
        NULL, 0, NULL, (text), 0                                                                   \
    }
#define CMD_END                                                                                    \
    {                                                                                              \
        NULL, 0, NULL, NULL, 0                                                                     \
    }

/* What cmd_env.signals puts in place (main.c's handlers), or marks. */
enum {
    CMD_SIG_STOP = 1,     /* SIGINT, SIGTERM, SIGHUP, SIGQUIT end the work; SIGPIPE ignored */
    CMD_SIG_CHILD = 2,    /* SIGCHLD of *server (its exit on its own) stops the work too */
    CMD_SIG_NO_ABORT = 4, /* no later signal aborts (stack: its tear-down is bounded) */
};

/* What main.c gives a command to run with. */
struct cmd_env {
    atomic_int *stop;      /* 0, or STOP_INTERRUPT or STOP_SERVER_EXIT (util.h): set by handlers */
    _Atomic pid_t *server; /* a server the command forked (spawn.h), for the handlers */
    /*
     * What an abort (the signal after the first) removes: a socket file, another file
     * (the lab directory's owner mark, host/leftover.h) and the directory they are in.
     */
    char *abort_sock;
    char *abort_mark;
    char *abort_dir;
    size_t abort_cap; /* the size of each */
    int argc;         /* the command line as typed, secrets hidden: the evidence's */
    char **argv;
    uint64_t started_unix_s;        /* when the invocation started */
    uint64_t started_ns;            /* the same, CLOCK_MONOTONIC: for the evidence's elapsed_s */
    void (*signals)(unsigned what); /* CMD_SIG_* */
};

struct hb_err;

/*
 * A command. parse reads argv (argv[0] is the command's name) into the
 * command's own options: 0, CLI_HELP after printing its help to out, or
 * -EINVAL with err set (main.c then says it and exits 64). exec does the work
 * on them and returns the exit code; it says what went wrong itself.
 */
struct command {
    const char *name;
    const char *synopsis;             /* its usage line in the top-level help, after "hopbench " */
    const char *summary;              /* what it does in the top-level help; lines joined by '\n' */
    const char *usage;                /* its --help before the options */
    const struct cmd_option *options; /* ends with CMD_END */
    /* The words its first word after the options may be (run's protocols), or NULL. */
    const char *const *words;
    /* Its options that take one of a few words (ends with a NULL words), or NULL. */
    const struct cmd_value *values;
    const char *tail; /* its --help after the options, or NULL */
    unsigned column;  /* where the options' help begins */
    /* A bad command line is said as "hopbench NAME: MSG (see hopbench NAME --help)" (its
     * messages do not name it); else as "hopbench: MSG". */
    bool hint;
    int (*parse)(int argc, char **argv, FILE *out, struct hb_err *err);
    int (*exec)(const struct cmd_env *env);
};

/*
 * The parsers of run and lab (their options: run.h, lab.h), for the unit
 * tests: 0, CLI_HELP after printing help to out, or -EINVAL with err set.
 */
struct run_opts;
struct lab_opts;
int cli_parse_run(int argc, char **argv, struct run_opts *o, FILE *out, struct hb_err *err);
int cli_parse_lab(int argc, char **argv, struct lab_opts *o, FILE *out, struct hb_err *err);

/* Each in src/cmd/NAME.c. */
extern const struct command cmd_lab, cmd_run, cmd_serve, cmd_compare, cmd_merge, cmd_report,
    cmd_cost, cmd_stack, cmd_agent;

#endif
