/*
 * nginx in front of php-fpm (front.h): Debian's nginx, two worker processes
 * in the lean profile, one server block per backend, stub_status for its
 * request count; it keeps FastCGI connections with an upstream's keepalive and
 * fastcgi_keep_conn. The stack nginx-fpm; php-method's front too.
 */
#include <errno.h>
#include <stdio.h>

#include "stack/fpm.h"
#include "stack/fpm_stack.h"
#include "stack/front.h"

#define NGINX              "/usr/sbin/nginx"
#define NGINX_WORKER_CONNS 1024u /* each nginx worker's worker_connections */

/*
 * nginx's upstream keepalive per worker when it keeps connections: its cache
 * of idle ones bounds only what it keeps, not what it opens (one for each
 * request in flight, with no queue), so it holds at least one per client
 * connection, since a worker may serve them all, and none is closed.
 */
static unsigned nginx_keepalive(const struct front_site *s, const struct fpm_knobs *k)
{
    return k->keep_all && s->conns > k->kept ? s->conns : k->kept;
}

/*
 * The FastCGI connections nginx keeps open at most per backend: keepalive per
 * worker bounds what it keeps (it opens more, and closes them) unless
 * keep_all raised it to keep every one it opens: then each worker holds as
 * many as it ever had requests in flight at once, up to one per client
 * connection, and keeps them for later runs, whose connections the workers
 * may share out differently: each worker up to -c of them.
 */
static unsigned nginx_kept(const struct fpm_knobs *k, unsigned conns, char *how, size_t cap)
{
    struct front_site s = { .conns = conns };
    unsigned per = nginx_keepalive(&s, k);

    if (!k->keep_all) {
        snprintf(how, cap, "%u x %u", WEB_PROCS, k->kept);
        return WEB_PROCS * k->kept;
    }
    per = conns > 0 && conns < per ? conns : per;
    snprintf(how, cap,
             "%u x %u (each worker up to one per client connection: keepalive %u per worker "
             "keeps all it opens)",
             WEB_PROCS, per, nginx_keepalive(&s, k));
    return WEB_PROCS * per;
}

/* Each request holds two of a worker's connections: the client's and the backend's. */
static unsigned nginx_capacity(const struct fpm_knobs *k)
{
    (void)k;
    return WEB_PROCS * NGINX_WORKER_CONNS / 2;
}

/* nginx's http{} settings: Debian's stock nginx.conf, or the lean ones. */
static void nginx_http(const struct front_site *s, const struct fpm_knobs *k, char *buf, size_t cap)
{
    size_t len;

    if (!k->web_lean)
        len = (size_t)snprintf(buf, cap,
                               "  sendfile on;\n  tcp_nopush on;\n  types_hash_max_size 2048;\n"
                               "  access_log %s/nginx-access.log;\n  gzip on;\n",
                               s->dir);
    else
        len = (size_t)snprintf(buf, cap, "  access_log off;\n  keepalive_requests 1000000;\n");
    if (len < cap && k->status_log) snprintf(buf + len, cap - len, "  log_format st '$status';\n");
}

/* A server block's own lines: its status log, the FastCGI timeouts. */
static void nginx_extra(const struct front_site *s, const struct fpm_knobs *k,
                        const char *transport, char *buf, size_t cap)
{
    size_t len = 0;

    buf[0] = '\0';
    if (k->status_log)
        len =
            (size_t)snprintf(buf, cap, "    access_log %s/status-%s.log st;\n", s->dir, transport);
    if (len < cap && k->timeout_s > 0)
        snprintf(buf + len, cap - len,
                 "    fastcgi_connect_timeout %us;\n    fastcgi_read_timeout %us;\n", k->timeout_s,
                 k->timeout_s);
}

