/*
 * The database stacks: `postgres` (PostgreSQL: point selects and a
 * read/write mix on kept connections, point selects with a connection per
 * query) and `redis-mariadb` (redis-server and MariaDB side by side: Redis
 * SET and GET at pipeline 16, MariaDB point selects and the read/write mix),
 * tcp against unix, with each server's CPU per op (its cgroup, the backends
 * it forks included).
 *
 * Each database is built from Debian's packages in the private directory: a
 * data directory made by its own tool (initdb, mariadb-install-db) and the
 * server, both run as the server's own unprivileged user (PostgreSQL refuses
 * root; "nobody" when that user is missing), on a free port on 127.0.0.1 and
 * a socket in a 0700 directory of that user's; durability off (fsync off,
 * the log flushed once a second), as the hop, not the disk, is measured.
 * Each asks for a password made for the stack (login.c: a 0600 file in that
 * directory, which the run children read with --password-file), so that no
 * other local user can log in over 127.0.0.1 while it runs: PostgreSQL's
 * password method (one round trip of the same cost on both transports; as
 * the password then goes in clear, to the stack's own server, the checks and
 * the run children name that way, --auth-method password), MariaDB's
 * mysql_native_password for its user bench; MariaDB's root, with no
 * password, logs in over the socket only. The stack says both. A
 * sysbench-like table, sbtest1 (id primary key, k indexed, c, pad: 10,000
 * rows), is made through hopbench's own client codecs before measuring.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "stack/login.h"
#include "stack/measure.h"
#include "stack/redis.h"
#include "stack/stack.h"

/* PostgreSQL's server and initdb: of the newest version installed (15 on Debian 12) */
#define PG_INITDB   "/usr/lib/postgresql/*/bin/initdb"
#define PG_POSTGRES "/usr/lib/postgresql/*/bin/postgres"
#define MY_INSTALL  "/usr/bin/mariadb-install-db"
#define MY_SERVER   "/usr/sbin/mariadbd"
#define DB_ROWS     10000
#define DB_TASK_NS  (120 * NS_PER_S) /* initdb, mariadb-install-db */
#define DB_READY_NS (60 * NS_PER_S)
#define DB_SQL_NS   (30 * NS_PER_S) /* one statement of the set-up */
/* The Redis-MariaDB study's load: sysbench's 16 threads, redis-benchmark's 50 clients. */
#define DB_STUDY_CONNS    16u
#define REDIS_STUDY_CONNS 50u

/*
 * What the cells send: a row by its primary key; the mix adds 1 UPDATE to 4
 * of them, each statement of a row drawn at random (as sysbench's oltp tests
 * do), so that connections do not queue on one row's lock.
 */
#define SQL_POINT   "SELECT c FROM sbtest1 WHERE id = 5000"
#define SQL_ID      "{id:1-10000}" /* a row of the DB_ROWS, uniform per request */
#define MIX_POINT   "SELECT c FROM sbtest1 WHERE id = " SQL_ID
#define SQL_UPDATE  "UPDATE sbtest1 SET k = k + 1 WHERE id = " SQL_ID
#define MIX_SELECTS "4"
#define MIX_UPDATES "1"

/* The table, as sysbench's oltp tests make it (its rows: the INSERT of pg_start, my_start). */
static const char pg_table[] = "CREATE TABLE sbtest1 (id integer PRIMARY KEY, k integer NOT NULL "
                               "DEFAULT 0, c char(120) NOT NULL DEFAULT '', pad char(60) NOT "
                               "NULL DEFAULT '')";
static const char my_table[] = "CREATE TABLE sbtest1 (id INTEGER NOT NULL, k INTEGER NOT NULL "
                               "DEFAULT 0, c CHAR(120) NOT NULL DEFAULT '', pad CHAR(60) NOT NULL "
                               "DEFAULT '', PRIMARY KEY (id), KEY k_1 (k)) ENGINE=InnoDB";
static const char my_grant[] = "GRANT SELECT, UPDATE ON sbtest.* TO 'bench'@'localhost', "
                               "'bench'@'127.0.0.1'";

