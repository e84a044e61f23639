/*
 * echo: raw echo. The request is `size` bytes of a fixed pattern; the reply
 * must be the very same bytes, checked byte for byte (memcmp against the
 * request the caller encoded, so a 64 KiB reply costs one memcmp, not a loop).
 */
#ifndef HOPBENCH_PROTO_ECHO_H
#define HOPBENCH_PROTO_ECHO_H

#include "proto/codec.h"

#define ECHO_MAX_SIZE ((size_t)64 * 1024 * 1024)

extern const struct codec_ops echo_codec;

/*
 * Byte i of the echo pattern. i % 251 takes 251 distinct values and x -> 7x + 13
 * is one-to-one modulo 256, so the period is exactly 251 and a stream shifted
 * by 1..250 bytes differs from the pattern at every position.
 */
static inline uint8_t echo_pattern_byte(size_t i)
{
    return (uint8_t)((i % 251) * 7 + 13);
}

#endif
