/* Meta-TF: probe, open (the header, finding and compiling the DTD, the
 * schema, the initial state), close. Records: mtf_decode.c. */
#include "metatf_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/tm_side.h"
#include "../heap/heap.h"
#include "../record/family.h"

static int mtf_probe(const uint8_t *head, size_t n)
{
        return n >= 4 && memcmp(head, MTF_MAGIC, 4) == 0 ? TM_BID_MAGIC : 0;
}

/* ---- finding the DTD ---- */

/* Read the side file opened on fd (rc its open's result, sb its stat,
 * path its name for messages) into buf (room for MTF_DTD_TEXT_MAX
 * bytes), and name it in found. Returns the length + 1 (an empty file is
 * found, not absent), 0 when nothing is at the name, or a negative errno
 * with err saying why the file is not used. */
static ssize_t dtd_read(int rc, int fd, const struct stat *sb, const char *path, char *buf,
                        char *found, size_t fcap, struct tm_err *err)
{
        if (rc == -ENOENT || rc == -ENOTDIR)
                return 0;
        if (rc < 0)
                return rc;
        ssize_t n = tm_side_read(fd, sb, path, buf, MTF_DTD_TEXT_MAX, err);
        close(fd);
        if (n < 0)
                return n;
        snprintf(found, fcap, "%s", path);
        return n + 1;
}

/* path (cap bytes) = the first dlen bytes of dir, '/', base; 0 when it
 * does not fit (nothing is looked up then). */
static int dtd_path(char *path, size_t cap, const char *dir, size_t dlen, const char *base)
{
        return dlen > 0 && snprintf(path, cap, "%.*s/%s", (int)dlen, dir, base) < (int)cap;
}

/* The directory part of the archive's path (".", when it has none): its
 * first *dlen bytes of the returned string. */
static const char *archive_dir(const char *archive, size_t *dlen)
{
        const char *slash = strrchr(archive, '/');
        *dlen = slash ? (size_t)(slash - archive) + (slash == archive) : 1;
        return slash ? archive : ".";
}

/* The DTD base beside the archive a, as try_path, but opened by name in
 * a->dir_fd (tm_side_openat: the directory the caller reached, not
 * looked up again) and believed only when no one but whoever could change
 * the archive may write it (tm_side_trust_at; with a->trust_group,
 * --trust-group-dtd, also a lab group the caller is in). */
static ssize_t try_beside(const struct tm_rarchive *a, const char *base, char *buf, char *found,
                          size_t fcap, struct tm_err *err)
{
        size_t dlen;
        const char *dir = archive_dir(a->path, &dlen);
        char path[4096];
        if (a->dir_fd < 0 || !dtd_path(path, sizeof path, dir, dlen, base))
                return 0;
        struct tm_side_trust tr; /* whoever could change the archive */
        tm_side_trust_at(a->dir_fd, a->sb, a->trust_group, &tr);
        int fd = -1;
        struct stat sb;
        int rc = tm_side_openat(a->dir_fd, base, path, &tr, 0, &fd, &sb, err);
        return dtd_read(rc, fd, &sb, path, buf, found, fcap, err);
}

/* Read the DTD dir/base (dlen bytes of dir), a directory of TM_DTD_PATH
 * (the caller named it: any owner), into buf (room for MTF_DTD_TEXT_MAX
 * bytes) through tm_side_open. Nothing at the name can block or redirect
 * it (a FIFO, a symlink, a device are refused). Returns as dtd_read. */
static ssize_t try_path(const char *dir, size_t dlen, const char *base, char *buf, char *found,
                        size_t fcap, struct tm_err *err)
{
        char path[4096];
        if (!dtd_path(path, sizeof path, dir, dlen, base))
                return 0;
        int fd = -1;
        struct stat sb;
        int rc = tm_side_open(path, NULL, TM_SIDE_ANY_OWNER, &fd, &sb, err);
        return dtd_read(rc, fd, &sb, path, buf, found, fcap, err);
}

/* The DTD text for the name in the header into buf (cap bytes): beside
 * the archive a (NULL: none), built in, in TM_DTD_PATH
 * (docs/side-files.md). A DTD beside the archive that cannot be used (not
 * a regular file, a symlink, another user's, too big) is passed over as a
 * missing one would be, and *note says why (code 0 when nothing was
 * passed over). Returns its length, or a negative errno with err naming
 * every place looked at. */
