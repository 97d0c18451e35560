/* Meta-TF DTD compiler: struct mtf_dtd -> struct mtf_layout (dtd.h).
 *
 * Each kind is expanded into its leaves depth-first; while expanding, the
 * chain of record definitions a leaf sits in (the kind, then the records
 * it nests, outer first) is kept beside it so that its properties can be
 * looked up scope by scope. */
#include "dtd.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define PATH_MAX_DEPTH (MTF_DTD_DEPTH_MAX + 2)

/* Where a leaf came from: the record chain and the node that named it. */
struct cleaf {
        int16_t path[PATH_MAX_DEPTH];
        uint8_t npath;
        uint32_t line, col;
};

struct compiler {
        const struct mtf_dtd *d;
        struct mtf_layout *l;
        struct tm_err *err;
        struct mtf_kind *k;
        int16_t path[PATH_MAX_DEPTH];
        unsigned npath, in_rep;
        struct cleaf cl[MTF_LEAVES_MAX];
};

static int cerr(const struct compiler *c, uint32_t line, uint32_t col, int code, const char *fmt,
                const char *a, const char *b)
{
        char what[200];
        snprintf(what, sizeof what, fmt, a, b);
        return tm_err_set(c->err, code, "%s:%u:%u: %s", c->d->file, line, col, what);
}

/* The top-level record named name that a kind in section sec sees, -1. */
static int visible_record(const struct mtf_dtd *d, const char *name, int sec)
{
        int global = -1;
        for (unsigned i = 0; i < d->nrecords; i++) {
                const struct mtf_rdef *r = &d->record[i];
                if (r->parent >= 0 || strcmp(r->name, name) != 0)
                        continue;
                if (sec >= 0 && r->section == sec)
                        return (int)i;
                if (r->section < 0)
                        global = (int)i;
        }
        return global;
}

static int push(struct compiler *c, int r, const struct mtf_node *at)
{
        for (unsigned i = 0; i < c->npath; i++)
                if (c->path[i] == r)
                        return cerr(c, at->line, at->col, -EIO, "record '%s' contains itself%s",
                                    c->d->record[r].name, "");
        if (c->npath >= PATH_MAX_DEPTH)
                return cerr(c, at->line, at->col, -ENOTSUP, "records nested too deep at '%s'%s",
                            c->d->record[r].name, "");
        c->path[c->npath++] = (int16_t)r;
        return 0;
}

static int add_leaf(struct compiler *c, const struct mtf_node *nd)
{
        struct mtf_kind *k = c->k;
        if (k->nleaves >= MTF_LEAVES_MAX)
                return cerr(c, nd->line, nd->col, -ENOTSUP, "record '%s' has too many fields%s",
                            k->name, "");
        unsigned i = k->nleaves++;
        struct mtf_leaf *lf = &k->leaf[i];
        memset(lf, 0, sizeof *lf);
        memcpy(lf->name, nd->name, sizeof lf->name);
        lf->in_rep = (uint8_t)c->in_rep;
        lf->width_of = -1;
        lf->line = nd->line;
        lf->col = nd->col;
        for (unsigned j = 0; j < c->npath; j++) {
                const struct mtf_rdef *r = &c->d->record[c->path[j]];
                if (r->predefined && strcmp(r->name, "vfield") == 0)
                        lf->vfield = 1;
        }
        memcpy(c->cl[i].path, c->path, sizeof c->path);
        c->cl[i].npath = (uint8_t)c->npath;
        c->cl[i].line = nd->line;
        c->cl[i].col = nd->col;
        return (int)i;
}

static int expand(struct compiler *c, int n);

static int expand_record(struct compiler *c, int r, const struct mtf_node *at)
{
        int ret = push(c, r, at);
        if (ret < 0)
                return ret;
        ret = expand(c, c->d->record[r].field);
        c->npath--;
        return ret;
}

