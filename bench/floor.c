/*
 * floor: the physical floor of one request/response round trip on this kernel.
 *
 * Two processes (fork) play blocking ping-pong over one connected stream
 * socket: the client (parent) writes SIZE bytes and reads SIZE bytes back; the
 * server (child) echoes whatever arrives until EOF. No event loop, no threads,
 * no framing, no allocation in the timed loop: just write(2)/read(2) and a
 * CLOCK_MONOTONIC stamp either side. Whatever this measures is what the kernel
 * and the scheduler cost; no userspace load generator can beat it.
 *
 * It is the baseline the hopbench load engine is compared against
 * (bench/pingpong.sh): hopbench's p50 divided by this p50 is the overhead of
 * the engine itself (event loop, framing, histogram), for the same transport
 * and the same CPU placement.
 *
 *   floor TRANSPORT SIZE ITERATIONS [--pin none|same|split] [--warmup N] [--wait W]
 *   floor serve tcp|unix ADDR [--pin-cpu N] [--wait W]
 *   floor client tcp|unix ADDR SIZE ITERATIONS [--pin-cpu N] [--warmup N]
 *
 *   TRANSPORT   tcp (127.0.0.1, ephemeral port, TCP_NODELAY on both ends),
 *               unix (socket file in a mkdtemp dir, removed once connected),
 *               socketpair (AF_UNIX socketpair, no file at all)
 *   --pin       none: no pinning (default); same: both on CPU 0;
 *               split: client on CPU 0, server on CPU 1
 *   SIZE        bytes per message, 1..65536 (the client writes it all before
 *               reading, so it must fit in the socket buffers)
 *   --warmup    round trips run and discarded before timing (default 1000)
 *   --wait      how the echo server waits for the next bytes (the client always
 *               blocks in read): block (default), a blocking read(2); epoll,
 *               epoll_wait(2) on the socket (EPOLLIN, level-triggered) then
 *               one read; poll, poll(2) (POLLIN) then one read; epoll-out,
 *               epoll_wait with EPOLLIN | EPOLLOUT edge-triggered, reads until
 *               EAGAIN. A blocking read on an AF_UNIX socket is also woken when
 *               the peer consumes what this end sent (unix_write_space);
 *               poll and epoll filter that wake-up by event, epoll-out asks
 *               for it (bench/RESULTS.md, the server's wait at 64 KiB).
 *
 * The first form is self-contained: it forks its own echo server on a
 * connection it set up itself. The other two split the pair so that either end
 * can be swapped for another program (bench/pingpong.sh pairs them with
 * hopbench run and hopbench serve, to tell client cost from server cost):
 *
 *   serve       a blocking echo server: accept, one forked child per
 *               connection that echoes until EOF (the same loop as the
 *               self-contained server). Prints 'floor: listening on
 *               tcp://127.0.0.1:PORT' or 'floor: listening on unix:PATH' on
 *               stdout once it listens, runs until SIGTERM or SIGINT, then
 *               removes its socket file; its children die with it.
 *   client      connects to an existing echo server and runs the same timed
 *               ping-pong as the self-contained client, same JSON line.
 *   ADDR        tcp: a port on 127.0.0.1 (serve: 0 lets the kernel choose);
 *               unix: a socket path (serve refuses an existing file)
 *   --pin-cpu   pin this process (and serve's children) to CPU N
 *
 * Prints one line of JSON on stdout (server_wait: the --wait of the forked
 * server, "external" in client mode); percentiles are nearest-rank over the
 * sorted samples; client_cpu_ns_per_op is the client process's CPU time over
 * the timed loop divided by ITERATIONS (the server is another process and is
 * not counted). Errors: one line on stderr, exit 1; bad usage: exit 64.
 * serve exits 0 when stopped by a signal.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define BENCH_PROG "floor"
#include "bench.h"

#define EXIT_USAGE 64
/*
 * The client writes all SIZE bytes before it reads any: a message larger than
 * the socket buffers in flight would deadlock both blocking writers (AF_UNIX
 * with default wmem stalls at 512 KiB). 64 KiB keeps a wide margin.
 */
#define MAX_SIZE         65536U
#define MAX_ITERATIONS   100000000ULL
#define DEFAULT_WARMUP   1000ULL
#define READ_EOF         (-2)
#define ECHO_BUF_SIZE    65536U
#define CLIENT_CPU       0
#define SPLIT_SERVER_CPU 1
#define MAX_PORT         65535U
#define LISTEN_BACKLOG   64
#define NO_CPU           (-1)

