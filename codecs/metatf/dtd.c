/* Meta-TF DTD parser: text -> struct mtf_dtd (dtd.h). A hand-written
 * recursive descent over one token of look-ahead; every error names the
 * token's line and column. */
#include "dtd.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* Appendix B's predefined records. The lines marked "completed" are not in
 * the paper, whose section, property and value fields have no width or
 * interpretation; docs/formats/metatf.md says why these. */
const char mtf_dtd_prelude[] =
    "vfield : (length,data) {\n"
    "    length.width = 1;\n"
    "    length.interpretation = none;\n"
    "    data.width = length.value;\n"
    "    data.interpretation = none;\n"
    "}\n"
    "comment : vfield {\n"
    "    tag.value = 1;\n"
    "}\n"
    "section : (tag, number) {\n"
    "    tag.value = 2;\n"
    "    number.width = 1; number.interpretation = none; // completed\n"
    "}\n"
    "metadata : (tag, record, field, property, value) {\n"
    "    tag.value = 3; // record.value = the tag of the record to be changed\n"
    "    record.width = tag.width;\n"
    "    record.interpretation = none; // field.value = field of the record to be changed\n"
    "    field.width = 1;\n"
    "    field.interpretation = none;\n"
    "    property.width = 1;\n"
    "    property.interpretation = none; // completed\n"
    "    value.width = 4;\n"
    "    value.interpretation = none; // completed\n"
    "}\n";

static const char *const interp_names[] = {
    [MTF_I_NONE] = "none",
    [MTF_I_BASEOFFSET] = "baseOffset",
    [MTF_I_DELTA] = "delta",
    [MTF_I_DEFAULT] = "default",
    [MTF_I_SECTIONOFFSET] = "sectionOffset",
    [MTF_I_STRIDE] = "stride",
    [MTF_I_SECTIONSTRIDE] = "sectionStride",
};

const char *mtf_interp_name(unsigned i)
{
        return i >= MTF_I_NONE && i <= MTF_I_SECTIONSTRIDE ? interp_names[i] : "?";
}

/* The arguments each interpretation takes. */
static unsigned interp_nargs(unsigned i)
{
        if (i == MTF_I_NONE)
                return 0;
        return i == MTF_I_STRIDE || i == MTF_I_SECTIONSTRIDE ? 2 : 1;
}

enum tok { T_EOF, T_ID, T_NUM, T_PUNCT };

struct parser {
        struct mtf_dtd *d;
        struct tm_err *err;
        const char *s;
        size_t n, pos;
        uint32_t line, col; /* of s[pos] */
        int prelude;        /* parsing mtf_dtd_prelude: reserved names allowed */
        /* the current token */
        int t;
        char punct;
        char id[MTF_NAME_MAX];
        uint64_t num;
        uint32_t tline, tcol;
};

static int perr_at(struct parser *p, uint32_t line, uint32_t col, int code, const char *what)
{
        return tm_err_set(p->err, code, "%s:%u:%u: %s", p->prelude ? "predefined" : p->d->file,
                          line, col, what);
}

/* An error at the current token. */
static int perr(struct parser *p, const char *what)
{
        return perr_at(p, p->tline, p->tcol, -EIO, what);
}

static void advance_char(struct parser *p)
{
        if (p->s[p->pos] == '\n') {
                p->line++;
                p->col = 1;
        } else {
                p->col++;
        }
        p->pos++;
}

static int is_id_start(int c)
{
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static int is_digit(int c)
{
        return c >= '0' && c <= '9';
}

static int hex_digit(int c)
{
        if (is_digit(c))
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        return -1;
}

/* Skip blanks and comments; -EIO for an unterminated / * comment. */
static int skip_space(struct parser *p)
{
        while (p->pos < p->n) {
                char c = p->s[p->pos];
                if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
                        advance_char(p);
                } else if (c == '/' && p->pos + 1 < p->n && p->s[p->pos + 1] == '/') {
                        while (p->pos < p->n && p->s[p->pos] != '\n')
                                advance_char(p);
                } else if (c == '/' && p->pos + 1 < p->n && p->s[p->pos + 1] == '*') {
                        uint32_t line = p->line, col = p->col;
                        advance_char(p);
                        advance_char(p);
                        while (p->pos + 1 < p->n &&
                               !(p->s[p->pos] == '*' && p->s[p->pos + 1] == '/'))
                                advance_char(p);
                        if (p->pos + 1 >= p->n)
                                return perr_at(p, line, col, -EIO, "unterminated comment");
                        advance_char(p);
                        advance_char(p);
                } else {
                        break;
                }
        }
        return 0;
}

