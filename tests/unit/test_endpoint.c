/*
 * test_endpoint: parsing tables (valid and hostile strings) and real sockets
 * in a private directory under /tmp: listen/connect on TCP loopback, socket
 * files (mode, stale, live, not-a-socket) and abstract names.
 */
/* cmocka needs these first, in this order. */
/* clang-format off */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
/* clang-format on */

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "endpoint.h"

#define SUN_OFF offsetof(struct sockaddr_un, sun_path)

struct valid_case {
    const char *in;
    enum endpoint_kind kind;
    int family;
    unsigned port;
    const char *text;
    size_t addr_len;
};

static const struct valid_case valid_cases[] = {
    { "tcp://127.0.0.1:9000", ENDPOINT_TCP, AF_INET, 9000, "tcp://127.0.0.1:9000",
      sizeof(struct sockaddr_in) },
    { "tcp://localhost:9000", ENDPOINT_TCP, AF_INET, 9000, "tcp://127.0.0.1:9000",
      sizeof(struct sockaddr_in) },
    { "tcp://LocalHost:1", ENDPOINT_TCP, AF_INET, 1, "tcp://127.0.0.1:1",
      sizeof(struct sockaddr_in) },
    { "tcp://127.0.0.1:0", ENDPOINT_TCP, AF_INET, 0, "tcp://127.0.0.1:0",
      sizeof(struct sockaddr_in) },
    { "tcp://10.1.2.3:65535", ENDPOINT_TCP, AF_INET, 65535, "tcp://10.1.2.3:65535",
      sizeof(struct sockaddr_in) },
    { "tcp://0.0.0.0:80", ENDPOINT_TCP, AF_INET, 80, "tcp://0.0.0.0:80",
      sizeof(struct sockaddr_in) },
    { "tcp://[::1]:9000", ENDPOINT_TCP, AF_INET6, 9000, "tcp://[::1]:9000",
      sizeof(struct sockaddr_in6) },
    { "tcp://[0:0:0:0:0:0:0:1]:80", ENDPOINT_TCP, AF_INET6, 80, "tcp://[::1]:80",
      sizeof(struct sockaddr_in6) },
    { "tcp://[::ffff:127.0.0.1]:7", ENDPOINT_TCP, AF_INET6, 7, "tcp://[::ffff:127.0.0.1]:7",
      sizeof(struct sockaddr_in6) },
    { "tcp://[::]:0", ENDPOINT_TCP, AF_INET6, 0, "tcp://[::]:0", sizeof(struct sockaddr_in6) },
    { "unix:/tmp/hb.sock", ENDPOINT_UNIX, AF_UNIX, 0, "unix:/tmp/hb.sock",
      SUN_OFF + sizeof("/tmp/hb.sock") },
    { "unix:rel/hb.sock", ENDPOINT_UNIX, AF_UNIX, 0, "unix:rel/hb.sock",
      SUN_OFF + sizeof("rel/hb.sock") },
    { "unix:@hopbench", ENDPOINT_ABSTRACT, AF_UNIX, 0, "unix:@hopbench", SUN_OFF + 1 + 8 },
    { "unix:@x", ENDPOINT_ABSTRACT, AF_UNIX, 0, "unix:@x", SUN_OFF + 1 + 1 },
    /* the forms users type, mapped to the native ones */
    { "http://127.0.0.1:8080/", ENDPOINT_TCP, AF_INET, 8080, "tcp://127.0.0.1:8080",
      sizeof(struct sockaddr_in) },
    { "http://127.0.0.1:8080", ENDPOINT_TCP, AF_INET, 8080, "tcp://127.0.0.1:8080",
      sizeof(struct sockaddr_in) },
    { "http://localhost/", ENDPOINT_TCP, AF_INET, 80, "tcp://127.0.0.1:80",
      sizeof(struct sockaddr_in) },
    { "http://[::1]:81", ENDPOINT_TCP, AF_INET6, 81, "tcp://[::1]:81",
      sizeof(struct sockaddr_in6) },
    { "http://[::1]", ENDPOINT_TCP, AF_INET6, 80, "tcp://[::1]:80", sizeof(struct sockaddr_in6) },
    { "http+unix://%2Ftmp%2Fhb.sock/", ENDPOINT_UNIX, AF_UNIX, 0, "unix:/tmp/hb.sock",
      SUN_OFF + sizeof("/tmp/hb.sock") },
    { "http+unix://%2ftmp%2fhb.sock", ENDPOINT_UNIX, AF_UNIX, 0, "unix:/tmp/hb.sock",
      SUN_OFF + sizeof("/tmp/hb.sock") },
    { "http+unix://%40hopbench", ENDPOINT_ABSTRACT, AF_UNIX, 0, "unix:@hopbench", SUN_OFF + 1 + 8 },
    { "unix:///tmp/hb.sock", ENDPOINT_UNIX, AF_UNIX, 0, "unix:/tmp/hb.sock",
      SUN_OFF + sizeof("/tmp/hb.sock") },
};

