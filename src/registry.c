/*
 * registry: the list of protocols, and what is made from their entries (see
 * registry.h): the options of `run` and their refusal, the --help texts'
 * lists of protocols.
 */
#include "registry.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* Each in protocol/NAME.c. */
extern const struct proto_entry proto_echo, proto_http, proto_fcgi, proto_redis, proto_pg,
    proto_mysql;
extern const struct proto_entry proto_memcached;

/* The protocols, in the order names and --help list them; the first is the lab's default. */
/* clang-format off */
static const struct proto_entry *const entries[] = {
    &proto_echo,
    &proto_http,
    &proto_fcgi,
    &proto_redis,
    &proto_pg,
    &proto_mysql,
    &proto_memcached,
};
/* clang-format on */

#define NENTRIES ARRAY_LEN(entries)

const struct proto_entry *proto_find(const char *name)
{
    for (size_t i = 0; i < NENTRIES; i++)
        if (strcmp(entries[i]->name, name) == 0) return entries[i];
    return NULL;
}

const struct proto_entry *proto_at(size_t i)
{
    return i < NENTRIES ? entries[i] : NULL;
}

size_t proto_count(void)
{
    return NENTRIES;
}

const struct proto_entry *proto_lab_default(void)
{
    return entries[0];
}

/* Appends s to buf (of cap bytes, holding len), cut short rather than overrun. */
static size_t put(char *buf, size_t cap, size_t len, const char *s)
{
    int n = snprintf(buf + len, cap - len, "%s", s);

    return n < 0 || (size_t)n >= cap - len ? cap - 1 : len + (size_t)n;
}

const char *proto_names(void)
{
    static char names[256];

    if (names[0] == '\0')
        for (size_t i = 0, len = 0; i < NENTRIES; i++) {
            if (i > 0) len = put(names, sizeof(names), len, ", ");
            len = put(names, sizeof(names), len, entries[i]->name);
        }
    return names;
}

/*
 * Joins items 0..n-1 (item(i, arg) each) into buf as "a", "a and b" or
 * "a, b and c".
 */
static char *join(char *buf, size_t cap, size_t n, const char *(*item)(size_t i, const void *arg),
                  const void *arg)
{
    size_t len = 0;

    buf[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        if (i > 0) len = put(buf, cap, len, i + 1 == n ? " and " : ", ");
        len = put(buf, cap, len, item(i, arg));
    }
    return buf;
}

struct picked {
    char text[NENTRIES][64];
};

static const char *picked_item(size_t i, const void *arg)
{
    return ((const struct picked *)arg)->text[i];
}

const struct proto_take *proto_takes(const struct proto_entry *pe, const char *name)
{
    for (const struct proto_take *t = pe->takes; t != NULL && t->opt != NULL; t++)
        if (strcmp(t->opt->name, name) == 0) return t;
    return NULL;
}

char *proto_list(char *buf, size_t cap, bool (*pick)(const struct proto_entry *pe, const char *arg),
                 const char *arg, const char *opt)
{
    struct picked p;
    size_t n = 0;

    for (size_t i = 0; i < NENTRIES; i++) {
        const struct proto_entry *pe = entries[i];
        const struct proto_take *t = opt != NULL ? proto_takes(pe, opt) : NULL;
        bool when = t != NULL && t->when != NULL;
        if (!pick(pe, arg)) continue;
        snprintf(p.text[n], sizeof(p.text[n]), "%s%s%s", pe->name, when ? " " : "",
                 when ? t->when : "");
        n++;
    }
    return join(buf, cap, n, picked_item, &p);
}

/* Does an entry before entries[e] take an option called name? */
static bool option_seen(const char *name, size_t e)
{
    for (size_t j = 0; j < e; j++)
        if (proto_takes(entries[j], name) != NULL) return true;
    return false;
}

/* The i-th option of the entries with a name not taken before, or NULL past the last. */
const struct proto_option *proto_option_at(size_t i)
{
    size_t k = 0;

    for (size_t e = 0; e < NENTRIES; e++)
        for (const struct proto_take *t = entries[e]->takes; t != NULL && t->opt != NULL; t++) {
            if (option_seen(t->opt->name, e) || proto_takes(entries[e], t->opt->name) != t)
                continue;
            if (k++ == i) return t->opt;
        }
    return NULL;
}

