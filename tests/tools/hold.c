/*
 * hold: a client for the integration tests. It opens N connections to a
 * server and writes BYTES of an HTTP request head that never ends (a request
 * line, then one long field with no blank line after it) on each, prints
 * "held N" once every byte is written, and keeps the connections open until
 * it is signalled or SECONDS pass; then it exits and the kernel closes them.
 * Not part of hopbench.
 *
 *   hold PORT|SOCKET-PATH N BYTES SECONDS   (a number is a 127.0.0.1 TCP port)
 */
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static int open_conn(const char *where)
{
    struct sockaddr_storage ss = { 0 };
    socklen_t len;
    char *end = NULL;
    long port = strtol(where, &end, 10);
    int fd;

    if (*where != '\0' && *end == '\0') {
        struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
        sin->sin_family = AF_INET;
        sin->sin_port = htons((unsigned short)port);
        sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        len = sizeof(*sin);
    } else {
        struct sockaddr_un *sun = (struct sockaddr_un *)&ss;
        if (strlen(where) >= sizeof(sun->sun_path)) return -1;
        sun->sun_family = AF_UNIX;
        strcpy(sun->sun_path, where);
        len = sizeof(*sun);
    }
    fd = socket(ss.ss_family, SOCK_STREAM, 0);
    if (fd == -1) return -1;
    if (connect(fd, (struct sockaddr *)&ss, len) == -1) {
        close(fd);
        return -1;
    }
    return fd;
}

static int write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w <= 0) return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

int main(int argc, char **argv)
{
    static const char start[] = "GET / HTTP/1.1\r\nHost: x\r\nX-Fill: ";
    long n, bytes, secs;
    char *head;

    if (argc != 5) {
        fprintf(stderr, "usage: hold PORT|SOCKET-PATH N BYTES SECONDS\n");
        return 64;
    }
    n = atol(argv[2]);
    bytes = atol(argv[3]);
    secs = atol(argv[4]);
    if (n <= 0 || bytes < (long)sizeof(start) || secs <= 0) {
        fprintf(stderr, "hold: N, BYTES and SECONDS must be positive\n");
        return 64;
    }
    head = malloc((size_t)bytes);
    if (head == NULL) return 1;
    memset(head, 'a', (size_t)bytes);
    memcpy(head, start, sizeof(start) - 1);
    for (long i = 0; i < n; i++) {
        int fd = open_conn(argv[1]);
        if (fd == -1 || write_all(fd, head, (size_t)bytes) < 0) {
            fprintf(stderr, "hold: connection %ld: ", i);
            perror(NULL);
            return 1;
        }
    }
    printf("held %ld\n", n);
    fflush(stdout);
    sleep((unsigned)secs);
    return 0;
}