/* Which flags a mode accepts. */
#define FLAG_PIN     1U
#define FLAG_PIN_CPU 2U
#define FLAG_WARMUP  4U
#define FLAG_WAIT    8U

enum mode { MODE_SELF, MODE_SERVE, MODE_CLIENT };
enum transport { T_TCP, T_UNIX, T_SOCKETPAIR };
enum pin { PIN_NONE, PIN_SAME, PIN_SPLIT };
enum wait { WAIT_BLOCK, WAIT_EPOLL, WAIT_POLL, WAIT_EPOLL_OUT };

static const char *const transport_names[] = { "tcp", "unix", "socketpair" };
static const char *const pin_names[] = { "none", "same", "split" };
static const char *const wait_names[] = { "block", "epoll", "poll", "epoll-out" };

/* Where serve listens or client connects: 127.0.0.1:PORT or a Unix socket path. */
union sock_addr {
    struct sockaddr sa;
    struct sockaddr_in in;
    struct sockaddr_un un;
};

struct options {
    enum mode mode;
    enum transport transport;
    size_t size;
    uint64_t iterations;
    uint64_t warmup;
    enum pin pin;          /* self-contained mode */
    enum wait wait;        /* the echo server's wait (self-contained and serve modes) */
    int pin_cpu;           /* serve and client modes; NO_CPU: not pinned */
    const char *addr_text; /* ADDR as given, for messages */
    union sock_addr addr;
    socklen_t addr_len;
};

/* A connected pair: client_fd stays in the parent, server_fd goes to the child. */
struct conn {
    int client_fd;
    int server_fd;
};

struct stats {
    uint64_t p50;
    uint64_t p90;
    uint64_t p99;
    uint64_t mean;
    uint64_t cpu_per_op;
};

static void usage(void)
{
    fputs("usage: floor tcp|unix|socketpair SIZE ITERATIONS [--pin none|same|split] "
          "[--warmup N] [--wait W]\n"
          "       floor serve tcp|unix ADDR [--pin-cpu N] [--wait W]\n"
          "       floor client tcp|unix ADDR SIZE ITERATIONS [--pin-cpu N] [--warmup N]\n"
          "ADDR: tcp: a port on 127.0.0.1 (serve: 0 = any, printed); unix: a socket path\n"
          "W: the echo server's wait: block (default), epoll, poll or epoll-out\n",
          stderr);
}

/* ---- argument parsing ---------------------------------------------------- */

/* One flag and its value, if the mode allows it. */
static int parse_flag(const char *name, const char *value, unsigned allowed, struct options *opt)
{
    uint64_t n;

    if ((allowed & FLAG_PIN) && strcmp(name, "--pin") == 0) {
        int pin = parse_name(value, pin_names, 3);
        if (pin < 0) return fail("bad --pin '%s' (none, same or split)", value);
        opt->pin = (enum pin)pin;
    } else if ((allowed & FLAG_PIN_CPU) && strcmp(name, "--pin-cpu") == 0) {
        if (parse_count(value, 0, CPU_SETSIZE - 1, &n) != 0)
            return fail("bad --pin-cpu '%s' (0..%d)", value, CPU_SETSIZE - 1);
        opt->pin_cpu = (int)n;
    } else if ((allowed & FLAG_WARMUP) && strcmp(name, "--warmup") == 0) {
        if (parse_count(value, 0, MAX_ITERATIONS, &n) != 0)
            return fail("bad --warmup '%s' (0..%llu)", value, MAX_ITERATIONS);
        opt->warmup = n;
    } else if ((allowed & FLAG_WAIT) && strcmp(name, "--wait") == 0) {
        int wait = parse_name(value, wait_names, 4);
        if (wait < 0) return fail("bad --wait '%s' (block, epoll, poll or epoll-out)", value);
        opt->wait = (enum wait)wait;
    } else {
        return fail("unknown option '%s'", name);
    }
    return 0;
}

/* Returns 0, or -1 after printing what is wrong (the caller exits 64). */
static int parse_flags(int argc, char **argv, int first, unsigned allowed, struct options *opt)
{
    for (int i = first; i < argc; i += 2) {
        if (i + 1 >= argc) return fail("%s needs a value", argv[i]);
        if (parse_flag(argv[i], argv[i + 1], allowed, opt) != 0) return -1;
    }
    return 0;
}

