/* PTF's ASCII form -> object records (ptf.h; docs/formats/ptf.md).
 *
 * A line is tokens separated by runs of blanks (space, tab) and ends in
 * '\n', a '\r' before it being dropped (section 4.2 says lines end in a
 * carriage return, the grammar of section 3.1 says "\n"). fo's class
 * name is the last LengthOfClassName bytes of its line, so a name may
 * hold blanks; every other token is a decimal number. */
#include "ptf.h"
#include "ptf_stats.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "../common/tm_tls.h"
#include "../record/text.h"

/* ---- the show of fo's lists and class names (ptf.h, TM_PTF_SHOW_WORDS) ---- */

/* v in decimal at dst (NULL: its length only). */
static size_t words_udec(char *dst, uint64_t v)
{
        char tmp[20];
        size_t n = 0;
        do
                tmp[n++] = (char)('0' + v % 10);
        while ((v /= 10) != 0);
        for (size_t i = 0; dst && i < n; i++)
                dst[i] = tmp[n - 1 - i];
        return n;
}

/* A list's numbers separated by blanks; a text's bytes as they are, but
 * '\n' as %0A so that a line stays one line. */
static size_t words_put(char *dst, int list, const uint8_t *b, uint64_t n)
{
        size_t len = 0;
        for (uint64_t i = 0; i < n; i++) {
                if (list) {
                        uint64_t v = 0; /* little-endian (tm_rec.var) */
                        for (unsigned j = 0; j < 8; j++)
                                v |= (uint64_t)b[8 * i + j] << (8 * j);
                        if (i && dst)
                                dst[len] = ' ';
                        len += (i != 0);
                        len += words_udec(dst ? dst + len : NULL, v);
                } else if (b[i] == '\n') {
                        if (dst)
                                memcpy(dst + len, "%0A", 3);
                        len += 3;
                } else {
                        if (dst)
                                dst[len] = (char)b[i];
                        len++;
                }
        }
        return len;
}

static const struct tm_show_row tm_show_ptf_words = {
    .code = TM_PTF_SHOW_WORDS,
    .name = "ptf words",
    .put_var = words_put,
    .var_types = 1u << TM_FT_TEXT | 1u << TM_FT_LIST,
};
TM_SHOW_ROW(tm_show_ptf_words);

#define F(n, t)                                                                                    \
        {                                                                                          \
                .name = n, .type = t, .show = TM_SHOW_DEC                                          \
        }
#define OBJ2 .nfields = 2, .field = {TM_PF_FORMAT_ID, TM_PF_OID}
#define DATA3 .nfields = 3, .field = {TM_PF_FORMAT_ID, TM_PF_OID, TM_PF_OFFSET}
#define ARRAY5                                                                                     \
        .nfields = 5, .field = {TM_PF_FORMAT_ID, TM_PF_OID, TM_PF_OFFSET, TM_PF_INDEX, TM_PF_LENGTH}

