/*
 * leftover: what a hopbench that dies without cleaning up (SIGKILL, a crash)
 * would leave behind, and how it goes: its private directory under $TMPDIR
 * (lab, stack) and a stack's cgroups with its services' processes in them.
 *
 * Each is marked with its owner, "PID-START-PIDNS": the pid, its start time
 * (clock ticks after boot, field 22 of /proc/PID/stat: a pid reused later has
 * another) and the inode of its pid namespace. A directory holds the mark in
 * its file LEFTOVER_OWNER_FILE; a cgroup, which can hold no file of ours,
 * carries it at the end of its name: NAME.MARK.
 *
 * The watcher (leftover_watch_start) is a child in a process group of its
 * own that waits for hopbench to end. If hopbench ends before
 * leftover_watch_stop, the watcher kills every process in the cgroups named
 * to it and below them, removes those cgroups and then the directory with
 * everything in it, and exits. A later run's leftover_clean finds what is
 * left of an owner that is dead (its watcher killed too) and removes it the
 * same way, one line per owner. The leftovers of a live owner, of one in
 * another pid namespace and unmarked ones are never touched.
 *
 * A process is killed only while it is in such a cgroup: through a pidfd
 * opened before the cgroup is listed again and still names it (a pid reused
 * meanwhile is not signalled), or by the v2 cgroup's own cgroup.kill.
 */
#ifndef HOPBENCH_HOST_LEFTOVER_H
#define HOPBENCH_HOST_LEFTOVER_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "util.h"

#define LEFTOVER_MARK_CAP   64
#define LEFTOVER_OWNER_FILE "owner"

/* How long the watcher and leftover_clean try to kill and remove before giving up. */
#define LEFTOVER_END_NS (5 * NS_PER_S)

/* This process's mark into buf. Returns 0 or a negative errno (/proc unreadable). */
int leftover_mark(char *buf, size_t cap);

enum leftover_owner {
    LEFTOVER_ALIVE = 0, /* the process that made it runs */
    LEFTOVER_DEAD,      /* no process with that pid and start time */
    LEFTOVER_UNKNOWN,   /* not a mark, or another pid namespace's: not ours to judge */
};

/* Whose a mark is; *pid its pid (0 when not a mark). */
enum leftover_owner leftover_owner(const char *mark, long *pid);

/* Writes mark into dir/LEFTOVER_OWNER_FILE (0600). Returns 0 or a negative errno. */
int leftover_mark_dir(const char *dir, const char *mark);

/* The processes in cgroup dir and the cgroups below it, or a negative errno. */
int cg_tree_count(const char *dir);

/* SIGKILL to every process in cgroup dir and below. Returns 0 or a negative errno. */
int cg_tree_kill(const char *dir);

/*
 * Kills everything in each cgroup dirs[i] (skipping "") and removes it, the
 * cgroups below first, until all are gone or timeout_ns has passed. Returns 0,
 * or the last negative errno (-EBUSY: a process would not die) with *failed
 * the cgroup it concerns.
 */
int cg_trees_end(const char *const *dirs, unsigned n, uint64_t timeout_ns, const char **failed);

/* Removes dir and everything in it, symbolic links not followed. Returns 0 or a negative errno. */
int dir_tree_remove(const char *dir);

struct leftover_watch {
    pid_t pid; /* the watcher; 0 when none */
    int fd;    /* the pipe that tells it to stand down */
};

/*
 * Starts the watcher of dir (may be NULL) and the cgroups cgs[0 .. ncg - 1]
 * (the paths are read by the watcher, which is a fork: they stay as they are
 * now). It holds no fd of hopbench's but the pipe's end, reads nothing from
 * the terminal and writes nothing. Returns 0 or a negative errno with err set.
 */
int leftover_watch_start(struct leftover_watch *w, const char *dir, const char *const *cgs,
                         unsigned ncg, struct hb_err *err);

/* Tells the watcher to exit without touching anything, and reaps it (bounded). Safe twice. */
void leftover_watch_stop(struct leftover_watch *w);

/* Where leftover_clean looks. */
struct leftover_scan {
    const char *who;               /* the line's "hopbench WHO:" */
    const char *tmp;               /* the directory that holds the private directories */
    const char *prefix;            /* their names' start, and the cgroups': "hopbench-stack." */
    const char *const *cg_parents; /* the cgroups that hold the run cgroups */
    unsigned ncg;
};

/*
 * Removes the leftovers of every dead owner: directories in sc->tmp owned by
 * this user named PREFIX* with a mark, cgroups in sc->cg_parents named
 * PREFIX*.MARK (their processes killed first). One line per owner to out:
 * "hopbench WHO: removed leftovers of hopbench pid N (dead): DIR, 4 cgroups,
 * 8 processes", or what could not be removed. Returns the number of owners.
 */
unsigned leftover_clean(const struct leftover_scan *sc, FILE *out);

#endif
