/*
 * endpoint: the addresses hopbench listens on and loads.
 *
 *   tcp://127.0.0.1:9000   tcp://[::1]:9000   tcp://localhost:9000 (= 127.0.0.1)
 *   unix:/path/to.sock     unix:@name         (Linux abstract namespace)
 *
 * and the forms users type for them: http://HOST[:PORT][/PATH] is
 * tcp://HOST:PORT (port 80 by default), http+unix://%2Fpath%2Fto.sock[/PATH]
 * (the socket's path percent-encoded, %40name for an abstract name) is
 * unix:/path/to.sock, unix:///path/to.sock is unix:/path/to.sock. The
 * endpoint is then the native one (its text, tables, evidence); the /PATH is
 * for run's requests (endpoint_parse_url), refused elsewhere. https:// is refused.
 *
 * Parsing is strict: numeric addresses only (plus "localhost"), a port in
 * 0..65535 written in plain decimal, a path or name that fits sun_path. An
 * abstract name's address length is exact (no trailing NULs). This module also
 * opens sockets: non-blocking connect, and listen with the safety rules of
 * hopbench (loopback only unless allowed, socket files 0600, never removing a
 * file that is not a stale socket).
 */
#ifndef HOPBENCH_ENDPOINT_H
#define HOPBENCH_ENDPOINT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>

#include "util.h"

#define ENDPOINT_LABEL_MAX 32 /* a label, with its NUL */

enum endpoint_kind {
    ENDPOINT_TCP = 1,
    ENDPOINT_UNIX,     /* a path in the file system */
    ENDPOINT_ABSTRACT, /* a name in the Linux abstract namespace */
};

struct endpoint {
    enum endpoint_kind kind;
    struct sockaddr_storage addr;
    socklen_t addr_len; /* exact: for ENDPOINT_ABSTRACT, offsetof(sun_path) + 1 + name length */
    char text[160];     /* canonical form, e.g. "tcp://127.0.0.1:9000", "unix:@name" */
    dev_t file_dev;     /* ENDPOINT_UNIX after endpoint_listen: the socket file it made */
    ino_t file_ino;     /* (0: none), which endpoint_unlink checks before removing */
    /* A name the user gave it ("front"), or "". */
    char label[ENDPOINT_LABEL_MAX];
};

/*
 * Parses s into ep. On error returns -EINVAL and err->msg names what is wrong
 * (e.g. "port 70000 is out of range 0..65535 in 'tcp://127.0.0.1:70000'").
 * An http:// or http+unix:// URL may have no path but "/".
 */
int endpoint_parse(struct endpoint *ep, const char *s, struct hb_err *err);

/*
 * endpoint_parse, and for an http:// or http+unix:// URL *path where its
 * /PATH begins in s ("" when it has none); *path is NULL for the other forms.
 */
int endpoint_parse_url(struct endpoint *ep, const char *s, const char **path, struct hb_err *err);

/* What tables print for ep: its label if it has one, else its text. */
const char *endpoint_name(const struct endpoint *ep);

/* "tcp", "unix" (path and abstract alike): the transport name used in tables and JSON. */
const char *endpoint_transport(const struct endpoint *ep);

/* True for TCP addresses in 127.0.0.0/8, ::1 or ::ffff:127.0.0.0/104; true for unix endpoints. */
bool endpoint_is_local(const struct endpoint *ep);

/* TCP port in host order, 0 for unix endpoints. */
unsigned endpoint_port(const struct endpoint *ep);

/* Sets the TCP port (after binding to port 0) and refreshes ep->text. */
void endpoint_set_port(struct endpoint *ep, unsigned port);

/*
 * Starts a non-blocking connect: creates a SOCK_NONBLOCK|SOCK_CLOEXEC socket,
 * sets TCP_NODELAY on TCP, calls connect(). Returns the fd (>= 0) and sets
 * *in_progress when the connect is pending (TCP EINPROGRESS: wait for EPOLLOUT
 * then read SO_ERROR). Returns a negative errno when the connect failed at once
 * (ECONNREFUSED, ENOENT, EAGAIN for a full AF_UNIX backlog, EADDRNOTAVAIL, ...);
 * no fd is left open then.
 */
