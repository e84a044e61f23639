/*
 * The web server → PHP-FPM stacks' shared part: Debian's php-fpm (the newest
 * installed) running <?php echo "bench"; with two pools, one on its own TCP
 * port on 127.0.0.1 and one on its own Unix socket, behind a web front
 * (front.h: nginx, Apache, ...) with one port per backend, written from one
 * set of settings (struct fpm_knobs: a profile, or a case's step).
 *
 * As root, only the masters (nginx's, Apache's, php-fpm's: they bind and
 * fork) are root: every worker, which reads the requests, is www-data. Before
 * php-fpm starts, its workers must be able to reach the script and the
 * socket's directory; before measuring, one line each: the socket's owner and
 * mode let the web server's workers connect (else every request is a 502
 * "Permission denied"), and the FastCGI connections kept open fit
 * pm.max_children.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stack/fpm.h"
#include "stack/measure.h"
#include "stack/stack.h"
#include "stack/users.h"

#define WORKER_USER "www-data" /* the web servers' and the socket's user when hopbench is root */

const char *const fpm_profile_names[] = { "baseline", "optimized", "optimized-reuse", NULL };

enum fpm_profile fpm_profile_of(const struct stack_opts *o)
{
    for (unsigned i = 0; o->profile != NULL && fpm_profile_names[i] != NULL; i++)
        if (strcmp(o->profile, fpm_profile_names[i]) == 0) return (enum fpm_profile)i;
    return FPM_OPTIMIZED;
}

/* pm.max_children: the stock 5, else the pod study's pm static 16. */
unsigned fpm_children(enum fpm_profile p)
{
    return p == FPM_BASELINE ? 5 : FPM_STUDY_POOL;
}

void fpm_knobs_of(enum fpm_profile p, struct fpm_knobs *k)
{
    bool tuned = p != FPM_BASELINE;

    memset(k, 0, sizeof(*k));
    k->fpm_static = k->web_lean = k->php_ini = tuned;
    k->htaccess = !tuned;
    k->children = fpm_children(p);
    k->backlog = tuned ? 1024 : 0;
    /*
     * Kept connections: one per worker, as the pod study kept 16 for its 16
     * (each process its share; the bare hop is measured before the web
     * server starts, so it needs none of them).
     */
    if (p == FPM_REUSE) k->kept = k->children / WEB_PROCS > 0 ? k->children / WEB_PROCS : 1;
    k->keep_all = p == FPM_REUSE;
}

void fpm_knobs_fit(const struct web_front *w, struct fpm_knobs *k, unsigned conns)
{
    char how[160];

    if (k->web_workers < conns) k->web_workers = conns;
    if (k->kept == 0 || !k->keep_all || w->kept == NULL) return;
    unsigned kept = w->kept(k, conns, how, sizeof(how));
    if (k->children < kept) k->children = kept;
}

unsigned fpm_bare_kept(const struct fpm_knobs *k, unsigned conns)
{
    return conns < k->children ? conns : k->children;
}

/* One pool's settings, the same for both pools but for where it listens. */
static void fpm_pool(const struct front_site *s, const struct fpm_knobs *k, const char *name,
                     char *buf, size_t cap)
{
    size_t len;

    if (!k->fpm_static)
        len = (size_t)snprintf(buf, cap,
                               "pm = dynamic\npm.max_children = %u\npm.start_servers = %u\n"
                               "pm.min_spare_servers = 1\npm.max_spare_servers = %u\n"
                               "access.log = %s/fpm-access-%s.log\n",
                               k->children, k->children < 2 ? k->children : 2,
                               k->children < 3 ? k->children : 3, s->dir, name);
    else
        len = (size_t)snprintf(buf, cap, "pm = static\npm.max_children = %u\n", k->children);
    if (len < cap)
        len +=
            (size_t)snprintf(buf + len, cap - len, "pm.status_path = /status\nping.path = /ping\n");
    if (len < cap && k->backlog > 0)
        len += (size_t)snprintf(buf + len, cap - len, "listen.backlog = %u\n", k->backlog);
    if (len < cap && k->php_ini)
        snprintf(buf + len, cap - len,
                 "php_admin_value[opcache.validate_timestamps] = 0\n"
                 "php_admin_value[realpath_cache_size] = 4096K\n"
                 "php_admin_flag[expose_php] = off\n");
}

