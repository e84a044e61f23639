/*
 * subsys: the one table of kernel symbol patterns that --profile attributes
 * samples by (subsys.h says the rule; docs/profile.md lists the table).
 */
#include "host/subsys.h"

#include <string.h>

#include "util.h"

static const char *const names[SUBSYS_COUNT] = {
    [SUB_SYSCALL] = "syscall", [SUB_EPOLL] = "epoll",     [SUB_TCP] = "tcp",
    [SUB_IP] = "ip",           [SUB_SOFTIRQ] = "softirq", [SUB_NETFILTER] = "netfilter",
    [SUB_UNIX] = "unix",       [SUB_SOCKET] = "socket",   [SUB_COPY] = "copy",
    [SUB_SCHED] = "sched",     [SUB_USER] = "user",       [SUB_OTHER] = "other",
};

static const char *const titles[SUBSYS_COUNT] = {
    [SUB_SYSCALL] = "system-call entry and exit",
    [SUB_EPOLL] = "epoll, poll, select",
    [SUB_TCP] = "TCP",
    [SUB_IP] = "IP, routing, loopback and device transmit",
    [SUB_SOFTIRQ] = "softirq and NAPI receive",
    [SUB_NETFILTER] = "netfilter and conntrack",
    [SUB_UNIX] = "AF_UNIX",
    [SUB_SOCKET] = "socket layer and skb allocation",
    [SUB_COPY] = "copies to and from user memory",
    [SUB_SCHED] = "scheduler and wake-ups",
    [SUB_USER] = "the process's own code (user mode)",
    [SUB_OTHER] = "other kernel work",
};

/* A pattern's subsystem that is none: a helper whose callers decide. */
#define SUBSYS_NONE SUBSYS_COUNT

struct pattern {
    const char *p; /* a prefix of the symbol's name; ending in '$': the whole name */
    enum prof_subsys s;
};

