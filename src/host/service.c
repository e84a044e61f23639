/*
 * service: parsing and checking of --service, --watch and --label (see service.h).
 */
#include "host/service.h"

#include <errno.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>

#include "host/counters.h"

/* Names the per-service table uses for its own columns. */
static const char *const reserved[] = { "client", "sum", "system" };

const char *service_kind_name(enum service_kind k)
{
    return k == SERVICE_TREE     ? "tree"
           : k == SERVICE_CGROUP ? "cgroup"
           : k == SERVICE_COMM   ? "comm"
                                 : "pid";
}

void service_source(const struct service_spec *s, char *buf, size_t cap)
{
    if (s->kind == SERVICE_CGROUP)
        snprintf(buf, cap, "cgroup %s", s->dir);
    else if (s->kind == SERVICE_COMM)
        snprintf(buf, cap, "comm %s", s->comm);
    else
        snprintf(buf, cap, "%s %d%s%s", s->kind == SERVICE_TREE ? "tree of pid" : "pid",
                 (int)s->pid, s->comm[0] != '\0' ? ", comm " : "", s->comm);
}

static bool name_char(char c, bool first)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           (!first && (c == '_' || c == '-' || c == '.'));
}

/* Whether s[0 .. len - 1] is a valid name. */
static bool name_valid_n(const char *s, size_t len)
{
    if (len == 0 || len >= SERVICE_NAME_MAX) return false;
    for (size_t i = 0; i < len; i++)
        if (!name_char(s[i], i == 0)) return false;
    return true;
}

bool service_name_valid(const char *s)
{
    return s != NULL && name_valid_n(s, strlen(s));
}

static int parse_pid(const char *arg, const char *v, pid_t *pid, struct hb_err *err)
{
    char *end = NULL;
    unsigned long n;

    errno = 0;
    n = v[0] >= '0' && v[0] <= '9' ? strtoul(v, &end, 10) : 0;
    if (end == NULL || *end != '\0' || errno != 0 || n == 0 || n > (1u << 22))
        return hb_fail(err, -EINVAL, "--service %s: '%s' is not a pid", arg, v);
    *pid = (pid_t)n;
    return 0;
}

int service_parse(const char *arg, struct service_spec *out, struct hb_err *err)
{
    const char *eq = strchr(arg, '='), *kind, *colon, *v;
    size_t klen;

    memset(out, 0, sizeof(*out));
    if (eq == NULL)
        return hb_fail(err, -EINVAL,
                       "--service %s: expected NAME=pid:PID, NAME=tree:PID, NAME=cgroup:DIR or "
                       "NAME=comm:COMM",
                       arg);
    if (!name_valid_n(arg, (size_t)(eq - arg)))
        return hb_fail(err, -EINVAL,
                       "--service %s: a name is 1 to %d letters, digits, '_', '-' or '.'", arg,
                       SERVICE_NAME_MAX - 1);
    memcpy(out->name, arg, (size_t)(eq - arg));
    for (size_t i = 0; i < ARRAY_LEN(reserved); i++)
        if (strcmp(out->name, reserved[i]) == 0)
            return hb_fail(err, -EINVAL, "--service %s: '%s' names a column of its own", arg,
                           reserved[i]);
    kind = eq + 1;
    colon = strchr(kind, ':');
    if (colon == NULL)
        return hb_fail(err, -EINVAL, "--service %s: missing KIND:ARG (pid, tree, cgroup or comm)",
                       arg);
    klen = (size_t)(colon - kind);
    v = colon + 1;
    if (klen == 3 && strncmp(kind, "pid", 3) == 0)
        out->kind = SERVICE_PID;
    else if (klen == 4 && strncmp(kind, "tree", 4) == 0)
        out->kind = SERVICE_TREE;
    else if (klen == 6 && strncmp(kind, "cgroup", 6) == 0)
        out->kind = SERVICE_CGROUP;
    else if (klen == 4 && strncmp(kind, "comm", 4) == 0)
        out->kind = SERVICE_COMM;
    else
        return hb_fail(err, -EINVAL,
                       "--service %s: unknown kind '%.*s' (pid, tree, cgroup or comm)", arg,
                       (int)klen, kind);
    if (out->kind == SERVICE_COMM) {
        /* the kernel keeps 15 bytes of a command name; '/' is never in one */
        if (v[0] == '\0' || strlen(v) >= sizeof(out->comm) || strchr(v, '/') != NULL)
            return hb_fail(err, -EINVAL,
                           "--service %s: a command name is 1 to %zu bytes, without '/'", arg,
                           sizeof(out->comm) - 1);
        snprintf(out->comm, sizeof(out->comm), "%s", v);
        return 0;
    }
    if (out->kind != SERVICE_CGROUP) return parse_pid(arg, v, &out->pid, err);
    if (v[0] == '\0') return hb_fail(err, -EINVAL, "--service %s: missing the cgroup DIR", arg);
    if (strlen(v) >= sizeof(out->dir))
        return hb_fail(err, -EINVAL, "--service %s: the directory's name is too long", out->name);
    snprintf(out->dir, sizeof(out->dir), "%s", v);
    return 0;
}

