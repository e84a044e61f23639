/*
 * sockdiag: socket counts from NETLINK_SOCK_DIAG dumps (see sockdiag.h).
 *
 * Every reply is read with memcpy into a local struct instead of through the
 * NLMSG_DATA/NLA_DATA casts: the receive buffer holds kernel bytes at 4-byte
 * alignment only, and the casts would drop const. Nothing is allocated per
 * socket except the two inode lists of an AF_UNIX count (capped).
 */
#include "host/sockdiag.h"

#include <errno.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

/* 32 KiB: the kernel sizes each dump datagram to the reader's buffer, up to this. */
#define DIAG_BUF_LEN ((size_t)32 * 1024)
#define DIAG_REQ_MAX 128
#define SUN_PATH_MAX sizeof(((struct sockaddr_un){ 0 }).sun_path)
/* TCP states 1..11 only: the kernel then leaves out TCP_BOUND_INACTIVE (13). */
#define TCP_STATE_SET (((1u << SOCKDIAG_TCP_NSTATES) - 1) & ~1u)

/* What diag_walk() found in one datagram. Errors are negative errnos. */
enum diag_walk_rc {
    DIAG_MORE = 0, /* more datagrams follow */
    DIAG_DONE = 1, /* NLMSG_DONE seen: the dump is complete */
};

/* Receives the body (after the nlmsghdr) of each SOCK_DIAG_BY_FAMILY reply. */
struct diag_sink {
    int (*on_msg)(const uint8_t *body, size_t len, void *ctx); /* 0 or -errno to stop */
    void *ctx;
};

static int diag_send(int fd, const void *body, size_t body_len)
{
    struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
    struct nlmsghdr nh = {
        .nlmsg_len = (uint32_t)NLMSG_LENGTH(body_len),
        .nlmsg_type = SOCK_DIAG_BY_FAMILY,
        .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP,
        .nlmsg_seq = 1,
    };
    uint8_t req[NLMSG_HDRLEN + DIAG_REQ_MAX] = { 0 };
    ssize_t n;

    if (body_len > DIAG_REQ_MAX) return -EINVAL;
    memcpy(req, &nh, sizeof(nh));
    memcpy(req + NLMSG_HDRLEN, body, body_len);
    do {
        n = sendto(fd, req, nh.nlmsg_len, 0, (const struct sockaddr *)&kernel, sizeof(kernel));
    } while (n == -1 && errno == EINTR);
    if (n == -1) return -errno;
    /* A datagram goes whole or not at all; anything else is a kernel we do not understand. */
    return (size_t)n == nh.nlmsg_len ? 0 : -EIO;
}

/* One datagram from the kernel into buf: its length, or a negative errno. */
static ssize_t diag_recv(int fd, uint8_t *buf, size_t cap)
{
    struct sockaddr_nl from;
    struct iovec iov = { .iov_base = buf, .iov_len = cap };
    struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
    ssize_t n;

    for (;;) {
        msg.msg_name = &from;
        msg.msg_namelen = sizeof(from);
        n = recvmsg(fd, &msg, 0);
        if (n == -1 && errno == EINTR) continue;
        if (n == -1) return -errno;
        if (msg.msg_flags & MSG_TRUNC) return -EMSGSIZE;
        /* Only the kernel (port id 0) answers a dump; drop anything a process sent us. */
        if (from.nl_pid == 0) return n > 0 ? n : -EPROTO;
    }
}

/* NLMSG_DONE of a dump carries the dump's own return value: 0, or a negative errno. */
static int diag_done(const uint8_t *body, size_t len)
{
    int err = 0;

    if (len >= sizeof(err)) memcpy(&err, body, sizeof(err));
    return err < 0 ? err : DIAG_DONE;
}

/* NLMSG_ERROR: struct nlmsgerr, whose first member is a negative errno (0 = ACK). */
static int diag_error(const uint8_t *body, size_t len)
{
    int err;

    if (len < sizeof(err)) return -EPROTO;
    memcpy(&err, body, sizeof(err));
    /* An ACK is never asked for (no NLM_F_ACK); if one comes anyway, nothing follows it. */
    return err < 0 ? err : DIAG_DONE;
}