static ssize_t find_dtd(const char *name, const struct tm_rarchive *a, char *buf, size_t cap,
                        char *found, size_t fcap, struct tm_err *note, struct tm_err *err)
{
        const char *base = strrchr(name, '/');
        base = base ? base + 1 : name;
        int bad = *base == '\0' || strcmp(base, ".") == 0 || strcmp(base, "..") == 0;
        for (const char *c = base; *c; c++)
                bad |= (unsigned char)*c < 0x20 || *c == 0x7f;
        if (bad)
                return tm_err_set(err, -EIO, "raw offset %d: DTD name '%s' has no usable file name",
                                  MTF_FIXED_HEADER, name);
        memset(note, 0, sizeof *note);
        ssize_t n = 0;
        if (a) {
                n = try_beside(a, base, buf, found, fcap, note);
                if (n > 0)
                        return n - 1;
                if (n == 0)
                        memset(note, 0, sizeof *note);
        }
        for (const struct mtf_shipped *s = mtf_dtd_shipped; s->name; s++) {
                if (strcasecmp(s->name, base) == 0) {
                        size_t len = strlen(s->text);
                        memcpy(buf, s->text, len < cap ? len : cap);
                        snprintf(found, fcap, "%s", s->name);
                        if (note->code)
                                tm_err_prefix(note,
                                              "DTD beside the archive not used (the "
                                              "built-in %s instead)",
                                              s->name);
                        return (ssize_t)(len < cap ? len : cap);
                }
        }
        const char *env = getenv("TM_DTD_PATH"), *path = env;
        struct tm_err e = {0};
        n = 0;
        while (n == 0 && path && *path) {
                const char *end = strchr(path, ':');
                size_t plen = end ? (size_t)(end - path) : strlen(path);
                n = try_path(path, plen, base, buf, found, fcap, &e);
                path = end ? end + 1 : NULL;
        }
        if (n > 0 && note->code)
                tm_err_prefix(note, "DTD beside the archive not used (%s instead)", found);
        if (n > 0)
                return n - 1;
        if (n < 0)
                return tm_err_set(err, (int)n, "raw offset %d: DTD in TM_DTD_PATH not used: %s",
                                  MTF_FIXED_HEADER, e.msg);
        char beside[TM_ERR_MSG + 64];
        size_t dlen = 0;
        const char *dir = a ? archive_dir(a->path, &dlen) : NULL;
        if (note->code)
                snprintf(beside, sizeof beside, "beside the archive not used: %s", note->msg);
        else if (a)
                snprintf(beside, sizeof beside, "not beside the archive (%.*s/%s)", (int)dlen, dir,
                         base);
        return tm_err_set(err, -ENOENT,
                          "raw offset %d: DTD '%s' not found: %s; not built in; not in "
                          "TM_DTD_PATH (%s)",
                          MTF_FIXED_HEADER, base, a ? beside : "no archive path",
                          env ? env : "unset");
}

/* ---- the schema ---- */

/* The name leaf i of kind k goes by before duplicates are told apart. */
static const char *leaf_base(const struct mtf_kind *k, unsigned i)
{
        const struct mtf_leaf *lf = &k->leaf[i];
        if (lf->vfield && mtf_leaf_is_bytes(lf))
                return strcmp(k->name, "comment") == 0 ? "text" : "attributes";
        return lf->name;
}

/* The schema name of leaf i of kind k: see metatf.h. */
static void leaf_schema_name(const struct mtf_kind *k, unsigned i, char *name)
{
        const char *base = leaf_base(k, i);
        unsigned seen = 1;
        for (unsigned j = 1; j < i; j++)
                if (!k->leaf[j].is_len && !k->leaf[j].rep && strcmp(leaf_base(k, j), base) == 0)
                        seen++;
        if (seen == 1)
                snprintf(name, TM_NAME_MAX, "%s", base);
        else if (seen == 2)
                snprintf(name, TM_NAME_MAX, "new_%s", base);
        else
                snprintf(name, TM_NAME_MAX, "%s_%u", base, seen);
}

static int leaf_type(const struct mtf_kind *k, const struct mtf_leaf *lf)
{
        if (lf->in_rep)
                return TM_FT_LIST;
        if (mtf_leaf_is_bytes(lf))
                return strcmp(k->name, "comment") == 0 && lf->vfield ? TM_FT_TEXT : TM_FT_BYTES;
        return TM_FT_UINT;
}

/* While the schema is built: per schema field, the leaf that named it
 * first (and its record) and the display a leaf set. */
struct sbuild {
        const struct mtf_leaf *first[TM_SCHEMA_FIELDS_MAX];
        const char *first_kind[TM_SCHEMA_FIELDS_MAX];
        uint8_t display[TM_SCHEMA_FIELDS_MAX]; /* enum mtf_display */
};

