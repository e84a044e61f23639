/*
 * wire: frames, MACs and the messages of the agent's protocol (see wire.h).
 */
#include "agent/wire.h"

#include <errno.h>
#include <math.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <string.h>

void agent_dec_init(struct agent_dec *d, uint8_t *buf, size_t cap)
{
    memset(d, 0, sizeof(*d));
    d->buf = buf;
    d->cap = cap;
}

enum agent_dec_rc agent_dec_feed(struct agent_dec *d, const uint8_t *data, size_t len, size_t *used)
{
    size_t at = 0, n;

    *used = 0;
    if (d->err != 0) return AGENT_DEC_ERROR;
    if (d->hdr_have == AGENT_HDR && d->have == d->len) { /* the last call gave a message */
        d->hdr_have = 0;
        d->have = 0;
    }
    while (d->hdr_have < AGENT_HDR && at < len)
        d->hdr[d->hdr_have++] = data[at++];
    *used = at;
    if (d->hdr_have < AGENT_HDR) return AGENT_DEC_MORE;
    if (d->have == 0 && at > 0) { /* the header has just come in: judge the length at once */
        d->len =
            (size_t)d->hdr[0] << 24 | (size_t)d->hdr[1] << 16 | (size_t)d->hdr[2] << 8 | d->hdr[3];
        if (d->len == 0) d->err = -EBADMSG;
        if (d->len > d->cap) d->err = -EMSGSIZE;
        if (d->err != 0) return AGENT_DEC_ERROR;
    }
    n = len - at < d->len - d->have ? len - at : d->len - d->have;
    memcpy(d->buf + d->have, data + at, n);
    d->have += n;
    *used = at + n;
    return d->have == d->len ? AGENT_DEC_MSG : AGENT_DEC_MORE;
}

long agent_frame(const json_t *msg, size_t body_max, uint8_t *out, size_t cap)
{
    size_t n;

    if (cap < AGENT_HDR) return -EMSGSIZE;
    n = json_dumpb(msg, (char *)out + AGENT_HDR, cap - AGENT_HDR, JSON_COMPACT);
    if (n == 0) return -ENOMEM;
    if (n > cap - AGENT_HDR || n > body_max) return -EMSGSIZE;
    out[0] = (uint8_t)(n >> 24);
    out[1] = (uint8_t)(n >> 16);
    out[2] = (uint8_t)(n >> 8);
    out[3] = (uint8_t)n;
    return (long)(n + AGENT_HDR);
}

void agent_hex(const uint8_t *b, size_t n, char *out)
{
    static const char digits[] = "0123456789abcdef";

    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[b[i] >> 4];
        out[2 * i + 1] = digits[b[i] & 15];
    }
    out[2 * n] = '\0';
}

int agent_mac(const uint8_t *token, size_t token_len, const uint8_t *msg, size_t n, char *out)
{
    uint8_t md[EVP_MAX_MD_SIZE];
    unsigned md_len = 0;

    if (HMAC(EVP_sha256(), token, (int)token_len, msg, n, md, &md_len) == NULL) return -EIO;
    agent_hex(md, md_len, out);
    return 0;
}

