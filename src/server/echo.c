/*
 * echo: the reference echo server's protocol part: every byte read is sent
 * back as it is, with no copy (the reply is a view of the receive buffer).
 * Its buffer holds a 64 KiB message whole: one read, one send where the
 * kernel has it all. Answering in smaller pieces made its own difference
 * between the transports (four 16 KiB sends cost AF_UNIX and helped TCP:
 * docs/placement.md); an idle connection keeps only the pages it touched.
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
    .in_cap = (size_t)64 * 1024,
};
