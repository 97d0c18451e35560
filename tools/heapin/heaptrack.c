/* heaptrack data files -> heap events. docs/formats/heaptrack.md has the
 * line forms (heaptrack's src/track/libheaptrack.cpp writes the raw file,
 * src/interpret/heaptrack_interpret.cpp turns it into the interpreted one)
 * and the mapping.
 *
 * Every line is a letter, then fields in hex separated by single spaces.
 * The lines that make events:
 *
 *   raw          + SIZE TRACE PTR    alloc of SIZE at PTR
 *                - PTR               free of PTR
 *   interpreted  a SIZE TRACE        allocation info number 0, 1, 2, ...
 *                + INFO              alloc of an object of that info
 *                - INFO              free of one live object of that info
 *   both         c MS                elapsed time: the time of what follows
 *                X CMDLINE           a comment (the traced command)
 *                A                   a comment (attached to a running process)
 *
 * A realloc is written as '-' then '+' (libheaptrack's heaptrack_realloc),
 * which looks exactly like free() then malloc(), so every event is an alloc
 * or a free. The interpreted file has no pointers: each allocation gets a
 * synthetic address, 16 * (its number in the file, from 1), and a free
 * takes the most recent live allocation of its info (see ht_info).
 *
 * Memory (interpreted files only; raw files need no table): 24 bytes for
 * each 'a' line (distinct (size, call stack) pairs of the traced program)
 * and 16 bytes for each live allocation at the peak, both doubling arrays;
 * both are bounded by what the traced program did, which the user chose to
 * trace, and by 2^32 - 1 entries (beyond: -ENOMEM with a message). */
#include "heapin_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HT_FIELDS_MAX 4
#define HT_TABLE_MAX 0xffffffffu

enum ht_mode { HT_UNKNOWN, HT_RAW, HT_INTERPRETED };

/* An allocation info of an interpreted file, with its live allocations as a
 * stack (a free of the info takes the top one: heaptrack does not say
 * which, and the most recent is the likeliest in programs that nest). */
struct ht_info {
        uint64_t size, trace;
        uint32_t live; /* index + 1 of the top node, 0 if none */
};

struct ht_node {
        uint64_t seq;  /* the allocation's number, from 1 */
        uint32_t next; /* index + 1 of the node below, or of the next free node */
};

struct ht {
        struct heapin_lines lines;
        heapin_event_fn fn;
        void *arg;
        enum ht_mode mode;
        uint64_t time, seq;
        struct ht_info *info;
        size_t ninfo, cinfo;
        struct ht_node *node;
        size_t nnode, cnode;
        uint32_t free_node; /* index + 1 of the first unused node, 0 if none */
};

/* Split the fields after the letter of line into hex numbers: their count,
 * or -1 if one is not hex or there are more than max. */
static int ht_fields(const char *line, size_t len, uint64_t *v, int max)
{
        if (len == 1)
                return 0;
        if (line[1] != ' ')
                return -1;
        const char *p = line + 2, *end = line + len;
        int n = 0;
        for (;;) {
                const char *sp = memchr(p, ' ', (size_t)(end - p));
                const char *e = sp ? sp : end;
                if (n == max || heapin_hex(p, (size_t)(e - p), &v[n]) < 0)
                        return -1;
                n++;
                if (!sp)
                        return n;
                p = sp + 1;
        }
}

int heapin_heaptrack_version(const char *line, size_t len, uint64_t *hv, uint64_t *fv)
{
        uint64_t v[2];
        if (len < 3 || line[0] != 'v')
                return -1;
        int n = ht_fields(line, len, v, 2);
        if (n < 1)
                return -1;
        if (hv)
                *hv = v[0];
        if (fv)
                *fv = n == 2 ? v[1] : 1;
        return 0;
}

/* Lines this reader passes over whatever their length (strings, module
 * lists, instruction pointers): they carry no event. */
static int ht_skip_long(char first)
{
        return strchr("sixXmSt#", first) != NULL && first != '\0';
}

static int ht_emit(struct ht *h, unsigned kind, uint64_t size, uint64_t addr, const char *attr,
                   size_t attr_len)
{
        struct tm_heap_ev ev = {
            .kind = kind,
            .size = size,
            .addr = addr,
            .time = h->time,
            .attr = (const uint8_t *)attr,
            .attr_len = attr_len,
        };
        return h->fn(h->arg, &ev);
}