/*
 * php-fpm.conf (fpm.h): as root, the master alone stays root (it binds and forks);
 * each pool's workers, which read the requests, are the web server's user,
 * the socket is theirs (0660), and the TCP pool takes connections from
 * 127.0.0.1 only. FastCGI has no authentication: whoever reaches a pool runs
 * code as its workers (a script of its own, or PHP_VALUE's auto_prepend_file),
 * and every local user reaches 127.0.0.1, so the fpm stacks keep the port in
 * a network namespace of their own (stack_def.private_net, stack.c).
 */
int fpm_conf(const struct front_site *s, const struct fpm_knobs *k, char *conf, size_t cap)
{
    char owner[256] = "", who[128] = "", tcp[PATH_MAX + 512], ux[PATH_MAX + 512];
    int n;

    if (s->user != NULL) {
        snprintf(owner, sizeof(owner), "listen.owner = %s\nlisten.group = %s\nlisten.mode = 0660\n",
                 s->user, s->user);
        snprintf(who, sizeof(who), "user = %s\ngroup = %s\n", s->user, s->user);
    }
    fpm_pool(s, k, "tcp", tcp, sizeof(tcp));
    fpm_pool(s, k, "unix", ux, sizeof(ux));
    n = snprintf(conf, cap,
                 "[global]\npid = %s/fpm.pid\nerror_log = /proc/self/fd/2\ndaemonize = no\n"
                 "[tcp]\nlisten = 127.0.0.1:%u\nlisten.allowed_clients = 127.0.0.1\n%s%s"
                 "[unix]\nlisten = %s\n%s%s%s",
                 s->dir, s->fpm_port, who, tcp, s->sock, owner, who, ux);
    return n >= 0 && (size_t)n < cap ? 0 : -ENAMETOOLONG;
}

/* The FastCGI connections w keeps open per backend at most under k, how into how. */
static unsigned web_kept(const struct stack_ctx *c, const struct web_front *w,
                         const struct fpm_knobs *k, char *how, size_t cap)
{
    how[0] = '\0';
    return k->kept == 0 || w->kept == NULL ? 0 : w->kept(k, c->conns, how, cap);
}

/*
 * WordPress's .htaccess, which the baseline profile makes Apache read on every
 * request; the status page is kept from its catch-all rewrite.
 */
static const char wp_htaccess[] = "<IfModule mod_rewrite.c>\nRewriteEngine On\nRewriteBase /\n"
                                  "RewriteRule ^index\\.php$ - [L]\n"
                                  "RewriteCond %{REQUEST_URI} !=/server-status\n"
                                  "RewriteCond %{REQUEST_FILENAME} !-f\n"
                                  "RewriteCond %{REQUEST_FILENAME} !-d\n"
                                  "RewriteRule . /index.php [L]\n</IfModule>\n";

/*
 * Whether user w (name) may search every directory above path; else line
 * says which it may not. php-fpm's workers and the web server's are w: they
 * reach the script and the socket through them.
 */
static bool dirs_searchable(const struct users_id *w, const char *name, const char *path,
                            char *line, size_t cap)
{
    char dir[PATH_MAX];
    struct stat st;

    snprintf(dir, sizeof(dir), "%s", path);
    for (char *slash = strrchr(dir, '/'); slash && slash != dir; slash = strrchr(dir, '/')) {
        *slash = '\0';
        if (stat(dir, &st) == -1 || !users_may(w, &st, 1)) {
            snprintf(line, cap,
                     "php-fpm's and the web server's workers (%s) cannot reach %.200s: no search "
                     "permission on %.200s",
                     name, path, dir);
            return false;
        }
    }
    return true;
}

/* The workers' user: www-data as root, else hopbench's own. */
static void worker_user(char *user, size_t cap)
{
    snprintf(user, cap, "%s", WORKER_USER);
    if (geteuid() != 0 && users_name_of_uid(USERS_PASSWD, geteuid(), user, cap) < 0)
        snprintf(user, cap, "?");
}

