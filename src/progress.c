/*
 * The live progress line (progress.h). Its thread wakes every 100 ms, reads
 * the load threads' published counters (relaxed atomics, one cache line per
 * thread) and redraws the line with one write(2): a carriage return, the
 * text cut to the terminal's width (a wrapped line could not be redrawn in
 * place) and an erase-to-end-of-line. Only those two control sequences are
 * written; the work's own output goes to stdout after progress_run_end has
 * cleared the line.
 */
#include "progress.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

#define REDRAW_NS (100 * NS_PER_MS)

/* The terminal's width, or 80 when it does not say. */
static size_t term_cols(int fd)
{
    struct winsize ws;

    if (ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
    return 80;
}

static void put(int fd, const char *s, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, s, len);

        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return; /* a terminal that cannot be written: no line, nothing else */
        s += n;
        len -= (size_t)n;
    }
}

static void clear_line(struct progress *p)
{
    static const char clear[] = "\r\033[K";

    if (!p->drawn) return;
    put(p->fd, clear, sizeof(clear) - 1);
    p->drawn = false;
}

void progress_format(const struct progress *p, uint64_t now, char *buf, size_t cap)
{
    uint64_t ops = 0, errors = 0;
    uint64_t in_run = now > p->run_start_ns ? now - p->run_start_ns : 0;
    double s = (double)in_run / NS_PER_S;
    size_t len;

    for (unsigned i = 0; i < p->nlive; i++) {
        ops += atomic_load_explicit(&p->live[i].ops, memory_order_relaxed);
        errors += atomic_load_explicit(&p->live[i].errors, memory_order_relaxed);
    }
    if (p->outer_n > 0)
        len = (size_t)snprintf(buf, cap, "measurement %u/%u %s  rep %u/%u  ", p->outer_k,
                               p->outer_n, p->what, p->rep, p->reps);
    else
        len = (size_t)snprintf(buf, cap, "%s  rep %u/%u  ", p->what, p->rep, p->reps);
    if (len >= cap) return;
    if (in_run < p->warmup_ns) {
        len += (size_t)snprintf(buf + len, cap - len, "warm-up %.1f/%.1f s", s,
                                (double)p->warmup_ns / NS_PER_S);
    } else {
        double measured = (double)(in_run - p->warmup_ns) / NS_PER_S;

        if (p->window_ns > 0)
            len += (size_t)snprintf(buf + len, cap - len, "%.1f/%.1f s", measured,
                                    (double)p->window_ns / NS_PER_S);
        else
            len += (size_t)snprintf(buf + len, cap - len, "%.1f s", measured);
        if (len < cap && measured > 0)
            len += (size_t)snprintf(buf + len, cap - len, "  %.0f ops/s", (double)ops / measured);
    }
    if (len < cap)
        len += (size_t)snprintf(buf + len, cap - len, "  %llu error%s", (unsigned long long)errors,
                                errors == 1 ? "" : "s");
    if (len < cap && p->per_run_ns > 0 && p->runs_total > p->runs_done) {
        uint64_t left = (uint64_t)(p->runs_total - p->runs_done - 1) * p->per_run_ns;

        if (in_run < p->per_run_ns) left += p->per_run_ns - in_run;
        left += p->outer_after_ns;
        snprintf(buf + len, cap - len, "  ~%.0f s left", (double)left / NS_PER_S);
    }
}

static void draw(struct progress *p)
{
    char line[320], out[336];
    size_t cols = term_cols(p->fd), len;

    progress_format(p, now_ns(), line, sizeof(line));
    len = strlen(line);
    if (len > cols - 1) len = cols > 1 ? cols - 1 : 0;
    snprintf(out, sizeof(out), "\r%.*s\033[K", (int)len, line);
    put(p->fd, out, len + 4);
    p->drawn = true;
}