static void test_parse_valid(void **state)
{
    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(valid_cases); i++) {
        const struct valid_case *c = &valid_cases[i];
        struct hb_err err = { 0 };
        struct endpoint ep;

        print_message("valid: %s\n", c->in);
        assert_int_equal(endpoint_parse(&ep, c->in, &err), 0);
        assert_int_equal(ep.kind, c->kind);
        assert_int_equal(ep.addr.ss_family, c->family);
        assert_int_equal(endpoint_port(&ep), c->port);
        assert_string_equal(ep.text, c->text);
        assert_int_equal(ep.addr_len, c->addr_len);
        assert_string_equal(endpoint_transport(&ep), c->kind == ENDPOINT_TCP ? "tcp" : "unix");
    }
}

static void test_parse_abstract_bytes(void **state)
{
    const struct sockaddr_un *sun;
    struct hb_err err = { 0 };
    struct endpoint ep;

    (void)state;
    assert_int_equal(endpoint_parse(&ep, "unix:@abc", &err), 0);
    sun = (const struct sockaddr_un *)&ep.addr;
    assert_int_equal(sun->sun_path[0], '\0');
    assert_memory_equal(sun->sun_path + 1, "abc", 3);
    assert_int_equal(ep.addr_len, SUN_OFF + 4);
}

/* A "unix:" string whose path (or "@" name) is n bytes of 'a' after prefix. */
static void make_unix(char *buf, size_t cap, const char *prefix, size_t n)
{
    size_t p = strlen(prefix);

    assert_true(p + n < cap);
    memcpy(buf, prefix, p);
    memset(buf + p, 'a', n);
    buf[p + n] = '\0';
}

static void test_parse_lengths(void **state)
{
    char buf[512];
    struct hb_err err = { 0 };
    struct endpoint ep;

    (void)state;
    make_unix(buf, sizeof(buf), "unix:/", 106); /* path of 107 bytes */
    assert_int_equal(endpoint_parse(&ep, buf, &err), 0);
    assert_int_equal(ep.addr_len, SUN_OFF + 108);
    assert_string_equal(ep.text, buf);

    make_unix(buf, sizeof(buf), "unix:/", 107); /* 108 bytes */
    assert_int_equal(endpoint_parse(&ep, buf, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "108 bytes, longer than the 107 allowed"));

    make_unix(buf, sizeof(buf), "unix:@", 107);
    assert_int_equal(endpoint_parse(&ep, buf, &err), 0);
    assert_int_equal(ep.kind, ENDPOINT_ABSTRACT);
    assert_int_equal(ep.addr_len, SUN_OFF + 1 + 107);
    assert_string_equal(ep.text, buf);

    make_unix(buf, sizeof(buf), "unix:@", 108);
    assert_int_equal(endpoint_parse(&ep, buf, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "108 bytes, longer than the 107 allowed"));

    make_unix(buf, sizeof(buf), "unix:/", 199);
    assert_int_equal(endpoint_parse(&ep, buf, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "unix socket path is 200 bytes"));
}

struct invalid_case {
    const char *in;
    const char *needle; /* must appear in err.msg */
};

