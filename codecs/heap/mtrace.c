/* glibc mtrace logs -> heap records (mtrace.h; docs/formats/mtrace.md).
 *
 * CALLER is glibc's tr_where(): "FILE:(SYM+OFF)[0xREL]", "FILE:[0xREL]" or
 * "[0xADDR]"; it always ends in ']', and it is missing when glibc had no
 * caller. PTR is %p ("0x..." or "(nil)"), SIZE %#lx ("0" or "0x..."). */
#include "mtrace.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "../common/tm_hex.h"
#include "heap.h"
#include "heap_stats.h"

/* One parsed line. */
struct mt_line {
        char op;            /* '+', '-', '<', '>', '!', or '=' for Start/End */
        const char *caller; /* NULL if the line has none */
        size_t caller_len;
        uint64_t ptr, size; /* size for '+', '>', '!' */
};

struct mt_state {
        uint64_t line; /* lines consumed */
};

/* A glibc %p or %#lx number: "(nil)" (pointers only), "0" or "0x" hex. */
static int mt_number(const char *s, size_t n, int ptr, uint64_t *v)
{
        if ((ptr && n == 5 && memcmp(s, "(nil)", 5) == 0) || (n == 1 && s[0] == '0')) {
                *v = 0;
                return 0;
        }
        if (n < 3 || s[0] != '0' || s[1] != 'x')
                return -1;
        return tm_hex_parse(s + 2, n - 2, 16, v);
}

/* Parse line into *m; NULL, or what is wrong with it. */
static const char *mt_parse(const char *line, size_t len, struct mt_line *m)
{
        memset(m, 0, sizeof *m);
        if (len >= 2 && line[0] == '=' && line[1] == ' ') {
                if ((len == 7 && memcmp(line, "= Start", 7) == 0) ||
                    (len == 5 && memcmp(line, "= End", 5) == 0)) {
                        m->op = '=';
                        return NULL;
                }
                return "unknown '=' line (glibc writes '= Start' and '= End')";
        }
        const char *rest = line;
        size_t rlen = len;
        if (len >= 2 && line[0] == '@' && line[1] == ' ') {
                /* The caller is a file name and a symbol, which may hold
                 * anything; what follows it cannot hold "] ", so the last
                 * "] <op> " ends it. */
                size_t i = len - 1;
                while (i > 2 &&
                       !(line[i] == ']' && i + 3 < len && line[i + 1] == ' ' &&
                         line[i + 2] != '\0' && strchr("+-<>!", line[i + 2]) && line[i + 3] == ' '))
                        i--;
                if (i <= 2)
                        return "no operation (+ - < > !) after the caller";
                m->caller = line + 2;
                m->caller_len = i + 1 - 2;
                rest = line + i + 2;
                rlen = len - (i + 2);
        }
        if (rlen < 3 || rest[0] == '\0' || !strchr("+-<>!", rest[0]) || rest[1] != ' ')
                return "not an mtrace line";
        m->op = rest[0];
        const char *a = rest + 2, *end = rest + rlen;
        const char *sp = memchr(a, ' ', (size_t)(end - a));
        int two = m->op == '+' || m->op == '>' || m->op == '!';
        if (two != (sp != NULL))
                return two ? "missing size" : "text after the address";
        if (mt_number(a, (size_t)((sp ? sp : end) - a), 1, &m->ptr) < 0)
                return "bad address";
        if (two) {
                const char *b = sp + 1;
                if (memchr(b, ' ', (size_t)(end - b)))
                        return "text after the size";
                if (mt_number(b, (size_t)(end - b), 0, &m->size) < 0)
                        return "bad size";
        }
        return NULL;
}

int tm_mtrace_line_ok(const char *line, size_t len)
{
        struct mt_line m;
        return mt_parse(line, len, &m) == NULL;
}

/* Every whole line of head parses, and there is one (a head cut inside its
 * first line is judged on what it has, when it is all there is). */
static int mt_lines(const uint8_t *head, size_t n)
{
        const char *s = (const char *)head, *end = s + n;
        int lines = 0;
        while (s < end) {
                const char *nl = memchr(s, '\n', (size_t)(end - s));
                if (!nl)
                        return lines > 0 || tm_mtrace_line_ok(s, (size_t)(end - s));
                if (!tm_mtrace_line_ok(s, (size_t)(nl - s)))
                        return 0;
                lines++;
                s = nl + 1;
        }
        return lines > 0;
}

static int mt_probe(const uint8_t *head, size_t n)
{
        return mt_lines(head, n) ? TM_BID_MTRACE : 0;
}

static int mt_open(const uint8_t *head, size_t n, const char *path, void **ctx,
                   struct tm_schema *schema, struct tm_rstate *st, struct tm_err *err)
{
        (void)head;
        (void)n;
        (void)path;
        (void)err;
        *ctx = NULL;
        *schema = tm_schema_heap;
        memset(st->b, 0, sizeof(struct mt_state));
        return 0;
}

static void mt_close(void *ctx)
{
        (void)ctx;
}

/* The realloc outcome of '<' OLD then '>' NEW: glibc writes the pair only
 * when both are non-null (realloc(NULL, n) is logged as '+', realloc(p, 0)
 * as '-'), so from glibc it is moved or resized in place; a hand-made log
 * may hold the other two. */
