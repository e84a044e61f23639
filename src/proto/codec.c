/*
 * codec: what the codecs share beyond their interface (codec.h).
 */
#include "proto/codec.h"

const char *const codec_sql_kinds[CODEC_SQL_MAX + 1] = { "sql1", "sql2", "sql3", "sql4", NULL };
