/* pack_job: one packing of a trace (pack.h): the encodings to write, the
 * passes over the input, starting again, packing once more. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib_int.h"
#include "pack.h"
#include "pack_out.h"
#include "pack_src.h"
#include "pack_wire.h"

#define NOTES_MAX 8
#define NOTE_LEN 400
#define WIDTH_NAME 24 /* "64/4", with room for any unsigned */

/* What a packing decided and what it learnt on the way. */
struct job {
        const struct pack_opts *o;
        const char *out;  /* NULL: stdout */
        const char *name; /* OUT for messages */
        struct tm_err *err;
        int widths;          /* the row's encodings are BITS[/UNIT] */
        unsigned bits, unit; /* the address encoding written */
        char width_name[WIDTH_NAME];
        int final_level;       /* the container's level of the archive kept */
        const char *chosen;    /* the encoding kept */
        char params[64];       /* the typed parameters written, for the message */
        struct pack_wire wire; /* a recorder's stream (first pass only) */
        int wired;
        char note[NOTES_MAX][NOTE_LEN];
        unsigned nnotes, notes_in; /* notes, of which the first notes_in are in the trace */
};

/* One pass of an input through candidates. */
struct run {
        struct job *j;
        struct pack_src src;
        struct tm_schema enc;         /* what the row's encoder takes */
        struct tm_blob blob[16];      /* the input's byte sections, for an encoder that keeps them */
        struct tm_rmap map, heap_map; /* the input's records, heap records (notes, wire) */
        int notes_fit;                /* the output holds heap comments */
        int comment;                  /* the encoder schema's comment kind, -1 */
        struct pack_out out;
        const char *encs[PACK_OUT_CANDS];
        unsigned nenc, best; /* the encodings; the one kept */
        int width;           /* encs[0] is the job's address encoding, to widen */
        int typed;           /* the row's enc_open_for with args */
        struct tm_renc_args args;
        int level;
        uint64_t sample;  /* the pass stops after this many records; 0: at the input's end */
        uint64_t records; /* put, the notes among them */
        unsigned notes;   /* notes put as comment records (put_comment) */
        int data_out;     /* a record other than a comment has been put */
};

int pack_enc_listed(const struct tm_rcodec *row, const char *name)
{
        for (const char *const *e = row->encodings; e && *e; e++)
                if (strcmp(*e, name) == 0)
                        return 1;
        return 0;
}

int pack_writes(const struct tm_rcodec *row)
{
        return row->enc_open && row->enc_schema;
}

int pack_widths(const struct tm_rcodec *row)
{
        return pack_enc_listed(row, "32/4");
}

/* The address encoding of bits and unit, as the rows list it ("64", "32/4"). */
static void width_name(struct job *j)
{
        if (j->unit == 1)
                snprintf(j->width_name, sizeof j->width_name, "%u", j->bits);
        else
                snprintf(j->width_name, sizeof j->width_name, "%u/%u", j->bits, j->unit);
}

/* ---- records to the candidates ---- */

static int put(struct run *r, const struct tm_rmap *m, const struct tm_rec *rec)
{
        struct tm_rec o;
        const struct tm_rec *p;
        int rc = tm_rmap_rec(m, rec, r->records, &o, &p, r->j->err);
        if (rc == 0)
                rc = pack_out_put(&r->out, p, 1, r->records, r->j->err);
        if (rc < 0)
                return tm_err_prefix(r->j->err, "%s", r->src.name);
        r->data_out |= (int)p->kind != r->comment;
        r->records++;
        return 0;
}

static int put_comment(struct run *r, const char *text)
{
        struct tm_heap_ev ev = {
            .kind = TM_HK_COMMENT, .attr = (const uint8_t *)text, .attr_len = strlen(text)};
        struct tm_rec rec;
        tm_heap_ev_to_rec(&ev, &rec);
        int rc = put(r, &r->heap_map, &rec);
        r->notes += rc == 0;
        return rc;
}

