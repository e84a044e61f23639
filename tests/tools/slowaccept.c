/*
 * slowaccept: a Unix-socket echo server that accepts slowly, for the
 * integration test of connects to a full backlog. It listens on PATH with
 * listen(BACKLOG) and accepts one connection every EVERY_MS milliseconds
 * (0: never), serving each one alone (echoing what it reads) until the client
 * closes it; meanwhile the accept queue fills, and an AF_UNIX connect that
 * finds it full gets EAGAIN. It prints "slowaccept: listening on unix:PATH"
 * and runs until SIGTERM or SIGINT; then it prints "slowaccept: accepted N",
 * removes PATH and exits. Not part of hopbench.
 *
 *   slowaccept PATH BACKLOG EVERY_MS
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/* Every wait is at most this long, so a stop signal is seen within it. */
#define TICK_MS 50

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
    (void)sig;
    stop = 1;
}

/* Waits up to ms for fd to be readable (fd -1: just sleeps); 1 readable, 0 not, -1 stop. */
static int wait_in(int fd, int ms)
{
    struct pollfd p = { .fd = fd, .events = POLLIN };

    while (!stop) {
        int step = ms < TICK_MS ? ms : TICK_MS;
        int n = poll(&p, fd >= 0 ? 1 : 0, step);
        if (n > 0) return 1;
        if (n == -1 && errno != EINTR) return -1;
        if (n == 0) ms -= step;
        if (ms <= 0) return 0;
    }
    return -1;
}

/* Echoes what fd sends until it closes (or errs, or a stop signal). */
static void echo_until_eof(int fd)
{
    char buf[65536];

    while (wait_in(fd, 1 << 30) == 1) {
        ssize_t n = recv(fd, buf, sizeof(buf), 0);
        if (n <= 0) return;
        for (ssize_t off = 0; off < n;) {
            ssize_t w = send(fd, buf + off, (size_t)(n - off), MSG_NOSIGNAL);
            if (w <= 0) return;
            off += w;
        }
    }
}

int main(int argc, char **argv)
{
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    struct sigaction act = { .sa_handler = on_term };
    unsigned long accepted = 0;
    int backlog, every_ms, lfd;

    if (argc != 4 || strlen(argv[1]) >= sizeof(sa.sun_path)) {
        fprintf(stderr, "usage: slowaccept PATH BACKLOG EVERY_MS\n");
        return 64;
    }
    backlog = atoi(argv[2]);
    every_ms = atoi(argv[3]);
    sigaction(SIGTERM, &act, NULL);
    sigaction(SIGINT, &act, NULL);
    strcpy(sa.sun_path, argv[1]);
    lfd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (lfd == -1 || bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) == -1 ||
        listen(lfd, backlog) == -1) {
        perror("slowaccept: listen");
        return 1;
    }
    printf("slowaccept: listening on unix:%s\n", argv[1]);
    fflush(stdout);
    while (!stop) {
        int fd;
        if (wait_in(-1, every_ms > 0 ? every_ms : TICK_MS) < 0 || every_ms == 0) continue;
        if (wait_in(lfd, TICK_MS) != 1) continue;
        fd = accept(lfd, NULL, NULL);
        if (fd == -1) continue;
        accepted++;
        echo_until_eof(fd);
        close(fd);
    }
    printf("slowaccept: accepted %lu\n", accepted);
    close(lfd);
    unlink(argv[1]);
    return 0;
}