/* Walks the netlink messages of one datagram. Returns DIAG_MORE, DIAG_DONE or -errno. */
static int diag_walk(const uint8_t *buf, size_t len, const struct diag_sink *sink)
{
    size_t off = 0;

    while (off < len && len - off >= NLMSG_HDRLEN) {
        struct nlmsghdr nh;
        const uint8_t *body = buf + off + NLMSG_HDRLEN;
        size_t body_len;
        int rc = 0;

        memcpy(&nh, buf + off, sizeof(nh));
        if (nh.nlmsg_len < NLMSG_HDRLEN || nh.nlmsg_len > len - off) return -EPROTO;
        body_len = nh.nlmsg_len - NLMSG_HDRLEN;
        if (nh.nlmsg_type == NLMSG_DONE) return diag_done(body, body_len);
        if (nh.nlmsg_type == NLMSG_ERROR) return diag_error(body, body_len);
        if (nh.nlmsg_type == SOCK_DIAG_BY_FAMILY) rc = sink->on_msg(body, body_len, sink->ctx);
        if (rc < 0) return rc;
        off += NLMSG_ALIGN(nh.nlmsg_len);
    }
    return DIAG_MORE;
}

/* Runs one dump request to the end (NLMSG_DONE), feeding each reply to sink. */
static int diag_dump(const void *req, size_t req_len, const struct diag_sink *sink)
{
    uint8_t *buf = malloc(DIAG_BUF_LEN);
    int fd, rc;

    if (buf == NULL) return -ENOMEM;
    fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
    if (fd == -1) {
        rc = -errno;
        goto out;
    }
    rc = diag_send(fd, req, req_len);
    while (rc == DIAG_MORE) {
        ssize_t n = diag_recv(fd, buf, DIAG_BUF_LEN);

        rc = n < 0 ? (int)n : diag_walk(buf, (size_t)n, sink);
    }
    /* Stopping early is fine: closing the socket ends the kernel's dump. */
    close(fd);
out:
    free(buf);
    return rc < 0 ? rc : 0;
}

/* ---- TCP ---- */

struct tcp_scan {
    unsigned port;
    struct sockdiag_tcp *out;
};

static int tcp_on_msg(const uint8_t *body, size_t len, void *ctx)
{
    struct tcp_scan *scan = ctx;
    struct sockdiag_tcp *out = scan->out;
    struct inet_diag_msg m;
    unsigned sport, dport;

    if (len < sizeof(m)) return -EPROTO;
    memcpy(&m, body, sizeof(m));
    out->dumped++;
    sport = ntohs(m.id.idiag_sport);
    dport = ntohs(m.id.idiag_dport);
    /* The kernel's filter already did this; a kernel that refused it sent every socket. */
    if (sport != scan->port && dport != scan->port) return 0;
    /* Only states 1..11 were asked for; request sockets come back as SYN_RECV. */
    if (m.idiag_state < 1 || m.idiag_state >= SOCKDIAG_TCP_NSTATES) return 0;
    out->state[m.idiag_state]++;
    out->total++;
    /* Which side holds it: a TIME_WAIT belongs to whoever closed first. */
    if (sport == scan->port)
        out->server_state[m.idiag_state]++;
    else
        out->client_state[m.idiag_state]++;
    if (m.idiag_state == TCP_LISTEN && sport == scan->port) {
        /* For a listener the kernel reports the accept queue and the backlog here. */
        out->have_listener = true;
        out->listen_rqueue += m.idiag_rqueue;
        out->listen_backlog += m.idiag_wqueue;
    }
    return 0;
}

/* Five ops of the port filter below: 20 bytes of bytecode. */
#define PORT_BC_OPS 5

/*
 * A dump request that carries a filter (INET_DIAG_REQ_BYTECODE) for "local
 * port == port or remote port == port". The kernel runs it on every socket
 * its walk finds and builds a message only for those it accepts, so a host
 * with many sockets on other ports costs the walk of its hash tables but no
 * messages. How the kernel runs it (inet_diag_bc_run): an op whose test holds
 * moves on by `yes` bytes, else by `no`; ending exactly at the end accepts,
 * past it rejects (a JMP always moves by `no`). A port test is two ops, the
 * second holding the port (host order) in its `no`. The kernel's check of the
 * program also wants every op on the chain of `yes` moves from the start.
 */
