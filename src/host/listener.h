/*
 * listener: which processes serve a local endpoint, found from its listening
 * socket. sock_diag gives the inode of each socket listening there (a TCP port
 * on a loopback address, with its wildcard and dual-stack listeners; a socket
 * file or abstract name), and /proc gives the processes whose fds hold one
 * (/proc/PID/fd/N -> "socket:[INODE]"): every process as root, only the
 * user's own otherwise. The server is each holder whose parent holds none of
 * them, with its tree (nginx's master and its workers, php-fpm's master and
 * its pool); pid 1 (an init that holds the socket for socket activation) and
 * hopbench itself are never one. Not for the hot path: it reads every
 * process's fds once, before the runs.
 */
#ifndef HOPBENCH_LISTENER_H
#define HOPBENCH_LISTENER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "endpoint.h"
#include "host/counters.h"

/* The most servers (holders whose parent holds none) one endpoint reports. */
#define LISTENER_MAX 8

struct listener {
    unsigned sockets;    /* listening sockets found for the endpoint */
    unsigned holders;    /* processes found holding one of them */
    unsigned unreadable; /* processes whose fds this user may not read (another user's) */
    pid_t roots[LISTENER_MAX];
    char comm[LISTENER_MAX][PROC_COMM_MAX];
    unsigned nroots;
};

/*
 * Fills *out for ep, which must be local (endpoint_is_local). Returns 0 (no
 * socket or no readable holder is not an error: out says so), or the negative
 * errno of the sock_diag dump or of reading /proc.
 */
int listener_find(const struct endpoint *ep, struct listener *out);

/*
 * Writes into buf (cap bytes) why l names no one server, for a reader: "no
 * socket listens there", "none of this user's processes holds it; only root
 * sees others' fds", "2 processes listen there, not one tree: python3 (pid
 * 12), python3 (pid 13)" ...; "" when it names one. Returns buf.
 */
const char *listener_why(const struct listener *l, char *buf, size_t cap);

#endif
