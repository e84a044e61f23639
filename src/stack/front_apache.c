/*
 * Apache 2.4 in front of php-fpm (front.h): Debian's apache2 with mpm_event
 * and mod_proxy_fcgi, one virtual host per backend, mod_status for its
 * request count; baseline loads a stock httpd.conf's modules and reads
 * WordPress's .htaccess; it keeps FastCGI connections with enablereuse. The
 * stack apache-fpm.
 */
#include <errno.h>
#include <stdio.h>

#include "stack/fpm.h"
#include "stack/fpm_stack.h"
#include "stack/front.h"
#include "util.h"

#define APACHE               "/usr/sbin/apache2"
#define APACHE_MODS          "/usr/lib/apache2/modules"
#define APACHE_STOCK_WORKERS 150u /* the stock MaxRequestWorkers */

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

/* Its request workers (MaxRequestWorkers). */
static unsigned apache_capacity(const struct fpm_knobs *k)
{
    return k->web_lean ? WEB_PROCS * apache_threads(k) : APACHE_STOCK_WORKERS;
}

/* enablereuse max: each process keeps at most that many connections to each backend. */
static unsigned apache_kept(const struct fpm_knobs *k, unsigned conns, char *how, size_t cap)
{
    (void)conns;
    snprintf(how, cap, "%u x %u", WEB_PROCS, k->kept);
    return WEB_PROCS * k->kept;
}

/* The pool, keep-alive, logs, overrides and the FastCGI timeout. */
static void apache_tuning(const struct front_site *s, const struct fpm_knobs *k, char *buf,
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
            APACHE_STOCK_WORKERS, s->dir);
    else
        len = (size_t)snprintf(
            buf, cap,
            "KeepAlive On\nMaxKeepAliveRequests 0\nKeepAliveTimeout 5\n"
            "ServerLimit %u\nStartServers %u\nThreadLimit %u\nThreadsPerChild %u\n"
            "MaxRequestWorkers %u\nMinSpareThreads %u\nMaxSpareThreads %u\n",
            WEB_PROCS, WEB_PROCS, apache_threads(k), apache_threads(k),
            WEB_PROCS * apache_threads(k), apache_threads(k), (WEB_PROCS + 1) * apache_threads(k));
    if (len < cap && k->htaccess)
        len += (size_t)snprintf(buf + len, cap - len,
                                "<Directory %s/www>\n  AllowOverride All\n</Directory>\n", s->dir);
    if (len < cap && k->timeout_s > 0)
        snprintf(buf + len, cap - len, "ProxyTimeout %u\n", k->timeout_s);
}

/* enablereuse: each process keeps at most max connections to each backend. */
static void apache_reuse(const struct front_site *s, const struct fpm_knobs *k, char *buf,
                         size_t cap)
{
    buf[0] = '\0';
    if (k->kept == 0) return;
    snprintf(buf, cap,
             "<Proxy \"fcgi://127.0.0.1:%u\">\n  ProxySet enablereuse=on max=%u\n</Proxy>\n"
             "<Proxy \"unix:%s|fcgi://localhost\">\n  ProxySet enablereuse=on max=%u\n</Proxy>\n",
             s->fpm_port, k->kept, s->sock, k->kept);
}

/* A virtual host's status log. */
static void apache_extra(const struct front_site *s, const struct fpm_knobs *k,
                         const char *transport, char *buf, size_t cap)
{
    buf[0] = '\0';
    if (k->status_log)
        snprintf(buf, cap, "  CustomLog %s/status-%s.log \"%%>s\"\n", s->dir, transport);
}

static int apache_conf(const struct front_site *s, const struct fpm_knobs *k, char *conf,
                       size_t cap)
{
    char user[96] = "", mods[4096], tuning[2 * PATH_MAX + 1024];
    char reuse[PATH_MAX + 512], extra[2][PATH_MAX + 128];
    const char *d = s->dir;
    int n;

    if (s->user != NULL) snprintf(user, sizeof(user), "User %s\nGroup %s\n", s->user, s->user);
    apache_modules(k, mods, sizeof(mods));
    apache_tuning(s, k, tuning, sizeof(tuning));
    apache_reuse(s, k, reuse, sizeof(reuse));
    apache_extra(s, k, "tcp", extra[0], sizeof(extra[0]));
    apache_extra(s, k, "unix", extra[1], sizeof(extra[1]));
    n = snprintf(
        conf, cap,
        "ServerRoot %s\nServerName localhost\nPidFile %s/apache.pid\nDefaultRuntimeDir %s\n"
        "Mutex file:%s default\nErrorLog /proc/self/fd/2\nLogLevel warn\n%s%s"
        "Listen %s:%u\nListen %s:%u\n%sExtendedStatus On\n"
        "DocumentRoot %s/www\n<Directory />\n  AllowOverride None\n  Require all granted\n"
        "</Directory>\n<Location /server-status>\n  SetHandler server-status\n</Location>\n%s"
        "<VirtualHost %s:%u>\n%s  <FilesMatch \"\\.php$\">\n"
        "    SetHandler \"proxy:fcgi://127.0.0.1:%u\"\n  </FilesMatch>\n</VirtualHost>\n"
        "<VirtualHost %s:%u>\n%s  <FilesMatch \"\\.php$\">\n"
        "    SetHandler \"proxy:unix:%s|fcgi://localhost\"\n  </FilesMatch>\n</VirtualHost>\n",
        d, d, d, d, user, mods, s->host, s->port[0], s->host, s->port[1], tuning, d, reuse, s->host,
        s->port[0], extra[0], s->fpm_port, s->host, s->port[1], extra[1], s->sock);
    return n >= 0 && (size_t)n < cap ? 0 : -ENAMETOOLONG;
}

static const struct web_front front_apache = {
    .name = "apache",
    .binary = APACHE,
    .package = "apache2",
    .conf_file = "apache2.conf",
    .args = { "-f", "{conf}", "-DFOREGROUND" },
    .conf = apache_conf,
    .capacity = apache_capacity,
    .kept = apache_kept,
    .status = "/server-status?auto",
    .error_mark = "error]",
    .htaccess = true,
    .help = {
        .title = "Apache 2.4 (mpm_event, mod_proxy_fcgi)",
        .stock = "22 modules, a dynamic mpm_event pool,\n"
                 "                   MaxKeepAliveRequests 100, a WordPress .htaccess",
        .lean = "minimal modules, a fixed pool of 2 processes",
        .reuse = "enablereuse=on max=N): the 2\n"
                 "                   processes keep pm.max_children / 2 each per backend, one\n"
                 "                   per worker in all, as the pod study (16 for 16); more\n"
                 "                   client connections wait in Apache for a free one",
        .reuse_step = "",
    },
};

static const char *const apache_needs[] = { FPM_BINARY, FPM_PACKAGE, APACHE, "apache2", NULL };

const struct stack_def stack_apache_fpm = {
    .name = "apache-fpm",
    .summary = "Apache 2.4 -> php-fpm (3 profiles), backend tcp vs unix, and the bare FastCGI "
               "hop",
    .help_write = fpm_stack_help,
    .front = &front_apache,
    .needs = apache_needs,
    .profiles = fpm_profile_names,
    .cases = STACK_CASE_ABLATION | STACK_CASE_POOL | STACK_CASE_OVERLOAD,
    .private_net = &stack_private_fastcgi,
    .conns = FPM_STUDY_CONNS,
    .run = fpm_stack_run,
};
