/*
 * The web server → PHP-FPM stacks, profile "optimized": Debian's php8.2-fpm
 * running <?php echo "bench"; with two pools, one on its own TCP port on
 * 127.0.0.1 and one on its own Unix socket (pm static, no access log,
 * opcache.validate_timestamps=0), behind nginx or Apache 2.4 (mpm_event,
 * mod_proxy_fcgi) with one port per backend, a new FastCGI connection per
 * request, no access log. Measured: hopbench http keep-alive load on the web
 * server (the web server's CPU from its cgroup, FPM's from its process tree),
 * then hopbench fcgi straight to FPM, the bare hop.
 *
 * Before measuring, one line each: the socket's owner and mode let the web
 * server's workers connect (else every request is a 502 "Permission
 * denied"), and the FastCGI connections kept open fit pm.max_children.
 */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stack/measure.h"
#include "stack/stack.h"

#define PHP_FPM     "/usr/sbin/php-fpm8.2"
#define NGINX       "/usr/sbin/nginx"
#define APACHE      "/usr/sbin/apache2"
#define APACHE_MODS "/usr/lib/apache2/modules"
#define WORKER_USER "www-data" /* the web servers' and the socket's user when hopbench is root */

/* What differs between the two web servers. */
struct web {
    const char *name; /* the service's name: "nginx", "apache" */
    const char *binary;
    int (*conf)(struct stack_ctx *c, const struct web *w, unsigned front[2], unsigned fpm_port,
                const char *sock, struct hb_err *err);
    const char *status; /* its request-count page */
};

/* The pool size: pm static, twice the CPUs hopbench may use, at least 4. */
static unsigned fpm_children(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);

    return n >= 2 ? (unsigned)n * 2 : 4;
}

static int fpm_conf(struct stack_ctx *c, unsigned port, const char *sock, struct hb_err *err)
{
    char conf[4 * PATH_MAX + 2048], owner[256] = "";
    const char *d = c->sup.dir;
    unsigned kids = fpm_children();

    if (geteuid() == 0)
        snprintf(owner, sizeof(owner), "listen.owner = %s\nlisten.group = %s\nlisten.mode = 0660\n",
                 WORKER_USER, WORKER_USER);
    /* The same pool twice, but for where it listens. */
    char pool[512];
    snprintf(pool, sizeof(pool),
             "pm = static\n"
             "pm.max_children = %u\n"
             "pm.status_path = /status\n"
             "ping.path = /ping\n"
             "listen.backlog = 1024\n"
             "php_admin_value[opcache.validate_timestamps] = 0\n"
             "php_admin_flag[expose_php] = off\n",
             kids);
    snprintf(conf, sizeof(conf),
             "[global]\npid = %s/fpm.pid\nerror_log = /proc/self/fd/2\ndaemonize = no\n"
             "[tcp]\nlisten = 127.0.0.1:%u\n%s"
             "[unix]\nlisten = %s\n%s%s",
             d, port, pool, sock, owner, pool);
    return sup_write(&c->sup, "php-fpm.conf", conf, err);
}

