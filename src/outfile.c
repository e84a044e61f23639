/*
 * outfile: output files written without ever replacing what is not the
 * user's regular file (the rules are in outfile.h). A path's symbolic links
 * are followed here, one readlink at a time, to find the name a replacement
 * is renamed over (and so the directory its temporary file must be made in),
 * and whether the path leads into /proc, to an open file. Only an absolute
 * /proc path is seen as one (/dev/stdout, /dev/fd/N, /proc/self/fd/N). What
 * the path leads to is then classified with stat(2), which follows the links
 * as the kernel does.
 */
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* As many links as the kernel follows in one path before ELOOP. */
#define OUTFILE_MAX_LINKS 40

/* How many temporary names are tried when one is taken (another writer, a crash). */
#define OUTFILE_TMP_TRIES 100

/* A new file's mode, less the umask: its owner writes it, others may read it. */
#define OUTFILE_NEW_MODE 0644

/* How a path is written. */
enum outfile_kind {
    KIND_REPLACE, /* a regular file, or none yet: a temporary file renamed over target */
    KIND_IN_PLACE /* a device or FIFO, or an open file reached through /proc */
};

static bool under_proc(const char *p)
{
    return strncmp(p, "/proc/", 6) == 0;
}

/*
 * Follows path's symbolic links into target as the kernel would, except that
 * the last one may dangle: target is then what is to be created. A relative
 * link is relative to the link's own directory. Stops at the first name that
 * is not a link or does not exist, or at one under /proc (*via_proc). 0,
 * -ELOOP, -ENAMETOOLONG or readlink's errno.
 */
static int follow_links(const char *path, char *target, size_t cap, bool *via_proc)
{
    char link[PATH_MAX];

    if (str_copy(target, cap, path) < 0) return -ENAMETOOLONG;
    for (int hops = 0; hops <= OUTFILE_MAX_LINKS; hops++) {
        *via_proc = under_proc(target);
        if (*via_proc) return 0;
        ssize_t n = readlink(target, link, sizeof(link) - 1);
        if (n == -1) return errno == EINVAL || errno == ENOENT || errno == ENOTDIR ? 0 : -errno;
        link[n] = '\0';
        if (link[0] == '/') {
            if (str_copy(target, cap, link) < 0) return -ENAMETOOLONG;
            continue;
        }
        const char *slash = strrchr(target, '/');
        size_t dir_len = slash != NULL ? (size_t)(slash - target) + 1 : 0;
        if (dir_len + (size_t)n + 1 > cap) return -ENAMETOOLONG;
        memcpy(target + dir_len, link, (size_t)n + 1);
    }
    return -ELOOP;
}

/* The kinds never written: a one-line reason, or NULL for a kind that is. */
static const char *refused_kind(mode_t mode)
{
    if (S_ISDIR(mode)) return "is a directory";
    if (S_ISBLK(mode)) return "is a block device (never written)";
    if (S_ISSOCK(mode)) return "is a socket";
    return NULL;
}

/*
 * An existing regular file of another user in a sticky directory (/tmp) is
 * never written: replacing it would take its owner's file (as root, who may),
 * appending to it would mix our records into what its owner may change under
 * us, and a mode it was given (0666) is not one we chose. 0 or -EPERM with err
 * set. target is where path leads (follow_links).
 */
static int foreign_check(const char *path, const char *target, const struct stat *st,
                         struct hb_err *err)
{
    char dir[PATH_MAX];
    const char *slash = strrchr(target, '/');
    struct stat dst;

    if (!S_ISREG(st->st_mode) || st->st_uid == geteuid()) return 0;
    if (slash == NULL)
        str_copy(dir, sizeof(dir), ".");
    else
        snprintf(dir, sizeof(dir), "%.*s", slash == target ? 1 : (int)(slash - target), target);
    if (stat(dir, &dst) == -1 || (dst.st_mode & S_ISVTX) == 0) return 0;
    return hb_fail(err, -EPERM,
                   "cannot write %s: it is another user's file (uid %u) in a sticky directory; "
                   "name a file of your own",
                   path, (unsigned)st->st_uid);
}

/*
 * Decides how o->path is written: *kind, and for KIND_REPLACE o->target; *st
 * is what is there (st_mode 0 when nothing is there yet). 0 or a negative
 * errno with err set.
 */
