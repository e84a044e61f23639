/*
 * supervisor: the servers of a stack, started and stopped by hopbench.
 *
 * A private temporary directory (mkdtemp) holds what the stack writes: the
 * servers' configurations, their sockets, pid files and logs. Each service is
 * started as a child in cgroups made for the run, nested under the cgroups
 * hopbench itself runs in (each v1 hierarchy that accounts CPU or memory, and
 * the v2 one), so nothing leaves the limits it was started under: the child
 * moves itself there between fork and exec, and no process hopbench did not
 * start is ever moved. Every process in a service's cgroup descends from the
 * service hopbench started, so the stop signals every one of them.
 *
 * sup_release stops every service (SIGTERM, a bounded wait, SIGKILL to every
 * process left in its cgroup), removes the cgroups and every file of the
 * directory. It is bounded and always runs to the end: the caller calls it on
 * every exit path.
 *
 * A hopbench killed outright (SIGKILL) cannot: the directory and the run's
 * cgroups carry its owner mark (host/leftover.h), each service dies with it
 * (PR_SET_PDEATHSIG), and the watcher sup_init starts kills whatever else is
 * in the cgroups (a master's workers) and removes them and the directory. What
 * even that leaves (the watcher killed too) sup_clean_leftovers removes on the
 * next run, once its owner is dead.
 */
#ifndef HOPBENCH_STACK_SUPERVISOR_H
#define HOPBENCH_STACK_SUPERVISOR_H

#include <limits.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "endpoint.h"
#include "host/leftover.h"
#include "proto/codec.h"
#include "proto/fcgi.h"
#include "proto/http.h"
#include "proto/mysql.h"
#include "proto/pg.h"
#include "proto/resp.h"
#include "stack/users.h"
#include "util.h"

#define SUP_MAX_HIER 4 /* cpuacct, cpu, memory (v1) and the v2 hierarchy */
#define SUP_MAX_SVC  6

/* How long a service gets after SIGTERM, then after SIGKILL. */
#define SUP_TERM_NS (3 * NS_PER_S)
#define SUP_KILL_NS (2 * NS_PER_S)

struct sup_svc {
    char name[32];
    pid_t pid;   /* the process hopbench started; 0 once reaped */
    int status;  /* its wait status once reaped */
    bool exited; /* reaped */
    char log[PATH_MAX];
    char cg[SUP_MAX_HIER][PATH_MAX]; /* its cgroup in each hierarchy; "" once removed */
};

struct sup {
    char dir[PATH_MAX];                  /* the private directory; "" once removed */
    char cg_run[SUP_MAX_HIER][PATH_MAX]; /* the run's cgroup in each hierarchy: DIRNAME.MARK */
    unsigned ncg;
    struct leftover_watch watch; /* ends the services and removes all if hopbench is killed */
    struct sup_svc svc[SUP_MAX_SVC];
    unsigned nsvc;
};

/* A service to start. */
struct sup_spec {
    const char *name;        /* short, [a-z0-9-]: the cgroup's and the log's name */
    const char *const *argv; /* argv[0]: the server's absolute path */
    const char *const *env;  /* its whole environment (NULL-terminated); NULL: only PATH */
    /*
     * Who it runs as (its uid, gid and supplementary groups, set in the child
     * before exec); NULL: hopbench's own. For a server that refuses root.
     */
    const struct users_id *as;
};

/* A real request that a ready service answers. */
struct sup_check {
    const char *svc;   /* the service's name, for messages */
    const char *proto; /* "redis" (PING), "http" (GET), "fcgi"; "pg", "mysql" (a query, after
                        * the codec's log-in) */
    struct endpoint ep;
    /* the request: its protocol's options (all zero: its defaults); an http or fcgi reply
     * must be 2xx */
    union {
        union codec_room room;
        struct http_opts http;
        struct fcgi_opts fcgi;
        struct resp_opts redis;
        struct pg_opts pg;
        struct mysql_opts mysql;
    } opts;
};

/*
 * The server's binary as found on this machine: the newest executable that
 * pattern matches (a glob; a plain path matches itself), in version order
 * (strverscmp: php-fpm8.10 after php-fpm8.4, postgresql/16 after 15), into
 * path (NULL: only whether there is one). Else fails with one line naming the
 * Debian package to install: "redis-server is not installed
 * (no /usr/bin/redis-server): apt-get install -y redis-server". Returns 0,
 * -ENOENT, or -ENAMETOOLONG when it does not fit cap.
 */