static int nginx_conf(struct stack_ctx *c, const struct web *w, unsigned front[2],
                      unsigned fpm_port, const char *sock, struct hb_err *err)
{
    char conf[8 * PATH_MAX + 2048], user[64] = "", backend[2][PATH_MAX + 16];
    const char *d = c->sup.dir;
    size_t len = 0;

    (void)w;
    if (geteuid() == 0) snprintf(user, sizeof(user), "user %s;\n", WORKER_USER);
    snprintf(backend[0], sizeof(backend[0]), "127.0.0.1:%u", fpm_port);
    snprintf(backend[1], sizeof(backend[1]), "unix:%s", sock);
    len += (size_t)snprintf(conf + len, sizeof(conf) - len,
                            "%sdaemon off;\nworker_processes 1;\npid %s/nginx.pid;\n"
                            "error_log stderr warn;\nevents { worker_connections 1024; }\n"
                            "http {\n  access_log off;\n  keepalive_requests 1000000;\n"
                            "  client_body_temp_path %s/nginx-body;\n"
                            "  proxy_temp_path %s/nginx-proxy;\n"
                            "  fastcgi_temp_path %s/nginx-fastcgi;\n"
                            "  uwsgi_temp_path %s/nginx-uwsgi;\n  scgi_temp_path %s/nginx-scgi;\n",
                            user, d, d, d, d, d, d);
    for (unsigned i = 0; i < 2 && len < sizeof(conf); i++)
        len += (size_t)snprintf(
            conf + len, sizeof(conf) - len,
            "  server {\n    listen 127.0.0.1:%u;\n"
            "    location = /nginx_status { stub_status; }\n"
            "    location = /bench.php {\n      include /etc/nginx/fastcgi_params;\n"
            "      fastcgi_param SCRIPT_FILENAME %s/www/bench.php;\n"
            "      fastcgi_pass %s;\n    }\n  }\n",
            front[i], d, backend[i]);
    if (len < sizeof(conf)) snprintf(conf + len, sizeof(conf) - len, "}\n");
    if (len >= sizeof(conf)) return hb_fail(err, -ENAMETOOLONG, "nginx.conf: paths too long");
    return sup_write(&c->sup, "nginx.conf", conf, err);
}

static int apache_conf(struct stack_ctx *c, const struct web *w, unsigned front[2],
                       unsigned fpm_port, const char *sock, struct hb_err *err)
{
    char conf[8 * PATH_MAX + 4096], user[96] = "";
    const char *d = c->sup.dir;
    int n;

    (void)w;
    if (geteuid() == 0)
        snprintf(user, sizeof(user), "User %s\nGroup %s\n", WORKER_USER, WORKER_USER);
    n = snprintf(
        conf, sizeof(conf),
        "ServerRoot %s\nServerName localhost\nPidFile %s/apache.pid\nDefaultRuntimeDir %s\n"
        "Mutex file:%s default\nErrorLog /proc/self/fd/2\nLogLevel warn\n%s"
        "LoadModule mpm_event_module " APACHE_MODS "/mod_mpm_event.so\n"
        "LoadModule authz_core_module " APACHE_MODS "/mod_authz_core.so\n"
        "LoadModule proxy_module " APACHE_MODS "/mod_proxy.so\n"
        "LoadModule proxy_fcgi_module " APACHE_MODS "/mod_proxy_fcgi.so\n"
        "LoadModule status_module " APACHE_MODS "/mod_status.so\n"
        "Listen 127.0.0.1:%u\nListen 127.0.0.1:%u\n"
        "KeepAlive On\nMaxKeepAliveRequests 0\nKeepAliveTimeout 5\n"
        "ServerLimit 2\nStartServers 2\nThreadsPerChild 32\nMaxRequestWorkers 64\n"
        "MinSpareThreads 32\nMaxSpareThreads 96\nExtendedStatus On\n"
        "DocumentRoot %s/www\n<Directory />\n  AllowOverride None\n  Require all granted\n"
        "</Directory>\n<Location /server-status>\n  SetHandler server-status\n</Location>\n"
        "<VirtualHost 127.0.0.1:%u>\n  <FilesMatch \"\\.php$\">\n"
        "    SetHandler \"proxy:fcgi://127.0.0.1:%u\"\n  </FilesMatch>\n</VirtualHost>\n"
        "<VirtualHost 127.0.0.1:%u>\n  <FilesMatch \"\\.php$\">\n"
        "    SetHandler \"proxy:unix:%s|fcgi://localhost\"\n  </FilesMatch>\n</VirtualHost>\n",
        d, d, d, d, user, front[0], front[1], d, front[0], fpm_port, front[1], sock);
    if (n < 0 || (size_t)n >= sizeof(conf))
        return hb_fail(err, -ENAMETOOLONG, "apache2.conf: paths too long");
    return sup_write(&c->sup, "apache2.conf", conf, err);
}

