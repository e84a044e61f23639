/*
 * hdr: HdrHistogram's percentile distribution and V2 log of the evidence's
 * histograms (see hdr.h).
 */
#include "report/hdr.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <zlib.h>

#include "evidence.h"
#include "evidence/counts_code.h"
#include "evidence/hist_json.h"
#include "evidence/schema.h"
#include "outfile.h"
#include "report/report.h"

#define HDR_TICKS_PER_HALF 5          /* outputPercentileDistribution's default */
#define HDR_V2_COOKIE      0x1c849313 /* V2 encoding, word size nibble 1: LEB128 */
#define HDR_V2_COMPRESSED  0x1c849314 /* its zlib-deflated form */
#define HDR_V2_HEADER      40
#define HDR_LEB128_MAX     9   /* a ZigZag LEB128 long takes up to 9 bytes */
#define HDR_LOG_MAX_RATIO  1e6 /* HistogramLogWriter's Interval_Max unit: ms */
#define HDR_NAME_CAP       160

/* digits[at], or '0' outside the nd digits. */
static char digit_at(const char *digits, int nd, int at)
{
    if (at < 0 || at >= nd) return '0';
    return digits[at];
}

/*
 * v with `decimals` digits after the point in a field of width, as Java's
 * Formatter prints %W.Df: from the shortest decimal form that reads back as
 * v, rounded half up (C's printf rounds the binary value, which differs where
 * that form ends in a 5 exactly at the cut).
 */
static void put_fixed(FILE *f, int width, int decimals, double v)
{
    char e[40], digits[48], out[96];
    int nd = 0, point, keep, len = 0;
    bool neg = v < 0;

    if (!isfinite(v)) {
        fprintf(f, "%*s", width, isnan(v) ? "NaN" : neg ? "-Infinity" : "Infinity");
        return;
    }
    if (fabs(v) >= 1e30 || decimals > 20) { /* beyond out's room (a tiny --hgrm-ratio): printf's */
        fprintf(f, "%*.*f", width, decimals, v);
        return;
    }
    for (int prec = 1; prec <= 17; prec++) { /* the shortest %e that reads back as v */
        snprintf(e, sizeof(e), "%.*e", prec - 1, fabs(v));
        if (strtod(e, NULL) == fabs(v)) break;
    }
    for (const char *p = e; *p != 'e'; p++)
        if (*p >= '0' && *p <= '9') digits[nd++] = *p;
    point = atoi(strchr(e, 'e') + 1) + 1; /* digits before the decimal point */
    keep = point + decimals;              /* digits kept */
    if (keep < 0) {
        nd = 0; /* the first digit dropped is a leading zero: 0 */
    } else if (keep < nd) {
        bool up = digits[keep] >= '5';
        nd = keep;
        for (int i = nd - 1; up && i >= 0; i--) {
            up = digits[i] == '9';
            if (up)
                digits[i] = '0';
            else
                digits[i]++;
        }
        if (up) { /* 9.99 -> 10.0: one more digit before the point */
            memmove(digits + 1, digits, (size_t)nd);
            digits[0] = '1';
            nd++;
            point++;
        }
    }
    if (nd == 0 || (nd == 1 && digits[0] == '0' && point <= 0)) neg = false; /* no "-0.000" */
    if (neg) out[len++] = '-';
    for (int i = 0; i < (point > 0 ? point : 1); i++) /* the integer part */
        out[len++] = digit_at(digits, nd, point > 0 ? i : -1);
    if (decimals > 0) out[len++] = '.';
    for (int i = 0; i < decimals; i++) {
        int at = point + i; /* index of the i-th fraction digit in digits */
        out[len++] = digit_at(digits, nd, at);
    }
    out[len] = '\0';
    fprintf(f, "%*s", width, out);
}

/* HdrHistogram's medianEquivalentValue of counter i's values. */
static double median_equivalent(size_t i)
{
    uint64_t lo = hist_value_at_index(i), half = (hist_highest_equivalent(lo) - lo + 1) / 2;

    return (double)(lo + half);
}

