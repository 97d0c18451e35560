/* pack_heap: heap traces in any input form -> a HATF or Meta-TF archive.
 *
 * One pass over the input feeds every candidate encoder at once, each
 * writing its own temporary file beside OUT through the container OUT's
 * name asks for; the smallest file becomes OUT and the others are removed.
 * With one encoding asked for there is one candidate. OUT's name picks the
 * format: .mtf[.gz|.zst] Meta-TF (codecs/metatf/metatf.h: encodings hatf
 * and splitaddr), else HATF.
 *
 * A recorder's stream (tools/record/rec_wire.h: the mark after the
 * signature) goes through a reorder window (record/reorder.h) that puts
 * its records back in the order of the calls, with heap 0; its notices
 * become notes: comment records at the start of the trace (the stats view
 * prints them) and lines on msg. A note known only once records have been
 * written (an exec, a fork) is put in front by packing the result once
 * more with the encoding chosen (docs/record.md). */
#include "pack_heap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "codecs/containers/container.h"
#include "codecs/heap/hatf.h"
#include "codecs/metatf/metatf.h"
#include "heapin/heapin.h"
#include "record/rec_wire.h"
#include "record/reorder.h"
#include "tools.h"
#include "views/rfeed.h"

#define HEAD_MAX 4096
#define READ_BUF (1u << 20)
#define NENC 16
#define NOTES_MAX 8
#define NOTE_LEN 400

struct cand {
        const char *enc;
        char *tmp;
        int fd;
        struct tm_cwriter *w;
        struct tm_renc *e;
        uint64_t raw; /* bytes the encoder wrote */
        int failed;
};

struct job {
        const struct tm_rcodec *codec; /* the output's: hatf or metatf */
        struct cand c[NENC];
        unsigned n;
        uint64_t records;
        /* an input of another heap schema (HATF as Meta-TF): its kinds and
         * fields as tm_schema_heap's, by name; -1 none */
        int remap;
        int kind_map[TM_SCHEMA_KINDS_MAX];
        int field_map[TM_SCHEMA_FIELDS_MAX];
        const struct tm_schema *in_schema;
        struct tm_err *err;
        int level;          /* the container's compression level (0: its default) */
        int final_level;    /* the level of a second pass (pack_rewrite); -1: none */
        const char *chosen; /* the encoding kept */
        /* a recorder's stream (rec_wire.h) */
        int wire;
        struct reorder ord;
        int data_out; /* a record other than a comment has been put */
        char note[NOTES_MAX][NOTE_LEN];
        unsigned nnotes, notes_in; /* notes, of which the first notes_in are in the output */
        int exec_pending;
        uint64_t exec_seq, forks, fork_seq, spawns;
        char exec_what[256], spawn_what[256];
        /* input */
        int fd;
        const char *name;
        struct tm_cont *cont;
        struct tm_creader *r;
        uint8_t head[HEAD_MAX];
        size_t headn, headpos;
};

static int cand_sink(void *arg, const void *buf, size_t n)
{
        struct cand *c = arg;
        struct tm_err e;
        c->raw += n;
        if (tm_cwriter_write(c->w, buf, n, &e) < 0 || tm_cwriter_boundary(c->w, &e) < 0)
                return -EIO;
        return 0;
}

/* r (of j->in_schema) as a record of tm_schema_heap. A realloc of a
 * schema with one realloc kind (Appendix C's) gets the outcome its
 * addresses say: no old address, malloc only; no new one, free only; the
 * same, in place; else moved (heap.h's four kinds). */
