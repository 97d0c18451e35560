/* fuzz_index: libFuzzer harness for the index file loaders, through the
 * library's public API (views/view.h): tm_trace_index loads the index file
 * beside the archive (views/index_file.c tm_index_load, the one layout
 * for every trace) or, when it refuses it, rebuilds the index in memory.
 *
 * Set-up (once): small real archives in a temporary directory (address:
 * 500 references of PDATS II in seekable zstd with 256-byte frames, PDATS
 * in gzip, din text plain; record: the shipped example sort.hatf.zst, 291
 * records, and one in six of the records of the shipped heapwork.mtf.zst,
 * some 270, encoded again as Meta-TF in seekable zstd with 2 KiB frames),
 * each indexed with a checkpoint every 16 references or records (10 in the
 * Meta-TF one, whose index file is then over 64 KiB: 18 to 31 checkpoints)
 * and its index saved beside it; every view read whole as the reference.
 *
 * Input: byte 0 picks the archive (bits 0-2, modulo 5: the address ones,
 * then the record ones) and the mode; byte 1 modulo the archive's number
 * of views picks the view read; the rest is the index file. Bit 3 set:
 * patch mode, the rest are edits of the archive's real index (2-byte
 * offset, 1 byte xor; a last odd byte cuts the file at a length it picks).
 * Bit 4 set: forged, the file gets the real key (bytes 16 to
 * TM_IX_KEY_END: archive size, mtime, inode, content fingerprint, codec,
 * container) and a correct CRC (bytes 12-15,
 * over byte 16 to the end), as someone writing a hostile index on purpose
 * would; without it, only the CRC guards. Bits 5-7: the read size. The
 * file is written over the index path, the archive opened and indexed;
 * its views must be the reference's, each of the reference's size, and
 * the picked view is read whole (stats.json, whose size means rendering
 * it, is sized only when picked): each read must give the reference's
 * bytes or an error with a message. One view a run, not every view: a run
 * is then some ten times faster (each record view decodes the whole
 * archive again), and over many runs every view is read with every kind
 * of index file. For a forged file that the loader accepts, the contents
 * cannot all be checked without decoding the archive (docs/index-format.md
 * says what the index trusts): wrong bytes there are counted and printed
 * at exit, and abort only with FZI_STRICT=1. Memory and time are bounded
 * by libFuzzer's limits. Seeds (fuzz/corpus/fuzz_index/): forged and
 * patched files of each archive, and viewA-VV, the real index of archive A
 * (patch mode, no edit) with view VV read, at a read size that changes
 * with the view. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "codecs/address/arec.h"
#include "codecs/containers/container.h"
#include "codecs/heap/heap.h"
#include "codecs/record/record.h"
#include "tests/support/aref.h"
#include "views/ixfile.h"
#include "views/view.h"

#include "fz_side.h"

#ifndef TM_SOURCE_DIR
#define TM_SOURCE_DIR "."
#endif

#define FZI_N 5
#define FZI_VIEWS 64

struct fzi_view {
        char *name;
        uint8_t *b;
        size_t n;
};

struct fzi_arch {
        char path[256];
        char *ix_path;
        uint8_t *ix; /* the real index file */
        size_t ixn;
        struct fzi_view v[FZI_VIEWS];
        unsigned nv;
        /* references or records between its checkpoints, 0: 16 */
        uint64_t ckpt;
};

static struct fzi_arch fzi_a[FZI_N];
static unsigned fzi_na;
static char fzi_dir[] = "/tmp/fuzz_index.XXXXXX";
static unsigned long long fzi_forged_loaded, fzi_forged_wrong, fzi_runs;
static char fzi_cache[64];
static const struct tm_trace_opts fzi_opts = {.cache_dir = fzi_cache, .no_save = 1};

static void fzi_die(const char *what, const char *msg)
{
        fprintf(stderr, "fuzz_index: %s: %s\n", what, msg ? msg : "");
        abort();
}