/* A database server of the stack: where it listens, who it runs as. */
struct db_srv {
    const char *svc; /* the service's name */
    unsigned port;
    char dir[PATH_MAX - 64]; /* its own directory: data/ and the socket */
    char sock[PATH_MAX];     /* the socket file */
    struct login who;        /* its user; the password made for the stack, in dir */
    const char *auth;        /* pg: the --auth-method its clients name; else NULL */
};

/*
 * The server's port, its own directory (owned by its user), the password
 * made for it there and its data directory's path.
 */
static int db_prepare(struct stack_ctx *c, struct db_srv *db, const char *user, char *data,
                      size_t cap, struct hb_err *err)
{
    int rc = login_user(&db->who, db->svc, user, err);

    if (rc == 0) rc = stack_free_port(&db->port, err);
    if (rc == 0) rc = sup_mkdir(&c->sup, db->svc, db->who.as, err);
    if (rc < 0) return rc;
    sup_path(&c->sup, db->svc, db->dir, sizeof(db->dir));
    if (snprintf(data, cap, "%s/data", db->dir) >= (int)cap)
        return hb_fail(err, -ENAMETOOLONG, "path too long: %s", db->dir);
    return login_secret(&db->who, db->dir, err);
}

/* The check's log-in (pg's or mysql's options, as its protocol is): a NULL keeps what it was. */
static void db_login(struct sup_check *chk, const char *user, const char *database,
                     const char *password)
{
    bool pg = strcmp(chk->proto, "pg") == 0;
    const char **u = pg ? &chk->opts.pg.user : &chk->opts.mysql.user;
    const char **d = pg ? &chk->opts.pg.database : &chk->opts.mysql.database;
    const char **p = pg ? &chk->opts.pg.password : &chk->opts.mysql.password;

    if (user != NULL) *u = user;
    if (database != NULL) *d = database;
    if (password != NULL) *p = password;
}

/* The check's statement. */
static void db_statement(struct sup_check *chk, const char *sql)
{
    if (strcmp(chk->proto, "pg") == 0)
        chk->opts.pg.sql.text = sql;
    else
        chk->opts.mysql.sql.text = sql;
}

/* A check of protocol proto at ep ("tcp://..." or "unix:..."), logged in as user to database. */
static int db_check(struct sup_check *chk, const struct db_srv *db, const char *proto,
                    const char *ep, const char *user, const char *database, struct hb_err *err)
{
    memset(chk, 0, sizeof(*chk));
    chk->svc = db->svc;
    chk->proto = proto;
    db_login(chk, user, database, NULL);
    db_statement(chk, "SELECT 1");
    return endpoint_parse(&chk->ep, ep, err);
}

/* Runs the set-up's statements, each on a new session of chk; one line names the one refused. */
static int db_exec(const struct sup_check *chk, const char *const *sqls, struct hb_err *err)
{
    for (unsigned i = 0; sqls[i] != NULL; i++) {
        struct sup_check one = *chk;
        char why[128] = "";
        db_statement(&one, sqls[i]);
        if (sup_ask(&one, DB_SQL_NS, why, sizeof(why)) < 0)
            return hb_fail(err, -EPROTO, "%s: setting up the table: '%.60s' failed: %s", chk->svc,
                           sqls[i], why);
    }
    return 0;
}

/* "tcp://127.0.0.1:PORT" and "unix:SOCK" of db. */
static void db_eps(const struct db_srv *db, char *tcp, char *unix_ep, size_t cap)
{
    snprintf(tcp, cap, "tcp://127.0.0.1:%u", db->port);
    snprintf(unix_ep, cap, "unix:%s", db->sock);
}

