/*
 * echo: the protocol's entry. It takes no option of its own; a size is the
 * message, which the server sends back byte for byte.
 */
#include "proto/echo.h"
#include "registry.h"
#include "server/server.h"

const struct proto_entry proto_echo = {
    .name = "echo",
    .codec = &echo_codec,
    .server = &server_echo,
    .close_after_size = true,
    .serve_words = "every byte back",
    .size_words = "the message",
    .lab_words = "message",
};
