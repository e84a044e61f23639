/*
 * login: a server's user and its password (login.h).
 */
#include "stack/login.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

int login_user(struct login *l, const char *svc, const char *name, struct hb_err *err)
{
    const char *who = name;
    int rc;

    l->svc = svc;
    l->as = NULL;
    if (users_name_of_uid(USERS_PASSWD, geteuid(), l->user, sizeof(l->user)) < 0)
        snprintf(l->user, sizeof(l->user), "%ld", (long)geteuid());
    if (geteuid() != 0) return 0;
    rc = users_lookup(USERS_PASSWD, USERS_GROUP, who, &l->id);
    if (rc == -ENOENT) rc = users_lookup(USERS_PASSWD, USERS_GROUP, who = "nobody", &l->id);
    if (rc < 0)
        return hb_fail(err, rc, "no user %s nor nobody in %s to run %s as (not as root)", name,
                       USERS_PASSWD, svc);
    l->as = &l->id;
    snprintf(l->user, sizeof(l->user), "%s", who);
    return 0;
}

int login_secret(struct login *l, const char *dir, struct hb_err *err)
{
    uint8_t raw[LOGIN_PW_BYTES];
    size_t len = 2 * sizeof(raw);
    int fd, rc = 0;

    if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw))
        return hb_fail(err, -EIO, "%s: no random bytes for its password", l->svc);
    for (size_t i = 0; i < sizeof(raw); i++)
        snprintf(l->pw + 2 * i, 3, "%02x", raw[i]);
    if (snprintf(l->pw_file, sizeof(l->pw_file), "%s/pw", dir) >= (int)sizeof(l->pw_file))
        return hb_fail(err, -ENAMETOOLONG, "path too long: %s", dir);
    fd = open(l->pw_file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd == -1) return hb_fail(err, -errno, "cannot write %s: %s", l->pw_file, strerror(errno));
    if (fchmod(fd, 0600) == -1 || write(fd, l->pw, len) != (ssize_t)len ||
        (l->as != NULL && fchown(fd, l->as->uid, l->as->gid) == -1))
        rc = hb_fail(err, -errno, "cannot write %s: %s", l->pw_file, strerror(errno));
    close(fd);
    return rc;
}

void login_say(const struct login *l, FILE *out)
{
    fprintf(out,
            "%s: user %s; a password made for the stack in %s (0600, in a 0700 directory of "
            "%s's), given to the run children with --password-file\n",
            l->svc, l->user, l->pw_file, l->user);
}