/*
 * Whether user `name` (the workers) may reach the socket at path
 * (dirs_searchable) and connect to it: write permission on the socket. line
 * gets the check's one line either way.
 */
static bool sock_usable(const char *path, const char *name, char *line, size_t cap)
{
    struct users_id w;
    char owner[64] = "?", group[64] = "?";
    struct stat st;

    if (users_lookup(USERS_PASSWD, USERS_GROUP, name, &w) < 0) {
        snprintf(line, cap, "there is no user %s for the web server's workers", name);
        return false;
    }
    if (!dirs_searchable(&w, name, path, line, cap)) return false;
    if (stat(path, &st) == -1 || !users_may(&w, &st, 2)) {
        snprintf(line, cap,
                 "the web server's workers (%s) cannot connect to %.200s: no write "
                 "permission (a 502 \"Permission denied\" for every request)",
                 name, path);
        return false;
    }
    users_name_of_uid(USERS_PASSWD, st.st_uid, owner, sizeof(owner));
    users_name_of_gid(USERS_GROUP, st.st_gid, group, sizeof(group));
    snprintf(line, cap,
             "check: the socket %.200s is %s:%s %04o: the web server's workers (%s) can "
             "connect",
             path, owner, group, (unsigned)(st.st_mode & 07777), name);
    return true;
}

/*
 * Before php-fpm starts: its workers (the web server's user) may search the
 * directories of the socket and the script, else one line says which not.
 */
static int fpm_reach(const struct fpm_eps *e, struct hb_err *err)
{
    char user[64], line[PATH_MAX + 256];
    struct users_id w;

    worker_user(user, sizeof(user));
    if (users_lookup(USERS_PASSWD, USERS_GROUP, user, &w) < 0)
        return hb_fail(err, -EACCES, "there is no user %s for the web server's workers", user);
    if (!dirs_searchable(&w, user, e->sock, line, sizeof(line)) ||
        !dirs_searchable(&w, user, e->script, line, sizeof(line)))
        return hb_fail(err, -EACCES, "%.240s", line);
    return 0;
}

/* Three distinct free ports: the two web server fronts and FPM's TCP pool. */
static int fpm_ports(unsigned front[2], unsigned *fpm, struct hb_err *err)
{
    unsigned p[3];

    for (unsigned i = 0; i < 3; i++) {
        int rc;
        do {
            rc = stack_free_port(&p[i], err);
        } while (rc == 0 && ((i > 0 && p[i] == p[0]) || (i > 1 && p[i] == p[1])));
        if (rc < 0) return rc;
    }
    front[0] = p[0];
    front[1] = p[1];
    *fpm = p[2];
    return 0;
}

/* The docroot with bench.php; the private directory searchable by the web server's workers. */
static int fpm_files(struct stack_ctx *c, const struct fpm_knobs *k, struct hb_err *err)
{
    char www[PATH_MAX];

    /* 0711: the workers (www-data) may reach the socket and the script, not list the directory */
    if (chmod(c->sup.dir, 0711) == -1)
        return hb_fail(err, -errno, "chmod %s: %s", c->sup.dir, strerror(errno));
    sup_path(&c->sup, "www", www, sizeof(www));
    if (mkdir(www, 0755) == -1 || chmod(www, 0755) == -1) /* whatever the umask */
        return hb_fail(err, -errno, "mkdir %s: %s", www, strerror(errno));
    int rc = sup_write(&c->sup, "www/bench.php", "<?php echo \"bench\";\n", err);
    if (rc == 0 && k->htaccess) rc = sup_write(&c->sup, "www/.htaccess", wp_htaccess, err);
    return rc;
}

static int fpm_start(struct stack_ctx *c, const struct front_site *s, const struct fpm_knobs *k,
                     struct hb_err *err)
{
    char conf[PATH_MAX], bin[PATH_MAX], text[4 * PATH_MAX + 2048];
    int rc = sup_need(FPM_BINARY, FPM_PACKAGE, bin, sizeof(bin), err);

