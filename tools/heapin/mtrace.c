/* glibc mtrace logs -> heap events. docs/formats/mtrace.md has the line
 * forms (glibc's malloc/mtrace-impl.c writes them) and the mapping.
 *
 *   = Start | = End                          skipped
 *   [@ CALLER ]+ PTR SIZE                    alloc (PTR (nil): a comment)
 *   [@ CALLER ]- PTR                         free
 *   [@ CALLER ]< OLD  then  [@ CALLER ]> NEW SIZE   one realloc event
 *   [@ CALLER ]! OLD SIZE                    failed realloc: a comment
 *
 * CALLER is glibc's tr_where(): "FILE:(SYM+OFF)[0xREL]", "FILE:[0xREL]" or
 * "[0xADDR]"; it always ends in ']', and it is missing when glibc had no
 * caller. PTR is %p ("0x..." or "(nil)"), SIZE %#lx ("0" or "0x..."). */
#include "heapin_int.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* One parsed line. */
struct mt_line {
        char op;            /* '+', '-', '<', '>', '!', or '=' for Start/End */
        const char *caller; /* NULL if the line has none */
        size_t caller_len;
        uint64_t ptr, size; /* size for '+', '>', '!' */
};

/* A glibc %p or %#lx number: "(nil)" (pointers only), "0" or "0x" hex. */
static int mt_number(const char *s, size_t n, int ptr, uint64_t *v)
{
        if (ptr && n == 5 && memcmp(s, "(nil)", 5) == 0) {
                *v = 0;
                return 0;
        }
        if (n == 1 && s[0] == '0') {
                *v = 0;
                return 0;
        }
        if (n < 3 || s[0] != '0' || s[1] != 'x')
                return -1;
        return heapin_hex(s + 2, n - 2, v);
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

int heapin_mtrace_line_ok(const char *line, size_t len)
{
        struct mt_line m;
        return mt_parse(line, len, &m) == NULL;
}

/* Reader state beyond the line reader. */
struct mt {
        struct heapin_lines lines;
        heapin_event_fn fn;
        void *arg;
        /* a '<' waiting for its '>': its old address, line, and caller
         * (copied: the line buffer moves on) */
        int pending;
        uint64_t old, old_line;
        size_t text_len; /* the caller of '<' is in lines.text */
};

static int mt_emit(struct mt *t, unsigned kind, uint64_t size, uint64_t addr, uint64_t new_addr,
                   uint64_t time, const char *attr, size_t attr_len)
{
        struct tm_heap_ev ev = {
            .kind = kind,
            .size = size,
            .addr = addr,
            .new_addr = new_addr,
            .time = time,
            .attr = (const uint8_t *)attr,
            .attr_len = attr_len,
        };
        return t->fn(t->arg, &ev);
}

/* A failed allocation is no heap event but worth keeping: a comment,
 * "mtrace line N: ... failed (CALLER)" (no parentheses without a caller). */
static int mt_comment(struct mt *t, const struct mt_line *m, uint64_t line)
{
        char what[96];
        if (m->op == '+')
                snprintf(what, sizeof what, "allocation of %#llx bytes",
                         (unsigned long long)m->size);
        else
                snprintf(what, sizeof what, "realloc of %#llx to %#llx bytes",
                         (unsigned long long)m->ptr, (unsigned long long)m->size);
        int n = snprintf(t->lines.text, HEAPIN_LINE_MAX + 1, "mtrace line %llu: %s failed%s%.*s%s",
                         (unsigned long long)line, what, m->caller ? " (" : "", (int)m->caller_len,
                         m->caller ? m->caller : "", m->caller ? ")" : "");
        /* snprintf cut a caller near HEAPIN_LINE_MAX: keep what fits */
        size_t len = n < 0 ? 0 : (size_t)n > HEAPIN_LINE_MAX ? HEAPIN_LINE_MAX : (size_t)n;
        return mt_emit(t, TM_HK_COMMENT, 0, 0, 0, 0, t->lines.text, len);
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

static int mt_line(void *st, const char *line, size_t len, struct tm_err *err)
{
        struct mt *t = st;
        struct heapin_lines *l = &t->lines;
        struct mt_line m;
        const char *bad = mt_parse(line, len, &m);
        if (bad)
                return heapin_lines_err(l, err, -EIO, "%s", bad);
        if (t->pending && m.op != '>')
                return heapin_lines_err(l, err, -EIO,
                                        "the realloc '<' of line %llu is not followed by its '>'",
                                        (unsigned long long)t->old_line);
        switch (m.op) {
        case '=':
                return 0;
        case '+':
                if (m.ptr == 0)
                        return mt_comment(t, &m, l->line);
                return mt_emit(t, TM_HK_ALLOC, m.size, m.ptr, 0, l->line, m.caller, m.caller_len);
        case '-':
                return mt_emit(t, TM_HK_FREE, 0, m.ptr, 0, l->line, m.caller, m.caller_len);
        case '!':
                return mt_comment(t, &m, l->line);
        case '<':
                t->pending = 1;
                t->old = m.ptr;
                t->old_line = l->line;
                t->text_len = m.caller_len;
                if (m.caller_len)
                        memcpy(t->lines.text, m.caller, m.caller_len);
                return 0;
        default: /* '>' */
                if (!t->pending)
                        return heapin_lines_err(l, err, -EIO,
                                                "realloc '>' without the '<' line before it");
                t->pending = 0;
                return mt_emit(t, mt_realloc_kind(t->old, m.ptr), m.size, t->old, m.ptr,
                               t->old_line, t->lines.text, t->text_len);
        }
}

int heapin_mtrace(heapin_read_fn rd, void *rarg, const char *name, heapin_event_fn fn, void *arg,
                  struct tm_err *err)
{
        struct mt t = {.fn = fn, .arg = arg};
        int rc = heapin_lines_open(&t.lines, rd, rarg, name, err);
        if (rc < 0)
                return rc;
        rc = heapin_lines_each(&t.lines, mt_line, &t, err);
        if (rc == 0 && t.pending)
                rc = heapin_lines_err(&t.lines, err, -EIO,
                                      "the input ends after the realloc '<' of line %llu, "
                                      "before its '>'",
                                      (unsigned long long)t.old_line);
        heapin_lines_close(&t.lines);
        return rc;
}