static size_t tcp_port_req(uint8_t *buf, int family, unsigned port, uint32_t states)
{
    struct inet_diag_req_v2 req = {
        .sdiag_family = (uint8_t)family,
        .sdiag_protocol = IPPROTO_TCP,
        .idiag_states = states,
    };
    const struct inet_diag_bc_op bc[PORT_BC_OPS] = {
        { INET_DIAG_BC_S_EQ, 8, 12 },   /* 0: local port == port? yes: on to 8; no: to 12 */
        { 0, 0, (unsigned short)port }, /* 4 */
        { INET_DIAG_BC_JMP, 4, 12 },    /* 8: always `no`: to 20, the end: accept */
        { INET_DIAG_BC_D_EQ, 8, 12 },   /* 12: remote port == port? yes: to 20; no: to 24, reject */
        { 0, 0, (unsigned short)port }, /* 16 */
    };
    struct nlattr nla = { .nla_len = (uint16_t)(NLA_HDRLEN + sizeof(bc)),
                          .nla_type = INET_DIAG_REQ_BYTECODE };
    size_t off = NLMSG_ALIGN(sizeof(req));

    memcpy(buf, &req, sizeof(req));
    memcpy(buf + off, &nla, sizeof(nla));
    memcpy(buf + off + NLA_HDRLEN, bc, sizeof(bc));
    return off + nla.nla_len;
}

static int tcp_dump(int family, struct tcp_scan *scan)
{
    uint8_t req[DIAG_REQ_MAX] = { 0 };
    size_t len = tcp_port_req(req, family, scan->port, TCP_STATE_SET);
    struct diag_sink sink = { .on_msg = tcp_on_msg, .ctx = scan };
    uint64_t before = scan->out->dumped;
    int rc = diag_dump(req, len, &sink);

    /*
     * A kernel whose bytecode check does not know S_EQ/D_EQ refuses the whole
     * request before dumping anything: ask again without the filter.
     */
    if (rc == -EINVAL && scan->out->dumped == before)
        rc = diag_dump(req, sizeof(struct inet_diag_req_v2), &sink);
    return rc;
}

int sockdiag_tcp_count(unsigned port, int family, struct sockdiag_tcp *out)
{
    struct tcp_scan scan = { .port = port, .out = out };
    int rc = 0;

    memset(out, 0, sizeof(*out));
    if (port < 1 || port > 65535) return -EINVAL;
    if (family != AF_INET && family != AF_INET6 && family != AF_UNSPEC) return -EINVAL;
    if (family != AF_INET6) rc = tcp_dump(AF_INET, &scan);
    if (rc == 0 && family != AF_INET) {
        rc = tcp_dump(AF_INET6, &scan);
        /* No AF_INET6 diag handler: a kernel without IPv6 has no such sockets to count. */
        if (rc == -ENOENT) rc = 0;
    }
    if (rc < 0) memset(out, 0, sizeof(*out));
    return rc;
}

/* What sockdiag_tcp_listeners looks for, and what it found. */
struct listen_scan {
    unsigned port;
    int family;       /* the address's */
    uint8_t addr[16]; /* as the kernel writes idiag_src: IPv4 in the first 4 bytes */
    uint32_t *ino;
    size_t cap, n;
};

/* Whether a listener bound to src (of family fam) takes connections to the scan's address. */
static bool listen_takes(const struct listen_scan *s, int fam, const uint8_t *src)
{
    static const uint8_t any[16] = { 0 };
    static const uint8_t v4mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

    if (fam == s->family)
        return memcmp(src, s->addr, fam == AF_INET ? 4 : 16) == 0 ||
               memcmp(src, any, fam == AF_INET ? 4 : 16) == 0;
    /* an IPv4 address, an IPv6 listener: [::] (unless V6ONLY, which the dump does not say) or
     * the address as ::ffff:a.b.c.d */
    return s->family == AF_INET && fam == AF_INET6 &&
           (memcmp(src, any, 16) == 0 ||
            (memcmp(src, v4mapped, 12) == 0 && memcmp(src + 12, s->addr, 4) == 0));
}

static int listen_on_msg(const uint8_t *body, size_t len, void *ctx)
{
    struct listen_scan *s = ctx;
    struct inet_diag_msg m;

    if (len < sizeof(m)) return -EPROTO;
    memcpy(&m, body, sizeof(m));
    if (m.idiag_state != TCP_LISTEN || ntohs(m.id.idiag_sport) != s->port || m.idiag_inode == 0)
        return 0;
    if (!listen_takes(s, m.idiag_family, (const uint8_t *)m.id.idiag_src)) return 0;
    if (s->n < s->cap) s->ino[s->n++] = m.idiag_inode;
    return 0;
}