    if (rc == 0 && fpm_conf(s, k, text, sizeof(text)) < 0)
        rc = hb_fail(err, -ENAMETOOLONG, "php-fpm.conf: paths too long");
    if (rc == 0) rc = sup_write(&c->sup, "php-fpm.conf", text, err);
    if (rc < 0) return rc;
    sup_path(&c->sup, "php-fpm.conf", conf, sizeof(conf));
    /* no -R: its workers are never root (fpm_conf) */
    const char *argv[] = { bin, "-y", conf, "-F", NULL };
    struct sup_spec spec = { .name = "php-fpm", .argv = argv };
    return sup_start(&c->sup, &spec, err);
}

/* w's argument word: "{conf}" and "{dir}" replaced by the paths. */
static void web_arg(const char *word, const char *conf, const char *dir, char *buf, size_t cap)
{
    const char *at = strchr(word, '{');

    if (at != NULL && strncmp(at, "{conf}", 6) == 0)
        snprintf(buf, cap, "%.*s%s%s", (int)(at - word), word, conf, at + 6);
    else if (at != NULL && strncmp(at, "{dir}", 5) == 0)
        snprintf(buf, cap, "%.*s%s%s", (int)(at - word), word, dir, at + 5);
    else
        snprintf(buf, cap, "%s", word);
}

/* w's configuration of k at site s, written into the private directory. */
static int web_conf(struct stack_ctx *c, const struct web_front *w, const struct front_site *s,
                    const struct fpm_knobs *k, struct hb_err *err)
{
    char *conf = malloc(FRONT_CONF_MAX);
    int rc;

    if (conf == NULL) return hb_fail(err, -ENOMEM, "%s: out of memory", w->conf_file);
    rc = w->conf(s, k, conf, FRONT_CONF_MAX);
    if (rc < 0)
        rc = hb_fail(err, rc, "%s: paths too long", w->conf_file);
    else
        rc = sup_write(&c->sup, w->conf_file, conf, err);
    free(conf);
    return rc;
}

/* The files w opens as its workers' user (web_front.worker_files): made, empty, theirs. */
static int web_files(struct stack_ctx *c, const struct web_front *w, const struct front_site *s,
                     const struct fpm_knobs *k, struct hb_err *err)
{
    const char *names[FRONT_MAX_ARGS];
    unsigned n = w->worker_files != NULL ? w->worker_files(k, names) : 0;
    char path[PATH_MAX];
    struct users_id id;

    if (n > 0 && s->user != NULL && users_lookup(USERS_PASSWD, USERS_GROUP, s->user, &id) < 0)
        return hb_fail(err, -EACCES, "there is no user %s for the web server's workers", s->user);
    for (unsigned i = 0; i < n && i < FRONT_MAX_ARGS; i++) {
        int rc = sup_write(&c->sup, names[i], "", err);
        if (rc < 0) return rc;
        sup_path(&c->sup, names[i], path, sizeof(path));
        if (s->user != NULL && chown(path, id.uid, id.gid) == -1)
            return hb_fail(err, -errno, "chown %s: %s", path, strerror(errno));
    }
    return 0;
}

static int web_start(struct stack_ctx *c, const struct web_front *w, const struct front_site *s,
                     const struct fpm_knobs *k, struct hb_err *err)
{
    static char words[FRONT_MAX_ARGS + 1][PATH_MAX + 16];
    const char *argv[FRONT_MAX_ARGS + 2] = { words[0] };
    char conf[PATH_MAX];
    unsigned n = 1;
    int rc = sup_need(w->binary, w->package, words[0], sizeof(words[0]), err);

    if (rc == 0) rc = web_conf(c, w, s, k, err);
    if (rc == 0) rc = web_files(c, w, s, k, err);
    if (rc < 0) return rc;
    sup_path(&c->sup, w->conf_file, conf, sizeof(conf));
    for (unsigned i = 0; i < FRONT_MAX_ARGS && w->args[i] != NULL; i++, n++) {
        web_arg(w->args[i], conf, c->sup.dir, words[n], sizeof(words[n]));
        argv[n] = words[n];
    }
    argv[n] = NULL;
    struct sup_spec spec = { .name = w->name, .argv = argv };
    return sup_start(&c->sup, &spec, err);
}

