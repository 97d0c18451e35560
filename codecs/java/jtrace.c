/* Java execution traces -> java records (jtrace.h; docs/formats/java.md). */
#include "jtrace.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

#define TAG(a, b) ((uint32_t)(a) << 8 | (uint32_t)(b))
/* Which of VS, VI, VD were seen (struct jt_state.seen). */
enum { SEEN_VS = 1, SEEN_VI = 2, SEEN_VD = 4 };

struct jt_state {
        uint64_t line; /* lines consumed */
        uint64_t seen; /* SEEN_* */
};

/* An unsigned decimal of 1 to 20 digits, at most 2^64 - 1. */
static int jt_number(const char *s, size_t n, uint64_t *v)
{
        if (n == 0 || n > 20)
                return -1;
        uint64_t x = 0;
        for (size_t i = 0; i < n; i++) {
                unsigned d = (unsigned)(s[i] - '0');
                if (d > 9 || x > (UINT64_MAX - d) / 10)
                        return -1;
                x = x * 10 + d;
        }
        *v = x;
        return 0;
}

/* Parse line (len bytes, no newline; a CR before the newline is dropped)
 * into r (var pointing into line); NULL, or what is wrong with it. */
static const char *jt_parse(const char *line, size_t len, struct tm_rec *r)
{
        if (len && line[len - 1] == '\r')
                len--;
        if (len && line[0] == '#') {
                size_t skip = len > 1 && line[1] == ' ' ? 2 : 1;
                memset(r, 0, sizeof *r);
                r->kind = TM_JK_COMMENT;
                r->v[0] = len - skip;
                r->var[0] = (const uint8_t *)line + skip;
                return NULL;
        }
        if (len < 4 || line[2] != ':')
                return "not an event line (XX:<time stamp>...)";
        int k = tm_schema_kind_by_tag(&tm_schema_java, TAG((uint8_t)line[0], (uint8_t)line[1]));
        if (k < 0)
                return "unknown event type (VS VI VD CL OA OF TB TE MN MX FP)";
        const struct tm_kind *kd = &tm_schema_java.kind[k];
        const char *p = line + 3, *end = line + len;
        unsigned nvar = 0;
        memset(r, 0, sizeof *r);
        r->kind = (uint32_t)k;
        for (unsigned i = 0; i < kd->nfields; i++) {
                const char *c = memchr(p, ':', (size_t)(end - p));
                int last = i + 1 == kd->nfields;
                if (last && c)
                        return "more parameters than the event has";
                if (!last && !c)
                        return "fewer parameters than the event has";
                size_t n = (size_t)((c ? c : end) - p);
                if (tm_schema_java.field[kd->field[i]].type == TM_FT_TEXT) {
                        if (n == 0)
                                return kd->field[i] == TM_JF_CLASS ? "empty class name"
                                                                   : "empty method name";
                        if (kd->field[i] == TM_JF_METHOD && memchr(p, '.', n))
                                return "a '.' in a method name";
                        r->v[i] = n;
                        r->var[nvar++] = (const uint8_t *)p;
                } else if (jt_number(p, n, &r->v[i]) < 0) {
                        return kd->field[i] == TM_JF_TIME     ? "bad time stamp"
                               : kd->field[i] == TM_JF_THREAD ? "bad thread id"
                                                              : "bad object id";
                }
                p = c ? c + 1 : end;
        }
        return NULL;
}

int tm_java_line_ok(const char *line, size_t len)
{
        struct tm_rec r;
        return jt_parse(line, len, &r) == NULL;
}

/* The order rules (jtrace.h) for a record of kind k, updating seen; NULL
 * or what is wrong. */
static const char *jt_order(uint64_t *seen, unsigned k)
{
        if (k == TM_JK_COMMENT)
                return *seen ? "a comment (#) after the first event" : NULL;
        if (*seen & SEEN_VD)
                return "an event after the VM death event (VD)";
        if (!*seen && k != TM_JK_VM_START)
                return "the first event is not the VM start event (VS)";
        unsigned bit = k == TM_JK_VM_START   ? SEEN_VS
                       : k == TM_JK_VM_INIT  ? SEEN_VI
                       : k == TM_JK_VM_DEATH ? SEEN_VD
                                             : 0;
        if (bit && (*seen & bit))
                return "a second VM start, init or death event";
        *seen |= bit;
        return NULL;
}

