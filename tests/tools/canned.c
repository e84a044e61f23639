/*
 * canned: a misbehaving server for the integration tests. It listens on a
 * Unix socket and, for every connection, waits for the first request bytes,
 * writes the reply file's bytes and then, as told:
 *   close   closes the connection (a reply cut short, garbage, oversized...)
 *   stall   keeps the connection open and silent (past the client's --timeout)
 *   repeat  answers every read with the whole file again, until the client closes
 * It serves connections one at a time until SIGTERM. Not part of hopbench.
 *
 *   canned SOCKET-PATH REPLY-FILE close|stall|repeat
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
    (void)sig;
    stop = 1;
}

static int write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w == -1) {
            if (errno == EINTR) continue;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static void serve(int c, const char *reply, size_t len, const char *how)
{
    char buf[65536];

    for (;;) {
        ssize_t n = recv(c, buf, sizeof(buf), 0);
        if (n == -1 && errno == EINTR && !stop) continue;
        if (n <= 0) return;
        if (write_all(c, reply, len) < 0) return;
        if (strcmp(how, "close") == 0) return;
        if (strcmp(how, "stall") == 0) {
            while (!stop && recv(c, buf, sizeof(buf), 0) > 0)
                ;
            return;
        }
    }
}

int main(int argc, char **argv)
{
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    struct sigaction act = { .sa_handler = on_term };
    static char reply[1 << 20];
    size_t len = 0;
    ssize_t n;
    int fd, lfd;

    if (argc != 4 || strlen(argv[1]) >= sizeof(sa.sun_path)) {
        fprintf(stderr, "usage: canned SOCKET-PATH REPLY-FILE close|stall|repeat\n");
        return 64;
    }
    fd = open(argv[2], O_RDONLY);
    if (fd == -1) {
        perror(argv[2]);
        return 1;
    }
    while ((n = read(fd, reply + len, sizeof(reply) - len)) > 0)
        len += (size_t)n;
    close(fd);
    sigaction(SIGTERM, &act, NULL);
    sigaction(SIGINT, &act, NULL);
    strcpy(sa.sun_path, argv[1]);
    unlink(argv[1]);
    lfd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (lfd == -1 || bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) == -1 || listen(lfd, 16) == -1) {
        perror("canned: listen");
        return 1;
    }
    printf("canned: listening on %s\n", argv[1]);
    fflush(stdout);
    while (!stop) {
        int c = accept(lfd, NULL, NULL);
        if (c == -1) continue;
        serve(c, reply, len, argv[3]);
        close(c);
    }
    close(lfd);
    unlink(argv[1]);
    return 0;
}
