/*
 * users: the passwd and group files read entry by entry (users.h).
 */
#include "stack/users.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>

int users_lookup(const char *passwd, const char *group, const char *name, struct users_id *id)
{
    FILE *f = fopen(passwd, "re");
    const struct passwd *pw;
    const struct group *gr;
    int rc = -ENOENT;

    if (f == NULL) return -errno;
    memset(id, 0, sizeof(*id));
    while ((pw = fgetpwent(f)) != NULL)
        if (strcmp(pw->pw_name, name) == 0) {
            id->uid = pw->pw_uid;
            id->gid = pw->pw_gid;
            rc = 0;
            break;
        }
    fclose(f);
    if (rc < 0 || (f = fopen(group, "re")) == NULL) return rc;
    while ((gr = fgetgrent(f)) != NULL && id->ngroups < USERS_MAX_GROUPS)
        for (char *const *m = gr->gr_mem; m != NULL && *m != NULL; m++)
            if (strcmp(*m, name) == 0) {
                id->groups[id->ngroups++] = gr->gr_gid;
                break;
            }
    fclose(f);
    return 0;
}

int users_name_of_uid(const char *passwd, uid_t uid, char *buf, size_t cap)
{
    FILE *f = fopen(passwd, "re");
    const struct passwd *pw;
    int rc = -ENOENT;

    if (f == NULL) return -errno;
    while (rc < 0 && (pw = fgetpwent(f)) != NULL)
        if (pw->pw_uid == uid) {
            snprintf(buf, cap, "%s", pw->pw_name);
            rc = 0;
        }
    fclose(f);
    return rc;
}

int users_name_of_gid(const char *group, gid_t gid, char *buf, size_t cap)
{
    FILE *f = fopen(group, "re");
    const struct group *gr;
    int rc = -ENOENT;

    if (f == NULL) return -errno;
    while (rc < 0 && (gr = fgetgrent(f)) != NULL)
        if (gr->gr_gid == gid) {
            snprintf(buf, cap, "%s", gr->gr_name);
            rc = 0;
        }
    fclose(f);
    return rc;
}

/* Whether g is id's primary group or one it is a member of. */
static bool in_groups(const struct users_id *id, gid_t g)
{
    if (g == id->gid) return true;
    for (unsigned i = 0; i < id->ngroups; i++)
        if (id->groups[i] == g) return true;
    return false;
}

bool users_may(const struct users_id *id, const struct stat *st, unsigned bit)
{
    unsigned mode = (unsigned)st->st_mode;

    if (id->uid == 0) return true;
    if (st->st_uid == id->uid) return (mode & (bit << 6)) != 0;
    if (in_groups(id, st->st_gid)) return (mode & (bit << 3)) != 0;
    return (mode & bit) != 0;
}