static uint8_t *fzi_slurp(const char *path, size_t *n)
{
        FILE *f = fopen(path, "rb");
        if (!f)
                fzi_die("cannot read", path);
        size_t cap = 4096, len = 0;
        uint8_t *b = malloc(cap);
        size_t k;
        while (b && (k = fread(b + len, 1, cap - len, f)) > 0) {
                len += k;
                if (len == cap)
                        b = realloc(b, cap *= 2);
        }
        fclose(f);
        if (!b)
                abort();
        *n = len;
        return b;
}

static void fzi_spill(const char *path, const uint8_t *b, size_t n)
{
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0 || (n && write(fd, b, n) != (ssize_t)n) || close(fd) != 0)
                fzi_die("cannot write", path);
}

/* A small address trace: loops of instruction fetches with reads and
 * writes, packed with codec into container kind. */
static void fzi_pack(const char *name, const char *codec, enum tm_cont_kind kind)
{
        struct fzi_arch *a = &fzi_a[fzi_na++];
        snprintf(a->path, sizeof a->path, "%s/%s", fzi_dir, name);
        const struct tm_rcodec *c = tm_rcodec_by_name(codec);
        int fd = open(a->path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        struct tm_cwriter *w;
        struct tm_cwriter_opts o = {.level = 3, .frame_size = 256};
        struct tm_err err = {0};
        if (!c || fd < 0 || tm_cwriter_open(fd, a->path, kind, &o, &w, &err) != 0)
                fzi_die("pack", err.msg);
        struct aref_enc e;
        struct tm_enc_opts eo = {.addr_bits = 32, .unit = 4};
        if (aref_enc_open(&e, c, &eo, &err) < 0 || tm_cwriter_write(w, e.buf, e.len, &err) != 0)
                fzi_die("pack", err.msg);
        int n;
        uint32_t pc = 0x400000, x = 12345;
        for (uint64_t i = 0; i < 500; i++) {
                struct tm_ref r;
                x = x * 1103515245u + 12345u;
                if (i % 3) {
                        r.type = TM_IFETCH;
                        r.addr = pc;
                        pc = (x >> 16) % 10 ? pc + 4 : 0x400000 + ((x >> 8) & 0xff0);
                } else {
                        r.type = (x >> 20) & 1;
                        r.addr = 0x10000000 + ((x >> 4) & 0xfff8);
                }
                n = aref_put(&e, &r, 0, i, &err);
                if (n < 0 || tm_cwriter_write(w, e.buf + e.len - n, (size_t)n, &err) != 0 ||
                    tm_cwriter_boundary(w, &err) != 0)
                        fzi_die("pack", err.msg);
        }
        n = aref_finish(&e, &err);
        if (n < 0 || tm_cwriter_write(w, e.buf + e.len - n, (size_t)n, &err) != 0 ||
            tm_cwriter_close(w, &err) != 0 || close(fd) != 0)
                fzi_die("pack", err.msg);
        aref_enc_free(&e);
}
/* A shipped example trace, copied. */
static void fzi_copy(const char *name)
{
        struct fzi_arch *a = &fzi_a[fzi_na++];
        char src[512];
        size_t n;
        snprintf(src, sizeof src, "%s/examples/%s", TM_SOURCE_DIR, name);
        uint8_t *b = fzi_slurp(src, &n);
        snprintf(a->path, sizeof a->path, "%s/%s", fzi_dir, name);
        fzi_spill(a->path, b, n);
        free(b);
}

/* Each encoded piece is whole records: a place a zstd frame may end. */
static int fzi_sink(void *arg, const void *buf, size_t n)
{
        struct tm_err err = {0};
        struct tm_cwriter *w = arg;
        if (tm_cwriter_write(w, buf, n, &err) != 0 || tm_cwriter_boundary(w, &err) != 0)
                fzi_die("sample", err.msg);
        return 0;
}

/* r, a record of a heap trace of schema s (Meta-TF's: Appendix C's DTD),
 * as the record of tm_schema_heap the encoders take, its kinds and fields
 * by name. A realloc of Appendix C's one realloc kind gets the outcome
 * its addresses say, as tracetool pack gives it (the heap family's
 * rec_refine, through codecs/record/rmap.c). */
static void fzi_heap_rec(const struct tm_schema *s, const struct tm_rec *r, struct tm_rec *o)
{
        const struct tm_kind *k = &s->kind[r->kind];
        int hk = tm_schema_kind(&tm_schema_heap, k->name);
        if (hk < 0)
                fzi_die("sample: not a heap kind", k->name);
        struct tm_heap_ev ev = {.kind = (unsigned)hk};
        unsigned slot = 0;
        for (unsigned i = 0; i < k->nfields; i++) {
                const struct tm_field *f = &s->field[k->field[i]];
                uint64_t v = r->v[i];
                switch (tm_field_is_var(f) ? TM_HF_ATTRIBUTES
                                           : tm_schema_field(&tm_schema_heap, f->name)) {
                case TM_HF_ATTRIBUTES:
                        ev.attr = r->var[slot++];
                        ev.attr_len = (size_t)v;
                        break;
                case TM_HF_SIZE:
                        ev.size = v;
                        break;
                case TM_HF_ADDRESS:
                        ev.addr = v;
                        break;
                case TM_HF_NEW_ADDRESS:
                        ev.new_addr = v;
                        break;
                case TM_HF_THREAD:
                        ev.thread = v;
                        break;
                case TM_HF_HEAP:
                        ev.heap = v;
                        break;
                case TM_HF_TIME:
                        ev.time = v;
                        break;
                default:
                        break; /* a field the heap schema lacks */
                }
        }
        if (hk == TM_HK_REALLOC && tm_schema_kind(s, "realloc_alloc_free") < 0)
                ev.kind = ev.addr == 0             ? TM_HK_REALLOC_ALLOC
                          : ev.new_addr == 0       ? TM_HK_REALLOC_FREE
                          : ev.addr == ev.new_addr ? TM_HK_REALLOC
                                                   : TM_HK_REALLOC_ALLOC_FREE;
        tm_heap_ev_to_rec(&ev, o);
}

/* A shipped heap trace of the record codec named codec, made smaller: one
 * in `every` of its records, encoded again by the codec's encoder (which
 * writes its own header) in seekable zstd with small frames. The records,
 * their fields and texts are still a real program's. */
static void fzi_sample(const char *name, const char *codec, unsigned every)
{
        fzi_copy(name);
        struct fzi_arch *a = &fzi_a[fzi_na - 1];
        struct tm_trace *t;
        struct tm_vfile *f;
        struct tm_err err = {0};
        uint64_t n;
        if (tm_trace_open(a->path, &fzi_opts, &t, &err) != 0 ||
            tm_trace_view_size(t, "raw", &n, &err) != 0 || tm_vfile_open(t, "raw", &f, &err) != 0)
                fzi_die("sample", err.msg);
        uint8_t *raw = malloc(n ? n : 1);
        for (uint64_t got = 0; got < n;) {
                ssize_t k = raw ? tm_vfile_pread(f, raw + got, n - got, got, &err) : -1;
                if (k <= 0)
                        fzi_die("sample raw", err.msg);
                got += (uint64_t)k;
        }
        tm_vfile_close(f);
        tm_trace_close(t);
        const struct tm_rcodec *c = tm_rcodec_by_name(codec);
        static struct tm_schema schema;
        struct tm_rstate st;
        void *ctx = NULL;
        int hl = c ? c->open(raw, n, a->path, &ctx, &schema, &st, &err) : -1;
        int fd = open(a->path, O_WRONLY | O_TRUNC);
        struct tm_cwriter_opts wo = {.level = 3, .frame_size = 2048};
        /* a checkpoint every 10 records: an index file over 64 KiB, read in
         * more than one piece for its CRC (views/ixfile.c tm_ixfile_crc) */
        a->ckpt = 10;
        struct tm_cwriter *w;
        struct tm_renc *e;
        if (hl < 0 || fd < 0 || tm_cwriter_open(fd, a->path, TM_CONT_ZSTD, &wo, &w, &err) != 0 ||
            c->enc_open(NULL, fzi_sink, w, &e, &err) != 0)
                fzi_die("sample", err.msg);
        static struct tm_rec rec[256];
        uint64_t pos = (uint64_t)hl, idx = 0, kept = 0;
        while (pos < n) {
                size_t used = 0;
                ssize_t k = c->decode(ctx, &st, raw + pos, n - pos, 1, pos, &used, rec, 256, &err);
                if (k < 0 || (k == 0 && used == 0))
                        fzi_die("sample decode", err.msg);
                for (ssize_t j = 0; j < k; j++, idx++) {
                        struct tm_rec h;
                        if (idx % every)
                                continue;
                        fzi_heap_rec(&schema, &rec[j], &h);
                        if (c->enc_put(e, &h, 1, kept++, &err) != 0)
                                fzi_die("sample encode", err.msg);
                }
                pos += used;
        }
        if (c->enc_finish(e, &err) != 0 || tm_cwriter_close(w, &err) != 0 || close(fd) != 0)
                fzi_die("sample", err.msg);
        c->close(ctx);
        free(raw);
}

/* Read view vs of a whole with reads of piece bytes into v: its
 * reference when ref is set, else checked against it. Returns 1 if it
 * gave wrong bytes or its size is wrong, else 0. */
static unsigned fzi_read_view(struct tm_trace *t, const char *vs, struct fzi_view *v, size_t piece,
                              int ref)
{
        static uint8_t buf[1 << 16];
        struct tm_err err = {0};
        uint64_t size;
        if (tm_trace_view_size(t, vs, &size, &err) != 0) {
                if (ref || !err.msg[0])
                        fzi_die("view size", err.msg);
                return 0;
        }
        if (ref) {
                v->b = malloc(size ? size : 1);
                v->n = size;
                if (!v->b)
                        abort();
        } else if (size != v->n) {
                return 1;
        }
        struct tm_vfile *f;
        if (tm_vfile_open(t, vs, &f, &err) != 0) {
                if (ref || !err.msg[0])
                        fzi_die("vfile open", err.msg);
                return 0;
        }
        unsigned wrong = 0;
        uint64_t off = 0;
        while (off < size) {
                ssize_t n = tm_vfile_pread(f, buf, piece, off, &err);
                if (n < 0) {
                        if (ref || !err.msg[0])
                                fzi_die("read", err.msg);
                        break;
                }
                if (n == 0 || (size_t)n > piece || off + (uint64_t)n > size) {
                        if (ref)
                                fzi_die("reference read", vs);
                        wrong = 1;
                        break;
                }
                if (ref)
                        memcpy(v->b + off, buf, (size_t)n);
                else if (memcmp(v->b + off, buf, (size_t)n)) {
                        wrong = 1;
                        break;
                }
                off += (uint64_t)n;
        }
        tm_vfile_close(f);
        return wrong;
}

/* The reference: every view of a read whole. */
static void fzi_reference(struct fzi_arch *a, struct tm_trace *t)
{
        const char *const *vs = tm_trace_views(t);
        for (unsigned i = 0; vs[i] && a->nv < FZI_VIEWS; i++) {
                struct fzi_view *v = &a->v[a->nv++];
                v->name = strdup(vs[i]);
                fzi_read_view(t, vs[i], v, 4096, 1);
        }
}

/* Read view vs of t whole in pieces of piece bytes and compare it with
 * its reference v, both without the side files they name (fz_side.h):
 * a refused index file is one (stats and stats.json list it, by design).
 * Returns 1 if the bytes differ, 0 if they match or the read failed with
 * a message. */
static unsigned fzi_read_sans_side(struct tm_trace *t, const char *vs, const struct fzi_view *v,
                                   size_t piece)
{
        static uint8_t buf[1 << 16];
        struct tm_err err = {0};
        uint64_t size;
        struct tm_vfile *f;
        if (tm_trace_view_size(t, vs, &size, &err) != 0 || tm_vfile_open(t, vs, &f, &err) != 0) {
                if (!err.msg[0])
                        fzi_die("view size or open", vs);
                return 0;
        }
        uint8_t *got = malloc(size + 1), *want = malloc(v->n + 1);
        if (!got || !want)
                abort();
        uint64_t off = 0;
        ssize_t n = 1;
        while (off < size && (n = tm_vfile_pread(f, buf, piece, off, &err)) > 0) {
                memcpy(got + off, buf, (size_t)n);
                off += (uint64_t)n;
        }
        tm_vfile_close(f);
        if (n < 0 && !err.msg[0])
                fzi_die("read", vs);
        size_t gn = (size_t)off, wn = v->n;
        memcpy(want, v->b, wn);
        void (*drop)(uint8_t *, size_t *) =
            strcmp(vs, "stats") == 0 ? fz_drop_side_lines : fz_drop_side_json;
        drop(got, &gn);
        drop(want, &wn);
        unsigned wrong = n >= 0 && (gn != wn || memcmp(got, want, wn) != 0);
        free(got);
        free(want);
        return wrong;
}

/* Check t against a's reference: the same views, each of the same size
 * (both from the index alone), and view pick, if its size is right, read
 * whole in pieces of piece bytes. With refused (the index file was not
 * loaded), errors is left out, and stats and stats.json, which name the
 * file refused and why (docs/side-files.md), are compared without the
 * side files they name when picked. Returns the number of views that
 * were wrong. */
static unsigned fzi_check(struct fzi_arch *a, struct tm_trace *t, unsigned pick, size_t piece,
                          int refused)
{
        unsigned wrong = 0, i = 0;
        int read = 0;
        const char *const *vs = tm_trace_views(t);
        for (; vs[i]; i++) {
                struct fzi_view *v = i < a->nv ? &a->v[i] : NULL;
                if (!v || strcmp(v->name, vs[i])) {
                        wrong++; /* a view the reference did not have */
                        continue;
                }
                /* stats.json's size means rendering it (a sixth of a run's
                 * time): checked when it is the view picked */
                if (i != pick && strcmp(vs[i], "stats.json") == 0)
                        continue;
                if (refused && strcmp(vs[i], "errors") == 0)
                        continue;
                if (refused && (strcmp(vs[i], "stats") == 0 || strcmp(vs[i], "stats.json") == 0)) {
                        wrong += i == pick ? fzi_read_sans_side(t, vs[i], v, piece) : 0;
                        continue;
                }
                struct tm_err err = {0};
                uint64_t size;
                if (tm_trace_view_size(t, vs[i], &size, &err) != 0) {
                        if (!err.msg[0])
                                fzi_die("view size", err.msg);
                } else if (size != v->n) {
                        wrong++;
                } else {
                        read |= i == pick;
                }
        }
        wrong += i != a->nv; /* one the reference had is missing */
        if (read)
                wrong += fzi_read_view(t, vs[pick], &a->v[pick], piece, 0);
        return wrong;
}

static void fzi_report(void)
{
        for (unsigned i = 0; i < fzi_na; i++) {
                unlink(fzi_a[i].path);
                if (fzi_a[i].ix_path)
                        unlink(fzi_a[i].ix_path);
        }
        rmdir(fzi_dir);
        fprintf(stderr,
                "fuzz_index: %llu runs, %llu forged index files accepted, %llu of them gave "
                "wrong bytes\n",
                fzi_runs, fzi_forged_loaded, fzi_forged_wrong);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
        (void)argc;
        (void)argv;
        if (!mkdtemp(fzi_dir))
                abort();
        setenv("TM_READ_THREADS", "0", 1); /* no read-ahead threads: speed */
        snprintf(fzi_cache, sizeof fzi_cache, "%s/cache", fzi_dir);
        fzi_pack("a.pdt2.zst", "pdats2", TM_CONT_ZSTD);
        fzi_pack("b.pdt.gz", "pdats", TM_CONT_GZIP);
        fzi_pack("c.din", "din", TM_CONT_PLAIN);
        fzi_copy("sort.hatf.zst");
        fzi_sample("heapwork.mtf.zst", "metatf", 6);
        const char *seeds = getenv("FZI_SEEDS");
        for (unsigned i = 0; i < fzi_na; i++) {
                struct fzi_arch *a = &fzi_a[i];
                struct tm_trace_opts o = {.cache_dir = fzi_cache,
                                          .ckpt_refs = a->ckpt ? a->ckpt : 16};
                struct tm_trace *t;
                struct tm_err err = {0};
                if (tm_trace_open(a->path, &o, &t, &err) != 0 ||
                    tm_trace_index(t, NULL, NULL, &err) != 0)
                        fzi_die(a->path, err.msg);
                if (!tm_trace_index_path(t))
                        fzi_die("no index file saved", a->path);
                a->ix_path = strdup(tm_trace_index_path(t));
                a->ix = fzi_slurp(a->ix_path, &a->ixn);
                fzi_reference(a, t);
                tm_trace_close(t);
                if (seeds) { /* the real index, as a whole-file input */
                        char p[512];
                        snprintf(p, sizeof p, "%s/real%u", seeds, i);
                        uint8_t *b = malloc(a->ixn + 2);
                        b[0] = (uint8_t)(i | 0x10);
                        b[1] = 0; /* the ascii view */
                        memcpy(b + 2, a->ix, a->ixn);
                        fzi_spill(p, b, a->ixn + 2);
                        free(b);
                }
        }
        atexit(fzi_report);
        return 0;
}

/* The index file the input describes, in a new buffer of *n bytes. */
static uint8_t *fzi_file(const struct fzi_arch *a, const uint8_t *data, size_t size, size_t *n)
{
        uint8_t *b;
        if (data[0] & 8) {
                b = malloc(a->ixn);
                memcpy(b, a->ix, a->ixn);
                *n = a->ixn;
                size_t i = 2;
                for (; i + 3 <= size; i += 3) {
                        size_t at = ((size_t)data[i] | (size_t)data[i + 1] << 8) % a->ixn;
                        b[at] ^= data[i + 2] ? data[i + 2] : 1;
                }
                if (i < size) /* a cut */
                        *n = (size_t)data[i] * a->ixn / 256;
        } else {
                *n = size - 2;
                b = malloc(*n ? *n : 1);
                memcpy(b, data + 2, *n);
        }
        if (!b)
                abort();
        if ((data[0] & 16) && *n >= TM_IX_KEY_END) {
                memcpy(b + 16, a->ix + 16, TM_IX_KEY_END - 16);
                uint32_t crc = (uint32_t)crc32(0, b + 16, (uInt)(*n - 16));
                for (int k = 0; k < 4; k++)
                        b[12 + k] = (uint8_t)(crc >> (8 * k));
        }
        return b;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (size < 2 || !fzi_na)
                return 0;
        fzi_runs++;
        struct fzi_arch *a = &fzi_a[(data[0] & 7) % fzi_na];
        size_t n;
        uint8_t *b = fzi_file(a, data, size, &n);
        fzi_spill(a->ix_path, b, n);
        free(b);
        struct tm_trace *t;
        struct tm_err err = {0};
        if (tm_trace_open(a->path, &fzi_opts, &t, &err) != 0)
                fzi_die("open", err.msg);
        if (tm_trace_index(t, NULL, NULL, &err) != 0)
                fzi_die("index (the archive is intact)", err.msg);
        int loaded = tm_trace_index_source(t) == TM_INDEX_LOADED;
        static const size_t pieces[8] = {4096, 7, 100, 1000, 4095, 65536, 333, 10000};
        unsigned pick = data[1] % a->nv;
        unsigned wrong = fzi_check(a, t, pick, pieces[data[0] >> 5], !loaded);
        tm_trace_close(t);
        int forged = (data[0] & 16) && n >= TM_IX_KEY_END;
        fzi_forged_loaded += forged && loaded;
        fzi_forged_wrong += forged && loaded && wrong;
        if (wrong && (!forged || getenv("FZI_STRICT"))) {
                fprintf(stderr,
                        "fuzz_index: %u views of %s wrong (%s read) with a%s index file (%s)\n",
                        wrong, a->path, a->v[pick].name, forged ? " forged" : "n unforged",
                        loaded ? "loaded" : "rebuilt");
                abort();
        }
        return 0;
}