/* The standard deviation as HdrHistogram's getStdDeviation: over the counters' midpoints. */
static double std_deviation(const struct hist *h, double mean)
{
    double sum = 0.0;

    if (h->total == 0) return 0.0;
    for (size_t i = 0; i < HIST_COUNTS; i++) {
        double d;
        if (h->counts[i] == 0) continue;
        d = median_equivalent(i) - mean;
        sum += d * d * (double)h->counts[i];
    }
    return sqrt(sum / (double)h->total);
}

/* One line of the distribution; the last (100 %) has no 1/(1-Percentile). */
static void put_step(FILE *f, uint64_t value, double ratio, double level, uint64_t seen, bool last)
{
    put_fixed(f, 12, 3, (double)value / ratio);
    fputc(' ', f);
    put_fixed(f, 2, 12, level / 100.0);
    fprintf(f, " %10llu", (unsigned long long)seen);
    if (!last) {
        fputc(' ', f);
        put_fixed(f, 14, 2, 1.0 / (1.0 - level / 100.0));
    }
    fputc('\n', f);
}

/*
 * The next percentile level after level, as HdrHistogram's PercentileIterator
 * steps: HDR_TICKS_PER_HALF ticks in each half of the distance left to 100 %.
 */
static double next_level(double level)
{
    long long half = (long long)(log(100.0 / (100.0 - level)) / log(2.0));
    long long ticks = HDR_TICKS_PER_HALF * (long long)pow(2.0, (double)(half + 1));

    return level + 100.0 / (double)ticks;
}

void hdr_percentiles(FILE *f, const struct hist *h, double ratio)
{
    uint64_t seen = 0, total = h->total;
    double level = 0.0, mean = hist_mean(h);
    size_t i = 0;
    bool fresh = true;

    fprintf(f, "%12s %14s %10s %14s\n\n", "Value", "Percentile", "TotalCount", "1/(1-Percentile)");
    /* each step: the first counter (holding a value) where the running count reaches the level */
    while (seen < total && i < HIST_COUNTS) {
        if (fresh) seen += h->counts[i];
        fresh = false;
        if (h->counts[i] == 0 || 100.0 * (double)seen / (double)total < level) {
            i++;
            fresh = true;
            continue;
        }
        put_step(f, hist_highest_equivalent(hist_value_at_index(i)), ratio, level, seen, false);
        level = next_level(level);
    }
    if (total > 0) /* and one more, to 100 %, at the last counter */
        put_step(f, hist_highest_equivalent(hist_value_at_index(i < HIST_COUNTS ? i : 0)), ratio,
                 100.0, seen, true);
    fputs("#[Mean    = ", f);
    put_fixed(f, 12, 3, mean / ratio);
    fputs(", StdDeviation   = ", f);
    put_fixed(f, 12, 3, std_deviation(h, mean) / ratio);
    fputs("]\n#[Max     = ", f);
    put_fixed(f, 12, 3, (double)(total > 0 ? hist_highest_equivalent(h->max) : 0) / ratio);
    fprintf(f, ", Total count    = %12llu]\n", (unsigned long long)total);
    fprintf(f, "#[Buckets = %12d, SubBuckets     = %12d]\n", HDR_BUCKETS, HDR_SUB_BUCKETS);
}

static size_t put_be(unsigned char *p, uint64_t v, unsigned bytes)
{
    for (unsigned i = 0; i < bytes; i++)
        p[i] = (unsigned char)(v >> (8 * (bytes - 1 - i)));
    return bytes;
}

/* v as a ZigZag LEB128-64b9B long: 7 bits a byte, the ninth byte 8. */
static size_t put_zigzag(unsigned char *p, int64_t v)
{
    uint64_t z = ((uint64_t)v << 1) ^ (v < 0 ? UINT64_MAX : 0);
    size_t n = 0;

    while (n < HDR_LEB128_MAX - 1 && (z >> 7) != 0) {
        p[n++] = (unsigned char)((z & 0x7f) | 0x80);
        z >>= 7;
    }
    p[n++] = (unsigned char)z;
    return n;
}

