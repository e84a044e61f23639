/*
 * fpm: the web server -> PHP-FPM building blocks that fpm.c's stacks
 * (nginx-fpm, apache-fpm) and php.c's php-method share: the profiles,
 * php-fpm's two pools (one on a TCP port, one on a Unix socket) behind a web
 * server with one front port per backend, the set-up checks, readiness.
 */
#ifndef HOPBENCH_STACK_FPM_H
#define HOPBENCH_STACK_FPM_H

#include <limits.h>

#include "stack/measure.h"
#include "stack/stack.h"

/* The study's profiles (stack_opts.profile). */
enum fpm_profile {
    FPM_BASELINE = 0, /* stock-like: many modules, dynamic pools, access logs, .htaccess */
    FPM_OPTIMIZED,    /* minimal modules, fixed pools, no access logs, pm static */
    FPM_REUSE,        /* optimized + FastCGI connections kept, within pm.max_children */
};

/* Their names, in the enum's order (the stacks' --profile), NULL-terminated. */
extern const char *const fpm_profile_names[];

/* The profile --profile names (FPM_OPTIMIZED without one). */
enum fpm_profile fpm_profile_of(const struct stack_opts *o);

/* pm.max_children of each pool under profile p. */
unsigned fpm_children(enum fpm_profile p);

/* A web server in front of php-fpm (fpm.c). */
struct web;
extern const struct web web_nginx;

/* nginx-fpm's server binaries and their packages (stack_def.needs). */
extern const char *const nginx_needs[];

/* The stack's endpoints: the two fronts, FPM's port and socket; script and docroot paths. */
struct fpm_eps {
    char front[2][64]; /* the web server's port whose backend is FPM's tcp pool, its unix pool */
    char fpm[2][PATH_MAX + 8];
    char sock[PATH_MAX];
    char script[PATH_MAX];  /* www/bench.php */
    char docroot[PATH_MAX]; /* www: the web server's root too (other files there are served) */
};

/*
 * Writes the docroot (www/bench.php: <?php echo "bench";), starts php-fpm
 * (service "php-fpm") and waits for both pools; runs the set-up checks (one
 * line each to c->out; bare: the connections a bare FastCGI hop will keep
 * open, 0 for none); starts the web server w (service w's name, "nginx") and
 * waits for both fronts. Fills e. Returns 0, -EINTR on a stop signal, or a
 * negative errno with err set.
 */
int fpm_build(struct stack_ctx *c, const struct web *w, enum fpm_profile p, unsigned bare,
              struct fpm_eps *e, struct hb_err *err);

#endif