static const char *type_name(unsigned t)
{
        static const char *const names[] = {[TM_FT_UINT] = "a number",
                                            [TM_FT_INT] = "a number",
                                            [TM_FT_TEXT] = "text",
                                            [TM_FT_BYTES] = "bytes",
                                            [TM_FT_LIST] = "repeated"};
        return t <= TM_FT_LIST ? names[t] : "?";
}

/* The schema field named name of type type for leaf lf of kind: found or
 * added. A field is one column of the schema, with one type and one
 * display, so one name used two ways is refused where the DTD uses it the
 * second time (docs/formats/metatf.md). */
static int schema_field(const struct mtf_ctx *x, struct tm_schema *s, struct sbuild *b,
                        const char *name, int type, const struct mtf_leaf *lf, const char *kind,
                        struct tm_err *err)
{
        int f = tm_schema_field(s, name);
        if (f >= 0 && s->field[f].type != type)
                return tm_err_set(err, -EIO,
                                  "%s:%u:%u: field '%s' of '%s' is %s, but %s in '%s' (line %u): "
                                  "one name, one type",
                                  x->lay.file, lf->line, lf->col, name, kind, type_name(type),
                                  type_name(s->field[f].type), b->first_kind[f], b->first[f]->line);
        if (f >= 0 && lf->display && b->display[f] && lf->display != b->display[f])
                return tm_err_set(err, -EIO,
                                  "%s:%u:%u: field '%s' of '%s' is shown in %s, but in %s in '%s' "
                                  "(line %u)",
                                  x->lay.file, lf->line, lf->col, name, kind,
                                  lf->display == MTF_D_HEX ? "hex" : "decimal",
                                  lf->display == MTF_D_HEX ? "decimal" : "hex", b->first_kind[f],
                                  b->first[f]->line);
        if (f < 0 && s->nfields >= TM_SCHEMA_FIELDS_MAX)
                return tm_err_set(err, -ENOTSUP, "%s:%u:%u: more than %u field names", x->lay.file,
                                  lf->line, lf->col, TM_SCHEMA_FIELDS_MAX);
        if (f < 0) {
                f = (int)s->nfields++;
                struct tm_field *fd = &s->field[f];
                snprintf(fd->name, sizeof fd->name, "%s", name);
                fd->type = (uint8_t)type;
                b->first[f] = lf;
                b->first_kind[f] = kind;
        }
        if (lf->display)
                b->display[f] = lf->display;
        return f;
}

/* How each number shows: as the DTD says, else by its role (the heap
 * family's addresses in hex, as tm_schema_heap shows them), else decimal.
 * Never by the look of the name. */
static void schema_display(const struct sbuild *b, struct tm_schema *s)
{
        int heap = strcmp(s->name, "heap") == 0;
        for (unsigned i = 0; i < s->nfields; i++) {
                int h = heap ? tm_schema_field(&tm_schema_heap, s->field[i].name) : -1;
                if (b->display[i])
                        s->field[i].show = b->display[i] == MTF_D_HEX ? TM_SHOW_HEX : TM_SHOW_DEC;
                else
                        s->field[i].show = h >= 0 ? tm_schema_heap.field[h].show : TM_SHOW_DEC;
        }
}

/* Kind k of the layout as a schema kind. */
static int schema_kind(struct mtf_ctx *x, unsigned k, struct tm_schema *s, struct sbuild *b,
                       struct tm_err *err)
{
        const struct mtf_kind *mk = &x->lay.kind[k];
        if (s->nkinds >= TM_SCHEMA_KINDS_MAX)
                return tm_err_set(err, -ENOTSUP, "raw offset %d: too many records",
                                  MTF_FIXED_HEADER);
        struct tm_kind *tk = &s->kind[s->nkinds];
        memset(tk, 0, sizeof *tk);
        snprintf(tk->name, sizeof tk->name, "%s", mk->name);
        if (tm_schema_kind(s, mk->name) >= 0 && mk->section >= 0 &&
            snprintf(tk->name, sizeof tk->name, "%s_%s", x->lay.section[mk->section].name,
                     mk->name) >= (int)sizeof tk->name)
                return tm_err_set(err, -ENOTSUP, "raw offset %d: record name %s_%s too long",
                                  MTF_FIXED_HEADER, x->lay.section[mk->section].name, mk->name);
        tk->tag = mk->tag;
        unsigned nvar = 0;
        for (unsigned i = 1; i < mk->nleaves; i++) {
                const struct mtf_leaf *lf = &mk->leaf[i];
                x->out_pos[k][i] = MTF_HIDDEN;
                if (lf->is_len || lf->rep)
                        continue;
                char name[TM_NAME_MAX];
                leaf_schema_name(mk, i, name);
                int type = leaf_type(mk, lf);
                int f = schema_field(x, s, b, name, type, lf, mk->name, err);
                if (f < 0)
                        return f;
                if (tk->nfields >= TM_KIND_FIELDS_MAX ||
                    (tm_field_is_var(&s->field[f]) && nvar >= TM_REC_VAR_MAX))
                        return tm_err_set(err, -ENOTSUP,
                                          "raw offset %d: record '%s' has too many fields",
                                          MTF_FIXED_HEADER, mk->name);
                x->out_pos[k][i] = tk->nfields;
                x->var_slot[k][i] = (uint8_t)nvar;
                nvar += tm_field_is_var(&s->field[f]) != 0;
                tk->field[tk->nfields++] = (uint8_t)f;
        }
        x->schema_kind[k] = (int16_t)s->nkinds++;
        return 0;
}

