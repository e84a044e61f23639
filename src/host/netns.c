/*
 * netns: network namespaces made for one lab, run or stack (see netns.h).
 * The veth pair is made with one RTM_NEWLINK request on a NETLINK_ROUTE
 * socket written here (its peer placed in B by IFLA_NET_NS_FD), the addresses
 * and the up flags with the SIOCSIF* ioctls on a socket made inside each
 * namespace: no iproute2 needed, and no name in /run/netns that a crash would
 * leave.
 */
#include "host/netns.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/veth.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#define NETNS_SELF       "/proc/thread-self/ns/net"
#define NETNS_NL_CAP     512 /* the RTM_NEWLINK request is about 120 bytes */
#define NETNS_ADDR_TRIES 256

const char *netns_mode_name(enum netns_mode mode)
{
    switch (mode) {
    case NETNS_SAME:
        return "same";
    case NETNS_OTHER:
        return "other";
    case NETNS_NONE:
        break;
    }
    return "host";
}

const char *netns_side_name(const struct netns *ns, enum netns_side side)
{
    if (ns->mode == NETNS_NONE || side == NETNS_HOST) return "host";
    if (ns->mode == NETNS_SAME) return "same";
    return side == NETNS_A ? "A" : "B";
}

void netns_describe(const struct netns *ns, const struct netns_words *w, FILE *f)
{
    if (ns->mode == NETNS_SAME) fprintf(f, "netns: same: %s%s\n", w->same, w->tail);
    if (ns->mode == NETNS_OTHER)
        fprintf(f, "netns: other: %s in namespace A (%s %s/%d), %s B (%s %s/%d)%s%s\n", w->in_a,
                NETNS_IF_A, ns->addr_a, NETNS_PREFIX, w->in_b, NETNS_IF_B, ns->addr_b, NETNS_PREFIX,
                w->after_b, w->tail);
}

int netns_enter(const struct netns *ns, enum netns_side side)
{
    int fd = ns->fd[side];

    if (ns->mode == NETNS_NONE) return 0;
    if (fd < 0) fd = ns->fd[NETNS_HOST];
    if (setns(fd, CLONE_NEWNET) == -1) return -errno;
    return 0;
}

/* Sets name's IPv4 address (when addr is not NULL, with a /NETNS_PREFIX mask) and brings it up. */
static int netns_if_up(const char *name, const char *addr)
{
    struct ifreq ifr;
    int rc = 0, s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

    if (s == -1) return -errno;
    memset(&ifr, 0, sizeof(ifr));
    snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
    if (addr != NULL) {
        struct sockaddr_in sin = { .sin_family = AF_INET };
        inet_pton(AF_INET, addr, &sin.sin_addr);
        memcpy(&ifr.ifr_addr, &sin, sizeof(sin));
        if (ioctl(s, SIOCSIFADDR, &ifr) == -1) goto fail;
        sin.sin_addr.s_addr = htonl(~0u << (32 - NETNS_PREFIX));
        memcpy(&ifr.ifr_netmask, &sin, sizeof(sin));
        if (ioctl(s, SIOCSIFNETMASK, &ifr) == -1) goto fail;
    }
    if (ioctl(s, SIOCGIFFLAGS, &ifr) == -1) goto fail;
    ifr.ifr_flags |= IFF_UP;
    if (ioctl(s, SIOCSIFFLAGS, &ifr) == -1) goto fail;
    close(s);
    return 0;
fail:
    rc = -errno;
    close(s);
    return rc;
}

/* Nothing made, no fd open. */
static void netns_clear(struct netns *ns)
{
    memset(ns, 0, sizeof(*ns));
    for (int i = 0; i < 3; i++)
        ns->fd[i] = -1;
}

/* The namespace's fd and inode of the calling thread. */
static int netns_open_self(int *fd, ino_t *ino)
{
    struct stat st;

    *fd = open(NETNS_SELF, O_RDONLY | O_CLOEXEC);
    if (*fd == -1) return -errno;
    if (fstat(*fd, &st) == -1) return -errno;
    *ino = st.st_ino;
    return 0;
}