static const struct invalid_case invalid_cases[] = {
    { "", "empty endpoint" },
    { "udp://1.2.3.4:5", "unknown scheme in 'udp://1.2.3.4:5'" },
    { "TCP://127.0.0.1:80", "unknown scheme" },
    { "tcp:/127.0.0.1:80", "unknown scheme" },
    { "tcp:127.0.0.1:80", "unknown scheme" },
    { "unix", "unknown scheme" },
    { " tcp://127.0.0.1:80", "unknown scheme" },
    { "tcp://", "missing host in 'tcp://'" },
    { "tcp://:80", "missing host" },
    { "tcp://[]:80", "missing host" },
    { "tcp://127.0.0.1", "missing port in 'tcp://127.0.0.1'" },
    { "tcp://127.0.0.1:", "missing port" },
    { "tcp://[::1]", "missing port" },
    { "tcp://[::1]:", "missing port" },
    { "tcp://127.0.0.1:70000", "port '70000' is out of range 0..65535" },
    { "tcp://127.0.0.1:65536", "out of range" },
    { "tcp://127.0.0.1:99999999999999999999999", "out of range" },
    { "tcp://127.0.0.1:-1", "port '-1' is not a plain decimal" },
    { "tcp://127.0.0.1:+80", "port '+80'" },
    { "tcp://127.0.0.1: 80", "port ' 80'" },
    { "tcp://127.0.0.1:80 ", "port '80 '" },
    { "tcp://127.0.0.1:80x", "port '80x'" },
    { "tcp://127.0.0.1:80/", "port '80/'" },
    { "tcp://127.0.0.1:0x50", "port '0x50'" },
    { "tcp://127.0.0.1:80:90", "port '80:90'" },
    { "tcp://127.0.0.1:8\n0", "port '8?0'" },
    { "tcp://::1:9000", "'::1' is an IPv6 address: write it as tcp://[::1]:PORT" },
    { "tcp://::1", "'::1' is an IPv6 address" },
    { "tcp://fe80::1:80", "'fe80::1' is an IPv6 address" },
    { "tcp://[::1", "missing ']'" },
    { "tcp://[::1:80", "missing ']'" },
    { "tcp://[::1]9000", "expected ':PORT' after ']'" },
    { "tcp://[::1]x:80", "expected ':PORT' after ']'" },
    { "tcp://[127.0.0.1]:80", "'127.0.0.1' is not a numeric IPv6 address" },
    { "tcp://[localhost]:80", "not a numeric IPv6 address" },
    { "tcp://[fe80::1%lo]:80", "not a numeric IPv6 address" },
    { "tcp://example.com:80", "'example.com' is not a numeric IP address" },
    { "tcp://127.1:80", "'127.1' is not a numeric IP address" },
    { "tcp://1.2.3.4.5:80", "not a numeric IP address" },
    { "tcp://256.0.0.1:80", "not a numeric IP address" },
    { "tcp://127.0.0.1 :80", "not a numeric IP address" },
    { "tcp://127.0.0.1\t:80", "'127.0.0.1?' is not a numeric" },
    { "tcp://::1]:80", "in 'tcp://::1]:80'" },
    { "unix:", "unix socket path is empty in 'unix:'" },
    { "unix:@", "abstract socket name is empty in 'unix:@'" },
    { "unix:/tmp/a\nb", "control character 0x0a" },
    { "unix:@a\x1b[31m", "control character 0x1b" },
    { "unix:/tmp/\x7f", "control character 0x7f" },
    { "http://127.0.0.1:8080/index.html", "a path is for run's requests" },
    { "http+unix://%2Ftmp%2Fhb.sock/status", "a path is for run's requests" },
    { "http://127.0.0.1:8080?x=1", "expected /PATH after the address" },
    { "http://127.0.0.1:70000/", "port '70000' is out of range" },
    { "http://example.com/", "'example.com' is not a numeric IP address" },
    { "http://", "missing host" },
    { "https://127.0.0.1/", "speaks no TLS" },
    { "HTTP://127.0.0.1/", "unknown scheme" },
    { "http+unix:///", "no socket path" },
    { "http+unix://%2", "a bad %XX escape" },
    { "http+unix://%zz", "a bad %XX escape" },
    { "http+unix://%00x", "a bad %XX escape" },
    { "http+unix://%2Ftmp%0Ax", "control character 0x0a" },
};

/* An http URL's /PATH, for run's requests: where it begins in the string, "" for none. */
static void test_parse_url_path(void **state)
{
    static const struct {
        const char *in, *path;
    } cases[] = {
        { "http://127.0.0.1:8080/index.php?x=1", "/index.php?x=1" },
        { "http://127.0.0.1:8080/", "/" },
        { "http://127.0.0.1:8080", "" },
        { "http://[::1]:8/a/b", "/a/b" },
        { "http+unix://%2Frun%2Fphp.sock/status", "/status" },
        { "http+unix://%40x", "" },
    };
    struct hb_err err = { 0 };
    struct endpoint ep;
    const char *path = "unset";

    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        assert_int_equal(endpoint_parse_url(&ep, cases[i].in, &path, &err), 0);
        assert_non_null(path);
        assert_string_equal(path, cases[i].path);
    }
    /* the native forms have none */
    assert_int_equal(endpoint_parse_url(&ep, "tcp://127.0.0.1:1", &path, &err), 0);
    assert_null(path);
    assert_int_equal(endpoint_parse_url(&ep, "unix:@x", &path, &err), 0);
    assert_null(path);
    assert_int_equal(endpoint_parse_url(&ep, "http://127.0.0.1:1?x", &path, &err), -EINVAL);
    assert_null(path);
}