/* clang-format off */
static const struct pattern table[] = {
    /* system-call entry and exit: counted only when no other frame of the chain matches */
    { "entry_SYSCALL", SUB_SYSCALL }, { "do_syscall_64", SUB_SYSCALL },
    { "syscall_exit_", SUB_SYSCALL }, { "syscall_enter_", SUB_SYSCALL },
    { "syscall_return_", SUB_SYSCALL }, { "exit_to_user_mode", SUB_SYSCALL },
    { "__x64_sys_", SUB_SYSCALL }, { "x64_sys_call", SUB_SYSCALL }, { "__do_sys_", SUB_SYSCALL },
    { "__se_sys_", SUB_SYSCALL }, { "fdget", SUB_SYSCALL }, { "__fdget", SUB_SYSCALL },
    { "__fget", SUB_SYSCALL }, { "fput", SUB_SYSCALL }, { "__fput", SUB_SYSCALL },
    /* epoll, poll, select */
    { "ep_", SUB_EPOLL }, { "__ep_", SUB_EPOLL }, { "do_epoll_", SUB_EPOLL },
    { "epoll_", SUB_EPOLL }, { "__x64_sys_epoll", SUB_EPOLL }, { "do_sys_poll", SUB_EPOLL },
    { "do_poll", SUB_EPOLL }, { "__x64_sys_poll", SUB_EPOLL }, { "__x64_sys_ppoll", SUB_EPOLL },
    { "do_select", SUB_EPOLL }, { "core_sys_select", SUB_EPOLL }, { "poll_", SUB_EPOLL },
    { "__pollwait", SUB_EPOLL }, { "pollwake", SUB_EPOLL }, { "sock_poll", SUB_EPOLL },
    /* TCP and the inet connection sockets (connect, accept, bind, TIME_WAIT) */
    { "tcp_", SUB_TCP }, { "__tcp_", SUB_TCP }, { "tcp4_", SUB_TCP }, { "tcp6_", SUB_TCP },
    { "inet_csk_", SUB_TCP }, { "__inet_csk_", SUB_TCP }, { "inet_twsk_", SUB_TCP },
    { "__inet_twsk_", SUB_TCP }, { "inet_hash", SUB_TCP }, { "__inet_hash", SUB_TCP },
    { "inet_unhash", SUB_TCP }, { "__inet_lookup", SUB_TCP }, { "inet_lookup", SUB_TCP },
    { "inet_ehash", SUB_TCP }, { "inet_bhash", SUB_TCP }, { "__inet_check_established", SUB_TCP },
    { "inet_sk_", SUB_TCP }, { "inet_stream_connect", SUB_TCP },
    { "__inet_stream_connect", SUB_TCP }, { "inet_accept", SUB_TCP }, { "inet_release", SUB_TCP },
    { "inet_sendmsg", SUB_TCP }, { "inet_recvmsg", SUB_TCP }, { "inet_shutdown", SUB_TCP },
    { "inet_bind", SUB_TCP }, { "__inet_bind", SUB_TCP }, { "inet_listen", SUB_TCP },
    { "inet_create", SUB_TCP }, { "inet_put_port", SUB_TCP }, { "__inet_put_port", SUB_TCP },
    { "inet_reqsk", SUB_TCP }, { "reqsk_", SUB_TCP }, { "inet_send_prepare", SUB_TCP },
    { "secure_tcp", SUB_TCP }, { "inet_autobind", SUB_TCP }, { "sk_reuseport", SUB_TCP },
    /* IP, routing, the loopback and the device transmit path */
    { "ip_", SUB_IP }, { "__ip_", SUB_IP }, { "ipv4_", SUB_IP }, { "ip4_", SUB_IP },
    { "ip6_", SUB_IP }, { "__ip6_", SUB_IP }, { "ipv6_", SUB_IP }, { "inet6_", SUB_IP },
    { "fib_", SUB_IP }, { "__fib_", SUB_IP }, { "fib4_", SUB_IP }, { "fib6_", SUB_IP },
    { "dst_", SUB_IP }, { "rt_dst_", SUB_IP }, { "rt_cache", SUB_IP },
    { "rt_set_nexthop", SUB_IP }, { "rt_add_uncached", SUB_IP }, { "__mkroute", SUB_IP }, { "raw_local_deliver", SUB_IP },
    { "loopback_", SUB_IP }, { "dev_queue_xmit", SUB_IP }, { "__dev_queue_xmit", SUB_IP },
    { "dev_hard_start_xmit", SUB_IP }, { "xmit_one", SUB_IP }, { "validate_xmit", SUB_IP },
    { "neigh_", SUB_IP }, { "__neigh_", SUB_IP }, { "netif_rx", SUB_IP }, { "__netif_rx", SUB_IP },
    { "netif_skb_features", SUB_IP }, { "eth_", SUB_IP }, { "sch_direct_xmit", SUB_IP },
    { "qdisc_", SUB_IP }, { "__qdisc_", SUB_IP }, { "pfifo_", SUB_IP }, { "veth_", SUB_IP },
    { "dev_loopback_xmit", SUB_IP }, { "icmp_", SUB_IP }, { "inet_addr_type", SUB_IP },
    /* softirq and NAPI receive: the machinery, not the protocols it calls */
    { "__do_softirq", SUB_SOFTIRQ }, { "do_softirq", SUB_SOFTIRQ },
    { "handle_softirqs", SUB_SOFTIRQ }, { "net_rx_action", SUB_SOFTIRQ },
    { "__napi_", SUB_SOFTIRQ }, { "napi_", SUB_SOFTIRQ }, { "process_backlog", SUB_SOFTIRQ },
    { "__netif_receive_skb", SUB_SOFTIRQ }, { "netif_receive_skb", SUB_SOFTIRQ },
    { "enqueue_to_backlog", SUB_SOFTIRQ }, { "__local_bh_enable_ip", SUB_SOFTIRQ },
    { "irq_exit_rcu", SUB_SOFTIRQ }, { "__irq_exit_rcu", SUB_SOFTIRQ },
    { "run_ksoftirqd", SUB_SOFTIRQ }, { "deliver_skb", SUB_SOFTIRQ }, { "gro_", SUB_SOFTIRQ },
    { "dev_gro_", SUB_SOFTIRQ }, { "rps_", SUB_SOFTIRQ }, { "raise_softirq", SUB_SOFTIRQ },
    { "__raise_softirq", SUB_SOFTIRQ },
    /* netfilter and conntrack */
    { "nf_", SUB_NETFILTER }, { "__nf_", SUB_NETFILTER }, { "nft_", SUB_NETFILTER },
    { "__nft_", SUB_NETFILTER }, { "ipt_", SUB_NETFILTER }, { "ip6t_", SUB_NETFILTER },
    { "xt_", SUB_NETFILTER }, { "iptable_", SUB_NETFILTER }, { "ip6table_", SUB_NETFILTER },
    { "ipv4_conntrack", SUB_NETFILTER }, { "ipv4_confirm", SUB_NETFILTER },
    { "ebt_", SUB_NETFILTER }, { "br_nf_", SUB_NETFILTER },
    /* AF_UNIX */
    { "unix_", SUB_UNIX }, { "__unix_", SUB_UNIX }, { "maybe_add_creds", SUB_UNIX },
    { "scm_", SUB_UNIX }, { "__scm_", SUB_UNIX }, { "wait_for_unix_gc", SUB_UNIX },
    /* the socket layer and skb allocation */
    { "sock_", SUB_SOCKET }, { "__sock_", SUB_SOCKET }, { "sk_", SUB_SOCKET },
    { "__sk_", SUB_SOCKET }, { "sockfd_lookup", SUB_SOCKET }, { "__sys_", SUB_SOCKET },
    { "___sys_", SUB_SOCKET }, { "____sys_", SUB_SOCKET }, { "move_addr_to", SUB_SOCKET },
    { "skb_", SUB_SOCKET }, { "__skb_", SUB_SOCKET }, { "kfree_skb", SUB_SOCKET },
    { "__kfree_skb", SUB_SOCKET }, { "consume_skb", SUB_SOCKET }, { "alloc_skb", SUB_SOCKET },
    { "__alloc_skb", SUB_SOCKET }, { "build_skb", SUB_SOCKET }, { "__build_skb", SUB_SOCKET },
    { "napi_alloc_skb", SUB_SOCKET }, { "kmalloc_reserve", SUB_SOCKET },
    { "release_sock", SUB_SOCKET }, { "__release_sock", SUB_SOCKET }, { "lock_sock", SUB_SOCKET },
    { "sockfs_", SUB_SOCKET }, { "security_socket_", SUB_SOCKET }, { "security_sk_", SUB_SOCKET },
    { "copy_msghdr_from_user", SUB_SOCKET }, { "sendmsg_copy_msghdr", SUB_SOCKET },
    { "recvmsg_copy_msghdr", SUB_SOCKET }, { "sock_alloc", SUB_SOCKET },
    { "sk_stream_", SUB_SOCKET }, { "datagram_", SUB_SOCKET }, { "__datagram_", SUB_SOCKET },
    /* copies to and from user memory */
    { "copy_user", SUB_COPY }, { "rep_movs_alternative", SUB_COPY }, { "_copy_to_user", SUB_COPY },
    { "_copy_from_user", SUB_COPY }, { "__copy_user", SUB_COPY }, { "copy_to_user", SUB_COPY },
    { "copy_from_user", SUB_COPY }, { "_copy_to_iter", SUB_COPY }, { "_copy_from_iter", SUB_COPY },
    { "copy_page_to_iter", SUB_COPY }, { "copy_page_from_iter", SUB_COPY },
    { "simple_copy_to_iter", SUB_COPY }, { "csum_and_copy", SUB_COPY },
    { "csum_partial_copy", SUB_COPY }, { "__check_object_size", SUB_COPY },
    { "check_heap_object", SUB_COPY }, { "strncpy_from_user", SUB_COPY },
    { "__get_user", SUB_COPY }, { "__put_user", SUB_COPY }, { "fault_in_", SUB_COPY },
    { "import_ubuf", SUB_COPY }, { "import_iovec", SUB_COPY }, { "__import_iovec", SUB_COPY },
    /* the scheduler and wake-ups */
    { "schedule", SUB_SCHED }, { "__schedule", SUB_SCHED }, { "try_to_wake_up", SUB_SCHED },
    { "ttwu_", SUB_SCHED }, { "wake_up_", SUB_SCHED }, { "__wake_up", SUB_SCHED },
    { "autoremove_wake_function", SUB_SCHED }, { "default_wake_function", SUB_SCHED },
    { "woken_wake_function", SUB_SCHED }, { "finish_task_switch", SUB_SCHED },
    { "__switch_to", SUB_SCHED }, { "switch_mm", SUB_SCHED }, { "pick_next_", SUB_SCHED },
    { "pick_task", SUB_SCHED }, { "pick_eevdf", SUB_SCHED }, { "enqueue_task", SUB_SCHED },
    { "enqueue_entit", SUB_SCHED }, { "dequeue_task", SUB_SCHED }, { "dequeue_entit", SUB_SCHED }, { "update_curr", SUB_SCHED }, { "update_load", SUB_SCHED },
    { "update_cfs", SUB_SCHED }, { "__update_load", SUB_SCHED }, { "select_task_rq", SUB_SCHED },
    { "set_next_entity", SUB_SCHED }, { "put_prev_", SUB_SCHED }, { "check_preempt", SUB_SCHED },
    { "wakeup_preempt", SUB_SCHED }, { "resched_curr", SUB_SCHED }, { "sched_", SUB_SCHED },
    { "__sched_", SUB_SCHED }, { "psi_", SUB_SCHED }, { "cpuacct_", SUB_SCHED },
    { "reweight_", SUB_SCHED }, { "place_entity", SUB_SCHED }, { "activate_task", SUB_SCHED },
    { "deactivate_task", SUB_SCHED }, { "prepare_task_switch", SUB_SCHED },
    { "__cgroup_account_cputime", SUB_SCHED }, { "wake_affine", SUB_SCHED },
    { "newidle_balance", SUB_SCHED }, { "load_balance", SUB_SCHED },
    { "raw_spin_rq_lock", SUB_SCHED }, { "sysvec_reschedule_ipi", SUB_SCHED },
    { "asm_sysvec_reschedule_ipi", SUB_SCHED }, { "native_smp_send_reschedule", SUB_SCHED },
    { "__smp_call_single_queue", SUB_SCHED }, { "schedule_hrtimeout", SUB_SCHED },
    { "do_sched_yield", SUB_SCHED }, { "yield_task", SUB_SCHED }, { "io_schedule", SUB_SCHED },
    { "preempt_schedule", SUB_SCHED }, { "avg_vruntime", SUB_SCHED },
    /* a socket's data-ready and write-space callbacks wake its waiters: a sample taken in
     * their wake-up, with interrupts off, lands where they are turned back on
     * (_raw_spin_unlock_irqrestore) under the callback, not under try_to_wake_up */
    { "sock_def_readable", SUB_SCHED }, { "sock_def_write_space", SUB_SCHED },
    { "sock_def_wakeup", SUB_SCHED }, { "sk_stream_write_space", SUB_SCHED },
    /* helpers called from everywhere: no subsystem of their own, the walk goes on up */
    { "sched_clock", SUBSYS_NONE }, { "native_sched_clock", SUBSYS_NONE },
    { "local_clock", SUBSYS_NONE }, { "schedule_work", SUBSYS_NONE },
    { "queue_work", SUBSYS_NONE },
};
/* clang-format on */