static int wire_emit(void *arg, const struct tm_rec *rec)
{
        struct run *r = arg;
        return put(r, &r->heap_map, rec);
}

/* A note; while no record is out it goes into the trace at once. */
static int wire_note(void *arg, const char *text)
{
        struct run *r = arg;
        struct job *j = r->j;
        if (j->nnotes == NOTES_MAX)
                return 0;
        snprintf(j->note[j->nnotes++], NOTE_LEN, "%s", text);
        if (r->data_out || !r->notes_fit)
                return 0;
        j->notes_in++;
        return put_comment(r, text);
}

/* Records decoded together go to the encoders as a block (record.h:
 * enc_put), PUT_BLOCK at most, each made one of the encoder's schema
 * first. */
#define PUT_BLOCK 256

static int put_block(struct run *r, const struct tm_rmap *m, const struct tm_rec *rec, size_t n)
{
        struct tm_rec o[PUT_BLOCK];
        for (size_t at = 0; at < n;) {
                size_t k = n - at < PUT_BLOCK ? n - at : PUT_BLOCK;
                int rc = 0;
                for (size_t i = 0; i < k && rc == 0; i++) {
                        const struct tm_rec *p;
                        rc = tm_rmap_rec(m, &rec[at + i], r->records + i, &o[i], &p, r->j->err);
                        if (rc == 0 && p != &o[i])
                                o[i] = *p;
                        if (rc == 0)
                                r->data_out |= (int)o[i].kind != r->comment;
                }
                if (rc == 0)
                        rc = pack_out_put(&r->out, o, k, r->records, r->j->err);
                if (rc < 0)
                        return tm_err_prefix(r->j->err, "%s", r->src.name);
                r->records += k;
                at += k;
        }
        return 0;
}

/* on_records' return when a sample pass has its records (run.sample). */
#define SAMPLE_DONE 1

static int on_records(void *arg, const struct tm_rec *rec, size_t n)
{
        struct run *r = arg;
        if (!r->j->wired) {
                int rc = put_block(r, &r->map, rec, n);
                return rc == 0 && r->sample && r->records >= r->sample ? SAMPLE_DONE : rc;
        }
        for (size_t i = 0; i < n; i++) {
                int rc = pack_wire_put(&r->j->wire, &rec[i], r->j->err);
                if (rc)
                        return rc;
        }
        return 0;
}

/* One pass: pre[0..npre) as the first records, then the input's (a
 * sample pass: its first r->sample, compared in zstd whatever OUT's
 * container, none of its candidates kept as OUT). */
static int run_pass(struct run *r, char (*pre)[NOTE_LEN], unsigned npre)
{
        struct job *j = r->j;
        r->records = 0;
        r->notes = 0;
        r->data_out = 0;
        struct tm_cwriter_opts wo = {.level = r->level, .frame_size = j->o->frame_size};
        enum tm_cont_kind kind = r->sample ? TM_CONT_ZSTD : j->o->kind;
        int rc = pack_out_open(&r->out, j->o->row, j->out, kind, &wo, r->encs, r->nenc,
                               r->typed ? &r->args : NULL, j->err);
        for (unsigned i = 0; rc == 0 && i < npre; i++)
                rc = put_comment(r, pre[i]);
        if (rc == 0)
                rc = pack_src_run(&r->src, on_records, r, j->err);
        if (rc == SAMPLE_DONE)
                rc = 0;
        if (rc == 0 && j->wired)
                rc = pack_wire_end(&j->wire);
        if (rc == 0)
                rc = pack_out_finish(&r->out, r->sample ? NULL : j->out, &r->best, j->err);
        if (rc == 0)
                j->chosen = r->encs[r->best];
        return rc;
}

/* ---- starting again ---- */

/* Can the pass start again after -ERANGE / -EDOM with a wider encoding?
 * Widens it and says so, or explains which option to give. */