/* A FastCGI or HTTP request for bench.php that a ready service answers with "bench". */
static int fpm_check(struct sup_check *k, const char *svc, const char *proto, const char *ep,
                     const char *script, const char *docroot, struct hb_err *err)
{
    memset(k, 0, sizeof(*k));
    k->svc = svc;
    k->proto = proto;
    if (strcmp(proto, "http") == 0) {
        k->opts.http.path = "/bench.php";
        k->opts.http.expect_body = "bench";
    } else {
        k->opts.fcgi.path = "/bench.php";
        k->opts.fcgi.script = script;
        k->opts.fcgi.docroot = docroot;
        k->opts.fcgi.expect_body = "bench";
    }
    return endpoint_parse(&k->ep, ep, err);
}

/* Waits for php-fpm's two pools (w NULL) or for the web server's two fronts to answer. */
static int fpm_ready(struct stack_ctx *c, const struct web_front *w, const struct fpm_eps *e,
                     struct hb_err *err)
{
    struct sup_check k[2];
    int rc = 0;

    for (unsigned i = 0; i < 2 && rc == 0; i++)
        rc = w == NULL ? fpm_check(&k[i], "php-fpm", "fcgi", e->fpm[i], e->script, e->docroot, err)
                       : fpm_check(&k[i], w->name, "http", e->front[i], NULL, NULL, err);
    if (rc == 0) rc = sup_wait_ready(&c->sup, k, 2, 15 * NS_PER_S, c->stop, err);
    return rc;
}

/*
 * The set-up checks of the study's pitfalls, one line each; an error when one
 * fails: the workers may connect to the socket, and the FastCGI connections
 * the web server keeps fit pm.max_children (each holds a worker while open).
 * starve: more kept connections than the pool are the case measured, let
 * through with a warning line. Clients that outnumber the kept connections
 * are said so: their requests queue for one inside the web server.
 */
static int fpm_pitfalls(struct stack_ctx *c, const struct web_front *w, const struct fpm_knobs *k,
                        const struct fpm_eps *e, bool starve, struct hb_err *err)
{
    char line[PATH_MAX + 256], how[160], user[64];
    unsigned kids = k->children, web = web_kept(c, w, k, how, sizeof(how));

    worker_user(user, sizeof(user));
    if (!sock_usable(e->sock, user, line, sizeof(line)))
        return hb_fail(err, -EACCES, "%.240s", line);
    fprintf(c->out, "%s\n", line);
    if (web > kids && starve) {
        fprintf(c->out,
                "warning: the starvation case, deliberately: the web server may keep %s = %u "
                "FastCGI connections per backend for pm.max_children %u\n",
                how, web, kids);
        return 0;
    }
    if (web > kids)
        return hb_fail(err, -EINVAL,
                       "the web server would keep %s = %u FastCGI connections per backend, more "
                       "than pm.max_children %u: the pool would starve",
                       how, web, kids);
    if (web == 0) {
        fprintf(c->out,
                "check: the web server opens a FastCGI connection per request (none "
                "kept): each waits for one of pm.max_children %u per pool\n",
                kids);
        return 0;
    }
    fprintf(c->out,
            "check: the web server keeps at most %s = %u FastCGI connections per backend, "
            "each holding one of pm.max_children %u: no starvation\n",
            how, web, kids);
    if (c->conns > web)
        fprintf(c->out,
                "check: clients outnumber kept connections: %u client connection(s) share the %u "
                "kept FastCGI connections per backend; the web server's requests beyond them "
                "wait for a free one\n",
                c->conns, web);
    return 0;
}

/* The run child's arguments for the http load in front or the fcgi hop alone. */
static void fpm_args(struct stack_args *a, const struct fpm_eps *e, bool front)
{
    stack_arg(a, "hopbench");
    stack_arg(a, "run");
    stack_arg(a, front ? "http" : "fcgi");
    stack_arg(a, "%s", front ? e->front[0] : e->fpm[0]);
    stack_arg(a, "%s", front ? e->front[1] : e->fpm[1]);
    stack_arg(a, "--path");
    stack_arg(a, "/bench.php");
    stack_arg(a, "--expect-body");
    stack_arg(a, "bench");
    if (front) return;
    stack_arg(a, "--script");
    stack_arg(a, "%s", e->script);
    stack_arg(a, "--docroot");
    stack_arg(a, "%s", e->docroot);
}

