/*
 * users: who a user is and what the kernel lets it do with a path, read
 * straight from the passwd and group files (fgetpwent, fgetgrent) rather than
 * through the C library's name service, so that a static binary needs no NSS
 * module at run time. Users and groups served only by a directory service
 * (LDAP, sssd) are not seen: the stacks' web server workers are local users.
 */
#ifndef HOPBENCH_STACK_USERS_H
#define HOPBENCH_STACK_USERS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#define USERS_PASSWD     "/etc/passwd"
#define USERS_GROUP      "/etc/group"
#define USERS_MAX_GROUPS 64

/* The identity the kernel checks a path's permissions against. */
struct users_id {
    uid_t uid;
    gid_t gid;                      /* the primary group */
    gid_t groups[USERS_MAX_GROUPS]; /* the groups that list the user as a member */
    unsigned ngroups;
};

/*
 * The user called name from the passwd file, with the groups of the group
 * file that list it as a member (at most USERS_MAX_GROUPS; a group file that
 * cannot be read gives none). Returns 0, -ENOENT when there is no such user,
 * or the negative errno of opening passwd.
 */
int users_lookup(const char *passwd, const char *group, const char *name, struct users_id *id);

/* The name of user uid (passwd file) or group gid (group file) into buf: 0, or -ENOENT. */
int users_name_of_uid(const char *passwd, uid_t uid, char *buf, size_t cap);
int users_name_of_gid(const char *group, gid_t gid, char *buf, size_t cap);

/*
 * Whether id has permission bit (1 execute/search, 2 write, 4 read) on st,
 * from its user, group or other bits as the kernel picks them (root: always).
 */
bool users_may(const struct users_id *id, const struct stat *st, unsigned bit);

#endif