static int can_retry(struct run *r, int rc)
{
        struct job *j = r->j;
        const char *opt = rc == -ERANGE ? "--addr-bits 64" : "--unit 1";
        int given = rc == -ERANGE ? j->o->addr_bits != 0 : j->o->unit != 0;
        if (given || !j->out || pack_src_rewind(&r->src) < 0) {
                fprintf(stderr, "tracetool pack: %s\ntracetool pack: use %s\n", j->err->msg, opt);
                return 0;
        }
        if (rc == -ERANGE)
                j->bits = 64;
        else
                j->unit = 1;
        width_name(j);
        fprintf(stderr, "tracetool pack: %s; starting again with %s\n", j->err->msg, opt);
        return 1;
}

/* Pass after pass until one succeeds or cannot start again. */
static int run_all(struct run *r, char (*pre)[NOTE_LEN], unsigned npre)
{
        struct job *j = r->j;
        for (int attempt = 0;; attempt++) {
                memset(j->err, 0, sizeof *j->err);
                int rc = run_pass(r, pre, npre);
                if (rc == 0)
                        return 0;
                pack_out_free(&r->out);
                if (rc == -EINVAL)
                        pack_src_blame_damage(&r->src, j->err);
                if ((rc != -ERANGE && rc != -EDOM) || !r->width || attempt >= 2)
                        return rc;
                if (!can_retry(r, rc)) {
                        j->err->msg[0] = '\0';
                        return rc;
                }
        }
}

/* ---- a run: the input, the candidates ---- */

/* Does the job compare several encodings in a compressed container
 * (without -e, to a file, a row with more than one)? */
static int picks(const struct job *j, const char *enc)
{
        const struct tm_rcodec *row = j->o->row;
        return !enc && j->out && !j->widths && j->o->kind != TM_CONT_PLAIN && row->encodings &&
               row->encodings[0] && row->encodings[1];
}

/* The typed parameters of the job's row for r's input (pack.h), and the
 * schema its encoder takes. */
static void typed_args(struct run *r)
{
        struct job *j = r->j;
        const struct pack_opts *o = j->o;
        const struct tm_renc_param *p = o->row->enc_params;
        size_t w = 0;
        j->params[0] = '\0';
        for (unsigned i = 0; p && p[i].name && i < TM_RENC_PARAMS_MAX; i++) {
                int v = p[i].def;
                if (o->param_set >> i & 1)
                        v = o->param[i];
                else if (o->level && strcmp(p[i].name, "level") == 0)
                        v = o->level;
                r->args.v[i] = v;
                if (p[i].max_for && v > p[i].max_for(&r->src.schema)) /* what is written */
                        v = p[i].max_for(&r->src.schema);
                if (w < sizeof j->params)
                        w += (size_t)snprintf(j->params + w, sizeof j->params - w, "%s%s %d",
                                              w ? ", " : "", p[i].name, v);
        }
        r->args.in = &r->src.schema;
        r->args.threads = PACK_THREADS;
        r->args.blob = r->blob;
        r->args.nblobs = r->src.row && r->src.row->blobs
                             ? r->src.row->blobs(r->src.ctx, r->blob, 16)
                             : 0;
        o->row->enc_schema_for(&r->src.schema, &r->enc);
}

