/*
 * halfclose: a client for the integration tests. It connects to a Unix
 * socket, writes its request, shuts down its sending side at once (so the
 * request and the FIN can reach the server in one wake-up), and reads until
 * the server closes or 3 s pass. Prints "bytes N eof 1" (or "eof 0" when the
 * server never closed). Not part of hopbench.
 *
 *   halfclose SOCKET-PATH REQUEST   (REQUEST with \r and \n escapes)
 */
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    struct timeval tv = { .tv_sec = 3 };
    char req[4096], buf[65536];
    size_t n = 0, total = 0;
    int fd, eof = 0;

    if (argc != 3 || strlen(argv[1]) >= sizeof(sa.sun_path)) {
        fprintf(stderr, "usage: halfclose SOCKET-PATH REQUEST\n");
        return 64;
    }
    for (const char *p = argv[2]; *p != '\0' && n + 1 < sizeof(req); p++) {
        if (p[0] == '\\' && (p[1] == 'r' || p[1] == 'n')) {
            req[n++] = p[1] == 'r' ? '\r' : '\n';
            p++;
        } else {
            req[n++] = *p;
        }
    }
    strcpy(sa.sun_path, argv[1]);
    fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd == -1 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == -1) {
        perror("halfclose: connect");
        return 1;
    }
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    if (send(fd, req, n, MSG_NOSIGNAL) != (ssize_t)n || shutdown(fd, SHUT_WR) == -1) {
        perror("halfclose: send");
        return 1;
    }
    for (;;) {
        ssize_t r = recv(fd, buf, sizeof(buf), 0);
        if (r == 0) eof = 1;
        if (r <= 0) break;
        total += (size_t)r;
    }
    printf("bytes %zu eof %d\n", total, eof);
    close(fd);
    return 0;
}