/* The name of the family that claims the schema (codecs/record/family.h:
 * "heap" when the DTD has the heap family's kinds and fields), else the
 * DTD file's name up to its first dot. */
static void schema_name(const struct mtf_ctx *x, struct tm_schema *s)
{
        const struct tm_family *fam = tm_family_of(s);
        if (fam) {
                snprintf(s->name, sizeof s->name, "%s", fam->name);
                return;
        }
        size_t n = strcspn(x->lay.file, ".");
        snprintf(s->name, sizeof s->name, "%.*s", (int)n, x->lay.file);
}

static int build_schema(struct mtf_ctx *x, struct tm_schema *s, struct tm_err *err)
{
        struct sbuild b;
        memset(&b, 0, sizeof b);
        memset(s, 0, sizeof *s);
        for (unsigned k = 0; k < x->lay.nkinds; k++) {
                x->schema_kind[k] = -1;
                if (x->lay.kind[k].role != MTF_R_DATA)
                        continue;
                int ret = schema_kind(x, k, s, &b, err);
                if (ret < 0)
                        return ret;
        }
        /* the sections records live in; mtf_sections adds the data ones */
        s->nsections = x->lay.nsections;
        for (unsigned i = 0; i < x->lay.nsections; i++) {
                memcpy(s->section[i].name, x->lay.section[i].name, sizeof s->section[i].name);
                s->section[i].number = x->lay.section[i].number;
        }
        schema_name(x, s);
        schema_display(&b, s);
        return 0;
}

/* x->sec: the DTD's sections, then the file's data sections (in the
 * table's order) that the DTD does not name; x->stream_num. */
static int list_sections(struct mtf_ctx *x, const struct mtf_header *h, struct tm_err *err)
{
        for (unsigned i = 0; i < x->lay.nsections; i++) {
                struct mtf_secinfo *si = &x->sec[x->nsec++];
                memcpy(si->name, x->lay.section[i].name, sizeof si->name);
                si->number = x->lay.section[i].number;
                si->kind = MTF_SEC_RECORDS;
        }
        for (unsigned i = 0; i < h->nsections; i++) {
                const struct mtf_shdr *sh = &h->section[i];
                unsigned j = 0;
                while (j < x->lay.nsections && x->lay.section[j].number != sh->number)
                        j++;
                if (j < x->lay.nsections) {
                        if (sh->start < h->start)
                                return tm_err_set(err, -EIO,
                                                  "raw offset %d: section %u is a section of "
                                                  "records in the DTD but a data section in the "
                                                  "file",
                                                  MTF_FIXED_HEADER, sh->number);
                        continue;
                }
                int stream = sh->start >= h->start;
                if (x->nsec >= TM_SCHEMA_SECTIONS_MAX || (stream && x->nstream >= MTF_STREAMS_MAX))
                        return tm_err_set(err, -ENOTSUP,
                                          "raw offset %d: more than %u sections or %u streamed "
                                          "data sections",
                                          MTF_FIXED_HEADER, TM_SCHEMA_SECTIONS_MAX,
                                          MTF_STREAMS_MAX);
                struct mtf_secinfo *si = &x->sec[x->nsec++];
                snprintf(si->name, sizeof si->name, "%u", sh->number);
                si->number = sh->number;
                si->kind = stream ? MTF_SEC_STREAM : MTF_SEC_DATA;
                if (stream)
                        x->stream_num[x->nstream++] = (uint8_t)sh->number;
        }
        return 0;
}

unsigned mtf_sections(const void *ctx, struct mtf_secinfo *out, unsigned cap)
{
        const struct mtf_ctx *x = ctx;
        for (unsigned i = 0; i < x->nsec && i < cap; i++)
                out[i] = x->sec[i];
        return x->nsec;
}

