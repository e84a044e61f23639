/*
 * suggest: the words nearest to a mistyped one (see suggest.h).
 */
#include "suggest.h"

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

void suggest_init(struct suggest *s, const char *word)
{
    memset(s, 0, sizeof(*s));
    s->word = word;
    s->score = UINT_MAX;
}

static unsigned min3(unsigned a, unsigned b, unsigned c)
{
    unsigned m = a < b ? a : b;

    return m < c ? m : c;
}

unsigned suggest_distance(const char *a, const char *b)
{
    /* three rows of the table: i - 2, i - 1 and i */
    unsigned rows[3][SUGGEST_WORD_MAX + 1];
    size_t la = strlen(a), lb = strlen(b);

    if (la > SUGGEST_WORD_MAX || lb > SUGGEST_WORD_MAX) return UINT_MAX / 2;
    for (size_t j = 0; j <= lb; j++)
        rows[0][j] = (unsigned)j;
    for (size_t i = 1; i <= la; i++) {
        unsigned *cur = rows[i % 3], *up = rows[(i - 1) % 3], *up2 = rows[(i + 1) % 3];

        cur[0] = (unsigned)i;
        for (size_t j = 1; j <= lb; j++) {
            int ca = tolower((unsigned char)a[i - 1]), cb = tolower((unsigned char)b[j - 1]);
            unsigned cost = ca != cb;

            cur[j] = min3(up[j] + 1, cur[j - 1] + 1, up[j - 1] + cost);
            if (i > 1 && j > 1 && ca == tolower((unsigned char)b[j - 2]) &&
                tolower((unsigned char)a[i - 2]) == cb && up2[j - 2] + 1 < cur[j])
                cur[j] = up2[j - 2] + 1; /* two neighbours swapped */
        }
    }
    return rows[la % 3][lb];
}

/* How near candidate is to word: 0 when it begins with word, else 1 + edits; UINT_MAX: not. */
static unsigned nearness(const char *word, const char *candidate)
{
    size_t len = strlen(word);
    unsigned d, most = len / 3 > 1 ? (unsigned)(len / 3) : 1;

    if (len == 0) return UINT_MAX;
    if (strncasecmp(candidate, word, len) == 0 || (len >= 3 && strcasestr(candidate, word) != NULL))
        return 0;
    d = suggest_distance(word, candidate);
    return d <= most ? d + 1 : UINT_MAX;
}

void suggest_add(struct suggest *s, const char *candidate)
{
    unsigned score = nearness(s->word, candidate);

    if (score == UINT_MAX || score > s->score) return;
    for (unsigned i = 0; i < s->n; i++)
        if (strcmp(s->best[i], candidate) == 0) return;
    if (score < s->score) {
        s->score = score;
        s->n = 0;
    }
    if (s->n < SUGGEST_MAX) s->best[s->n++] = candidate;
}

const char *suggest_text(const struct suggest *s, bool dashes, char *buf, size_t cap)
{
    const char *q = dashes ? "" : "'", *lead = dashes ? "--" : "";
    size_t len;

    buf[0] = '\0';
    if (s->n == 0 || cap < 2) return buf;
    snprintf(buf, cap, "; did you mean %s", s->n > 1 ? "one of " : "");
    for (unsigned i = 0; i < s->n; i++) {
        len = strlen(buf);
        snprintf(buf + len, cap - len, "%s%s%s%s%s", i > 0 ? ", " : "", q, lead, s->best[i], q);
    }
    len = strlen(buf);
    snprintf(buf + len, cap - len, "?");
    return buf;
}