/* Starts the server of spec, waits for the checks, prints where it listens. */
static int db_run_server(struct stack_ctx *c, struct db_srv *db, const struct sup_spec *spec,
                         const struct sup_check *checks, unsigned n, struct hb_err *err)
{
    int rc = sup_start(&c->sup, spec, err);

    if (rc == 0) rc = sup_wait_ready(&c->sup, checks, n, DB_READY_NS, c->stop, err);
    if (rc < 0) return rc;
    const struct sup_svc *v = sup_find(&c->sup, db->svc);
    fprintf(c->out, "%s: %s pid %ld (user %s) on tcp://127.0.0.1:%u and unix:%s\ncgroup: %s\n",
            db->svc, strrchr(spec->argv[0], '/') + 1, (long)v->pid, db->who.user, db->port,
            db->sock, sup_cgroup_cpu(v));
    if (db->auth != NULL) /* PostgreSQL's */
        fprintf(c->out,
                "%s: authentication %s: the password in clear on both transports, to the "
                "stack's own server (the runs name it: --auth-method %s)\n",
                db->svc, db->auth, db->auth);
    else /* MariaDB's: bench is made with it (my_bench_user) */
        fprintf(c->out,
                "%s: authentication mysql_native_password (user bench; root, which has no "
                "password, over the socket only)\n",
                db->svc);
    login_say(&db->who, c->out);
    fflush(c->out);
    return 0;
}

/* PostgreSQL: initdb, postgres, the table (in database postgres, user postgres, a password). */
static int pg_start(struct stack_ctx *c, struct db_srv *db, struct hb_err *err)
{
    char data[PATH_MAX], port[16], tcp[PATH_MAX + 16], unix_ep[PATH_MAX + 16];
    char fill[160], server[PATH_MAX], initdb[PATH_MAX + 8];
    struct sup_check checks[2];
    int rc;

    db->svc = "postgres";
    /* the newest postgres installed, and initdb of the same version: its directory's */
    rc = sup_need(PG_POSTGRES, "postgresql", server, sizeof(server), err);
    if (rc == 0 && (size_t)snprintf(initdb, sizeof(initdb), "%.*s/initdb",
                                    (int)(strrchr(server, '/') - server), server) >= sizeof(initdb))
        rc = hb_fail(err, -ENAMETOOLONG, "path too long: %s", server);
    if (rc == 0) rc = sup_need(initdb, "postgresql", NULL, 0, err);
    if (rc == 0) rc = db_prepare(c, db, "postgres", data, sizeof(data), err);
    if (rc < 0) return rc;
    const char *init[] = { initdb,          "-D", data,       "-A",        "password", "--pwfile",
                           db->who.pw_file, "-U", "postgres", "--no-sync", NULL };
    struct sup_spec task = { .name = "pg-initdb", .argv = init, .as = db->who.as };
    rc = sup_task(&c->sup, &task, DB_TASK_NS, c->stop, err);
    if (rc < 0) return rc;
    snprintf(port, sizeof(port), "%u", db->port);
    snprintf(db->sock, sizeof(db->sock), "%s/.s.PGSQL.%u", db->dir, db->port);
    const char *argv[] = { server,
                           "-D",
                           data,
                           "-h",
                           "127.0.0.1",
                           "-p",
                           port,
                           "-k",
                           db->dir,
                           "-c",
                           "fsync=off",
                           "-c",
                           "synchronous_commit=off",
                           "-c",
                           "full_page_writes=off",
                           "-c",
                           "max_connections=200",
                           NULL };
    struct sup_spec spec = { .name = "postgres", .argv = argv, .as = db->who.as };
    db_eps(db, tcp, unix_ep, sizeof(tcp));
    rc = db_check(&checks[0], db, "pg", tcp, "postgres", "postgres", err);
    if (rc == 0) rc = db_check(&checks[1], db, "pg", unix_ep, "postgres", "postgres", err);
    checks[0].opts.pg.password = checks[1].opts.pg.password = db->who.pw;
    db->auth = "password"; /* initdb -A password: asked for in clear */
    checks[0].opts.pg.auth_methods = checks[1].opts.pg.auth_methods = CODEC_AUTH_PASSWORD;
    if (rc == 0) rc = db_run_server(c, db, &spec, checks, 2, err);
    if (rc < 0) return rc;
    snprintf(fill, sizeof(fill),
             "INSERT INTO sbtest1 SELECT g, g %% 1000, repeat('c', 119), repeat('p', 59) "
             "FROM generate_series(1, %d) g",
             DB_ROWS);
    const char *setup[] = { pg_table, fill, "CREATE INDEX k_1 ON sbtest1 (k)",
                            "VACUUM ANALYZE sbtest1", NULL };
    return db_exec(&checks[1], setup, err);
}