/* h's (uncompressed) V2 encoding into buf (room for hdr_v2_room); its length. */
static size_t v2_encode(const struct hist *h, unsigned char *buf)
{
    size_t limit = hist_index(h->total > 0 ? h->max : 0) + 1, n = HDR_V2_HEADER;
    double one = 1.0;
    uint64_t one_bits;

    for (size_t i = 0; i < limit;) {
        uint64_t c = h->counts[i++];
        int64_t zeros = 1;
        if (c == 0)
            while (i < limit && h->counts[i] == 0) {
                zeros++;
                i++;
            }
        /* a count fits: a histogram's total is at most INT64_MAX (hist_coded_add) */
        n += put_zigzag(buf + n, c == 0 && zeros > 1 ? -zeros : (int64_t)c);
    }
    memcpy(&one_bits, &one, sizeof(one_bits));
    put_be(buf, HDR_V2_COOKIE, 4);
    put_be(buf + 4, n - HDR_V2_HEADER, 4);
    put_be(buf + 8, 0, 4); /* normalizingIndexOffset */
    put_be(buf + 12, 3, 4);
    put_be(buf + 16, 1, 8);
    put_be(buf + 24, HIST_MAX_NS, 8);
    put_be(buf + 32, one_bits, 8); /* integerToDoubleValueConversionRatio */
    return n;
}

char *hdr_v2_base64(const struct hist *h)
{
    size_t room = HDR_V2_HEADER + HIST_COUNTS * HDR_LEB128_MAX, len;
    unsigned char *raw = malloc(room), *out = NULL;
    uLongf zlen;
    char *text = NULL;

    if (raw == NULL) return NULL;
    len = v2_encode(h, raw);
    zlen = compressBound((uLong)len);
    out = malloc(8 + zlen);
    if (out != NULL && compress2(out + 8, &zlen, raw, (uLong)len, Z_DEFAULT_COMPRESSION) == Z_OK) {
        put_be(out, HDR_V2_COMPRESSED, 4);
        put_be(out + 4, zlen, 4);
        text = base64_text(out, 8 + zlen);
    }
    free(raw);
    free(out);
    return text;
}

/* ---- the evidence's histograms ---------------------------------------------------- */

/* One histogram of a run, as the exports name and time it. */
struct hdr_item {
    char name[HDR_NAME_CAP];  /* "run3-set-pipeline-1.tcp-rep0-latency" */
    double start_s, length_s; /* the run's measured window, Unix seconds */
    const struct hist *h;
};

typedef int (*hdr_visit)(const struct hdr_item *it, void *ctx, struct hb_err *err);

/*
 * The item's name: [fF-]runI-(LABEL|cCELL-TRANSPORT)-repR-KIND, what a file
 * name and a log tag may hold ([A-Za-z0-9._-], the rest as '_').
 */
static void item_name(struct hdr_item *it, size_t file, size_t nfiles, size_t i, const json_t *run,
                      const char *kind)
{
    const char *label = json_string_value(json_object_get(run, EV_LABEL));
    const char *transport = json_string_value(json_object_get(run, "transport"));
    char who[96];
    int n = 0;

    if (label != NULL)
        snprintf(who, sizeof(who), "%s", label);
    else
        snprintf(who, sizeof(who), "c%lld-%s",
                 (long long)json_integer_value(json_object_get(run, EV_CELL)),
                 transport != NULL ? transport : "any");
    if (nfiles > 1) n = snprintf(it->name, sizeof(it->name), "f%zu-", file + 1);
    snprintf(it->name + n, sizeof(it->name) - (size_t)n, "run%zu-%s-rep%lld-%s", i, who,
             (long long)json_integer_value(json_object_get(run, EV_REP)), kind);
    for (char *p = it->name; *p != '\0'; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              strchr("._-", *p) != NULL))
            *p = '_';
}

/* The histogram j of run i decoded into h and visited as kind. */
static int visit_one(const json_t *j, const char *kind, struct hdr_item *it, struct hist *h,
                     const char *path, size_t i, hdr_visit visit, void *ctx, struct hb_err *err)
{
    struct hb_err e = { 0 };
    char shown[TEXT_SAFE_CAP];

    hist_init(h);
    if (evidence_hist_add(h, j, &e) < 0)
        return hb_fail(err, -EINVAL, "%s: run %zu: %s: %s", text_safe(shown, sizeof(shown), path),
                       i, kind, e.msg);
    it->h = h;
    return visit(it, ctx, err);
}