static bool is_hex_digit(uint8_t c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

long agent_req_mac_at(const uint8_t *body, size_t len)
{
    static const char key[] = "\"mac\":\"";
    const size_t klen = sizeof(key) - 1;
    long at = -EBADMSG;

    for (size_t i = 0; i + klen + AGENT_HEX_MAX < len; i++) {
        size_t d = i + klen, k = 0;

        if (memcmp(body + i, key, klen) != 0) continue;
        while (k < AGENT_HEX_MAX && is_hex_digit(body[d + k]))
            k++;
        if (k < AGENT_HEX_MAX || body[d + k] != '"') continue;
        if (at >= 0) return -EBADMSG; /* two places: which one was signed is not certain */
        at = (long)d;
    }
    return at;
}

int agent_req_mac(const uint8_t *token, size_t token_len, const char *nonce, const uint8_t *body,
                  size_t len, char *out)
{
    uint8_t msg[AGENT_HEX_MAX + AGENT_REQ_MAX];
    size_t nlen = strnlen(nonce, AGENT_HEX_MAX + 1);
    long at = agent_req_mac_at(body, len);

    if (at < 0 || nlen > AGENT_HEX_MAX || len > AGENT_REQ_MAX) return -EBADMSG;
    memcpy(msg, nonce, nlen);
    memcpy(msg + nlen, body, len);
    memset(msg + nlen + at, '0', AGENT_HEX_MAX);
    return agent_mac(token, token_len, msg, nlen + len, out);
}

bool agent_req_mac_ok(const uint8_t *token, size_t token_len, const char *nonce,
                      const uint8_t *body, size_t len)
{
    char want[AGENT_HEX_MAX + 1];
    long at = agent_req_mac_at(body, len);

    if (at < 0 || agent_req_mac(token, token_len, nonce, body, len, want) < 0) return false;
    return CRYPTO_memcmp(want, body + at, AGENT_HEX_MAX) == 0;
}

bool agent_name_valid(const char *s)
{
    size_t n = strnlen(s, AGENT_NAME_MAX);

    if (n == 0 || n >= AGENT_NAME_MAX) return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '.' || c == '-'))
            return false;
    }
    return true;
}

/* ---- parsing ---- */

/* The keys a message of a type may hold: "type" and these. */
struct msg_keys {
    const char *type;
    const char *keys[5];
};

static bool key_allowed(const struct msg_keys *k, const char *key)
{
    if (strcmp(key, "type") == 0) return true;
    for (size_t i = 0; i < ARRAY_LEN(k->keys) && k->keys[i] != NULL; i++)
        if (strcmp(key, k->keys[i]) == 0) return true;
    return false;
}

/*
 * body as a JSON object whose "type" is one of types[0 .. n): *which is its
 * index. Every key must be one its type allows. NULL with err set otherwise.
 */
static json_t *load_typed(const uint8_t *body, size_t len, const struct msg_keys *types, size_t n,
                          size_t *which, struct hb_err *err)
{
    json_error_t jerr;
    json_t *j = json_loadb((const char *)body, len, JSON_REJECT_DUPLICATES, &jerr);
    const char *type, *key;
    json_t *v;

    if (j == NULL) {
        hb_fail(err, -EBADMSG, "not JSON: %s", jerr.text);
        return NULL;
    }
    if (!json_is_object(j)) {
        hb_fail(err, -EBADMSG, "not a JSON object");
        goto fail;
    }
    type = json_string_value(json_object_get(j, "type"));
    if (type == NULL) {
        hb_fail(err, -EBADMSG, "no \"type\" string");
        goto fail;
    }
    for (*which = 0; *which < n && strcmp(types[*which].type, type) != 0; (*which)++)
        ;
    if (*which == n) {
        hb_fail(err, -EBADMSG, "unknown type");
        goto fail;
    }
    json_object_foreach(j, key, v)
    {
        if (!key_allowed(&types[*which], key)) {
            hb_fail(err, -EBADMSG, "%s: unknown key", types[*which].type);
            goto fail;
        }
    }
    return j;
fail:
    json_decref(j);
    return NULL;
}

/* The string at key into out (cap bytes, its NUL included): 0, or -EBADMSG with err set. */
static int get_str(const json_t *j, const char *key, bool required, char *out, size_t cap,
                   struct hb_err *err)
{
    const json_t *v = json_object_get(j, key);
    size_t n;

    out[0] = '\0';
    if (v == NULL && !required) return 0;
    if (!json_is_string(v)) return hb_fail(err, -EBADMSG, "\"%s\" is not a string", key);
    n = json_string_length(v);
    if (n == 0 || n >= cap || strlen(json_string_value(v)) != n)
        return hb_fail(err, -EBADMSG, "\"%s\" is empty, too long or holds a NUL", key);
    memcpy(out, json_string_value(v), n + 1);
    return 0;
}

/* The whole number at key (0 .. 2^53, what a double keeps exactly) into *out. */
static int get_u64(const json_t *j, const char *key, uint64_t *out, struct hb_err *err)
{
    const json_t *v = json_object_get(j, key);

    if (!json_is_integer(v) || json_integer_value(v) < 0 ||
        json_integer_value(v) > (json_int_t)1 << 53)
        return hb_fail(err, -EBADMSG, "\"%s\" is not a whole number in 0..2^53", key);
    *out = (uint64_t)json_integer_value(v);
    return 0;
}

