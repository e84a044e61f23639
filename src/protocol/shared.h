/*
 * shared: the options several protocols take under one name and one help
 * (--expect-body; http's and fcgi's --method, --path, --host; the
 * databases' --sql, --user, --database; --password and --password-file),
 * and the parsing and checks their entries share. Each option's hook writes
 * the field its proto_take says: a `const char *`, or for --sql a struct
 * codec_sql.
 */
#ifndef HOPBENCH_PROTOCOL_SHARED_H
#define HOPBENCH_PROTOCOL_SHARED_H

#include "registry.h"

/* Continuation lines of an option's help begin at column 24. */
#define HELP_INDENT "\n                        "

/* The longest password (--password, --password-file, HOPBENCH_PASSWORD). */
#define POPT_MAX_PASSWORD 256u

extern const struct proto_option popt_expect_body, popt_password, popt_password_file, popt_method,
    popt_path, popt_host, popt_sql, popt_user, popt_database;

/*
 * A mix's period into mix (total long): `weights[i]` of ids[i] in each, each
 * next one the id furthest behind its share (a smooth weighted round robin),
 * the first given on a tie, so two of weight 1 alternate from the first and
 * 1:9 spreads the one among the nine. n is at most CODEC_KINDS.
 */
void popt_mix_build(uint8_t *mix, unsigned *mix_len, const uint8_t *ids, const unsigned *weights,
                    size_t n, unsigned total);

/*
 * --command C for a protocol whose commands are words[0..n-1] (their index
 * is the command's number): one word; or several in turn, "set,get", each
 * perhaps with its share, "set:1,get:9" (the shares' sum at most
 * CODEC_MIX_MAX). Into *m; 0, or -EINVAL with err set.
 */
int popt_parse_mix(const char *val, const char *const *words, size_t n, struct codec_mix *m,
                   struct hb_err *err);

/*
 * "; did you mean 'get'?": the nearest of words[0..n-1] to the len bytes at
 * val (one word of a list), or "" (suggest.h). Returns buf.
 */
const char *popt_near_word(const char *val, size_t len, const char *const *words, size_t n,
                           char *buf, size_t cap);

/* --keys N: 1 to 1e9 keys, into the uint64_t at `at`. */
int popt_parse_keys(const char *val, void *at, const struct proto_args *a, struct hb_err *err);

/*
 * prepare's part for a protocol with keys: when the commands m send `get`,
 * every key is to be set first: *pre becomes `set` alone and the count of
 * keys (0 = 1) is returned; 0 (nothing before the run) otherwise.
 */
uint64_t popt_fill_first(const struct codec_mix *m, unsigned get, unsigned set, uint64_t keys,
                         struct codec_mix *pre);

/* A password of at most POPT_MAX_PASSWORD bytes, for the option (or variable) called opt. */
int popt_password_ok(const char *opt, const char *pw, struct hb_err *err);

/*
 * The databases' check of what they share: a query has no payload of a
 * chosen size (--size refused, the size 0), and a password not given comes
 * from HOPBENCH_PASSWORD into *password.
 */
int popt_check_db(const struct proto_entry *pe, struct proto_req *req, const char **password,
                  struct hb_err *err);

/*
 * http and fcgi (method is their --method): a GET carries no payload (--size
 * refused, the size 0), and a connect-mode request asks for a close.
 */
int popt_check_get_post(const struct proto_entry *pe, struct proto_req *req, const char *method,
                        struct hb_err *err);

/* A flag's hook (the option takes no value): sets the bool at `at`. */
int popt_flag(const char *val, void *at, const struct proto_args *a, struct hb_err *err);

#endif
