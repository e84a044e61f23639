/*
 * login: who a stack's server runs as and the password made for it. As root
 * a server runs as its own unprivileged user (its package's: redis, mysql,
 * postgres; nobody when that user is missing), never as root; its directory
 * (sup_mkdir: 0700, that user's) holds its socket and its password file, so
 * that no other local user reaches either. Not root, both are hopbench's own.
 */
#ifndef HOPBENCH_STACK_LOGIN_H
#define HOPBENCH_STACK_LOGIN_H

#include <limits.h>
#include <stdio.h>

#include "stack/users.h"
#include "util.h"

#define LOGIN_PW_BYTES 16 /* random bytes of a password, written in hex */

struct login {
    const char *svc; /* the service, for messages */
    struct users_id id;
    const struct users_id *as; /* &id, or NULL when hopbench is not root */
    char user[32];
    char pw[2 * LOGIN_PW_BYTES + 1]; /* the password made for the stack; "" before login_secret */
    char pw_file[PATH_MAX];          /* the file that holds it: 0600, the user's */
};

/*
 * svc's user: name (else nobody) when hopbench is root, else hopbench's own
 * (l->as NULL). Returns 0, or a negative errno with err set.
 */
int login_user(struct login *l, const char *svc, const char *name, struct hb_err *err);

/*
 * A random password into l->pw, written to dir/pw (a new file, 0600, l's
 * user's): the run children read it with --password-file, a server's own
 * tool (initdb --pwfile) too. Returns 0, or a negative errno with err set.
 */
int login_secret(struct login *l, const char *dir, struct hb_err *err);

/*
 * The line that names the server's user and its password's file: "SVC: user
 * U; a password made for the stack in FILE ..." (after the stack's line that
 * says how the server authenticates).
 */
void login_say(const struct login *l, FILE *out);

#endif