/* A new namespace for side with its lo up; the thread is back in the host's on return. */
static int netns_make(struct netns *ns, enum netns_side side, struct hb_err *err)
{
    int rc;

    if (unshare(CLONE_NEWNET) == -1) {
        int e = errno;
        if (e == EPERM || e == EACCES)
            return hb_fail(err, -EPERM, "--netns needs root (CAP_SYS_ADMIN): %s", strerror(e));
        return hb_fail(err, -e, "cannot make a network namespace: %s", strerror(e));
    }
    rc = netns_open_self(&ns->fd[side], &ns->ino[side]);
    if (rc == 0) rc = netns_if_up("lo", NULL);
    if (netns_enter(ns, NETNS_HOST) < 0 && rc == 0) rc = -errno;
    if (rc < 0)
        return hb_fail(err, rc, "cannot set up network namespace %s: %s", netns_side_name(ns, side),
                       strerror(-rc));
    return 0;
}

/* Whether an IPv4 interface of the calling thread's namespace is in the /30 of block. */
static bool netns_block_used(const struct ifaddrs *list, uint32_t block)
{
    for (const struct ifaddrs *i = list; i != NULL; i = i->ifa_next) {
        const struct sockaddr_in *sin = (const struct sockaddr_in *)(const void *)i->ifa_addr;
        if (sin == NULL || sin->sin_family != AF_INET) continue;
        if ((ntohl(sin->sin_addr.s_addr) & ~3u) == block) return true;
    }
    return false;
}

/*
 * Picks the pair's /30 in 10.0.0.0/8, starting from one the pid spreads (two
 * labs at once get different ones) and skipping any the host's interfaces
 * have: the addresses are private to A and B, so this is for whoever reads
 * `ip addr` on the host, which then never shows them.
 */
static int netns_pick_addrs(struct netns *ns, struct hb_err *err)
{
    struct ifaddrs *list = NULL;
    uint32_t seed = (uint32_t)getpid() * 2654435761u;

    if (getifaddrs(&list) == -1)
        return hb_fail(err, -errno, "cannot list the host's addresses: %s", strerror(errno));
    for (uint32_t t = 0; t < NETNS_ADDR_TRIES; t++) {
        uint32_t block = (10u << 24) | (((seed + t * 4) & 0xffffffu) & ~3u);
        struct in_addr a = { .s_addr = htonl(block + 1) }, b = { .s_addr = htonl(block + 2) };
        if (netns_block_used(list, block)) continue;
        inet_ntop(AF_INET, &a, ns->addr_a, sizeof(ns->addr_a));
        inet_ntop(AF_INET, &b, ns->addr_b, sizeof(ns->addr_b));
        freeifaddrs(list);
        return 0;
    }
    freeifaddrs(list);
    return hb_fail(err, -EADDRINUSE, "no free /30 in 10.0.0.0/8 for the veth pair");
}

/* Appends an attribute to h (within NETNS_NL_CAP: the request is fixed and small). */
static struct rtattr *nl_put(struct nlmsghdr *h, unsigned short type, const void *data, size_t len)
{
    struct rtattr *a = (struct rtattr *)(void *)((char *)h + NLMSG_ALIGN(h->nlmsg_len));

    a->rta_type = type;
    a->rta_len = (unsigned short)RTA_LENGTH(len);
    if (len > 0) memcpy(RTA_DATA(a), data, len);
    h->nlmsg_len = NLMSG_ALIGN(h->nlmsg_len) + RTA_ALIGN(a->rta_len);
    return a;
}

/* Closes a nested attribute opened by nl_put(h, type, NULL, 0) or with a header. */
static void nl_end(struct nlmsghdr *h, struct rtattr *nest)
{
    nest->rta_len = (unsigned short)((char *)h + h->nlmsg_len - (char *)nest);
}