static int lex_number(struct parser *p)
{
        uint64_t v = 0;
        unsigned base = 10;
        if (p->s[p->pos] == '0' && p->pos + 1 < p->n &&
            (p->s[p->pos + 1] == 'x' || p->s[p->pos + 1] == 'X')) {
                base = 16;
                advance_char(p);
                advance_char(p);
                if (p->pos >= p->n || hex_digit((unsigned char)p->s[p->pos]) < 0)
                        return perr(p, "expected hex digits after 0x");
        }
        while (p->pos < p->n) {
                int c = (unsigned char)p->s[p->pos];
                int dv = base == 16 ? hex_digit(c) : (is_digit(c) ? c - '0' : -1);
                if (dv < 0)
                        break;
                if (v > (UINT64_MAX - (uint64_t)dv) / base)
                        return perr(p, "number too large");
                v = v * base + (uint64_t)dv;
                advance_char(p);
        }
        if (p->pos < p->n && is_id_start((unsigned char)p->s[p->pos]))
                return perr(p, "bad number");
        p->t = T_NUM;
        p->num = v;
        return 0;
}

/* Read the next token into p. */
static int next(struct parser *p)
{
        int ret = skip_space(p);
        if (ret < 0)
                return ret;
        p->tline = p->line;
        p->tcol = p->col;
        if (p->pos >= p->n) {
                p->t = T_EOF;
                return 0;
        }
        int c = (unsigned char)p->s[p->pos];
        if (is_id_start(c)) {
                size_t k = 0;
                while (p->pos < p->n && (is_id_start((unsigned char)p->s[p->pos]) ||
                                         is_digit((unsigned char)p->s[p->pos]))) {
                        if (k + 1 >= MTF_NAME_MAX)
                                return perr_at(p, p->tline, p->tcol, -ENOTSUP, "name too long");
                        p->id[k++] = p->s[p->pos];
                        advance_char(p);
                }
                p->id[k] = '\0';
                p->t = T_ID;
                return 0;
        }
        if (is_digit(c))
                return lex_number(p);
        if (strchr(":{}(),*.=;-", c) && c != '\0') {
                p->t = T_PUNCT;
                p->punct = (char)c;
                advance_char(p);
                return 0;
        }
        char what[64];
        if (c >= 0x20 && c < 0x7f)
                snprintf(what, sizeof what, "unexpected character '%c'", c);
        else
                snprintf(what, sizeof what, "unexpected byte 0x%02x", (unsigned)c);
        return perr(p, what);
}

static int is_punct(const struct parser *p, char c)
{
        return p->t == T_PUNCT && p->punct == c;
}

static int is_id(const struct parser *p, const char *s)
{
        return p->t == T_ID && strcmp(p->id, s) == 0;
}

/* Expect punctuation c and move past it. */
static int expect(struct parser *p, char c)
{
        if (!is_punct(p, c)) {
                char what[32];
                snprintf(what, sizeof what, "expected '%c'", c);
                return perr(p, what);
        }
        return next(p);
}

static int is_reserved_record(const char *name)
{
        return strcmp(name, "vfield") == 0 || strcmp(name, "comment") == 0 ||
               strcmp(name, "section") == 0 || strcmp(name, "metadata") == 0 ||
               strcmp(name, "tag") == 0;
}

static int new_node(struct parser *p, int type, const char *name, uint32_t line, uint32_t col)
{
        if (p->d->nnodes >= MTF_DTD_NODES_MAX)
                return perr_at(p, line, col, -ENOTSUP, "too many fields in the DTD");
        struct mtf_node *nd = &p->d->node[p->d->nnodes];
        memset(nd, 0, sizeof *nd);
        nd->type = (uint8_t)type;
        snprintf(nd->name, sizeof nd->name, "%s", name ? name : "");
        nd->child = nd->next = nd->record = -1;
        nd->line = line;
        nd->col = col;
        return (int)p->d->nnodes++;
}