int sockdiag_tcp_listeners(unsigned port, int family, const void *addr, uint32_t *ino, size_t cap,
                           size_t *n)
{
    struct listen_scan s = { .port = port, .family = family, .ino = ino, .cap = cap };
    struct diag_sink sink = { .on_msg = listen_on_msg, .ctx = &s };
    uint8_t req[DIAG_REQ_MAX] = { 0 };
    int rc = 0;

    *n = 0;
    if (port < 1 || port > 65535 || (family != AF_INET && family != AF_INET6)) return -EINVAL;
    memcpy(s.addr, addr, family == AF_INET ? 4 : 16);
    for (int f = 0; f < 2 && rc == 0; f++) {
        int fam = f == 0 ? family : AF_INET6;
        size_t len = tcp_port_req(req, fam, port, 1u << TCP_LISTEN);

        if (f == 1 && family == AF_INET6) break; /* an IPv6 address: its own family only */
        rc = diag_dump(req, len, &sink);
        /* a kernel that refuses the filter: every listener of the family, matched here */
        if (rc == -EINVAL) rc = diag_dump(req, sizeof(struct inet_diag_req_v2), &sink);
        if (rc == -ENOENT && fam == AF_INET6) rc = 0; /* no IPv6 */
    }
    *n = s.n;
    return rc;
}

const char *sockdiag_tcp_state_name(int state)
{
    static const char *const names[SOCKDIAG_TCP_NSTATES] = {
        [TCP_ESTABLISHED] = "ESTABLISHED",
        [TCP_SYN_SENT] = "SYN_SENT",
        [TCP_SYN_RECV] = "SYN_RECV",
        [TCP_FIN_WAIT1] = "FIN_WAIT1",
        [TCP_FIN_WAIT2] = "FIN_WAIT2",
        [TCP_TIME_WAIT] = "TIME_WAIT",
        [TCP_CLOSE] = "CLOSE",
        [TCP_CLOSE_WAIT] = "CLOSE_WAIT",
        [TCP_LAST_ACK] = "LAST_ACK",
        [TCP_LISTEN] = "LISTEN",
        [TCP_CLOSING] = "CLOSING",
    };

    if (state < 1 || state >= SOCKDIAG_TCP_NSTATES) return "UNKNOWN";
    return names[state];
}

/* ---- AF_UNIX ---- */

/* A list of socket inodes that grows by doubling up to SOCKDIAG_MAX_SOCKETS. */
struct ino_list {
    uint32_t *v;
    size_t len;
    size_t cap;
};

static int ino_list_push(struct ino_list *l, uint32_t ino)
{
    if (l->len == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 256;
        uint32_t *v;

        if (cap > SOCKDIAG_MAX_SOCKETS) cap = SOCKDIAG_MAX_SOCKETS;
        if (l->len >= cap) return -E2BIG;
        v = realloc(l->v, cap * sizeof(*v));
        if (v == NULL) return -ENOMEM;
        l->v = v;
        l->cap = cap;
    }
    l->v[l->len++] = ino;
    return 0;
}

/* The attributes of one unix_diag_msg that we asked for with udiag_show. */
struct unix_attrs {
    const uint8_t *name; /* UNIX_DIAG_NAME: sun_path bytes; NULL when unbound */
    size_t name_len;
    bool have_peer;
    uint32_t peer; /* UNIX_DIAG_PEER: inode of the connected peer */
    struct unix_diag_rqlen rqlen;
};

static void unix_take_attr(struct unix_attrs *a, unsigned type, const uint8_t *data, size_t len)
{
    switch (type) {
    case UNIX_DIAG_NAME:
        a->name = data;
        a->name_len = len;
        break;
    case UNIX_DIAG_PEER:
        if (len >= sizeof(a->peer)) {
            memcpy(&a->peer, data, sizeof(a->peer));
            a->have_peer = true;
        }
        break;
    case UNIX_DIAG_RQLEN:
        if (len >= sizeof(a->rqlen)) memcpy(&a->rqlen, data, sizeof(a->rqlen));
        break;
    default: /* not asked for, or newer than this code */
        break;
    }
}

static int unix_parse_attrs(const uint8_t *p, size_t len, struct unix_attrs *a)
{
    memset(a, 0, sizeof(*a));
    while (len >= NLA_HDRLEN) {
        struct nlattr nla;
        size_t step;

        memcpy(&nla, p, sizeof(nla));
        if (nla.nla_len < NLA_HDRLEN || nla.nla_len > len) return -EPROTO;
        unix_take_attr(a, nla.nla_type & NLA_TYPE_MASK, p + NLA_HDRLEN,
                       (size_t)nla.nla_len - NLA_HDRLEN);
        step = NLA_ALIGN((size_t)nla.nla_len);
        if (step >= len) break;
        p += step;
        len -= step;
    }
    return 0;
}