/* Sends h on a NETLINK_ROUTE socket and reads the kernel's ack: 0 or its negative errno. */
static int nl_talk(struct nlmsghdr *h)
{
    struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
    union {
        struct nlmsghdr h;
        char buf[4096];
    } reply;
    int rc, s = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
    ssize_t got;

    if (s == -1) return -errno;
    if (sendto(s, h, h->nlmsg_len, 0, (struct sockaddr *)&kernel, sizeof(kernel)) == -1) {
        rc = -errno;
        goto out;
    }
    do
        got = recv(s, &reply, sizeof(reply), 0);
    while (got == -1 && errno == EINTR);
    if (got == -1)
        rc = -errno;
    else if ((size_t)got < NLMSG_LENGTH(sizeof(struct nlmsgerr)) ||
             reply.h.nlmsg_type != NLMSG_ERROR)
        rc = -EPROTO;
    else
        rc = ((const struct nlmsgerr *)NLMSG_DATA(&reply.h))->error;
out:
    close(s);
    return rc;
}

/* From inside A: the veth pair NETNS_IF_A here, its peer NETNS_IF_B in B. */
static int netns_veth_make(const struct netns *ns)
{
    union {
        struct nlmsghdr h;
        char buf[NETNS_NL_CAP];
    } m;
    struct ifinfomsg ifi = { .ifi_family = AF_UNSPEC };
    uint32_t peer_ns = (uint32_t)ns->fd[NETNS_B];
    struct rtattr *info, *data, *peer;

    memset(&m, 0, sizeof(m));
    m.h.nlmsg_type = RTM_NEWLINK;
    m.h.nlmsg_flags = NLM_F_REQUEST | NLM_F_CREATE | NLM_F_EXCL | NLM_F_ACK;
    m.h.nlmsg_len = NLMSG_LENGTH(sizeof(ifi));
    memcpy(NLMSG_DATA(&m.h), &ifi, sizeof(ifi));
    nl_put(&m.h, IFLA_IFNAME, NETNS_IF_A, sizeof(NETNS_IF_A));
    info = nl_put(&m.h, IFLA_LINKINFO, NULL, 0);
    nl_put(&m.h, IFLA_INFO_KIND, "veth", sizeof("veth"));
    data = nl_put(&m.h, IFLA_INFO_DATA, NULL, 0);
    peer = nl_put(&m.h, VETH_INFO_PEER, &ifi, sizeof(ifi));
    nl_put(&m.h, IFLA_IFNAME, NETNS_IF_B, sizeof(NETNS_IF_B));
    nl_put(&m.h, IFLA_NET_NS_FD, &peer_ns, sizeof(peer_ns));
    nl_end(&m.h, peer);
    nl_end(&m.h, data);
    nl_end(&m.h, info);
    return nl_talk(&m.h);
}

/* The veth pair between A and B, addressed and up; the thread ends in the host's namespace. */
static int netns_veth(struct netns *ns, struct hb_err *err)
{
    const char *step = "enter namespace A";
    int rc = netns_pick_addrs(ns, err);

    if (rc < 0) return rc;
    rc = netns_enter(ns, NETNS_A);
    if (rc == 0) {
        step = "make the veth pair";
        rc = netns_veth_make(ns);
    }
    if (rc == 0) {
        step = "address " NETNS_IF_A;
        rc = netns_if_up(NETNS_IF_A, ns->addr_a);
    }
    if (rc == 0) {
        step = "enter namespace B";
        rc = netns_enter(ns, NETNS_B);
    }
    if (rc == 0) {
        step = "address " NETNS_IF_B;
        rc = netns_if_up(NETNS_IF_B, ns->addr_b);
    }
    if (netns_enter(ns, NETNS_HOST) < 0 && rc == 0) {
        step = "return to the host's namespace";
        rc = -errno;
    }
    if (rc < 0) return hb_fail(err, rc, "netns: cannot %s: %s", step, strerror(-rc));
    return 0;
}

