/*
 * nouring: runs a command where io_uring cannot be set up, as under a
 * container runtime's default seccomp profile: a seccomp filter makes
 * io_uring_setup fail with EPERM and lets every other call through. For the
 * integration tests of hopbench run --wait uring's fallback. With --enter,
 * io_uring_setup works and every io_uring_enter fails with ENOMEM instead (a
 * ring whose wait fails mid-run). With --big, a ring of 2 entries can be set up
 * and a larger one fails with ENOMEM (as RLIMIT_MEMLOCK on a kernel before 5.12
 * refuses a large ring where a small one fits). With --epoll, io_uring is left
 * alone and an epoll_pwait2 with a timeout fails with ENOMEM (a load thread's
 * epoll wait; a server's, which waits without one, works). With --split, a ring
 * of 8 entries or more cannot be set up and every io_uring_enter fails with
 * ENOMEM: run --wait uring -c 3 -t 2 then has one load thread on epoll (its 2
 * connections' ring of 8 refused) beside one whose ring wait fails. With --pbuf,
 * io_uring works but registering a provided buffer ring (IORING_REGISTER_PBUF_RING)
 * fails with EINVAL, as on a kernel before 5.19. Not part of hopbench.
 *
 *   nouring [--enter|--big|--epoll|--split|--pbuf] CMD [ARG...]   exit 77 where this architecture
 *                                                          is not known here
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/io_uring.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)
#define NOURING_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define NOURING_ARCH AUDIT_ARCH_AARCH64
#endif

/* every filter: another architecture's calls pass; then the call's number is loaded */
#define NOURING_SYSCALL_NR                                                                         \
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),                       \
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NOURING_ARCH, 1, 0),                                   \
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),                                              \
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr))

int main(int argc, char **argv)
{
#ifdef NOURING_ARCH
    int enter = argc > 1 && strcmp(argv[1], "--enter") == 0;
    int big = argc > 1 && strcmp(argv[1], "--big") == 0;
    int epoll = argc > 1 && strcmp(argv[1], "--epoll") == 0;
    int split = argc > 1 && strcmp(argv[1], "--split") == 0;
    int pbuf = argc > 1 && strcmp(argv[1], "--pbuf") == 0;
    int skip = enter || big || epoll || split || pbuf;
    unsigned nr = epoll ? __NR_epoll_pwait2 : enter ? __NR_io_uring_enter : __NR_io_uring_setup;
    /* the argument looked at, its low word (both architectures here are little-endian):
     * io_uring_setup's entries, refused from `least` on (0: always); or epoll_pwait2's
     * timeout, refused unless NULL (its high word looked at too; io_uring_setup's low word
     * again: that was looked at already) */
    size_t arg = offsetof(struct seccomp_data, args[epoll ? 3 : 0]);
    unsigned least = big ? 3 : epoll ? 1 : 0;
    unsigned second = (unsigned)arg + (epoll ? 4 : 0);
    struct sock_filter filter[] = {
        NOURING_SYSCALL_NR,
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, nr, 0, 5),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, (unsigned)arg),
        BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, least, 2, 0),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, second),
        BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, least, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ((skip ? ENOMEM : EPERM) & SECCOMP_RET_DATA)),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    /* --split: io_uring_enter always refused, io_uring_setup from 8 entries on */
    struct sock_filter split_filter[] = {
        NOURING_SYSCALL_NR,
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_enter, 4, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 2),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
        BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 8, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (ENOMEM & SECCOMP_RET_DATA)),
    };
    /* --pbuf: io_uring_register refused for IORING_REGISTER_PBUF_RING only */
    struct sock_filter pbuf_filter[] = {
        NOURING_SYSCALL_NR,
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_register, 0, 2),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[1])),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, IORING_REGISTER_PBUF_RING, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EINVAL & SECCOMP_RET_DATA)),
    };
    struct sock_fprog prog = { .len = (unsigned short)(sizeof(filter) / sizeof(filter[0])),
                               .filter = filter };

    if (split) {
        prog.len = (unsigned short)(sizeof(split_filter) / sizeof(split_filter[0]));
        prog.filter = split_filter;
    }
    if (pbuf) {
        prog.len = (unsigned short)(sizeof(pbuf_filter) / sizeof(pbuf_filter[0]));
        prog.filter = pbuf_filter;
    }

    if (argc < 2 + skip) {
        fprintf(stderr, "usage: nouring [--enter|--big|--epoll|--split|--pbuf] CMD [ARG...]\n");
        return 2;
    }
    if (prctl(PR_SET_NO_NEW_PRIVS, 1L, 0L, 0L, 0L) != 0 ||
        prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
        perror("nouring: seccomp");
        return 1;
    }
    execvp(argv[1 + skip], argv + 1 + skip);
    perror("nouring: exec");
    return 127;
#else
    (void)argc;
    (void)argv;
    fprintf(stderr, "nouring: this architecture is not known here\n");
    return 77;
#endif
}
