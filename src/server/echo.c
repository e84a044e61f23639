/*
 * echo: the reference echo server's protocol part: every byte read is sent
 * back as it is, with no copy (the reply is a view of the receive buffer).
 */
#include "server/server.h"

#include "util.h"

static size_t echo_process(void *shared, struct server_io *io, const uint8_t *in, size_t len)
{
    UNUSED(shared);
    io->out = in;
    io->out_len = len;
    io->answered = 1; /* echo has no message boundaries: one read answered */
    return len;
}

const struct server_proto server_echo = {
    .name = "echo",
    .process = echo_process,
};
