/*
 * The web server -> PHP-FPM stacks' shared part (fpm.c): php-fpm's two pools
 * and any web front (front.h) started from one set of settings, the set-up
 * checks and the run child's arguments, so that a profile's measurement
 * (fpm_stack.c), the study's cases (fpm_cases.c: the ablation, the pool
 * sweep, the overload, the starvation) and php.c's php-method build the same
 * stack with one setting changed at a time.
 */
#ifndef HOPBENCH_STACK_FPM_H
#define HOPBENCH_STACK_FPM_H

#include <limits.h>
#include <stdbool.h>

#include "stack/front.h"
#include "stack/measure.h"
#include "stack/stack.h"

/* php-fpm: the newest installed (php8.2-fpm on Debian 12), and the package of the default one. */
#define FPM_BINARY  "/usr/sbin/php-fpm[0-9]*"
#define FPM_PACKAGE "php-fpm"

/* The stack's endpoints: the two fronts, FPM's port and socket; script and docroot paths. */
struct fpm_eps {
    char front[2][64];
    char fpm[2][PATH_MAX + 8];
    char sock[PATH_MAX];
    char script[PATH_MAX];
    char docroot[PATH_MAX];
    unsigned fpm_port;
    unsigned front_port[2];
};

/* The pod study's pool (pm static 16) and load (96 connections): the stacks' defaults. */
#define FPM_STUDY_POOL  16u
#define FPM_STUDY_CONNS 96u

/*
 * php-fpm.conf of k at s (its two pools: 127.0.0.1:s->fpm_port and s->sock;
 * as root their workers and the socket are s->user's) into buf: 0, or
 * -ENAMETOOLONG when it does not fit cap.
 */
int fpm_conf(const struct front_site *s, const struct fpm_knobs *k, char *buf, size_t cap);

/* The settings of profile p. */
void fpm_knobs_of(enum fpm_profile p, struct fpm_knobs *k);

/*
 * k fitted to conns client connections in front of w: a request worker per
 * connection in the web server (lean Apache's pool), and when w keeps every
 * FastCGI connection it opens (nginx: one per request in flight, no queue) a
 * php-fpm worker for each, so that kept connections are never more than the
 * workers that serve them.
 */
void fpm_knobs_fit(const struct web_front *w, struct fpm_knobs *k, unsigned conns);

/*
 * The connections the bare FastCGI hop keeps open at conns: one per worker
 * at most (a kept FastCGI connection holds its worker until it closes, so
 * more would wait for ever); its connect-mode measurement takes conns.
 */
unsigned fpm_bare_kept(const struct fpm_knobs *k, unsigned conns);

/*
 * Writes php-fpm's configuration of k into c's private directory, starts it,
 * checks the set-up (one line each: the socket, the web server's kept
 * connections against the pool, clients outnumbering them), waits until both
 * pools answer; the web server comes after (fpm_front_up), so that the bare
 * hop can be measured before it holds any worker. starve: kept connections
 * beyond pm.max_children are let through with a warning line instead of
 * refused. Returns 0, -EINTR on a stop signal, or a negative errno with err
 * set.
 */
int fpm_up(struct stack_ctx *c, const struct web_front *w, const struct fpm_knobs *k, bool starve,
           struct fpm_eps *e, struct hb_err *err);

/* Writes w's configuration of k, starts it and waits until both its fronts answer. */
int fpm_front_up(struct stack_ctx *c, const struct web_front *w, const struct fpm_knobs *k,
                 const struct fpm_eps *e, struct hb_err *err);

/*
 * The run child's arguments that measure the stack: --service for the web
 * server and php-fpm (each its cgroup), --watch for both backend hops
 * (backend-tcp, backend-unix: web server -> php-fpm).
 */
void fpm_observe_args(struct stack_ctx *c, const struct web_front *w, const struct fpm_eps *e,
                      struct stack_args *a);

/* The run child's arguments for the http load on both fronts, with fpm_observe_args. */
void fpm_front_args(struct stack_ctx *c, const struct web_front *w, const struct fpm_eps *e,
                    struct stack_args *a);

/* The run child's arguments for the fcgi load straight to php-fpm (the bare hop), measured alone.
 */
void fpm_bare_args(struct stack_ctx *c, const struct fpm_eps *e, struct stack_args *a);

/* The profiles' names, in the enum's order (the stacks' --profile), NULL-terminated. */
extern const char *const fpm_profile_names[];

/* The profile --profile names (FPM_OPTIMIZED without one). */
enum fpm_profile fpm_profile_of(const struct stack_opts *o);

/* pm.max_children of each pool under profile p. */
unsigned fpm_children(enum fpm_profile p);

/* fpm_up and fpm_front_up with profile p's settings fitted to c's connections (into *k). */
int fpm_build(struct stack_ctx *c, const struct web_front *w, enum fpm_profile p,
              struct fpm_knobs *k, struct fpm_eps *e, struct hb_err *err);

#endif