const char *proto_option_name(size_t i)
{
    const struct proto_option *o = proto_option_at(i);

    return o != NULL ? o->name : NULL;
}

const char *proto_option_help(size_t i)
{
    /* built once, before main's threads (run's option table is made in a constructor) */
    static char help[64][1024];
    const struct proto_option *first = proto_option_at(i);
    size_t len = 0;
    const struct proto_option *seen[NENTRIES];
    size_t nseen = 0;

    if (first == NULL || i >= ARRAY_LEN(help)) return first != NULL ? first->help : NULL;
    if (help[i][0] != '\0') return help[i];
    for (size_t e = 0; e < NENTRIES; e++) {
        const struct proto_take *t = proto_takes(entries[e], first->name);
        bool dup = false;
        if (t == NULL) continue;
        for (size_t k = 0; k < nseen; k++)
            dup |= seen[k] == t->opt;
        if (dup) continue;
        seen[nseen++] = t->opt;
        if (len > 0) len = put(help[i], sizeof(help[i]), len, "\n");
        len = put(help[i], sizeof(help[i]), len, t->opt->help);
    }
    return help[i];
}

size_t proto_option_values(size_t i, const char **out, size_t cap)
{
    const char *name = proto_option_name(i);
    size_t n = 0;

    for (size_t e = 0; name != NULL && e < NENTRIES; e++) {
        const struct proto_take *t = proto_takes(entries[e], name);
        if (t == NULL || t->opt->values == NULL) continue;
        for (const char *const *w = t->opt->values; *w != NULL; w++) {
            bool dup = false;
            for (size_t k = 0; k < n; k++)
                dup |= strcmp(out[k], *w) == 0;
            if (!dup && n < cap) out[n++] = *w;
        }
    }
    return n;
}

bool proto_option_secret(const char *name, size_t len)
{
    for (size_t e = 0; e < NENTRIES; e++)
        for (const struct proto_take *t = entries[e]->takes; t != NULL && t->opt != NULL; t++)
            if (t->opt->secret && strlen(t->opt->name) == len &&
                memcmp(t->opt->name, name, len) == 0)
                return true;
    return false;
}

static bool takes_name(const struct proto_entry *pe, const char *name)
{
    return proto_takes(pe, name) != NULL;
}

/* Do exactly the same entries take options a and b? */
static bool same_takers(const char *a, const char *b)
{
    for (size_t e = 0; e < NENTRIES; e++)
        if (takes_name(entries[e], a) != takes_name(entries[e], b)) return false;
    return true;
}

/* The options named with `name`: those the same protocols take, in proto_option_name's order. */
struct opt_class {
    const char *names[64];
    size_t n;
};

static const char *class_item(size_t i, const void *arg)
{
    return ((const struct opt_class *)arg)->names[i];
}

int proto_refuse(const struct proto_entry *pe, const char *name, struct hb_err *err)
{
    struct opt_class class = { .n = 0 };
    const char *n;
    char opts[160], names[160];

    for (size_t i = 0; (n = proto_option_name(i)) != NULL && class.n < ARRAY_LEN(class.names); i++)
        if (same_takers(n, name)) class.names[class.n++] = n;
    if (class.n == 0) class.names[class.n++] = name;
    join(opts, sizeof(opts), class.n, class_item, &class);
    proto_list(names, sizeof(names), takes_name, name, name);
    return hb_fail(err, -EINVAL, "run %s: %s %s for %s", pe->name, opts, class.n > 1 ? "are" : "is",
                   names);
}

int proto_parse(const struct proto_entry *pe, const struct proto_given *given, size_t n,
                const struct proto_args *a, void *opts, struct hb_err *err)
{
    union codec_room scratch;

    if (pe != NULL) memset(opts, 0, pe->opts_size);
    for (size_t i = 0; i < n; i++) {
        const char *name = proto_option_name(given[i].opt);
        const struct proto_take *t = NULL;
        unsigned char *dst = opts;
        int rc;

        if (name == NULL) return hb_fail(err, -EINVAL, "no such protocol option");
        if (pe != NULL) t = proto_takes(pe, name);
        for (size_t e = 0; t == NULL && e < NENTRIES; e++) {
            t = proto_takes(entries[e], name);
            dst = scratch.bytes;
            memset(&scratch, 0, sizeof(scratch));
        }
        if (t == NULL) return hb_fail(err, -EINVAL, "%s: no protocol takes it", name);
        rc = t->opt->parse(given[i].val, dst + t->at, a, err);
        if (rc < 0) return rc;
    }
    return 0;
}

