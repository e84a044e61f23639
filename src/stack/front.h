/*
 * front: a web server in front of php-fpm, as one entry (one file each:
 * front_nginx.c, front_apache.c, ...): where its binary is and how it is
 * started, its configuration written from the fpm stacks' settings, the
 * requests it holds at once, the FastCGI connections it keeps, its own status
 * page, what its error log says of the backend, and the words of its stack's
 * --help. The entries hold no state and do no I/O: fpm.c writes the
 * configuration and starts the server, fpm_cases.c builds the study's steps
 * from these fields, and fpm_stack.c makes the stack NAME-fpm of each (its
 * stack_def, at the end of the front's file, names the entry: stack_def.front).
 *
 * Adding a front: a file front_NAME.c with its struct web_front and its
 * stack_def (copy front_nginx.c's), one line in stack.c's list of stacks, its
 * binary in scripts/programs.txt and its package in scripts/deps.sh
 * (docs/architecture.md, "How to add a stack").
 */
#ifndef HOPBENCH_STACK_FRONT_H
#define HOPBENCH_STACK_FRONT_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

/* The web server's processes where it has several (nginx's workers, Apache's children). */
#define WEB_PROCS 2u

/* The largest configuration a front writes, and the most arguments it is started with. */
#define FRONT_CONF_MAX (16 * PATH_MAX + 8192)
#define FRONT_MAX_ARGS 8

/* The study's profiles (stack_opts.profile). */
enum fpm_profile {
    FPM_BASELINE = 0, /* stock-like: many modules, dynamic pools, access logs, .htaccess */
    FPM_OPTIMIZED,    /* minimal modules, fixed pools, no access logs, pm static */
    FPM_REUSE,        /* optimized + FastCGI connections kept, within pm.max_children */
};

/* What a configuration is written from; a profile is one set of them. */
struct fpm_knobs {
    bool fpm_static;   /* pm static, no php-fpm access log; else pm dynamic, access log */
    bool web_lean;     /* minimal modules, a fixed pool, no access log, unlimited keep-alive */
    bool htaccess;     /* Apache: AllowOverride All and WordPress's .htaccess */
    bool php_ini;      /* opcache.validate_timestamps=0, a larger realpath cache, expose_php off */
    unsigned children; /* pm.max_children */
    unsigned backlog;  /* listen.backlog; 0: php-fpm's default */
    unsigned kept;     /* FastCGI connections each web server process keeps per backend; 0: none */
    bool keep_all;     /* nginx: keepalive raised so that it keeps every connection it opens */
    bool status_log;   /* each front logs every reply's status to status-tcp.log, status-unix.log */
    unsigned timeout_s;   /* the web server's FastCGI connect and read timeout; 0: its default */
    unsigned web_workers; /* lean Apache: at least this many request workers; 0: 2 x 32 */
};

/* Where a front's configuration puts things: all it is written from but the knobs. */
struct front_site {
    const char *dir;   /* the private directory: pid file, logs, temporary files, www/ */
    const char *host;  /* the address its two ports listen on */
    unsigned port[2];  /* its port in front of php-fpm's TCP pool, of its Unix socket pool */
    unsigned fpm_port; /* php-fpm's TCP pool, on 127.0.0.1 */
    const char *sock;  /* php-fpm's socket */
    const char *user;  /* its workers' user (www-data when hopbench is root); NULL: hopbench's */
    unsigned conns;    /* the client's connections to it */
};

/* The words of the stack's --help that differ from front to front (fpm_stack_help). */
struct front_help {
    const char *title; /* "Apache 2.4 (mpm_event, mod_proxy_fcgi)" */
    const char *stock; /* baseline's stock-like settings, lines after the first indented 19 */
    const char *lean;  /* optimized's web server: "minimal modules, a fixed pool of 2 processes" */
    const char *reuse; /* optimized-reuse: how it keeps connections; NULL: no such profile */
    const char *reuse_step; /* what the ablation's reuse step adds, or "" */
    const char *starve;     /* --starve's lines; NULL: no such case */
};

struct web_front {
    const char *name;      /* the service's name: "nginx"; its stack is NAME-fpm */
    const char *binary;    /* its path on Debian (a glob: the newest match runs, sup_need) */
    const char *package;   /* the Debian package that has it */
    const char *conf_file; /* its configuration's name in the private directory */
    /* its arguments after the binary: "{conf}" is the configuration's path, "{dir}" the dir's */
    const char *args[FRONT_MAX_ARGS];
    /*
     * Writes its configuration of k at s into buf (FRONT_CONF_MAX): 0, or
     * -ENAMETOOLONG when it does not fit.
     */
    int (*conf)(const struct front_site *s, const struct fpm_knobs *k, char *buf, size_t cap);
    /* The requests it holds at once under k (each its own client connection). */
    unsigned (*capacity)(const struct fpm_knobs *k);
    /*
     * The FastCGI connections it keeps open per backend at most under k with
     * conns client connections, and how that comes into how (when k keeps
     * any); NULL: it keeps none (each request a new connection): no profile
     * optimized-reuse, no reuse step.
     */
    unsigned (*kept)(const struct fpm_knobs *k, unsigned conns, char *how, size_t cap);
    /*
     * The files of the private directory it opens only as its workers' user
     * under k (lighttpd opens its logs after giving up root) into names (at
     * most FRONT_MAX_ARGS): how many. fpm.c makes each, empty, theirs before
     * it starts. NULL: none (it opens its files as root, as nginx and Apache).
     */
    unsigned (*worker_files)(const struct fpm_knobs *k, const char **names);
    /* Its own request-count page (the tests read it): stub_status, or mod_status's ?auto. */
    const char *status;
    /* A text in each line of its error log that reports an error (the failure cases count them). */
    const char *error_mark;
    /*
     * How long its logs may lag what it did, s: the failure cases wait that
     * much longer for them (lighttpd holds its access log lines back and
     * writes them every 4 s); 0: at once.
     */
    unsigned log_lag_s;
    bool htaccess; /* it reads .htaccess files under k.htaccess: the ablation has a step without */
    struct front_help help;
};

/* nginx, php-method's front too, and nginx-fpm's binaries (stack_def.needs). */
extern const struct web_front front_nginx;
extern const char *const nginx_needs[];

#endif
