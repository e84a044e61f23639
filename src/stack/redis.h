/*
 * redis: the stacks' redis-server (redis.c), which the redis stack and
 * redis-mariadb (db.c) both start and load the same way.
 */
#ifndef HOPBENCH_STACK_REDIS_H
#define HOPBENCH_STACK_REDIS_H

#include <limits.h>

#include "stack/login.h"
#include "stack/measure.h"
#include "stack/stack.h"
#include "util.h"

/* The stacks' redis-server (redis.c): where it listens, who it runs as, its password. */
struct stack_redis {
    unsigned port; /* on 127.0.0.1 */
    char sock[PATH_MAX];
    struct login who; /* the user redis; requirepass, in its directory's pw */
};

/*
 * Starts redis-server as the service "redis" (redis.c), as the user redis
 * (nobody when missing) when hopbench is root, in a 0700 directory of its
 * own: a free port on 127.0.0.1, its socket there, requirepass with a
 * password made for the stack; waits for its PING (after AUTH) on both.
 * Returns 0, -EINTR on a stop signal, or a negative errno with err set.
 */
int stack_redis_start(struct stack_ctx *c, struct stack_redis *r, struct hb_err *err);

/*
 * The run children's arguments of a redis cell: SET or GET (cmd) over 1000
 * keys, both endpoints, the password by file.
 */
void stack_redis_args(struct stack_args *a, const struct stack_redis *r, const char *cmd,
                      unsigned pipeline);

#endif