static int classify(struct outfile *o, enum outfile_kind *kind, struct stat *st, struct hb_err *err)
{
    bool via_proc = false;
    int rc = follow_links(o->path, o->target, sizeof(o->target), &via_proc);

    *kind = KIND_IN_PLACE;
    memset(st, 0, sizeof(*st));
    if (rc < 0) return hb_fail(err, rc, "cannot write %s: %s", o->path, strerror(-rc));
    if (via_proc) { /* an open file, whatever it is (a socket too): open_in_place */
        o->target[0] = '\0';
        return 0;
    }
    if (stat(o->path, st) == 0) {
        const char *why = refused_kind(st->st_mode);
        if (why != NULL) return hb_fail(err, -EPERM, "cannot write %s: it %s", o->path, why);
        rc = foreign_check(o->path, o->target, st, err);
        if (rc < 0) return rc;
    } else if (errno != ENOENT) {
        return hb_fail(err, -errno, "cannot write %s: %s", o->path, strerror(errno));
    } else {
        memset(st, 0, sizeof(*st));
    }
    if (st->st_mode == 0 || S_ISREG(st->st_mode))
        *kind = KIND_REPLACE;
    else
        o->target[0] = '\0';
    return 0;
}

/*
 * A regular file appended to must end with a whole line (or be empty): else
 * its last line was cut short (a write that failed part-way, by a version
 * before whole-line appends, or by another program) and a line appended would
 * join it, so that no reader could read the file past it. Refused, naming
 * where the cut line starts; nothing is removed here (the bytes may be the
 * only copy of something). A file that cannot be read is not checked.
 */
static int tail_check(const char *path, struct hb_err *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    char buf[4096];
    struct stat st;
    off_t at, end;

    if (fd == -1) return 0;
    if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) || st.st_size == 0 ||
        pread(fd, buf, 1, st.st_size - 1) != 1 || buf[0] == '\n') {
        close(fd);
        return 0;
    }
    end = st.st_size;
    for (at = end - 1; at > 0;) { /* back to the byte after the last line end */
        size_t n = at > (off_t)sizeof(buf) ? sizeof(buf) : (size_t)at;
        const char *nl;
        if (pread(fd, buf, n, at - (off_t)n) != (ssize_t)n) break;
        nl = memrchr(buf, '\n', n);
        if (nl != NULL) {
            at = at - (off_t)n + (nl - buf) + 1;
            break;
        }
        at -= (off_t)n;
    }
    close(fd);
    return hb_fail(err, -EBADMSG,
                   "cannot append to %s: its last line has no end (bytes %lld to %lld, a write cut "
                   "short); truncate the file to %lld bytes to keep the lines before it, or name "
                   "another file",
                   path, (long long)at, (long long)end, (long long)at);
}

/*
 * Creates a new temporary file beside o->target, named in o->tmp, with mode
 * (0: as a new file, OUTFILE_NEW_MODE less the umask). Returns its fd, or a
 * negative errno with err set.
 */
static int tmp_create(struct outfile *o, mode_t mode, struct hb_err *err)
{
    for (int i = 0; i < OUTFILE_TMP_TRIES; i++) {
        int n = snprintf(o->tmp, sizeof(o->tmp), "%s.tmp.%ld.%d", o->target, (long)getpid(), i);
        if (n < 0 || (size_t)n >= sizeof(o->tmp)) break;
        int fd =
            open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, OUTFILE_NEW_MODE);
        if (fd == -1 && errno == EEXIST) continue;
        if (fd == -1) {
            int e = errno;
            o->tmp[0] = '\0';
            return hb_fail(err, -e, "cannot write %s: %s", o->path, strerror(e));
        }
        /* the user's own file keeps its permissions (umask applies to a new one) */
        if (mode != 0) (void)fchmod(fd, mode & 07777);
        return fd;
    }
    o->tmp[0] = '\0';
    return hb_fail(err, -ENAMETOOLONG, "cannot write %s: no temporary name beside it", o->path);
}