static int remap(const struct job *j, const struct tm_rec *r, struct tm_rec *o)
{
        const struct tm_schema *s = j->in_schema;
        int hk = r->kind < s->nkinds ? j->kind_map[r->kind] : -1;
        if (hk < 0)
                return tm_err_set(j->err, -EINVAL, "%s: record %llu: kind %s is not a heap kind",
                                  j->name, (unsigned long long)j->records,
                                  r->kind < s->nkinds ? s->kind[r->kind].name : "?");
        struct tm_heap_ev ev = {.kind = (unsigned)hk};
        const struct tm_kind *k = &s->kind[r->kind];
        unsigned slot = 0;
        for (unsigned i = 0; i < k->nfields; i++) {
                int f = j->field_map[k->field[i]];
                uint64_t v = r->v[i];
                if (tm_field_is_var(&s->field[k->field[i]])) {
                        ev.attr = r->var[slot++];
                        ev.attr_len = (size_t)v;
                } else if (f == TM_HF_SIZE) {
                        ev.size = v;
                } else if (f == TM_HF_ADDRESS) {
                        ev.addr = v;
                } else if (f == TM_HF_NEW_ADDRESS) {
                        ev.new_addr = v;
                } else if (f == TM_HF_THREAD) {
                        ev.thread = v;
                } else if (f == TM_HF_HEAP) {
                        ev.heap = v;
                } else if (f == TM_HF_TIME) {
                        ev.time = v;
                }
        }
        if (hk == TM_HK_REALLOC && tm_schema_kind(s, "realloc_alloc_free") < 0)
                ev.kind = ev.addr == 0             ? TM_HK_REALLOC_ALLOC
                          : ev.new_addr == 0       ? TM_HK_REALLOC_FREE
                          : ev.addr == ev.new_addr ? TM_HK_REALLOC
                                                   : TM_HK_REALLOC_ALLOC_FREE;
        tm_heap_ev_to_rec(&ev, o);
        return 0;
}

/* Set up remap() for schema s, unless it is tm_schema_heap's layout. */
static void remap_init(struct job *j, const struct tm_schema *s)
{
        j->in_schema = s;
        j->remap = s->nkinds != tm_schema_heap.nkinds || s->nfields != tm_schema_heap.nfields;
        for (unsigned k = 0; k < s->nkinds; k++) {
                j->kind_map[k] = tm_schema_kind(&tm_schema_heap, s->kind[k].name);
                j->remap |= j->kind_map[k] != (int)k ||
                            memcmp(&s->kind[k], &tm_schema_heap.kind[k], sizeof s->kind[k]) != 0;
        }
        for (unsigned f = 0; f < s->nfields; f++) {
                j->field_map[f] = tm_schema_field(&tm_schema_heap, s->field[f].name);
                j->remap |= j->field_map[f] != (int)f;
        }
}

static int job_put(struct job *j, const struct tm_rec *r)
{
        j->data_out |= r->kind != TM_HK_COMMENT;
        for (unsigned i = 0; i < j->n; i++) {
                int rc = j->codec->enc_put(j->c[i].e, r, j->records, j->err);
                if (rc < 0)
                        return tm_err_prefix(j->err, "%s", j->name);
        }
        j->records++;
        return 0;
}

/* Input bytes from the container reader or the pipe. */
static ssize_t job_read_raw(struct job *j, void *buf, size_t n)
{
        if (j->r)
                return tm_creader_read(j->r, buf, n, j->err);
        for (;;) {
                ssize_t k = read(j->fd, buf, n);
                if (k >= 0 || errno != EINTR)
                        return k < 0 ? tm_err_set(j->err, -errno, "%s: read: %s", j->name,
                                                  strerror(errno))
                                     : k;
        }
}

/* Input bytes for the decoders: first the head already read, then the
 * rest. */
static ssize_t job_read(void *arg, void *buf, size_t n)
{
        struct job *j = arg;
        if (j->headpos < j->headn) {
                size_t c = j->headn - j->headpos < n ? j->headn - j->headpos : n;
                memcpy(buf, j->head + j->headpos, c);
                j->headpos += c;
                return (ssize_t)c;
        }
        return job_read_raw(j, buf, n);
}

static int on_event(void *arg, const struct tm_heap_ev *ev)
{
        struct tm_rec r;
        tm_heap_ev_to_rec(ev, &r);
        return job_put(arg, &r);
}

/* ---- a recorder's stream ---- */

static int put_comment(struct job *j, const char *text)
{
        struct tm_heap_ev ev = {
            .kind = TM_HK_COMMENT, .attr = (const uint8_t *)text, .attr_len = strlen(text)};
        struct tm_rec r;
        tm_heap_ev_to_rec(&ev, &r);
        return job_put(j, &r);
}

/* Add a note; while no record is out it goes into the trace at once. */
__attribute__((format(printf, 2, 3))) static int note_add(struct job *j, const char *fmt, ...)
{
        if (j->nnotes == NOTES_MAX)
                return 0;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(j->note[j->nnotes++], NOTE_LEN, fmt, ap);
        va_end(ap);
        if (j->data_out || j->codec != &tm_rcodec_hatf)
                return 0;
        j->notes_in++;
        return put_comment(j, j->note[j->nnotes - 1]);
}

