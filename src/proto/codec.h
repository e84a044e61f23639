/*
 * codec: the one interface every client protocol speaks (echo now; http,
 * fcgi, resp later). A codec is a pure function over buffers: it writes a
 * request into caller memory and parses reply bytes incrementally. It never
 * touches a socket, a clock, the heap or a global, so it can be unit-tested
 * and fuzzed in isolation.
 *
 * feed() gives the same verdict however the input is split, one byte at a
 * time included. After CODEC_DONE the state is ready for the next reply, so a
 * pipelined stream is parsed by calling feed() again on the rest.
 */
#ifndef HOPBENCH_PROTO_CODEC_H
#define HOPBENCH_PROTO_CODEC_H

#include <stddef.h>
#include <stdint.h>

enum codec_rc {
    CODEC_NEED_MORE = 0, /* all input used, the reply is not complete */
    CODEC_DONE = 1,      /* one reply complete; *used says where it ended */
    CODEC_ERROR = -1,    /* the reply is wrong; msg->err says how */
};

enum codec_err {
    CODEC_ERR_NONE = 0,
    CODEC_ERR_MISMATCH, /* bytes differ from what the protocol requires */
    CODEC_ERR_TOO_BIG,  /* a length or header above the codec's cap */
};

struct codec_cfg {
    size_t size;            /* payload bytes (echo: message size) */
    const uint8_t *request; /* the request as encoded, for codecs that check echoes */
    size_t request_len;
};

struct codec_msg {
    enum codec_err err;
    size_t err_off; /* offset of the first bad byte within the reply */
};

struct codec_ops {
    const char *name;
    size_t state_size; /* bytes of per-connection state the caller provides */
    void (*init)(void *st, const struct codec_cfg *cfg);
    /* Writes one request into dst; returns its length, or 0 if cap is too small. */
    size_t (*encode)(void *st, uint8_t *dst, size_t cap);
    /* Parses reply bytes; *used = bytes consumed (all of them unless DONE or ERROR). */
    enum codec_rc (*feed)(void *st, const uint8_t *src, size_t len, size_t *used,
                          struct codec_msg *msg);
};

/* The codec called `name`, or NULL. */
const struct codec_ops *codec_find(const char *name);

/* "echo" (and, later, the others), for --help and error messages. */
const char *codec_names(void);

static inline const char *codec_err_str(enum codec_err e)
{
    switch (e) {
    case CODEC_ERR_NONE:
        return "none";
    case CODEC_ERR_MISMATCH:
        return "mismatch";
    case CODEC_ERR_TOO_BIG:
        return "too big";
    }
    return "?";
}

#endif