static int expand(struct compiler *c, int n)
{
        const struct mtf_node *nd = &c->d->node[n];
        int ret = 0, r;
        switch (nd->type) {
        case MTF_N_NAME:
                r = strcmp(nd->name, "tag") == 0 ? -1
                                                 : visible_record(c->d, nd->name, c->k->section);
                return r >= 0 ? expand_record(c, r, nd) : add_leaf(c, nd);
        case MTF_N_GROUP:
                for (int ch = nd->child; ch >= 0 && ret >= 0; ch = c->d->node[ch].next)
                        ret = expand(c, ch);
                return ret;
        case MTF_N_RECORD:
                return expand_record(c, nd->record, nd);
        default: /* MTF_N_REPEAT */
                if (c->in_rep)
                        return cerr(c, nd->line, nd->col, -ENOTSUP,
                                    "a repeat inside a repeat ('%s*') is not supported%s", nd->name,
                                    "");
                if ((ret = add_leaf(c, nd)) < 0)
                        return ret;
                c->in_rep = 1;
                int count = ret;
                ret = expand(c, nd->child);
                c->in_rep = 0;
                c->k->leaf[count].rep = (uint8_t)(c->k->nleaves - count - 1);
                return ret < 0 ? ret : count;
        }
}

static const struct mtf_prop *find_prop(const struct mtf_dtd *d, int rec, int sec,
                                        const char *field, unsigned prop)
{
        for (unsigned i = 0; i < d->nprops; i++) {
                const struct mtf_prop *p = &d->prop[i];
                if (p->record == rec && p->section == sec && p->prop == prop &&
                    strcmp(p->field, field) == 0)
                        return p;
        }
        return NULL;
}

/* Property prop of the field named field as leaf i's scopes see it. */
static const struct mtf_prop *lookup(const struct compiler *c, unsigned i, const char *field,
                                     unsigned prop)
{
        const struct cleaf *cl = &c->cl[i];
        const struct mtf_prop *p;
        for (unsigned j = 0; j < cl->npath; j++)
                if ((p = find_prop(c->d, cl->path[j], c->d->record[cl->path[j]].section, field,
                                   prop)))
                        return p;
        if (c->k->section >= 0 && (p = find_prop(c->d, -1, c->k->section, field, prop)))
                return p;
        return find_prop(c->d, -1, -1, field, prop);
}

/* A width given as another field's width (record.width = tag.width). */
static int static_width(const struct compiler *c, unsigned i, const struct mtf_prop *p,
                        unsigned depth, uint32_t *w)
{
        if (strcmp(p->ref, "tag") == 0) {
                *w = c->l->tag_width;
                return 0;
        }
        const struct mtf_prop *q = lookup(c, i, p->ref, MTF_P_WIDTH);
        if (!q)
                return cerr(c, p->line, p->col, -EIO,
                            "%s.width refers to %s.width, which is not set", p->field, p->ref);
        if (depth >= MTF_DTD_DEPTH_MAX || (q->vkind == MTF_V_REF && q->ref_prop != MTF_P_WIDTH))
                return cerr(c, p->line, p->col, -ENOTSUP, "%s.width = %s.width cannot be resolved",
                            p->field, p->ref);
        if (q->vkind == MTF_V_REF)
                return static_width(c, i, q, depth + 1, w);
        if (q->num > MTF_FIXED_MAX)
                return cerr(c, q->line, q->col, -ENOTSUP, "%s.width is over the cap%s", q->field,
                            "");
        *w = (uint32_t)q->num;
        return 0;
}

/* data.width = length.value: the nearest length before leaf i. */
static int width_from_value(struct compiler *c, unsigned i, const struct mtf_prop *p)
{
        struct mtf_leaf *lf = &c->k->leaf[i];
        int j = (int)i - 1;
        while (j >= 0 && strcmp(c->k->leaf[j].name, p->ref) != 0)
                j--;
        if (j < 0)
                return cerr(c, p->line, p->col, -EIO,
                            "%s.width refers to %s.value, which does not come before it", p->field,
                            p->ref);
        if (lf->in_rep || c->k->leaf[j].in_rep || c->k->leaf[j].rep)
                return cerr(c, p->line, p->col, -ENOTSUP,
                            "variable-width field '%s' in or sized by a repeat is not supported%s",
                            lf->name, "");
        lf->width_of = (int8_t)j;
        c->k->leaf[j].is_len = 1;
        return 0;
}

