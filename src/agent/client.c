/*
 * client: the token, bounded reads of frames, and the questions
 * run --agent asks (see client.h).
 */
#include "agent/client.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sockio.h"

/* Checks the token's bytes t->b[0 .. t->len) and names the source in a failure. */
static int token_check(const struct agent_token *t, const char *what, struct hb_err *err)
{
    if (t->len < AGENT_TOKEN_MIN || t->len > AGENT_TOKEN_MAX - 1)
        return hb_fail(err, -EINVAL, "%s: the token must be %d to %d bytes, not %zu", what,
                       AGENT_TOKEN_MIN, AGENT_TOKEN_MAX - 1, t->len);
    if (memchr(t->b, '\0', t->len) != NULL)
        return hb_fail(err, -EINVAL, "%s: the token holds a NUL byte", what);
    return 0;
}

int agent_token_read(struct agent_token *t, const char *path, const char *what, struct hb_err *err)
{
    const char *env;
    struct stat st;
    ssize_t n;
    int fd;

    memset(t, 0, sizeof(*t));
    if (path == NULL) {
        env = getenv(AGENT_TOKEN_ENV);
        if (env == NULL)
            return hb_fail(err, -EINVAL, "%s: no token: give a token file or set %s", what,
                           AGENT_TOKEN_ENV);
        t->len = strnlen(env, AGENT_TOKEN_MAX);
        memcpy(t->b, env, t->len);
        return token_check(t, what, err);
    }
    fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd == -1) return hb_fail(err, -errno, "%s: %s", what, strerror(errno));
    if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) || (st.st_mode & 077) != 0) {
        close(fd);
        return hb_fail(err, -EPERM, "%s: not a regular file that only its owner may read", what);
    }
    do
        n = read(fd, t->b, sizeof(t->b));
    while (n == -1 && errno == EINTR);
    close(fd);
    if (n == -1) return hb_fail(err, -errno, "%s: %s", what, strerror(errno));
    t->len = (size_t)n;
    for (size_t i = 0; i < t->len; i++)
        if (t->b[i] == '\n') t->len = i; /* the first line */
    if (t->len > 0 && t->b[t->len - 1] == '\r') t->len--;
    memset(t->b + t->len, 0, sizeof(t->b) - t->len);
    return token_check(t, what, err);
}

int agent_recv_msg(int fd, struct agent_dec *d, uint64_t deadline_ns)
{
    uint8_t chunk[4096];

    for (;;) {
        ssize_t k = read(fd, chunk, sizeof(chunk));
        size_t used = 0;
        enum agent_dec_rc rc;
        int w;

        if (k == 0) return -ECONNRESET;
        if (k == -1) {
            if (errno != EAGAIN && errno != EINTR) return -errno;
            w = sock_wait(fd, POLLIN, deadline_ns);
            if (w < 0) return w;
            continue;
        }
        rc = agent_dec_feed(d, chunk, (size_t)k, &used);
        if (rc == AGENT_DEC_ERROR) return d->err;
        if (rc == AGENT_DEC_MSG) return used == (size_t)k ? 0 : -EPROTO;
    }
}

/* The exchange on a connected fd: hello in, request out, reply in. */
static int exchange(int fd, const struct agent_client *c, struct agent_req *req,
                    struct agent_reply *rep, uint8_t *buf, uint64_t deadline_ns, struct hb_err *err)
{
    uint8_t frame[AGENT_HDR + AGENT_REQ_MAX];
    struct agent_dec d;
    long n;
    int rc;

    agent_dec_init(&d, buf, AGENT_REPLY_MAX);
    rc = agent_recv_msg(fd, &d, deadline_ns);
    if (rc == 0) rc = agent_reply_parse(d.buf, d.len, rep, err) < 0 ? -EPROTO : 0;
    if (rc == 0 && rep->type != AGENT_HELLO) {
        rc = rep->type == AGENT_ERROR ? -EIO : -EPROTO;
        hb_fail(err, rc, "no hello: %s", rep->type == AGENT_ERROR ? rep->error : "another reply");
    }
    if (rc < 0) return rc;
    n = agent_req_frame(req, c->token.b, c->token.len, rep->nonce, frame, sizeof(frame));
    if (n == -EIO) return hb_fail(err, -EIO, "libcrypto's HMAC failed");
    if (n < 0) return hb_fail(err, (int)n, "the request does not fit in %d bytes", AGENT_REQ_MAX);
    rc = sock_send_all(fd, frame, (size_t)n, deadline_ns);
    agent_dec_init(&d, buf, AGENT_REPLY_MAX);
    if (rc == 0) rc = agent_recv_msg(fd, &d, deadline_ns);
    if (rc == 0) rc = agent_reply_parse(d.buf, d.len, rep, err) < 0 ? -EPROTO : 0;
    return rc;
}

/* An error reply as a failure: its kind picks the errno. */
static int refused(const struct agent_reply *rep, struct hb_err *err)
{
    int code = strcmp(rep->code, "auth") == 0 ? -EKEYREJECTED
               : strcmp(rep->code, "too_large") == 0 || strcmp(rep->code, "bad_request") == 0
                   ? -EPROTO
                   : -EIO;
    char line[AGENT_ERROR_MAX];

    text_safe(line, sizeof(line), rep->error);
    return hb_fail(err, code, "refused (%s): %s", rep->code, line);
}

int agent_ask(const struct agent_client *c, struct agent_req *req, struct agent_reply *rep,
              struct hb_err *err)
{
    uint64_t deadline = now_ns() + c->timeout_ns;
    uint8_t *buf = xmalloc(AGENT_REPLY_MAX);
    struct hb_err why = { 0 };
    char ep[TEXT_SAFE_CAP];
    int fd = sock_connect(&c->ep, deadline), rc;

    memset(rep, 0, sizeof(*rep));
    text_safe(ep, sizeof(ep), c->ep.text);
    if (fd < 0) {
        free(buf);
        return hb_fail(err, fd, "agent %s: cannot connect: %s", ep, strerror(-fd));
    }
    rc = exchange(fd, c, req, rep, buf, deadline, &why);
    close(fd);
    free(buf);
    if (rc == 0 && rep->type == AGENT_ERROR) rc = refused(rep, &why);
    if (rc == 0) return 0;
    agent_reply_release(rep);
    if (why.msg[0] == '\0') snprintf(why.msg, sizeof(why.msg), "%s", strerror(-rc));
    return hb_fail(err, rc, "agent %s: %s", ep, why.msg);
}

int agent_wait_state(const struct agent_client *c, const atomic_int *stop, struct hb_err *err)
{
    uint64_t until = now_ns() + c->wait_ns;
    char last[AGENT_NAME_MAX] = "";

    for (;;) {
        struct agent_req req = { .type = AGENT_STATE };
        struct agent_reply rep;
        int rc = agent_ask(c, &req, &rep, err);

        if (rc < 0) return rc;
        snprintf(last, sizeof(last), "%s", rep.state);
        agent_reply_release(&rep);
        if (strcmp(last, c->state) == 0) return 0;
        if (now_ns() >= until)
            return hb_fail(err, -ETIMEDOUT, "agent %s: state %s not announced in %.0f s (now %s)",
                           c->ep.text, c->state, (double)c->wait_ns / 1e9, last[0] ? last : "none");
        if (!sleep_until_ns(now_ns() + 200 * NS_PER_MS, stop))
            return hb_fail(err, -EINTR, "interrupted while waiting for state %s", c->state);
    }
}