static int wire_emit(void *arg, const struct reorder_rec *o)
{
        struct tm_heap_ev ev = {.kind = o->kind,
                                .size = o->size,
                                .addr = o->addr,
                                .new_addr = o->new_addr,
                                .thread = o->thread,
                                .time = o->time};
        struct tm_rec r;
        tm_heap_ev_to_rec(&ev, &r);
        return job_put(arg, &r);
}

/* A notice "tmrecord VERB SEQ ARG" (rec_wire.h). */
static int wire_notice(struct job *j, const char *t, size_t n)
{
        char verb[16], arg[256];
        unsigned long long seq = 0;
        char text[300];
        snprintf(text, sizeof text, "%.*s", (int)(n < sizeof text - 1 ? n : sizeof text - 1), t);
        arg[0] = '\0';
        if (sscanf(text, RECW_NOTE_PREFIX "%15s %llu %255[^\n]", verb, &seq, arg) < 2)
                return 0; /* the mark, or a notice of a later recorder */
        if (strcmp(verb, "exec") == 0) {
                j->exec_pending = 1;
                j->exec_seq = seq;
                snprintf(j->exec_what, sizeof j->exec_what, "%s", arg);
        } else if (strcmp(verb, "exec-failed") == 0) {
                j->exec_pending = 0;
        } else if (strcmp(verb, "fork") == 0) {
                if (!j->forks++)
                        j->fork_seq = seq;
        } else if (strcmp(verb, "spawn") == 0) {
                if (!j->spawns++)
                        snprintf(j->spawn_what, sizeof j->spawn_what, "%s", arg);
        } else if (strcmp(verb, "pymalloc") == 0) {
                return note_add(j,
                                "%s is a Python allocating through its own allocator (%s): "
                                "only the blocks it takes from malloc are in the trace; run it "
                                "with PYTHONMALLOC=malloc",
                                j->name, strcmp(arg, "-") ? arg : "pymalloc");
        }
        return 0;
}

/* One record of a recorder's stream, in arrival order. */
static int wire_put(struct job *j, const struct tm_rec *r)
{
        struct tm_heap_ev ev;
        tm_heap_rec_to_ev(r, &ev);
        if (ev.kind == TM_HK_COMMENT)
                return strncmp((const char *)ev.attr, RECW_NOTE_PREFIX, 9) == 0 && ev.attr_len > 9
                           ? wire_notice(j, (const char *)ev.attr, ev.attr_len)
                           : 0;
        if (ev.kind > TM_HK_REALLOC_FREE)
                return 0; /* the recorder writes no other kind */
        struct reorder_rec o = {.seq = ev.heap,
                                .size = ev.size,
                                .addr = ev.addr,
                                .new_addr = ev.new_addr,
                                .time = ev.time,
                                .thread = (uint32_t)ev.thread,
                                .kind = (uint8_t)ev.kind};
        int rc = reorder_put(&j->ord, &o);
        return rc == -ENOMEM ? tm_err_set(j->err, rc, "%s: out of memory (reorder window)", j->name)
                             : rc;
}

/* The stream ended: the rest of the window, then what it could not show. */
static int wire_end(struct job *j)
{
        int rc = reorder_finish(&j->ord);
        const struct reorder *o = &j->ord;
        if (rc == 0 && (o->late || o->passed))
                rc = note_add(j,
                              "the order of the calls is not restored for %llu records: they "
                              "came more than %zu records late (a thread held them that long) "
                              "and are in the order they arrived",
                              (unsigned long long)(o->late ? o->late : o->passed), o->max);
        if (rc == 0 && reorder_missing(o))
                rc = note_add(j,
                              "%llu records were lost (buffered in threads when the process "
                              "ended or was killed)",
                              (unsigned long long)reorder_missing(o));
        if (rc == 0 && j->forks)
                rc = note_add(j,
                              "%s forked %llu time(s), first after %llu records: what the "
                              "children did is not in the trace",
                              j->name, (unsigned long long)j->forks,
                              (unsigned long long)j->fork_seq);
        if (rc == 0 && j->spawns)
                rc = note_add(j, "%s started %llu program(s) (%s%s): they are not in the trace",
                              j->name, (unsigned long long)j->spawns, j->spawn_what,
                              j->spawns > 1 ? ", ..." : "");
        if (rc == 0 && j->exec_pending)
                rc = note_add(j,
                              "%s exec'd %s after %llu records: nothing after the exec is in "
                              "the trace; name the real program",
                              j->name, j->exec_what, (unsigned long long)j->exec_seq);
        return rc;
}