/* A hex string of exactly AGENT_HEX_MAX digits at key into out. */
static int get_hex(const json_t *j, const char *key, char *out, struct hb_err *err)
{
    if (get_str(j, key, true, out, AGENT_HEX_MAX + 1, err) < 0) return -EBADMSG;
    if (strspn(out, "0123456789abcdef") != AGENT_HEX_MAX)
        return hb_fail(err, -EBADMSG, "\"%s\" is not %d lowercase hex digits", key, AGENT_HEX_MAX);
    return 0;
}

/* An optional list of at most AGENT_ARGS_MAX strings at key. */
static int get_words(const json_t *j, const char *key, char out[][AGENT_ARG_MAX], unsigned *n,
                     struct hb_err *err)
{
    const json_t *a = json_object_get(j, key), *v;
    size_t i;

    *n = 0;
    if (a == NULL) return 0;
    if (!json_is_array(a) || json_array_size(a) > AGENT_ARGS_MAX)
        return hb_fail(err, -EBADMSG, "\"%s\" is not a list of at most %d strings", key,
                       AGENT_ARGS_MAX);
    json_array_foreach(a, i, v)
    {
        if (!json_is_string(v) || json_string_length(v) == 0 ||
            json_string_length(v) >= AGENT_ARG_MAX ||
            strlen(json_string_value(v)) != json_string_length(v))
            return hb_fail(err, -EBADMSG, "\"%s\"[%zu] is not a string of 1..%d bytes", key, i,
                           AGENT_ARG_MAX - 1);
        memcpy(out[i], json_string_value(v), json_string_length(v) + 1);
    }
    *n = (unsigned)json_array_size(a);
    return 0;
}

static const struct msg_keys req_keys[] = {
    [AGENT_BEGIN] = { "begin", { "mac", "services", "watch" } },
    [AGENT_END] = { "end", { "mac", "session" } },
    [AGENT_STATE] = { "state", { "mac" } },
};

int agent_req_parse(const uint8_t *body, size_t len, struct agent_req *req, struct hb_err *err)
{
    size_t which = 0;
    json_t *j = load_typed(body, len, req_keys, ARRAY_LEN(req_keys), &which, err);
    int rc;

    memset(req, 0, sizeof(*req));
    if (j == NULL) return -EBADMSG;
    req->type = (enum agent_req_type)which;
    rc = get_hex(j, "mac", req->mac, err);
    if (rc == 0 && req->type == AGENT_BEGIN) {
        rc = get_words(j, "services", req->services, &req->nservices, err);
        if (rc == 0) rc = get_words(j, "watch", req->watch, &req->nwatch, err);
    }
    if (rc == 0 && req->type == AGENT_END) rc = get_u64(j, "session", &req->session, err);
    json_decref(j);
    return rc;
}

json_t *agent_req_json(const struct agent_req *req)
{
    json_t *j = json_pack("{s:s, s:s}", "type", req_keys[req->type].type, "mac", req->mac);
    json_t *svc, *watch;

    if (j == NULL) return NULL;
    if (req->type == AGENT_BEGIN) {
        svc = json_array();
        watch = json_array();
        for (unsigned i = 0; i < req->nservices; i++)
            json_array_append_new(svc, json_string(req->services[i]));
        for (unsigned i = 0; i < req->nwatch; i++)
            json_array_append_new(watch, json_string(req->watch[i]));
        json_object_set_new(j, "services", svc);
        json_object_set_new(j, "watch", watch);
    }
    if (req->type == AGENT_END) {
        json_object_set_new(j, "session", json_integer((json_int_t)req->session));
    }
    return j;
}

