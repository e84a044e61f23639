/*
 * observe: what happens outside the load threads during a run's measured
 * window. At the window's start and end it snapshots the
 * server's CPU time (each pid's CPU clock, optionally its whole process tree,
 * or a cgroup's usage), system-wide busy CPU from /proc/stat (softirq
 * included: loopback TCP delivery runs there), the server's memory (summed
 * PSS; a cgroup's working set) and the kernel's TCP counters (/proc/net/netstat
 * and /proc/net/snmp, by name). In between, a sampler thread counts the hop's
 * sockets by state with sock_diag to find peaks (TIME_WAIT, ESTABLISHED, the
 * listener's accept queue). Named services (--service: a pid, a tree or a
 * cgroup) get the same CPU and memory readings each, apart, and each watched
 * hop (--watch) the same socket counts, in the same samples.
 *
 * What of the machine's busy CPU was neither hopbench's own process nor a
 * named one (the server, the services) is other processes' work; with the
 * hypervisor's steal it makes a run noisy above a threshold (struct obs_other).
 *
 * Every figure is a `struct ctr_val`: a value, or "unavailable" with the
 * reason. Nothing unknown is ever reported as 0. The counters are scoped to
 * the network namespace: other TCP traffic in it shows up in the deltas.
 */
#ifndef HOPBENCH_OBSERVE_H
#define HOPBENCH_OBSERVE_H

#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "endpoint.h"
#include "engine/load.h"
#include "host/coloc.h"
#include "host/counters.h"
#include "host/place.h"
#include "host/profile.h"
#include "host/service.h"

#define OBS_MAX_PIDS   64   /* server pids given (--server-pid) */
#define OBS_MAX_TREE   4096 /* processes in the server's trees (--server-tree); beyond: n/a */
#define OBS_NOISY_CPUS 0.1  /* other CPU + steal, in CPUs, above which a run is noisy by default */

/*
 * The sampling period without --sample-ms (observe_default_period). The
 * samples between the window's two ends are there for the peaks, which only
 * they can see where the hop's sockets come and go during the window: in
 * connect mode (TIME_WAIT, established and the accept queue move with every
 * op) and on a watched hop (a proxy may open a connection to its back end per
 * request, whatever the loaded hop does): OBS_SAMPLE_CHURN_NS. With kept
 * connections every connection is open before the window begins and the
 * counts move only when one is reopened, which leaves a TIME_WAIT socket for
 * OBS_TIME_WAIT_NS: OBS_SAMPLE_KEPT_NS, half that, so a window shorter than
 * 30 s is sampled only at its two ends (as with --sample-ms 0) and a longer one
 * still sees every reconnect's TIME_WAIT socket in at least one sample (the next
 * one, or the window's end, comes within its life). What this period gives up
 * is the instant of a peak between samples: the count is the peak of what the
 * samples saw. Each sample walks the kernel's whole TCP hash table, ~10 ms of
 * CPU on a machine with 100,000 TIME_WAIT sockets (bench/sampler.sh), which at
 * a short period would be a measurable share of a light client's own CPU.
 */
#define OBS_SAMPLE_CHURN_NS (250 * NS_PER_MS)
#define OBS_TIME_WAIT_NS    (60000 * NS_PER_MS) /* Linux's TCP_TIMEWAIT_LEN */
#define OBS_SAMPLE_KEPT_NS  (OBS_TIME_WAIT_NS / 2)