int sup_need(const char *pattern, const char *package, char *path, size_t cap, struct hb_err *err);

/*
 * Makes the private directory (under $TMPDIR or /tmp) with its owner mark, the
 * run's cgroups and the watcher. Returns 0, or a negative errno with err set;
 * sup_release is still to be called either way (it removes what was made).
 */
int sup_init(struct sup *s, struct hb_err *err);

/*
 * Removes what stacks of dead hopbench processes left (host/leftover.h): their
 * private directories under $TMPDIR (or /tmp), their cgroups beside the ones a
 * stack would make, and the processes in those; one line per dead owner to out.
 */
void sup_clean_leftovers(FILE *out);

/* dir/name into buf. Returns 0 or -ENAMETOOLONG. */
int sup_path(const struct sup *s, const char *name, char *buf, size_t cap);

/*
 * Writes text to dir/name (a new file, 0644 whatever the umask: a server's
 * workers read it). Returns 0 or a negative errno with err set.
 */
int sup_write(const struct sup *s, const char *name, const char *text, struct hb_err *err);

/*
 * Starts a service: its cgroups, its log dir/NAME.log (stdout and stderr),
 * stdin /dev/null, its own process group (a Ctrl-C at the terminal reaches
 * hopbench, which stops the services in order), the default signal
 * dispositions and mask. Returns 0, or a negative errno with err set.
 */
int sup_start(struct sup *s, const struct sup_spec *spec, struct hb_err *err);

/*
 * Runs spec to its end, a one-off step such as a database's initdb: started
 * as sup_start starts a service, waited for at most timeout_ns, then its
 * cgroups removed (anything it left running killed). Returns 0 when it
 * exited 0; else a negative errno (-ECHILD, -ETIMEDOUT, -EINTR when *stop was
 * set) with err naming it and its log's last line.
 */
int sup_task(struct sup *s, const struct sup_spec *spec, uint64_t timeout_ns,
             const atomic_int *stop, struct hb_err *err);

/*
 * Makes dir/name, mode 0700, owned by as (NULL: hopbench's own), for a
 * service that runs as another user; the private directory is opened to
 * search (0711) so that user reaches it, and every directory above it is
 * checked: one line names the first that user may not search. Returns 0 or
 * a negative errno with err set.
 */
int sup_mkdir(struct sup *s, const char *name, const struct users_id *as, struct hb_err *err);

/* The service called name, or NULL. */
struct sup_svc *sup_find(struct sup *s, const char *name);

/* Where its CPU is accounted: the v1 cpuacct directory, else the v2 one. */
const char *sup_cgroup_cpu(const struct sup_svc *v);

/*
 * Waits until each check is answered (a whole, well-formed reply; 2xx for
 * http and fcgi), for at most timeout_ns in all. Fails with one line naming
 * the service and its log's last line when a service exits or does not answer
 * in time. Returns 0, -EINTR when *stop was set, or a negative errno.
 */
int sup_wait_ready(struct sup *s, const struct sup_check *checks, unsigned n, uint64_t timeout_ns,
                   const atomic_int *stop, struct hb_err *err);

/*
 * One request of check c, on a new connection, within timeout_ns; a codec
 * with a session (pg, mysql) logs in first. Returns 0 when the reply was
 * complete, well-formed, no error reply and (http, fcgi) 2xx; else a
 * negative errno with why set.
 */
int sup_ask(const struct sup_check *c, uint64_t timeout_ns, char *why, size_t cap);

/*
 * A FastCGI request of check c (its opts: the path, the script) on a new
 * connection within timeout_ns; the reply's FCGI_STDOUT (CGI headers, then
 * the body) into out, NUL-terminated, cut at cap. For a status page: php-fpm's
 * pm.status_path. Returns 0 or a negative errno with why set.
 */
int sup_fcgi_get(const struct sup_check *c, uint64_t timeout_ns, char *out, size_t cap, char *why,
                 size_t whycap);

/* Whether every service is still running; else -ECHILD with err naming it and its log's last line.
 */
int sup_alive(struct sup *s, struct hb_err *err);

/* The number of processes in the service's cgroup, or a negative errno. */
int sup_procs(const struct sup_svc *v);

/*
 * Stops every service (in reverse order), removes the cgroups and the
 * directory with everything in it. Bounded (SUP_TERM_NS + SUP_KILL_NS per
 * service at most); safe to call twice. Returns 0, or -EBUSY when something
 * could not be removed (it is then named in err).
 */
int sup_release(struct sup *s, struct hb_err *err);

#endif