/* Every histogram of run i: the op latency, an open loop's service time, each phase. */
static int visit_run(const json_t *run, size_t file, size_t nfiles, size_t i, double doc_start,
                     const char *path, struct hist *h, hdr_visit visit, void *ctx,
                     struct hb_err *err)
{
    const json_t *svc = json_object_get(json_object_get(run, EV_OPEN_LOOP), EV_SERVICE_HISTOGRAM);
    const json_t *start = json_object_get(run, EV_WINDOW_START);
    const json_t *phase;
    const char *name;
    struct hdr_item it = { .start_s = json_is_number(start) ? json_number_value(start) : doc_start,
                           .length_s = json_number_value(json_object_get(run, EV_WINDOW_S)) };
    int rc = 0;

    item_name(&it, file, nfiles, i, run, "latency");
    rc = visit_one(json_object_get(run, EV_HISTOGRAM), "histogram", &it, h, path, i, visit, ctx,
                   err);
    if (rc == 0 && svc != NULL) {
        item_name(&it, file, nfiles, i, run, "service");
        rc = visit_one(svc, "open_loop.service_histogram", &it, h, path, i, visit, ctx, err);
    }
    json_object_foreach((json_t *)json_object_get(run, EV_PHASES), name, phase)
    {
        char kind[48];
        if (rc < 0) break;
        snprintf(kind, sizeof(kind), "phase-%s", name);
        item_name(&it, file, nfiles, i, run, kind);
        rc =
            visit_one(json_object_get(phase, EV_HISTOGRAM), kind, &it, h, path, i, visit, ctx, err);
    }
    return rc;
}

/* Visits every histogram of every run of the n files, in order. 0 or a negative errno. */
static int hdr_walk(const char *const *paths, size_t n, hdr_visit visit, void *ctx,
                    struct hb_err *err)
{
    struct hist *h = hist_new();
    int rc = h != NULL ? 0 : hb_fail(err, -ENOMEM, "out of memory for a histogram");

    for (size_t k = 0; k < n && rc == 0; k++) {
        json_t *doc = NULL;
        const json_t *run;
        uint64_t started = 0;
        size_t i;

        rc = evidence_load(paths[k], &doc, err);
        if (rc < 0) break;
        evidence_get_u64(doc, EV_STARTED_UNIX_S, &started);
        json_array_foreach(json_object_get(doc, EV_RUNS), i, run)
        {
            /* the writer's placeholder for a run it could not encode has no histogram */
            if (!json_is_object(run) || json_object_get(run, EV_HISTOGRAM) == NULL) continue;
            rc = visit_run(run, k, n, i, (double)started, paths[k], h, visit, ctx, err);
            if (rc < 0) break;
        }
        json_decref(doc);
    }
    hist_free(h);
    return rc;
}

/* ---- --hgrm DIR ------------------------------------------------------------------- */

struct hgrm_job {
    const char *dir;
    double ratio;
    size_t written;
    const struct hist *h; /* the histogram being written */
};

static int hgrm_fill(FILE *f, void *ctx, struct hb_err *err)
{
    const struct hgrm_job *job = ctx;

    UNUSED(err);
    hdr_percentiles(f, job->h, job->ratio);
    return fflush(f) != 0 || ferror(f) ? -EIO : 0;
}

static int hgrm_visit(const struct hdr_item *it, void *ctx, struct hb_err *err)
{
    struct hgrm_job *job = ctx;
    char path[4096];

    if (snprintf(path, sizeof(path), "%s/%s.hgrm", job->dir, it->name) >= (int)sizeof(path))
        return hb_fail(err, -ENAMETOOLONG, "--hgrm: the directory's name is too long");
    job->h = it->h;
    int rc = outfile_replace(path, hgrm_fill, job, err);
    if (rc == 0) job->written++;
    return rc;
}

