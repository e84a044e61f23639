/*
 * fullq: a TCP listener whose accept queue fills up and is never drained, for
 * the integration test of connect timeouts. It listens on 127.0.0.1 at a port
 * the kernel picks, with a backlog of 0, and never calls accept(). With a
 * backlog of 0 the queue holds one connection: the first one to complete its
 * handshake (hopbench run's pre-flight probe) stays in it, and from then on
 * the kernel drops every SYN (TcpExt.ListenOverflows), so a connect() stays
 * pending until the client gives up. It prints
 * "fullq: listening on tcp://127.0.0.1:PORT" and waits for SIGTERM; then it
 * prints "fullq: queue Q, backlog B" (the listener's accept queue and backlog
 * from TCP_INFO) and exits. Not part of hopbench.
 *
 *   fullq
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
    (void)sig;
    stop = 1;
}

int main(int argc, char **argv)
{
    struct sockaddr_in sa = { .sin_family = AF_INET };
    struct sigaction act = { .sa_handler = on_term };
    socklen_t len = sizeof(sa);
    struct tcp_info ti;
    socklen_t tlen = sizeof(ti);
    sigset_t held, old;
    int fd;

    (void)argv;
    if (argc != 1) {
        fprintf(stderr, "usage: fullq\n");
        return 64;
    }
    /*
     * TERM and INT are held until sigsuspend lets them in: one that came
     * between the test of stop and the wait would otherwise be handled there,
     * and sigsuspend would wait for another that never comes.
     */
    sigemptyset(&held);
    sigaddset(&held, SIGTERM);
    sigaddset(&held, SIGINT);
    sigprocmask(SIG_BLOCK, &held, &old);
    sigaction(SIGTERM, &act, NULL);
    sigaction(SIGINT, &act, NULL);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd == -1 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == -1 || listen(fd, 0) == -1 ||
        getsockname(fd, (struct sockaddr *)&sa, &len) == -1) {
        perror("fullq: listen");
        return 1;
    }
    printf("fullq: listening on tcp://127.0.0.1:%u\n", (unsigned)ntohs(sa.sin_port));
    fflush(stdout);
    while (!stop)
        sigsuspend(&old);
    /* For a listener, tcpi_unacked is its accept queue and tcpi_sacked its backlog. */
    if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &tlen) == 0)
        printf("fullq: queue %u, backlog %u\n", ti.tcpi_unacked, ti.tcpi_sacked);
    close(fd);
    return 0;
}