/* SIZE and ITERATIONS at argv[0] and argv[1]. */
static int parse_load(char **argv, struct options *opt)
{
    uint64_t size;
    uint64_t iterations;

    if (parse_count(argv[0], 1, MAX_SIZE, &size) != 0)
        return fail("bad SIZE '%s' (1..%u bytes)", argv[0], MAX_SIZE);
    if (parse_count(argv[1], 1, MAX_ITERATIONS, &iterations) != 0)
        return fail("bad ITERATIONS '%s' (1..%llu)", argv[1], MAX_ITERATIONS);
    opt->size = (size_t)size;
    opt->iterations = iterations;
    return 0;
}

/* tcp: 127.0.0.1:PORT (port 0 only if allowed); unix: the path, which must fit sun_path. */
static int parse_addr(const char *text, int allow_port0, struct options *opt)
{
    union sock_addr *a = &opt->addr;
    uint64_t port;

    memset(a, 0, sizeof(*a));
    opt->addr_text = text;
    if (opt->transport == T_TCP) {
        if (parse_count(text, allow_port0 ? 0 : 1, MAX_PORT, &port) != 0)
            return fail("bad port '%s' (%d..%u)", text, allow_port0 ? 0 : 1, MAX_PORT);
        a->in.sin_family = AF_INET;
        a->in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        a->in.sin_port = htons((uint16_t)port);
        opt->addr_len = sizeof(a->in);
        return 0;
    }
    if (text[0] == '\0' || strlen(text) >= sizeof(a->un.sun_path))
        return fail("bad socket path '%s' (1..%zu bytes)", text, sizeof(a->un.sun_path) - 1);
    a->un.sun_family = AF_UNIX;
    memcpy(a->un.sun_path, text, strlen(text) + 1);
    opt->addr_len = sizeof(a->un);
    return 0;
}

/* serve and client: TRANSPORT is tcp or unix, then ADDR. */
static int parse_external(int argc, char **argv, struct options *opt)
{
    int serve = opt->mode == MODE_SERVE;
    int need = serve ? 4 : 6;
    int t;

    if (argc < need)
        return fail(serve ? "expected serve TRANSPORT ADDR"
                          : "expected client TRANSPORT ADDR SIZE ITERATIONS");
    t = parse_name(argv[2], transport_names, 2);
    if (t < 0) return fail("bad transport '%s' (tcp or unix)", argv[2]);
    opt->transport = (enum transport)t;
    if (parse_addr(argv[3], serve, opt) != 0) return -1;
    if (!serve && parse_load(argv + 4, opt) != 0) return -1;
    return parse_flags(argc, argv, need,
                       serve ? FLAG_PIN_CPU | FLAG_WAIT : FLAG_PIN_CPU | FLAG_WARMUP, opt);
}

static int parse_args(int argc, char **argv, struct options *opt)
{
    int t;

    memset(opt, 0, sizeof(*opt));
    opt->warmup = DEFAULT_WARMUP;
    opt->pin = PIN_NONE;
    opt->pin_cpu = NO_CPU;
    if (argc >= 2 && strcmp(argv[1], "serve") == 0) {
        opt->mode = MODE_SERVE;
        return parse_external(argc, argv, opt);
    }
    if (argc >= 2 && strcmp(argv[1], "client") == 0) {
        opt->mode = MODE_CLIENT;
        return parse_external(argc, argv, opt);
    }
    opt->mode = MODE_SELF;
    if (argc < 4) return fail("expected TRANSPORT SIZE ITERATIONS");
    t = parse_name(argv[1], transport_names, 3);
    if (t < 0) return fail("bad transport '%s' (tcp, unix or socketpair)", argv[1]);
    opt->transport = (enum transport)t;
    if (parse_load(argv + 2, opt) != 0) return -1;
    return parse_flags(argc, argv, 4, FLAG_PIN | FLAG_WARMUP | FLAG_WAIT, opt);
}

/* ---- connection setup (all in the parent, before fork) ------------------- */

static void close_fd(int *fd)
{
    if (*fd >= 0) close(*fd);
    *fd = -1;
}

static int set_nodelay(int fd)
{
    int one = 1;

    if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) != 0)
        return fail("setsockopt(TCP_NODELAY): %s", strerror(errno));
    return 0;
}

/*
 * Connects before anyone accepts: the kernel completes the handshake into the
 * listen backlog, so one process can set up both ends without racing a child.
 */
