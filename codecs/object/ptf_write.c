/* PTF's ASCII form from object records: the writer of the ptf row
 * (ptf.h; docs/formats/ptf.md, "Writing the ASCII form").
 *
 * A line is the record's line in the text form (codecs/record/text.h),
 * which for tm_schema_ptf is PTF's own event line: the abbreviation, the
 * parameters separated by one space, fo's member format ids as tokens of
 * their own and its class name as it is (TM_PTF_SHOW_WORDS). So what this
 * writes is the ascii view of the records, byte for byte, and the ASCII
 * decoder reads it back to the same records.
 *
 * What the grammar needs and records may lack (a binary trace need not
 * hold the Trace markers) is added: "Trace begin" before the first record
 * unless it is that, "Trace end" after the last unless it is that. What
 * the grammar cannot hold is refused, -EINVAL naming the record: a marker
 * other than begin and end, a second begin, a record after the end, an fo
 * whose counts disagree with its list or its name, a class name with a
 * '\n' or ending in '\r', a line longer than TM_PTF_LINE_MAX. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../record/text.h"
#include "ptf.h"

#define BUF_SIZE (1u << 16) /* bytes handed to the sink at once, at least */

struct tm_renc {
        tm_rsink sink;
        void *arg;
        int began, ended; /* a Trace begin / end written */
        size_t len;       /* bytes in buf */
        char *buf;        /* room for BUF_SIZE, one longest line and both markers */
};

static const char begin_text[] = "Trace begin\n", end_text[] = "Trace end\n";

static int flush(struct tm_renc *e, struct tm_err *err)
{
        int rc = e->len ? e->sink(e->arg, e->buf, e->len) : 0;
        e->len = 0;
        return rc < 0 ? tm_err_set(err, rc, "ptf: writing failed") : 0;
}

static void put_text(struct tm_renc *e, const char *t, size_t n)
{
        memcpy(e->buf + e->len, t, n);
        e->len += n;
}

int tm_ptf_enc_open(const char *enc, tm_rsink sink, void *arg, struct tm_renc **out,
                    struct tm_err *err)
{
        if (enc)
                return tm_err_set(err, -EINVAL, "ptf: no encoding named %s", enc);
        struct tm_renc *e = calloc(1, sizeof *e);
        size_t cap = BUF_SIZE + tm_text_line_max(&tm_schema_ptf, TM_PTF_LINE_MAX) +
                     sizeof begin_text + sizeof end_text;
        if (e)
                e->buf = malloc(cap);
        if (!e || !e->buf) {
                free(e);
                return tm_err_set(err, -ENOMEM, "ptf: out of memory");
        }
        e->sink = sink;
        e->arg = arg;
        *out = e;
        return 0;
}

static int refuse(struct tm_err *err, uint64_t idx, const char *what)
{
        return tm_err_set(err, -EINVAL, "record %llu: ptf text cannot hold %s",
                          (unsigned long long)idx, what);
}

/* What in the Trace record r the grammar cannot hold, or NULL; sets the
 * marker's effect on e. */
static const char *marker_bad(struct tm_renc *e, const struct tm_rec *r)
{
        if (r->v[0] == 5 && memcmp(r->var[0], "begin", 5) == 0) {
                if (e->began)
                        return "a second 'Trace begin'";
                e->began = 1;
                return NULL;
        }
        if (r->v[0] == 3 && memcmp(r->var[0], "end", 3) == 0) {
                e->ended = 1;
                return NULL;
        }
        return "a Trace marker other than 'begin' and 'end'";
}

/* What in fo record r the grammar cannot hold, or NULL: its list must be
 * NumberOfDataMembers + 2 x NumberOfArrayMembers ids, its name
 * LengthOfClassName bytes with no line end in them. */
static const char *fo_bad(const struct tm_rec *r)
{
        uint64_t nd = r->v[3], na = r->v[4], nlist = r->v[6], nl = r->v[7];
        if (nd > TM_PTF_LIST_MAX || na > TM_PTF_LIST_MAX || nlist != nd + 2 * na)
                return "an fo whose MemberFormatIds are not NumberOfDataMembers + 2 x "
                       "NumberOfArrayMembers ids";
        if (nlist > TM_PTF_LIST_MAX)
                return "an fo of more than 4096 member format ids";
        if (r->v[5] != nl)
                return "an fo whose LengthOfClassName is not its name's length";
        if (nl > TM_PTF_LINE_MAX)
                return "a class name longer than a line";
        const uint8_t *name = r->var[1];
        if (nl && (memchr(name, '\n', (size_t)nl) || name[nl - 1] == '\r'))
                return "a class name with a line end in it";
        return NULL;
}

static int put_one(struct tm_renc *e, const struct tm_rec *r, uint64_t idx, struct tm_err *err)
{
        if (r->kind >= TM_PK_N)
                return tm_err_set(err, -EINVAL, "record %llu: no kind %u in the ptf schema",
                                  (unsigned long long)idx, r->kind);
        if (e->ended)
                return refuse(err, idx, "a record after 'Trace end'");
        const char *bad = r->kind == TM_PK_TRACE ? marker_bad(e, r)
                          : r->kind == TM_PK_FO  ? fo_bad(r)
                                                 : NULL;
        if (bad)
                return refuse(err, idx, bad);
        if (e->len > BUF_SIZE) {
                int rc = flush(e, err);
                if (rc < 0)
                        return rc;
        }
        if (!e->began) { /* the first record and not the marker */
                put_text(e, begin_text, sizeof begin_text - 1);
                e->began = 1;
        }
        size_t n = tm_text_line(e->buf + e->len, &tm_schema_ptf, r);
        if (n - 1 > TM_PTF_LINE_MAX)
                return refuse(err, idx, "a line longer than 65535 bytes");
        e->len += n;
        return 0;
}

int tm_ptf_enc_put(struct tm_renc *e, const struct tm_rec *r, size_t n, uint64_t idx,
                   struct tm_err *err)
{
        return tm_renc_each(put_one, e, r, n, idx, err);
}

void tm_ptf_enc_free(struct tm_renc *e)
{
        if (e)
                free(e->buf);
        free(e);
}

int tm_ptf_enc_finish(struct tm_renc *e, struct tm_err *err)
{
        if (!e->began)
                put_text(e, begin_text, sizeof begin_text - 1);
        if (!e->ended)
                put_text(e, end_text, sizeof end_text - 1);
        int rc = flush(e, err);
        tm_ptf_enc_free(e);
        return rc;
}

void tm_ptf_enc_fit(struct tm_rec *r, size_t n)
{
        static const uint8_t begin[] = "begin", end[] = "end";
        for (size_t i = 0; i < n; i++) {
                if (r[i].kind == TM_PK_TRACE || i == 0 || i == n - 1) {
                        int mark = i == 0 || i == n - 1;
                        memset(&r[i], 0, sizeof r[i]);
                        r[i].kind = mark ? TM_PK_TRACE : TM_PK_GR;
                        r[i].v[0] = !mark ? 0 : i == 0 ? 5 : 3;
                        r[i].var[0] = i == 0 ? begin : end;
                } else if (r[i].kind == TM_PK_FO) {
                        r[i].v[4] = r[i].v[6] / 4;
                        r[i].v[3] = r[i].v[6] - 2 * r[i].v[4];
                        r[i].v[5] = r[i].v[7];
                }
        }
}
