/*
 * sockdiag: counts the sockets of one hop by state, as the kernel sees them,
 * through NETLINK_SOCK_DIAG (man 7 sock_diag; the interface `ss` uses). No
 * /proc parsing and no child process. It answers two questions about a run:
 * how many TCP connections of the server port sit in each state (TIME_WAIT
 * build-up with connect-per-request), and how deep each listener's accept
 * queue is right now (TCP and AF_UNIX alike).
 *
 * Cost: every call opens a netlink socket and asks for one dump per address
 * family. A TCP dump carries a port filter, so the kernel sends a message only
 * for the hop's sockets, but it still walks its whole TCP hash table to find
 * them, however few sockets there are: milliseconds of CPU on a big table
 * (bench/RESULTS.md, "the sampler's cost ... re-run alone"; bench/JOURNAL.md, "the socket sampler",
 * on a loaded machine). An AF_UNIX dump cannot be filtered by name: O(#unix
 * sockets) messages. Sample from a thread that is not measured, at a low rate (observe.c: at idle
 * priority, every 250 ms or 10 s).
 * Works unprivileged. A dump is not atomic: a socket that changes state while
 * it runs can be missed or seen twice, so counts are a close snapshot, not a
 * ledger. Not for the hot path. Thread-safe: calls share no state.
 */
#ifndef HOPBENCH_SOCKDIAG_H
#define HOPBENCH_SOCKDIAG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* state[] slots: TCP states 1 (ESTABLISHED) .. 11 (CLOSING) of <netinet/tcp.h>; [0] unused. */
#define SOCKDIAG_TCP_NSTATES 12

/* sockdiag_unix_count() gives up with -E2BIG on a dump with more AF_UNIX sockets than this. */
#define SOCKDIAG_MAX_SOCKETS 1000000u

/*
 * TCP sockets on this host (IPv4 and IPv6 dumps) whose local or remote port is
 * `port`: the server side (local port) and the clients (remote port) of a
 * loopback hop, plus any connection to a remote service on that port.
 */
struct sockdiag_tcp {
    uint64_t state[SOCKDIAG_TCP_NSTATES];        /* index = TCP state; [0] unused */
    uint64_t total;                              /* sum of state[] */
    uint64_t server_state[SOCKDIAG_TCP_NSTATES]; /* the part of state[] with local port `port` */
    uint64_t client_state[SOCKDIAG_TCP_NSTATES]; /* the part with remote port `port`: the
                                                  * clients, each holding an ephemeral port */
    bool have_listener;                          /* a LISTEN socket has local port `port` */
    uint32_t listen_rqueue;  /* accept queue length now (idiag_rqueue), summed over listeners */
    uint32_t listen_backlog; /* listen(2) backlog (idiag_wqueue), summed over listeners */
    uint64_t dumped;         /* sockets the kernel sent: `total` when it applied the port
                              * filter, every socket of the family when it refused it */
};

/*
 * Fills *out for port 1..65535 of address family `family`: AF_INET,
 * AF_INET6, or AF_UNSPEC for both. Each family is one walk of the kernel's
 * whole TCP hash table (milliseconds on a big table), so ask for the one the
 * hop uses. The kernel filters by port (INET_DIAG_REQ_BYTECODE, S_EQ/D_EQ);
 * a kernel that refuses that filter is asked again without it and the port
 * is matched here, with the same counts. Only states 1..11 are asked for, so a socket
 * that is bound but neither listening nor connected (TCP_BOUND_INACTIVE,
 * reported by kernels since about 6.7 when asked for) is not counted. A kernel
 * without IPv6 counts IPv4 only. A connection the kernel completed but nobody
 * accept()ed yet is ESTABLISHED on both sides (a full socket waits in the
 * accept queue) and also counts in listen_rqueue. Returns 0, -EINVAL for a bad
 * port, or the negative errno of the netlink socket or dump (*out is all zero).
 */
int sockdiag_tcp_count(unsigned port, int family, struct sockdiag_tcp *out);

/*
 * AF_UNIX stream sockets tied to the socket file or abstract name `name`, as
 * the kernel stores it: the path given to bind(2) (relative if it was bound
 * relative), or "@name" for an abstract name (the leading NUL shown as '@').
 */
struct sockdiag_unix {
    uint64_t listening;      /* the listener(s) bound to name */
    uint64_t established;    /* server-side sockets carrying the listener's name (see below) */
    uint64_t peers;          /* client sockets whose peer is one of those (UNIX_DIAG_PEER) */
    uint64_t total_unix;     /* all AF_UNIX sockets in the dump, any type, for context */
    bool have_listener;      /* a stream socket bound to name is listening */
    uint32_t listen_ino;     /* its inode (the first one's), 0 when none */
    uint32_t listen_rqueue;  /* pending connections (UNIX_DIAG_RQLEN rqueue of the listener) */
    uint32_t listen_backlog; /* listen(2) backlog (UNIX_DIAG_RQLEN wqueue of the listener) */
};

/*
 * Fills *out from one AF_UNIX dump. What the kernel shows:
 * - A connection not yet accept()ed shows only in listen_rqueue: its server
 *   socket has no inode before accept(2) and unix_diag skips inode-0 sockets;
 *   the waiting client is ESTABLISHED with peer inode 0, so it is no peer.
 * - A socket whose other end closed stays ESTABLISHED (peer inode 0) until its
 *   owner closes it: `established` includes server sockets of hung-up clients.
 * Returns 0, -EINVAL for a NULL or empty name, -ENAMETOOLONG for a name longer
 * than sun_path, -E2BIG past SOCKDIAG_MAX_SOCKETS, -ENOMEM, or the negative
 * errno of the netlink socket or dump (-ENOENT: kernel without unix_diag).
 * *out is all zero on error.
 */
int sockdiag_unix_count(const char *name, struct sockdiag_unix *out);

/* The most listening sockets sockdiag_tcp_listeners reports (SO_REUSEPORT: one per worker). */
#define SOCKDIAG_MAX_LISTENERS 256

/*
 * The inodes of the TCP sockets listening on `port` that take connections to
 * addr (4 bytes for AF_INET, 16 for AF_INET6, network order): bound to addr
 * itself or to the wildcard of its family, and for an IPv4 addr an IPv6
 * socket bound to [::] or to addr as ::ffff:a.b.c.d (a dual-stack listener).
 * SO_REUSEPORT gives one per worker. Into ino[cap], *n of them (the rest
 * dropped). Returns 0 or the negative errno of the dump.
 */
int sockdiag_tcp_listeners(unsigned port, int family, const void *addr, uint32_t *ino, size_t cap,
                           size_t *n);

/* "ESTABLISHED", "TIME_WAIT", ... for states 1..11, "UNKNOWN" otherwise. Static storage. */
const char *sockdiag_tcp_state_name(int state);

#endif