int mtf_section_bytes(const void *ctx, uint32_t number, const uint8_t **p, size_t *n)
{
        const struct mtf_dsec *d = mtf_dsec_find(ctx, number);
        if (!d)
                return -ENOENT;
        *p = ((const struct mtf_ctx *)ctx)->data + d->off;
        *n = d->size;
        return 0;
}

/* ---- context and state ---- */

int mtf_kind_by_tag(const struct mtf_ctx *x, unsigned section, uint32_t tag)
{
        if (tag < 256) {
                int k = x->by_tag[section][tag] ? x->by_tag[section][tag] - 1 : -1;
                return k >= 0 ? k : (x->by_tag[0][tag] ? x->by_tag[0][tag] - 1 : -1);
        }
        for (unsigned k = 0; k < x->lay.nkinds; k++) {
                int16_t ks = x->lay.kind[k].section;
                if (x->lay.kind[k].tag == tag && (ks < 0 || (unsigned)ks + 1 == section))
                        return (int)k;
        }
        return -1;
}

const struct mtf_dsec *mtf_dsec_find(const struct mtf_ctx *x, uint32_t number)
{
        for (unsigned i = 0; i < x->ndsec; i++)
                if (x->dsec[i].number == number)
                        return &x->dsec[i];
        return NULL;
}

int mtf_stream_find(const struct mtf_ctx *x, uint64_t number)
{
        for (unsigned i = 0; i < x->nstream; i++)
                if (x->stream_num[i] == number)
                        return (int)i;
        return -1;
}

void mtf_cell_set(struct mtf_state *s, unsigned c, unsigned ns, unsigned interp, uint64_t a0,
                  uint64_t a1)
{
        int sec = interp == MTF_I_SECTIONOFFSET || interp == MTF_I_SECTIONSTRIDE;
        s->interp[c] = (uint8_t)interp;
        s->sec[c] = (uint8_t)(sec ? a0 : 0); /* 1..255: checked by the caller */
        s->a[c] = sec ? 0 : a0;
        s->b[c] = a1;
        if (ns != MTF_HIDDEN && (interp == MTF_I_DELTA || interp == MTF_I_STRIDE))
                s->prev[ns] = a0;
}

/* Copy the data sections out of the header's bytes. */
static int load_sections(struct mtf_ctx *x, const struct mtf_header *h, const uint8_t *head)
{
        size_t total = 0;
        for (unsigned i = 0; i < h->nsections; i++)
                if (h->section[i].start < h->start)
                        total += h->section[i].size;
        x->data = malloc(total ? total : 1);
        if (!x->data)
                return -ENOMEM;
        size_t off = 0;
        for (unsigned i = 0; i < h->nsections; i++) {
                const struct mtf_shdr *sh = &h->section[i];
                if (sh->start >= h->start)
                        continue;
                x->dsec[x->ndsec++] = (struct mtf_dsec){sh->number, sh->size, off};
                memcpy(x->data + off, head + sh->start, sh->size);
                off += sh->size;
        }
        return 0;
}

/* While the cells are set up: per field name, its first leaf (and
 * record), and the leaf whose delta or stride gave its first previous
 * value. */
struct names {
        unsigned n;
        const struct mtf_leaf *first[MTF_NAMES_MAX], *init[MTF_NAMES_MAX];
        const char *init_kind[MTF_NAMES_MAX];
};

/* The slot of leaf lf's field name in mtf_state.prev, MTF_HIDDEN if its
 * previous value is not the field's; or a negative errno. */
static int name_slot(const struct mtf_ctx *x, struct names *nm, const struct mtf_kind *mk,
                     const struct mtf_leaf *lf, struct tm_err *err)
{
        if (mtf_leaf_is_bytes(lf) || lf->previous == MTF_PV_RECORD)
                return MTF_HIDDEN;
        unsigned j = 0;
        while (j < nm->n && strcmp(nm->first[j]->name, lf->name) != 0)
                j++;
        if (j == nm->n && nm->n >= MTF_NAMES_MAX)
                return tm_err_set(err, -ENOTSUP, "%s:%u:%u: more than %u field names", x->lay.file,
                                  lf->line, lf->col, MTF_NAMES_MAX);
        if (j == nm->n)
                nm->first[nm->n++] = lf;
        if (lf->interp != MTF_I_DELTA && lf->interp != MTF_I_STRIDE)
                return (int)j;
        /* one field, one previous value: its first one too */
        const struct mtf_leaf *o = nm->init[j];
        if (o && o->arg[0] != lf->arg[0])
                return tm_err_set(err, -EIO,
                                  "%s:%u:%u: field '%s' of '%s' starts from %llu, but from %llu in "
                                  "'%s' (line %u): a field has one previous value",
                                  x->lay.file, lf->line, lf->col, lf->name, mk->name,
                                  (unsigned long long)lf->arg[0], (unsigned long long)o->arg[0],
                                  nm->init_kind[j], o->line);
        nm->init[j] = lf;
        nm->init_kind[j] = mk->name;
        return (int)j;
}