/* s with control bytes shown as '?', for test output (some inputs hold escapes). */
static const char *visible(char *buf, size_t cap, const char *s)
{
    size_t i = 0;

    for (; s[i] != '\0' && i + 1 < cap; i++)
        buf[i] = s[i];
    if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f) buf[i] = '?';
    buf[i] = '\0';
    return buf;
}

static void test_parse_invalid(void **state)
{
    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(invalid_cases); i++) {
        const struct invalid_case *c = &invalid_cases[i];
        struct hb_err err = { 0 };
        struct endpoint ep;
        char vis[128];

        print_message("invalid: '%s'\n", visible(vis, sizeof(vis), c->in));
        memset(&ep, 0x5a, sizeof(ep));
        assert_int_equal(endpoint_parse(&ep, c->in, &err), -EINVAL);
        assert_int_equal(err.code, -EINVAL);
        assert_true(err.msg[0] != '\0');
        assert_null(strchr(err.msg, '\n'));
        if (strstr(err.msg, c->needle) == NULL)
            fail_msg("'%s': message '%s' lacks '%s'", vis, err.msg, c->needle);
        assert_int_equal(ep.kind, 0); /* ep is cleared on failure */
    }
}

static void test_parse_null(void **state)
{
    struct hb_err err = { 0 };
    struct endpoint ep;

    (void)state;
    assert_int_equal(endpoint_parse(&ep, NULL, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "empty endpoint"));
}

/* Very long and binary input: no overflow, message stays short and one line. */
static void test_parse_hostile(void **state)
{
    static const char *const prefixes[] = { "tcp://", "tcp://[",  "tcp://127.0.0.1:", "unix:/",
                                            "unix:@", "bogus://", "tcp://[::1]:",     "tcp://::" };
    static char big[20000];
    struct hb_err err = { 0 };
    struct endpoint ep;

    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(prefixes); i++) {
        size_t p = strlen(prefixes[i]);

        memcpy(big, prefixes[i], p);
        memset(big + p, i % 2 ? ':' : '9', sizeof(big) - p - 1);
        big[sizeof(big) - 1] = '\0';
        assert_int_equal(endpoint_parse(&ep, big, &err), -EINVAL);
        assert_true(strlen(err.msg) < 200);
        assert_non_null(strstr(err.msg, "..."));
    }
    for (int i = 0; i < 255; i++) /* every byte value 1..255 */
        big[i] = (char)(i + 1);
    big[255] = '\0';
    assert_int_equal(endpoint_parse(&ep, big, &err), -EINVAL);
    memcpy(big, "tcp://", 6);
    assert_int_equal(endpoint_parse(&ep, big, &err), -EINVAL);
    for (const char *m = err.msg; *m; m++)
        assert_true((unsigned char)*m >= 0x20 && *m != 0x7f);
}

static void test_is_local(void **state)
{
    static const struct {
        const char *in;
        bool local;
    } cases[] = {
        { "tcp://127.0.0.1:1", true },
        { "tcp://127.255.255.254:1", true },
        { "tcp://localhost:1", true },
        { "tcp://[::1]:1", true },
        { "tcp://[::ffff:127.0.0.9]:1", true },
        { "tcp://0.0.0.0:1", false },
        { "tcp://10.0.0.1:1", false },
        { "tcp://128.0.0.1:1", false },
        { "tcp://[::]:1", false },
        { "tcp://[::ffff:10.0.0.1]:1", false },
        { "tcp://[::2]:1", false },
        { "unix:/x", true },
        { "unix:@x", true },
    };

    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        struct hb_err err = { 0 };
        struct endpoint ep;

        assert_int_equal(endpoint_parse(&ep, cases[i].in, &err), 0);
        if (endpoint_is_local(&ep) != cases[i].local)
            fail_msg("endpoint_is_local(%s) != %d", cases[i].in, cases[i].local);
    }
}

static void test_set_port(void **state)
{
    struct hb_err err = { 0 };
    struct endpoint ep;

    (void)state;
    assert_int_equal(endpoint_parse(&ep, "tcp://[::1]:0", &err), 0);
    endpoint_set_port(&ep, 4242);
    assert_int_equal(endpoint_port(&ep), 4242);
    assert_string_equal(ep.text, "tcp://[::1]:4242");
    assert_int_equal(endpoint_parse(&ep, "tcp://localhost:0", &err), 0);
    endpoint_set_port(&ep, 65535);
    assert_string_equal(ep.text, "tcp://127.0.0.1:65535");
    assert_int_equal(endpoint_parse(&ep, "unix:@n", &err), 0);
    endpoint_set_port(&ep, 5);
    assert_int_equal(endpoint_port(&ep), 0);
    assert_string_equal(ep.text, "unix:@n");
}

