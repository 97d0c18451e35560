/* fuzz_index: libFuzzer harness for the index file loaders, through the
 * library's public API (views/view.h): tm_trace_index loads the index file
 * beside the archive (views/index.c tm_index_load for address traces,
 * views/rindex_file.c tm_rindex_load for record traces) or, when it
 * refuses it, rebuilds the index in memory.
 *
 * Set-up (once): small real archives in a temporary directory (address:
 * PDATS II in seekable zstd with small frames, PDATS in gzip, din text
 * plain; record: the shipped examples sort.hatf.zst and heapwork.mtf.zst),
 * each indexed with a small checkpoint spacing and its index saved beside
 * it; every view read whole as the reference.
 *
 * Input: byte 0 picks the archive (bits 0-2, modulo 5: the address ones,
 * then the record ones) and the mode; the rest is the index file. Bit 3
 * set: patch mode, the rest are edits of the archive's
 * real index (2-byte offset, 1 byte xor; a last odd byte cuts the file
 * at a length it picks). Bit 4 set: forged, the file gets the real key
 * (bytes 16-71: archive size, mtime, inode, codec, container) and a
 * correct CRC (bytes 12-15, over byte 16 to the end), as someone writing
 * a hostile index on purpose would; without it, only the CRC guards.
 * Bits 5-7: the read size. The file is written over the index path, the
 * archive opened and indexed, every view read whole: each read must give
 * the reference's bytes or an error with a message; the view sizes must be
 * the reference's. For a forged file that the loader accepts, the contents
 * cannot all be checked without decoding the archive (docs/index-format.md
 * says what the index trusts): wrong bytes there are counted and printed
 * at exit, and abort only with FZI_STRICT=1. Memory and time are bounded
 * by libFuzzer's limits. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "codecs/address/trace.h"
#include "codecs/containers/container.h"
#include "views/view.h"

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
};

static struct fzi_arch fzi_a[FZI_N];
static unsigned fzi_na;
static char fzi_dir[] = "/tmp/fuzz_index.XXXXXX";
static unsigned long long fzi_forged_loaded, fzi_forged_wrong, fzi_runs;

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
        const struct tm_codec *c = tm_codec_by_name(codec);
        int fd = open(a->path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        struct tm_cwriter *w;
        struct tm_cwriter_opts o = {.level = 3, .frame_size = 700};
        struct tm_err err = {0};
        if (!c || fd < 0 || tm_cwriter_open(fd, a->path, kind, &o, &w, &err) != 0)
                fzi_die("pack", err.msg);
        struct tm_enc_state st;
        struct tm_enc_opts eo = {.addr_bits = 32, .unit = 4};
        uint8_t out[TM_ENC_MAX_OUT];
        int n = c->enc_init(&st, &eo, out, &err);
        if (n < 0 || tm_cwriter_write(w, out, (size_t)n, &err) != 0)
                fzi_die("pack", err.msg);
        uint32_t pc = 0x400000, x = 12345;
        for (uint64_t i = 0; i < 1500; i++) {
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
                n = c->encode(&st, &r, i, out, &err);
                if (n < 0 || tm_cwriter_write(w, out, (size_t)n, &err) != 0 ||
                    tm_cwriter_boundary(w, &err) != 0)
                        fzi_die("pack", err.msg);
        }
        n = c->finish(&st, out, &err);
        if (n < 0 || tm_cwriter_write(w, out, (size_t)n, &err) != 0 ||
            tm_cwriter_close(w, &err) != 0 || close(fd) != 0)
                fzi_die("pack", err.msg);
}
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

static char fzi_cache[64];
static const struct tm_trace_opts fzi_opts = {.cache_dir = fzi_cache, .no_save = 1};

/* Read every view of a whole (reference pass when ref is set, else check
 * against a's reference). Returns the number of views that gave wrong
 * bytes or sizes. */