static int connect_and_accept(int listen_fd, const struct sockaddr *addr, socklen_t len, int family,
                              struct conn *c)
{
    c->client_fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (c->client_fd < 0) return fail("socket: %s", strerror(errno));
    if (connect(c->client_fd, addr, len) != 0) return fail("connect: %s", strerror(errno));
    c->server_fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
    if (c->server_fd < 0) return fail("accept: %s", strerror(errno));
    return 0;
}

static int open_tcp_pair(int listen_fd, struct conn *c)
{
    struct sockaddr_in addr;
    socklen_t len = sizeof(addr);

    memset(&addr, 0, sizeof(addr));
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    if (bind(listen_fd, (const struct sockaddr *)&addr, sizeof(addr)) != 0)
        return fail("bind 127.0.0.1:0: %s", strerror(errno));
    if (listen(listen_fd, 1) != 0) return fail("listen: %s", strerror(errno));
    if (getsockname(listen_fd, (struct sockaddr *)&addr, &len) != 0)
        return fail("getsockname: %s", strerror(errno));
    if (connect_and_accept(listen_fd, (const struct sockaddr *)&addr, len, AF_INET, c) != 0)
        return -1;
    if (set_nodelay(c->client_fd) != 0 || set_nodelay(c->server_fd) != 0) return -1;
    return 0;
}

static int connect_tcp(struct conn *c)
{
    int listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int rc;

    if (listen_fd < 0) return fail("socket: %s", strerror(errno));
    rc = open_tcp_pair(listen_fd, c);
    close(listen_fd);
    return rc;
}

static int open_unix_pair(int listen_fd, const char *path, struct conn *c)
{
    struct sockaddr_un addr;

    memset(&addr, 0, sizeof(addr));
    addr.sun_family = AF_UNIX;
    if (strlen(path) >= sizeof(addr.sun_path)) return fail("socket path too long: %s", path);
    memcpy(addr.sun_path, path, strlen(path) + 1);
    if (bind(listen_fd, (const struct sockaddr *)&addr, sizeof(addr)) != 0)
        return fail("bind %s: %s", path, strerror(errno));
    if (listen(listen_fd, 1) != 0) return fail("listen: %s", strerror(errno));
    return connect_and_accept(listen_fd, (const struct sockaddr *)&addr, sizeof(addr), AF_UNIX, c);
}

/* The socket file lives only while connecting; dir and file are gone before timing starts. */
static int connect_unix(struct conn *c)
{
    const char *tmp = getenv("TMPDIR");
    char dir[sizeof(((struct sockaddr_un *)NULL)->sun_path)];
    char path[sizeof(dir) + 16];
    int listen_fd;
    int rc;

    if (tmp == NULL || tmp[0] == '\0') tmp = "/tmp";
    if ((size_t)snprintf(dir, sizeof(dir), "%s/floor.XXXXXX", tmp) >= sizeof(dir))
        return fail("TMPDIR too long for a socket path: %s", tmp);
    if (mkdtemp(dir) == NULL) return fail("mkdtemp %s: %s", dir, strerror(errno));
    snprintf(path, sizeof(path), "%s/echo.sock", dir);
    listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (listen_fd < 0) {
        rc = fail("socket: %s", strerror(errno));
    } else {
        rc = open_unix_pair(listen_fd, path, c);
        close(listen_fd);
    }
    unlink(path);
    rmdir(dir);
    return rc;
}

static int connect_socketpair(struct conn *c)
{
    int fds[2];

    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
        return fail("socketpair: %s", strerror(errno));
    c->client_fd = fds[0];
    c->server_fd = fds[1];
    return 0;
}

static int open_conn(enum transport t, struct conn *c)
{
    int rc;

    c->client_fd = -1;
    c->server_fd = -1;
    if (t == T_TCP)
        rc = connect_tcp(c);
    else if (t == T_UNIX)
        rc = connect_unix(c);
    else
        rc = connect_socketpair(c);
    if (rc != 0) {
        close_fd(&c->client_fd);
        close_fd(&c->server_fd);
    }
    return rc;
}

/* ---- blocking I/O -------------------------------------------------------- */

/* A non-blocking socket's buffer is full: waits until it takes more. 0, or -1 with errno set. */
static int wait_writable(int fd)
{
    struct pollfd pfd = { .fd = fd, .events = POLLOUT, .revents = 0 };

    while (poll(&pfd, 1, -1) < 0) {
        if (errno != EINTR) return -1;
    }
    return 0;
}