/*
 * Opens path in place with flags. An open file reached through /proc is this
 * process's own descriptor when the path names one (/dev/stdout is
 * /proc/self/fd/1): it is duplicated, so the writes land where that stream
 * stands. A FIFO is opened only when a reader has it open (O_NONBLOCK fails
 * with ENXIO otherwise) rather than waiting, perhaps for ever, with the stop
 * signals held; its writes then block as usual. Returns the fd or -1 (errno).
 */
static int open_in_place(const char *path, int flags)
{
    char target[PATH_MAX];
    bool via_proc = false;
    unsigned fd;
    char end;
    int got;

    if (follow_links(path, target, sizeof(target), &via_proc) == 0 && via_proc &&
        (sscanf(target, "/proc/self/fd/%u%c", &fd, &end) == 1 ||
         sscanf(target, "/proc/thread-self/fd/%u%c", &fd, &end) == 1) &&
        fd <= INT_MAX && fcntl((int)fd, F_GETFD) != -1)
        return fcntl((int)fd, F_DUPFD_CLOEXEC, 3);
    got = open(path, flags | O_NONBLOCK, OUTFILE_NEW_MODE); /* a new --jsonl file */
    if (got != -1 && fcntl(got, F_SETFL, flags & O_APPEND) == -1) {
        close(got);
        return -1;
    }
    return got;
}

int outfile_open(struct outfile *o, const char *path, enum outfile_mode mode, struct hb_err *err)
{
    enum outfile_kind kind;
    struct stat st;
    int rc;

    memset(o, 0, sizeof(*o));
    o->path = path;
    o->fd = -1;
    rc = classify(o, &kind, &st, err);
    if (rc < 0) return rc;
    if (mode == OUTFILE_REPLACE && kind == KIND_REPLACE) {
        /* an existing file's mode is kept when it is ours: another's was not chosen by us */
        rc = tmp_create(o, S_ISREG(st.st_mode) && st.st_uid == geteuid() ? st.st_mode : 0, err);
        o->fd = rc < 0 ? -1 : rc;
        return rc < 0 ? rc : 0;
    }
    if (mode == OUTFILE_APPEND && S_ISREG(st.st_mode) && (rc = tail_check(path, err)) < 0)
        return rc;
    /* in place: appended to, never created (but by APPEND), truncated or replaced */
    o->target[0] = '\0';
    o->fd = open_in_place(path, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOCTTY |
                                    (mode == OUTFILE_APPEND ? O_CREAT : 0));
    if (o->fd == -1 && errno == ENXIO && S_ISFIFO(st.st_mode))
        return hb_fail(err, -ENXIO, "cannot write %s: no process has the FIFO open for reading",
                       path);
    if (o->fd == -1) return hb_fail(err, -errno, "cannot write %s: %s", path, strerror(errno));
    return 0;
}

int outfile_check(const char *path, enum outfile_mode mode, struct hb_err *err)
{
    struct outfile o = { .path = path, .fd = -1 };
    enum outfile_kind kind;
    struct stat st;
    int rc = classify(&o, &kind, &st, err);

    if (rc == 0 && mode == OUTFILE_APPEND && S_ISREG(st.st_mode)) rc = tail_check(path, err);
    if (rc < 0 || kind != KIND_REPLACE || mode != OUTFILE_REPLACE) return rc;
    o.fd = tmp_create(&o, 0, err);
    if (o.fd < 0) return o.fd;
    outfile_abort(&o);
    return 0;
}

FILE *outfile_stream(struct outfile *o)
{
    if (o->f == NULL && o->fd >= 0) o->f = fdopen(o->fd, "w");
    return o->f;
}

int outfile_write(struct outfile *o, const void *buf, size_t len, struct hb_err *err)
{
    const char *p = buf;
    size_t off = 0;

    if (o->f != NULL) {
        errno = 0;
        if (fwrite(buf, 1, len, o->f) == len) return 0;
        return hb_fail(err, errno ? -errno : -EIO, "cannot write %s: %s", o->path,
                       strerror(errno ? errno : EIO));
    }
    while (off < len) {
        ssize_t w = write(o->fd, p + off, len - off);
        if (w == -1 && errno == EINTR) continue;
        if (w == -1) return hb_fail(err, -errno, "cannot write %s: %s", o->path, strerror(errno));
        off += (size_t)w;
    }
    return 0;
}