/* Cells, field names, the tag tables, the sections the DTD reads; the
 * initial state. */
static int setup(struct mtf_ctx *x, struct mtf_state *s, struct tm_err *err)
{
        memset(s, 0, sizeof *s);
        struct names nm = {0};
        unsigned nc = 0;
        for (unsigned k = 0; k < x->lay.nkinds; k++) {
                const struct mtf_kind *mk = &x->lay.kind[k];
                unsigned scope = mk->section < 0 ? 0 : (unsigned)mk->section + 1;
                if (mk->tag < 256)
                        x->by_tag[scope][mk->tag] = (uint8_t)(k + 1);
                if (mk->role != MTF_R_DATA)
                        continue;
                if (nc + mk->nleaves - 1 > MTF_CELLS_MAX)
                        return tm_err_set(err, -ENOTSUP,
                                          "raw offset %d: the DTD's records have more than %u "
                                          "fields in all",
                                          MTF_FIXED_HEADER, MTF_CELLS_MAX);
                x->cell0[k] = (uint16_t)nc;
                for (unsigned i = 1; i < mk->nleaves; i++, nc++) {
                        const struct mtf_leaf *lf = &mk->leaf[i];
                        unsigned sec =
                            lf->interp == MTF_I_SECTIONOFFSET || lf->interp == MTF_I_SECTIONSTRIDE;
                        if (sec && !mtf_dsec_find(x, (uint32_t)lf->arg[0]) &&
                            mtf_stream_find(x, lf->arg[0]) < 0)
                                return tm_err_set(err, -EIO,
                                                  "raw offset %d: field '%s' of '%s' reads section "
                                                  "%u, which is not a data section of the file",
                                                  MTF_FIXED_HEADER, lf->name, mk->name,
                                                  (unsigned)lf->arg[0]);
                        int ns = name_slot(x, &nm, mk, lf, err);
                        if (ns < 0)
                                return ns;
                        x->name_of[k][i] = (uint8_t)ns;
                        s->width[nc] = (uint8_t)(mtf_leaf_is_bytes(lf) ? 0 : lf->width);
                        mtf_cell_set(s, nc, (unsigned)ns, lf->interp, lf->arg[0], lf->arg[1]);
                }
        }
        s->ncells = (uint16_t)nc;
        s->nnames = (uint16_t)nm.n;
        x->ncells = nc;
        x->nnames = nm.n;
        return 0;
}

/* A state decoding can reach (record.h): the section one of the DTD's,
 * the cells and field names the set-up made, each cell a number's width
 * (0..8), an interpretation and a section number exactly when it reads
 * one; chunks of streamed sections as read_chunk leaves them;
 * everything past them zero, as the set-up leaves it. */
static int mtf_state_ok(const void *ctx, const struct tm_rstate *st)
{
        const struct mtf_ctx *x = ctx;
        const struct mtf_state *s = (const struct mtf_state *)st->b;
        if (s->section > x->lay.nsections || s->ncells != x->ncells)
                return 0;
        for (unsigned i = 0; i < MTF_STREAMS_MAX; i++) {
                const struct mtf_stream *m = &s->stream[i];
                if (i >= x->nstream) {
                        if (m->at || m->base || m->next || m->count || m->width || m->active)
                                return 0;
                } else if (m->active > 1 || m->width > 8 || (m->count && !m->width) ||
                           (m->active && !m->count) ||
                           (uint64_t)m->count * m->width > MTF_CHUNK_MAX) {
                        return 0;
                }
        }
        if (s->nnames != x->nnames || s->pad)
                return 0;
        for (unsigned c = 0; c < MTF_CELLS_MAX; c++) {
                unsigned in = s->interp[c];
                int sec = in == MTF_I_SECTIONOFFSET || in == MTF_I_SECTIONSTRIDE;
                if (s->width[c] > 8 || in > MTF_I_SECTIONSTRIDE || (s->sec[c] != 0) != sec)
                        return 0;
                if (c >= s->ncells && (s->width[c] || in || s->a[c] || s->b[c]))
                        return 0;
        }
        for (unsigned i = s->nnames; i < MTF_NAMES_MAX; i++)
                if (s->prev[i])
                        return 0;
        return 1;
}

/* The data sections before start, as the views' sections/ files (record.h:
 * tm_rcodec.blobs). Streamed sections are not among them (not yet shown). */