/* Returns 0, or -1 with errno set (EPIPE-like conditions included). */
static int write_all(int fd, const unsigned char *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, buf, len);

        if (n < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN && wait_writable(fd) == 0) continue; /* --wait epoll-out */
            return -1;
        }
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}

/* Returns 0, -1 with errno set, or READ_EOF if the peer closed early. */
static int read_all(int fd, unsigned char *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = read(fd, buf, len);

        if (n < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        if (n == 0) return READ_EOF;
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}

/* ---- server (child) ------------------------------------------------------ */

/*
 * --wait epoll and epoll-out: the epoll set watching fd (epoll-out makes fd
 * non-blocking, edge-triggered). Returns the epoll fd, or -1.
 */
static int echo_epoll(int fd, enum wait wait)
{
    struct epoll_event ev = { .events = EPOLLIN, .data = { .fd = fd } };
    int epfd = epoll_create1(EPOLL_CLOEXEC);

    if (epfd < 0) return -1;
    if (wait == WAIT_EPOLL_OUT) {
        ev.events = EPOLLIN | EPOLLOUT | EPOLLET;
        if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) != 0) return -1;
    }
    return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) == 0 ? epfd : -1;
}

/* poll and epoll: sleeps until fd is readable (epoll-out: or writable). 0, or -1. */
static int echo_wait(int fd, int epfd, enum wait wait)
{
    struct pollfd pfd = { .fd = fd, .events = POLLIN, .revents = 0 };
    struct epoll_event ev;
    int n;

    do {
        n = wait == WAIT_POLL ? poll(&pfd, 1, -1) : epoll_wait(epfd, &ev, 1, -1);
    } while (n < 0 && errno == EINTR);
    return n < 0 ? -1 : 0;
}

/*
 * Echoes until EOF, waiting as `wait` says; one read per wake-up, except
 * epoll-out (edge-triggered), which reads until EAGAIN. Exit status 0 on a
 * clean EOF, 1 on any error.
 */
static void __attribute__((noreturn)) serve_echo(int fd, enum wait wait)
{
    static unsigned char buf[ECHO_BUF_SIZE];
    int epfd = -1;

    if ((wait == WAIT_EPOLL || wait == WAIT_EPOLL_OUT) && (epfd = echo_epoll(fd, wait)) < 0)
        _exit(1);
    for (;;) {
        ssize_t n;

        if (wait != WAIT_BLOCK && echo_wait(fd, epfd, wait) != 0) _exit(1);
        do {
            n = read(fd, buf, sizeof(buf));
            if (n > 0 && write_all(fd, buf, (size_t)n) != 0) _exit(1);
        } while (wait == WAIT_EPOLL_OUT && (n > 0 || (n < 0 && errno == EINTR)));
        if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
        if (n <= 0) _exit(n == 0 ? 0 : 1);
    }
}

/* Forks the echo server on c->server_fd; it dies with the parent (PDEATHSIG). */
static pid_t start_server(struct conn *c, enum wait wait)
{
    pid_t parent = getpid();
    pid_t pid = fork();

    if (pid < 0) {
        report_error("fork: %s", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        close(c->client_fd);
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) _exit(1);
        serve_echo(c->server_fd, wait);
    }
    close_fd(&c->server_fd);
    return pid;
}

/* kill_first: SIGKILL before reaping (error paths). Returns 0 if it exited 0. */
static int stop_server(pid_t pid, int kill_first)
{
    int status = 0;

    if (kill_first) kill(pid, SIGKILL);
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) return fail("waitpid: %s", strerror(errno));
    }
    if (kill_first) return 0;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return fail("echo server failed (status 0x%x)", (unsigned)status);
    return 0;
}

/* ---- CPU placement ------------------------------------------------------- */

static int cpu_allowed(int cpu)
{
    cpu_set_t set;

    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) != 0)
        return fail("sched_getaffinity: %s", strerror(errno));
    if (!CPU_ISSET(cpu, &set))
        return fail("CPU %d is not available to this process (need it for --pin)", cpu);
    return 0;
}

static int pin_to(pid_t pid, int cpu)
{
    cpu_set_t set;

    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(pid, sizeof(set), &set) != 0)
        return fail("sched_setaffinity(pid %d, CPU %d): %s", (int)pid, cpu, strerror(errno));
    return 0;
}

/* Checked before fork so a missing CPU is a plain error, not a half-started run. */
static int check_placement(enum pin pin)
{
    if (pin == PIN_NONE) return 0;
    if (cpu_allowed(CLIENT_CPU) != 0) return -1;
    if (pin == PIN_SPLIT && cpu_allowed(SPLIT_SERVER_CPU) != 0) return -1;
    return 0;
}