/*
 * CREATE USER bench at localhost and 127.0.0.1 with mysql_native_password
 * (MariaDB's own default: a challenge and response, no server key needed over
 * TCP) and the password made for the stack, given by its stored form, '*' and
 * SHA1(SHA1(pw)) in hex, so that the statement (and a message that quotes
 * it) does not hold the password itself.
 */
static int my_bench_user(const char *pw, char *sql, size_t cap)
{
    unsigned char h1[EVP_MAX_MD_SIZE], h2[EVP_MAX_MD_SIZE];
    unsigned n1 = 0, n2 = 0;
    char hex[2 * 20 + 1];

    if (!EVP_Digest(pw, strlen(pw), h1, &n1, EVP_sha1(), NULL) ||
        !EVP_Digest(h1, n1, h2, &n2, EVP_sha1(), NULL) || n2 != 20)
        return -EIO;
    for (size_t i = 0; i < n2; i++)
        snprintf(hex + 2 * i, 3, "%02X", h2[i]);
    snprintf(sql, cap,
             "CREATE USER 'bench'@'localhost' IDENTIFIED VIA mysql_native_password USING '*%s', "
             "'bench'@'127.0.0.1' IDENTIFIED VIA mysql_native_password USING '*%s'",
             hex, hex);
    return 0;
}

/*
 * MariaDB: mariadb-install-db, mariadbd, database sbtest, the table, user
 * bench with the password made for the stack; every other account (root
 * without a password) over the socket only, in its 0700 directory.
 */
static int my_start(struct stack_ctx *c, struct db_srv *db, struct hb_err *err)
{
    char data[PATH_MAX], a_data[PATH_MAX + 16], a_sock[PATH_MAX + 16], a_pid[PATH_MAX + 16];
    char a_port[32], tcp[PATH_MAX + 16], unix_ep[PATH_MAX + 16], fill[160], bench[256];
    struct sup_check checks[2];
    int rc;

    db->svc = "mariadb";
    rc = db_prepare(c, db, "mysql", data, sizeof(data), err);
    if (rc < 0) return rc;
    snprintf(a_data, sizeof(a_data), "--datadir=%s", data);
    const char *init[] = { MY_INSTALL,       "--no-defaults",
                           a_data,           "--auth-root-authentication-method=normal",
                           "--skip-test-db", NULL };
    struct sup_spec task = { .name = "mariadb-install-db", .argv = init, .as = db->who.as };
    rc = sup_task(&c->sup, &task, DB_TASK_NS, c->stop, err);
    if (rc < 0) return rc;
    snprintf(db->sock, sizeof(db->sock), "%s/mysqld.sock", db->dir);
    snprintf(a_sock, sizeof(a_sock), "--socket=%s", db->sock);
    snprintf(a_pid, sizeof(a_pid), "--pid-file=%s/mysqld.pid", db->dir);
    snprintf(a_port, sizeof(a_port), "--port=%u", db->port);
    const char *argv[] = { MY_SERVER,
                           "--no-defaults",
                           a_data,
                           a_sock,
                           a_pid,
                           a_port,
                           "--bind-address=127.0.0.1",
                           "--skip-name-resolve",
                           "--innodb-buffer-pool-size=32M",
                           "--innodb-flush-log-at-trx-commit=2",
                           "--max-connections=300",
                           NULL };
    struct sup_spec spec = { .name = "mariadb", .argv = argv, .as = db->who.as };
    db_eps(db, tcp, unix_ep, sizeof(tcp));
    /* root logs in over the socket only; bench, made below, over both */
    rc = db_check(&checks[0], db, "mysql", unix_ep, "root", NULL, err);
    if (rc == 0) rc = db_run_server(c, db, &spec, checks, 1, err);
    if (rc < 0) return rc;
    snprintf(fill, sizeof(fill),
             "INSERT INTO sbtest1 SELECT seq, seq %% 1000, REPEAT('c', 119), REPEAT('p', 59) "
             "FROM seq_1_to_%d",
             DB_ROWS);
    if (my_bench_user(db->who.pw, bench, sizeof(bench)) < 0)
        return hb_fail(err, -EIO, "mariadb: cannot hash the password of user bench");
    const char *make_db[] = { "CREATE DATABASE sbtest", NULL };
    const char *setup[] = { my_table, fill, "ANALYZE TABLE sbtest1",
                            /* the accounts without a password (root, the anonymous ones) that
                             * are not socket-only go: only bench logs in over TCP */
                            "DELETE FROM mysql.global_priv WHERE Host <> 'localhost'",
                            "DELETE FROM mysql.global_priv WHERE User = ''", "FLUSH PRIVILEGES",
                            bench, my_grant, NULL };
    rc = db_exec(&checks[0], make_db, err);
    db_login(&checks[0], NULL, "sbtest", NULL);
    if (rc == 0) rc = db_exec(&checks[0], setup, err);
    if (rc == 0) rc = db_check(&checks[1], db, "mysql", tcp, "bench", "sbtest", err);
    db_login(&checks[1], NULL, NULL, db->who.pw);
    if (rc == 0) rc = sup_wait_ready(&c->sup, &checks[1], 1, DB_READY_NS, c->stop, err);
    return rc;
}