/* A comment: prefix, then s[0..n). */
static int ht_comment(struct ht *h, const char *prefix, const char *s, size_t n)
{
        int k = snprintf(h->lines.text, HEAPIN_LINE_MAX + 1, "%s%.*s", prefix, (int)n, s);
        size_t len = k < 0 ? 0 : (size_t)k > HEAPIN_LINE_MAX ? HEAPIN_LINE_MAX : (size_t)k;
        struct tm_heap_ev ev = {
            .kind = TM_HK_COMMENT, .attr = (const uint8_t *)h->lines.text, .attr_len = len};
        return h->fn(h->arg, &ev);
}

static int ht_alloc(struct ht *h, uint64_t size, uint64_t addr, uint64_t trace)
{
        char attr[32];
        int n = snprintf(attr, sizeof attr, "trace=0x%llx", (unsigned long long)trace);
        return ht_emit(h, TM_HK_ALLOC, size, addr, attr, (size_t)n);
}

/* The file's kind is told by its lines: 'x' and 'm' only in raw files,
 * 'a', 's' and 'i' only in interpreted ones. */
static int ht_set_mode(struct ht *h, enum ht_mode mode, char letter, struct tm_err *err)
{
        if (h->mode == HT_UNKNOWN)
                h->mode = mode;
        if (h->mode == mode)
                return 0;
        return heapin_lines_err(&h->lines, err, -EIO, "'%c' line in %s file", letter,
                                h->mode == HT_RAW ? "a raw" : "an interpreted");
}

/* Grow *arr (n used of *cap, elem bytes each) to hold one more. */
static int ht_grow(struct ht *h, void **arr, size_t n, size_t *cap, size_t elem, const char *what,
                   struct tm_err *err)
{
        if (n < *cap)
                return 0;
        if (n >= HT_TABLE_MAX)
                return heapin_lines_err(&h->lines, err, -ENOMEM, "more than %u %s", HT_TABLE_MAX,
                                        what);
        size_t c = *cap ? *cap * 2 : 1024;
        if (c > HT_TABLE_MAX)
                c = HT_TABLE_MAX;
        void *p = realloc(*arr, c * elem);
        if (!p)
                return heapin_lines_err(&h->lines, err, -ENOMEM, "out of memory for %zu %s", c,
                                        what);
        *arr = p;
        *cap = c;
        return 0;
}

static int ht_info_add(struct ht *h, uint64_t size, uint64_t trace, struct tm_err *err)
{
        int rc = ht_grow(h, (void **)&h->info, h->ninfo, &h->cinfo, sizeof *h->info,
                         "allocation infos", err);
        if (rc < 0)
                return rc;
        h->info[h->ninfo++] = (struct ht_info){.size = size, .trace = trace};
        return 0;
}

static int ht_alloc_info(struct ht *h, uint64_t idx, struct tm_err *err)
{
        if (idx >= h->ninfo)
                return heapin_lines_err(&h->lines, err, -EIO,
                                        "allocation info %llu not defined (%zu 'a' lines so far)",
                                        (unsigned long long)idx, h->ninfo);
        uint32_t k = h->free_node;
        if (k) {
                h->free_node = h->node[k - 1].next;
        } else {
                int rc = ht_grow(h, (void **)&h->node, h->nnode, &h->cnode, sizeof *h->node,
                                 "live allocations", err);
                if (rc < 0)
                        return rc;
                k = (uint32_t)++h->nnode;
        }
        struct ht_info *in = &h->info[idx];
        h->node[k - 1] = (struct ht_node){.seq = ++h->seq, .next = in->live};
        in->live = k;
        return ht_alloc(h, in->size, h->seq << 4, in->trace);
}

static int ht_free_info(struct ht *h, uint64_t idx, struct tm_err *err)
{
        if (idx >= h->ninfo || !h->info[idx].live)
                return heapin_lines_err(&h->lines, err, -EIO,
                                        "free of allocation info %llu, which has no live "
                                        "allocation",
                                        (unsigned long long)idx);
        struct ht_info *in = &h->info[idx];
        uint32_t k = in->live;
        uint64_t seq = h->node[k - 1].seq;
        in->live = h->node[k - 1].next;
        h->node[k - 1].next = h->free_node;
        h->free_node = k;
        return ht_emit(h, TM_HK_FREE, 0, seq << 4, NULL, 0);
}