int service_check(const struct service_spec *s, struct hb_err *err)
{
    struct proc_stat st;
    struct statfs fs;
    struct stat sb;
    int rc;

    if (s->kind == SERVICE_COMM) return 0; /* service_resolve finds it when the run starts */
    if (s->kind != SERVICE_CGROUP) {
        rc = proc_stat_read(s->pid, &st);
        if (rc == -ESRCH)
            return hb_fail(err, rc, "--service %s: pid %d: no such process", s->name, (int)s->pid);
        if (rc < 0)
            return hb_fail(err, rc, "--service %s: /proc/%d/stat: %s", s->name, (int)s->pid,
                           strerror(-rc));
        if (proc_state_exited(st.state))
            return hb_fail(err, -ESRCH, "--service %s: pid %d has exited (a zombie)", s->name,
                           (int)s->pid);
        return 0;
    }
    if (stat(s->dir, &sb) == -1 || !S_ISDIR(sb.st_mode))
        return hb_fail(err, -ENOTDIR, "--service %s: %s is not a directory", s->name, s->dir);
    if (statfs(s->dir, &fs) == -1 ||
        (fs.f_type != CGROUP_SUPER_MAGIC && fs.f_type != CGROUP2_SUPER_MAGIC))
        return hb_fail(err, -EINVAL, "--service %s: %s is not a cgroup directory", s->name, s->dir);
    return 0;
}

int service_add(struct service_set *set, const char *arg, struct hb_err *err)
{
    struct service_spec *s;

    if (set->n == SERVICE_MAX)
        return hb_fail(err, -EINVAL, "--service: at most %d services", SERVICE_MAX);
    s = &set->svc[set->n];
    if (service_parse(arg, s, err) < 0) return -EINVAL;
    for (unsigned i = 0; i < set->n; i++)
        if (strcmp(set->svc[i].name, s->name) == 0)
            return hb_fail(err, -EINVAL, "--service %s: the name '%s' is given twice", arg,
                           s->name);
    if (service_check(s, err) < 0) return -EINVAL;
    set->n++;
    return 0;
}

