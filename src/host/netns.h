/*
 * netns: network namespaces made for one lab, run or stack, as pods on one
 * node see each other.
 *
 *   same   one new namespace A with its own loopback: client and server in
 *          one pod (a Unix socket in the pod's shared volume, TCP on its lo)
 *   other  namespaces A and B joined by a veth pair whose IPv4 /30 addresses
 *          exist only inside them: two pods on a node, TCP across the pair
 *
 * A network namespace belongs to a thread: the sockets a thread creates are
 * in the namespace it is in then, and the threads it starts begin there.
 * netns_enter moves the calling thread. Nothing is mounted anywhere (no
 * /run/netns name), so a namespace is gone once its last fd is closed and the
 * last thread or process in it has left or exited, and a veth goes with its
 * namespace: every exit path removes them, a crash or SIGKILL included.
 * Needs CAP_SYS_ADMIN (root).
 */
#ifndef HOPBENCH_HOST_NETNS_H
#define HOPBENCH_HOST_NETNS_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "util.h"

enum netns_mode {
    NETNS_NONE = 0, /* the caller's namespace: nothing made */
    NETNS_SAME,
    NETNS_OTHER,
};

/* Where a thread is: the namespace it started in, or one made here. */
enum netns_side {
    NETNS_HOST = 0,
    NETNS_A, /* same: the one namespace; other: the server's */
    NETNS_B, /* other: the client's */
};

#define NETNS_ADDR_CAP 16 /* "255.255.255.255" and its NUL */
#define NETNS_IF_A     "hb-a"
#define NETNS_IF_B     "hb-b"
#define NETNS_PREFIX   30

struct netns {
    enum netns_mode mode;
    int fd[3];                   /* by enum netns_side; -1 when not open */
    ino_t ino[3];                /* each one's inode (what /proc/PID/ns/net names), 0 if none */
    char addr_a[NETNS_ADDR_CAP]; /* other: the veth end in A (the server's), else "" */
    char addr_b[NETNS_ADDR_CAP]; /* other: the veth end in B (the client's), else "" */
};

/* The veth end in B's byte counters, as its /proc/net/dev line shows them. */
struct netns_veth_bytes {
    uint64_t rx, tx;
};

/* "host", "same", "other"; and "host", "A", "B" for a side. */
const char *netns_mode_name(enum netns_mode mode);
const char *netns_side_name(const struct netns *ns, enum netns_side side);

/* The words of a command's "netns:" line that differ between commands (netns_describe). */
struct netns_words {
    const char *same;    /* same: who shares the one namespace, and for what */
    const char *in_a;    /* other: who runs in A */
    const char *in_b;    /* other: who runs in B, up to its "in" */
    const char *after_b; /* other: what follows B's address */
    const char *tail;    /* either: the end of the line */
};

/*
 * Writes to f the line that tells where mode put the two sides, "netns: same:
 * ..." or "netns: other: ..." with each veth end's name and address; nothing
 * for NETNS_NONE.
 */
void netns_describe(const struct netns *ns, const struct netns_words *w, FILE *f);

/*
 * Makes the namespaces of mode with their lo up, and for NETNS_OTHER the veth
 * pair (NETNS_IF_A in A, NETNS_IF_B in B) with addresses from 10.0.0.0/8 that
 * no interface of the caller's namespace has. The calling thread is back in
 * its own namespace on return. NETNS_NONE makes nothing. Returns 0, or a
 * negative errno with err set: -EPERM when the kernel does not let this
 * process make or enter a namespace (not root). netns_release undoes a
 * partial init too.
 */
int netns_init(struct netns *ns, enum netns_mode mode, struct hb_err *err);

/*
 * Describes the namespaces of mode that the calling thread was started in by
 * another hopbench (stack --netns forks its run children there): with same,
 * the thread's namespace is A; with other it is B, and its NETNS_IF_B's
 * address is addr_b, the /30's other address addr_a (as netns_init makes
 * them), A's inode unknown (0). Nothing is made; netns_enter(NETNS_HOST) has
 * nowhere to go. Returns 0, or a negative errno with err set (-ENOENT: no
 * NETNS_IF_B here under other).
 */
int netns_adopt(struct netns *ns, enum netns_mode mode, struct hb_err *err);

/*
 * Moves the calling thread into side's namespace (NETNS_HOST: back where
 * netns_init was called). A side that was not made is the host's. Returns 0
 * or a negative errno.
 */
int netns_enter(const struct netns *ns, enum netns_side side);

/*
 * The byte counters of NETNS_IF_B, read inside B from the calling thread
 * (which is back where it was on return). -ENOENT when there is no veth.
 */
int netns_veth_bytes(const struct netns *ns, struct netns_veth_bytes *out);

/* Moves the calling thread back to the host's namespace and closes the fds. */
void netns_release(struct netns *ns);

#endif
