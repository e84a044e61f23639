/*
 * lighttpd in front of php-fpm (front.h): Debian's lighttpd, one event-driven
 * process, mod_fastcgi to php-fpm's TCP pool on one port and to its Unix
 * socket on the other ($SERVER["socket"] blocks), mod_status for its request
 * count. lighttpd keeps no FastCGI connection (a new one per request), so its
 * stack has the profiles baseline and optimized and no case that keeps them.
 * As root it binds its ports, then runs as www-data and opens its logs as
 * such (worker_files). The stack lighttpd-fpm.
 */
#include <errno.h>
#include <stdio.h>

#include "stack/fpm.h"
#include "stack/fpm_stack.h"
#include "stack/front.h"

#define LIGHTTPD "/usr/sbin/lighttpd"
/* its default server.max-connections: server.max-fds (4096) / 3 */
#define LIGHTTPD_CONNS (4096u / 3)

/* One connection per request in flight: its connections are its request slots. */
static unsigned lighttpd_capacity(const struct fpm_knobs *k)
{
    (void)k;
    return LIGHTTPD_CONNS;
}

/* Its access log (baseline) and the failure cases' status logs, which it opens as www-data. */
static unsigned lighttpd_files(const struct fpm_knobs *k, const char **names)
{
    unsigned n = 0;

    if (!k->web_lean) names[n++] = "lighttpd-access.log";
    if (k->status_log) {
        names[n++] = "status-tcp.log";
        names[n++] = "status-unix.log";
    }
    return n;
}

/*
 * The global settings: Debian's stock lighttpd.conf (its modules, HTTP/2
 * upgrade, strict request parsing, an access log), or the lean ones (the two
 * modules it needs, and mod_accesslog for the failure cases' status logs).
 */
static size_t lighttpd_global(const struct front_site *s, const struct fpm_knobs *k, char *buf,
                              size_t cap)
{
    if (!k->web_lean)
        return (size_t)snprintf(
            buf, cap,
            "server.modules = ( \"mod_indexfile\", \"mod_access\", \"mod_alias\", "
            "\"mod_redirect\", \"mod_accesslog\", \"mod_fastcgi\", \"mod_status\", "
            "\"mod_dirlisting\", \"mod_staticfile\" )\n"
            "server.feature-flags += ( \"server.h2proto\" => \"enable\" )\n"
            "server.feature-flags += ( \"server.h2c\" => \"enable\" )\n"
            "server.http-parseopts = ( \"header-strict\" => \"enable\", \"host-strict\" => "
            "\"enable\", \"host-normalize\" => \"enable\", \"url-normalize-unreserved\" => "
            "\"enable\", \"url-normalize-required\" => \"enable\", \"url-ctrls-reject\" => "
            "\"enable\", \"url-path-2f-decode\" => \"enable\", \"url-path-dotseg-remove\" => "
            "\"enable\" )\n"
            "index-file.names = ( \"index.php\", \"index.html\" )\n"
            "url.access-deny = ( \"~\", \".inc\" )\n"
            "static-file.exclude-extensions = ( \".php\", \".pl\", \".fcgi\" )\n"
            "accesslog.filename = \"%s/lighttpd-access.log\"\n",
            s->dir);
    return (size_t)snprintf(buf, cap,
                            "server.modules = ( \"mod_fastcgi\", \"mod_status\"%s )\n"
                            "server.max-keep-alive-requests = 1000000\n",
                            k->status_log ? ", \"mod_accesslog\"" : "");
}

/* One port's block: its status log, and its FastCGI backend (where, and the timeouts). */
static size_t lighttpd_port(const struct front_site *s, const struct fpm_knobs *k, unsigned i,
                            char *buf, size_t cap)
{
    char log[PATH_MAX + 128] = "", backend[PATH_MAX + 64], timeouts[96] = "";

    if (k->status_log)
        snprintf(log, sizeof(log),
                 "  accesslog.filename = \"%s/status-%s.log\"\n  accesslog.format = \"%%>s\"\n",
                 s->dir, i == 0 ? "tcp" : "unix");
    if (i == 0)
        snprintf(backend, sizeof(backend), "\"host\" => \"127.0.0.1\", \"port\" => %u",
                 s->fpm_port);
    else
        snprintf(backend, sizeof(backend), "\"socket\" => \"%s\"", s->sock);
    if (k->timeout_s > 0)
        snprintf(timeouts, sizeof(timeouts), ", \"connect-timeout\" => %u, \"read-timeout\" => %u",
                 k->timeout_s, k->timeout_s);
    return (size_t)snprintf(buf, cap,
                            "$SERVER[\"socket\"] == \"%s:%u\" {\n%s"
                            "  fastcgi.server = ( \".php\" => (( %s%s%s )) )\n}\n",
                            s->host, s->port[i], log, backend, timeouts,
                            k->web_lean ? "" : ", \"broken-scriptfilename\" => \"enable\"");
}

static int lighttpd_conf(const struct front_site *s, const struct fpm_knobs *k, char *conf,
                         size_t cap)
{
    size_t len = 0;

    if (s->user != NULL)
        len = (size_t)snprintf(conf, cap, "server.username = \"%s\"\nserver.groupname = \"%s\"\n",
                               s->user, s->user);
    if (len < cap) len += lighttpd_global(s, k, conf + len, cap - len);
    if (len < cap)
        len += (size_t)snprintf(conf + len, cap - len,
                                "server.document-root = \"%s/www\"\n"
                                "server.pid-file = \"%s/lighttpd.pid\"\n"
                                "server.bind = \"%s\"\nserver.port = %u\n"
                                "status.status-url = \"/server-status\"\n",
                                s->dir, s->dir, s->host, s->port[0]);
    for (unsigned i = 0; i < 2 && len < cap; i++)
        len += lighttpd_port(s, k, i, conf + len, cap - len);
    return len < cap ? 0 : -ENAMETOOLONG;
}

static const struct web_front front_lighttpd = {
    .name = "lighttpd",
    .binary = LIGHTTPD,
    .package = "lighttpd",
    .conf_file = "lighttpd.conf",
    .args = { "-D", "-f", "{conf}" },
    .conf = lighttpd_conf,
    .capacity = lighttpd_capacity,
    .worker_files = lighttpd_files,
    .status = "/server-status?auto",
    .error_mark = "(gw_backend.c.",
    .log_lag_s = 4, /* mod_accesslog writes what it holds every 4 s */
    .help = {
        .title = "lighttpd (mod_fastcgi)",
        .stock = "Debian's lighttpd.conf (its modules, HTTP/2\n"
                 "                   upgrade, strict request parsing)",
        .lean = "minimal modules, one event-driven process",
        .reuse_step = "",
    },
};

static const char *const lighttpd_needs[] = { FPM_BINARY, FPM_PACKAGE, LIGHTTPD, "lighttpd", NULL };
static const char *const lighttpd_profiles[] = { "baseline", "optimized", NULL };

const struct stack_def stack_lighttpd_fpm = {
    .name = "lighttpd-fpm",
    .summary = "lighttpd -> php-fpm (2 profiles), backend tcp vs unix, and the bare FastCGI hop",
    .help_write = fpm_stack_help,
    .front = &front_lighttpd,
    .needs = lighttpd_needs,
    .profiles = lighttpd_profiles,
    .cases = STACK_CASE_ABLATION | STACK_CASE_POOL | STACK_CASE_OVERLOAD,
    .private_net = &stack_private_fastcgi,
    .conns = FPM_STUDY_CONNS,
    .run = fpm_stack_run,
};
