/*
 * schema: the evidence's shared spelling and the document head (see schema.h).
 */
#include "evidence/schema.h"

#include <errno.h>
#include <string.h>

const struct ev_latency_figure ev_latency_order[EV_LATENCY_FIGURES] = {
    { EV_MIN, 0 },  { EV_P50, 50 },    { EV_P90, 90 },      { "p95", 95 },
    { EV_P99, 99 }, { EV_P999, 99.9 }, { EV_P9999, 99.99 }, { EV_MAX, 0 },
};

int evidence_get_u64(const json_t *j, const char *key, uint64_t *out)
{
    const json_t *v = json_object_get(j, key);

    if (!json_is_integer(v) || json_integer_value(v) < 0) return -EINVAL;
    *out = (uint64_t)json_integer_value(v);
    return 0;
}

const char *evidence_label_arm(const char *label, size_t *name_len)
{
    static const char *const arms[] = { "tcp", "unix" };
    size_t n = label != NULL ? strlen(label) : 0;

    for (size_t i = 0; i < sizeof(arms) / sizeof(arms[0]); i++) {
        size_t k = strlen(arms[i]) + 1; /* with its dot */
        if (n > k && label[n - k] == '.' && strcmp(label + n - k + 1, arms[i]) == 0) {
            if (name_len != NULL) *name_len = n - k;
            return arms[i];
        }
    }
    return NULL;
}

const char *evidence_hop_transport(const json_t *run)
{
    const char *arm = evidence_label_arm(json_string_value(json_object_get(run, EV_LABEL)), NULL);

    return arm != NULL ? arm : json_string_value(json_object_get(run, EV_TRANSPORT));
}

json_t *evidence_unavailable_json(const char *why)
{
    return json_pack("{s:s}", EV_UNAVAILABLE, why);
}

json_t *evidence_count_json(bool ok, uint64_t v, const char *why)
{
    return ok ? json_integer((json_int_t)v) : evidence_unavailable_json(why);
}

json_t *evidence_gauge_json(json_t *start, json_t *peak, json_t *end)
{
    return json_pack("{s:o, s:o, s:o}", EV_GAUGE_START, start, EV_GAUGE_PEAK, peak, EV_GAUGE_END,
                     end);
}

const char *evidence_doc_pin(const json_t *doc)
{
    return json_string_value(json_object_get(json_object_get(doc, EV_PLACEMENT), EV_PLACE_PIN));
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