static int parse_field(struct parser *p, int rec, int section, unsigned depth);
static int parse_record(struct parser *p, const char *name, uint32_t line, uint32_t col,
                        int section, int parent, unsigned depth);

/* "(" field { "," field } ")", the current token being "(". */
static int parse_group(struct parser *p, int rec, int section, unsigned depth)
{
        int g = new_node(p, MTF_N_GROUP, NULL, p->tline, p->tcol);
        if (g < 0)
                return g;
        int ret = next(p);
        if (ret < 0)
                return ret;
        int prev = -1;
        for (;;) {
                int f = parse_field(p, rec, section, depth + 1);
                if (f < 0)
                        return f;
                if (prev < 0)
                        p->d->node[g].child = (int16_t)f;
                else
                        p->d->node[prev].next = (int16_t)f;
                prev = f;
                if (is_punct(p, ')'))
                        break;
                if (!is_punct(p, ','))
                        return perr(p, "expected ',' or ')'");
                if ((ret = next(p)) < 0)
                        return ret;
        }
        return (ret = next(p)) < 0 ? ret : g;
}

/* simple ::= NAME | group */
static int parse_simple(struct parser *p, int rec, int section, unsigned depth)
{
        if (is_punct(p, '('))
                return parse_group(p, rec, section, depth);
        if (p->t != T_ID)
                return perr(p, "expected a field name or '('");
        int nd = new_node(p, MTF_N_NAME, p->id, p->tline, p->tcol);
        int ret = nd < 0 ? nd : next(p);
        return ret < 0 ? ret : nd;
}

/* field ::= simple | record | NAME "*" simple */
static int parse_field(struct parser *p, int rec, int section, unsigned depth)
{
        if (depth > MTF_DTD_DEPTH_MAX)
                return perr_at(p, p->tline, p->tcol, -ENOTSUP, "fields nested too deep");
        if (is_punct(p, '('))
                return parse_group(p, rec, section, depth);
        if (p->t != T_ID)
                return perr(p, "expected a field name or '('");
        char name[MTF_NAME_MAX];
        memcpy(name, p->id, sizeof name);
        uint32_t line = p->tline, col = p->tcol;
        int ret = next(p);
        if (ret < 0)
                return ret;
        if (is_punct(p, ':')) {
                if ((ret = next(p)) < 0)
                        return ret;
                int r = parse_record(p, name, line, col, section, rec, depth + 1);
                if (r < 0)
                        return r;
                int nd = new_node(p, MTF_N_RECORD, name, line, col);
                if (nd >= 0)
                        p->d->node[nd].record = (int16_t)r;
                return nd;
        }
        if (is_punct(p, '*')) {
                int nd = new_node(p, MTF_N_REPEAT, name, line, col);
                if (nd < 0 || (ret = next(p)) < 0)
                        return nd < 0 ? nd : ret;
                int c = parse_simple(p, rec, section, depth + 1);
                if (c < 0)
                        return c;
                p->d->node[nd].child = (int16_t)c;
                return nd;
        }
        return new_node(p, MTF_N_NAME, name, line, col);
}

/* The argument of an interpretation: [-] NUMBER. */
static int parse_arg(struct parser *p, uint64_t *v)
{
        int neg = 0, ret;
        if (is_punct(p, '-')) {
                neg = 1;
                if ((ret = next(p)) < 0)
                        return ret;
        }
        if (p->t != T_NUM)
                return perr(p, "expected a number");
        *v = neg ? (uint64_t)0 - p->num : p->num;
        return next(p);
}

static int parse_interp(struct parser *p, struct mtf_prop *pr)
{
        unsigned i;
        for (i = MTF_I_NONE; i <= MTF_I_SECTIONSTRIDE; i++)
                if (is_id(p, interp_names[i]))
                        break;
        if (i > MTF_I_SECTIONSTRIDE)
                return perr(p, "expected an interpretation (none, default, baseOffset, delta, "
                               "stride, sectionOffset, sectionStride)");
        pr->vkind = MTF_V_INTERP;
        pr->interp = (uint8_t)i;
        int ret = next(p);
        for (unsigned a = 0; ret >= 0 && a < interp_nargs(i); a++)
                ret = parse_arg(p, &pr->arg[a]);
        if (ret < 0)
                return ret;
        if ((i == MTF_I_SECTIONOFFSET || i == MTF_I_SECTIONSTRIDE) &&
            (pr->arg[0] < 1 || pr->arg[0] > 255))
                return perr_at(p, pr->line, pr->col, -EIO, "section numbers are 1..255");
        return 0;
}