/*
 * After a write that failed part-way through buf: the file cut back to where
 * buf began, when that can be known and nothing was appended after it by
 * another writer (the offset after our last byte is the file's end, and our
 * bytes ran on from the first's offset). done bytes were written, the first
 * of them at first (-1: not a regular file). A suffix for the message: "" when
 * the file is as it was, else where the part line is.
 */
static const char *append_undo(struct outfile *o, off_t first, size_t done, char *buf, size_t cap)
{
    struct stat st;
    off_t cur = lseek(o->fd, 0, SEEK_CUR);

    if (done == 0) return "";
    if (first >= 0 && cur == first + (off_t)done && fstat(o->fd, &st) == 0 && st.st_size == cur &&
        ftruncate(o->fd, first) == 0)
        return "";
    if (first < 0)
        snprintf(buf, cap, " (%zu bytes of it went out)", done);
    else
        snprintf(buf, cap, "; a part line of %zu bytes is left at byte %lld", done,
                 (long long)first);
    return buf;
}

int outfile_append(struct outfile *o, const void *buf, size_t len, struct hb_err *err)
{
    const char *p = buf;
    char where[96];
    struct stat st;
    off_t first = -1;
    bool regular = fstat(o->fd, &st) == 0 && S_ISREG(st.st_mode);
    size_t off = 0;
    int e = 0;

    while (off < len && e == 0) {
        ssize_t w = write(o->fd, p + off, len - off);
        if (w > 0 && off == 0 && regular) first = lseek(o->fd, 0, SEEK_CUR) - w;
        if (w > 0)
            off += (size_t)w;
        else if (w == -1 && errno == EINTR)
            continue;
        else
            e = w == -1 ? errno : EIO;
    }
    if (e == 0) return 0;
    return hb_fail(err, -e, "cannot write %s: %s%s", o->path, strerror(e),
                   append_undo(o, regular ? first : -1, off, where, sizeof(where)));
}

/* Flushes, syncs (a temporary file) and closes o. 0 or a negative errno. */
static int finish(struct outfile *o)
{
    int rc = 0;

    if (o->f != NULL && fflush(o->f) != 0) rc = errno ? -errno : -EIO;
    if (rc == 0 && o->tmp[0] != '\0' && fsync(o->fd) == -1) rc = -errno;
    if (o->f != NULL) {
        if (fclose(o->f) != 0 && rc == 0) rc = errno ? -errno : -EIO;
    } else if (o->fd >= 0 && close(o->fd) == -1 && rc == 0 && errno != EINTR) {
        rc = -errno;
    }
    o->f = NULL;
    o->fd = -1;
    return rc;
}

int outfile_commit(struct outfile *o, struct hb_err *err)
{
    int rc = finish(o);

    if (rc == 0 && o->tmp[0] != '\0' && rename(o->tmp, o->target) == -1) rc = -errno;
    if (rc < 0) {
        outfile_abort(o);
        return hb_fail(err, rc, "cannot write %s: %s", o->path, strerror(-rc));
    }
    o->tmp[0] = '\0';
    return 0;
}

void outfile_abort(struct outfile *o)
{
    (void)finish(o);
    if (o->tmp[0] != '\0') unlink(o->tmp);
    o->tmp[0] = '\0';
}

int outfile_replace(const char *path, int (*fill)(FILE *f, void *ctx, struct hb_err *err),
                    void *ctx, struct hb_err *err)
{
    struct outfile out;
    sigset_t held, old;
    int rc;

    /* no stop signal between the temporary file's creation and its rename or removal */
    stop_signal_set(&held);
    pthread_sigmask(SIG_BLOCK, &held, &old);
    rc = outfile_open(&out, path, OUTFILE_REPLACE, err);
    if (rc == 0) {
        FILE *f = outfile_stream(&out);

        errno = 0;
        if (f == NULL) {
            rc = hb_fail(err, -ENOMEM, "cannot write %s: out of memory", path);
        } else {
            rc = fill(f, ctx, err);
            if (rc == -EIO) {
                int e = errno != 0 ? errno : EIO;
                rc = hb_fail(err, -e, "cannot write %s: %s", path, strerror(e));
            }
        }
        if (rc == 0) rc = outfile_commit(&out, err);
        outfile_abort(&out);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}