/* ---- real sockets ---- */

struct sockdir {
    char dir[64];
};

static int setup_dir(void **state)
{
    struct sockdir *d = calloc(1, sizeof(*d));

    if (d == NULL) return -1;
    snprintf(d->dir, sizeof(d->dir), "/tmp/hb_endpoint_XXXXXX");
    if (mkdtemp(d->dir) == NULL) {
        free(d);
        return -1;
    }
    *state = d;
    return 0;
}

static int teardown_dir(void **state)
{
    struct sockdir *d = *state;
    static const char *const names[] = { "s.sock", "file", "stale.sock", "live.sock" };
    char path[128];

    for (size_t i = 0; i < ARRAY_LEN(names); i++) {
        snprintf(path, sizeof(path), "%s/%s", d->dir, names[i]);
        unlink(path);
    }
    rmdir(d->dir);
    free(d);
    return 0;
}

static const struct listen_opts opts_0600 = { .backlog = 16, .mode = 0600, .allow_remote = false };

static void parse_or_die(struct endpoint *ep, const char *s)
{
    struct hb_err err = { 0 };

    if (endpoint_parse(ep, s, &err) != 0) fail_msg("parse '%s': %s", s, err.msg);
}

static void parse_in_dir(struct endpoint *ep, void **state, const char *name)
{
    const struct sockdir *d = *state;
    char s[160];

    snprintf(s, sizeof(s), "unix:%s/%s", d->dir, name);
    parse_or_die(ep, s);
}

static const char *ep_path(const struct endpoint *ep)
{
    return ((const struct sockaddr_un *)&ep->addr)->sun_path;
}

static int listen_or_die(struct endpoint *ep, const struct listen_opts *opts)
{
    struct hb_err err = { 0 };
    int fd = endpoint_listen(ep, opts, &err);

    if (fd < 0) fail_msg("listen %s: %d %s", ep->text, fd, err.msg);
    return fd;
}

static void assert_nonblock_cloexec(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    int fdfl = fcntl(fd, F_GETFD);

    assert_true(fl != -1 && (fl & O_NONBLOCK));
    assert_true(fdfl != -1 && (fdfl & FD_CLOEXEC));
}

/* Waits for a pending connect and returns its SO_ERROR. */
static int finish_connect(int fd)
{
    struct pollfd p = { .fd = fd, .events = POLLOUT };
    int soerr = -1;
    socklen_t len = sizeof(soerr);

    assert_int_equal(poll(&p, 1, 5000), 1);
    assert_int_equal(getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len), 0);
    return soerr;
}

/* Connects to a listening ep, accepts, and checks one byte goes through. */
static void connect_and_accept(const struct endpoint *ep, int lfd)
{
    struct pollfd p = { .fd = lfd, .events = POLLIN };
    bool pending = true;
    char c = 0;
    int cfd = endpoint_connect(ep, &pending);
    int afd;

    if (cfd < 0) fail_msg("connect %s: %s", ep->text, strerror(-cfd));
    assert_nonblock_cloexec(cfd);
    if (pending) assert_int_equal(finish_connect(cfd), 0);
    assert_int_equal(poll(&p, 1, 5000), 1);
    afd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
    assert_true(afd >= 0);
    if (ep->kind == ENDPOINT_TCP) {
        /* Both ends have Nagle off: the client's own, the server's inherited from the listener. */
        int nd = 0;
        socklen_t len = sizeof(nd);
        assert_int_equal(getsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &nd, &len), 0);
        assert_int_equal(nd, 1);
        nd = 0;
        assert_int_equal(getsockopt(afd, IPPROTO_TCP, TCP_NODELAY, &nd, &len), 0);
        assert_int_equal(nd, 1);
    }
    assert_int_equal(write(cfd, "x", 1), 1);
    assert_int_equal(read(afd, &c, 1), 1);
    assert_int_equal(c, 'x');
    close(afd);
    close(cfd);
}

static void test_listen_unix_mode(void **state)
{
    struct endpoint ep;
    struct stat st;
    int fd;

    parse_in_dir(&ep, state, "s.sock");
    fd = listen_or_die(&ep, &opts_0600);
    assert_nonblock_cloexec(fd);
    assert_int_equal(stat(ep_path(&ep), &st), 0);
    assert_true(S_ISSOCK(st.st_mode));
    assert_int_equal(st.st_mode & 07777, 0600);
    connect_and_accept(&ep, fd);
    close(fd);
    endpoint_unlink(&ep);
    assert_int_equal(access(ep_path(&ep), F_OK), -1);
    assert_int_equal(errno, ENOENT);
}