static int prop_code(const char *s)
{
        if (strcmp(s, "width") == 0)
                return MTF_P_WIDTH;
        if (strcmp(s, "interpretation") == 0)
                return MTF_P_INTERP;
        if (strcmp(s, "value") == 0)
                return MTF_P_VALUE;
        if (strcmp(s, "display") == 0)
                return MTF_P_DISPLAY;
        if (strcmp(s, "previous") == 0)
                return MTF_P_PREVIOUS;
        return -1;
}

static const char *const prop_names[] = {"width", "interpretation", "value", "display", "previous"};

/* display = hex | decimal; previous = field | record. */
static int parse_word(struct parser *p, struct mtf_prop *pr)
{
        static const char *const words[][2] = {{"decimal", "hex"}, {"field", "record"}};
        static const uint8_t codes[][2] = {{MTF_D_DECIMAL, MTF_D_HEX},
                                           {MTF_PV_FIELD, MTF_PV_RECORD}};
        unsigned w = pr->prop == MTF_P_DISPLAY ? 0 : 1;
        for (unsigned i = 0; i < 2; i++) {
                if (is_id(p, words[w][i])) {
                        pr->vkind = MTF_V_WORD;
                        pr->num = codes[w][i];
                        return next(p);
                }
        }
        return perr(p, w == 0 ? "expected hex or decimal" : "expected field or record");
}

/* Reject a second setting of the same property in the same scope, and the
 * rules the paper gives the tag. */
static int check_prop(struct parser *p, const struct mtf_prop *pr)
{
        char what[128];
        for (unsigned i = 0; i + 1 < p->d->nprops; i++) {
                const struct mtf_prop *o = &p->d->prop[i];
                if (o->record == pr->record && o->section == pr->section && o->prop == pr->prop &&
                    strcmp(o->field, pr->field) == 0) {
                        snprintf(what, sizeof what, "%s.%s is already set at line %u", pr->field,
                                 prop_names[pr->prop], o->line);
                        return perr_at(p, pr->line, pr->col, -EIO, what);
                }
        }
        if (strcmp(pr->field, "tag") != 0)
                return 0;
        if (pr->prop == MTF_P_WIDTH && (pr->record >= 0 || pr->section >= 0))
                return perr_at(p, pr->line, pr->col, -EIO, "tag.width can only be set globally");
        /* 0: records of one kind with no tag (dtd.h) */
        if (pr->prop == MTF_P_WIDTH && (pr->vkind != MTF_V_NUM || pr->num > 4))
                return perr_at(p, pr->line, pr->col, -ENOTSUP, "tag.width must be 0..4");
        if (pr->prop == MTF_P_INTERP && pr->interp != MTF_I_NONE)
                return perr_at(p, pr->line, pr->col, -EIO, "the tag's interpretation is none");
        if (pr->prop == MTF_P_VALUE && pr->record < 0)
                return perr_at(p, pr->line, pr->col, -EIO, "tag.value belongs in a record");
        if (pr->prop == MTF_P_DISPLAY || pr->prop == MTF_P_PREVIOUS)
                return perr_at(p, pr->line, pr->col, -EIO,
                               "the tag is not shown and has no previous value");
        return 0;
}