/* Kernel counters kept for every run, as deltas over the window. */
/* clang-format off */
#define OBS_NET_NAMES \
    X("TcpExt.TW") \
    X("TcpExt.TWRecycled") \
    X("TcpExt.TWKilled") \
    X("TcpExt.TCPTimeWaitOverflow") \
    X("TcpExt.ListenOverflows") \
    X("TcpExt.ListenDrops") \
    X("TcpExt.TCPSynRetrans") \
    X("TcpExt.TCPTimeouts") \
    X("TcpExt.TCPAbortOnData") \
    X("TcpExt.TCPAbortOnClose") \
    X("TcpExt.TCPAbortOnMemory") \
    X("TcpExt.TCPAbortOnTimeout") \
    X("TcpExt.TCPAbortOnLinger") \
    X("Tcp.ActiveOpens") \
    X("Tcp.PassiveOpens") \
    X("Tcp.AttemptFails") \
    X("Tcp.EstabResets") \
    X("Tcp.RetransSegs") \
    X("Tcp.OutRsts") \
    X("Softnet.Dropped") \
    X("Softnet.TimeSqueeze")
/* clang-format on */
#define X(n) +1
enum { OBS_NET_COUNT = 0 OBS_NET_NAMES };
#undef X

/* The name of net counter i (0 <= i < OBS_NET_COUNT). */
const char *observe_net_name(unsigned i);

/* The gauges of a hop, in the order of struct obs_hop and observe_cfg.base (5 of them). */
enum obs_gauge_index {
    OBS_TW_CLIENT = 0,
    OBS_TW_SERVER,
    OBS_ESTABLISHED,
    OBS_CLIENT_PORTS,
    OBS_LISTEN_QUEUE,
    OBS_GAUGES
};

struct observe_cfg {
    struct endpoint ep;       /* the endpoint loaded: its port or socket name filters sockets */
    pid_t pids[OBS_MAX_PIDS]; /* server processes (0 of them: no server figures) */
    unsigned npids;
    bool tree;             /* add each pid's descendants and the CPU of the children they reap */
    const char *no_server; /* why there are no pids (the server was looked for), or NULL */
    unsigned tree_max;     /* the most processes in one tree (0: OBS_MAX_TREE); beyond: n/a */
    const char *cgroup;    /* a server cgroup directory (v1 or v2), or NULL */
    uint64_t sample_ns;    /* sock_diag sampling period; 0 = only at the end */
    /*
     * CPUs for the sampler thread, away from the load threads and the server
     * (place_spare_now); none: wherever the scheduler puts it. It runs at idle
     * priority (SCHED_IDLE) either way.
     */
    cpu_set_t sampler_cpus;
    unsigned nsampler_cpus;
    /*
     * The hop's sockets before the run (and its warm-up) began, from
     * observe_baseline; without it, the gauges start at the window's start.
     */
    bool have_base;
    struct ctr_val base[5]; /* tw_client, tw_server, established, client_ports, listen_queue */
    /* Named services measured apart, and more hops sampled (--service, --watch); or NULL. */
    const struct service_set *set;
    struct ctr_val watch_base[SERVICE_MAX_WATCH][OBS_GAUGES]; /* as base, for each watched hop */
    double noisy_cpus; /* --noisy-threshold, in CPUs; 0: OBS_NOISY_CPUS */
    /* --profile: the profiler, begun and ended with the window (host/profile.h); or NULL */
    struct profile *prof;
    /* run --procs: hopbench's load processes, whose CPU is hopbench's own (not another
     * process's), read at both ends of the window; pids <= 0 are skipped. Or NULL. */
    const pid_t *own_pids;
    unsigned nown_pids;
};

/*
 * A gauge seen by the sampler: its value before the run began (or when the
 * window opened, without a baseline; TIME_WAIT sockets of an earlier run last 60 s), its peak
 * during the window (the start included) and its value at the end, before the load's sockets
 * closed.
 */
struct obs_gauge {
    struct ctr_val start;
    struct ctr_val peak;
    struct ctr_val end;
};

/* A watched hop's sockets, as the loaded hop's in struct observe_result. */
struct obs_hop {
    struct obs_gauge g[OBS_GAUGES]; /* by enum obs_gauge_index */
    struct ctr_val listen_backlog;
};