static unsigned mtf_blobs(void *ctx, struct tm_blob *out, unsigned cap)
{
        struct mtf_secinfo si[MTF_SECTIONS_MAX + TM_SCHEMA_SECTIONS_MAX];
        unsigned n = mtf_sections(ctx, si, sizeof si / sizeof si[0]), k = 0;
        for (unsigned i = 0; i < n && k < cap; i++) {
                if (si[i].kind != MTF_SEC_DATA)
                        continue;
                if (mtf_section_bytes(ctx, si[i].number, &out[k].p, &out[k].n) < 0)
                        continue;
                size_t len = strnlen(si[i].name, sizeof out[k].name - 1);
                memcpy(out[k].name, si[i].name, len);
                out[k].name[len] = 0;
                k++;
        }
        return k;
}

/* A DTD beside the archive passed over, or NULL (record.h: note). */
static const struct tm_err *mtf_note(const void *ctx)
{
        const struct mtf_ctx *x = ctx;
        return x && x->dtd_note.code ? &x->dtd_note : NULL;
}

static void mtf_close(void *ctx)
{
        struct mtf_ctx *x = ctx;
        if (x)
                free(x->data);
        free(x);
}

/* The last DTDs compiled, by file name and text: archives of a few DTDs (a
 * directory of them, the fuzzer's runs) parse and compile each once. */
#define DTD_CACHE 4
struct dtd_entry {
        char *file, *text;
        size_t len;
        struct mtf_layout lay;
};
static struct {
        pthread_mutex_t mu;
        struct dtd_entry *e[DTD_CACHE];
        unsigned next; /* the entry the next miss replaces */
} dtd_cache = {.mu = PTHREAD_MUTEX_INITIALIZER};

static int dtd_cached(struct mtf_layout *l, const char *file, const char *text, size_t len)
{
        int hit = 0;
        pthread_mutex_lock(&dtd_cache.mu);
        for (unsigned i = 0; i < DTD_CACHE && !hit; i++) {
                const struct dtd_entry *e = dtd_cache.e[i];
                if (e && e->len == len && strcmp(e->file, file) == 0 &&
                    memcmp(e->text, text, len) == 0) {
                        *l = e->lay;
                        hit = 1;
                }
        }
        pthread_mutex_unlock(&dtd_cache.mu);
        return hit;
}

/* Keep l, compiled from text, in the cache (not when out of memory). */
static void dtd_keep(const struct mtf_layout *l, const char *file, const char *text, size_t len)
{
        struct dtd_entry *e = malloc(sizeof *e);
        if (!e || !(e->file = strdup(file)) || !(e->text = malloc(len + 1))) {
                if (e)
                        free(e->file);
                free(e);
                return;
        }
        memcpy(e->text, text, len);
        e->len = len;
        e->lay = *l;
        pthread_mutex_lock(&dtd_cache.mu);
        struct dtd_entry *old = dtd_cache.e[dtd_cache.next];
        dtd_cache.e[dtd_cache.next] = e;
        dtd_cache.next = (dtd_cache.next + 1) % DTD_CACHE;
        pthread_mutex_unlock(&dtd_cache.mu);
        if (old) {
                free(old->file);
                free(old->text);
                free(old);
        }
}

/* Parse and compile the DTD text into x->lay. */
static int compile(struct mtf_ctx *x, const char *file, const char *text, size_t len,
                   struct tm_err *err)
{
        if (dtd_cached(&x->lay, file, text, len))
                return 0;
        struct mtf_dtd *d = malloc(sizeof *d);
        if (!d)
                return tm_err_set(err, -ENOMEM, "out of memory for the DTD");
        int ret = mtf_dtd_parse(d, file, text, len, err);
        if (ret >= 0)
                ret = mtf_dtd_compile(d, &x->lay, err);
        free(d);
        if (ret >= 0)
                dtd_keep(&x->lay, file, text, len);
        return ret;
}

/* open() once the header h is read (head holds its data sections): the
 * DTD it names, the sections, the schema, the initial state. */
