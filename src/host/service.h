/*
 * service: the named services of a run and the extra hops it watches.
 *
 *   --service NAME=pid:PID      one process: its CPU clock and PSS
 *   --service NAME=tree:PID     the process and its descendants, found again at
 *                               each reading, plus the CPU of children they reaped
 *   --service NAME=cgroup:DIR   a cgroup directory (v2, or any v1 hierarchy's):
 *                               its CPU usage, the PSS of its processes, its
 *                               working set
 *   --service NAME=comm:COMM    the process named COMM whose parent is not (a
 *                               server's master) and its descendants, found
 *                               by service_resolve when the run starts: a
 *                               tree from then on (a pod's container beside
 *                               others in one process namespace)
 *   --watch [LABEL=]ENDPOINT    another hop whose sockets are sampled like the
 *                               loaded one's
 *   --label NAME, NAME=ENDPOINT a name for an endpoint, used by the tables and
 *                               the evidence instead of its address
 *
 * This module parses and checks those words (a pid that runs, a directory on a
 * cgroup file system, names that are unique); observe.c measures the services
 * and samples the watched hops, report/services.c prints and records them.
 */
#ifndef HOPBENCH_HOST_SERVICE_H
#define HOPBENCH_HOST_SERVICE_H

#include <limits.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "endpoint.h"
#include "util.h"

#define SERVICE_MAX       8                  /* --service, per run */
#define SERVICE_MAX_WATCH 8                  /* --watch */
#define SERVICE_NAME_MAX  ENDPOINT_LABEL_MAX /* a service name or a label, with its NUL */

enum service_kind {
    SERVICE_PID = 0, /* one process */
    SERVICE_TREE,    /* a process and its descendants */
    SERVICE_CGROUP,  /* a cgroup directory */
    SERVICE_COMM,    /* the tree of the process named so, until service_resolve finds it */
};

struct service_spec {
    char name[SERVICE_NAME_MAX];
    enum service_kind kind;
    pid_t pid;          /* SERVICE_PID, SERVICE_TREE */
    char dir[PATH_MAX]; /* SERVICE_CGROUP */
    char comm[16];      /* SERVICE_COMM, and the SERVICE_TREE it was resolved to */
};

/* Every service and watched hop of a run. */
struct service_set {
    struct service_spec svc[SERVICE_MAX];
    unsigned n;
    struct endpoint watch[SERVICE_MAX_WATCH];
    unsigned nwatch;
};

/* "pid", "tree", "cgroup" or "comm". */
const char *service_kind_name(enum service_kind k);

/*
 * Where the service's figures come from, for the evidence's `source`: "pid N",
 * "tree of pid N" (", comm COMM" when a comm service was resolved to it),
 * "cgroup DIR" or "comm COMM", into buf (cap bytes, cut to fit).
 */
void service_source(const struct service_spec *s, char *buf, size_t cap);

/*
 * Whether s is a usable name or label: 1 to SERVICE_NAME_MAX - 1 characters of
 * letters, digits, '_', '-' and '.', beginning with a letter or a digit.
 */
bool service_name_valid(const char *s);

/*
 * Parses "NAME=KIND:ARG" into *out, syntax only (service_check looks at the
 * system). Returns 0 or -EINVAL with err naming what is wrong.
 */
int service_parse(const char *arg, struct service_spec *out, struct hb_err *err);

/*
 * Whether the service can be measured now: its pid runs (not a zombie), or its
 * directory is a directory on a cgroup or cgroup2 file system. 0 or a negative
 * errno with err set.
 */
int service_check(const struct service_spec *s, struct hb_err *err);

/* --service: service_parse, a name not used yet, service_check. 0 or -EINVAL with err set. */
int service_add(struct service_set *set, const char *arg, struct hb_err *err);

/*
 * Finds the process of each comm service in set (proc_comm_roots: one, not
 * two) and makes the service the tree of that pid, asking /proc again every
 * 50 ms while none runs, until until_ns (on now_ns's clock; a time passed
 * already asks once) or *stop (when stop is not NULL). Returns 0, -ESRCH
 * when none ran in time, -EEXIST when several do, with err naming the
 * service, or another negative errno.
 */
int service_resolve(struct service_set *set, uint64_t until_ns, const atomic_int *stop,
                    struct hb_err *err);

/*
 * Splits a "NAME=ENDPOINT" word: when arg does not begin with an endpoint's
 * scheme and holds '=' after a valid name, copies the name into label (cap
 * bytes) and points *rest after the '='. Otherwise label is "" and *rest is
 * arg. Returns 0, or -EINVAL with err set when what precedes '=' is not a
 * valid name.
 */
int service_label_split(const char *arg, char *label, size_t cap, const char **rest,
                        struct hb_err *err);

/*
 * --watch [LABEL=]ENDPOINT: a TCP endpoint with a port other than 0, or a unix
 * one, not watched already. 0 or -EINVAL with err set.
 */
int service_watch_add(struct service_set *set, const char *arg, struct hb_err *err);

/*
 * Gives eps[i] the label labels[i] (the --label options, in the order of the
 * endpoints) where it has none yet; then checks that no two endpoints share a
 * label. 0, or -EINVAL with err set for more labels than endpoints, an
 * endpoint labelled both ways, a bad or repeated label.
 */
int service_labels_apply(struct endpoint *eps, unsigned neps, const char *const *labels,
                         unsigned nlabels, struct hb_err *err);

#endif