static void *progress_main(void *arg)
{
    struct progress *p = arg;
    struct timespec until;

    prctl(PR_SET_NAME, "hb-progress");
    pthread_mutex_lock(&p->mu);
    while (!p->quit) {
        if (p->running) draw(p);
        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_nsec += (long)REDRAW_NS;
        if (until.tv_nsec >= (long)NS_PER_S) {
            until.tv_sec++;
            until.tv_nsec -= (long)NS_PER_S;
        }
        pthread_cond_timedwait(&p->wake, &p->mu, &until);
    }
    clear_line(p);
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

int progress_outer_parse(struct progress *p, const char *s)
{
    char buf[64];
    char *slash, *plus;
    uint64_t k, n, ms;

    if (s == NULL || str_copy(buf, sizeof(buf), s) < 0) return -EINVAL;
    slash = strchr(buf, '/');
    plus = strchr(buf, '+');
    if (slash == NULL || plus == NULL || plus < slash) return -EINVAL;
    *slash = '\0';
    *plus = '\0';
    if (parse_u64(slash + 1, 1, UINT32_MAX, &n) < 0 || parse_u64(buf, 1, n, &k) < 0 ||
        parse_u64(plus + 1, 0, UINT64_MAX / NS_PER_MS, &ms) < 0)
        return -EINVAL;
    p->outer_k = (unsigned)k;
    p->outer_n = (unsigned)n;
    p->outer_after_ns = ms * NS_PER_MS;
    return 0;
}

int progress_start(struct progress *p, int fd, bool on, unsigned runs_total, uint64_t per_run_ns)
{
    pthread_condattr_t ca;
    sigset_t all, old;
    int rc;

    memset(p, 0, sizeof(*p));
    p->fd = fd;
    p->runs_total = runs_total;
    p->per_run_ns = per_run_ns;
    if (!on || !isatty(fd)) return 0;
    /* a stack's measurement: its place and the stack's time after it; else none */
    progress_outer_parse(p, getenv(PROGRESS_ENV));
    pthread_mutex_init(&p->mu, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&p->wake, &ca);
    pthread_condattr_destroy(&ca);
    /* The line's thread takes no signal: the work's own threads handle them as before. */
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    rc = pthread_create(&p->tid, NULL, progress_main, p);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        pthread_cond_destroy(&p->wake);
        pthread_mutex_destroy(&p->mu);
        return -rc;
    }
    p->on = true;
    return 0;
}

void progress_run_begin(struct progress *p, const char *what, unsigned rep, unsigned reps,
                        struct load_cfg *cfg)
{
    if (!p->on) return;
    pthread_mutex_lock(&p->mu);
    if (cfg->threads > p->live_cap) {
        struct load_live *live = aligned_alloc(64, sizeof(*live) * cfg->threads);

        if (live != NULL) {
            free(p->live);
            p->live = live;
            p->live_cap = cfg->threads;
        }
    }
    if (cfg->threads <= p->live_cap) {
        p->nlive = cfg->threads;
        for (unsigned i = 0; i < p->nlive; i++) {
            atomic_init(&p->live[i].ops, 0);
            atomic_init(&p->live[i].errors, 0);
        }
        cfg->live = p->live;
    }
    snprintf(p->what, sizeof(p->what), "%s", what);
    p->rep = rep;
    p->reps = reps;
    p->run_start_ns = now_ns();
    p->warmup_ns = cfg->warmup_ns;
    p->window_ns = cfg->duration_ns;
    p->running = true;
    pthread_mutex_unlock(&p->mu);
}

void progress_run_end(struct progress *p, struct load_cfg *cfg)
{
    if (!p->on) return;
    cfg->live = NULL; /* the counters are the line's, and go with it */
    pthread_mutex_lock(&p->mu);
    p->running = false;
    p->runs_done++;
    clear_line(p);
    pthread_mutex_unlock(&p->mu);
}

void progress_stop(struct progress *p)
{
    if (!p->on) return;
    pthread_mutex_lock(&p->mu);
    p->quit = true;
    pthread_cond_signal(&p->wake);
    pthread_mutex_unlock(&p->mu);
    pthread_join(p->tid, NULL);
    pthread_cond_destroy(&p->wake);
    pthread_mutex_destroy(&p->mu);
    free(p->live);
    p->live = NULL;
    p->on = false;
}