/* Open r's input and decide its candidates. */
static int run_open(struct run *r, const char *in, int fd, const char *in_name, const char *enc,
                    int level)
{
        struct job *j = r->j;
        const struct tm_rcodec *row = j->o->row;
        int spool = j->widths ? !enc && j->out && !(j->o->addr_bits && j->o->unit) : picks(j, enc);
        int rc = pack_src_open(&r->src, in, fd, in_name, spool, j->err);
        if (rc < 0)
                return rc;
        r->typed = row->enc_open_for && !j->o->enc;
        if (r->typed)
                typed_args(r);
        else
                row->enc_schema(&r->enc);
        tm_rmap_init(&r->map, &r->src.schema, r->src.format, &r->enc, row->name,
                     tm_family_of(&r->enc));
        tm_rmap_init(&r->heap_map, &tm_schema_heap, r->src.format, &r->enc, row->name,
                     tm_family_of(&r->enc));
        r->notes_fit = tm_rmap_kind_ok(&r->heap_map, TM_HK_COMMENT);
        r->comment = tm_schema_kind(&r->enc, "comment");
        r->level = level;
        if (r->typed) {
                r->encs[r->nenc++] = NULL;
        } else if (enc) {
                r->encs[r->nenc++] = enc;
        } else if (j->widths) {
                /* lackey traces come from 64-bit machines with byte-granular
                 * instructions; din ones are usually 32-bit RISC */
                int sized = tm_schema_field(&r->src.schema, "size") >= 0;
                j->bits = j->o->addr_bits ? j->o->addr_bits : sized ? 64 : 32;
                j->unit = j->o->unit ? j->o->unit : sized ? 1 : 4;
                width_name(j);
                r->encs[r->nenc++] = j->width_name; /* widened in place */
                r->width = 1;
                if (j->bits == 64 && j->unit == 1)
                        pack_src_spool_end(&r->src); /* nothing to start again for */
        } else {
                for (const char *const *e = row->encodings; e && *e && r->nenc < PACK_OUT_CANDS;
                     e++)
                        r->encs[r->nenc++] = *e;
                if (!r->nenc || !j->out)
                        r->nenc = 1; /* the one unnamed (NULL), or stdout's: the default */
        }
        return 0;
}

static void run_close(struct run *r)
{
        pack_out_free(&r->out);
        pack_src_close(&r->src);
}

/* The line saying what was written: the records of OUT, the notes that
 * went in as comment records among them (a recording's calls are the
 * rest: pack_trace's line). */
static void say_size(struct job *j, const struct run *r)
{
        const struct pack_cand *c = &r->out.c[r->best];
        if (!j->o->msg || !j->out)
                return;
        double n = r->records ? (double)r->records : 1.0;
        char notes[48] = "";
        if (r->notes)
                snprintf(notes, sizeof notes, " (%u of them %s)", r->notes,
                         r->notes > 1 ? "notes" : "a note");
        fprintf(j->o->msg,
                "tracetool pack: %s: %llu records%s, encoding %s: %llu bytes raw (%.2f a record), "
                "%lld packed (%.2f a record)\n",
                j->name, (unsigned long long)r->records, notes,
                r->typed ? j->params : j->chosen ? j->chosen : "default",
                (unsigned long long)c->raw, r->records ? (double)c->raw / n : 0.0,
                (long long)c->size, r->records ? (double)c->size / n : 0.0);
}

/* OUT packed once more in the encoding chosen: at the final level, after
 * a recorder's stream's candidates compared at PACK_PICK_LEVEL; with the
 * notes that came after the first records in front (a comment changes no
 * encoder state, so the rest is the same bytes). */
static int pack_again(struct job *j)
{
        struct run *r = calloc(1, sizeof *r);
        if (!r)
                return tm_err_set(j->err, -ENOMEM, "out of memory");
        r->j = j;
        int rc = run_open(r, j->out, -1, j->out, j->chosen, j->final_level);
        /* the input is now OUT, records in their order: not the recorder's
         * stream, whose wire (and its run) the first run used */
        int wired = j->wired;
        j->wired = 0;
        if (rc == 0)
                rc = run_all(r, j->note + j->notes_in, j->nnotes - j->notes_in);
        j->wired = wired;
        if (rc == 0)
                say_size(j, r);
        run_close(r);
        free(r);
        return rc;
}

/* After a sample pass: the input again from its first record, in the
 * encoding chosen, at the final level. */
