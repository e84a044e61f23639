/*
 * suggest: "did you mean" for a word the user mistyped (an option, a
 * protocol, a stack, a command, an option's value). The caller offers the
 * words that would have been taken, one at a time, from the same table its
 * parser reads; suggest keeps those nearest to the word typed:
 *
 *   - a word that begins with it ("nginx" -> nginx-fpm, "--server" ->
 *     --server-pid, --server-tree...), that holds it when it has 3 bytes or
 *     more ("fpm" -> nginx-fpm, apache-fpm...), or that it equals but for case;
 *   - else those at the fewest edits (a byte inserted, removed or replaced,
 *     or two neighbours swapped: "ehco" -> echo, "--duraton" -> --duration),
 *     as long as that is at most a third of its length (at least 1), so that
 *     an unrelated word suggests nothing.
 *
 * Case is ignored. At most SUGGEST_MAX words are kept, in the order offered.
 * Nothing is allocated; the words offered must outlive the struct.
 */
#ifndef HOPBENCH_SUGGEST_H
#define HOPBENCH_SUGGEST_H

#include <stdbool.h>
#include <stddef.h>

#define SUGGEST_MAX 4

/* Longest word compared (longer ones suggest nothing). */
#define SUGGEST_WORD_MAX 64

struct suggest {
    const char *word;
    const char *best[SUGGEST_MAX];
    unsigned n;     /* words kept */
    unsigned score; /* theirs: 0 a prefix, else 1 + edits; UINT_MAX while none is near */
};

void suggest_init(struct suggest *s, const char *word);

/* Offers candidate; kept if it is at least as near as those kept so far. */
void suggest_add(struct suggest *s, const char *candidate);

/*
 * "; did you mean 'run'?", "; did you mean one of 'a', 'b'?" into buf (for
 * the end of a message), or "" when nothing is near; with `dashes` each word
 * is written as an option, "--duration", unquoted. Returns buf.
 */
const char *suggest_text(const struct suggest *s, bool dashes, char *buf, size_t cap);

/* The edits between a and b, case ignored (optimal string alignment distance). */
unsigned suggest_distance(const char *a, const char *b);

#endif