static void test_listen_refuses_regular_file(void **state)
{
    static const char content[] = "precious data\n";
    struct hb_err err = { 0 };
    struct endpoint ep;
    struct stat st;
    char buf[64] = "";
    int fd;

    parse_in_dir(&ep, state, "file");
    fd = open(ep_path(&ep), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, content, sizeof(content) - 1), (ssize_t)sizeof(content) - 1);
    close(fd);

    assert_int_equal(endpoint_listen(&ep, &opts_0600, &err), -EEXIST);
    assert_non_null(strstr(err.msg, "exists and is not a socket; not removing it"));
    assert_int_equal(stat(ep_path(&ep), &st), 0);
    assert_true(S_ISREG(st.st_mode));
    assert_int_equal(st.st_mode & 07777, 0644);
    fd = open(ep_path(&ep), O_RDONLY | O_CLOEXEC);
    assert_true(fd >= 0);
    assert_int_equal(read(fd, buf, sizeof(buf)), (ssize_t)sizeof(content) - 1);
    close(fd);
    assert_string_equal(buf, content);
}

static void test_listen_replaces_stale(void **state)
{
    struct endpoint ep;
    struct stat st;
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

    parse_in_dir(&ep, state, "stale.sock");
    assert_true(fd >= 0);
    assert_int_equal(bind(fd, (const struct sockaddr *)&ep.addr, ep.addr_len), 0);
    assert_int_equal(listen(fd, 1), 0);
    close(fd); /* crash-like: the file stays */
    assert_int_equal(lstat(ep_path(&ep), &st), 0);
    assert_true(S_ISSOCK(st.st_mode));

    fd = listen_or_die(&ep, &opts_0600);
    assert_int_equal(stat(ep_path(&ep), &st), 0);
    assert_int_equal(st.st_mode & 07777, 0600);
    connect_and_accept(&ep, fd);
    close(fd);
    endpoint_unlink(&ep);
}

static void test_listen_refuses_live(void **state)
{
    struct hb_err err = { 0 };
    struct endpoint ep, ep2;
    char c = 0;
    int fd, afd;

    parse_in_dir(&ep, state, "live.sock");
    ep2 = ep;
    fd = listen_or_die(&ep, &opts_0600);
    assert_int_equal(endpoint_listen(&ep2, &opts_0600, &err), -EADDRINUSE);
    assert_non_null(strstr(err.msg, "another server is listening on"));
    /* the probe's connection reaches the live server: accept it, it is already closed */
    afd = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
    assert_true(afd >= 0);
    assert_int_equal(read(afd, &c, 1), 0);
    close(afd);
    /* the first listener still works and its file is still there */
    connect_and_accept(&ep, fd);
    close(fd);
    endpoint_unlink(&ep);
}

/*
 * endpoint_unlink removes the socket file endpoint_listen made and nothing
 * else: not another server's socket bound at the path since, not a regular
 * file, not a path this endpoint never listened on.
 */
static void test_unlink_only_its_own(void **state)
{
    static const char content[] = "precious data\n";
    struct endpoint ep, never;
    struct stat st;
    int fd, other, f;

    parse_in_dir(&ep, state, "s.sock");
    fd = listen_or_die(&ep, &opts_0600);
    assert_int_equal(unlink(ep_path(&ep)), 0);
    other = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(other >= 0);
    assert_int_equal(bind(other, (const struct sockaddr *)&ep.addr, ep.addr_len), 0);
    assert_int_equal(listen(other, 1), 0);
    assert_false(endpoint_unlink(&ep));
    assert_int_equal(lstat(ep_path(&ep), &st), 0);
    assert_true(S_ISSOCK(st.st_mode));
    never = ep;
    never.file_dev = 0;
    never.file_ino = 0;
    assert_false(endpoint_unlink(&never));
    assert_int_equal(lstat(ep_path(&ep), &st), 0);

    assert_int_equal(unlink(ep_path(&ep)), 0);
    f = open(ep_path(&ep), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    assert_true(f >= 0);
    assert_int_equal(write(f, content, sizeof(content) - 1), (ssize_t)sizeof(content) - 1);
    close(f);
    assert_false(endpoint_unlink(&ep));
    assert_int_equal(lstat(ep_path(&ep), &st), 0);
    assert_true(S_ISREG(st.st_mode));

    assert_int_equal(unlink(ep_path(&ep)), 0);
    assert_true(endpoint_unlink(&ep)); /* already gone */
    close(other);
    close(fd);
}

static void test_listen_tcp_port0(void **state)
{
    struct sockaddr_in sin = { 0 };
    socklen_t len = sizeof(sin);
    struct endpoint ep;
    char want[64];
    int fd;

    (void)state;
    parse_or_die(&ep, "tcp://127.0.0.1:0");
    fd = listen_or_die(&ep, &opts_0600);
    assert_nonblock_cloexec(fd);
    assert_int_not_equal(endpoint_port(&ep), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&sin, &len), 0);
    assert_int_equal(ntohs(sin.sin_port), endpoint_port(&ep));
    snprintf(want, sizeof(want), "tcp://127.0.0.1:%u", endpoint_port(&ep));
    assert_string_equal(ep.text, want);
    connect_and_accept(&ep, fd);
    close(fd);
}