/* The parent pins both: the child is blocked in read() until the first ping. */
static int apply_placement(enum pin pin, pid_t server)
{
    if (pin == PIN_NONE) return 0;
    if (pin_to(server, pin == PIN_SPLIT ? SPLIT_SERVER_CPU : CLIENT_CPU) != 0) return -1;
    return pin_to(0, CLIENT_CPU);
}

/* ---- client (parent) ----------------------------------------------------- */

static int round_trip(int fd, const unsigned char *out, unsigned char *in, size_t size)
{
    int rc;

    if (write_all(fd, out, size) != 0) return fail("write: %s", strerror(errno));
    rc = read_all(fd, in, size);
    if (rc == READ_EOF) return fail("read: the echo server closed the connection");
    if (rc != 0) return fail("read: %s", strerror(errno));
    return 0;
}

static int warm_up(int fd, const unsigned char *out, unsigned char *in, size_t size, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++) {
        if (round_trip(fd, out, in, size) != 0) return -1;
    }
    return 0;
}

/* The timed loop: one CLOCK_MONOTONIC pair per round trip, nothing else. */
static int measure(int fd, const unsigned char *out, unsigned char *in, size_t size,
                   uint64_t *samples, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++) {
        uint64_t start = clock_ns(CLOCK_MONOTONIC);

        if (round_trip(fd, out, in, size) != 0) return -1;
        samples[i] = clock_ns(CLOCK_MONOTONIC) - start;
    }
    return 0;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a;
    uint64_t y = *(const uint64_t *)b;

    return (x > y) - (x < y);
}

/* Nearest rank on sorted samples: the smallest value with >= pct% at or below it. */
static uint64_t percentile(const uint64_t *sorted, uint64_t n, unsigned pct)
{
    uint64_t rank = (n * pct + 99) / 100;

    return sorted[rank > 0 ? rank - 1 : 0];
}

static void compute_stats(uint64_t *samples, uint64_t n, uint64_t cpu_ns, struct stats *st)
{
    long double sum = 0;

    qsort(samples, (size_t)n, sizeof(samples[0]), cmp_u64);
    for (uint64_t i = 0; i < n; i++)
        sum += (long double)samples[i];
    st->p50 = percentile(samples, n, 50);
    st->p90 = percentile(samples, n, 90);
    st->p99 = percentile(samples, n, 99);
    st->mean = (uint64_t)(sum / (long double)n + 0.5L);
    st->cpu_per_op = (cpu_ns + n / 2) / n;
}

static void print_json(const struct options *opt, const struct stats *st)
{
    char pin[32];

    if (opt->mode == MODE_SELF)
        snprintf(pin, sizeof(pin), "%s", pin_names[opt->pin]);
    else if (opt->pin_cpu == NO_CPU)
        snprintf(pin, sizeof(pin), "none");
    else
        snprintf(pin, sizeof(pin), "cpu%d", opt->pin_cpu);
    printf(
        "{\"transport\":\"%s\",\"size\":%zu,\"iterations\":%llu,\"pin\":\"%s\","
        "\"server_wait\":\"%s\",\"p50_ns\":%llu,\"p90_ns\":%llu,\"p99_ns\":%llu,\"mean_ns\":%llu,"
        "\"client_cpu_ns_per_op\":%llu}\n",
        transport_names[opt->transport], opt->size, (unsigned long long)opt->iterations, pin,
        opt->mode == MODE_SELF ? wait_names[opt->wait] : "external", (unsigned long long)st->p50,
        (unsigned long long)st->p90, (unsigned long long)st->p99, (unsigned long long)st->mean,
        (unsigned long long)st->cpu_per_op);
}

/* Warm-up, then the timed loop; fills *cpu_ns with client CPU over the timed loop. */
static int run_client(int fd, const struct options *opt, uint64_t *samples, uint64_t *cpu_ns)
{
    unsigned char *out = malloc(opt->size);
    unsigned char *in = malloc(opt->size);
    uint64_t cpu_start;
    int rc = -1;

    if (out == NULL || in == NULL) {
        report_error("out of memory (%zu-byte buffers)", opt->size);
        goto done;
    }
    memset(out, 'x', opt->size);
    if (warm_up(fd, out, in, opt->size, opt->warmup) != 0) goto done;
    cpu_start = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
    if (measure(fd, out, in, opt->size, samples, opt->iterations) != 0) goto done;
    *cpu_ns = clock_ns(CLOCK_PROCESS_CPUTIME_ID) - cpu_start;
    rc = 0;
done:
    free(out);
    free(in);
    return rc;
}