static int resolve_width(struct compiler *c, unsigned i, const struct mtf_prop *p)
{
        struct mtf_leaf *lf = &c->k->leaf[i];
        if (p->vkind == MTF_V_NUM) {
                if (p->num > MTF_FIXED_MAX)
                        return cerr(c, p->line, p->col, -ENOTSUP, "%s.width is over the cap%s",
                                    p->field, "");
                lf->width = (uint32_t)p->num;
                return 0;
        }
        if (p->ref_prop == MTF_P_VALUE)
                return width_from_value(c, i, p);
        if (p->ref_prop == MTF_P_WIDTH)
                return static_width(c, i, p, 0, &lf->width);
        return cerr(c, p->line, p->col, -EIO, "%s.width cannot be %s.interpretation", p->field,
                    p->ref);
}

/* Settle leaf i's width, interpretation and value. */
static int resolve_leaf(struct compiler *c, unsigned i)
{
        struct mtf_leaf *lf = &c->k->leaf[i];
        const struct cleaf *cl = &c->cl[i];
        const char *kn = c->k->name;
        const struct mtf_prop *w = lookup(c, i, lf->name, MTF_P_WIDTH);
        const struct mtf_prop *in = lookup(c, i, lf->name, MTF_P_INTERP);
        const struct mtf_prop *v = lookup(c, i, lf->name, MTF_P_VALUE);
        int ret;
        if (!in)
                return cerr(c, cl->line, cl->col, -EIO,
                            "field '%s' of record '%s' has no interpretation", lf->name, kn);
        lf->interp = in->interp;
        lf->arg[0] = in->arg[0];
        lf->arg[1] = in->arg[1];
        if (w && (ret = resolve_width(c, i, w)) < 0)
                return ret;
        if (!w && (!mtf_interp_stores_nothing(lf->interp) || lf->interp == MTF_I_SECTIONSTRIDE))
                return cerr(c, cl->line, cl->col, -EIO, "field '%s' of record '%s' has no width",
                            lf->name, kn);
        if (v && v->vkind != MTF_V_NUM)
                return cerr(c, v->line, v->col, -ENOTSUP, "%s.value can only be a number%s",
                            lf->name, "");
        if (v) {
                lf->has_value = 1;
                lf->value = v->num;
        }
        const struct mtf_prop *dp = lookup(c, i, lf->name, MTF_P_DISPLAY);
        const struct mtf_prop *pv = lookup(c, i, lf->name, MTF_P_PREVIOUS);
        lf->display = dp ? (uint8_t)dp->num : MTF_D_UNSET;
        lf->previous = pv ? (uint8_t)pv->num : MTF_PV_FIELD;
        if (dp && mtf_leaf_is_bytes(lf))
                return cerr(c, dp->line, dp->col, -EIO,
                            "field '%s' of record '%s' is bytes: display is for numbers", lf->name,
                            kn);
        if (mtf_leaf_is_bytes(lf) && (lf->interp != MTF_I_NONE || lf->has_value || lf->in_rep))
                return cerr(c, cl->line, cl->col, -ENOTSUP,
                            "field '%s' of record '%s' is bytes: its interpretation must be none, "
                            "with no value, outside repeats",
                            lf->name, kn);
        if ((lf->interp == MTF_I_SECTIONOFFSET || lf->interp == MTF_I_SECTIONSTRIDE) &&
            (lf->width < 1 || lf->width > 8))
                return cerr(c, cl->line, cl->col, -EIO,
                            "field '%s' of record '%s' reads a section: its width must be 1..8",
                            lf->name, kn);
        return 0;
}

