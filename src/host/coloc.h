/*
 * coloc: where the client's load threads and the server's threads ran
 * during a run's window. Unpinned (--pin none), the scheduler may put the
 * client's load thread and the server's thread on one CPU or on two, and a
 * 64 KiB echo's round trip is about 5x shorter on one (docs/placement.md):
 * a difference of placement, not of transport. A sampler thread reads each
 * watched thread's run time (/proc/PID/task/TID/schedstat) and last CPU
 * (field 39, processor, of its stat) every COLOC_PERIOD_MS; a sample in which
 * both a client thread and a server thread ran since the one before counts,
 * and among those the ones where such a pair last ran on the same CPU.
 * When two shares differ too much: evidence.h (evidence_coloc_differs).
 */
#ifndef HOPBENCH_COLOC_H
#define HOPBENCH_COLOC_H

#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define COLOC_PERIOD_MS   10        /* 2 ms read 4 proc files 500 times a second beside every run */
#define COLOC_MAX_THREADS 64        /* threads watched on each side; beyond, the first ones */
#define COLOC_LOAD_NAME   "hb-load" /* the load threads' name (engine/load.c) */

/* What the sampler saw over a window. */
struct coloc_result {
    bool observed; /* a sampler ran, watching a client and a server thread */
    unsigned both; /* samples in which a client and a server thread both ran */
    unsigned same; /* of those, the ones where such a pair last ran on one CPU */
    char why[96];  /* when not observed: why not */
};

/*
 * One sample: the CPUs of the client threads that ran since the last sample
 * (nc of them) and of the server threads that did (ns). Counts r->both when
 * both lists have one, and r->same when a CPU is in both.
 */
void coloc_count(struct coloc_result *r, const int *client_cpus, unsigned nc,
                 const int *server_cpus, unsigned ns);

/* The share of the counted samples that shared a CPU, into *share; false when none counted. */
bool coloc_share(const struct coloc_result *r, double *share);

/* A watched thread: its two open /proc files and what the last sample read. */
struct coloc_thread {
    int stat_fd, sched_fd;
    uint64_t run_ns;
};

struct coloc {
    struct coloc_thread client[COLOC_MAX_THREADS], server[COLOC_MAX_THREADS];
    unsigned nclient, nserver;
    cpu_set_t cpus; /* where the sampler runs (ncpus 0: anywhere) */
    unsigned ncpus;
    int stop_fd;
    pthread_t thread;
    bool running;
    struct coloc_result res;
};

/*
 * Opens this process's load threads (named COLOC_LOAD_NAME) and every thread
 * of the npids server processes, and starts the sampler on cpus (ncpus 0:
 * anywhere) at nice 19. When there is nothing to watch or it cannot
 * start, c->res says why and coloc_end gives that.
 */
void coloc_begin(struct coloc *c, const pid_t *pids, unsigned npids, const cpu_set_t *cpus,
                 unsigned ncpus);

/* Stops the sampler, closes the files, and gives what it saw. */
void coloc_end(struct coloc *c, struct coloc_result *out);

#endif