static void test_listen_tcp6(void **state)
{
    struct hb_err err = { 0 };
    struct endpoint ep;
    int fd;

    (void)state;
    parse_or_die(&ep, "tcp://[::1]:0");
    fd = endpoint_listen(&ep, &opts_0600, &err);
    if (fd == -EADDRNOTAVAIL || fd == -EAFNOSUPPORT) skip(); /* no IPv6 loopback here */
    if (fd < 0) fail_msg("listen [::1]: %s", err.msg);
    assert_int_not_equal(endpoint_port(&ep), 0);
    connect_and_accept(&ep, fd);
    close(fd);
}

static void test_listen_remote(void **state)
{
    const struct listen_opts remote = { .backlog = 4, .mode = 0600, .allow_remote = true };
    struct hb_err err = { 0 };
    struct endpoint ep;
    int fd;

    (void)state;
    parse_or_die(&ep, "tcp://0.0.0.0:0");
    assert_int_equal(endpoint_listen(&ep, &opts_0600, &err), -EPERM);
    assert_non_null(strstr(err.msg, "--allow-remote"));
    assert_non_null(strstr(err.msg, "0.0.0.0"));
    fd = listen_or_die(&ep, &remote);
    assert_int_not_equal(endpoint_port(&ep), 0);
    close(fd);
}

static void test_connect_missing_path(void **state)
{
    struct endpoint ep;
    bool pending = true;

    parse_in_dir(&ep, state, "does-not-exist.sock");
    assert_int_equal(endpoint_connect(&ep, &pending), -ENOENT);
}

static void test_connect_refused_tcp(void **state)
{
    struct sockaddr_in sin = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t len = sizeof(sin);
    struct endpoint ep;
    bool pending = false;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

    (void)state;
    assert_true(fd >= 0);
    assert_int_equal(bind(fd, (const struct sockaddr *)&sin, sizeof(sin)), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&sin, &len), 0);
    close(fd); /* a port nobody listens on (for now) */
    parse_or_die(&ep, "tcp://127.0.0.1:0");
    endpoint_set_port(&ep, ntohs(sin.sin_port));

    fd = endpoint_connect(&ep, &pending);
    if (fd >= 0) {
        assert_true(pending);
        assert_int_equal(finish_connect(fd), ECONNREFUSED);
        close(fd);
    } else {
        assert_int_equal(fd, -ECONNREFUSED);
    }
}

static void test_abstract(void **state)
{
    struct hb_err err = { 0 };
    struct endpoint ep, ep2;
    bool pending = true;
    char s[96];
    int fd;

    (void)state;
    snprintf(s, sizeof(s), "unix:@hopbench-test-%ld-%u", (long)getpid(), (unsigned)rand());
    parse_or_die(&ep, s);
    fd = listen_or_die(&ep, &opts_0600);
    assert_nonblock_cloexec(fd);
    connect_and_accept(&ep, fd);
    ep2 = ep;
    assert_int_equal(endpoint_listen(&ep2, &opts_0600, &err), -EADDRINUSE);
    assert_non_null(strstr(err.msg, "already in use"));
    endpoint_unlink(&ep); /* no-op */
    close(fd);
    assert_int_equal(endpoint_connect(&ep, &pending), -ECONNREFUSED);
}