void fpm_observe_args(struct stack_ctx *c, const struct web_front *w, const struct fpm_eps *e,
                      struct stack_args *a)
{
    const char *const names[] = { w->name, "php-fpm", NULL };

    stack_services(c, a, names);
    /* --netns other: the client in B cannot see A's sockets (sock_diag is per namespace) */
    if (c->netns.mode == NETNS_OTHER) return;
    stack_arg(a, "--watch");
    stack_arg(a, "backend-tcp=%s", e->fpm[0]);
    stack_arg(a, "--watch");
    stack_arg(a, "backend-unix=%s", e->fpm[1]);
}

void fpm_front_args(struct stack_ctx *c, const struct web_front *w, const struct fpm_eps *e,
                    struct stack_args *a)
{
    fpm_args(a, e, true);
    fpm_observe_args(c, w, e, a);
}

void fpm_bare_args(struct stack_ctx *c, const struct fpm_eps *e, struct stack_args *a)
{
    static const char *const bare[] = { "php-fpm", NULL };

    fpm_args(a, e, false);
    stack_services(c, a, bare);
}

/* Where the stack's configurations put things, from its endpoints. */
static struct front_site fpm_site(const struct stack_ctx *c, const struct fpm_eps *e)
{
    return (struct front_site){ .dir = c->sup.dir,
                                .host = c->front_host,
                                .port = { e->front_port[0], e->front_port[1] },
                                .fpm_port = e->fpm_port,
                                .sock = e->sock,
                                .user = geteuid() == 0 ? WORKER_USER : NULL,
                                .conns = c->conns };
}

int fpm_up(struct stack_ctx *c, const struct web_front *w, const struct fpm_knobs *k, bool starve,
           struct fpm_eps *e, struct hb_err *err)
{
    unsigned front[2] = { 0, 0 }, port = 0;
    int rc = fpm_ports(front, &port, err);
    struct front_site s;

    memset(e, 0, sizeof(*e));
    if (rc == 0) rc = fpm_files(c, k, err);
    if (rc < 0) return rc;
    e->fpm_port = port;
    e->front_port[0] = front[0];
    e->front_port[1] = front[1];
    sup_path(&c->sup, "fpm.sock", e->sock, sizeof(e->sock));
    sup_path(&c->sup, "www/bench.php", e->script, sizeof(e->script));
    sup_path(&c->sup, "www", e->docroot, sizeof(e->docroot));
    for (unsigned i = 0; i < 2; i++)
        snprintf(e->front[i], sizeof(e->front[i]), "tcp://%s:%u", c->front_host, front[i]);
    snprintf(e->fpm[0], sizeof(e->fpm[0]), "tcp://127.0.0.1:%u", port);
    snprintf(e->fpm[1], sizeof(e->fpm[1]), "unix:%s", e->sock);
    s = fpm_site(c, e);
    /* The set-up checks come before the web server: a socket it cannot use is named, not 502s. */
    rc = fpm_reach(e, err);
    if (rc == 0) rc = fpm_start(c, &s, k, err);
    if (rc == 0) rc = fpm_ready(c, NULL, e, err);
    if (rc == 0) rc = fpm_pitfalls(c, w, k, e, starve, err);
    return rc;
}

int fpm_front_up(struct stack_ctx *c, const struct web_front *w, const struct fpm_knobs *k,
                 const struct fpm_eps *e, struct hb_err *err)
{
    struct front_site s = fpm_site(c, e);
    int rc = web_start(c, w, &s, k, err);

    if (rc == 0) rc = fpm_ready(c, w, e, err);
    return rc;
}

int fpm_build(struct stack_ctx *c, const struct web_front *w, enum fpm_profile p,
              struct fpm_knobs *k, struct fpm_eps *e, struct hb_err *err)
{
    int rc;

    fpm_knobs_of(p, k);
    fpm_knobs_fit(w, k, c->conns);
    rc = fpm_up(c, w, k, false, e, err);
    if (rc == 0) rc = fpm_front_up(c, w, k, e, err);
    return rc;
}