/* Is head a recorder's stream: the signature, then the mark? */
static int wire_probe(const uint8_t *head, size_t n)
{
        static const uint8_t mark[] = {RECW_COMMENT, 0, RECW_MARK_LEN};
        return n >= HATF_SIGNATURE_LEN + 3 + RECW_MARK_LEN &&
               memcmp(head + HATF_SIGNATURE_LEN, mark, 3) == 0 &&
               memcmp(head + HATF_SIGNATURE_LEN + 3, RECW_MARK, RECW_MARK_LEN) == 0;
}

/* A HATF input (or any record codec of the heap family). */
static int from_records(struct job *j, const struct tm_rcodec *c)
{
        struct tm_schema s;
        struct tm_rstate st;
        void *ctx = NULL;
        struct tm_rfeed f;
        int hl = c->open(j->head, j->headn, j->name, &ctx, &s, &st, j->err);
        if (hl < 0)
                return tm_err_prefix(j->err, "%s", j->name);
        if (strcmp(s.name, "heap") != 0 || tm_rfeed_init(&f, c, ctx) < 0) {
                c->close(ctx);
                return tm_err_set(j->err, -EINVAL, "%s: not a heap trace", j->name);
        }
        remap_init(j, &s);
        j->wire = c == &tm_rcodec_hatf && wire_probe(j->head, j->headn);
        if (j->wire && reorder_init(&j->ord, 0, wire_emit, j) < 0) {
                tm_rfeed_free(&f);
                c->close(ctx);
                return tm_err_set(j->err, -ENOMEM, "%s: out of memory", j->name);
        }
        tm_rfeed_reset(&f, 0, st.b);
        j->headpos = 0;
        static struct tm_rec recs[256];
        int rc = 0;
        for (uint64_t skip = (uint64_t)hl;;) {
                ssize_t n = tm_rfeed_decode(&f, recs, 256, j->err);
                if (n < 0) {
                        rc = tm_err_prefix(j->err, "%s", j->name);
                        break;
                }
                for (ssize_t i = 0; i < n && rc == 0; i++) {
                        struct tm_rec h;
                        if (j->wire) {
                                rc = wire_put(j, &recs[i]);
                                continue;
                        }
                        rc = j->remap ? remap(j, &recs[i], &h) : 0;
                        if (rc == 0)
                                rc = job_put(j, j->remap ? &h : &recs[i]);
                }
                if (rc < 0 || (n == 0 && f.eof))
                        break;
                if (n > 0)
                        continue;
                size_t room;
                uint8_t *p = tm_rfeed_space(&f, &room);
                ssize_t k = job_read(j, p, room);
                if (k < 0) {
                        rc = (int)k;
                        break;
                }
                size_t s0 = skip < (uint64_t)k ? (size_t)skip : (size_t)k;
                memmove(p, p + s0, (size_t)k - s0);
                skip -= s0;
                tm_rfeed_commit(&f, (size_t)k - s0);
                f.eof = k == 0;
        }
        if (rc == 0 && j->wire)
                rc = wire_end(j);
        tm_rfeed_free(&f);
        c->close(ctx);
        return rc;
}

static int open_input(struct job *j, int fd, const char *name)
{
        struct stat sb;
        j->fd = fd;
        j->name = name;
        if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode)) {
                int rc = tm_cont_open(fd, name, &j->cont, j->err);
                if (rc == 0)
                        rc = tm_creader_open(j->cont, &j->r, j->err);
                if (rc < 0)
                        return rc;
        }
        ssize_t k = 1;
        while (j->headn < HEAD_MAX &&
               (k = job_read_raw(j, j->head + j->headn, HEAD_MAX - j->headn)) > 0)
                j->headn += (size_t)k;
        return k < 0 ? (int)k : 0;
}

