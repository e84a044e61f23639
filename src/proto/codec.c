/*
 * codec: a client codec by its protocol's name, through the registry.
 */
#include "proto/codec.h"

#include <stddef.h>

#include "proto/registry.h"

const struct codec_ops *codec_find(const char *name)
{
    const struct proto_entry *pe = proto_find(name);

    return pe != NULL ? pe->codec : NULL;
}

const char *codec_names(void)
{
    return proto_names();
}
