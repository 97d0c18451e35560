/* Bound formats (bound.h): rows of data made record codecs that run the
 * Meta-TF engine with no Meta-TF header.
 *
 * tm_rcodec's probe and open are not given their row, so each of the
 * TM_BOUND_MAX slots has its own two thin wrappers (SLOT below) that call
 * the generic functions with the slot; everything after open() goes
 * through the context, which is Meta-TF's, so decode, close and state_ok
 * are Meta-TF's own. */
#include "bound.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/tm_side.h"
#include "metatf_impl.h"

struct slot {
        struct tm_bound row;
        uint32_t rec; /* bytes of every record, 0 if they differ (no size rule) */
        struct tm_rcodec codec;
};

/* Taken one by one as rows are made (under slot_lock), never given back:
 * a slot's row and codec do not change once taken. */
static struct slot slots[TM_BOUND_MAX];
static unsigned nslots;
static pthread_mutex_t slot_lock = PTHREAD_MUTEX_INITIALIZER;

/* ---- probe and open ---- */

/* Could head (the first n raw bytes; n < TM_RHEAD_MIN only when that is
 * the whole stream) be row s's? */
static int bound_probe(const struct slot *s, const uint8_t *head, size_t n)
{
        const struct tm_bound *b = &s->row;
        if (b->magic_len && (n < (size_t)b->magic_off + b->magic_len ||
                             memcmp(head + b->magic_off, b->magic, b->magic_len) != 0))
                return 0;
        if (b->size_rule && n < TM_RHEAD_MIN && /* else the size is not known: decode finds a cut */
            !(n >= b->header && (n - b->header) % s->rec == 0 && (n > b->header || b->magic_len)))
                return 0;
        if (b->check && !b->check(head, n))
                return 0;
        return b->magic_len ? TM_BID_BOUND_MAGIC : b->check ? TM_BID_SIZE_CHECKED : TM_BID_SIZE;
}

static int bound_open(const struct slot *s, const uint8_t *head, size_t n, const char *path,
                      void **ctx, struct tm_schema *schema, struct tm_rstate *st,
                      struct tm_err *err)
{
        (void)head;
        (void)path; /* the row names the DTD, not the archive: none beside it */
        *ctx = NULL;
        if (n < s->row.header)
                return tm_err_set(err, -EIO, "raw offset %zu: truncated header (%s: %u bytes)", n,
                                  s->row.name, (unsigned)s->row.header);
        int ret = mtf_open_bound(s->row.dtd, s->row.byteorder, ctx, schema, st, err);
        if (ret < 0)
                return tm_err_prefix(err, "raw offset 0: format %s", s->row.name);
        return (int)s->row.header;
}

#define SLOT(k)                                                                                    \
        static int probe_##k(const uint8_t *h, size_t n)                                           \
        {                                                                                          \
                return bound_probe(&slots[k], h, n);                                               \
        }                                                                                          \
        static int open_##k(const uint8_t *h, size_t n, const char *p, void **c,                   \
                            struct tm_schema *s, struct tm_rstate *st, struct tm_err *e)           \
        {                                                                                          \
                return bound_open(&slots[k], h, n, p, c, s, st, e);                                \
        }
SLOT(0)
SLOT(1)
SLOT(2)
SLOT(3)
SLOT(4)
SLOT(5)
SLOT(6)
SLOT(7)
SLOT(8)
SLOT(9)
SLOT(10)
SLOT(11)
SLOT(12)
SLOT(13)
SLOT(14)
SLOT(15)
// clang-format off
#define SLOT_FNS(k) {probe_##k, open_##k}
// clang-format on
static const struct {
        int (*probe)(const uint8_t *, size_t);
        int (*open)(const uint8_t *, size_t, const char *, void **, struct tm_schema *,
                    struct tm_rstate *, struct tm_err *);
} slot_fns[] = {
    SLOT_FNS(0),  SLOT_FNS(1),  SLOT_FNS(2),  SLOT_FNS(3),  SLOT_FNS(4),  SLOT_FNS(5),
    SLOT_FNS(6),  SLOT_FNS(7),  SLOT_FNS(8),  SLOT_FNS(9),  SLOT_FNS(10), SLOT_FNS(11),
    SLOT_FNS(12), SLOT_FNS(13), SLOT_FNS(14), SLOT_FNS(15),
};
_Static_assert(sizeof slot_fns / sizeof slot_fns[0] == TM_BOUND_MAX, "a SLOT per bound row");