static int cand_open(struct job *j, struct cand *c, const char *enc, const char *out,
                     enum tm_cont_kind kind)
{
        size_t len = strlen(out) + strlen(enc) + 16;
        c->enc = enc;
        c->fd = -1;
        c->tmp = malloc(len);
        if (!c->tmp)
                return tm_err_set(j->err, -ENOMEM, "out of memory");
        snprintf(c->tmp, len, "%s.%s.tmp", out, enc);
        c->fd = open(c->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (c->fd < 0)
                return tm_err_set(j->err, -errno, "%s: %s", c->tmp, strerror(errno));
        /* the heap default is for zstd; gzip keeps its own unless asked */
        struct tm_cwriter_opts wo = {.level = j->level               ? j->level
                                              : kind == TM_CONT_ZSTD ? PACK_HEAP_LEVEL
                                                                     : 0};
        int rc = tm_cwriter_open(c->fd, c->tmp, kind, &wo, &c->w, j->err);
        if (rc == 0)
                rc = j->codec->enc_open(enc, cand_sink, c, &c->e, j->err);
        return rc;
}

/* Finish every candidate; keep the smallest as out. */
static int job_finish(struct job *j, const char *out, FILE *msg)
{
        int best = -1;
        off_t best_size = 0;
        for (unsigned i = 0; i < j->n; i++) {
                struct cand *c = &j->c[i];
                struct tm_err e = {0};
                int rc = j->codec->enc_finish(c->e, &e);
                c->e = NULL;
                if (rc == 0)
                        rc = tm_cwriter_close(c->w, &e);
                c->w = NULL;
                struct stat sb;
                if (rc == 0 && fsync(c->fd) == 0 && fstat(c->fd, &sb) == 0 &&
                    (best < 0 || sb.st_size < best_size)) {
                        best = (int)i;
                        best_size = sb.st_size;
                } else if (rc < 0) {
                        *j->err = e;
                }
        }
        if (best < 0)
                return j->err->code ? j->err->code : -EIO;
        struct cand *b = &j->c[best];
        j->chosen = b->enc;
        if (rename(b->tmp, out) < 0)
                return tm_err_set(j->err, -errno, "rename %s: %s", out, strerror(errno));
        if (msg)
                fprintf(msg,
                        "tracetool pack: %s: %llu records, encoding %s: %llu bytes raw (%.2f a "
                        "record), %lld packed (%.2f a record)\n",
                        out, (unsigned long long)j->records, b->enc, (unsigned long long)b->raw,
                        j->records ? (double)b->raw / (double)j->records : 0.0,
                        (long long)best_size,
                        j->records ? (double)best_size / (double)j->records : 0.0);
        free(b->tmp);
        b->tmp = NULL;
        return 0;
}

static void job_free(struct job *j)
{
        for (unsigned i = 0; i < j->n; i++) {
                struct cand *c = &j->c[i];
                if (c->e)
                        j->codec->enc_free(c->e);
                if (c->w) {
                        struct tm_err e;
                        tm_cwriter_close(c->w, &e);
                }
                if (c->fd >= 0)
                        close(c->fd);
                if (c->tmp) {
                        unlink(c->tmp);
                        free(c->tmp);
                }
        }
        tm_creader_close(j->r);
        tm_cont_close(j->cont);
}

/* One pass: fd -> out_path, with pre[0..npre) as the first records. */
static int pack_run(struct job *j, int fd, const char *in_name, const char *out_path,
                    const char *enc, FILE *msg, char (*pre)[NOTE_LEN], unsigned npre)
{
        struct tm_err *err = j->err;
        const struct tm_codec *ignored;
        enum tm_cont_kind kind;
        pack_guess(out_path, &ignored, &kind);
        j->codec = pack_heap_mtf(out_path) ? &tm_rcodec_metatf : &tm_rcodec_hatf;
        const char *const *encs = j->codec == &tm_rcodec_metatf ? mtf_encodings : hatf_encodings;
        int rc = open_input(j, fd, in_name);
        const struct tm_rcodec *rc_codec = rc == 0 ? tm_rcodec_probe(j->head, j->headn) : NULL;
        const char *form = rc == 0 ? heapin_detect(j->head, j->headn) : NULL;
        if (rc == 0 && !rc_codec && !form)
                rc = tm_err_set(err, -EMEDIUMTYPE,
                                "%s: not a heap trace this build reads (HATF, glibc mtrace, "
                                "heaptrack)%s",
                                in_name, j->r ? "" : " (a pipe must be uncompressed)");
        for (const char *const *e = encs; rc == 0 && *e && j->n < NENC; e++) {
                if (enc ? strcmp(enc, *e) != 0 : 0)
                        continue;
                rc = cand_open(j, &j->c[j->n], *e, out_path, kind);
                j->n++;
        }
        if (rc == 0 && j->n == 0)
                rc = tm_err_set(err, -EINVAL, "unknown %s encoding '%s'", j->codec->name, enc);
        for (unsigned i = 0; rc == 0 && i < npre; i++)
                rc = put_comment(j, pre[i]);
        if (rc == 0 && rc_codec)
                rc = from_records(j, rc_codec);
        else if (rc == 0)
                rc = heapin_heaptrack(job_read, j, in_name, on_event, j, err);
        /* the size line is the final archive's: after a rewrite (below) */
        int rewrite =
            j->final_level >= 0 || (j->notes_in < j->nnotes && j->codec == &tm_rcodec_hatf);
        if (rc == 0)
                rc = job_finish(j, out_path, rewrite ? NULL : msg);
        job_free(j);
        return rc;
}

/* OUT packed once more in the encoding chosen: at the final level, after
 * candidates compared at PACK_HEAP_PICK_LEVEL; with the notes that came
 * after the first records in front (a comment changes no encoder state, so
 * the rest is the same bytes). */
static int pack_rewrite(struct job *j, const char *out_path, FILE *msg)
{
        int fd = open(out_path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return tm_err_set(j->err, -errno, "%s: %s", out_path, strerror(errno));
        struct job *k = calloc(1, sizeof *k);
        int rc = -ENOMEM;
        if (k) {
                k->err = j->err;
                k->level = j->final_level >= 0 ? j->final_level : j->level;
                k->final_level = -1;
                rc = pack_run(k, fd, out_path, out_path, j->chosen, msg, j->note + j->notes_in,
                              j->nnotes - j->notes_in);
                reorder_free(&k->ord);
                free(k);
        }
        close(fd);
        return rc;
}

int pack_heap_fd(int fd, const char *in_name, const char *out_path, const char *enc, int level,
                 FILE *msg, struct tm_err *err)
{
        struct job *j = calloc(1, sizeof *j);
        if (!j)
                return tm_err_set(err, -ENOMEM, "out of memory");
        j->err = err;
        /* Every candidate compressed at the final level costs that level
         * times the encodings (zstd 19: minutes a million records): they
         * are compared at a fast level and the one kept is packed again
         * (docs/record.md). */
        j->level = level;
        j->final_level = -1;
        const struct tm_codec *ignored;
        enum tm_cont_kind kind;
        pack_guess(out_path, &ignored, &kind);
        if (!enc && level != PACK_HEAP_PICK_LEVEL && kind != TM_CONT_PLAIN &&
            !pack_heap_mtf(out_path)) {
                j->final_level = level;
                j->level = PACK_HEAP_PICK_LEVEL;
        }
        int rc = pack_run(j, fd, in_name, out_path, enc, msg, NULL, 0);
        if (rc == 0 &&
            (j->final_level >= 0 || (j->notes_in < j->nnotes && j->codec == &tm_rcodec_hatf)))
                rc = pack_rewrite(j, out_path, msg);
        if (rc == 0 && msg && j->wire)
                fprintf(msg,
                        "tracetool: %s: %llu records in the order of the calls (reorder window: "
                        "%llu records at most, of %zu)\n",
                        out_path, (unsigned long long)j->ord.seen,
                        (unsigned long long)j->ord.max_held, j->ord.max);
        for (unsigned i = 0; msg && i < j->nnotes; i++)
                fprintf(msg, "tracetool: %s: note: %s\n", out_path, j->note[i]);
        reorder_free(&j->ord);
        free(j);
        return rc;
}

/* ---- the command line: tracetool pack [-e ENC] IN OUT.hatf[.gz|.zst] ---- */

/* Does name end with one of suf[0..n)? */
static int ends_any(const char *name, const char *const *suf, unsigned n)
{
        size_t len = strlen(name);
        for (unsigned i = 0; i < n; i++) {
                size_t m = strlen(suf[i]);
                if (len > m && strcmp(name + len - m, suf[i]) == 0)
                        return 1;
        }
        return 0;
}

int pack_heap_mtf(const char *out)
{
        static const char *const suf[] = {".mtf", ".mtf.gz", ".mtf.zst"};
        return ends_any(out, suf, 3);
}

int pack_heap_wanted(int argc, char **argv)
{
        static const char *const suf[] = {".hatf", ".hatf.gz", ".hatf.zst"};
        return argc >= 2 && (ends_any(argv[argc - 1], suf, 3) || pack_heap_mtf(argv[argc - 1]));
}

void pack_heap_usage(FILE *f)
{
        fprintf(f, "usage: tracetool pack [-e ENCODING] IN OUT.hatf[.gz|.zst]\n"
                   "       tracetool pack [-e ENCODING] IN OUT.mtf[.gz|.zst]\n\n"
                   "Pack the heap trace IN (HATF, HATF as Meta-TF, a glibc mtrace log or a\n"
                   "heaptrack file; plain, gzip or zstd; '-' is stdin, uncompressed) as HATF 1.0\n"
                   "(.hatf) or as Meta-TF with the shipped HATF DTD, hatf10v2.dtd (.mtf: Appendix\n"
                   "C's with HATF's realloc records, so nothing is lost).\n\n"
                   "  -e, --encoding NAME   .hatf:");
        for (const char *const *e = hatf_encodings; *e; e++)
                fprintf(f, " %s", *e);
        fprintf(f, "\n                        .mtf:");
        for (const char *const *e = mtf_encodings; *e; e++)
                fprintf(f, " %s", *e);
        fprintf(f,
                " (addresses in their own section)\n"
                "                        (default: try them all, keep the smallest)\n"
                "  --level N             compression level of .gz (1-9) and .zst (1-22)\n"
                "                        (default: %d)\n"
                "  -h, --help            this help\n",
                PACK_HEAP_LEVEL);
}

int pack_heap_parse_level(const char *s, int *level)
{
        char *end;
        errno = 0;
        long v = strtol(s, &end, 10);
        if (!*s || *end || errno || v < 1 || v > 22)
                return -1;
        *level = (int)v;
        return 0;
}

int pack_heap_main(int argc, char **argv)
{
        const char *enc = NULL;
        int level = 0;
        int i = 1;
        for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
                if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
                        pack_heap_usage(stdout);
                        return TOOL_OK;
                }
                if ((strcmp(argv[i], "-e") == 0 || strcmp(argv[i], "--encoding") == 0) &&
                    i + 1 < argc) {
                        enc = argv[++i];
                } else if (strncmp(argv[i], "--encoding=", 11) == 0) {
                        enc = argv[i] + 11;
                } else if (strcmp(argv[i], "--level") == 0 ||
                           strncmp(argv[i], "--level=", 8) == 0) {
                        const char *v = argv[i][7] == '=' ? argv[i] + 8
                                        : i + 1 < argc    ? argv[++i]
                                                          : "";
                        if (pack_heap_parse_level(v, &level) < 0) {
                                fprintf(stderr, "tracetool pack: bad --level '%s' (1-22)\n", v);
                                return TOOL_USAGE;
                        }
                } else {
                        fprintf(stderr, "tracetool pack: unknown option '%s'\n", argv[i]);
                        pack_heap_usage(stderr);
                        return TOOL_USAGE;
                }
        }
        if (argc - i != 2) {
                pack_heap_usage(stderr);
                return TOOL_USAGE;
        }
        const char *in = argv[i], *out = argv[i + 1];
        int fd = strcmp(in, "-") == 0 ? STDIN_FILENO : open(in, O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
                fprintf(stderr, "tracetool pack: %s: %s\n", in, strerror(errno));
                return TOOL_FAIL;
        }
        struct tm_err err = {0};
        int rc =
            pack_heap_fd(fd, strcmp(in, "-") == 0 ? "<stdin>" : in, out, enc, level, stderr, &err);
        if (fd != STDIN_FILENO)
                close(fd);
        if (rc < 0) {
                fprintf(stderr, "tracetool pack: %s\n", err.msg);
                return rc == -EINVAL && !err.msg[0] ? TOOL_USAGE : TOOL_FAIL;
        }
        return TOOL_OK;
}
