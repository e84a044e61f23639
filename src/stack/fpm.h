/*
 * The web server -> PHP-FPM stacks' shared part (fpm.c): the settings a
 * configuration is written from, the services started from them and the
 * run child's arguments, so that the study's cases (fpm_cases.c: the
 * ablation, the pool sweep, the overload, the starvation) build the same
 * stack with one setting changed at a time, and php.c's php-method builds
 * nginx -> php-fpm from the same parts.
 */
#ifndef HOPBENCH_STACK_FPM_H
#define HOPBENCH_STACK_FPM_H

#include <limits.h>
#include <stdbool.h>

#include "stack/measure.h"

/* The web server's processes: each may keep FastCGI connections (kept > 0). */
#define WEB_PROCS 2u
#include "stack/stack.h"

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

/* What differs between the two web servers. */
struct web {
    const char *name; /* the service's name: "nginx", "apache" */
    const char *binary;
    int (*conf)(struct stack_ctx *c, const struct fpm_knobs *k, const unsigned front[2],
                unsigned fpm_port, const char *sock, struct hb_err *err);
    const char *status; /* its request-count page */
};

/* The stack's endpoints: the two fronts, FPM's port and socket; script and docroot paths. */
struct fpm_eps {
    char front[2][64];
    char fpm[2][PATH_MAX + 8];
    char sock[PATH_MAX];
    char script[PATH_MAX];
    char docroot[PATH_MAX];
    unsigned fpm_port;
};

/*
 * The requests web server w can hold at once under k: Apache's request
 * workers (MaxRequestWorkers), nginx's worker connections (each request holds
 * two: the client's and the backend's).
 */
unsigned fpm_front_capacity(const struct web *w, const struct fpm_knobs *k);

/*
 * The FastCGI connections nginx keeps open at most per backend when it keeps
 * them: one per client connection (one request in flight each; nginx opens a
 * connection per request in flight, and keeps them all), and one more per
 * worker that served only the readiness request.
 */
unsigned fpm_nginx_kept(unsigned conns);

/* The settings of profile p. */
void fpm_knobs_of(enum fpm_profile p, struct fpm_knobs *k);

/*
 * Writes the configurations of k into c's private directory, starts php-fpm,
 * checks the set-up (one line each), starts the web server, waits until all
 * answer. starve: kept connections beyond pm.max_children are let through
 * with a warning line instead of refused. Returns 0, -EINTR on a stop
 * signal, or a negative errno with err set.
 */
int fpm_up(struct stack_ctx *c, const struct web *w, const struct fpm_knobs *k, bool starve,
           struct fpm_eps *e, struct hb_err *err);

/*
 * The run child's arguments that measure the stack: --service for the web
 * server and php-fpm (each its cgroup), --watch for both backend hops
 * (backend-tcp, backend-unix: web server -> php-fpm).
 */
void fpm_observe_args(struct stack_ctx *c, const struct web *w, const struct fpm_eps *e,
                      struct stack_args *a);

/* The run child's arguments for the http load on both fronts, with fpm_observe_args. */
void fpm_front_args(struct stack_ctx *c, const struct web *w, const struct fpm_eps *e,
                    struct stack_args *a);

/* The cases of stack_opts (--ablation, --pool, --overload, --starve); fpm_cases.c. */
int fpm_cases(struct stack_ctx *c, const struct web *w, struct hb_err *err);

/* Whether o asks for one of the cases. */
bool fpm_case_asked(const struct stack_opts *o);

/* The profiles' names, in the enum's order (the stacks' --profile), NULL-terminated. */
extern const char *const fpm_profile_names[];

/* The profile --profile names (FPM_OPTIMIZED without one). */
enum fpm_profile fpm_profile_of(const struct stack_opts *o);

/* pm.max_children of each pool under profile p. */
unsigned fpm_children(enum fpm_profile p);

/* nginx in front of php-fpm, and nginx-fpm's server binaries and packages (stack_def.needs). */
extern const struct web web_nginx;
extern const char *const nginx_needs[];

/*
 * fpm_up with profile p's settings, no case: bare is the connections a bare
 * FastCGI hop will keep open besides the web server's (0 for none).
 */
int fpm_build(struct stack_ctx *c, const struct web *w, enum fpm_profile p, unsigned bare,
              struct fpm_eps *e, struct hb_err *err);

#endif