static int nginx_conf(const struct front_site *s, const struct fpm_knobs *k, char *conf, size_t cap)
{
    char user[64] = "", http[PATH_MAX + 256];
    char backend[2][PATH_MAX + 16], extra[2][PATH_MAX + 128];
    const char *pass[2] = { backend[0], backend[1] };
    const char *d = s->dir;
    size_t len = 0;

    if (s->user != NULL) snprintf(user, sizeof(user), "user %s;\n", s->user);
    snprintf(backend[0], sizeof(backend[0]), "127.0.0.1:%u", s->fpm_port);
    snprintf(backend[1], sizeof(backend[1]), "unix:%s", s->sock);
    nginx_http(s, k, http, sizeof(http));
    nginx_extra(s, k, "tcp", extra[0], sizeof(extra[0]));
    nginx_extra(s, k, "unix", extra[1], sizeof(extra[1]));
    len += (size_t)snprintf(conf + len, cap - len,
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
        if (k->kept == 0 || len >= cap) continue;
        /* keepalive: the idle connections each worker keeps; fastcgi_keep_conn asks FPM to */
        pass[i] = i == 0 ? "fpm0" : "fpm1";
        len += (size_t)snprintf(conf + len, cap - len,
                                "  upstream fpm%u {\n    server %s;\n    keepalive %u;\n"
                                "    keepalive_requests 1000000;\n    keepalive_timeout 3600s;\n"
                                "  }\n",
                                i, backend[i], nginx_keepalive(s, k));
    }
    for (unsigned i = 0; i < 2 && len < cap; i++)
        len += (size_t)snprintf(
            conf + len, cap - len,
            "  server {\n    listen %s:%u;\n    root %s/www;\n%s"
            "    location = /nginx_status { stub_status; }\n"
            "    location ~ \\.php$ {\n      include /etc/nginx/fastcgi_params;\n"
            "      fastcgi_param SCRIPT_FILENAME $document_root$fastcgi_script_name;\n%s"
            "      fastcgi_pass %s;\n    }\n  }\n",
            s->host, s->port[i], d, extra[i], k->kept > 0 ? "      fastcgi_keep_conn on;\n" : "",
            pass[i]);
    if (len < cap) len += (size_t)snprintf(conf + len, cap - len, "}\n");
    return len < cap ? 0 : -ENAMETOOLONG;
}

const struct web_front front_nginx = {
    .name = "nginx",
    .binary = NGINX,
    .package = "nginx",
    .conf_file = "nginx.conf",
    .args = { "-c", "{conf}", "-p", "{dir}/", "-e", "stderr" },
    .conf = nginx_conf,
    .capacity = nginx_capacity,
    .kept = nginx_kept,
    .status = "/nginx_status",
    .error_mark = "error]",
    .help = {
        .title = "nginx",
        .stock = "worker_processes auto, gzip",
        .lean = "minimal modules, a fixed pool of 2 processes",
        .reuse = "upstream keepalive,\n"
                 "                   fastcgi_keep_conn on): nginx opens one for each request in "
                 "flight\n                   (it has no queue) and keeps them all (keepalive at "
                 "least -c per\n                   worker, keepalive_requests 1000000, "
                 "keepalive_timeout 1 h): each\n                   of its 2 workers up to one "
                 "per client connection, and php-fpm\n                   a worker for each "
                 "(pm static 2 x -c when more than 16)",
        .reuse_step = ";\n                   its reuse step has pm static 2 x -c, a worker for "
                      "each kept connection",
        .starve = "  --starve         fastcgi_keep_conn on with upstream keepalive 8 per worker "
                  "(16 in\n                   all) for pm static 4, 16 connections, 6 s (3 s) per "
                  "transport:\n                   the pool starves; the output names it ('pool "
                  "starved: ...')\n                   with the 504s and timeouts that show it\n",
    },
};

const char *const nginx_needs[] = { FPM_BINARY, FPM_PACKAGE, NGINX, "nginx", NULL };

const struct stack_def stack_nginx_fpm = {
    .name = "nginx-fpm",
    .summary = "nginx -> php-fpm (3 profiles), backend tcp vs unix, and the bare FastCGI hop",
    .help_write = fpm_stack_help,
    .front = &front_nginx,
    .needs = nginx_needs,
    .profiles = fpm_profile_names,
    .cases = STACK_CASE_ABLATION | STACK_CASE_POOL | STACK_CASE_OVERLOAD | STACK_CASE_STARVE,
    .private_net = &stack_private_fastcgi,
    .conns = FPM_STUDY_CONNS,
    .run = fpm_stack_run,
};