int proto_check_run(const struct proto_entry *pe, const struct proto_given *given, size_t n,
                    struct proto_req *req, struct hb_err *err)
{
    long refuse = -1;

    for (size_t i = 0; i < n; i++) {
        const char *name = proto_option_name(given[i].opt);
        if (name != NULL && !takes_name(pe, name) && (refuse < 0 || given[i].opt < refuse))
            refuse = (long)given[i].opt;
    }
    if (refuse >= 0) return proto_refuse(pe, proto_option_name((size_t)refuse), err);
    return pe->check != NULL ? pe->check(pe, req, err) : 0;
}

/* ---- the --help texts ---- */

/* Stands for a space inside a unit never broken across lines ("pg, mysql:"). */
#define NBSP '\x01'

/* Text filled word by word to WIDTH columns. */
#define WIDTH 90

struct fill {
    char *buf;
    size_t cap, len;
    unsigned col, indent;
    bool fresh; /* nothing on the line yet */
};

/* Appends one word (its NBSPs as spaces), on a new line when it does not fit. */
static void fill_word(struct fill *f, const char *w, size_t wlen)
{
    char word[256];

    if (wlen == 0) return;
    if (wlen >= sizeof(word)) wlen = sizeof(word) - 1;
    for (size_t i = 0; i < wlen; i++)
        word[i] = (char)(w[i] == NBSP ? ' ' : w[i]);
    word[wlen] = '\0';
    if (!f->fresh && f->col + 1 + wlen > WIDTH) {
        f->len = put(f->buf, f->cap, f->len, "\n");
        for (unsigned i = 0; i < f->indent; i++)
            f->len = put(f->buf, f->cap, f->len, " ");
        f->col = f->indent;
        f->fresh = true;
    }
    if (!f->fresh) {
        f->len = put(f->buf, f->cap, f->len, " ");
        f->col++;
    }
    f->len = put(f->buf, f->cap, f->len, word);
    f->col += (unsigned)wlen;
    f->fresh = false;
}

/* Appends s to the last word, as it is. */
static void fill_tail(struct fill *f, const char *s)
{
    f->len = put(f->buf, f->cap, f->len, s);
    f->col += (unsigned)strlen(s);
}

/* Appends the words of s. */
static void fill_text(struct fill *f, const char *s)
{
    while (*s != '\0') {
        size_t n = strcspn(s, " ");
        fill_word(f, s, n);
        s += n;
        s += strspn(s, " ");
    }
}