static unsigned fzi_read(struct fzi_arch *a, struct tm_trace *t, size_t piece, int ref)
{
        static uint8_t buf[1 << 16];
        unsigned wrong = 0;
        const char *const *vs = tm_trace_views(t);
        for (unsigned i = 0; vs[i]; i++) {
                struct fzi_view *v = NULL;
                if (ref) {
                        if (a->nv == FZI_VIEWS)
                                break;
                        v = &a->v[a->nv++];
                        v->name = strdup(vs[i]);
                } else {
                        for (unsigned j = 0; j < a->nv && !v; j++)
                                if (!strcmp(a->v[j].name, vs[i]))
                                        v = &a->v[j];
                        if (!v) {
                                wrong++; /* a view the reference did not have */
                                continue;
                        }
                }
                struct tm_err err = {0};
                uint64_t size;
                if (tm_trace_view_size(t, vs[i], &size, &err) != 0) {
                        if (ref || !err.msg[0])
                                fzi_die("view size", err.msg);
                        continue;
                }
                if (ref) {
                        v->b = malloc(size ? size : 1);
                        v->n = size;
                        if (!v->b)
                                abort();
                } else if (size != v->n) {
                        wrong++;
                        continue;
                }
                struct tm_vfile *f;
                if (tm_vfile_open(t, vs[i], &f, &err) != 0) {
                        if (ref || !err.msg[0])
                                fzi_die("vfile open", err.msg);
                        continue;
                }
                uint64_t off = 0;
                while (off < size) {
                        ssize_t n = tm_vfile_pread(f, buf, piece, off, &err);
                        if (n < 0) {
                                if (ref || !err.msg[0])
                                        fzi_die("read", err.msg);
                                break;
                        }
                        if (n == 0 || (size_t)n > piece || off + (uint64_t)n > size) {
                                wrong += !ref;
                                if (ref)
                                        fzi_die("reference read", vs[i]);
                                break;
                        }
                        if (ref)
                                memcpy(v->b + off, buf, (size_t)n);
                        else if (memcmp(v->b + off, buf, (size_t)n)) {
                                wrong++;
                                break;
                        }
                        off += (uint64_t)n;
                }
                tm_vfile_close(f);
        }
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
        fzi_copy("heapwork.mtf.zst");
        const char *seeds = getenv("FZI_SEEDS");
        for (unsigned i = 0; i < fzi_na; i++) {
                struct fzi_arch *a = &fzi_a[i];
                struct tm_trace_opts o = {.cache_dir = fzi_cache, .ckpt_refs = 16};
                struct tm_trace *t;
                struct tm_err err = {0};
                if (tm_trace_open(a->path, &o, &t, &err) != 0 ||
                    tm_trace_index(t, NULL, NULL, &err) != 0)
                        fzi_die(a->path, err.msg);
                if (!tm_trace_index_path(t))
                        fzi_die("no index file saved", a->path);
                a->ix_path = strdup(tm_trace_index_path(t));
                a->ix = fzi_slurp(a->ix_path, &a->ixn);
                fzi_read(a, t, 4096, 1);
                tm_trace_close(t);
                if (seeds) { /* the real index, as a whole-file input */
                        char p[512];
                        snprintf(p, sizeof p, "%s/real%u", seeds, i);
                        uint8_t *b = malloc(a->ixn + 1);
                        b[0] = (uint8_t)(i | 0x10);
                        memcpy(b + 1, a->ix, a->ixn);
                        fzi_spill(p, b, a->ixn + 1);
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
                size_t i = 1;
                for (; i + 3 <= size; i += 3) {
                        size_t at = ((size_t)data[i] | (size_t)data[i + 1] << 8) % a->ixn;
                        b[at] ^= data[i + 2] ? data[i + 2] : 1;
                }
                if (i < size) /* a cut */
                        *n = (size_t)data[i] * a->ixn / 256;
        } else {
                *n = size - 1;
                b = malloc(*n ? *n : 1);
                memcpy(b, data + 1, *n);
        }
        if (!b)
                abort();
        if ((data[0] & 16) && *n >= 72) {
                memcpy(b + 16, a->ix + 16, 56);
                uint32_t crc = (uint32_t)crc32(0, b + 16, (uInt)(*n - 16));
                for (int k = 0; k < 4; k++)
                        b[12 + k] = (uint8_t)(crc >> (8 * k));
        }
        return b;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (size < 1 || !fzi_na)
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
        unsigned wrong = fzi_read(a, t, pieces[data[0] >> 5], 0);
        tm_trace_close(t);
        int forged = (data[0] & 16) && n >= 72;
        fzi_forged_loaded += forged && loaded;
        fzi_forged_wrong += forged && loaded && wrong;
        if (wrong && (!forged || getenv("FZI_STRICT"))) {
                fprintf(stderr, "fuzz_index: %u views of %s wrong with a%s index file (%s)\n",
                        wrong, a->path, forged ? " forged" : "n unforged",
                        loaded ? "loaded" : "rebuilt");
                abort();
        }
        return 0;
}
