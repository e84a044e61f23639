/*
 * kv: the cells of a key-value stack (redis, memcached): set, then get, each
 * at pipeline 1 and at pipeline 16, tcp against unix, every service of the
 * stack measured from its cgroup.
 */
#ifndef HOPBENCH_STACK_KV_H
#define HOPBENCH_STACK_KV_H

#include "stack/measure.h"
#include "stack/stack.h"

/* A run child's arguments for command cmd ("set", "get") at pipeline against the stack's srv. */
typedef void (*stack_kv_args)(struct stack_args *a, const void *srv, const char *cmd,
                              unsigned pipeline);

/*
 * Plans and measures the four cells ("set pipeline 1" ...), each with args'
 * arguments and the services names (NULL-terminated), the services checked
 * alive after each; prints the table of those measured. Returns 0 or a
 * negative errno with err set.
 */
int stack_kv_cells(struct stack_ctx *c, const char *const *names, stack_kv_args args,
                   const void *srv, struct hb_err *err);

#endif