/* The arguments every database cell's run child gets: the protocol, both endpoints, the login. */
static void db_args(struct stack_args *a, const struct db_srv *db, const char *proto,
                    const char *user, const char *database)
{
    stack_arg(a, "hopbench");
    stack_arg(a, "run");
    stack_arg(a, "%s", proto);
    stack_arg(a, "tcp://127.0.0.1:%u", db->port);
    stack_arg(a, "unix:%s", db->sock);
    stack_arg(a, "--user");
    stack_arg(a, "%s", user);
    stack_arg(a, "--database");
    stack_arg(a, "%s", database);
    if (db->who.pw[0] != '\0') {
        stack_arg(a, "--password-file");
        stack_arg(a, "%s", db->who.pw_file);
    }
    if (db->auth != NULL) {
        stack_arg(a, "--auth-method");
        stack_arg(a, "%s", db->auth);
    }
}

/* A point select of one row, or the read/write mix: 4 point selects to 1 UPDATE, of random rows. */
static void db_sql(struct stack_args *a, bool mix)
{
    stack_arg(a, "--sql");
    if (!mix) {
        stack_arg(a, SQL_POINT);
        return;
    }
    stack_arg(a, MIX_SELECTS ":" MIX_POINT);
    stack_arg(a, "--sql");
    stack_arg(a, MIX_UPDATES ":" SQL_UPDATE);
}

/* Measures cell (args built) with the one service svc, after saying so. */
static int db_measure(struct stack_ctx *c, struct stack_args *a, struct stack_cell *cell,
                      const char *svc, struct hb_err *err)
{
    const char *names[] = { svc, NULL };
    int rc;

    stack_services(c, a, names);
    fprintf(c->out, "measuring %s ...\n", cell->label);
    fflush(c->out);
    rc = stack_measure(c, a, cell, err);
    if (rc == 0) rc = sup_alive(&c->sup, err);
    return rc;
}

/* The line of what the cells are, after the servers' lines. */
static void db_plan(struct stack_ctx *c, const char *cells)
{
    fprintf(c->out,
            "cells: %s; tcp and unix %u times each in ABBA order, %.2f s after %.2f s warm-up, "
            "%u connection(s)\n",
            cells, c->reps, (double)c->duration_ns / 1e9, (double)c->warmup_ns / 1e9, c->conns);
    fflush(c->out);
}

/* A start that a stop signal cut short is an interrupted stack, not an error. */
static int db_started(struct stack_ctx *c, int rc)
{
    if (rc != -EINTR) return rc;
    c->interrupted = true;
    return 0;
}

static int postgres_run(struct stack_ctx *c, struct hb_err *err)
{
    static const char *const labels[] = { "point select", "read-write mix",
                                          "point select connect" };
    struct stack_cell cells[3];
    struct db_srv pg;
    unsigned n = 0;
    int rc;

    memset(&pg, 0, sizeof(pg));
    rc = pg_start(c, &pg, err);
    if (rc < 0 || stack_stopping(c)) return db_started(c, rc);
    db_plan(c, "point select, read-write mix (4 selects : 1 update), point select with a "
               "connection per query");
    memset(cells, 0, sizeof(cells));
    stack_plan(c, ARRAY_LEN(labels), 2 * c->reps);
    for (unsigned i = 0; i < ARRAY_LEN(labels) && rc == 0 && !stack_stopping(c); i++) {
        struct stack_cell *cell = &cells[n++];
        struct stack_args a = { .n = 0 };
        stack_cell_init(cell, labels[i], "tcp", "unix");
        db_args(&a, &pg, "pg", "postgres", "postgres");
        db_sql(&a, i == 1);
        if (i == 2) {
            stack_arg(&a, "--mode");
            stack_arg(&a, "connect");
        }
        rc = db_measure(c, &a, cell, "postgres", err);
    }
    if (n > 0) stack_table(c->out, cells, n);
    return rc;
}

