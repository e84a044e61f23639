/*
 * codec: the registry of client codecs.
 */
#include "proto/codec.h"

#include <string.h>

#include "proto/echo.h"
#include "proto/fcgi.h"
#include "proto/http.h"
#include "proto/resp.h"

static const struct codec_ops *const codecs[] = { &echo_codec, &http_codec, &fcgi_codec,
                                                  &resp_codec };

const struct codec_ops *codec_find(const char *name)
{
    for (size_t i = 0; i < sizeof(codecs) / sizeof(codecs[0]); i++)
        if (strcmp(codecs[i]->name, name) == 0) return codecs[i];
    return NULL;
}

const char *codec_names(void)
{
    return "echo, http, fcgi, redis";
}
