/*
 * The web server → PHP-FPM stacks, profile "optimized": Debian's php8.2-fpm
 * running <?php echo "bench"; with two pools, one on its own TCP port on
 * 127.0.0.1 and one on its own Unix socket (pm static, no access log,
 * opcache.validate_timestamps=0), behind nginx or Apache 2.4 (mpm_event,
 * mod_proxy_fcgi) with one port per backend, a new FastCGI connection per
 * request, no access log. Measured: hopbench http keep-alive load on the web
 * server (each service by name from its own cgroup, the web server -> FPM hop
 * watched), then hopbench fcgi straight to FPM, the bare hop.
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
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stack/fpm.h"
#include "stack/measure.h"
#include "stack/stack.h"
#include "stack/users.h"

#define APACHE_STOCK_WORKERS 150u  /* the stock MaxRequestWorkers */
#define NGINX_WORKER_CONNS   1024u /* each nginx worker's worker_connections */
#define PHP_FPM              "/usr/sbin/php-fpm8.2"
#define NGINX                "/usr/sbin/nginx"
#define APACHE               "/usr/sbin/apache2"
#define APACHE_MODS          "/usr/lib/apache2/modules"
#define WORKER_USER          "www-data" /* the web servers' and the socket's user when hopbench is root */

const char *const fpm_profile_names[] = { "baseline", "optimized", "optimized-reuse", NULL };

enum fpm_profile fpm_profile_of(const struct stack_opts *o)
{
    for (unsigned i = 0; o->profile != NULL && fpm_profile_names[i] != NULL; i++)
        if (strcmp(o->profile, fpm_profile_names[i]) == 0) return (enum fpm_profile)i;
    return FPM_OPTIMIZED;
}

/* pm.max_children: the stock 5, else pm static with two children per CPU, at least 4. */
unsigned fpm_children(enum fpm_profile p)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);

    if (p == FPM_BASELINE) return 5;
    return n >= 2 ? (unsigned)n * 2 : 4;
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
     * Kept connections: half the pool in all, so that the bare hop, measured
     * after, finds free workers while the web server's connections pin theirs.
     */
    if (p == FPM_REUSE) k->kept = k->children / 2 / WEB_PROCS > 0 ? k->children / 2 / WEB_PROCS : 1;
    k->keep_all = p == FPM_REUSE;
}