/* The head begins with a VS line or a comment, and every whole line in it
 * follows the order rules; one that begins with comments has its VS line
 * in the head (any text of `#` lines is not taken). A head cut inside a
 * line is judged on its whole lines and what the cut one has. */
static int jt_probe_takes(const uint8_t *head, size_t n)
{
        const char *s = (const char *)head, *end = s + n;
        if (n < 1 || (head[0] != '#' && (n < 4 || memcmp(s, "VS:", 3) != 0)))
                return 0;
        uint64_t seen = 0;
        struct tm_rec r;
        while (s < end) {
                const char *nl = memchr(s, '\n', (size_t)(end - s));
                if (!nl)
                        return seen ? 1
                                    : s == (const char *)head && head[0] == 'V' &&
                                          tm_java_line_ok(s, (size_t)(end - s));
                if (jt_parse(s, (size_t)(nl - s), &r) || jt_order(&seen, r.kind))
                        return 0;
                s = nl + 1;
        }
        return seen != 0;
}

static int jt_probe(const uint8_t *head, size_t n)
{
        return jt_probe_takes(head, n) ? TM_BID_JAVA : 0;
}

static int jt_open(const uint8_t *head, size_t n, const char *path, void **ctx,
                   struct tm_schema *schema, struct tm_rstate *st, struct tm_err *err)
{
        (void)head;
        (void)n;
        (void)path;
        (void)err;
        *ctx = NULL;
        *schema = tm_schema_java;
        memset(st->b, 0, sizeof(struct jt_state));
        return 0;
}

static void jt_close(void *ctx)
{
        (void)ctx;
}

/* What decoding can reach: seen holds known bits, none before a line was
 * consumed, VS among any (the first event is VS; comments set none). */
static int jt_state_ok(const void *ctx, const struct tm_rstate *st)
{
        (void)ctx;
        const struct jt_state *s = (const struct jt_state *)st->b;
        if (s->seen & ~(uint64_t)(SEEN_VS | SEEN_VI | SEEN_VD))
                return 0;
        return s->line == 0 ? s->seen == 0 : s->seen == 0 || (s->seen & SEEN_VS) != 0;
}

static int jt_fail(struct tm_err *err, uint64_t off, uint64_t line, const char *what)
{
        return tm_err_set(err, -EIO, "raw offset %llu: java line %llu: %s", (unsigned long long)off,
                          (unsigned long long)line, what);
}

static ssize_t jt_decode(void *ctx, struct tm_rstate *st, const uint8_t *in, size_t len, int eof,
                         uint64_t raw_off, size_t *used, struct tm_rec *out, size_t cap,
                         struct tm_err *err)
{
        (void)ctx;
        struct jt_state *s = (struct jt_state *)st->b;
        size_t pos = 0, n = 0;
        while (n < cap && pos < len) {
                size_t avail = len - pos;
                size_t look = avail < TM_JAVA_LINE_MAX + 1 ? avail : TM_JAVA_LINE_MAX + 1;
                const uint8_t *nl = memchr(in + pos, '\n', look);
                const char *bad = NULL;
                size_t ll = nl ? (size_t)(nl - (in + pos)) : 0;
                uint64_t seen = s->seen;
                if (!nl && look > TM_JAVA_LINE_MAX)
                        bad = "line longer than 65535 bytes";
                else if (!nl && eof)
                        bad = "truncated: the last line has no newline";
                else if (!nl)
                        break;
                else if (!(bad = jt_parse((const char *)in + pos, ll, &out[n])))
                        bad = jt_order(&seen, out[n].kind);
                /* the records before a bad line are returned first; the
                 * next call fails on it */
                if (bad && n > 0)
                        break;
                if (bad)
                        return jt_fail(err, raw_off + pos, s->line + 1, bad);
                s->seen = seen;
                s->line++;
                n++;
                pos += ll + 1;
        }
        *used = pos;
        return (ssize_t)n;
}

const struct tm_rcodec tm_rcodec_java = {
    .name = "java",
    .suffix = NULL, /* read only */
    .family = &tm_family_java,
    .probe = jt_probe,
    .open = jt_open,
    .close = jt_close,
    .state_size = sizeof(struct jt_state),
    .state_ok = jt_state_ok,
    .decode = jt_decode,
};
