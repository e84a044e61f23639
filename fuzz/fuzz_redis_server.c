/*
 * fuzz_redis_server: the reference Redis server's process() against
 * arbitrary request streams (RESP arrays and inline lines), driven the way
 * the frame drives it (server_drive.h), each run on a fresh store. Byte 0
 * picks the read size (1..255, 0 = in_cap). Checks the process() contract
 * (consumed <= len), that every reply is whole RESP replies, one per request
 * answered (and one more, the error, when process() fails), and that the
 * transcript (every reply byte, the requests answered, how the connection
 * ended) is the same as when the stream arrives in in_cap reads.
 */
/* fuzz: also src/server/redis.c */
#include <assert.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "server_drive.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The whole RESP replies in p[0..n): +, -, : lines and $ bulks (or $-1). */
static unsigned count_replies(const uint8_t *p, size_t n)
{
    size_t i = 0;
    unsigned k = 0;

    while (i < n) {
        const uint8_t *nl = memchr(p + i, '\n', n - i);
        size_t line;

        assert(nl != NULL);
        line = (size_t)(nl - (p + i)) + 1;
        assert(line >= 3 && nl[-1] == '\r' && memchr(p + i, '\r', line - 2) == NULL);
        assert(p[i] == '+' || p[i] == '-' || p[i] == ':' || p[i] == '$');
        if (p[i] == '$' && p[i + 1] != '-') {
            size_t len = 0;

            for (size_t j = i + 1; j < i + line - 2; j++) {
                assert(p[j] >= '0' && p[j] <= '9');
                len = len * 10 + (size_t)(p[j] - '0');
            }
            assert(len + 2 <= n - i - line);
            i += line + len;
            assert(p[i] == '\r' && p[i + 1] == '\n');
            i += 2;
        } else {
            i += line;
        }
        k++;
    }
    return k;
}

static void check(const struct server_io *io, size_t r, size_t len)
{
    unsigned replies = count_replies(io->out, io->out_len);

    if (r == SERVER_PROTO_ERROR) {
        assert(replies == io->answered + 1);
        return;
    }
    assert(r <= len);
    assert(replies == io->answered);
}

static void serve_fresh(const uint8_t *data, size_t size, size_t read_size, struct transcript *t)
{
    struct server_cfg cfg;
    void *store = NULL;

    memset(&cfg, 0, sizeof(cfg));
    assert(server_redis.create(&cfg, &store) == 0);
    drive_serve(&server_redis, store, data, size, read_size, t, check);
    server_redis.destroy(store);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t in_cap = server_redis.in_cap, read_size;
    struct transcript a, b;

    if (size < 1) return 0;
    read_size = data[0] == 0 ? in_cap : data[0];
    data++;
    size--;
    serve_fresh(data, size, in_cap, &a);
    serve_fresh(data, size, read_size, &b);
    drive_same(&a, &b);
    return 0;
}
