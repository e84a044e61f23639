/*
 * kv: the cells of a key-value stack (see kv.h).
 */
#include "stack/kv.h"

#include <stdio.h>
#include <string.h>

int stack_kv_cells(struct stack_ctx *c, const char *const *names, stack_kv_args args,
                   const void *srv, struct hb_err *err)
{
    static const char *const cmds[] = { "set", "get" };
    static const unsigned pipes[] = { 1, 16 };
    struct stack_cell cells[4];
    unsigned n = 0;
    int rc = 0;

    memset(cells, 0, sizeof(cells));
    stack_plan(c, 4, 2 * c->reps);
    for (unsigned i = 0; i < 2 && rc == 0; i++) {
        for (unsigned j = 0; j < 2 && rc == 0 && !stack_stopping(c); j++) {
            struct stack_cell *cell = &cells[n++];
            struct stack_args a = { .n = 0 };
            char label[48];
            snprintf(label, sizeof(label), "%s pipeline %u", cmds[i], pipes[j]);
            stack_cell_init(cell, label, "tcp", "unix");
            args(&a, srv, cmds[i], pipes[j]);
            stack_services(c, &a, names);
            fprintf(c->out, "measuring %s ...\n", cell->label);
            fflush(c->out);
            rc = stack_measure(c, &a, cell, err);
            if (rc == 0) rc = sup_alive(&c->sup, err);
        }
    }
    if (n > 0) stack_table(c->out, cells, n);
    return rc;
}