/* ---- making a row a codec ---- */

/* Bytes of every data record of the layout, or 0 when they differ or
 * vary (variable bytes, repeats). */
static uint32_t record_size(const struct mtf_layout *l)
{
        uint32_t size = 0;
        for (unsigned k = 0; k < l->nkinds; k++) {
                const struct mtf_kind *mk = &l->kind[k];
                if (mk->role != MTF_R_DATA)
                        continue;
                uint32_t n = l->tag_width;
                for (unsigned i = 1; i < mk->nleaves; i++) {
                        const struct mtf_leaf *lf = &mk->leaf[i];
                        if (lf->width_of >= 0 || lf->rep || lf->in_rep)
                                return 0;
                        if (!mtf_interp_stores_nothing(lf->interp))
                                n += lf->width;
                }
                if (size && n != size)
                        return 0;
                size = n;
        }
        return size;
}

static int name_ok(const char *name)
{
        size_t n = strnlen(name, TM_NAME_MAX);
        if (n == 0 || n >= TM_NAME_MAX)
                return 0;
        for (const char *c = name; *c; c++)
                if (!isalnum((unsigned char)*c) && *c != '_' && *c != '-')
                        return 0;
        return 1;
}

static int dtd_name_ok(const char *dtd)
{
        size_t n = strnlen(dtd, TM_BOUND_DTD_MAX);
        if (n == 0 || n >= TM_BOUND_DTD_MAX || strcmp(dtd, ".") == 0 || strcmp(dtd, "..") == 0)
                return 0;
        for (const char *c = dtd; *c; c++)
                if ((unsigned char)*c < 0x21 || *c == 0x7f || *c == '/')
                        return 0;
        return 1;
}

/* The row's own fields, before its DTD is looked at. */
static int check_row(const struct tm_bound *b, struct tm_err *err)
{
        const char *why = NULL;
        if (!name_ok(b->name))
                why = "its name must be 1..31 letters, digits, '_' or '-'";
        else if (!dtd_name_ok(b->dtd))
                why = "its DTD must be a file name (no '/', no spaces)";
        else if (b->byteorder != MTF_LE && b->byteorder != MTF_BE)
                why = "its byte order must be little or big";
        else if (!b->magic_len && !b->size_rule)
                why = "it needs a probe: a magic, the size rule or both";
        else if (b->magic_len > TM_BOUND_MAGIC_MAX ||
                 (size_t)b->magic_off + b->magic_len > TM_RHEAD_MIN)
                why = "its magic must lie in the first 4096 bytes";
        else if (b->header > TM_BOUND_HEADER_MAX)
                why = "its header is over 1 MiB";
        if (why)
                return tm_err_set(err, -EINVAL, "format %.*s: %s", TM_NAME_MAX - 1, b->name, why);
        return 0;
}

int tm_bound_codec(const struct tm_bound *b, const struct tm_rcodec **out, struct tm_err *err)
{
        int ret = check_row(b, err);
        if (ret < 0)
                return ret;
        void *ctx;
        struct tm_schema *schema = malloc(sizeof *schema);
        struct tm_rstate *st = malloc(sizeof *st);
        ret = schema && st ? mtf_open_bound(b->dtd, b->byteorder, &ctx, schema, st, err)
                           : tm_err_set(err, -ENOMEM, "out of memory");
        free(schema);
        free(st);
        if (ret < 0)
                return tm_err_prefix(err, "format %s", b->name);
        uint32_t rec = record_size(&((const struct mtf_ctx *)ctx)->lay);
        tm_rcodec_metatf.close(ctx);
        if (b->size_rule && rec == 0)
                return tm_err_set(err, -EINVAL,
                                  "format %s: the size rule needs records of one fixed size, and "
                                  "%s's differ or vary",
                                  b->name, b->dtd);
        pthread_mutex_lock(&slot_lock);
        unsigned k = nslots;
        if (k < TM_BOUND_MAX)
                nslots++;
        pthread_mutex_unlock(&slot_lock);
        if (k >= TM_BOUND_MAX)
                return tm_err_set(err, -ENOSPC, "format %s: more than %u bound formats", b->name,
                                  TM_BOUND_MAX);
        struct slot *s = &slots[k];
        s->row = *b;
        s->rec = rec;
        s->codec = (struct tm_rcodec){
            .name = s->row.name,
            .family = NULL, /* as Meta-TF's: the schema's, by claims() */
            .probe = slot_fns[k].probe,
            .head_max = b->header > TM_RHEAD_MIN ? b->header : 0,
            .open = slot_fns[k].open,
            .close = tm_rcodec_metatf.close,
            .state_size = tm_rcodec_metatf.state_size,
            .state_ok = tm_rcodec_metatf.state_ok,
            .decode = tm_rcodec_metatf.decode,
        };
        *out = &s->codec;
        return 0;
}