/* --source: lists, ranges and their text; what is not an address or a range is refused. */
static void test_sources_parse(void **state)
{
    struct endpoint_sources src;
    struct hb_err err = { 0 };
    char text[256];

    (void)state;
    assert_int_equal(endpoint_sources_parse(&src, "127.0.0.2-127.0.0.9", &err), 0);
    assert_int_equal(src.n, 8);
    assert_string_equal(endpoint_sources_text(src.addr, src.n, text, sizeof(text)),
                        "127.0.0.2-127.0.0.9");
    assert_true(endpoint_sources_local(&src));
    assert_int_equal(endpoint_sources_parse(&src, "127.0.0.5,::1,127.0.0.7", &err), 0);
    assert_int_equal(src.n, 3);
    assert_int_equal(src.addr[1].ss_family, AF_INET6);
    assert_string_equal(endpoint_sources_text(src.addr, src.n, text, sizeof(text)),
                        "127.0.0.5,::1,127.0.0.7");
    assert_true(endpoint_sources_local(&src));
    assert_int_equal(endpoint_sources_parse(&src, "10.0.0.1", &err), 0);
    assert_false(endpoint_sources_local(&src));
    assert_int_equal(endpoint_sources_parse(&src, "127.0.0.9-127.0.0.2", &err), -EINVAL);
    assert_non_null(strstr(err.msg, "low to high"));
    assert_int_equal(endpoint_sources_parse(&src, "localhost", &err), -EINVAL);
    assert_non_null(strstr(err.msg, "not a numeric"));
    assert_int_equal(endpoint_sources_parse(&src, "127.0.0.1-127.0.1.0", &err), -EINVAL);
    assert_non_null(strstr(err.msg, "more than 64"));
    assert_int_equal(endpoint_sources_parse(&src, ",", &err), -EINVAL);
    assert_int_equal(endpoint_sources_parse(&src, "", &err), -EINVAL);
}

/*
 * A connect from a source address: the server sees the connection come from it, each source
 * with its own ports; a source of the other family, or not of this host, is refused.
 */
static void test_connect_from(void **state)
{
    struct endpoint_sources src;
    struct sockaddr_in peer;
    socklen_t len = sizeof(peer);
    struct hb_err err = { 0 };
    struct endpoint ep;
    bool pending = false;
    int lfd, cfd, afd;

    (void)state;
    parse_or_die(&ep, "tcp://127.0.0.1:0");
    lfd = listen_or_die(&ep, &opts_0600);
    assert_int_equal(endpoint_sources_parse(&src, "127.0.0.3,::1,192.0.2.1", &err), 0);
    cfd = endpoint_connect_from(&ep, &src.addr[0], &pending);
    assert_true(cfd >= 0);
    if (pending) assert_int_equal(finish_connect(cfd), 0);
    afd = accept4(lfd, (struct sockaddr *)&peer, &len, SOCK_CLOEXEC);
    if (afd < 0) {
        struct pollfd p = { .fd = lfd, .events = POLLIN };
        assert_int_equal(poll(&p, 1, 5000), 1);
        afd = accept4(lfd, (struct sockaddr *)&peer, &len, SOCK_CLOEXEC);
    }
    assert_true(afd >= 0);
    assert_int_equal(ntohl(peer.sin_addr.s_addr), 0x7f000003);
    close(afd);
    close(cfd);
    assert_int_equal(endpoint_connect_from(&ep, &src.addr[1], &pending), -EAFNOSUPPORT);
    assert_int_equal(endpoint_connect_from(&ep, &src.addr[2], &pending), -EADDRNOTAVAIL);
    close(lfd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_valid),
        cmocka_unit_test(test_parse_abstract_bytes),
        cmocka_unit_test(test_parse_lengths),
        cmocka_unit_test(test_parse_invalid),
        cmocka_unit_test(test_parse_url_path),
        cmocka_unit_test(test_parse_null),
        cmocka_unit_test(test_parse_hostile),
        cmocka_unit_test(test_is_local),
        cmocka_unit_test(test_set_port),
        cmocka_unit_test_setup_teardown(test_listen_unix_mode, setup_dir, teardown_dir),
        cmocka_unit_test_setup_teardown(test_listen_refuses_regular_file, setup_dir, teardown_dir),
        cmocka_unit_test_setup_teardown(test_listen_replaces_stale, setup_dir, teardown_dir),
        cmocka_unit_test_setup_teardown(test_listen_refuses_live, setup_dir, teardown_dir),
        cmocka_unit_test_setup_teardown(test_unlink_only_its_own, setup_dir, teardown_dir),
        cmocka_unit_test(test_listen_tcp_port0),
        cmocka_unit_test(test_listen_tcp6),
        cmocka_unit_test(test_listen_remote),
        cmocka_unit_test_setup_teardown(test_connect_missing_path, setup_dir, teardown_dir),
        cmocka_unit_test(test_connect_refused_tcp),
        cmocka_unit_test(test_abstract),
        cmocka_unit_test(test_sources_parse),
        cmocka_unit_test(test_connect_from),
    };

    srand((unsigned)getpid());
    return cmocka_run_group_tests(tests, NULL, NULL);
}