static unsigned mt_realloc_kind(uint64_t old, uint64_t new_addr)
{
        if (old == 0)
                return TM_HK_REALLOC_ALLOC;
        if (new_addr == 0)
                return TM_HK_REALLOC_FREE;
        return old == new_addr ? TM_HK_REALLOC : TM_HK_REALLOC_ALLOC_FREE;
}

static int mt_fail(struct tm_err *err, uint64_t off, uint64_t line, const char *what)
{
        return tm_err_set(err, -EIO, "raw offset %llu: mtrace line %llu: %s",
                          (unsigned long long)off, (unsigned long long)line, what);
}

/* The next whole line at in[pos..len): its length (no newline) in *ll and
 * 1; 0 when it is not whole yet; -EIO past TM_MTRACE_LINE_MAX or a last
 * line without its newline at eof. */
static int mt_next(const uint8_t *in, size_t len, size_t pos, int eof, size_t *ll,
                   uint64_t raw_off, uint64_t line, struct tm_err *err)
{
        size_t avail = len - pos, look = avail < TM_MTRACE_LINE_MAX + 1 ? avail
                                                                        : TM_MTRACE_LINE_MAX + 1;
        const uint8_t *nl = memchr(in + pos, '\n', look);
        if (nl) {
                *ll = (size_t)(nl - (in + pos));
                return 1;
        }
        if (look > TM_MTRACE_LINE_MAX)
                return mt_fail(err, raw_off + pos, line, "line longer than 65535 bytes");
        if (eof && avail)
                return mt_fail(err, raw_off + pos, line, "truncated: the last line has no newline");
        return 0;
}

static ssize_t mt_decode(void *ctx, struct tm_rstate *st, const uint8_t *in, size_t len, int eof,
                         uint64_t raw_off, size_t *used, struct tm_rec *out, size_t cap,
                         struct tm_err *err)
{
        (void)ctx;
        struct mt_state *s = (struct mt_state *)st->b;
        size_t pos = 0, n = 0, ll = 0;
        int rc = 0;
        while (n < cap && (rc = mt_next(in, len, pos, eof, &ll, raw_off, s->line + 1, err)) > 0) {
                const char *text = (const char *)in + pos;
                struct mt_line m;
                const char *bad = mt_parse(text, ll, &m);
                if (bad)
                        return mt_fail(err, raw_off + pos, s->line + 1, bad);
                size_t next = pos + ll + 1;
                struct tm_heap_ev ev = {.time = s->line + 1};
                if (m.op == '<') {
                        size_t l2 = 0;
                        rc = mt_next(in, len, next, eof, &l2, raw_off, s->line + 2, err);
                        if (rc < 0)
                                return rc;
                        if (rc == 0 && eof)
                                return mt_fail(err, raw_off + pos, s->line + 1,
                                               "the input ends after this realloc '<', before "
                                               "its '>'");
                        if (rc == 0)
                                break; /* the '<' waits for its '>' */
                        struct mt_line m2;
                        bad = mt_parse((const char *)in + next, l2, &m2);
                        if (bad)
                                return mt_fail(err, raw_off + next, s->line + 2, bad);
                        if (m2.op != '>')
                                return mt_fail(err, raw_off + next, s->line + 2,
                                               "the realloc '<' before it is not followed by "
                                               "its '>'");
                        ev.kind = mt_realloc_kind(m.ptr, m2.ptr);
                        ev.size = m2.size;
                        ev.addr = m.ptr;
                        ev.new_addr = m2.ptr;
                        next += l2 + 1;
                        s->line++;
                } else if (m.op == '>') {
                        return mt_fail(err, raw_off + pos, s->line + 1,
                                       "realloc '>' without the '<' line before it");
                } else if (m.op == '!' || (m.op == '+' && m.ptr == 0)) {
                        /* a failed allocation: no heap event, kept as a
                         * comment holding the line as glibc wrote it */
                        ev = (struct tm_heap_ev){.kind = TM_HK_COMMENT,
                                                 .attr = (const uint8_t *)text,
                                                 .attr_len = ll};
                        m.caller = NULL;
                } else if (m.op == '+') {
                        ev.kind = TM_HK_ALLOC;
                        ev.size = m.size;
                        ev.addr = m.ptr;
                } else if (m.op == '-') {
                        ev.kind = TM_HK_FREE;
                        ev.addr = m.ptr;
                }
                if (m.caller) {
                        ev.attr = (const uint8_t *)m.caller;
                        ev.attr_len = m.caller_len;
                }
                if (m.op != '=')
                        tm_heap_ev_to_rec(&ev, &out[n++]);
                s->line++;
                pos = next;
        }
        if (n < cap && rc < 0)
                return rc;
        *used = pos;
        return (ssize_t)n;
}

const struct tm_rcodec tm_rcodec_mtrace = {
    .name = "mtrace",
    .suffix = NULL, /* read only */
    .family = &tm_family_heap,
    .probe = mt_probe,
    .open = mt_open,
    .close = mt_close,
    .state_size = sizeof(struct mt_state),
    .decode = mt_decode,
};
