/*
 * schema: the evidence's shared spelling and the document head (see schema.h).
 */
#include "evidence/schema.h"

#include <errno.h>

const struct ev_latency_figure ev_latency_order[EV_LATENCY_FIGURES] = {
    { EV_MIN, 0 },  { EV_P50, 50 },    { "p90", 90 },      { "p95", 95 },
    { EV_P99, 99 }, { EV_P999, 99.9 }, { "p9999", 99.99 }, { EV_MAX, 0 },
};

int evidence_get_u64(const json_t *j, const char *key, uint64_t *out)
{
    const json_t *v = json_object_get(j, key);

    if (!json_is_integer(v) || json_integer_value(v) < 0) return -EINVAL;
    *out = (uint64_t)json_integer_value(v);
    return 0;
}

json_t *evidence_head_json(const struct evidence_head *h)
{
    json_t *doc = NULL;

    if (h->argv == NULL || h->machine == NULL || h->placement == NULL || h->server == NULL)
        goto out;
    doc = json_pack("{s:s, s:{s:s, s:s}, s:s, s:O, s:I}", EV_SCHEMA, EVIDENCE_SCHEMA, EV_TOOL,
                    EV_NAME, "hopbench", EV_VERSION, HOPBENCH_VERSION, EV_COMMAND, h->command,
                    EV_ARGV, h->argv, EV_STARTED_UNIX_S, (json_int_t)h->started_unix_s);
    if (doc == NULL) goto out;
    if ((h->merged_from != NULL && json_object_set(doc, EV_MERGED_FROM, h->merged_from) != 0) ||
        json_object_set(doc, EV_MACHINE, h->machine) != 0 ||
        json_object_set(doc, EV_PLACEMENT, h->placement) != 0 ||
        json_object_set(doc, EV_SERVER, h->server) != 0) {
        json_decref(doc);
        doc = NULL;
    }
out:
    json_decref(h->argv);
    json_decref(h->merged_from);
    json_decref(h->machine);
    json_decref(h->placement);
    json_decref(h->server);
    return doc;
}

int evidence_head_verdict(json_t *doc, bool interrupted, bool valid)
{
    if (json_object_set_new(doc, EV_INTERRUPTED, json_boolean(interrupted)) != 0 ||
        json_object_set_new(doc, EV_VALID, json_boolean(valid)) != 0)
        return -ENOMEM;
    return 0;
}