long agent_req_frame(struct agent_req *req, const uint8_t *token, size_t token_len,
                     const char *nonce, uint8_t *out, size_t cap)
{
    json_t *j;
    long n, at;

    memset(req->mac, '0', AGENT_HEX_MAX);
    req->mac[AGENT_HEX_MAX] = '\0';
    j = agent_req_json(req);
    n = j != NULL ? agent_frame(j, AGENT_REQ_MAX, out, cap) : -ENOMEM;
    json_decref(j);
    if (n < 0) return n;
    /* A word of the request cannot hold the key's bare quotes, so the place is the key's. */
    at = agent_req_mac_at(out + AGENT_HDR, (size_t)n - AGENT_HDR);
    if (at < 0) return -EIO;
    if (agent_req_mac(token, token_len, nonce, out + AGENT_HDR, (size_t)n - AGENT_HDR, req->mac) <
        0)
        return -EIO;
    memcpy(out + AGENT_HDR + at, req->mac, AGENT_HEX_MAX);
    return n;
}

static const struct msg_keys reply_keys[] = {
    [AGENT_HELLO] = { "hello", { "proto", "nonce" } },
    [AGENT_BEGUN] = { "begun", { "session", "state" } },
    [AGENT_EVIDENCE] = { "evidence", { "evidence" } },
    [AGENT_STATE_IS] = { "state", { "state", "index", "since_s" } },
    [AGENT_ERROR] = { "error", { "code", "error" } },
};

/* The optional state name at "state": a valid name, or null / absent for none. */
static int get_state(const json_t *j, char *out, struct hb_err *err)
{
    if (json_is_null(json_object_get(j, "state"))) {
        out[0] = '\0';
        return 0;
    }
    if (get_str(j, "state", false, out, AGENT_NAME_MAX, err) < 0) return -EBADMSG;
    if (out[0] != '\0' && !agent_name_valid(out))
        return hb_fail(err, -EBADMSG, "\"state\" is not a state name");
    return 0;
}

/* The fields of a reply of type rep->type from j. */
static int reply_fields(json_t *j, struct agent_reply *rep, struct hb_err *err)
{
    json_t *v;
    uint64_t proto = 0;

    switch (rep->type) {
    case AGENT_HELLO:
        if (get_u64(j, "proto", &proto, err) < 0) return -EBADMSG;
        if (proto != AGENT_PROTO)
            return hb_fail(err, -EBADMSG, "protocol %llu, not %d", (unsigned long long)proto,
                           AGENT_PROTO);
        return get_hex(j, "nonce", rep->nonce, err);
    case AGENT_BEGUN:
        if (get_u64(j, "session", &rep->session, err) < 0) return -EBADMSG;
        return get_state(j, rep->state, err);
    case AGENT_EVIDENCE:
        v = json_object_get(j, "evidence");
        if (!json_is_object(v)) return hb_fail(err, -EBADMSG, "\"evidence\" is not an object");
        rep->evidence = json_incref(v);
        return 0;
    case AGENT_STATE_IS:
        if (get_state(j, rep->state, err) < 0) return -EBADMSG;
        v = json_object_get(j, "index");
        if (!json_is_integer(v) || json_integer_value(v) < -1 || json_integer_value(v) > 1000000)
            return hb_fail(err, -EBADMSG, "\"index\" is not a line of a schedule or -1");
        rep->index = json_integer_value(v);
        v = json_object_get(j, "since_s");
        if (!json_is_number(v) || !isfinite(json_number_value(v)) || json_number_value(v) < 0)
            return hb_fail(err, -EBADMSG, "\"since_s\" is not a time");
        rep->since_s = json_number_value(v);
        return 0;
    case AGENT_ERROR:
        if (get_str(j, "code", true, rep->code, sizeof(rep->code), err) < 0) return -EBADMSG;
        return get_str(j, "error", true, rep->error, sizeof(rep->error), err);
    }
    return -EBADMSG;
}

int agent_reply_parse(const uint8_t *body, size_t len, struct agent_reply *rep, struct hb_err *err)
{
    size_t which = 0;
    json_t *j = load_typed(body, len, reply_keys, ARRAY_LEN(reply_keys), &which, err);
    int rc;

    memset(rep, 0, sizeof(*rep));
    rep->index = -1;
    if (j == NULL) return -EBADMSG;
    rep->type = (enum agent_reply_type)which;
    rc = reply_fields(j, rep, err);
    json_decref(j);
    if (rc < 0) agent_reply_release(rep);
    return rc;
}

void agent_reply_release(struct agent_reply *rep)
{
    json_decref(rep->evidence);
    rep->evidence = NULL;
}