/* One named service over the window. */
struct obs_service {
    struct ctr_val cpu_ns;             /* its CPU: clocks, tree with reaped children, or cgroup */
    struct ctr_val pss_start, pss_end; /* its processes' PSS summed, bytes */
    struct ctr_val ws_start, ws_end;   /* a cgroup's working set, bytes */
    unsigned members;                  /* processes summed for PSS, at the end (else start) */
};

/*
 * The window's CPU that was not the run's. Of /proc/stat's busy time (softirq
 * and irq included), what neither hopbench's own process (every thread: the
 * load, the sampler, the main thread) nor the named processes (the server
 * when named, each service) used is other processes'; steal is a virtual
 * machine's time that the hypervisor gave to something else. Both compete
 * with the run for the CPUs, so a run is noisy when, averaged over the
 * window, other + steal pass threshold_cpus.
 */
struct obs_other {
    struct ctr_val
        busy_ns; /* /proc/stat non-idle, steal left out (observe_result.system_busy_ns) */
    struct ctr_val self_ns;  /* hopbench's own process, all its threads */
    struct ctr_val named_ns; /* the server's (when named) and every service's, summed */
    struct ctr_val other_ns; /* busy − self − named; 0 when that is below 0 (tick rounding) */
    struct ctr_val steal_ns; /* /proc/stat steal */
    uint64_t window_ns;      /* between the two /proc/stat reads */
    unsigned cpus;           /* CPUs hopbench may run on (sched_getaffinity); 0 unknown */
    double threshold_cpus;   /* other + steal over the window above this many CPUs: noisy */
    bool decided; /* noisy is known: false when a part is missing and the rest is under */
    bool noisy;
};

/*
 * Fills o->other_ns, o->decided and o->noisy from its other fields. other is
 * unavailable, with the reason, when busy, self or named is. noisy: the known
 * parts of other + steal are more than threshold_cpus × window_ns (so steal
 * alone can decide it); decided: noisy, or other and steal both known and a
 * window to divide by.
 */
void observe_other_compute(struct obs_other *o);

/* Where the server's CPU figure comes from. */
enum obs_server_source {
    OBS_SERVER_NONE = 0, /* neither --server-pid nor --server-cgroup */
    OBS_SERVER_PIDS,     /* the server pids (the lab's own server, --server-pid, --server-tree) */
    OBS_SERVER_CGROUP,   /* --server-cgroup alone: the cgroup's usage */
};

/* "none", "pids" or "cgroup". */
const char *observe_server_source_name(enum obs_server_source s);

struct observe_result {
    struct ctr_val server_cpu_ns; /* the server pids' CPU, or the cgroup's without pids */
    enum obs_server_source server_source;
    struct ctr_val cgroup_cpu_ns; /* the cgroup's usage */
    struct ctr_val cgroup_throttled_us;
    struct ctr_val system_busy_ns;         /* all CPUs, non-idle, softirq included */
    enum machine_cpu_source system_source; /* where system_busy_ns comes from */
    struct obs_other other;                /* the CPU of the window that was not the run's */
    struct ctr_val pss_start, pss_end;     /* summed over the server pids, bytes */
    struct ctr_val ws_start, ws_end;       /* cgroup working set, bytes */
    unsigned server_pids;                  /* processes summed for PSS, at the end (else start) */
    struct ctr_val net[OBS_NET_COUNT];
    /* The hop's sockets (sock_diag). TIME_WAIT is split by side: it belongs to whoever closed
     * first. */
    struct obs_gauge tw_client, tw_server; /* TCP only */
    struct obs_gauge established;          /* server-side ESTABLISHED (TCP) or accepted (unix) */
    struct obs_gauge client_ports; /* TCP client sockets in any state: ephemeral ports held */
    struct obs_gauge listen_queue; /* the listener's accept queue */
    struct ctr_val listen_backlog;
    unsigned port_lo, port_hi; /* ip_local_port_range, 0 when unreadable */
    unsigned samples;          /* sock_diag samples taken */
    uint64_t sample_ns;        /* the period they were taken at (observe_cfg.sample_ns) */
    /* The services and watched hops (observe_cfg.set, or NULL); svc[i] is set->svc[i]'s. */
    const struct service_set *set;
    struct obs_service svc[SERVICE_MAX];
    struct obs_hop watch[SERVICE_MAX_WATCH];
    /* Whether the load threads and the server's shared a CPU (host/coloc.h): with a server pid */
    struct coloc_result coloc;
    /* --profile: the window's samples; prof.folded is the record's to release */
    bool profiled;
    struct profile_result prof;
};