const struct tm_schema tm_schema_ptf =
    {
        .name = "object",
        .nfields = TM_PF_N,
        .nkinds = TM_PK_N,
        .field =
            {
                [TM_PF_MARKER] = F("Marker", TM_FT_TEXT),
                [TM_PF_FORMAT_ID] = F("FormatId", TM_FT_UINT),
                [TM_PF_OID] = F("OId", TM_FT_UINT),
                [TM_PF_SUPER_FORMAT_ID] = F("SuperFormatId", TM_FT_UINT),
                [TM_PF_NUM_POINTERS] = F("NumberOfPointers", TM_FT_UINT),
                [TM_PF_NUM_DATA] = F("NumberOfDataMembers", TM_FT_UINT),
                [TM_PF_NUM_ARRAYS] = F("NumberOfArrayMembers", TM_FT_UINT),
                [TM_PF_NAME_LEN] = F("LengthOfClassName", TM_FT_UINT),
                /* the line's own tokens: blanks between the ids, the name as
                 * it is, neither there when empty (record.h) */
                [TM_PF_MEMBER_FORMATS] = {.name = "MemberFormatIds",
                                          .type = TM_FT_LIST,
                                          .show = TM_PTF_SHOW_WORDS},
                [TM_PF_NAME] = {.name = "NameOfClass",
                                .type = TM_FT_TEXT,
                                .show = TM_PTF_SHOW_WORDS},
                [TM_PF_CONTAINER_OID] = F("ContainerOId", TM_FT_UINT),
                [TM_PF_NUM_ELEMENTS] = F("NoOfElements", TM_FT_UINT),
                [TM_PF_FROM_OID] = F("FromOId", TM_FT_UINT),
                [TM_PF_TO_OID] = F("ToOId", TM_FT_UINT),
                [TM_PF_EDGE] = F("Edge", TM_FT_UINT),
                [TM_PF_OFFSET] = F("Offset", TM_FT_INT),
                [TM_PF_INDEX] = F("Index", TM_FT_UINT),
                [TM_PF_LENGTH] = F("Length", TM_FT_UINT),
            },
        .kind =
            {
                [TM_PK_TRACE] = {.name = "Trace", .tag = 0, .nfields = 1, .field = {TM_PF_MARKER}},
                [TM_PK_FO] = {.name = "fo",
                              .tag = 1,
                              .nfields = 8,
                              .field = {TM_PF_FORMAT_ID, TM_PF_SUPER_FORMAT_ID, TM_PF_NUM_POINTERS,
                                        TM_PF_NUM_DATA, TM_PF_NUM_ARRAYS, TM_PF_NAME_LEN,
                                        TM_PF_MEMBER_FORMATS, TM_PF_NAME}},
                [TM_PK_CO] = {.name = "co", .tag = 2, OBJ2},
                [TM_PK_CAO] = {.name = "cao",
                               .tag = 3,
                               .nfields = 4,
                               .field = {TM_PF_FORMAT_ID, TM_PF_OID, TM_PF_CONTAINER_OID,
                                         TM_PF_NUM_ELEMENTS}},
                [TM_PK_DO] = {.name = "do", .tag = 4, OBJ2},
                [TM_PK_SR] = {.name = "sr", .tag = 5, OBJ2},
                [TM_PK_GR] = {.name = "gr", .tag = 6},
                [TM_PK_DR] = {.name = "dr", .tag = 7, DATA3},
                [TM_PK_DW] = {.name = "dw", .tag = 8, DATA3},
                [TM_PK_ADR] = {.name = "adr", .tag = 9, ARRAY5},
                [TM_PK_ADW] = {.name = "adw", .tag = 10, ARRAY5},
                [TM_PK_ER] =
                    {.name = "er",
                     .tag = 11,
                     .nfields = 3,
                     .field = {TM_PF_FORMAT_ID, TM_PF_FROM_OID, TM_PF_EDGE}},
                [TM_PK_EW] =
                    {.name = "ew",
                     .tag = 12,
                     .nfields = 4,
                     .field = {TM_PF_FORMAT_ID, TM_PF_FROM_OID, TM_PF_EDGE, TM_PF_TO_OID}},
                [TM_PK_TS] = {.name = "ts", .tag = 13},
                [TM_PK_TE] = {.name = "te", .tag = 14},
            },
};

enum { PH_BEFORE, PH_EVENTS, PH_AFTER }; /* where the trace is */

struct ptf_state {
        uint64_t line;  /* lines consumed */
        uint32_t phase; /* PH_* */
        uint32_t zero;
};

/* fo's lists, in this thread, until its next decode call */
static struct tm_tls scratch_slot = TM_TLS_INIT(TM_PTF_LIST_MAX * sizeof(uint64_t));

static const char begin_line[] = "Trace begin", end_line[] = "Trace end";

static int is_blank(char c)
{
        return c == ' ' || c == '\t';
}

/* The next token of s[*pos..len): its start and length in *t, *tl; 0 at
 * the end of the line. */