static int run_chosen(struct run *r)
{
        struct job *j = r->j;
        pack_out_free(&r->out);
        int rc = pack_src_rewind(&r->src);
        if (rc < 0)
                return tm_err_set(j->err, rc, "%s: cannot read the input again: %s", r->src.name,
                                  strerror(-rc));
        r->encs[0] = j->chosen;
        r->nenc = 1;
        r->best = 0;
        r->sample = 0;
        r->level = j->final_level;
        return run_all(r, NULL, 0);
}

/* Pack's level for o's container when --level is not given (pack.h). */
static int default_level(const struct job *j)
{
        if (j->o->kind == TM_CONT_ZSTD)
                return j->widths ? 0 : PACK_LEVEL;
        return j->o->kind == TM_CONT_GZIP ? PACK_GZIP_LEVEL : 0;
}

/* The first run and, when it asks for it, the second. */
static int pack_job(struct job *j, const char *in, int fd, const char *in_name)
{
        const struct pack_opts *o = j->o;
        struct run *r = calloc(1, sizeof *r);
        if (!r)
                return tm_err_set(j->err, -ENOMEM, "out of memory");
        r->j = j;
        int level = o->level ? o->level : default_level(j);
        j->final_level = level;
        int rc = run_open(r, in, fd, in_name, o->enc, level);
        if (rc == 0 && pack_wire_probe(r->src.row, r->src.head, r->src.headn)) {
                rc = pack_wire_init(&j->wire, r->src.name, wire_emit, wire_note, r, j->err);
                j->wired = rc == 0;
                pack_src_spool_end(&r->src); /* a recording is packed again from OUT */
        }
        /* Every candidate compressed at the final level costs that level
         * times the encodings: they are compared at PACK_PICK_LEVEL on the
         * first PACK_PICK_RECORDS records and only the one kept is packed
         * at the final level, from the input's first record again; a
         * recorder's stream (read once) is compared whole and packed again
         * from OUT (docs/record.md). */
        int pick = rc == 0 && r->nenc > 1 && o->kind != TM_CONT_PLAIN;
        int sample = pick && !j->wired;
        if (pick)
                r->level = PACK_PICK_LEVEL;
        if (sample)
                r->sample = PACK_PICK_RECORDS;
        if (rc == 0)
                rc = run_all(r, NULL, 0);
        if (rc == 0 && sample)
                rc = run_chosen(r);
        int again = (pick && !sample && level != PACK_PICK_LEVEL) ||
                    (j->out && j->notes_in < j->nnotes && r->notes_fit);
        if (rc == 0 && !again)
                say_size(j, r);
        run_close(r);
        free(r);
        return rc == 0 && again ? pack_again(j) : rc;
}

int pack_trace(const char *in, int fd, const char *in_name, const char *out,
               const struct pack_opts *o, struct tm_err *err)
{
        struct job *j = calloc(1, sizeof *j);
        if (!j)
                return tm_err_set(err, -ENOMEM, "out of memory");
        j->o = o;
        j->err = err;
        j->out = strcmp(out, "-") == 0 ? NULL : out;
        j->name = j->out ? out : "<stdout>";
        j->widths = pack_widths(o->row);
        int rc = pack_job(j, in, fd, in_name);
        FILE *msg = o->msg;
        if (rc == 0 && msg && j->wired)
                fprintf(msg,
                        "tracetool: %s: %llu calls of the program, records in the order they "
                        "took effect (reorder window: %llu records at most, of %zu)\n",
                        j->name, (unsigned long long)j->wire.ord.seen,
                        (unsigned long long)j->wire.ord.max_held, j->wire.ord.max);
        for (unsigned i = 0; msg && i < j->nnotes; i++)
                fprintf(msg, "tracetool: %s: note: %s\n", j->name, j->note[i]);
        if (j->wired)
                pack_wire_free(&j->wire);
        free(j);
        return rc;
}