static int redis_mariadb_run(struct stack_ctx *c, struct hb_err *err)
{
    static const char *const cmds[] = { "set", "get" };
    struct stack_cell cells[4];
    static struct stack_redis r;
    struct db_srv my;
    unsigned n = 0;
    int rc;

    memset(&my, 0, sizeof(my));
    rc = stack_redis_start(c, &r, err);
    if (rc == 0) {
        const struct sup_svc *v = sup_find(&c->sup, "redis");
        fprintf(c->out,
                "redis: redis-server pid %ld on tcp://127.0.0.1:%u and unix:%s\ncgroup: %s\n",
                (long)v->pid, r.port, r.sock, sup_cgroup_cpu(v));
        rc = my_start(c, &my, err);
    }
    if (rc < 0 || stack_stopping(c)) return db_started(c, rc);
    char what[160];
    snprintf(what, sizeof(what),
             "redis SET, GET at pipeline 16 (%u connection(s)); mariadb point select, read-write "
             "mix (4 selects : 1 update)",
             stack_conns(c, REDIS_STUDY_CONNS));
    db_plan(c, what);
    memset(cells, 0, sizeof(cells));
    stack_plan(c, ARRAY_LEN(cells), 2 * c->reps);
    for (unsigned i = 0; i < 2 && rc == 0 && !stack_stopping(c); i++) {
        struct stack_cell *cell = &cells[n++];
        struct stack_args a = { .n = 0 };
        char label[48];
        snprintf(label, sizeof(label), "redis %s pipeline 16", cmds[i]);
        stack_cell_init(cell, label, "tcp", "unix");
        cell->conns = stack_conns(c, REDIS_STUDY_CONNS);
        stack_redis_args(&a, &r, cmds[i], 16);
        rc = db_measure(c, &a, cell, "redis", err);
    }
    for (unsigned i = 0; i < 2 && rc == 0 && !stack_stopping(c); i++) {
        struct stack_cell *cell = &cells[n++];
        struct stack_args a = { .n = 0 };
        stack_cell_init(cell, i == 0 ? "mariadb point select" : "mariadb read-write mix", "tcp",
                        "unix");
        db_args(&a, &my, "mysql", "bench", "sbtest");
        db_sql(&a, i == 1);
        rc = db_measure(c, &a, cell, "mariadb", err);
    }
    if (n > 0) stack_table(c->out, cells, n);
    return rc;
}

static const char postgres_help[] =
    "usage: hopbench stack postgres [--short] [--reps N] [-d S] [--warmup S] [-c N]\n"
    "                               [--jsonl FILE] [--csv FILE] [-q] [--hold]\n"
    "\n"
    "Builds: Debian's PostgreSQL, the newest installed (package postgresql: 15 on Debian\n"
    "12): initdb and postgres run as the user postgres (PostgreSQL refuses root), its data\n"
    "directory in a private temporary directory, its own port on 127.0.0.1 and its socket\n"
    "there, password authentication (a random password made for the stack, in a 0600 file\n"
    "of postgres's directory: its run children get --password-file, and --auth-method\n"
    "password as the password goes in clear to this private server), fsync and\n"
    "synchronous_commit off;\n"
    "in its own cgroups made for the run under hopbench's own. A sysbench-like table\n"
    "sbtest1 (id primary key, k indexed, c, pad; 10,000 rows) in database postgres.\n"
    "Measures: 'hopbench run pg' over tcp and over unix, each transport --reps times in\n"
    "ABBA order: a point select (" SQL_POINT "),\n"
    "a read/write mix (4 point selects to 1 " SQL_UPDATE ",\n"
    "the selects' ids too: a row drawn at random per statement),\n"
    "both on kept connections, and the point select with a connection per query\n"
    "(--mode connect: a backend forked per query, as pgbench -C); per cell, for tcp, unix\n"
    "and unix/tcp (a 95 % interval, '~' when not significant): ops/s, p50, p99, CPU per\n"
    "op of the client, of PostgreSQL (the service postgres: its cgroup, every backend\n"
    "included), their sum and the system; its PSS and working set; TIME_WAIT per side.\n"
    "Every reply is checked; an error fails the gate (exit 2).\n"
    "Takes: 3 cells x 2 transports x --reps (default 4) x (-d 2 s + --warmup 0.5 s), about\n"
    "70 s with the set-up; --short (2 reps of 0.3 s after 0.1 s) about 15 s and is a check,\n"
    "not a result.\n"
    "\n" STACK_HELP_OPTIONS("16");