/* One pool's settings, the same for both pools but for where it listens. */
static void fpm_pool(const struct stack_ctx *c, const struct fpm_knobs *k, const char *name,
                     char *buf, size_t cap)
{
    size_t len;

    if (!k->fpm_static)
        len = (size_t)snprintf(buf, cap,
                               "pm = dynamic\npm.max_children = %u\npm.start_servers = %u\n"
                               "pm.min_spare_servers = 1\npm.max_spare_servers = %u\n"
                               "access.log = %s/fpm-access-%s.log\n",
                               k->children, k->children < 2 ? k->children : 2,
                               k->children < 3 ? k->children : 3, c->sup.dir, name);
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
 * php-fpm.conf: as root, the master alone stays root (it binds and forks);
 * each pool's workers, which read the requests, are the web server's user,
 * the socket is theirs (0660), and the TCP pool takes connections from
 * 127.0.0.1 only. FastCGI has no authentication: whoever reaches a pool runs
 * code as its workers (a script of its own, or PHP_VALUE's auto_prepend_file),
 * and every local user reaches 127.0.0.1, so the fpm stacks keep the port in
 * a network namespace of their own (stack_def.private_net, stack.c).
 */
static int fpm_conf(struct stack_ctx *c, const struct fpm_knobs *k, unsigned port, const char *sock,
                    struct hb_err *err)
{
    char conf[4 * PATH_MAX + 2048], owner[256] = "", who[128] = "", tcp[PATH_MAX + 512],
                                    ux[PATH_MAX + 512];
    const char *d = c->sup.dir;

    if (geteuid() == 0) {
        snprintf(owner, sizeof(owner), "listen.owner = %s\nlisten.group = %s\nlisten.mode = 0660\n",
                 WORKER_USER, WORKER_USER);
        snprintf(who, sizeof(who), "user = %s\ngroup = %s\n", WORKER_USER, WORKER_USER);
    }
    fpm_pool(c, k, "tcp", tcp, sizeof(tcp));
    fpm_pool(c, k, "unix", ux, sizeof(ux));
    snprintf(conf, sizeof(conf),
             "[global]\npid = %s/fpm.pid\nerror_log = /proc/self/fd/2\ndaemonize = no\n"
             "[tcp]\nlisten = 127.0.0.1:%u\nlisten.allowed_clients = 127.0.0.1\n%s%s"
             "[unix]\nlisten = %s\n%s%s%s",
             d, port, who, tcp, sock, owner, who, ux);
    return sup_write(&c->sup, "php-fpm.conf", conf, err);
}

/*
 * nginx's upstream keepalive per worker when it keeps connections: its cache
 * of idle ones bounds only what it keeps, not what it opens (one for each
 * request in flight, with no queue), so it holds at least one per client
 * connection, since a worker may serve them all, and none is closed.
 */
static unsigned nginx_keepalive(const struct stack_ctx *c, const struct fpm_knobs *k)
{
    return k->keep_all && c->conns > k->kept ? c->conns : k->kept;
}

/*
 * The FastCGI connections the web server keeps open per backend at most, and
 * how that comes (into how): Apache's enablereuse max per process is a hard
 * bound, as is nginx's keepalive per worker on what it keeps (it opens more,
 * and closes them) unless keep_all raised it to keep every one it opens.
 */
static unsigned web_kept(const struct stack_ctx *c, const struct web *w, const struct fpm_knobs *k,
                         char *how, size_t cap)
{
    unsigned per = nginx_keepalive(c, k);

    how[0] = '\0';
    if (k->kept == 0) return 0;
    if (strcmp(w->name, "nginx") != 0 || !k->keep_all) {
        snprintf(how, cap, "%u x %u", WEB_PROCS, k->kept);
        return WEB_PROCS * k->kept;
    }
    snprintf(how, cap,
             "one per client connection and one per other worker (keepalive %u per worker "
             "keeps them all)",
             per);
    return WEB_PROCS * per < fpm_nginx_kept(c->conns) ? WEB_PROCS * per : fpm_nginx_kept(c->conns);
}

unsigned fpm_nginx_kept(unsigned conns)
{
    return conns + WEB_PROCS - 1;
}

/* nginx's http{} settings: Debian's stock nginx.conf, or the lean ones. */
static void nginx_http(const struct stack_ctx *c, const struct fpm_knobs *k, char *buf, size_t cap)
{
    size_t len;

    if (!k->web_lean)
        len = (size_t)snprintf(buf, cap,
                               "  sendfile on;\n  tcp_nopush on;\n  types_hash_max_size 2048;\n"
                               "  access_log %s/nginx-access.log;\n  gzip on;\n",
                               c->sup.dir);
    else
        len = (size_t)snprintf(buf, cap, "  access_log off;\n  keepalive_requests 1000000;\n");
    if (len < cap && k->status_log) snprintf(buf + len, cap - len, "  log_format st '$status';\n");
}

/* A front's own lines: its status log, the FastCGI timeouts. */
static void front_extra(const struct stack_ctx *c, const struct fpm_knobs *k, bool nginx,
                        const char *transport, char *buf, size_t cap)
{
    size_t len = 0;

    buf[0] = '\0';
    if (k->status_log)
        len = (size_t)snprintf(buf, cap,
                               nginx ? "    access_log %s/status-%s.log st;\n"
                                     : "  CustomLog %s/status-%s.log \"%%>s\"\n",
                               c->sup.dir, transport);
    if (len < cap && k->timeout_s > 0 && nginx)
        snprintf(buf + len, cap - len,
                 "    fastcgi_connect_timeout %us;\n    fastcgi_read_timeout %us;\n", k->timeout_s,
                 k->timeout_s);
}

static int nginx_conf(struct stack_ctx *c, const struct fpm_knobs *k, const unsigned front[2],
                      unsigned fpm_port, const char *sock, struct hb_err *err)
{
    char conf[10 * PATH_MAX + 4096], user[64] = "", http[PATH_MAX + 256];
    char backend[2][PATH_MAX + 16], extra[2][PATH_MAX + 128];
    const char *pass[2] = { backend[0], backend[1] };
    const char *d = c->sup.dir;
    size_t len = 0;

    if (geteuid() == 0) snprintf(user, sizeof(user), "user %s;\n", WORKER_USER);
    snprintf(backend[0], sizeof(backend[0]), "127.0.0.1:%u", fpm_port);
    snprintf(backend[1], sizeof(backend[1]), "unix:%s", sock);
    nginx_http(c, k, http, sizeof(http));
    front_extra(c, k, true, "tcp", extra[0], sizeof(extra[0]));
    front_extra(c, k, true, "unix", extra[1], sizeof(extra[1]));
    len += (size_t)snprintf(conf + len, sizeof(conf) - len,
                            "%sdaemon off;\nworker_processes %s;\npid %s/nginx.pid;\n"
                            "error_log stderr warn;\nevents { worker_connections %u; }\n"
                            "http {\n%s"
                            "  client_body_temp_path %s/nginx-body;\n"
                            "  proxy_temp_path %s/nginx-proxy;\n"
                            "  fastcgi_temp_path %s/nginx-fastcgi;\n"
                            "  uwsgi_temp_path %s/nginx-uwsgi;\n  scgi_temp_path %s/nginx-scgi;\n",
                            user, k->web_lean ? "2" : "auto", d, NGINX_WORKER_CONNS, http, d, d, d,
                            d, d);
    for (unsigned i = 0; i < 2; i++) {
        if (k->kept == 0 || len >= sizeof(conf)) continue;
        /* keepalive: the idle connections each worker keeps; fastcgi_keep_conn asks FPM to */
        pass[i] = i == 0 ? "fpm0" : "fpm1";
        len += (size_t)snprintf(conf + len, sizeof(conf) - len,
                                "  upstream fpm%u {\n    server %s;\n    keepalive %u;\n"
                                "    keepalive_requests 1000000;\n    keepalive_timeout 3600s;\n"
                                "  }\n",
                                i, backend[i], nginx_keepalive(c, k));
    }
    for (unsigned i = 0; i < 2 && len < sizeof(conf); i++)
        len += (size_t)snprintf(
            conf + len, sizeof(conf) - len,
            "  server {\n    listen %s:%u;\n    root %s/www;\n%s"
            "    location = /nginx_status { stub_status; }\n"
            "    location ~ \\.php$ {\n      include /etc/nginx/fastcgi_params;\n"
            "      fastcgi_param SCRIPT_FILENAME $document_root$fastcgi_script_name;\n%s"
            "      fastcgi_pass %s;\n    }\n  }\n",
            c->front_host, front[i], d, extra[i],
            k->kept > 0 ? "      fastcgi_keep_conn on;\n" : "", pass[i]);
    if (len < sizeof(conf)) snprintf(conf + len, sizeof(conf) - len, "}\n");
    if (len >= sizeof(conf)) return hb_fail(err, -ENAMETOOLONG, "nginx.conf: paths too long");
    return sup_write(&c->sup, "nginx.conf", conf, err);
}

/*
 * The modules a stock httpd.conf loads (and proxy, rewrite), or the few the
 * lean one needs (and rewrite while an .htaccess is read: it rewrites).
 */
static void apache_modules(const struct fpm_knobs *k, char *buf, size_t cap)
{
    static const char *const stock[] = {
        "authn_file",    "authn_core", "authz_host", "authz_groupfile", "authz_user", "authz_core",
        "access_compat", "auth_basic", "reqtimeout", "filter",          "mime",       "env",
        "headers",       "setenvif",   "status",     "autoindex",       "dir",        "alias",
        "rewrite",       "proxy",      "proxy_fcgi", "mpm_event",
    };
    static const char *const lean[] = { "authz_core", "proxy", "proxy_fcgi", "status",
                                        "mpm_event",  "dir",   "rewrite" };
    const char *const *m = k->web_lean ? lean : stock;
    size_t n = !k->web_lean ? ARRAY_LEN(stock) : ARRAY_LEN(lean) - !k->htaccess, len = 0;

    buf[0] = '\0';
    for (size_t i = 0; i < n && len < cap; i++)
        len += (size_t)snprintf(buf + len, cap - len,
                                "LoadModule %s_module " APACHE_MODS "/mod_%s.so\n", m[i], m[i]);
}

/* The lean Apache's threads per process: 32, or enough for k->web_workers. */
static unsigned apache_threads(const struct fpm_knobs *k)
{
    unsigned need = (k->web_workers + WEB_PROCS - 1) / WEB_PROCS;

    return need > 32 ? need : 32;
}

unsigned fpm_front_capacity(const struct web *w, const struct fpm_knobs *k)
{
    if (strcmp(w->name, "nginx") == 0) return WEB_PROCS * NGINX_WORKER_CONNS / 2;
    return k->web_lean ? WEB_PROCS * apache_threads(k) : APACHE_STOCK_WORKERS;
}

/* The pool, keep-alive, logs, overrides and the FastCGI timeout. */
static void apache_tuning(const struct stack_ctx *c, const struct fpm_knobs *k, char *buf,
                          size_t cap)
{
    size_t len;

    if (!k->web_lean)
        len = (size_t)snprintf(
            buf, cap,
            "KeepAlive On\nMaxKeepAliveRequests 100\nKeepAliveTimeout 5\n"
            "StartServers 2\nMinSpareThreads 25\nMaxSpareThreads 75\nThreadLimit 64\n"
            "ThreadsPerChild 25\nMaxRequestWorkers %u\nMaxConnectionsPerChild 0\n"
            "LogFormat \"%%h %%l %%u %%t \\\"%%r\\\" %%>s %%O \\\"%%{Referer}i\\\" "
            "\\\"%%{User-Agent}i\\\"\" combined\n"
            "CustomLog %s/apache-access.log combined\nTypesConfig /etc/mime.types\n",
            APACHE_STOCK_WORKERS, c->sup.dir);
    else
        len = (size_t)snprintf(
            buf, cap,
            "KeepAlive On\nMaxKeepAliveRequests 0\nKeepAliveTimeout 5\n"
            "ServerLimit %u\nStartServers %u\nThreadLimit %u\nThreadsPerChild %u\n"
            "MaxRequestWorkers %u\nMinSpareThreads %u\nMaxSpareThreads %u\n",
            WEB_PROCS, WEB_PROCS, apache_threads(k), apache_threads(k),
            WEB_PROCS * apache_threads(k), apache_threads(k), (WEB_PROCS + 1) * apache_threads(k));
    if (len < cap && k->htaccess)
        len +=
            (size_t)snprintf(buf + len, cap - len,
                             "<Directory %s/www>\n  AllowOverride All\n</Directory>\n", c->sup.dir);
    if (len < cap && k->timeout_s > 0)
        snprintf(buf + len, cap - len, "ProxyTimeout %u\n", k->timeout_s);
}

/* enablereuse: each process keeps at most max connections to each backend. */
static void apache_reuse(const struct fpm_knobs *k, unsigned fpm_port, const char *sock, char *buf,
                         size_t cap)
{
    buf[0] = '\0';
    if (k->kept == 0) return;
    snprintf(buf, cap,
             "<Proxy \"fcgi://127.0.0.1:%u\">\n  ProxySet enablereuse=on max=%u\n</Proxy>\n"
             "<Proxy \"unix:%s|fcgi://localhost\">\n  ProxySet enablereuse=on max=%u\n</Proxy>\n",
             fpm_port, k->kept, sock, k->kept);
}

static int apache_conf(struct stack_ctx *c, const struct fpm_knobs *k, const unsigned front[2],
                       unsigned fpm_port, const char *sock, struct hb_err *err)
{
    char conf[12 * PATH_MAX + 8192], user[96] = "", mods[4096], tuning[2 * PATH_MAX + 1024];
    char reuse[PATH_MAX + 512], extra[2][PATH_MAX + 128];
    const char *d = c->sup.dir;
    int n;

    if (geteuid() == 0)
        snprintf(user, sizeof(user), "User %s\nGroup %s\n", WORKER_USER, WORKER_USER);
    apache_modules(k, mods, sizeof(mods));
    apache_tuning(c, k, tuning, sizeof(tuning));
    apache_reuse(k, fpm_port, sock, reuse, sizeof(reuse));
    front_extra(c, k, false, "tcp", extra[0], sizeof(extra[0]));
    front_extra(c, k, false, "unix", extra[1], sizeof(extra[1]));
    n = snprintf(
        conf, sizeof(conf),
        "ServerRoot %s\nServerName localhost\nPidFile %s/apache.pid\nDefaultRuntimeDir %s\n"
        "Mutex file:%s default\nErrorLog /proc/self/fd/2\nLogLevel warn\n%s%s"
        "Listen %s:%u\nListen %s:%u\n%sExtendedStatus On\n"
        "DocumentRoot %s/www\n<Directory />\n  AllowOverride None\n  Require all granted\n"
        "</Directory>\n<Location /server-status>\n  SetHandler server-status\n</Location>\n%s"
        "<VirtualHost %s:%u>\n%s  <FilesMatch \"\\.php$\">\n"
        "    SetHandler \"proxy:fcgi://127.0.0.1:%u\"\n  </FilesMatch>\n</VirtualHost>\n"
        "<VirtualHost %s:%u>\n%s  <FilesMatch \"\\.php$\">\n"
        "    SetHandler \"proxy:unix:%s|fcgi://localhost\"\n  </FilesMatch>\n</VirtualHost>\n",
        d, d, d, d, user, mods, c->front_host, front[0], c->front_host, front[1], tuning, d, reuse,
        c->front_host, front[0], extra[0], fpm_port, c->front_host, front[1], extra[1], sock);
    if (n < 0 || (size_t)n >= sizeof(conf))
        return hb_fail(err, -ENAMETOOLONG, "apache2.conf: paths too long");
    return sup_write(&c->sup, "apache2.conf", conf, err);
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

static int fpm_start(struct stack_ctx *c, const struct fpm_knobs *k, unsigned port,
                     const char *sock, struct hb_err *err)
{
    char conf[PATH_MAX];
    int rc = fpm_conf(c, k, port, sock, err);

    if (rc < 0) return rc;
    sup_path(&c->sup, "php-fpm.conf", conf, sizeof(conf));
    /* no -R: its workers are never root (fpm_conf) */
    const char *argv[] = { PHP_FPM, "-y", conf, "-F", NULL };
    struct sup_spec spec = { .name = "php-fpm", .argv = argv };
    return sup_start(&c->sup, &spec, err);
}

static int web_start(struct stack_ctx *c, const struct web *w, const struct fpm_knobs *k,
                     const unsigned front[2], unsigned fpm, const char *sock, struct hb_err *err)
{
    char conf[PATH_MAX], prefix[PATH_MAX + 2];
    int rc = w->conf(c, k, front, fpm, sock, err);
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

/* Waits for php-fpm's two pools (w NULL) or for the web server's two fronts to answer. */
static int fpm_ready(struct stack_ctx *c, const struct web *w, const struct fpm_eps *e,
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
 * fails. bare: the connections the bare hop keeps open besides the web
 * server's. starve: kept connections beyond the pool are the case measured,
 * let through with a warning line.
 */
static int fpm_pitfalls(struct stack_ctx *c, const struct web *w, const struct fpm_knobs *k,
                        const struct fpm_eps *e, unsigned bare, bool starve, struct hb_err *err)
{
    char line[PATH_MAX + 256], kept[256], how[160], user[64];
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
    if (web + bare > kids)
        return hb_fail(err, -EINVAL,
                       "the bare FastCGI hop would keep %u connection(s) open besides the web "
                       "server's %u, more than pm.max_children %u: the pool would starve (use "
                       "-c %u or less)",
                       bare, web, kids, kids > web ? kids - web : 0);
    if (web > 0)
        snprintf(kept, sizeof(kept), "keeps at most %s = %u FastCGI connections per backend", how,
                 web);
    else
        snprintf(kept, sizeof(kept), "opens a FastCGI connection per request (none kept)");
    fprintf(c->out,
            "check: the web server %s; the bare hop keeps %u; together within pm.max_children "
            "%u per pool: no starvation\n",
            kept, bare, kids);
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

void fpm_observe_args(struct stack_ctx *c, const struct web *w, const struct fpm_eps *e,
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

void fpm_front_args(struct stack_ctx *c, const struct web *w, const struct fpm_eps *e,
                    struct stack_args *a)
{
    fpm_args(a, e, true);
    fpm_observe_args(c, w, e, a);
}

static int fpm_measure(struct stack_ctx *c, const struct web *w, const struct fpm_eps *e,
                       struct hb_err *err)
{
    static const char *const bare[] = { "php-fpm", NULL };
    struct stack_cell cells[2]; /* in front of the web server, the bare hop */
    struct stack_args a = { .n = 0 };
    char label[48];
    int rc = 0;

    stack_plan(c, 2, 2 * c->reps);
    snprintf(label, sizeof(label), "%s->fpm", w->name);
    stack_cell_init(&cells[0], label, "tcp", "unix");
    stack_cell_init(&cells[1], "fcgi->fpm", "tcp", "unix");
    snprintf(cells[0].title, sizeof(cells[0].title), "%s \xe2\x86\x92 php-fpm", w->name);
    snprintf(cells[1].title, sizeof(cells[1].title), "bare FastCGI hop");
    fpm_front_args(c, w, e, &a);
    fprintf(c->out, "measuring http keep-alive -> %s -> php-fpm, backend tcp and unix ...\n",
            w->name);
    fflush(c->out);
    rc = stack_measure(c, &a, &cells[0], err);
    if (rc == 0) rc = sup_alive(&c->sup, err);
    if (rc == 0 && !stack_stopping(c)) {
        struct stack_args b = { .n = 0 };
        fpm_args(&b, e, false);
        stack_services(c, &b, bare);
        fprintf(c->out, "measuring fcgi -> php-fpm (the bare hop), tcp and unix ...\n");
        fflush(c->out);
        rc = stack_measure(c, &b, &cells[1], err);
        if (rc == 0) rc = sup_alive(&c->sup, err);
    }
    stack_table(c->out, cells, 2);
    return rc;
}

/* fpm_up with the connections the bare hop keeps open besides the web server's. */
static int fpm_up_bare(struct stack_ctx *c, const struct web *w, const struct fpm_knobs *k,
                       bool starve, unsigned bare, struct fpm_eps *e, struct hb_err *err)
{
    unsigned front[2] = { 0, 0 }, port = 0;
    int rc = fpm_ports(front, &port, err);

    memset(e, 0, sizeof(*e));
    if (rc == 0) rc = fpm_files(c, k, err);
    if (rc < 0) return rc;
    e->fpm_port = port;
    sup_path(&c->sup, "fpm.sock", e->sock, sizeof(e->sock));
    sup_path(&c->sup, "www/bench.php", e->script, sizeof(e->script));
    sup_path(&c->sup, "www", e->docroot, sizeof(e->docroot));
    for (unsigned i = 0; i < 2; i++)
        snprintf(e->front[i], sizeof(e->front[i]), "tcp://%s:%u", c->front_host, front[i]);
    snprintf(e->fpm[0], sizeof(e->fpm[0]), "tcp://127.0.0.1:%u", port);
    snprintf(e->fpm[1], sizeof(e->fpm[1]), "unix:%s", e->sock);
    /* The set-up checks come before the web server: a socket it cannot use is named, not 502s. */
    rc = fpm_reach(e, err);
    if (rc == 0) rc = fpm_start(c, k, port, e->sock, err);
    if (rc == 0) rc = fpm_ready(c, NULL, e, err);
    if (rc == 0) rc = fpm_pitfalls(c, w, k, e, bare, starve, err);
    if (rc == 0) rc = web_start(c, w, k, front, port, e->sock, err);
    if (rc == 0) rc = fpm_ready(c, w, e, err);
    return rc;
}

int fpm_up(struct stack_ctx *c, const struct web *w, const struct fpm_knobs *k, bool starve,
           struct fpm_eps *e, struct hb_err *err)
{
    return fpm_up_bare(c, w, k, starve, fpm_case_asked(c->o) ? 0 : c->conns, e, err);
}

int fpm_build(struct stack_ctx *c, const struct web *w, enum fpm_profile p, unsigned bare,
              struct fpm_eps *e, struct hb_err *err)
{
    struct fpm_knobs k;

    fpm_knobs_of(p, &k);
    return fpm_up_bare(c, w, &k, false, bare, e, err);
}

static int fpm_stack(struct stack_ctx *c, const struct web *w, struct hb_err *err)
{
    static struct fpm_eps e;
    enum fpm_profile p = fpm_profile_of(c->o);
    struct fpm_knobs k;
    int rc;

    if (fpm_case_asked(c->o)) return fpm_cases(c, w, err);
    fpm_knobs_of(p, &k);
    rc = fpm_up(c, w, &k, false, &e, err);
    if (rc == -EINTR) {
        c->interrupted = true;
        return 0;
    }
    if (rc < 0) return rc;
    struct sup_svc *web = sup_find(&c->sup, w->name), *fpm = sup_find(&c->sup, "php-fpm");
    fprintf(c->out,
            "hopbench stack %s-fpm (profile %s): %s pid %ld on %s (backend tcp) and %s "
            "(backend unix); php-fpm pid %ld on %s and %s, pm %s %u per pool\n"
            "cgroup: %s\ncgroup: %s\n"
            "runs: tcp and unix %u times each in ABBA order, %.2f s after %.2f s warm-up, "
            "%u connection(s); status: %s\n",
            w->name, fpm_profile_names[p], w->name, (long)web->pid, e.front[0], e.front[1],
            (long)fpm->pid, e.fpm[0], e.fpm[1], k.fpm_static ? "static" : "dynamic, at most",
            k.children, sup_cgroup_cpu(web), sup_cgroup_cpu(fpm), c->reps,
            (double)c->duration_ns / 1e9, (double)c->warmup_ns / 1e9, c->conns, w->status);
    return fpm_measure(c, w, &e, err);
}

const struct web web_nginx = { "nginx", NGINX, nginx_conf, "/nginx_status" };
static const struct web web_apache = { "apache", APACHE, apache_conf, "/server-status?auto" };

static int nginx_run(struct stack_ctx *c, struct hb_err *err)
{
    return fpm_stack(c, &web_nginx, err);
}

static int apache_run(struct stack_ctx *c, struct hb_err *err)
{
    return fpm_stack(c, &web_apache, err);
}

#define FPM_HELP(WEB, WHAT, STOCK, REUSE, CASES, STEPS, REUSE_STEP, STARVE)                                 \
    "usage: hopbench stack " WEB "-fpm [--profile P] [--short] [--reps N] [-d S] [--warmup S]\n"            \
    "                              [-c N] [--jsonl FILE] [--csv FILE] [-q] [--hold]\n"                      \
    "       hopbench stack " WEB "-fpm --ablation | --pool N,N,.. | --overload" CASES "\n"                  \
    "\n"                                                                                                    \
    "Builds: Debian's php8.2-fpm running <?php echo \"bench\"; with two pools, one on its own\n"            \
    "port on 127.0.0.1 and one on its own Unix socket, behind " WHAT "\n"                                   \
    "with one port per backend; everything in a private temporary directory, each server\n"                 \
    "in its own cgroups under hopbench's. --profile (default optimized):\n"                                 \
    "  baseline         stock-like: " STOCK ",\n"                                                           \
    "                   access logs, pm dynamic with at most 5 children, a new FastCGI\n"                   \
    "                   connection per request\n"                                                           \
    "  optimized        minimal modules, a fixed pool of 2 processes, no access logs, pm static\n"          \
    "                   with 2 children per CPU, opcache.validate_timestamps=0, a new FastCGI\n"            \
    "                   connection per request\n"                                                           \
    "  optimized-reuse  optimized, and FastCGI connections kept (" REUSE "\n"                               \
    "As root only the masters (php-fpm's and the web server's) are root; every worker is\n"                 \
    "www-data. FastCGI has no authentication: the services and the run children are in a\n"                 \
    "network namespace of the stack's own (--netns same) so that no other local user\n"                     \
    "reaches php-fpm's TCP port; not root, or with --agent, on the host's loopback, which a\n"              \
    "warning line says is open to every local user.\n"                                                      \
    "Checks, one line each: the web server's workers may connect to the socket (else every\n"               \
    "request is a 502 'Permission denied'); kept FastCGI connections fit pm.max_children.\n"                \
    "Measures: hopbench http keep-alive load on the web server, backend tcp against unix\n"                 \
    "(the web server and php-fpm each measured by name from its own cgroup, the web server\n"               \
    "-> php-fpm hop watched); then hopbench fcgi straight to php-fpm, tcp against unix (the\n"              \
    "bare hop). Each --reps times in ABBA order. Every reply must be 2xx with the body\n"                   \
    "'bench': a 5xx, a reset or a wrong body fails the gate (exit 2). Per measurement, for\n"               \
    "tcp, unix and unix/tcp (95 % interval, '~' when not significant): ops/s, p50, p99; CPU\n"              \
    "us per request of the client, each service, their sum and the system (softirq\n"                       \
    "included); each service's PSS and working set; TIME_WAIT per side of the front hop\n"                  \
    "and of the backend hop, and the backend's established connections.\n"                                  \
    "Takes: 2 measurements x 2 backends x --reps (default 4) x (-d 2 s + --warmup 0.5 s),\n"                \
    "about 45 s; --short about 10 s and is a check, not a result.\n"                                        \
    "\n"                                                                                                    \
    "The study's cases, instead of a profile (the web server's load only, no bare hop):\n"                  \
    "  --ablation       baseline, then one change added at a time: php-fpm pm static (2 per\n"              \
    "                   CPU), the lean web server (its modules, fixed pool, no access log)" STEPS           \
    "                   php.ini (opcache.validate_timestamps=0), FastCGI connections kept;\n"               \
    "                   each step a fresh stack, tcp against unix; one table, and each step's\n"            \
    "                   change from the one before (-c default 16, 8 with --short; ~15 s short)" REUSE_STEP \
    "\n"                                                                                                    \
    "  --pool N,N,..    the optimized profile with pm static N, each N (at most 8 sizes)\n"                 \
    "  --overload       pm static 4, listen.backlog 4, 128 connections (64 with --short) for\n"             \
    "                   5 s (1 s) per transport, the web server holding a request for each\n"               \
    "                   (Apache's workers raised to match) so that the limit is php-fpm's:\n"               \
    "                   where each transport hit it ('limit hit: ...') and how it fails, from\n"            \
    "                   the client's errors by kind, the web server's status log and error\n"               \
    "                   log, php-fpm's log, its status page's listen queue per pool (listen\n"              \
    "                   queue, max listen queue, listen queue len) beside the kernel's\n"                   \
    "                   ListenOverflows (TCP) and the backend's accept queue, and the\n"                    \
    "                   TIME_WAIT sockets on the backend port;\n"                                           \
    "                   errors do not fail the gate\n" STARVE "\n"                                          \
    "  --profile P      baseline, optimized (default) or optimized-reuse\n"                                 \
    "  --short          a quick pass: 2 reps, -d 0.3, --warmup 0.1\n"                                       \
    "  --reps N         runs per backend and measurement (default 4; 2 with --short)\n"                     \
    "  -d, --duration S each run's measured seconds (default 2)\n"                                          \
    "      --warmup S   each run's discarded start (default 0.5)\n"                                         \
    "  -c, --connections N  connections of each run (default 1; the bare hop keeps them open:\n"            \
    "                   at most what pm.max_children leaves)\n"                                             \
    "      --jsonl FILE append every run's evidence (hopbench run --jsonl lines) to FILE\n"                 \
    "      --csv FILE   one CSV row per run of every measurement (source: the measurement)\n"               \
    "  -q, --quiet      no live progress line from the runs\n"                                              \
    "      --hold       after measuring keep the services up until Ctrl-C (to look at them)\n"              \
    "  -h, --help       this text\n"

const char *const nginx_needs[] = { PHP_FPM, "php8.2-fpm", NGINX, "nginx", NULL };
static const char *const apache_needs[] = { PHP_FPM, "php8.2-fpm", APACHE, "apache2", NULL };

const struct stack_def stack_nginx_fpm = {
    .name = "nginx-fpm",
    .summary = "nginx -> php8.2-fpm (3 profiles), backend tcp vs unix, and the bare FastCGI hop",
    .help = FPM_HELP(
        "nginx", "nginx", "worker_processes auto, gzip",
        "upstream keepalive,\n                   fastcgi_keep_conn on): nginx opens one for each "
        "request in flight\n                   (it has no queue) and keeps them all (keepalive "
        "at least -c per\n                   worker, keepalive_requests 1000000, "
        "keepalive_timeout 1 h): one per\n                   client connection and one per other "
        "worker (its readiness request),\n                   which with the bare hop's must fit "
        "pm.max_children",
        " | --starve", ",\n",
        ";\n                   its reuse step has pm static -c + 1, a worker for each kept connection",
        "  --starve         fastcgi_keep_conn on with upstream keepalive 8 per worker (16 in\n"
        "                   all) for pm static 4, 16 connections, 6 s (3 s) per transport:\n"
        "                   the pool starves; the output names it ('pool starved: ...')\n"
        "                   with the 504s and timeouts that show it\n"),
    .needs = nginx_needs,
    .profiles = fpm_profile_names,
    .cases = STACK_CASE_ABLATION | STACK_CASE_POOL | STACK_CASE_OVERLOAD | STACK_CASE_STARVE,
    .private_net = true,
    .run = nginx_run,
};

const struct stack_def stack_apache_fpm = {
    .name = "apache-fpm",
    .summary = "Apache 2.4 -> php8.2-fpm (3 profiles), backend tcp vs unix, and the bare "
               "FastCGI hop",
    .help = FPM_HELP("apache", "Apache 2.4 (mpm_event, mod_proxy_fcgi)",
                     "22 modules, a dynamic mpm_event pool,\n"
                     "                   MaxKeepAliveRequests 100, a WordPress .htaccess",
                     "enablereuse=on max=N): the 2\n"
                     "                   processes keep at most pm.max_children / 2 per backend, "
                     "so\n                   that the bare hop's connections find free workers "
                     "too",
                     "", ",\n                   AllowOverride None (no .htaccess read),\n", "", ""),
    .needs = apache_needs,
    .profiles = fpm_profile_names,
    .cases = STACK_CASE_ABLATION | STACK_CASE_POOL | STACK_CASE_OVERLOAD,
    .private_net = true,
    .run = apache_run,
};