static int next_tok(const char *s, size_t len, size_t *pos, const char **t, size_t *tl)
{
        size_t i = *pos;
        while (i < len && is_blank(s[i]))
                i++;
        size_t b = i;
        while (i < len && !is_blank(s[i]))
                i++;
        *pos = i;
        *t = s + b;
        *tl = i - b;
        return i > b;
}

/* A decimal number (signed: with an optional '-'); NULL or what is wrong. */
static const char *parse_num(const char *t, size_t n, int sign, uint64_t *v)
{
        int neg = sign && n > 0 && t[0] == '-';
        size_t i = (size_t)neg;
        if (i == n)
                return "a parameter is not a number";
        uint64_t x = 0, lim = neg    ? (uint64_t)INT64_MAX + 1
                              : sign ? (uint64_t)INT64_MAX
                                     : UINT64_MAX;
        for (; i < n; i++) {
                if (t[i] < '0' || t[i] > '9')
                        return sign ? "a parameter is not a decimal integer"
                                    : "a parameter is not an unsigned decimal integer";
                unsigned d = (unsigned)(t[i] - '0');
                if (x > (lim - d) / 10)
                        return "a parameter is out of range";
                x = x * 10 + d;
        }
        *v = neg ? (uint64_t)0 - x : x;
        return NULL;
}

static int ptf_probe_takes(const uint8_t *head, size_t n)
{
        size_t k = sizeof begin_line - 1;
        if (n < k || memcmp(head, begin_line, k) != 0)
                return 0;
        return n == k || head[k] == '\n' ||
               (head[k] == '\r' && (n == k + 1 || head[k + 1] == '\n'));
}

static int ptf_probe(const uint8_t *head, size_t n)
{
        return ptf_probe_takes(head, n) ? TM_BID_PTF : 0;
}

static int ptf_open(const uint8_t *head, size_t n, const char *path, void **ctx,
                    struct tm_schema *schema, struct tm_rstate *st, struct tm_err *err)
{
        (void)head;
        (void)n;
        (void)path;
        (void)err;
        *ctx = NULL;
        *schema = tm_schema_ptf;
        memset(st->b, 0, sizeof(struct ptf_state));
        return 0;
}

static void ptf_close(void *ctx)
{
        (void)ctx;
}

static int ptf_state_ok(const void *ctx, const struct tm_rstate *st)
{
        (void)ctx;
        const struct ptf_state *s = (const struct ptf_state *)st->b;
        return s->phase <= PH_AFTER && s->zero == 0 && (s->line == 0) == (s->phase == PH_BEFORE);
}

static int ptf_fail(struct tm_err *err, uint64_t off, uint64_t line, const char *what)
{
        return tm_err_set(err, -EIO, "raw offset %llu: ptf line %llu: %s", (unsigned long long)off,
                          (unsigned long long)line, what);
}

/* fo: the numbers before the name, the list into scratch[*used..); the
 * name is the line's last LengthOfClassName bytes, after a blank. */