int netns_init(struct netns *ns, enum netns_mode mode, struct hb_err *err)
{
    int rc;

    netns_clear(ns);
    if (mode == NETNS_NONE) return 0;
    rc = netns_open_self(&ns->fd[NETNS_HOST], &ns->ino[NETNS_HOST]);
    if (rc < 0)
        return hb_fail(err, rc, "cannot open this thread's network namespace: %s", strerror(-rc));
    ns->mode = mode;
    rc = netns_make(ns, NETNS_A, err);
    if (rc == 0 && mode == NETNS_OTHER) rc = netns_make(ns, NETNS_B, err);
    if (rc == 0 && mode == NETNS_OTHER) rc = netns_veth(ns, err);
    return rc;
}

/* NETNS_IF_B's IPv4 address in the calling thread's namespace into ns->addr_b, addr_a beside it. */
static int netns_adopt_addrs(struct netns *ns)
{
    struct ifaddrs *list = NULL;
    int rc = -ENOENT;

    if (getifaddrs(&list) == -1) return -errno;
    for (const struct ifaddrs *i = list; i != NULL && rc == -ENOENT; i = i->ifa_next) {
        const struct sockaddr_in *sin = (const struct sockaddr_in *)(const void *)i->ifa_addr;
        if (sin == NULL || sin->sin_family != AF_INET || strcmp(i->ifa_name, NETNS_IF_B) != 0)
            continue;
        struct in_addr a = { .s_addr = htonl(ntohl(sin->sin_addr.s_addr) - 1) };
        inet_ntop(AF_INET, &sin->sin_addr, ns->addr_b, sizeof(ns->addr_b));
        inet_ntop(AF_INET, &a, ns->addr_a, sizeof(ns->addr_a));
        rc = 0;
    }
    freeifaddrs(list);
    return rc;
}

int netns_adopt(struct netns *ns, enum netns_mode mode, struct hb_err *err)
{
    enum netns_side here = mode == NETNS_OTHER ? NETNS_B : NETNS_A;
    int rc;

    netns_clear(ns);
    if (mode == NETNS_NONE) return 0;
    ns->mode = mode;
    rc = netns_open_self(&ns->fd[here], &ns->ino[here]);
    if (rc < 0)
        return hb_fail(err, rc, "cannot open this thread's network namespace: %s", strerror(-rc));
    if (mode == NETNS_SAME) return 0;
    rc = netns_adopt_addrs(ns);
    if (rc < 0)
        return hb_fail(err, rc, "--in-netns other: no %s address in this namespace: %s", NETNS_IF_B,
                       strerror(-rc));
    return 0;
}

/* The rx and tx bytes of NETNS_IF_B in the calling thread's /proc/net/dev. */
static int netns_dev_bytes(struct netns_veth_bytes *out)
{
    char line[512];
    int rc = -ENOENT;
    FILE *f = fopen("/proc/thread-self/net/dev", "re");

    if (f == NULL) return -errno;
    while (rc == -ENOENT && fgets(line, sizeof(line), f) != NULL) {
        char name[IFNAMSIZ + 1];
        unsigned long long rx, tx;
        if (sscanf(line, " %16[^:]: %llu %*u %*u %*u %*u %*u %*u %*u %llu", name, &rx, &tx) != 3)
            continue;
        if (strcmp(name, NETNS_IF_B) != 0) continue;
        out->rx = rx;
        out->tx = tx;
        rc = 0;
    }
    fclose(f);
    return rc;
}

int netns_veth_bytes(const struct netns *ns, struct netns_veth_bytes *out)
{
    int here, rc;

    if (ns->mode != NETNS_OTHER) return -ENOENT;
    here = open(NETNS_SELF, O_RDONLY | O_CLOEXEC);
    if (here == -1) return -errno;
    rc = netns_enter(ns, NETNS_B);
    if (rc == 0) rc = netns_dev_bytes(out);
    if (setns(here, CLONE_NEWNET) == -1 && rc == 0) rc = -errno;
    close(here);
    return rc;
}

void netns_release(struct netns *ns)
{
    if (ns->mode != NETNS_NONE && ns->fd[NETNS_HOST] >= 0) netns_enter(ns, NETNS_HOST);
    for (int i = 0; i < 3; i++) {
        if (ns->fd[i] >= 0) close(ns->fd[i]);
        ns->fd[i] = -1;
    }
    ns->mode = NETNS_NONE;
}