/* Whether a and b are both NULL or equal. */
static bool same_words(const char *a, const char *b)
{
    return a == b || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

/* Appends to the line lst the names of the entries from i on whose `words` are w, joined by sep. */
static size_t group(const struct proto_entry *const *lst, size_t n, size_t i, char *buf, size_t cap,
                    const char *sep, const char *(*words)(const struct proto_entry *))
{
    size_t j = i, len = 0;

    buf[0] = '\0';
    for (; j < n && same_words(words(lst[j]), words(lst[i])); j++) {
        if (j > i) len = put(buf, cap, len, sep);
        len = put(buf, cap, len, lst[j]->name);
    }
    return j;
}

static const char *size_words(const struct proto_entry *pe)
{
    return pe->size_words;
}

static const char *lab_words(const struct proto_entry *pe)
{
    return pe->lab_words;
}

/* Replaces the spaces of s with NBSP: a unit never broken. */
static void unbreakable(char *s)
{
    for (; *s != '\0'; s++)
        if (*s == ' ') *s = NBSP;
}

/* The entries that pick takes, into lst; how many. */
static size_t pick(const struct proto_entry **lst, bool (*want)(const struct proto_entry *))
{
    size_t n = 0;

    for (size_t i = 0; i < NENTRIES; i++)
        if (want(entries[i])) lst[n++] = entries[i];
    return n;
}

static bool any_entry(const struct proto_entry *pe)
{
    (void)pe;
    return true;
}

static bool has_server(const struct proto_entry *pe)
{
    return pe->server != NULL;
}

static bool has_reply_body(const struct proto_entry *pe)
{
    return pe->reply_body;
}

static bool has_value_size(const struct proto_entry *pe)
{
    return pe->value_size;
}

/* "echo: the message; http, fcgi: the POST body; ..." */
static void help_run_size(struct fill *f)
{
    const struct proto_entry *lst[NENTRIES];
    size_t n = pick(lst, any_entry);
    char names[256], word[300];

    for (size_t i = 0, j; i < n; i = j) {
        j = group(lst, n, i, names, sizeof(names), ", ", size_words);
        snprintf(word, sizeof(word), "%s:", names);
        unbreakable(word);
        fill_word(f, word, strlen(word));
        fill_text(f, lst[i]->size_words != NULL ? lst[i]->size_words : "none");
        if (j < n) fill_tail(f, ";");
    }
}

/* "echo (default), http, fcgi or redis: ... sizes are the echo message, the http and fcgi ..." */
static void help_lab(struct fill *f)
{
    const struct proto_entry *lst[NENTRIES];
    size_t n = pick(lst, has_server);
    char names[256], word[300];

    for (size_t i = 0; i < n; i++) {
        snprintf(word, sizeof(word), "%s%s%s", lst[i]->name, i == 0 ? " (default)" : "",
                 i + 1 == n   ? ":"
                 : i + 2 == n ? ""
                              : ",");
        fill_text(f, word);
        if (i + 2 == n) fill_text(f, "or");
    }
    fill_text(f, "the built-in server and the client speak it; sizes are");
    for (size_t i = 0, j; i < n; i = j) {
        j = group(lst, n, i, names, sizeof(names), " and ", lab_words);
        snprintf(word, sizeof(word), "the %s %s%s", names, lst[i]->lab_words, j < n ? "," : "");
        fill_text(f, word);
    }
}

/* "echo (every byte back), http (200 with a short body), ..." */
static void help_serve(struct fill *f)
{
    const struct proto_entry *lst[NENTRIES];
    size_t n = pick(lst, has_server);
    char word[512];

    for (size_t i = 0; i < n; i++) {
        snprintf(word, sizeof(word), "%s (%s)%s", lst[i]->name, lst[i]->serve_words,
                 i + 1 < n ? "," : "");
        fill_text(f, word);
    }
}

/* The names of the entries want takes, joined by sep. */
static void help_names(struct fill *f, bool (*want)(const struct proto_entry *), const char *sep)
{
    const struct proto_entry *lst[NENTRIES];
    size_t n = pick(lst, want);

    for (size_t i = 0; i < n; i++) {
        if (i > 0) f->len = put(f->buf, f->cap, f->len, sep);
        f->len = put(f->buf, f->cap, f->len, lst[i]->name);
    }
}

static bool lab_other(const struct proto_entry *pe)
{
    return pe->server != NULL && pe != entries[0];
}

char *proto_help(enum proto_help what, char *buf, size_t cap, unsigned col, unsigned indent)
{
    /* a text that begins past its lines' indent follows other words on its first line */
    struct fill f = {
        .buf = buf, .cap = cap, .col = col, .indent = indent, .fresh = col <= indent
    };

    buf[0] = '\0';
    switch (what) {
    case PROTO_HELP_NAMES:
        help_names(&f, any_entry, " | ");
        break;
    case PROTO_HELP_LAB_OTHERS:
        help_names(&f, lab_other, "|");
        break;
    case PROTO_HELP_REPLY_BODY:
        help_names(&f, has_reply_body, ", ");
        break;
    case PROTO_HELP_VALUE_SIZE:
        help_names(&f, has_value_size, ", ");
        break;
    case PROTO_HELP_SERVE:
        help_serve(&f);
        break;
    case PROTO_HELP_RUN_SIZE:
        help_run_size(&f);
        break;
    case PROTO_HELP_LAB:
        help_lab(&f);
        break;
    }
    return buf;
}

const struct codec_ops *codec_find(const char *name)
{
    const struct proto_entry *pe = proto_find(name);

    return pe != NULL ? pe->codec : NULL;
}

const char *codec_names(void)
{
    return proto_names();
}