/* property ::= NAME "." PROP "=" value ";", the current token the ".". */
static int parse_property(struct parser *p, const char *field, uint32_t line, uint32_t col, int rec,
                          int section)
{
        if (p->d->nprops >= MTF_DTD_PROPS_MAX)
                return perr_at(p, line, col, -ENOTSUP, "too many properties in the DTD");
        struct mtf_prop *pr = &p->d->prop[p->d->nprops++];
        memset(pr, 0, sizeof *pr);
        memcpy(pr->field, field, sizeof pr->field);
        pr->record = (int16_t)rec;
        pr->section = (int16_t)section;
        pr->line = line;
        pr->col = col;
        int ret = expect(p, '.');
        if (ret < 0)
                return ret;
        int code = p->t == T_ID ? prop_code(p->id) : -1;
        if (code < 0)
                return perr(p, "expected width, interpretation, value, display or previous");
        pr->prop = (uint8_t)code;
        if ((ret = next(p)) < 0 || (ret = expect(p, '=')) < 0)
                return ret;
        if (code == MTF_P_INTERP) {
                ret = parse_interp(p, pr);
        } else if (code == MTF_P_DISPLAY || code == MTF_P_PREVIOUS) {
                ret = parse_word(p, pr);
        } else if (p->t == T_NUM) {
                pr->vkind = MTF_V_NUM;
                pr->num = p->num;
                ret = next(p);
        } else if (p->t == T_ID) {
                pr->vkind = MTF_V_REF;
                memcpy(pr->ref, p->id, sizeof pr->ref);
                if ((ret = next(p)) < 0 || (ret = expect(p, '.')) < 0)
                        return ret;
                code = p->t == T_ID ? prop_code(p->id) : -1;
                if (code < 0 || code > MTF_P_VALUE)
                        return perr(p, "expected width, interpretation or value");
                pr->ref_prop = (uint8_t)code;
                ret = next(p);
        } else {
                ret = perr(p, "expected a number or field.property");
        }
        if (ret < 0 || (ret = check_prop(p, pr)) < 0)
                return ret;
        return expect(p, ';');
}

/* Is name already a record of this scope (same section, top level)? */
static int record_defined(const struct mtf_dtd *d, const char *name, int section)
{
        for (unsigned i = 0; i < d->nrecords; i++)
                if (d->record[i].parent < 0 && d->record[i].section == section &&
                    strcmp(d->record[i].name, name) == 0)
                        return (int)i;
        return -1;
}

/* record ::= NAME ":" field [ "{" property* "}" ], after the ":". */
static int parse_record(struct parser *p, const char *name, uint32_t line, uint32_t col,
                        int section, int parent, unsigned depth)
{
        char what[96];
        if (!p->prelude && is_reserved_record(name)) {
                snprintf(what, sizeof what, "'%s' is a reserved name", name);
                return perr_at(p, line, col, -EIO, what);
        }
        if (parent < 0 && record_defined(p->d, name, section) >= 0) {
                snprintf(what, sizeof what, "record '%s' is already defined", name);
                return perr_at(p, line, col, -EIO, what);
        }
        if (p->d->nrecords >= MTF_DTD_RECORDS_MAX)
                return perr_at(p, line, col, -ENOTSUP, "too many records in the DTD");
        int r = (int)p->d->nrecords++;
        struct mtf_rdef *rd = &p->d->record[r];
        memset(rd, 0, sizeof *rd);
        memcpy(rd->name, name, sizeof rd->name);
        rd->section = (int16_t)section;
        rd->parent = (int16_t)parent;
        rd->predefined = (uint8_t)p->prelude;
        rd->line = line;
        rd->col = col;
        int f = parse_field(p, r, section, depth);
        if (f < 0)
                return f;
        p->d->record[r].field = (int16_t)f;
        if (!is_punct(p, '{'))
                return r;
        int ret = next(p);
        while (ret >= 0 && p->t == T_ID) {
                char field[MTF_NAME_MAX];
                memcpy(field, p->id, sizeof field);
                uint32_t fl = p->tline, fc = p->tcol;
                if ((ret = next(p)) >= 0)
                        ret = parse_property(p, field, fl, fc, r, section);
        }
        if (ret >= 0 && !is_punct(p, '}'))
                ret = perr(p, "expected a property or '}'");
        return ret < 0 ? ret : ((ret = next(p)) < 0 ? ret : r);
}

static int parse_defs(struct parser *p, int section);