static const char *parse_fo(const char *s, size_t len, size_t pos, struct tm_rec *r, size_t *used)
{
        const char *t;
        size_t tl;
        for (unsigned p = 0; p < 6; p++) {
                if (!next_tok(s, len, &pos, &t, &tl))
                        return "fo: too few parameters";
                const char *bad = parse_num(t, tl, 0, &r->v[p]);
                if (bad)
                        return bad;
        }
        uint64_t nd = r->v[3], na = r->v[4], nl = r->v[5];
        if (nd > TM_PTF_LIST_MAX || na > TM_PTF_LIST_MAX || nd + 2 * na > TM_PTF_LIST_MAX)
                return "fo: more than 4096 member format ids";
        uint64_t nlist = nd + 2 * na;
        if (nlist > TM_PTF_LIST_MAX - *used) {
                r->kind = TM_PK_N; /* the caller ends its batch here */
                return NULL;
        }
        if (nl > len - pos || (nl > 0 && (nl + 1 > len - pos || !is_blank(s[len - nl - 1]))))
                return "fo: the line does not end in a name of LengthOfClassName bytes after a "
                       "blank";
        size_t nums_end = len - (size_t)nl;
        uint64_t *scratch = tm_tls_get(&scratch_slot);
        if (!scratch)
                return "out of memory for the member format ids";
        uint64_t *list = scratch + *used;
        for (uint64_t i = 0; i < nlist; i++) {
                if (!next_tok(s, nums_end, &pos, &t, &tl))
                        return "fo: fewer member format ids than NumberOfDataMembers and "
                               "NumberOfArrayMembers give";
                uint64_t v;
                const char *bad = parse_num(t, tl, 0, &v);
                if (bad)
                        return bad;
                /* 8-byte little-endian values (record.h) */
                uint8_t *b = (uint8_t *)&list[i];
                for (unsigned k = 0; k < 8; k++)
                        b[k] = (uint8_t)(v >> (8 * k));
        }
        if (next_tok(s, nums_end, &pos, &t, &tl))
                return "fo: more numbers than NumberOfDataMembers and NumberOfArrayMembers give "
                       "(or a LengthOfClassName shorter than the name)";
        r->v[6] = nlist;
        r->var[0] = (const uint8_t *)list;
        r->v[7] = nl;
        r->var[1] = (const uint8_t *)s + nums_end;
        *used += (size_t)nlist;
        return NULL;
}

/* An event line (no line end) into *r; NULL, or what is wrong. *list_used
 * counts scratch values taken; an fo whose list does not fit leaves r->kind
 * TM_PK_N and returns NULL. */
static const char *parse_event(const char *s, size_t len, struct tm_rec *r, size_t *list_used)
{
        size_t pos = 0, tl;
        const char *t;
        if (!next_tok(s, len, &pos, &t, &tl))
                return "an empty line (the grammar has none)";
        if (t[0] >= '0' && t[0] <= '9') { /* the optional event id */
                uint64_t id;
                const char *bad = parse_num(t, tl, 0, &id);
                if (bad)
                        return "the event id is not an unsigned decimal integer";
                if (!next_tok(s, len, &pos, &t, &tl))
                        return "an event id without an event";
        }
        int k = -1;
        for (unsigned i = TM_PK_FO; i < TM_PK_N; i++)
                if (strlen(tm_schema_ptf.kind[i].name) == tl &&
                    memcmp(tm_schema_ptf.kind[i].name, t, tl) == 0)
                        k = (int)i;
        if (k < 0)
                return "unknown event type (Table 1: fo co cao do sr gr dr dw adr adw er ew ts te)";
        memset(r, 0, sizeof *r);
        r->kind = (uint32_t)k;
        if (k == TM_PK_FO)
                return parse_fo(s, len, pos, r, list_used);
        const struct tm_kind *kd = &tm_schema_ptf.kind[k];
        for (unsigned p = 0; p < kd->nfields; p++) {
                if (!next_tok(s, len, &pos, &t, &tl))
                        return "too few parameters for the event type";
                const char *bad = parse_num(t, tl, kd->field[p] == TM_PF_OFFSET, &r->v[p]);
                if (bad)
                        return bad;
        }
        if (next_tok(s, len, &pos, &t, &tl))
                return "too many parameters for the event type";
        return NULL;
}

static int line_is(const char *s, size_t len, const char *lit)
{
        return strlen(lit) == len && memcmp(s, lit, len) == 0;
}

/* The next whole line at in[pos..len): its length without the line end in
 * *ll, the line end's in *el, and 1; 0 when it is not whole yet; -EIO for
 * a line too long or a last line without its newline at eof. */