/* The counters read at the window's boundaries, fast ones only (no dump, no page-table walk). */
struct obs_snap {
    struct netstat *net; /* NULL if unreadable */
    struct ctr_val srv_cpu, cg_cpu, cg_thr;
    unsigned srv_members; /* processes summed in srv_cpu */
    struct cpu_jiffies cpu;
    bool cpu_ok;
    struct machine_cpu mach; /* the machine's run time, to the ns */
    bool mach_ok;
    struct ctr_val self_cpu;             /* hopbench's own process, read next to /proc/stat */
    uint64_t cpu_at_ns;                  /* when /proc/stat was read */
    struct ctr_val svc_cpu[SERVICE_MAX]; /* each named service's CPU */
    unsigned svc_members[SERVICE_MAX];
};

struct observe {
    struct observe_cfg cfg;
    uint64_t start_ticks[OBS_MAX_PIDS]; /* each server pid's start time: its identity */
    struct ctr_val ident;               /* ok, or why the server pids were not all running */
    pid_t tree[OBS_MAX_TREE];           /* scratch: one pid's process tree */
    struct obs_snap snap0;              /* at the window's start */
    struct observe_result res;
    pthread_t sampler;
    bool sampling;
    bool profiling;      /* cfg.prof began with the window */
    struct coloc *coloc; /* the co-location sampler, or NULL */
    int stop_fd;         /* eventfd that ends the sampler */
    /* Each pid or tree service's start time, and whether it ran then (else why not). */
    uint64_t svc_ticks[SERVICE_MAX];
    struct ctr_val svc_ident[SERVICE_MAX];
};

/* OBS_SAMPLE_CHURN_NS for connect mode or with watched hops, else OBS_SAMPLE_KEPT_NS. */
uint64_t observe_default_period(enum load_mode mode, bool watching);

/*
 * The sampler of cfg (whose set is filled in): its period, given_ns when
 * --sample-ms was given, else observe_default_period for mode and cfg's
 * watched hops; its CPUs, the spare ones of pl (place_spare_now).
 */
void observe_set_sampler(struct observe_cfg *cfg, bool given, uint64_t given_ns,
                         enum load_mode mode, const struct place *pl);

/*
 * Counts the hop's sockets now into cfg->base, so a run's gauges start before
 * its warm-up: TIME_WAIT sockets made during the warm-up are then the run's.
 */
void observe_baseline(struct observe_cfg *cfg);

/* Takes the start snapshot of the counters that must bracket the window tightly. */
void observe_open(struct observe *o, const struct observe_cfg *cfg);

/*
 * Then the slower start readings (memory, the first socket sample), and starts
 * the sampler. Returns 0 or a negative errno.
 */
int observe_opened(struct observe *o);

/* observe_open, then observe_opened. Returns 0 or a negative errno. */
int observe_begin(struct observe *o, const struct observe_cfg *cfg);

/* Stops the sampler, takes the end snapshot and fills res. Releases what begin took. */
void observe_end(struct observe *o, struct observe_result *res);

/* Glue for load_cfg.on_window: begin/end an observation into *out, setting *done. */
struct observe_hook {
    struct observe o;
    struct observe_cfg cfg;
    struct observe_result *out;
    bool *done;
};

/*
 * A load_cfg.on_window for arg = struct observe_hook *: LOAD_WINDOW_OPEN calls
 * observe_open, OPENED observe_opened, CLOSED observe_end.
 */
void observe_window_hook(void *arg, enum load_window at);

#endif