struct unix_scan {
    const char *name; /* as the caller wrote it: a path or "@abstract" */
    size_t name_len;
    struct sockdiag_unix *out;
    struct ino_list named;   /* inodes of stream sockets bound to name */
    struct ino_list peer_of; /* peer inode of every other connected stream socket */
};

/*
 * The kernel stores a path with its terminating NUL and an abstract name as
 * exact bytes after a leading NUL; the caller writes "@" for that NUL.
 */
static bool unix_name_matches(const struct unix_attrs *a, const struct unix_scan *scan)
{
    if (a->name == NULL || a->name_len == 0) return false;
    if (a->name[0] == '\0')
        return scan->name[0] == '@' && a->name_len == scan->name_len &&
               memcmp(a->name + 1, scan->name + 1, a->name_len - 1) == 0;
    return strnlen((const char *)a->name, a->name_len) == scan->name_len &&
           memcmp(a->name, scan->name, scan->name_len) == 0;
}

static int unix_count_named(struct unix_scan *scan, const struct unix_diag_msg *m,
                            const struct unix_attrs *a)
{
    struct sockdiag_unix *out = scan->out;

    if (m->udiag_state == TCP_LISTEN) {
        out->listening++;
        out->have_listener = true;
        if (out->listen_ino == 0) out->listen_ino = m->udiag_ino;
        out->listen_rqueue += a->rqlen.udiag_rqueue;
        out->listen_backlog += a->rqlen.udiag_wqueue;
    } else if (m->udiag_state == TCP_ESTABLISHED) {
        out->established++;
    }
    return ino_list_push(&scan->named, m->udiag_ino);
}

static int unix_on_msg(const uint8_t *body, size_t len, void *ctx)
{
    struct unix_scan *scan = ctx;
    struct unix_diag_msg m;
    struct unix_attrs a;
    size_t hdr = NLMSG_ALIGN(sizeof(m));
    int rc;

    if (len < hdr) return -EPROTO;
    memcpy(&m, body, sizeof(m));
    if (++scan->out->total_unix > SOCKDIAG_MAX_SOCKETS) return -E2BIG;
    if (m.udiag_type != SOCK_STREAM) return 0;
    rc = unix_parse_attrs(body + hdr, len - hdr, &a);
    if (rc < 0) return rc;
    if (unix_name_matches(&a, scan)) return unix_count_named(scan, &m, &a);
    /*
     * Which of these are our clients is known only once every named inode is
     * in. Peer inode 0 is a peer with no socket: not accepted yet, or closed.
     */
    if (a.have_peer && a.peer != 0) return ino_list_push(&scan->peer_of, a.peer);
    return 0;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

    return (x > y) - (x < y);
}

/* Clients: connected stream sockets whose peer inode is one of the named sockets. */
static uint64_t unix_count_peers(struct unix_scan *scan)
{
    uint64_t n = 0;

    if (scan->named.len == 0) return 0;
    qsort(scan->named.v, scan->named.len, sizeof(uint32_t), cmp_u32);
    for (size_t i = 0; i < scan->peer_of.len; i++) {
        if (bsearch(&scan->peer_of.v[i], scan->named.v, scan->named.len, sizeof(uint32_t),
                    cmp_u32) != NULL)
            n++;
    }
    return n;
}

int sockdiag_unix_count(const char *name, struct sockdiag_unix *out)
{
    struct unix_diag_req req = {
        .sdiag_family = AF_UNIX,
        .udiag_states = ~0u,
        .udiag_show = UDIAG_SHOW_NAME | UDIAG_SHOW_PEER | UDIAG_SHOW_RQLEN,
    };
    struct unix_scan scan = { .name = name, .out = out };
    struct diag_sink sink = { .on_msg = unix_on_msg, .ctx = &scan };
    int rc;

    memset(out, 0, sizeof(*out));
    if (name == NULL || name[0] == '\0') return -EINVAL;
    scan.name_len = strlen(name);
    if (scan.name_len > SUN_PATH_MAX) return -ENAMETOOLONG;
    rc = diag_dump(&req, sizeof(req), &sink);
    if (rc == 0) out->peers = unix_count_peers(&scan);
    free(scan.named.v);
    free(scan.peer_of.v);
    if (rc < 0) memset(out, 0, sizeof(*out));
    return rc;
}