static int open_header(const struct mtf_header *h, const uint8_t *head, const struct tm_rarchive *a,
                       void **ctx, struct tm_schema *schema, struct tm_rstate *st,
                       struct tm_err *err)
{
        char *text = malloc(MTF_DTD_TEXT_MAX + 1);
        struct mtf_ctx *x = calloc(1, sizeof *x);
        char found[4096] = "";
        int ret = -ENOMEM;
        if (!text || !x) {
                tm_err_set(err, ret, "out of memory for the DTD");
                goto fail;
        }
        x->byteorder = h->byteorder;
        ssize_t len =
            find_dtd(h->dtd, a, text, MTF_DTD_TEXT_MAX + 1, found, sizeof found, &x->dtd_note, err);
        if ((ret = (int)len) < 0)
                goto fail;
        if (len > MTF_DTD_TEXT_MAX) {
                ret = tm_err_set(err, -ENOTSUP, "DTD %s is over %u bytes", found, MTF_DTD_TEXT_MAX);
                goto fail;
        }
        const char *file = strrchr(found, '/');
        if ((ret = compile(x, file ? file + 1 : found, text, (size_t)len, err)) < 0 ||
            (ret = load_sections(x, h, head)) < 0 || (ret = list_sections(x, h, err)) < 0 ||
            (ret = build_schema(x, schema, err)) < 0 ||
            (ret = setup(x, (struct mtf_state *)st->b, err)) < 0)
                goto fail;
        free(text);
        *ctx = x;
        return 0;
fail:
        if (ret == -ENOMEM)
                tm_err_set(err, ret, "out of memory");
        free(text);
        mtf_close(x);
        return ret;
}

static int mtf_open_at(const uint8_t *head, size_t n, const struct tm_rarchive *a, void **ctx,
                       struct tm_schema *schema, struct tm_rstate *st, struct tm_err *err)
{
        *ctx = NULL;
        struct mtf_header h;
        int start = mtf_header_read(head, n, &h, err);
        if (start < 0)
                return start;
        int ret = open_header(&h, head, a, ctx, schema, st, err);
        return ret < 0 ? ret : start;
}

/* mtf_open_at with the directory of path opened by name now (path NULL:
 * nothing beside an archive is looked at). */
static int mtf_open(const uint8_t *head, size_t n, const char *path, void **ctx,
                    struct tm_schema *schema, struct tm_rstate *st, struct tm_err *err)
{
        if (!path)
                return mtf_open_at(head, n, NULL, ctx, schema, st, err);
        struct stat asb = {0}, dsb;
        if (stat(path, &asb) != 0) /* what cannot be stat'ed trusts no one more */
                memset(&asb, 0, sizeof asb);
        const char *base;
        int dfd = tm_side_open_dir(path, &base, &dsb);
        struct tm_rarchive a = {.path = path, .dir_fd = dfd < 0 ? -1 : dfd, .sb = &asb};
        int ret = mtf_open_at(head, n, &a, ctx, schema, st, err);
        if (dfd >= 0)
                close(dfd);
        return ret;
}

int mtf_open_bound(const char *dtd, unsigned byteorder, void **ctx, struct tm_schema *schema,
                   struct tm_rstate *st, struct tm_err *err)
{
        *ctx = NULL;
        struct mtf_header h = {.class = 2, .byteorder = (uint8_t)byteorder};
        size_t len = strlen(dtd);
        if (len == 0 || len >= sizeof h.dtd || (byteorder != MTF_LE && byteorder != MTF_BE))
                return tm_err_set(err, -EINVAL, "bound format: DTD name '%s' or byte order %u", dtd,
                                  byteorder);
        memcpy(h.dtd, dtd, len + 1);
        h.dtdlength = (uint8_t)len;
        int ret = open_header(&h, NULL, NULL, ctx, schema, st, err);
        /* the messages name the header's DTD field, which a bound format
         * does not have */
        char pre[32];
        int pn = snprintf(pre, sizeof pre, "raw offset %d: ", MTF_FIXED_HEADER);
        if (ret < 0 && err && strncmp(err->msg, pre, (size_t)pn) == 0)
                memmove(err->msg, err->msg + pn, strlen(err->msg + pn) + 1);
        return ret;
}

/* The writer encodings (mtf_enc.c), the default first. */
static const char *const mtf_encodings[] = {"splitaddr", "hatf", NULL};

/* The encoder writes heap traces (metatf.h, "the encoder"). */
static void mtf_enc_schema(struct tm_schema *s)
{
        *s = tm_schema_heap;
}

const struct tm_rcodec tm_rcodec_metatf = {
    .name = "metatf",
    .suffix = ".mtf",
    .family = NULL, /* the schema's, by claims(): "heap" for HATF's DTD */
    .probe = mtf_probe,
    .head_max = MTF_HEADER_MAX,
    .head_need = mtf_head_need,
    .blobs = mtf_blobs,
    .open = mtf_open,
    .open_at = mtf_open_at,
    .close = mtf_close,
    .note = mtf_note,
    .state_size = sizeof(struct mtf_state),
    .state_ok = mtf_state_ok,
    .decode = mtf_decode,
    .enc_open = mtf_enc_open,
    .enc_put = mtf_enc_put,
    .enc_finish = mtf_enc_finish,
    .enc_free = mtf_enc_free,
    .encodings = mtf_encodings,
    .enc_schema = mtf_enc_schema,
};