static int ht_version(struct ht *h, const char *line, size_t len, struct tm_err *err)
{
        uint64_t hv, fv;
        if (heapin_heaptrack_version(line, len, &hv, &fv) < 0)
                return heapin_lines_err(&h->lines, err, -EIO,
                                        "not a heaptrack file: the first line is not "
                                        "'v <version> <file format>'");
        if (fv < 2 || fv > 3)
                return heapin_lines_err(&h->lines, err, -ENOTSUP,
                                        "heaptrack file format version %llu (written by "
                                        "heaptrack %llu.%llu.%llu) is not supported: this reader "
                                        "reads versions 2 and 3",
                                        (unsigned long long)fv, (unsigned long long)(hv >> 16),
                                        (unsigned long long)(hv >> 8 & 0xff),
                                        (unsigned long long)(hv & 0xff));
        return 0;
}

static int ht_line(void *st, const char *line, size_t len, struct tm_err *err)
{
        struct ht *h = st;
        struct heapin_lines *l = &h->lines;
        uint64_t v[HT_FIELDS_MAX];
        if (l->line == 1) {
                /* the version line decides how to read the rest: it is
                 * never skipped, long lines after it may be */
                l->skip = ht_skip_long;
                return ht_version(h, line, len, err);
        }
        if (len == 0) /* heaptrack_interpret writes one before its '#' summary */
                return 0;
        char c = line[0];
        int n;
        switch (c) {
        case 'x':
        case 'm':
                return ht_set_mode(h, HT_RAW, c, err);
        case 's':
        case 'i':
                return ht_set_mode(h, HT_INTERPRETED, c, err);
        case 't':
        case 'I':
        case 'S':
        case 'R':
        case '#':
                return 0;
        case 'X':
                return ht_comment(h, "heaptrack command line:", line + 1, len - 1);
        case 'A':
                return ht_comment(h,
                                  "heaptrack attached to a running process: what it allocated "
                                  "before is not in the trace",
                                  "", 0);
        case 'v':
                return heapin_lines_err(l, err, -EIO, "a second version line");
        default:
                break;
        }
        n = ht_fields(line, len, v, HT_FIELDS_MAX);
        if (c == 'c' && n == 1) {
                h->time = v[0];
                return 0;
        }
        if (c == 'a' && n == 2) {
                int rc = ht_set_mode(h, HT_INTERPRETED, c, err);
                return rc < 0 ? rc : ht_info_add(h, v[0], v[1], err);
        }
        if (c == '+' && (n == 3 || n == 1)) {
                int rc = ht_set_mode(h, n == 3 ? HT_RAW : HT_INTERPRETED, c, err);
                if (rc < 0)
                        return rc;
                return n == 3 ? ht_alloc(h, v[0], v[2], v[1]) : ht_alloc_info(h, v[0], err);
        }
        if (c == '-' && n == 1) {
                if (h->mode == HT_RAW)
                        return ht_emit(h, TM_HK_FREE, 0, v[0], NULL, 0);
                if (h->mode == HT_INTERPRETED)
                        return ht_free_info(h, v[0], err);
                return heapin_lines_err(l, err, -EIO,
                                        "'-' before any line that tells a raw "
                                        "file from an interpreted one");
        }
        if (strchr("ca+-", c) && c != '\0')
                return heapin_lines_err(l, err, -EIO, "bad '%c' line", c);
        return heapin_lines_err(l, err, -EIO, "unknown line type '%c'",
                                (unsigned char)c >= ' ' && (unsigned char)c < 0x7f ? c : '?');
}

int heapin_heaptrack(heapin_read_fn rd, void *rarg, const char *name, heapin_event_fn fn, void *arg,
                     struct tm_err *err)
{
        struct ht h = {.fn = fn, .arg = arg};
        int rc = heapin_lines_open(&h.lines, rd, rarg, name, err);
        if (rc < 0)
                return rc;
        rc = heapin_lines_each(&h.lines, ht_line, &h, err);
        if (rc == 0 && h.lines.line == 0)
                rc = tm_err_set(err, -EIO, "%s: empty: no heaptrack version line", h.lines.name);
        free(h.info);
        free(h.node);
        heapin_lines_close(&h.lines);
        return rc;
}