/* The tag leaf: first, implied when the fields do not name it. */
static int place_tag(struct compiler *c, const struct mtf_rdef *r, uint64_t tag)
{
        struct mtf_kind *k = c->k;
        for (unsigned i = 1; i < k->nleaves; i++)
                if (strcmp(k->leaf[i].name, "tag") == 0)
                        return cerr(c, c->cl[i].line, c->cl[i].col, -EIO,
                                    "tag must be the first field of '%s'%s", k->name, "");
        if (k->nleaves == 0 || strcmp(k->leaf[0].name, "tag") != 0) {
                if (k->nleaves >= MTF_LEAVES_MAX)
                        return cerr(c, r->line, r->col, -ENOTSUP,
                                    "record '%s' has too many fields%s", k->name, "");
                memmove(&k->leaf[1], &k->leaf[0], k->nleaves * sizeof k->leaf[0]);
                memmove(&c->cl[1], &c->cl[0], k->nleaves * sizeof c->cl[0]);
                k->nleaves++;
                memset(&k->leaf[0], 0, sizeof k->leaf[0]);
                memcpy(k->leaf[0].name, "tag", 4);
                k->leaf[0].width_of = -1;
                k->leaf[0].line = r->line;
                k->leaf[0].col = r->col;
        }
        struct mtf_leaf *t = &k->leaf[0];
        if (t->in_rep || t->rep)
                return cerr(c, r->line, r->col, -EIO, "the tag of '%s' cannot repeat%s", k->name,
                            "");
        t->width = c->l->tag_width;
        t->interp = MTF_I_NONE;
        t->has_value = 1;
        t->value = tag;
        if (c->l->tag_width < 4 && tag >> (8 * c->l->tag_width))
                return cerr(c, r->line, r->col, -EIO, "the tag of '%s' does not fit tag.width%s",
                            k->name, "");
        if (tag > UINT32_MAX)
                return cerr(c, r->line, r->col, -EIO, "the tag of '%s' is over 32 bits%s", k->name,
                            "");
        return 0;
}

/* Does record r's own field list name a tag (not through other records)? */
static int names_tag(const struct mtf_dtd *d, int n)
{
        const struct mtf_node *nd = &d->node[n];
        if (nd->type == MTF_N_NAME || nd->type == MTF_N_REPEAT)
                if (strcmp(nd->name, "tag") == 0)
                        return 1;
        if (nd->type == MTF_N_GROUP)
                for (int ch = nd->child; ch >= 0; ch = d->node[ch].next)
                        if (names_tag(d, ch))
                                return 1;
        return nd->type == MTF_N_REPEAT ? names_tag(d, nd->child) : 0;
}

static int compile_kind(struct compiler *c, int ri)
{
        const struct mtf_rdef *r = &c->d->record[ri];
        const struct mtf_prop *tp = find_prop(c->d, ri, r->section, "tag", MTF_P_VALUE);
        if (!tp) {
                if (names_tag(c->d, r->field))
                        return cerr(c, r->line, r->col, -EIO,
                                    "record '%s' has a tag but no tag.value%s", r->name, "");
                return 0; /* a type, used by name (vfield) */
        }
        if (tp->vkind != MTF_V_NUM)
                return cerr(c, tp->line, tp->col, -EIO, "tag.value of '%s' must be a number%s",
                            r->name, "");
        if (c->l->nkinds >= MTF_KINDS_MAX)
                return cerr(c, r->line, r->col, -ENOTSUP, "too many records at '%s'%s", r->name,
                            "");
        struct mtf_kind *k = c->k = &c->l->kind[c->l->nkinds++];
        memset(k, 0, sizeof *k);
        memcpy(k->name, r->name, sizeof k->name);
        k->section = r->section;
        k->line = r->line;
        k->col = r->col;
        k->role = MTF_R_DATA;
        if (r->predefined && strcmp(r->name, "section") == 0)
                k->role = MTF_R_SECTION;
        if (r->predefined && strcmp(r->name, "metadata") == 0)
                k->role = MTF_R_METADATA;
        c->npath = 0;
        c->in_rep = 0;
        int ret = expand_record(c, ri, &c->d->node[r->field]);
        if (ret < 0 || (ret = place_tag(c, r, tp->num)) < 0)
                return ret;
        k->tag = (uint32_t)tp->num;
        for (unsigned i = 1; i < k->nleaves; i++)
                if ((ret = resolve_leaf(c, i)) < 0)
                        return ret;
        for (unsigned i = 1; i < k->nleaves; i++)
                if ((k->leaf[i].is_len || k->leaf[i].rep) && mtf_leaf_is_bytes(&k->leaf[i]))
                        return cerr(c, c->cl[i].line, c->cl[i].col, -EIO,
                                    "field '%s' of record '%s' counts or sizes others: it must be "
                                    "a number",
                                    k->leaf[i].name, k->name);
        return 0;
}