/* Everything after the fork: any failure kills and reaps the server. */
static int run_with_server(const struct options *opt, struct conn *c, uint64_t *samples,
                           struct stats *st)
{
    uint64_t cpu_ns = 0;
    pid_t server = start_server(c, opt->wait);

    if (server < 0) return -1;
    if (apply_placement(opt->pin, server) != 0 ||
        run_client(c->client_fd, opt, samples, &cpu_ns) != 0) {
        close_fd(&c->client_fd);
        stop_server(server, 1);
        return -1;
    }
    close_fd(&c->client_fd); /* EOF: the server exits 0 */
    if (stop_server(server, 0) != 0) return -1;
    compute_stats(samples, opt->iterations, cpu_ns, st);
    return 0;
}

/* ---- serve mode: a standalone blocking echo server ---------------------- */

static volatile sig_atomic_t stop_signal;

static void on_stop(int sig)
{
    stop_signal = sig;
}

/*
 * SIGTERM and SIGINT stay blocked except inside ppoll(), so a stop cannot slip in
 * between the check of stop_signal and the wait. *wait_mask: the mask to wait with.
 */
static int catch_stop_signals(sigset_t *wait_mask)
{
    struct sigaction sa;
    sigset_t block;

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_stop;
    sigemptyset(&sa.sa_mask);
    sigemptyset(&block);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGINT);
    if (sigprocmask(SIG_BLOCK, &block, wait_mask) != 0)
        return fail("sigprocmask: %s", strerror(errno));
    if (sigaction(SIGTERM, &sa, NULL) != 0 || sigaction(SIGINT, &sa, NULL) != 0)
        return fail("sigaction: %s", strerror(errno));
    sigdelset(wait_mask, SIGTERM);
    sigdelset(wait_mask, SIGINT);
    return 0;
}

/* Pins the calling process (and so its future children) to opt->pin_cpu, if set. */
static int pin_self(const struct options *opt)
{
    if (opt->pin_cpu == NO_CPU) return 0;
    if (cpu_allowed(opt->pin_cpu) != 0) return -1;
    return pin_to(0, opt->pin_cpu);
}

/* Non-blocking listener (accepted sockets are blocking: accept4 does not inherit it). */
static int open_listener(const struct options *opt)
{
    int fd = socket(opt->addr.sa.sa_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    int one = 1;

    if (fd < 0) return fail("socket: %s", strerror(errno));
    if (opt->transport == T_TCP &&
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0) {
        report_error("setsockopt(SO_REUSEADDR): %s", strerror(errno));
    } else if (bind(fd, &opt->addr.sa, opt->addr_len) != 0) {
        report_error("bind %s %s: %s", transport_names[opt->transport], opt->addr_text,
                     strerror(errno));
    } else if (listen(fd, LISTEN_BACKLOG) != 0) {
        report_error("listen: %s", strerror(errno));
    } else {
        return fd;
    }
    close(fd);
    return -1;
}

/* 'floor: listening on ...' on stdout, flushed: a script waits for this line. */
static int announce(int fd, const struct options *opt)
{
    struct sockaddr_in in;
    socklen_t len = sizeof(in);

    memset(&in, 0, sizeof(in));
    if (opt->transport == T_UNIX) {
        printf("floor: listening on unix:%s\n", opt->addr.un.sun_path);
    } else {
        if (getsockname(fd, (struct sockaddr *)&in, &len) != 0)
            return fail("getsockname: %s", strerror(errno));
        printf("floor: listening on tcp://127.0.0.1:%u\n", (unsigned)ntohs(in.sin_port));
    }
    if (fflush(stdout) != 0) return fail("writing stdout: %s", strerror(errno));
    return 0;
}

/* The child for one connection: default signals, dies with the server (PDEATHSIG). */
static void __attribute__((noreturn))
echo_child(int fd, pid_t parent, const sigset_t *mask, enum wait wait)
{
    signal(SIGTERM, SIG_DFL);
    signal(SIGINT, SIG_DFL);
    sigprocmask(SIG_SETMASK, mask, NULL);
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) _exit(1);
    serve_echo(fd, wait);
}

