/*
 * outfile: every file the user names for output (--json, --jsonl, merge -o)
 * is opened, written and finished here, so that none of them ever replaces
 * or truncates what is not the user's regular file.
 *
 * What a path leads to decides how it is written:
 * - a regular file, or nothing yet (REPLACE): the document goes to a
 *   temporary file beside it, renamed over it at commit, so a reader sees the
 *   old file or the whole new one. A symbolic link is followed, link by link,
 *   and its target replaced in the target's directory: the link stays a link,
 *   and a dangling link's target is created. An existing file keeps its mode
 *   when it is ours; a new one (or one replacing another user's) is 0644 less
 *   the umask: never writable by its group or others.
 * - a character device or a FIFO (/dev/null, a pipe someone reads): written in
 *   place, never created, truncated or replaced. A FIFO must have a reader
 *   when it is opened: else the open is refused rather than wait (a shell's
 *   `>` waits, perhaps for ever).
 * - a path that reaches an open file through /proc (/dev/stdout, /dev/fd/N):
 *   this process's own descriptor is written (a duplicate of it), in place,
 *   whatever it is, so the document lands where that stream stands.
 * - a directory, a block device or a socket: refused; so is another user's
 *   regular file in a sticky directory (/tmp), replaced or appended to.
 * APPEND (--jsonl) opens the path itself for appending (created if absent,
 * links followed by the kernel): appending never truncates or replaces
 * anything, so it is safe on a device or a FIFO too; the same kinds are
 * refused. Records are appended whole or not at all (outfile_append): a
 * write that fails part-way (a full disk) is cut back off a regular file. A
 * regular file whose last line has no line end (cut short by an older
 * version, or another program) is refused, naming the byte where that line
 * starts: appending to it would join the next line to it and spoil both.
 *
 * Every failure comes back as a struct hb_err with one line: "cannot write
 * PATH: reason". No temporary file outlives a failed open, write or commit,
 * nor an abort. Only a process killed between open and commit leaves one
 * (PATH.tmp.PID.N beside the target): callers hold their stop signals over
 * that stretch.
 */
#ifndef HOPBENCH_OUTFILE_H
#define HOPBENCH_OUTFILE_H

#include <limits.h>
#include <stdio.h>

#include "util.h"

enum outfile_mode {
    OUTFILE_REPLACE = 1, /* one whole document, in place of what was there */
    OUTFILE_APPEND,      /* records added to the end as they come */
};

/* One output being written. Caller-owned; filled by outfile_open. */
struct outfile {
    const char *path;      /* as the user named it, for messages; borrowed */
    char target[PATH_MAX]; /* REPLACE of a regular file: what is renamed over; else "" */
    char tmp[PATH_MAX];    /* the temporary file beside target while it exists; else "" */
    int fd;                /* -1 once closed; owned by f once f is not NULL */
    FILE *f;               /* from outfile_stream, or NULL */
};

/*
 * Checks, before any work is done, that outfile_open(path, mode) can succeed:
 * the same refusals, and for a regular file or a new one a temporary file is
 * created in its directory and removed again (read-only file system, missing
 * directory, no permission). A device, FIFO or open file is not opened, so a
 * FIFO's reader sees nothing yet. Returns 0 or a negative errno with err set.
 */
int outfile_check(const char *path, enum outfile_mode mode, struct hb_err *err);

/*
 * Opens path for writing as the file-top comment says. path must outlive o.
 * On success the caller writes (outfile_write or outfile_stream) and then
 * calls outfile_commit or outfile_abort exactly once. Returns 0, or a
 * negative errno with err set and nothing left open or created.
 */
int outfile_open(struct outfile *o, const char *path, enum outfile_mode mode, struct hb_err *err);

/*
 * A stdio stream on o (made once, then the same one). Whatever it buffers is
 * flushed by outfile_commit. NULL if it cannot be made (out of memory).
 */
FILE *outfile_stream(struct outfile *o);

/*
 * Writes buf[len] whole (through the stream if one was made). Returns 0, or a
 * negative errno with err set; the caller then calls outfile_abort.
 */
int outfile_write(struct outfile *o, const void *buf, size_t len, struct hb_err *err);

/*
 * APPEND: adds buf[len] (whole lines) at the end of the file in one go, whole
 * or not at all: when a write fails part-way through (a full disk, a quota),
 * a regular file is cut back to its length before buf, unless another writer
 * appended after our part (then err says where the part line is). Returns 0,
 * or a negative errno with err set ("cannot write PATH: reason"); the file
 * stays open and later records may still be appended.
 */
int outfile_append(struct outfile *o, const void *buf, size_t len, struct hb_err *err);

/*
 * Finishes o: flushes, and for a temporary file syncs it to disk and renames
 * it over the target. Closes o in any case; on failure the temporary file is
 * removed and the target is as it was. Returns 0 or a negative errno with err
 * set (a full disk is -ENOSPC).
 */
int outfile_commit(struct outfile *o, struct hb_err *err);

/*
 * Closes o and removes its temporary file, if any: the target is as it was.
 * After outfile_commit (whatever it returned) it does nothing.
 */
void outfile_abort(struct outfile *o);

/*
 * Writes path as one whole document (OUTFILE_REPLACE: a regular file is replaced
 * atomically, a device or FIFO written in place), with the stop signals held
 * meanwhile: fill(f, ctx, err) writes the content. fill returns 0, -EIO for a
 * write error (errno says which; err is set here), or another negative errno
 * with err set. On failure path is left as it was. Returns 0 or a negative
 * errno, err set.
 */
int outfile_replace(const char *path, int (*fill)(FILE *f, void *ctx, struct hb_err *err),
                    void *ctx, struct hb_err *err);

#endif