/* ---- description files ---- */

struct line {
        const char *file;
        unsigned no;
        struct tm_err *err;
};

static int lerr(const struct line *l, const char *what, const char *arg)
{
        return tm_err_set(l->err, -EINVAL, "%s:%u: %s%s", l->file, l->no, what, arg);
}

static int hexval(int c)
{
        if (c >= '0' && c <= '9')
                return c - '0';
        c = tolower(c);
        return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

static int parse_num(const struct line *l, const char *v, uint32_t max, uint32_t *out)
{
        char *end;
        if (!isdigit((unsigned char)*v))
                return lerr(l, "not a number: ", v);
        errno = 0;
        unsigned long long n = strtoull(v, &end, 0);
        if (errno || *end || n > max)
                return lerr(l, "not a number in range: ", v);
        *out = (uint32_t)n;
        return 0;
}

/* "..." with \\, \", \xHH; or 0x and an even number of hex digits. */
static int parse_magic(const struct line *l, const char *v, struct tm_bound *b)
{
        unsigned n = 0;
        if (v[0] == '0' && (v[1] == 'x' || v[1] == 'X')) {
                for (v += 2; v[0] && v[1] && n < TM_BOUND_MAGIC_MAX; v += 2) {
                        int hi = hexval(v[0]), lo = hexval(v[1]);
                        if (hi < 0 || lo < 0)
                                return lerr(l, "magic: not a hex digit at ", v);
                        b->magic[n++] = (uint8_t)(hi << 4 | lo);
                }
                if (*v)
                        return lerr(l, "magic: an odd number of hex digits or over 16 bytes", "");
        } else if (v[0] == '"') {
                for (v++; *v && *v != '"'; v++) {
                        if (n >= TM_BOUND_MAGIC_MAX)
                                return lerr(l, "magic: over 16 bytes", "");
                        int c = (unsigned char)*v;
                        if (c == '\\' && (v[1] == '\\' || v[1] == '"'))
                                c = (unsigned char)*++v;
                        else if (c == '\\' && v[1] == 'x' && hexval(v[2]) >= 0 &&
                                 hexval(v[3]) >= 0) {
                                c = hexval(v[2]) << 4 | hexval(v[3]);
                                v += 3;
                        } else if (c == '\\')
                                return lerr(l, "magic: escapes are \\\\, \\\" and \\xHH: ", v);
                        b->magic[n++] = (uint8_t)c;
                }
                if (*v != '"' || v[1])
                        return lerr(l, "magic: a string must end with '\"' and the line", "");
        } else {
                return lerr(l, "magic: a \"string\" or 0x and hex digits: ", v);
        }
        if (n == 0)
                return lerr(l, "magic: empty", "");
        b->magic_len = (uint8_t)n;
        return 0;
}

static int parse_copy(const struct line *l, const char *v, char *dst, size_t cap)
{
        if (strlen(v) >= cap)
                return lerr(l, "too long: ", v);
        memcpy(dst, v, strlen(v) + 1);
        return 0;
}

enum { K_NAME, K_DTD, K_MAGIC, K_OFFSET, K_SIZE, K_BYTEORDER, K_HEADER, K_N };
static const char *const keys[K_N] = {"name", "dtd",       "magic", "offset",
                                      "size", "byteorder", "header"};

static int parse_pair(const struct line *l, unsigned k, const char *v, struct tm_bound *b)
{
        switch (k) {
        case K_NAME:
                return parse_copy(l, v, b->name, sizeof b->name);
        case K_DTD:
                return parse_copy(l, v, b->dtd, sizeof b->dtd);
        case K_MAGIC:
                return parse_magic(l, v, b);
        case K_OFFSET:
                return parse_num(l, v, TM_RHEAD_MIN, &b->magic_off);
        case K_SIZE:
                if (strcmp(v, "records") != 0)
                        return lerr(l, "size: the only rule is 'records', not ", v);
                b->size_rule = 1;
                return 0;
        case K_BYTEORDER:
                if (strcmp(v, "little") != 0 && strcmp(v, "big") != 0)
                        return lerr(l, "byteorder: little or big, not ", v);
                b->byteorder = strcmp(v, "little") == 0 ? MTF_LE : MTF_BE;
                return 0;
        default:
                return parse_num(l, v, TM_BOUND_HEADER_MAX, &b->header);
        }
}

/* One line (NUL-terminated, no newline) into b; seen marks the keys. */
static int parse_line(const struct line *l, char *s, struct tm_bound *b, unsigned *seen)
{
        int quoted = 0;
        for (char *c = s; *c; c++) { /* a comment ends the line, outside quotes */
                if (*c == '"' && (c == s || c[-1] != '\\'))
                        quoted = !quoted;
                if (*c == '#' && !quoted) {
                        *c = 0;
                        break;
                }
        }
        size_t n = strlen(s);
        while (n && isspace((unsigned char)s[n - 1]))
                s[--n] = 0;
        while (isspace((unsigned char)*s))
                s++, n--;
        if (n == 0)
                return 0;
        if (s[n - 1] != ';')
                return lerr(l, "expected ';' at the end of the line", "");
        s[--n] = 0;
        char *eq = strchr(s, '=');
        if (!eq)
                return lerr(l, "expected 'key = value;'", "");
        char *v = eq + 1, *ke = eq;
        while (ke > s && isspace((unsigned char)ke[-1]))
                ke--;
        *ke = 0;
        while (isspace((unsigned char)*v))
                v++;
        for (size_t e = strlen(v); e && isspace((unsigned char)v[e - 1]);)
                v[--e] = 0;
        unsigned k = 0;
        while (k < K_N && strcmp(keys[k], s) != 0)
                k++;
        if (k == K_N)
                return lerr(l,
                            "unknown key (name, dtd, magic, offset, size, byteorder, header): ", s);
        if (*seen & 1u << k)
                return lerr(l, "set twice: ", s);
        *seen |= 1u << k;
        return parse_pair(l, k, v, b);
}

int tm_bound_parse(const char *file, const char *text, size_t len, struct tm_bound *b,
                   struct tm_err *err)
{
        memset(b, 0, sizeof *b);
        if (len > TM_BOUND_FILE_MAX)
                return tm_err_set(err, -EINVAL, "%s: over %u bytes", file, TM_BOUND_FILE_MAX);
        if (memchr(text, 0, len))
                return tm_err_set(err, -EINVAL, "%s: a NUL byte: not a description", file);
        char buf[TM_BOUND_FILE_MAX + 1];
        unsigned seen = 0;
        struct line l = {.file = file, .err = err};
        for (size_t at = 0; at < len;) {
                const char *nl = memchr(text + at, '\n', len - at);
                size_t n = nl ? (size_t)(nl - (text + at)) : len - at;
                memcpy(buf, text + at, n);
                buf[n] = 0;
                l.no++;
                int ret = parse_line(&l, buf, b, &seen);
                if (ret < 0)
                        return ret;
                at += n + 1;
        }
        static const unsigned need[] = {K_NAME, K_DTD, K_BYTEORDER};
        for (unsigned i = 0; i < sizeof need / sizeof need[0]; i++)
                if (!(seen & 1u << need[i]))
                        return tm_err_set(err, -EINVAL, "%s: no '%s = ...;'", file, keys[need[i]]);
        if (!(seen & (1u << K_MAGIC | 1u << K_SIZE)))
                return tm_err_set(err, -EINVAL, "%s: no probe: 'magic = ...;' or 'size = records;'",
                                  file);
        if ((seen & 1u << K_OFFSET) && !(seen & 1u << K_MAGIC))
                return tm_err_set(err, -EINVAL, "%s: an offset with no magic", file);
        return 0;
}

int tm_bound_read_file(const char *path, struct tm_bound *b, struct tm_err *err)
{
        int fd;
        struct stat sb;
        int ret = tm_side_open(path, NULL, TM_SIDE_ANY_OWNER, &fd, &sb, err);
        if (ret < 0)
                return ret;
        char text[TM_BOUND_FILE_MAX];
        ssize_t n = tm_side_read(fd, &sb, path, text, sizeof text, err);
        close(fd);
        if (n < 0)
                return (int)n;
        return tm_bound_parse(path, text, (size_t)n, b, err);
}