const char *subsys_name(enum prof_subsys s)
{
    return (unsigned)s < SUBSYS_COUNT ? names[s] : "?";
}

const char *subsys_title(enum prof_subsys s)
{
    return (unsigned)s < SUBSYS_COUNT ? titles[s] : "?";
}

int subsys_by_name(const char *name)
{
    for (int i = 0; i < SUBSYS_COUNT; i++)
        if (strcmp(names[i], name) == 0) return i;
    return -1;
}

/* The length pattern p matches name with (0: no match). */
static size_t match_len(const char *p, const char *name)
{
    size_t n = strlen(p);

    if (n > 0 && p[n - 1] == '$')
        return strncmp(p, name, n - 1) == 0 && name[n - 1] == '\0' ? n : 0;
    return strncmp(p, name, n) == 0 ? n : 0;
}

int subsys_of_symbol(const char *name)
{
    size_t best = 0;
    int s = -1;

    for (size_t i = 0; i < ARRAY_LEN(table); i++) {
        size_t n = match_len(table[i].p, name);
        if (n > best) {
            best = n;
            s = (int)table[i].s;
        }
    }
    return s == SUBSYS_NONE ? -1 : s;
}

enum prof_subsys subsys_of_chain(const int8_t *frames, size_t n, bool user)
{
    bool syscall = false;

    if (user) return SUB_USER;
    for (size_t i = 0; i < n; i++) {
        if (frames[i] < 0) continue;
        if (frames[i] == SUB_SYSCALL)
            syscall = true;
        else
            return (enum prof_subsys)frames[i];
    }
    return syscall ? SUB_SYSCALL : SUB_OTHER;
}

const char *subsys_pattern(size_t i, enum prof_subsys *s)
{
    if (i >= ARRAY_LEN(table)) return NULL;
    if (s != NULL) *s = table[i].s;
    return table[i].p;
}