int service_resolve(struct service_set *set, uint64_t until_ns, const atomic_int *stop,
                    struct hb_err *err)
{
    for (unsigned i = 0; i < set->n; i++) {
        struct service_spec *s = &set->svc[i];
        pid_t pid[2];
        ssize_t n;

        if (s->kind != SERVICE_COMM) continue;
        while ((n = proc_comm_roots(s->comm, pid, ARRAY_LEN(pid))) == 0 && now_ns() < until_ns &&
               (stop == NULL || !atomic_load(stop)))
            sleep_until_ns(now_ns() + 50 * NS_PER_MS, stop);
        if (n < 0)
            return hb_fail(err, (int)n, "--service %s: cannot read /proc: %s", s->name,
                           strerror((int)-n));
        if (n == 0)
            return hb_fail(err, -ESRCH, "--service %s: no process is named '%s'", s->name, s->comm);
        if (n > 1)
            return hb_fail(err, -EEXIST,
                           "--service %s: %zd processes named '%s' (pids %d, %d...) are not "
                           "children of one another",
                           s->name, n, s->comm, (int)pid[0], (int)pid[1]);
        s->kind = SERVICE_TREE;
        s->pid = pid[0];
    }
    return 0;
}

int service_label_split(const char *arg, char *label, size_t cap, const char **rest,
                        struct hb_err *err)
{
    const char *eq = strchr(arg, '=');

    label[0] = '\0';
    *rest = arg;
    /* no label holds a ':': every endpoint's scheme does (tcp://, unix:, http://...?a=b) */
    if (eq == NULL || memchr(arg, ':', (size_t)(eq - arg)) != NULL) return 0;
    if (!name_valid_n(arg, (size_t)(eq - arg)) || (size_t)(eq - arg) >= cap)
        return hb_fail(err, -EINVAL,
                       "%s: a label (before '=') is 1 to %d letters, digits, '_', '-' or '.'", arg,
                       SERVICE_NAME_MAX - 1);
    memcpy(label, arg, (size_t)(eq - arg));
    label[eq - arg] = '\0';
    *rest = eq + 1;
    return 0;
}

int service_watch_add(struct service_set *set, const char *arg, struct hb_err *err)
{
    char label[SERVICE_NAME_MAX];
    const char *text;
    struct endpoint *ep;

    if (set->nwatch == SERVICE_MAX_WATCH)
        return hb_fail(err, -EINVAL, "--watch: at most %d hops", SERVICE_MAX_WATCH);
    if (service_label_split(arg, label, sizeof(label), &text, err) < 0) return -EINVAL;
    ep = &set->watch[set->nwatch];
    if (endpoint_parse(ep, text, err) < 0) return -EINVAL;
    if (ep->kind == ENDPOINT_TCP && endpoint_port(ep) == 0)
        return hb_fail(err, -EINVAL, "--watch %s: port 0 is no hop", arg);
    for (unsigned i = 0; i < set->nwatch; i++)
        if (strcmp(set->watch[i].text, ep->text) == 0)
            return hb_fail(err, -EINVAL, "--watch %s: watched twice", arg);
    snprintf(ep->label, sizeof(ep->label), "%s", label);
    set->nwatch++;
    return 0;
}

int service_labels_apply(struct endpoint *eps, unsigned neps, const char *const *labels,
                         unsigned nlabels, struct hb_err *err)
{
    if (nlabels > neps)
        return hb_fail(err, -EINVAL, "--label: %u labels for %u endpoints", nlabels, neps);
    for (unsigned i = 0; i < nlabels; i++) {
        if (!service_name_valid(labels[i]))
            return hb_fail(err, -EINVAL,
                           "--label %s: a label is 1 to %d letters, digits, '_', '-' or '.'",
                           labels[i], SERVICE_NAME_MAX - 1);
        if (eps[i].label[0] != '\0')
            return hb_fail(err, -EINVAL, "--label %s: %s is labelled '%s' already", labels[i],
                           eps[i].text, eps[i].label);
        snprintf(eps[i].label, sizeof(eps[i].label), "%s", labels[i]);
    }
    for (unsigned i = 0; i < neps; i++)
        for (unsigned j = 0; j < i; j++)
            if (eps[i].label[0] != '\0' && strcmp(eps[i].label, eps[j].label) == 0)
                return hb_fail(err, -EINVAL, "label '%s' is given to two endpoints", eps[i].label);
    return 0;
}