/* section ::= "section" NAME NUMBER "{" defs "}", after "section". */
static int parse_section(struct parser *p, uint32_t line, uint32_t col)
{
        char what[96];
        if (p->t != T_ID)
                return perr(p, "expected a section name");
        if (strcmp(p->id, "section") == 0 || is_reserved_record(p->id))
                return perr(p, "a section cannot take a reserved name");
        struct mtf_dtd *d = p->d;
        if (d->nsections >= MTF_DTD_SECTIONS_MAX)
                return perr_at(p, line, col, -ENOTSUP, "too many sections in the DTD");
        struct mtf_sdef *sd = &d->section[d->nsections];
        memset(sd, 0, sizeof *sd);
        memcpy(sd->name, p->id, sizeof sd->name);
        sd->line = line;
        sd->col = col;
        int ret = next(p);
        if (ret < 0)
                return ret;
        if (p->t != T_NUM)
                return perr(p, "expected a section number");
        if (p->num < 1 || p->num > 255)
                return perr(p, "section numbers are 1..255");
        sd->number = (uint32_t)p->num;
        for (unsigned i = 0; i < d->nsections; i++) {
                if (strcmp(d->section[i].name, sd->name) == 0 ||
                    d->section[i].number == sd->number) {
                        snprintf(what, sizeof what,
                                 "section %s %u repeats the name or number of "
                                 "line %u",
                                 sd->name, sd->number, d->section[i].line);
                        return perr_at(p, line, col, -EIO, what);
                }
        }
        int s = (int)d->nsections++;
        if ((ret = next(p)) < 0 || (ret = expect(p, '{')) < 0 || (ret = parse_defs(p, s)) < 0)
                return ret;
        if (!is_punct(p, '}'))
                return perr(p, "expected a record, a property or '}'");
        return next(p);
}

/* defs ::= { record | property }*, up to "}" (in a section) or the end;
 * at the top level, after the first section only sections follow. */
static int parse_defs(struct parser *p, int section)
{
        int seen_section = 0, ret = 0;
        while (p->t == T_ID) {
                char name[MTF_NAME_MAX];
                memcpy(name, p->id, sizeof name);
                uint32_t line = p->tline, col = p->tcol;
                if ((ret = next(p)) < 0)
                        return ret;
                if (is_punct(p, ':')) {
                        if (seen_section)
                                return perr_at(p, line, col, -EIO,
                                               "expected 'section': global definitions come "
                                               "before the first section");
                        if ((ret = next(p)) < 0 ||
                            (ret = parse_record(p, name, line, col, section, -1, 0)) < 0)
                                return ret;
                } else if (is_punct(p, '.')) {
                        if (seen_section)
                                return perr_at(p, line, col, -EIO,
                                               "expected 'section': global definitions come "
                                               "before the first section");
                        if ((ret = parse_property(p, name, line, col, -1, section)) < 0)
                                return ret;
                } else if (strcmp(name, "section") == 0) {
                        if (section >= 0)
                                return perr_at(p, line, col, -EIO, "sections do not nest");
                        if ((ret = parse_section(p, line, col)) < 0)
                                return ret;
                        seen_section = 1;
                } else {
                        return perr(p, "expected ':' or '.'");
                }
        }
        return 0;
}

static int parse_text(struct parser *p, const char *text, size_t len)
{
        p->s = text;
        p->n = len;
        p->pos = 0;
        p->line = p->col = 1;
        int ret = next(p);
        if (ret < 0 || (ret = parse_defs(p, -1)) < 0)
                return ret;
        if (p->t != T_EOF)
                return perr(p, "expected a record, a property or a section");
        return 0;
}

int mtf_dtd_parse(struct mtf_dtd *d, const char *file, const char *text, size_t len,
                  struct tm_err *err)
{
        memset(d, 0, offsetof(struct mtf_dtd, record));
        snprintf(d->file, sizeof d->file, "%s", file ? file : "dtd");
        if (len > MTF_DTD_TEXT_MAX)
                return tm_err_set(err, -ENOTSUP, "%s: DTD of %zu bytes is over the %u-byte cap",
                                  d->file, len, MTF_DTD_TEXT_MAX);
        struct parser p = {.d = d, .err = err, .prelude = 1};
        int ret = parse_text(&p, mtf_dtd_prelude, sizeof mtf_dtd_prelude - 1);
        if (ret < 0)
                return ret;
        p.prelude = 0;
        return parse_text(&p, text, len);
}