int endpoint_connect(const struct endpoint *ep, bool *in_progress);

/*
 * Source addresses for TCP connects (run --source): a connection binds one of
 * them, port 0, before it connects, with IP_BIND_ADDRESS_NO_PORT so that the
 * port is picked at connect time per destination: each address has the
 * ephemeral range's ports (net.ipv4.ip_local_port_range) to each destination
 * address and port, where one process without them has that many in all.
 */
#define ENDPOINT_MAX_SOURCES 64

struct endpoint_sources {
    struct sockaddr_storage addr[ENDPOINT_MAX_SOURCES]; /* port 0 */
    unsigned n;
};

/*
 * Parses a list of source addresses into src: numeric IPv4 or IPv6 addresses,
 * comma-separated, and IPv4 ranges A-B ("127.0.0.2-127.0.0.9"), at most
 * ENDPOINT_MAX_SOURCES in all. Returns 0 or -EINVAL with err saying what is
 * wrong (no option name: the caller's).
 */
int endpoint_sources_parse(struct endpoint_sources *src, const char *s, struct hb_err *err);

/* Whether every address of src is a loopback one (127.0.0.0/8, ::1). */
bool endpoint_sources_local(const struct endpoint_sources *src);

/*
 * The n source addresses src as --source takes them: "127.0.0.2-127.0.0.9"
 * for three or more consecutive IPv4 addresses, else "A,B,...", into buf.
 */
const char *endpoint_sources_text(const struct sockaddr_storage *src, unsigned n, char *buf,
                                  size_t cap);

/*
 * endpoint_connect from source address src (port 0: see struct
 * endpoint_sources), or as endpoint_connect when src is NULL or ep is not
 * TCP. A source of another family than ep's is -EAFNOSUPPORT; a bind that
 * fails returns its errno (EADDRNOTAVAIL: not an address of this host).
 */
int endpoint_connect_from(const struct endpoint *ep, const struct sockaddr_storage *src,
                          bool *in_progress);

/*
 * Checks that something accepts connections at ep: connects, waits at most
 * timeout_ms, closes. Returns 0 or the negative errno of the failure
 * (-ETIMEDOUT when nothing answered in time). The server sees one connection;
 * a TCP one is closed with an RST, so it leaves no TIME_WAIT socket behind.
 */
int endpoint_probe(const struct endpoint *ep, int timeout_ms);

struct listen_opts {
    int backlog;       /* listen(2) backlog; 0 = endpoint_default_backlog() */
    unsigned mode;     /* permission bits of a socket file, e.g. 0600 */
    bool allow_remote; /* allow binding a non-loopback TCP address */
    /* TCP: SO_REUSEPORT, so that several servers (processes) listen on one port, the
     * kernel spreading the connections over them by their addresses' hash */
    bool reuseport;
};

/*
 * The listen(2) backlog a server gets when it asks for none: net.core.somaxconn
 * (read from /proc/sys/net/core/somaxconn), since the kernel caps every backlog
 * there, AF_UNIX ones included, and a smaller one makes a burst of AF_UNIX
 * connects fail with EAGAIN. SOMAXCONN when the file cannot be read.
 */
int endpoint_default_backlog(void);

/*
 * Creates a listening socket (non-blocking, close-on-exec; SO_REUSEADDR on
 * TCP). For a TCP port 0 the kernel's choice is written back into ep. For a
 * socket file: an existing file that is not a socket is never removed (error);
 * an existing socket nobody listens on (stale, left by a crash) is replaced;
 * a live one is an error. The file gets opts->mode, and its device and inode
 * are recorded in ep (for endpoint_unlink). Returns the fd or a negative errno
 * with err->msg set.
 */
int endpoint_listen(struct endpoint *ep, const struct listen_opts *opts, struct hb_err *err);

/*
 * Removes the socket file endpoint_listen made for an ENDPOINT_UNIX endpoint,
 * if the path still holds that very socket (same device and inode): a file
 * put there since (another server's socket after ours was removed, anything
 * else) is left alone. Returns true when the path was removed or was already
 * gone; false when something else is there now, or when ep never got a socket
 * file of its own. A no-op (true) for other kinds.
 */
bool endpoint_unlink(const struct endpoint *ep);

#endif