static const char redis_mariadb_help[] =
    "usage: hopbench stack redis-mariadb [--short] [--reps N] [-d S] [--warmup S] [-c N]\n"
    "                                    [--jsonl FILE] [--csv FILE] [-q] [--hold]\n"
    "\n"
    "Builds: Debian's redis-server (package redis-server), as 'stack redis' does, and\n"
    "MariaDB (package mariadb-server): mariadb-install-db and mariadbd run as the user\n"
    "mysql, its data directory in the private temporary directory, its own port on\n"
    "127.0.0.1 and its socket there, the InnoDB log flushed once a second; in their own\n"
    "cgroups made for the run under hopbench's own. A sysbench-like table sbtest1 (id\n"
    "primary key, k indexed, c, pad; 10,000 rows) in database sbtest, user bench with\n"
    "mysql_native_password and a random password made for the stack (in a 0600 file of\n"
    "mysql's directory: its run children get --password-file); root, without one, over the\n"
    "socket only (a 0700 directory), no other account over TCP.\n"
    "Measures: the Redis-MariaDB study's table, over tcp and over unix, each transport\n"
    "--reps times in ABBA order: 'hopbench run redis' SET and GET at pipeline 16 (1000\n"
    "keys, 64 B values); 'hopbench run mysql' a point select\n"
    "(" SQL_POINT ") and a read/write mix (4 point selects to 1\n" SQL_UPDATE
    ",\nthe selects' ids too: a row drawn at random per statement"
    ");\nper cell, for tcp, unix and unix/tcp (a 95 % interval, '~' when not significant):\n"
    "ops/s, p50, p99, CPU per op of the client, of the server measured (the\n"
    "service redis or mariadb: its cgroup), their sum and the system; its PSS and working\n"
    "set; TIME_WAIT per side. Every reply is checked; an error fails the gate (exit 2).\n"
    "Takes: 4 cells x 2 transports x --reps (default 4) x (-d 2 s + --warmup 0.5 s), about\n"
    "90 s with the set-up; --short (2 reps of 0.3 s after 0.1 s) about 20 s and is a check,\n"
    "not a result.\n"
    "\n" STACK_HELP_OPTIONS("16; the redis cells 50");

static const char *const postgres_needs[] = { PG_INITDB, "postgresql", PG_POSTGRES, "postgresql",
                                              NULL };
static const char *const redis_mariadb_needs[] = { "/usr/bin/redis-server",
                                                   "redis-server",
                                                   MY_INSTALL,
                                                   "mariadb-server",
                                                   MY_SERVER,
                                                   "mariadb-server",
                                                   NULL };

const struct stack_def stack_postgres = {
    .name = "postgres",
    .summary = "PostgreSQL: point selects, a read/write mix, a connection per query; tcp vs unix",
    .help = postgres_help,
    .needs = postgres_needs,
    .run = postgres_run,
    .front_unix = true,
    .conns = DB_STUDY_CONNS,
};

const struct stack_def stack_redis_mariadb = {
    .name = "redis-mariadb",
    .summary = "redis SET/GET at pipeline 16, MariaDB point selects and a read/write mix",
    .help = redis_mariadb_help,
    .needs = redis_mariadb_needs,
    .run = redis_mariadb_run,
    .front_unix = true,
    .conns = DB_STUDY_CONNS,
};