static bool in_groups(gid_t g, gid_t gid, const gid_t *groups, int n)
{
    if (g == gid) return true;
    for (int i = 0; i < n; i++)
        if (groups[i] == g) return true;
    return false;
}

/* The identity the kernel checks a path's permissions against. */
struct who {
    uid_t uid;
    gid_t gid;
    gid_t groups[64];
    int ngroups;
};

/* Whether w has permission bit (1 search, 2 write) on st: user, group or other bits. */
static bool may(const struct who *w, const struct stat *st, unsigned bit)
{
    unsigned mode = (unsigned)st->st_mode;

    if (w->uid == 0) return true;
    if (st->st_uid == w->uid) return (mode & (bit << 6)) != 0;
    if (in_groups(st->st_gid, w->gid, w->groups, w->ngroups)) return (mode & (bit << 3)) != 0;
    return (mode & bit) != 0;
}

/*
 * Whether user `name` (the web server's workers) may connect to the socket at
 * path: search permission on every directory above it and write permission
 * on the socket. line gets the check's one line either way.
 */
static bool sock_usable(const char *path, const char *name, char *line, size_t cap)
{
    struct passwd *pw = getpwnam(name);
    struct who w = { .ngroups = 64 };
    char dir[PATH_MAX];
    struct stat st;

    if (pw == NULL) {
        snprintf(line, cap, "there is no user %s for the web server's workers", name);
        return false;
    }
    w.uid = pw->pw_uid;
    w.gid = pw->pw_gid;
    if (getgrouplist(pw->pw_name, w.gid, w.groups, &w.ngroups) == -1) w.ngroups = 0;
    snprintf(dir, sizeof(dir), "%s", path);
    for (char *slash = strrchr(dir, '/'); slash && slash != dir; slash = strrchr(dir, '/')) {
        *slash = '\0';
        if (stat(dir, &st) == -1 || !may(&w, &st, 1)) {
            snprintf(line, cap,
                     "the web server's workers (%s) cannot reach %s: no search "
                     "permission on %s",
                     name, path, dir);
            return false;
        }
    }
    if (stat(path, &st) == -1 || !may(&w, &st, 2)) {
        snprintf(line, cap,
                 "the web server's workers (%s) cannot connect to %s: no write "
                 "permission (a 502 \"Permission denied\" for every request)",
                 name, path);
        return false;
    }
    struct passwd *o = getpwuid(st.st_uid);
    struct group *g = getgrgid(st.st_gid);
    snprintf(line, cap,
             "check: the socket %s is %s:%s %04o: the web server's workers (%s) can "
             "connect",
             path, o ? o->pw_name : "?", g ? g->gr_name : "?", (unsigned)(st.st_mode & 07777),
             name);
    return true;
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
static int fpm_files(struct stack_ctx *c, struct hb_err *err)
{
    char www[PATH_MAX];

    /* 0711: the workers (www-data) may reach the socket and the script, not list the directory */
    if (chmod(c->sup.dir, 0711) == -1)
        return hb_fail(err, -errno, "chmod %s: %s", c->sup.dir, strerror(errno));
    sup_path(&c->sup, "www", www, sizeof(www));
    if (mkdir(www, 0755) == -1) return hb_fail(err, -errno, "mkdir %s: %s", www, strerror(errno));
    return sup_write(&c->sup, "www/bench.php", "<?php echo \"bench\";\n", err);
}

static int fpm_start(struct stack_ctx *c, unsigned port, const char *sock, struct hb_err *err)
{
    char conf[PATH_MAX];
    int rc = fpm_conf(c, port, sock, err);

    if (rc < 0) return rc;
    sup_path(&c->sup, "php-fpm.conf", conf, sizeof(conf));
    /* -R: as root, the pools may run as root (the web server's workers are www-data) */
    const char *argv[] = { PHP_FPM, "-y", conf, "-F", geteuid() == 0 ? "-R" : NULL, NULL };
    struct sup_spec spec = { .name = "php-fpm", .argv = argv };
    return sup_start(&c->sup, &spec, err);
}

static int web_start(struct stack_ctx *c, const struct web *w, unsigned front[2], unsigned fpm,
                     const char *sock, struct hb_err *err)
{
    char conf[PATH_MAX], prefix[PATH_MAX + 2];
    int rc = w->conf(c, w, front, fpm, sock, err);
    bool nginx = strcmp(w->name, "nginx") == 0;

    if (rc < 0) return rc;
    sup_path(&c->sup, nginx ? "nginx.conf" : "apache2.conf", conf, sizeof(conf));
    snprintf(prefix, sizeof(prefix), "%s/", c->sup.dir);
    const char *nginx_argv[] = { NGINX, "-c", conf, "-p", prefix, "-e", "stderr", NULL };
    const char *apache_argv[] = { APACHE, "-f", conf, "-DFOREGROUND", NULL };
    struct sup_spec spec = { .name = w->name, .argv = nginx ? nginx_argv : apache_argv };
    return sup_start(&c->sup, &spec, err);
}

/* A FastCGI or HTTP request for bench.php that a ready service answers with "bench". */
static int fpm_check(struct sup_check *k, const char *svc, const char *proto, const char *ep,
                     const char *script, const char *docroot, struct hb_err *err)
{
    memset(k, 0, sizeof(*k));
    k->svc = svc;
    k->proto = proto;
    k->opts.path = "/bench.php";
    k->opts.script = script;
    k->opts.docroot = docroot;
    k->opts.expect_body = "bench";
    return endpoint_parse(&k->ep, ep, err);
}

/* The stack's endpoints: the two fronts, FPM's port and socket; script and docroot paths. */
struct fpm_eps {
    char front[2][64];
    char fpm[2][PATH_MAX + 8];
    char sock[PATH_MAX];
    char script[PATH_MAX];
    char docroot[PATH_MAX];
};

static int fpm_ready(struct stack_ctx *c, const struct web *w, const struct fpm_eps *e,
                     struct hb_err *err)
{
    struct sup_check k[4];
    int rc = 0;

    for (unsigned i = 0; i < 2 && rc == 0; i++)
        rc = fpm_check(&k[i], "php-fpm", "fcgi", e->fpm[i], e->script, e->docroot, err);
    for (unsigned i = 0; i < 2 && rc == 0; i++)
        rc = fpm_check(&k[2 + i], w->name, "http", e->front[i], NULL, NULL, err);
    if (rc == 0) rc = sup_wait_ready(&c->sup, k, 4, 15 * NS_PER_S, c->stop, err);
    return rc;
}

/* The set-up checks of the study's pitfalls, one line each; an error when one fails. */
static int fpm_pitfalls(struct stack_ctx *c, const struct fpm_eps *e, struct hb_err *err)
{
    char line[PATH_MAX + 256];
    const char *user = WORKER_USER;
    struct passwd *me = getpwuid(geteuid());
    unsigned kids = fpm_children();

    if (geteuid() != 0) user = me ? me->pw_name : "?"; /* not root: the workers are us */
    if (!sock_usable(e->sock, user, line, sizeof(line)))
        return hb_fail(err, -EACCES, "%.240s", line);
    fprintf(c->out, "%s\n", line);
    if (c->conns > kids)
        return hb_fail(err, -EINVAL,
                       "the bare FastCGI hop would keep %u connections open, more than "
                       "pm.max_children %u: the pool would starve (use -c %u or less)",
                       c->conns, kids, kids);
    fprintf(c->out,
            "check: the web server opens a FastCGI connection per request (none kept); the bare "
            "hop keeps %u, pm.max_children is %u per pool: no starvation\n",
            c->conns, kids);
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

static int fpm_measure(struct stack_ctx *c, const struct web *w, const struct fpm_eps *e,
                       struct hb_err *err)
{
    struct sup_svc *web = sup_find(&c->sup, w->name), *fpm = sup_find(&c->sup, "php-fpm");
    struct stack_cell front, hop;
    struct stack_args a = { .n = 0 };
    char label[48];
    int rc = 0;

    snprintf(label, sizeof(label), "%s->fpm", w->name);
    stack_cell_init(&front, label, "tcp", "unix");
    stack_cell_init(&hop, "fcgi->fpm", "tcp", "unix");
    fpm_args(&a, e, true);
    stack_arg(&a, "--server-cgroup");
    stack_arg(&a, "%s", sup_cgroup_cpu(web));
    stack_arg(&a, "--server-pid");
    stack_arg(&a, "%ld", (long)fpm->pid);
    stack_arg(&a, "--server-tree");
    fprintf(c->out, "measuring http keep-alive -> %s -> php-fpm, backend tcp and unix ...\n",
            w->name);
    fflush(c->out);
    rc = stack_measure(c, &a, &front, err);
    if (rc == 0) rc = sup_alive(&c->sup, err);
    if (rc == 0 && !stack_stopping(c)) {
        struct stack_args b = { .n = 0 };
        fpm_args(&b, e, false);
        stack_arg(&b, "--server-cgroup");
        stack_arg(&b, "%s", sup_cgroup_cpu(fpm));
        fprintf(c->out, "measuring fcgi -> php-fpm (the bare hop), tcp and unix ...\n");
        fflush(c->out);
        rc = stack_measure(c, &b, &hop, err);
        if (rc == 0) rc = sup_alive(&c->sup, err);
    }
    if (front.arm[0].n + front.arm[1].n > 0) stack_table(c->out, w->name, "php-fpm", &front, 1);
    if (hop.arm[0].n + hop.arm[1].n > 0) stack_table(c->out, "php-fpm", NULL, &hop, 1);
    return rc;
}

static int fpm_stack(struct stack_ctx *c, const struct web *w, struct hb_err *err)
{
    static struct fpm_eps e;
    unsigned front[2], port;
    int rc = fpm_ports(front, &port, err);

    memset(&e, 0, sizeof(e));
    if (rc == 0) rc = fpm_files(c, err);
    if (rc < 0) return rc;
    sup_path(&c->sup, "fpm.sock", e.sock, sizeof(e.sock));
    sup_path(&c->sup, "www/bench.php", e.script, sizeof(e.script));
    sup_path(&c->sup, "www", e.docroot, sizeof(e.docroot));
    for (unsigned i = 0; i < 2; i++)
        snprintf(e.front[i], sizeof(e.front[i]), "tcp://127.0.0.1:%u", front[i]);
    snprintf(e.fpm[0], sizeof(e.fpm[0]), "tcp://127.0.0.1:%u", port);
    snprintf(e.fpm[1], sizeof(e.fpm[1]), "unix:%s", e.sock);
    rc = fpm_start(c, port, e.sock, err);
    if (rc == 0) rc = web_start(c, w, front, port, e.sock, err);
    if (rc == 0) rc = fpm_ready(c, w, &e, err);
    if (rc == -EINTR) {
        c->interrupted = true;
        return 0;
    }
    if (rc < 0) return rc;
    struct sup_svc *web = sup_find(&c->sup, w->name), *fpm = sup_find(&c->sup, "php-fpm");
    fprintf(c->out,
            "hopbench stack %s-fpm (profile optimized): %s pid %ld on %s (backend tcp) and %s "
            "(backend unix); php-fpm pid %ld on %s and %s, pm static %u per pool\n"
            "cgroup: %s\ncgroup: %s\n"
            "runs: tcp and unix %u times each in ABBA order, %.2f s after %.2f s warm-up, "
            "%u connection(s); status: %s\n",
            w->name, w->name, (long)web->pid, e.front[0], e.front[1], (long)fpm->pid, e.fpm[0],
            e.fpm[1], fpm_children(), sup_cgroup_cpu(web), sup_cgroup_cpu(fpm), c->reps,
            (double)c->duration_ns / 1e9, (double)c->warmup_ns / 1e9, c->conns, w->status);
    rc = fpm_pitfalls(c, &e, err);
    if (rc == 0) rc = fpm_measure(c, w, &e, err);
    return rc;
}

static const struct web web_nginx = { "nginx", NGINX, nginx_conf, "/nginx_status" };
static const struct web web_apache = { "apache", APACHE, apache_conf, "/server-status?auto" };

static int nginx_run(struct stack_ctx *c, struct hb_err *err)
{
    return fpm_stack(c, &web_nginx, err);
}

static int apache_run(struct stack_ctx *c, struct hb_err *err)
{
    return fpm_stack(c, &web_apache, err);
}

#define FPM_HELP(WEB, PKG, WHAT)                                                                   \
    "usage: hopbench stack " WEB "-fpm [--short] [--reps N] [-d S] [--warmup S] [-c N]\n"          \
    "                              [--jsonl FILE] [--hold]\n"                                      \
    "\n"                                                                                           \
    "Builds (profile optimized): Debian's php8.2-fpm running <?php echo \"bench\"; with two\n"     \
    "pools, one on its own port on 127.0.0.1 and one on its own Unix socket (pm static,\n"         \
    "2 children per CPU, no access log, opcache.validate_timestamps=0), behind " WHAT ",\n"        \
    "one port per backend, a new FastCGI connection per request, no access log; everything\n"      \
    "in a private temporary directory, each server in its own cgroups under hopbench's.\n"         \
    "Checks, one line each: the web server's workers may connect to the socket (else every\n"      \
    "request is a 502 'Permission denied'); kept FastCGI connections fit pm.max_children.\n"       \
    "Measures: hopbench http keep-alive load on the web server, backend tcp against unix\n"        \
    "(the web server's CPU per request from its cgroup, php-fpm's from its process tree);\n"       \
    "then hopbench fcgi straight to php-fpm, tcp against unix (the bare hop; its CPU from\n"       \
    "its cgroup). Each --reps times in ABBA order. Every reply must be 2xx with the body\n"        \
    "'bench': a 5xx, a reset or a wrong body fails the gate (exit 2).\n"                           \
    "Takes: 2 measurements x 2 backends x --reps (default 4) x (-d 2 s + --warmup 0.5 s),\n"       \
    "about 45 s; --short about 10 s and is a check, not a result.\n"                               \
    "Not built yet: the baseline and optimized-reuse profiles.\n"                                  \
    "\n"                                                                                           \
    "  --short          a quick pass: 2 reps, -d 0.3, --warmup 0.1\n"                              \
    "  --reps N         runs per backend and measurement (default 4; 2 with --short)\n"            \
    "  -d, --duration S each run's measured seconds (default 2)\n"                                 \
    "      --warmup S   each run's discarded start (default 0.5)\n"                                \
    "  -c, --connections N  connections of each run (default 1; at most pm.max_children)\n"        \
    "      --jsonl FILE append every run's evidence (hopbench run --jsonl lines) to FILE\n"        \
    "      --hold       after measuring keep the services up until Ctrl-C (to look at them)\n"     \
    "  -h, --help       this text\n"

static const char *const nginx_needs[] = { PHP_FPM, "php8.2-fpm", NGINX, "nginx", NULL };
static const char *const apache_needs[] = { PHP_FPM, "php8.2-fpm", APACHE, "apache2", NULL };

const struct stack_def stack_nginx_fpm = {
    .name = "nginx-fpm",
    .summary = "nginx -> php8.2-fpm (optimized), backend tcp vs unix, plus the bare FastCGI hop",
    .help = FPM_HELP("nginx", "nginx", "nginx"),
    .needs = nginx_needs,
    .run = nginx_run,
};

const struct stack_def stack_apache_fpm = {
    .name = "apache-fpm",
    .summary = "Apache 2.4 -> php8.2-fpm (optimized), backend tcp vs unix, plus the bare FastCGI "
               "hop",
    .help = FPM_HELP("apache", "apache2", "Apache 2.4 (mpm_event, mod_proxy_fcgi)"),
    .needs = apache_needs,
    .run = apache_run,
};