/* Tags are unique among the records a section sees (its own and global). */
static int check_tags(const struct compiler *c)
{
        const struct mtf_layout *l = c->l;
        for (unsigned b = 0; b < l->nkinds; b++) {
                for (unsigned a = 0; a < b; a++) {
                        const struct mtf_kind *ka = &l->kind[a], *kb = &l->kind[b];
                        int together =
                            ka->section == kb->section || ka->section < 0 || kb->section < 0;
                        if (together && ka->tag == kb->tag)
                                return cerr(c, kb->line, kb->col, -EIO,
                                            "record '%s' has the tag of '%s'", kb->name, ka->name);
                }
        }
        return 0;
}

/* Does kind k store at least one byte whatever its values? (A record of
 * no bytes and no tag would never end.) */
static int stores_bytes(const struct mtf_kind *k)
{
        for (unsigned i = 1; i < k->nleaves; i++) {
                const struct mtf_leaf *lf = &k->leaf[i];
                if (!lf->in_rep && lf->width_of < 0 && lf->width > 0 &&
                    !mtf_interp_stores_nothing(lf->interp))
                        return 1;
        }
        return 0;
}

/* tag.width = 0 (dtd.h): no record says what it is, so there is one kind,
 * with tag value 0 (place_tag and check_tags see to that), no section,
 * comment or metadata records, and every record stores something. */
static int check_untagged(const struct compiler *c)
{
        const struct mtf_layout *l = c->l;
        if (l->nsections)
                return cerr(c, c->d->section[0].line, c->d->section[0].col, -EIO,
                            "section '%s' with tag.width = 0: no record can enter it%s",
                            c->d->section[0].name, "");
        if (l->nkinds != 1)
                return tm_err_set(c->err, -EIO,
                                  "%s: tag.width = 0 needs exactly one record with a tag.value "
                                  "(0), not %u",
                                  c->d->file, l->nkinds);
        if (!stores_bytes(&l->kind[0]))
                return cerr(c, l->kind[0].line, l->kind[0].col, -EIO,
                            "record '%s' stores no byte: with tag.width = 0 one field must have "
                            "a width and be read%s",
                            l->kind[0].name, "");
        return 0;
}

int mtf_dtd_compile(const struct mtf_dtd *d, struct mtf_layout *l, struct tm_err *err)
{
        struct compiler c = {.d = d, .l = l, .err = err};
        memset(l, 0, offsetof(struct mtf_layout, kind));
        memcpy(l->file, d->file, sizeof l->file);
        const struct mtf_prop *tw = find_prop(d, -1, -1, "tag", MTF_P_WIDTH);
        l->tag_width = tw ? (unsigned)tw->num : MTF_TAG_WIDTH_DEFAULT;
        l->nsections = d->nsections;
        memcpy(l->section, d->section, sizeof l->section);
        for (unsigned i = 0; i < d->nrecords; i++) {
                if (d->record[i].parent >= 0)
                        continue;
                /* untagged: comment, section, metadata cannot occur */
                if (l->tag_width == 0 && d->record[i].predefined)
                        continue;
                int ret = compile_kind(&c, (int)i);
                if (ret < 0)
                        return ret;
        }
        int ret = check_tags(&c);
        return ret < 0 || l->tag_width ? ret : check_untagged(&c);
}