static int next_line(const uint8_t *in, size_t len, size_t pos, int eof, size_t *ll, size_t *el,
                     uint64_t raw_off, uint64_t line, struct tm_err *err)
{
        size_t avail = len - pos, look = avail < TM_PTF_LINE_MAX + 2 ? avail : TM_PTF_LINE_MAX + 2;
        const uint8_t *nl = memchr(in + pos, '\n', look);
        if (nl) {
                *ll = (size_t)(nl - (in + pos));
                *el = 1;
                if (*ll > 0 && nl[-1] == '\r') {
                        --*ll;
                        *el = 2;
                }
                if (*ll <= TM_PTF_LINE_MAX)
                        return 1;
        }
        if (look > TM_PTF_LINE_MAX + 1 || nl)
                return ptf_fail(err, raw_off + pos, line, "line longer than 65535 bytes");
        if (eof && avail)
                return ptf_fail(err, raw_off + pos, line,
                                "truncated: the last line has no newline");
        return 0;
}

static ssize_t ptf_decode(void *ctx, struct tm_rstate *st, const uint8_t *in, size_t len, int eof,
                          uint64_t raw_off, size_t *used, struct tm_rec *out, size_t cap,
                          struct tm_err *err)
{
        (void)ctx;
        struct ptf_state *s = (struct ptf_state *)st->b;
        size_t pos = 0, n = 0, ll = 0, el = 0, list_used = 0;
        int rc = 0;
        while (n < cap &&
               (rc = next_line(in, len, pos, eof, &ll, &el, raw_off, s->line + 1, err)) > 0) {
                const char *text = (const char *)in + pos;
                uint64_t off = raw_off + pos, line = s->line + 1;
                struct tm_rec *r = &out[n];
                const char *bad = NULL;
                if (s->phase == PH_BEFORE) {
                        if (!line_is(text, ll, begin_line))
                                bad = "the trace does not start with 'Trace begin'";
                        memset(r, 0, sizeof *r);
                        r->v[0] = 5;
                        r->var[0] = (const uint8_t *)text + 6;
                        s->phase = bad ? PH_BEFORE : PH_EVENTS;
                } else if (s->phase == PH_AFTER) {
                        bad = "a line after 'Trace end'";
                } else if (line_is(text, ll, end_line)) {
                        memset(r, 0, sizeof *r);
                        r->v[0] = 3;
                        r->var[0] = (const uint8_t *)text + 6;
                        s->phase = PH_AFTER;
                } else {
                        bad = parse_event(text, ll, r, &list_used);
                        if (!bad && r->kind == TM_PK_N)
                                break; /* its list waits for the next call */
                }
                if (bad && n > 0)
                        break; /* the records before it first; the next call fails */
                if (bad)
                        return ptf_fail(err, off, line, bad);
                n++;
                s->line++;
                pos += ll + el;
        }
        if (n == 0 && rc < 0)
                return rc; /* else the records before it first */
        if (n == 0 && rc == 0 && eof && pos == len && s->phase != PH_AFTER)
                return ptf_fail(err, raw_off + pos, s->line + 1,
                                s->phase == PH_BEFORE ? "truncated: no 'Trace begin'"
                                                      : "truncated: no 'Trace end'");
        *used = pos;
        return (ssize_t)n;
}

void tm_ptf_enc_schema(struct tm_schema *s)
{
        *s = tm_schema_ptf;
}

const struct tm_rcodec tm_rcodec_ptf = {
    .name = "ptf",
    .suffix = ".ptf",
    .family = &tm_family_object,
    .probe = ptf_probe,
    .open = ptf_open,
    .close = ptf_close,
    .state_size = sizeof(struct ptf_state),
    .state_ok = ptf_state_ok,
    .decode = ptf_decode,
    .enc_open = tm_ptf_enc_open, /* ptf_write.c; one unnamed encoding */
    .enc_put = tm_ptf_enc_put,
    .enc_finish = tm_ptf_enc_finish,
    .enc_free = tm_ptf_enc_free,
    .enc_schema = tm_ptf_enc_schema,
    .enc_fit = tm_ptf_enc_fit,
};