int hdr_hgrm_write(const char *dir, double ratio, const char *const *paths, size_t n, FILE *out,
                   struct hb_err *err)
{
    struct hgrm_job job = { .dir = dir, .ratio = ratio };
    char shown[TEXT_SAFE_CAP];
    struct stat st;
    int rc;

    if (mkdir(dir, 0755) < 0 && errno != EEXIST)
        return hb_fail(err, -errno, "--hgrm: cannot make %s: %s",
                       text_safe(shown, sizeof(shown), dir), strerror(errno));
    if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
        return hb_fail(err, -ENOTDIR, "--hgrm: %s is not a directory",
                       text_safe(shown, sizeof(shown), dir));
    rc = hdr_walk(paths, n, hgrm_visit, &job, err);
    if (rc == 0)
        fprintf(out, "hgrm: %s (%zu histogram(s), values / %g)\n",
                text_safe(shown, sizeof(shown), dir), job.written, ratio);
    return rc;
}

/* ---- --hdr-log FILE --------------------------------------------------------------- */

/* One line of the log, kept until the earliest start is known. */
struct log_line {
    char tag[HDR_NAME_CAP];
    double start_s, length_s, max_ms;
    char *b64;
};

struct log_job {
    struct log_line *v;
    size_t n, cap;
};

static int log_visit(const struct hdr_item *it, void *ctx, struct hb_err *err)
{
    struct log_job *job = ctx;
    struct log_line *l;

    if (job->n == job->cap) {
        size_t cap = job->cap ? job->cap * 2 : 64;
        struct log_line *v = realloc(job->v, cap * sizeof(*v));
        if (v == NULL) return hb_fail(err, -ENOMEM, "--hdr-log: out of memory");
        job->v = v;
        job->cap = cap;
    }
    l = &job->v[job->n];
    *l = (struct log_line){ .start_s = it->start_s, .length_s = it->length_s };
    snprintf(l->tag, sizeof(l->tag), "%s", it->name);
    /* HdrHistogram's getMaxValue: the top of the maximum's counter */
    l->max_ms =
        (double)(it->h->total > 0 ? hist_highest_equivalent(it->h->max) : 0) / HDR_LOG_MAX_RATIO;
    l->b64 = hdr_v2_base64(it->h);
    if (l->b64 == NULL) return hb_fail(err, -ENOMEM, "--hdr-log: out of memory");
    job->n++;
    return 0;
}

static int log_fill(FILE *f, void *ctx, struct hb_err *err)
{
    const struct log_job *job = ctx;
    double base = 0.0;
    char when[40] = "unknown";

    UNUSED(err);
    for (size_t i = 0; i < job->n; i++)
        if (i == 0 || job->v[i].start_s < base) base = job->v[i].start_s;
    if (job->n > 0) {
        time_t t = (time_t)base;
        struct tm tm;
        if (gmtime_r(&t, &tm) != NULL) strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
    }
    fputs("#[Histogram log format version 1.3]\n", f);
    fprintf(f, "#[hopbench %s: latency histograms in ns, each tagged by its run]\n",
            HOPBENCH_VERSION);
    fprintf(f, "#[StartTime: %.3f (seconds since epoch), %s]\n", base, when);
    fprintf(f, "#[BaseTime: %.3f (seconds since epoch)]\n", base);
    fputs(
        "\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n",
        f);
    for (size_t i = 0; i < job->n; i++) {
        const struct log_line *l = &job->v[i];
        fprintf(f, "Tag=%s,%.3f,%.3f,%.3f,%s\n", l->tag, l->start_s - base, l->length_s, l->max_ms,
                l->b64);
    }
    return fflush(f) != 0 || ferror(f) ? -EIO : 0;
}

int hdr_log_write(const char *path, const char *const *paths, size_t n, struct hb_err *err)
{
    struct log_job job = { 0 };
    int rc = hdr_walk(paths, n, log_visit, &job, err);

    if (rc == 0) rc = outfile_replace(path, log_fill, &job, err);
    for (size_t i = 0; i < job.n; i++)
        free(job.v[i].b64);
    free(job.v);
    return rc;
}