/* Accepts one pending connection, if any, and forks its echo child. */
static int accept_one(int listen_fd, const struct options *opt, const sigset_t *child_mask)
{
    int fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
    pid_t parent = getpid();
    pid_t pid;

    if (fd < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR || errno == ECONNABORTED)
            return 0;
        return fail("accept: %s", strerror(errno));
    }
    if (opt->transport == T_TCP && set_nodelay(fd) != 0) {
        close(fd);
        return -1;
    }
    pid = fork();
    if (pid < 0) {
        close(fd);
        return fail("fork: %s", strerror(errno));
    }
    if (pid == 0) {
        close(listen_fd);
        echo_child(fd, parent, child_mask, opt->wait);
    }
    close(fd);
    return 0;
}

static int serve_loop(int listen_fd, const struct options *opt, const sigset_t *wait_mask)
{
    struct pollfd pfd;

    pfd.fd = listen_fd;
    pfd.events = POLLIN;
    while (stop_signal == 0) {
        pfd.revents = 0;
        if (ppoll(&pfd, 1, NULL, wait_mask) < 0) {
            if (errno == EINTR) continue;
            return fail("ppoll: %s", strerror(errno));
        }
        if (accept_one(listen_fd, opt, wait_mask) != 0) return -1;
    }
    return 0;
}

/* Until SIGTERM or SIGINT; removes the socket file it bound. Children are reaped by the kernel. */
static int run_serve(const struct options *opt)
{
    sigset_t wait_mask;
    int fd;
    int rc;

    if (catch_stop_signals(&wait_mask) != 0 || pin_self(opt) != 0) return -1;
    signal(SIGCHLD, SIG_IGN);
    fd = open_listener(opt);
    if (fd < 0) return -1;
    rc = announce(fd, opt);
    if (rc == 0) rc = serve_loop(fd, opt, &wait_mask);
    close(fd);
    if (opt->transport == T_UNIX) unlink(opt->addr.un.sun_path);
    return rc;
}

/* ---- client mode: the timed ping-pong against an existing server -------- */

static int connect_to(const struct options *opt)
{
    int fd = socket(opt->addr.sa.sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0);

    if (fd < 0) return fail("socket: %s", strerror(errno));
    if (connect(fd, &opt->addr.sa, opt->addr_len) != 0) {
        report_error("connect %s %s: %s", transport_names[opt->transport], opt->addr_text,
                     strerror(errno));
        close(fd);
        return -1;
    }
    if (opt->transport == T_TCP && set_nodelay(fd) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static int run_external_client(const struct options *opt, uint64_t *samples, struct stats *st)
{
    uint64_t cpu_ns = 0;
    int fd;
    int rc;

    if (pin_self(opt) != 0) return -1;
    fd = connect_to(opt);
    if (fd < 0) return -1;
    rc = run_client(fd, opt, samples, &cpu_ns);
    close(fd);
    if (rc == 0) compute_stats(samples, opt->iterations, cpu_ns, st);
    return rc;
}

/* ---- main ---------------------------------------------------------------- */

/* Self-contained or client mode: the timed loop and its JSON line. Returns the exit status. */
static int run_timed(const struct options *opt)
{
    struct conn c;
    struct stats st;
    uint64_t *samples;
    int rc;

    if (opt->mode == MODE_SELF && check_placement(opt->pin) != 0) return 1;
    samples = malloc((size_t)opt->iterations * sizeof(*samples));
    if (samples == NULL) {
        report_error("out of memory (%llu samples)", (unsigned long long)opt->iterations);
        return 1;
    }
    /* Fault the pages in now, not inside the timed loop (non-zero: not folded into calloc). */
    memset(samples, 0xff, (size_t)opt->iterations * sizeof(*samples));
    if (opt->mode == MODE_CLIENT) {
        rc = run_external_client(opt, samples, &st);
    } else {
        rc = open_conn(opt->transport, &c);
        if (rc == 0) rc = run_with_server(opt, &c, samples, &st);
    }
    free(samples);
    if (rc != 0) return 1;
    print_json(opt, &st);
    if (fflush(stdout) != 0) {
        report_error("writing stdout: %s", strerror(errno));
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    struct options opt;

    if (parse_args(argc, argv, &opt) != 0) {
        usage();
        return EXIT_USAGE;
    }
    signal(SIGPIPE, SIG_IGN); /* a dead peer is an EPIPE we report, not a silent death */
    if (opt.mode == MODE_SERVE) return run_serve(&opt) == 0 ? 0 : 1;
    return run_timed(&opt);
}
