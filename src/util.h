/*
 * util: the few helpers every module shares: the error carrier, the monotonic
 * clock in nanoseconds, setup-time allocation that exits on OOM, and a
 * checked string copy. Nothing here may be called per request except now_ns().
 */
#ifndef HOPBENCH_UTIL_H
#define HOPBENCH_UTIL_H

#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#define UNUSED(x)    ((void)(x))
#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

#define NS_PER_US 1000ULL
#define NS_PER_MS 1000000ULL
#define NS_PER_S  1000000000ULL

/*
 * A failure the user must read: a negative errno (or 0) plus one line of
 * context. Filled by the module that failed, printed only by the commands (src/cmd/) and main.c.
 */
struct hb_err {
    int code;
    char msg[256];
};

/* Sets err->code = code and formats err->msg; returns code so callers can `return hb_fail(...)`. */
int hb_fail(struct hb_err *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* CLOCK_MONOTONIC in ns (vDSO, no syscall). The only clock used for latency. */
static inline uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec;
}

/* CPU time of the calling thread in ns. */
static inline uint64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec;
}

/*
 * Sleeps until CLOCK_MONOTONIC reaches deadline_ns, in slices of at most
 * 50 ms, and returns early (false) once *stop is set. A signal may be handled
 * by another thread and never interrupt the sleep: the slices bound the
 * delay. Returns true when the deadline was reached.
 */
bool sleep_until_ns(uint64_t deadline_ns, const atomic_int *stop);

/*
 * The signals that end a lab's or a run's work early as Ctrl-C does (main.c):
 * SIGINT, SIGTERM, SIGHUP (the terminal went away) and SIGQUIT.
 */
#define STOP_SIGNALS SIGINT, SIGTERM, SIGHUP, SIGQUIT

/*
 * What set a stop flag (`atomic_int *stop`, read by the load
 * engine and the lab): any value but 0 ends the current run. STOP_INTERRUPT:
 * a stop signal or stdout's reader gone; STOP_SERVER_EXIT: the lab's server
 * exited (SIGCHLD), and nothing had set it before.
 */
enum { STOP_INTERRUPT = 1, STOP_SERVER_EXIT = 2 };

/* Empties *set and adds STOP_SIGNALS to it. */
void stop_signal_set(sigset_t *set);

/*
 * Whether nobody can read what is written to fd any more: poll (timeout 0)
 * reports POLLERR (a pipe or socket whose reader is gone) or POLLHUP (a
 * terminal that hung up). Other write errors (a full disk) are not this.
 */
bool fd_reader_gone(int fd);

/* Setup-time allocation: prints and exits on OOM. Never use on the hot path. */
void *xcalloc(size_t n, size_t size);
void *xmalloc(size_t size);

/* How a child ended, from its wait status: "exited with status 3", "was killed by SIGKILL". */
void wait_status_text(char *buf, size_t cap, int status);

/* "812 KiB", "1.2 MiB", "12.5 GiB": bytes for a reader (KiB, MiB, GiB; one decimal above KiB). */
void bytes_format(char *buf, size_t cap, uint64_t bytes);

/* "64 B", "4 KiB", "1 MiB": a size in the largest unit that divides it (bytes when not > 0). */
void size_text(char *buf, size_t cap, long long size);

/* Room for text_safe of an endpoint or a one-line error: 4 bytes a byte at worst. */
#define TEXT_SAFE_CAP 1024

/*
 * s as it may be printed to a terminal, in buf[cap]: UTF-8 is kept, but every
 * control character (C0, DEL, and C1 encoded as UTF-8), every byte that is not
 * part of valid UTF-8 and a backslash become a visible escape: \n, \r, \t,
 * \\, else \xNN per byte. So a string from a file or the command line cannot
 * move the cursor, clear the screen or forge a line. What does not fit ends
 * with "..."; cap must be at least 4. Returns buf.
 */
const char *text_safe(char *buf, size_t cap, const char *s);

/* text_safe of the n bytes at s, which may hold NULs (each "\x00"): bytes a server sent. */
const char *text_safe_n(char *buf, size_t cap, const char *s, size_t n);

/* Copies src into dst[cap]; returns 0, or -ENAMETOOLONG if it does not fit (dst is then ""). */
int str_copy(char *dst, size_t cap, const char *src);

/*
 * Makes socket fd blocking, with a receive timeout of timeout_ns (> 0), so a
 * recv() on it sleeps at most that long. The timeout is set first: should the
 * second step fail, a recv() still cannot hang. 0, or -1 with errno.
 */
int sock_block_with_timeout(int fd, uint64_t timeout_ns);

/*
 * Parses a whole decimal number in [min, max] (no sign, no spaces, no suffix).
 * Returns 0 or -EINVAL / -ERANGE.
 */
int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/*
 * parse_u64 for the value of option `opt`: 0, or -EINVAL with err saying
 * "OPT: 'VAL' is not a whole number in MIN..MAX".
 */
int opt_uint(const char *opt, const char *val, uint64_t min, uint64_t max, uint64_t *out,
             struct hb_err *err);

/*
 * Parses a duration into ns: a decimal number of seconds ("2", "0.25"), or
 * one with its unit: ns, us or µs, ms, s, m or min, h ("500ms", "10s",
 * "2m", "1.5h"). It must be > 0 and <= max_s seconds. Returns 0 or
 * -EINVAL (not a duration) / -ERANGE (out of range).
 */
int parse_duration(const char *s, double max_s, uint64_t *out_ns);

/* Columns s takes on a terminal: UTF-8 continuation bytes take none ("µs" is 2). */
int text_columns(const char *s);

/*
 * The one spelling of figures in text for a reader (never in CSV or JSON):
 * v rounded to `decimals`, its thousands grouped by ',' ("1,223,806",
 * "22,943.06", "-1,500"); "n/a" when v is not finite.
 */
void text_number(char *buf, size_t cap, double v, int decimals);

/*
 * A ratio: "1.18×" with `decimals` decimals (2 in tables, 3 for a change
 * below 10 %: "1.032×"; ×, U+00D7, takes 1 column); "n/a" when r is not finite.
 */
void text_ratio(char *buf, size_t cap, double r, int decimals);

/*
 * Writes s padded with spaces to `width` terminal columns (text_columns: "µs"
 * and "×" take one each), right-aligned for a width > 0, left for < 0.
 */
void put_columns(FILE *f, int width, const char *s);

#endif
