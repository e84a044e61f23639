/*
 * probe: machine facts (see probe.h).
 */
#include "host/probe.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

int probe_read_line(const char *path, char *buf, size_t cap)
{
    FILE *f = fopen(path, "re");
    size_t len;

    buf[0] = '\0';
    if (f == NULL) return -errno;
    if (fgets(buf, (int)cap, f) == NULL) {
        fclose(f);
        buf[0] = '\0';
        return -EIO;
    }
    fclose(f);
    len = strlen(buf);
    if (len > 0 && buf[len - 1] == '\n') buf[len - 1] = '\0';
    return 0;
}

static void probe_cpu_model(char *buf, size_t cap)
{
    FILE *f = fopen("/proc/cpuinfo", "re");
    char line[512];

    buf[0] = '\0';
    if (f == NULL) return;
    while (fgets(line, sizeof(line), f) != NULL) {
        char *colon = strchr(line, ':');
        if (strncmp(line, "model name", 10) != 0 || colon == NULL) continue;
        colon += 1 + (colon[1] == ' ');
        colon[strcspn(colon, "\n")] = '\0';
        snprintf(buf, cap, "%s", colon);
        break;
    }
    fclose(f);
}

void probe_sysctls(struct machine *m, const char *root)
{
    static const char *const names[PROBE_SYSCTLS] = {
        "net.ipv4.tcp_tw_reuse",        "net.ipv4.ip_local_port_range", "net.core.somaxconn",
        "net.ipv4.tcp_max_syn_backlog", "net.ipv4.tcp_timestamps",      "net.ipv4.tcp_fin_timeout",
        "net.ipv4.tcp_tw_reuse_delay",  "net.ipv4.tcp_max_tw_buckets",
    };

    for (int i = 0; i < PROBE_SYSCTLS; i++) {
        struct probe_sysctl *s = &m->sysctl[i];
        char path[256];
        int rc;

        s->name = names[i];
        snprintf(path, sizeof(path), "%s/%s", root, names[i]);
        for (char *p = path + strlen(root); *p; p++)
            if (*p == '.') *p = '/';
        rc = probe_read_line(path, s->value, sizeof(s->value));
        s->why[0] = '\0';
        if (rc < 0) snprintf(s->why, sizeof(s->why), "%s: %s", path, strerror(-rc));
        for (char *p = s->value; *p; p++)
            if (*p == '\t') *p = ' ';
    }
}

void probe_machine(struct machine *m)
{
    struct utsname u;
    cpu_set_t set;
    long n = sysconf(_SC_NPROCESSORS_ONLN);

    memset(m, 0, sizeof(*m));
    if (uname(&u) == 0) {
        snprintf(m->kernel, sizeof(m->kernel), "%s", u.release);
        snprintf(m->hostname, sizeof(m->hostname), "%s", u.nodename);
    }
    probe_cpu_model(m->cpu_model, sizeof(m->cpu_model));
    m->ncpus_online = n > 0 ? (unsigned)n : 0;
    if (sched_getaffinity(0, sizeof(set), &set) == 0) m->ncpus_allowed = (unsigned)CPU_COUNT(&set);
    probe_read_line("/sys/devices/system/clocksource/clocksource0/current_clocksource",
                    m->clocksource, sizeof(m->clocksource));
    probe_sysctls(m, "/proc/sys");
}
