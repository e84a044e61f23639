/*
 * sql_mix: the --sql mix of the pg and mysql codecs as their unit tests drive
 * it: two statements 4:1 (the update third of every five requests), set in
 * codec_sql as cmd/run.c's parser sets them for --sql given twice, and a request encoded
 * and checked against the statement the mix names for it. The expected order
 * is computed here, not by codec.h's helpers. Include after cmocka.h.
 */
#ifndef HOPBENCH_TESTS_SQL_MIX_H
#define HOPBENCH_TESTS_SQL_MIX_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "proto/codec.h"

#define SQL_MIX_SELECT "SELECT 1"
#define SQL_MIX_UPDATE "UPDATE t SET k = k + 1"

/* --sql SQL_MIX_SELECT --sql SQL_MIX_UPDATE in the order 0 0 1 0 0. */
static inline void sql_mix_opts(struct codec_sql *o)
{
    o->sqls[0] = o->text = SQL_MIX_SELECT;
    o->sqls[1] = SQL_MIX_UPDATE;
    o->nsql = 2;
    memcpy(o->mix, "\0\0\1\0\0", 5);
    o->mix_len = 5;
}

/* The kind request n's reply counts under: 1 for the update, 0 for the select. */
static inline unsigned sql_mix_kind(unsigned n)
{
    return n % 5 == 2 ? 1 : 0;
}

/*
 * Encodes st's next request and checks that it is request n's statement after
 * head bytes of framing, with nul (0 or 1) NUL bytes after it: pg's query
 * string ends in one, mysql's does not.
 */
static inline void sql_mix_encode_check(const struct codec_ops *codec, void *st, unsigned n,
                                        size_t head, size_t nul)
{
    const char *want = sql_mix_kind(n) ? SQL_MIX_UPDATE : SQL_MIX_SELECT;
    size_t len = strlen(want);
    uint8_t req[128];

    assert_int_equal(codec->encode(st, req, sizeof(req)), head + len + nul);
    assert_memory_equal(req + head, want, len + nul);
}

#endif
