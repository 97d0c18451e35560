/* Hostile index files (issue 15, item 1): the record index TMRINDEX, which
 * every trace has, of address traces (PDATS II, din) and of a heap trace
 * (HATF), changed in every way a careless or hostile user can change it
 * (truncated at every length class, every byte of the head flipped, bytes
 * of the body flipped, another archive's index renamed in, counts made
 * huge with the CRC recomputed, checkpoints altered with the CRC
 * recomputed, a symlink or a FIFO at its name, a file written by an
 * untrusted user), is either rejected (the trace rebuilds) or yields
 * exactly the bytes of a freshly built index, read backwards chunk by
 * chunk so that every read seeks through a checkpoint. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "codecs/address/arec.h"
#include "codecs/containers/container.h"
#include "codecs/heap/heap.h"
#include "codecs/record/record.h"
#include "view_test.h"
#include "views/ixfile.h"
#include "views/view.h"

#define CKPT_REFS 16
#define CHUNK 4000

static char tmpdir[] = "/tmp/tm_ixhostile_XXXXXX";

/* ---- archives ---- */

/* An address trace of codec name, written by the codec's own encoder
 * (vt_make); it opens as a record trace of the address family. */
static void make_address(const char *name, const char *path, uint64_t seed, size_t n)
{
        struct tm_ref *refs = calloc(n, sizeof *refs);
        struct vt_buf raw = {0};
        const struct tm_rcodec *c = tm_rcodec_by_name(name);
        assert_non_null(c);
        vt_gen(seed, refs, n, aref_types(c), 0);
        vt_make(path, c, TM_CONT_ZSTD, 4096, refs, n, &raw);
        free(refs);
        free(raw.p);
}

static void make_pdats2(const char *path, uint64_t seed, size_t n)
{
        make_address("pdats2", path, seed, n);
}

static void make_din(const char *path, uint64_t seed, size_t n)
{
        make_address("din", path, seed, n);
}

struct sinkbuf {
        struct vt_buf b;
};

static int sink_mem(void *arg, const void *buf, size_t n)
{
        vt_put(&((struct sinkbuf *)arg)->b, buf, n);
        return 0;
}

/* A HATF heap trace: allocations, reallocations and frees from a few
 * threads, with attributes. */
static void make_record(const char *path, uint64_t seed, size_t n)
{
        const struct tm_rcodec *c = tm_rcodec_by_name("hatf");
        assert_non_null(c);
        struct tm_err err = {0};
        struct sinkbuf s = {0};
        struct tm_renc *e;
        assert_int_equal(c->enc_open(NULL, sink_mem, &s, &e, &err), 0);
        uint64_t live[64] = {0};
        vt_rng = seed;
        for (size_t i = 0; i < n; i++) {
                struct tm_heap_ev ev = {0};
                unsigned slot = (unsigned)(vt_rand() % 64);
                ev.thread = 1 + vt_rand() % 3;
                ev.time = i * 10;
                if (!live[slot]) {
                        ev.kind = TM_HK_ALLOC;
                        ev.size = 16 + vt_rand() % 4000;
                        ev.addr = live[slot] = 0x10000000 + slot * 0x10000 + (vt_rand() % 64) * 16;
                } else if (vt_rand() % 4 == 0) {
                        ev.kind = TM_HK_REALLOC;
                        ev.size = 16 + vt_rand() % 8000;
                        ev.addr = live[slot];
                        ev.new_addr = live[slot] += 16;
                } else {
                        ev.kind = TM_HK_FREE;
                        ev.addr = live[slot];
                        live[slot] = 0;
                }
                char attr[16];
                int al = snprintf(attr, sizeof attr, "s%zu", i % 97);
                ev.attr = (const uint8_t *)attr;
                ev.attr_len = i % 5 ? 0 : (size_t)al;
                struct tm_rec rec;
                tm_heap_ev_to_rec(&ev, &rec);
                if (c->enc_put(e, &rec, 1, i, &err) < 0)
                        fail_msg("enc_put %zu: %s", i, err.msg);
        }
        assert_int_equal(c->enc_finish(e, &err), 0);
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        assert_true(fd >= 0);
        struct tm_cwriter_opts wo = {.level = 3, .frame_size = 4096};
        struct tm_cwriter *w;
        assert_int_equal(tm_cwriter_open(fd, path, TM_CONT_ZSTD, &wo, &w, &err), 0);
        assert_int_equal(tm_cwriter_write(w, s.b.p, s.b.len, &err), 0);
        assert_int_equal(tm_cwriter_close(w, &err), 0);
        close(fd);
        free(s.b.p);
}

/* ---- the trace under test ---- */

struct fmt {
        const char *name;
        void (*make)(const char *path, uint64_t seed, size_t n);
        size_t n;
        char archive[256], other[256], cache[256], fresh_dir[256];
        char *ix_path;
        struct vt_buf good;     /* the index file a fresh build saved */
        struct vt_buf other_ix; /* another archive's index */
        char *views[64];
        struct vt_buf ref[64]; /* every view through a freshly built index */
        unsigned nviews;
        unsigned tried, rejected, loaded;
};

static struct vt_buf slurp(const char *path)
{
        struct vt_buf b = {0};
        int fd = open(path, O_RDONLY);
        assert_true(fd >= 0);
        uint8_t tmp[1 << 14];
        ssize_t k;
        while ((k = read(fd, tmp, sizeof tmp)) > 0)
                vt_put(&b, tmp, (size_t)k);
        close(fd);
        return b;
}

/* The whole view, read backwards in chunks (each read seeks). */
static struct vt_buf read_back(struct tm_trace *t, const char *view, const char *what)
{
        struct tm_err err = {0};
        uint64_t size;
        if (tm_trace_view_size(t, view, &size, &err) < 0)
                fail_msg("%s: size of %s: %s", what, view, err.msg);
        struct vt_buf b = {0};
        b.p = malloc(size + 1);
        b.len = b.cap = size;
        struct tm_vfile *f;
        if (tm_vfile_open(t, view, &f, &err) < 0)
                fail_msg("%s: open %s: %s", what, view, err.msg);
        for (uint64_t end = size; end > 0;) {
                uint64_t off = end > CHUNK ? end - CHUNK : 0;
                ssize_t k = tm_vfile_pread(f, b.p + off, (size_t)(end - off), off, &err);
                if (k != (ssize_t)(end - off))
                        fail_msg("%s: %s at %" PRIu64 ": %zd (%s)", what, view, off, k, err.msg);
                end = off;
        }
        tm_vfile_close(f);
        return b;
}

/* 0 while the variants are tried: a rejected file is then not replaced
 * (each variant is planted anew), which spares an fsync a variant. */
static int saving = 1;

static struct tm_trace *open_trace(struct fmt *F, const char *cache, int *loaded, const char *what)
{
        struct tm_err err = {0};
        struct tm_trace *t;
        struct tm_trace_opts o = {
            .cache_dir = cache, .no_index_beside = 1, .no_save = !saving, .ckpt_refs = CKPT_REFS};
        if (tm_trace_open(F->archive, &o, &t, &err) < 0)
                fail_msg("%s: open: %s", what, err.msg);
        if (tm_trace_index(t, NULL, NULL, &err) < 0)
                fail_msg("%s: index: %s", what, err.msg);
        if (loaded)
                *loaded = tm_trace_index_source(t) == TM_INDEX_LOADED;
        return t;
}

static void fmt_setup(struct fmt *F)
{
        snprintf(F->archive, sizeof F->archive, "%s/%s.trace", tmpdir, F->name);
        snprintf(F->other, sizeof F->other, "%s/%s-other.trace", tmpdir, F->name);
        snprintf(F->cache, sizeof F->cache, "%s/%s-cache", tmpdir, F->name);
        snprintf(F->fresh_dir, sizeof F->fresh_dir, "%s/%s-fresh", tmpdir, F->name);
        F->make(F->archive, 7, F->n);
        F->make(F->other, 8, F->n);
        mkdir(F->cache, 0755);
        mkdir(F->fresh_dir, 0755);

        /* the reference: a fresh build, its index kept in a directory of
         * its own */
        int loaded;
        struct tm_trace *t = open_trace(F, F->fresh_dir, &loaded, "reference");
        assert_false(loaded);
        if (!tm_trace_index_path(t))
                fail_msg("reference: %s", tm_trace_index_note(t));
        F->ix_path = strdup(tm_trace_index_path(t));
        F->good = slurp(F->ix_path);
        for (const char *const *v = tm_trace_views(t); *v; v++) {
                assert_true(F->nviews < 64);
                F->views[F->nviews] = strdup(*v);
                F->ref[F->nviews] = read_back(t, *v, "reference");
                F->nviews++;
        }
        tm_trace_close(t);
        unlink(F->ix_path);
        free(F->ix_path);

        /* where the index under test lives */
        t = open_trace(F, F->cache, &loaded, "first build");
        F->ix_path = strdup(tm_trace_index_path(t));
        tm_trace_close(t);
        struct vt_buf again = slurp(F->ix_path);
        assert_int_equal(again.len, F->good.len);
        free(again.p);

        /* another archive's index, built in the fresh directory */
        struct tm_err err = {0};
        struct tm_trace_opts o = {
            .cache_dir = F->fresh_dir, .no_index_beside = 1, .ckpt_refs = CKPT_REFS};
        assert_int_equal(tm_trace_open(F->other, &o, &t, &err), 0);
        assert_int_equal(tm_trace_index(t, NULL, NULL, &err), 0);
        F->other_ix = slurp(tm_trace_index_path(t));
        tm_trace_close(t);
}

static void fmt_teardown(struct fmt *F)
{
        for (unsigned i = 0; i < F->nviews; i++) {
                free(F->views[i]);
                free(F->ref[i].p);
        }
        free(F->good.p);
        free(F->other_ix.p);
        free(F->ix_path);
        printf("[ %s ] %u hostile index files: %u rejected (rebuilt), %u loaded with "
               "exactly the right bytes\n",
               F->name, F->tried, F->rejected, F->loaded);
}

/* Put bytes at the index path (atomically, as a writer would). */
static void plant(struct fmt *F, const uint8_t *p, size_t n)
{
        char tmp[300];
        snprintf(tmp, sizeof tmp, "%s.plant", F->ix_path);
        int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, p, n), (ssize_t)n);
        close(fd);
        assert_int_equal(rename(tmp, F->ix_path), 0);
}

enum want { MAY_LOAD, MUST_REJECT, MUST_LOAD };

/* The trace with the index file as it now is: every view must equal the
 * reference; a MUST_REJECT file must not have been loaded (another file,
 * such as the caller's own in the cache, may be), a MUST_LOAD one must. */
static void check_now(struct fmt *F, enum want want, const char *what)
{
        int loaded;
        struct tm_trace *t = open_trace(F, F->cache, &loaded, what);
        loaded = loaded && strcmp(tm_trace_index_path(t), F->ix_path) == 0;
        F->tried++;
        if (loaded)
                F->loaded++;
        else
                F->rejected++;
        if (loaded && want == MUST_REJECT)
                fail_msg("%s: %s: loaded", F->name, what);
        if (!loaded && want == MUST_LOAD)
                fail_msg("%s: %s: not loaded", F->name, what);
        unsigned nv = 0;
        for (const char *const *v = tm_trace_views(t); *v; v++, nv++) {
                if (nv >= F->nviews || strcmp(*v, F->views[nv]) != 0)
                        fail_msg("%s: %s: view %s not in the reference", F->name, what, *v);
                struct vt_buf b = read_back(t, *v, what);
                if (strcmp(*v, "stats") == 0) /* it names the file refused */
                        vt_drop_side_files(b.p, &b.len);
                if (strcmp(*v, "stats.json") == 0) /* and so does this */
                        vt_drop_side_files_json(b.p, &b.len);
                if (strcmp(*v, "errors") == 0 && !loaded && b.len) { /* so does errors */
                        vt_put(&b, "", 1);
                        if (!strstr((char *)b.p, F->ix_path))
                                fail_msg("%s: %s: errors does not name the file: %s", F->name,
                                         what, (char *)b.p);
                        b.len = 0;
                }
                if (b.len != F->ref[nv].len || memcmp(b.p, F->ref[nv].p, b.len) != 0)
                        fail_msg("%s: %s: wrong bytes in %s", F->name, what, *v);
                free(b.p);
        }
        assert_int_equal(nv, F->nviews);
        tm_trace_close(t);
}

static void try_bytes(struct fmt *F, const uint8_t *p, size_t n, enum want want, const char *what)
{
        plant(F, p, n);
        check_now(F, want, what);
}

static uint64_t get64(const uint8_t *p)
{
        uint64_t v = 0;
        for (int i = 0; i < 8; i++)
                v |= (uint64_t)p[i] << (8 * i);
        return v;
}

static void put64(uint8_t *p, uint64_t v)
{
        for (int i = 0; i < 8; i++)
                p[i] = (uint8_t)(v >> (8 * i));
}

static void fix_crc(uint8_t *p, size_t n)
{
        uint32_t c = (uint32_t)crc32(crc32(0, NULL, 0), p + 16, (uInt)(n - 16));
        for (int i = 0; i < 4; i++)
                p[12 + i] = (uint8_t)(c >> (8 * i));
}

/* ---- the layouts (docs/index-format.md) ---- */

struct layout {
        size_t head;       /* bytes of the head */
        size_t fields[32]; /* offsets of the head's 64-bit fields after the key */
        unsigned nfields;
        size_t ckpt_at, ckpt_len; /* where checkpoint data starts, bytes per checkpoint */
        unsigned nckpt;
        size_t states_off; /* the checkpoints' decoder states */
        size_t stsize;
        size_t col_at; /* the checkpoints' columns, the record count first */
        unsigned ncol;
        uint64_t k; /* records between two checkpoints, at most */
};

static struct layout layout_of(const struct fmt *F)
{
        struct layout L = {0};
        const uint8_t *g = F->good.p;
        assert_memory_equal(g, "TMRINDEX", 8);
        /* after the key: schema_crc|stsize ncol|n k raw_size body_off
         * stats_off cont_off file_size */
        const size_t h = TM_IX_KEY_END;
        L.nfields = 8;
        for (unsigned i = 0; i < L.nfields; i++)
                L.fields[i] = h + 8 * i;
        L.head = get64(g + h + 32);
        uint64_t w3 = get64(g + h + 8);
        unsigned ncol = (unsigned)w3;
        L.nckpt = (unsigned)(w3 >> 32);
        L.stsize = (size_t)(get64(g + h) >> 32);
        L.k = get64(g + h + 16);
        /* body: tot[ncol] raw[n] col[n * ncol] st[n * stsize] */
        L.ckpt_at = L.head + 8 * ncol; /* raw offsets, then columns */
        L.ckpt_len = 8;
        L.ncol = ncol;
        L.col_at = L.ckpt_at + 8 * (size_t)L.nckpt;
        L.states_off = L.head + 8 * (size_t)ncol + 8 * (size_t)L.nckpt + 8 * (size_t)L.nckpt * ncol;
        assert_true(L.nckpt > 4);
        return L;
}

/* Column c of checkpoint i (L->nckpt: the total) in file g. */
static uint64_t ckpt_col(const struct layout *L, const uint8_t *g, unsigned i, unsigned c)
{
        return get64(g + 8 * (size_t)c +
                     (i < L->nckpt ? L->col_at + 8 * (size_t)i * L->ncol : L->head));
}

/* ---- the cases ---- */

static void truncations(struct fmt *F, const struct layout *L)
{
        size_t n = F->good.len;
        const size_t k = TM_IX_KEY_END;
        size_t cuts[] = {0,           1,       7,           8,
                         11,          12,      15,          16,
                         17,          k - 1,   k,           k + 1,
                         L->head - 1, L->head, L->head + 1, L->head + L->ckpt_len / 2,
                         n / 2,       n - 40,  n - 1};
        uint8_t *p = malloc(n);
        for (size_t i = 0; i < sizeof cuts / sizeof *cuts; i++) {
                char what[64];
                memcpy(p, F->good.p, n);
                snprintf(what, sizeof what, "truncated to %zu", cuts[i]);
                try_bytes(F, p, cuts[i], MUST_REJECT, what);
                if (cuts[i] > 16) { /* and the CRC made right for what is left */
                        fix_crc(p, cuts[i]);
                        snprintf(what, sizeof what, "truncated to %zu, CRC fixed", cuts[i]);
                        try_bytes(F, p, cuts[i], MUST_REJECT, what);
                }
        }
        /* garbage appended */
        uint8_t *q = malloc(n + 100);
        memcpy(q, F->good.p, n);
        memset(q + n, 0x5a, 100);
        try_bytes(F, q, n + 100, MUST_REJECT, "100 bytes appended");
        fix_crc(q, n + 100);
        try_bytes(F, q, n + 100, MUST_REJECT, "100 bytes appended, CRC fixed");
        free(q);
        free(p);
}

static void flips(struct fmt *F, const struct layout *L)
{
        size_t n = F->good.len;
        uint8_t *p = malloc(n);
        char what[64];
        for (size_t i = 0; i < L->head; i++)
                for (unsigned bit = 0; bit < 1; bit++) {
                        memcpy(p, F->good.p, n);
                        p[i] ^= (uint8_t)(1u << bit);
                        snprintf(what, sizeof what, "head byte %zu bit %u flipped", i, bit);
                        try_bytes(F, p, n, MUST_REJECT, what);
                }
        vt_rng = 99;
        for (int s = 0; s < 48; s++) {
                size_t i = L->head + (size_t)(vt_rand() % (n - L->head));
                memcpy(p, F->good.p, n);
                p[i] ^= (uint8_t)(1u << (vt_rand() % 8));
                snprintf(what, sizeof what, "body byte %zu flipped", i);
                try_bytes(F, p, n, MUST_REJECT, what);
        }
        free(p);
}

static void other_archive(struct fmt *F)
{
        /* another archive's index renamed in: another key */
        try_bytes(F, F->other_ix.p, F->other_ix.len, MUST_REJECT, "another archive's index");
        /* and with this archive's key written into it, CRC recomputed: a
         * forger's; its numbers describe the other archive */
        size_t n = F->other_ix.len;
        uint8_t *p = malloc(n);
        memcpy(p, F->other_ix.p, n);
        memcpy(p + 16, F->good.p + 16, TM_IX_KEY_END - 16);
        fix_crc(p, n);
        try_bytes(F, p, n, MAY_LOAD, "another archive's index, key forged");
        free(p);
}

static void huge_counts(struct fmt *F, const struct layout *L)
{
        size_t n = F->good.len;
        uint8_t *p = malloc(n);
        char what[96];
        for (unsigned f = 0; f < L->nfields; f++) {
                uint64_t v0 = get64(F->good.p + L->fields[f]);
                uint64_t vals[] = {0,          1,          v0 + 1,           v0 - 1,
                                   v0 * 2,     v0 / 2,     0xffffffffu,      1ull << 32,
                                   1ull << 63, UINT64_MAX, v0 ^ (1ull << 40)};
                for (size_t k = 0; k < sizeof vals / sizeof *vals; k++) {
                        if (vals[k] == v0)
                                continue;
                        memcpy(p, F->good.p, n);
                        put64(p + L->fields[f], vals[k]);
                        fix_crc(p, n);
                        snprintf(what, sizeof what,
                                 "field at %zu = %" PRIu64 " (was %" PRIu64 "), CRC fixed",
                                 L->fields[f], vals[k], v0);
                        try_bytes(F, p, n, MAY_LOAD, what);
                }
        }
        free(p);
}

/* Does record count r at checkpoint i break a bound the loader checks
 * (views/index_file.c, consistent()): checkpoint 0 at record 0, 1 to K
 * records between two and at most K after the last, at least an ascii
 * byte (column 1) a record? */
static int rec_out_of_bounds(const struct layout *L, const uint8_t *g, unsigned i, uint64_t r)
{
        if (i == 0)
                return r != 0;
        uint64_t prev = ckpt_col(L, g, i - 1, 0), next = ckpt_col(L, g, i + 1, 0);
        uint64_t a = ckpt_col(L, g, i, 1), a_prev = ckpt_col(L, g, i - 1, 1),
                 a_next = ckpt_col(L, g, i + 1, 1);
        int last = i + 1 == L->nckpt;
        if (r <= prev || r - prev > L->k || r > next || (!last && r == next) || next - r > L->k)
                return 1;
        return a - a_prev < r - prev || a_next - a < next - r;
}

/* Checkpoint record counts changed by one, CRC recomputed: refused where
 * that breaks a bound. The record index ties a count down by bounds only,
 * not to i*K as the old address index did: checkpoints are also taken at
 * the container's restart points and kept unevenly when thinned, so a
 * count within the bounds (the last checkpoint's, one less, with fewer
 * than K records after it) is, like raw offsets, states and the other
 * columns, believed from a trusted writer only (docs/index-format.md;
 * untrusted_writer) and not tried here. Two checkpoints swapped: refused. */
static void checkpoints(struct fmt *F, const struct layout *L)
{
        size_t n = F->good.len;
        uint8_t *p = malloc(n);
        char what[96];
        unsigned picks[] = {0, 1, L->nckpt / 2, L->nckpt - 1}, tried = 0;
        for (size_t j = 0; j < sizeof picks / sizeof *picks; j++)
                for (int d = -1; d <= 1; d += 2) {
                        size_t at = L->col_at + 8 * (size_t)picks[j] * L->ncol;
                        uint64_t r = get64(F->good.p + at) + (uint64_t)d;
                        if (!rec_out_of_bounds(L, F->good.p, picks[j], r))
                                continue;
                        memcpy(p, F->good.p, n);
                        put64(p + at, r);
                        fix_crc(p, n);
                        snprintf(what, sizeof what, "checkpoint %u record count %+d, CRC fixed",
                                 picks[j], d);
                        try_bytes(F, p, n, MUST_REJECT, what);
                        tried++;
                }
        /* the checkpoints picked are K apart in these traces: only the last
         * one's -1 can be within the bounds */
        assert_true(tried >= 7);
        /* two checkpoints swapped */
        memcpy(p, F->good.p, n);
        size_t a = L->col_at + 8 * (size_t)L->ncol;
        size_t len = 8 * (size_t)L->ncol;
        uint8_t *tmp = malloc(len);
        memcpy(tmp, p + a, len);
        memcpy(p + a, p + a + len, len);
        memcpy(p + a + len, tmp, len);
        free(tmp);
        fix_crc(p, n);
        try_bytes(F, p, n, MUST_REJECT, "checkpoints 1 and 2 swapped, CRC fixed");
        free(p);
}

/* A checkpoint's decoder state that no decoding reaches, CRC recomputed,
 * from the caller (trusted): each codec's state_ok tells it at load (a
 * width, a flag or a shift out of range), so it is refused, never handed
 * to the decoder (here every state byte 0xff: PDATS's 64-bit flag, HATF's
 * field widths). */
static void impossible_states(struct fmt *F, const struct layout *L)
{
        size_t n = F->good.len;
        uint8_t *p = malloc(n);
        unsigned picks[] = {0, 1, L->nckpt - 1};
        char what[96];
        for (size_t j = 0; j < sizeof picks / sizeof *picks; j++) {
                size_t at = L->states_off + picks[j] * L->stsize;
                memcpy(p, F->good.p, n);
                memset(p + at, 0xff, L->stsize);
                fix_crc(p, n);
                snprintf(what, sizeof what, "checkpoint %u: state bytes all 0xff, CRC fixed",
                         picks[j]);
                try_bytes(F, p, n, MUST_REJECT, what);
        }
        free(p);
}

/* The caller's own index file in the cache, written when the shared one
 * is refused as another user's: its path, and whether it exists. */
static int own_exists(const struct fmt *F, char *own, size_t n)
{
        snprintf(own, n, "%.*s.u%u.tmidx", (int)(strlen(F->ix_path) - strlen(".tmidx")), F->ix_path,
                 (unsigned)geteuid());
        return access(own, F_OK) == 0;
}

/* What no structural check can tell (decoder states, raw offsets) is
 * believed only from a writer who could change the archive itself
 * (views/ixfile.h): the same bytes written by another user are refused,
 * the caller's own index goes beside the shared file (which is left
 * alone) and is loaded next time. Needs root (chown). */
static void untrusted_writer(struct fmt *F, const struct layout *L)
{
        if (geteuid() != 0) {
                printf("[ SKIP ] untrusted writer: needs root for chown\n");
                return;
        }
        size_t n = F->good.len;
        uint8_t *p = malloc(n);
        memcpy(p, F->good.p, n);
        p[L->states_off + L->stsize] ^= 0x10; /* checkpoint 1's state */
        fix_crc(p, n);
        plant(F, p, n);
        assert_int_equal(chown(F->ix_path, 4242, 4242), 0);
        saving = 1;
        check_now(F, MUST_REJECT, "a state changed, by another user");
        saving = 0;
        /* refused, not replaced: the caller's index went to its own file */
        char own[512];
        assert_true(own_exists(F, own, sizeof own));
        struct vt_buf left = slurp(F->ix_path);
        assert_true(left.len == n && memcmp(left.p, p, n) == 0);
        free(left.p);
        int loaded;
        struct tm_trace *t = open_trace(F, F->cache, &loaded, "own file");
        assert_true(loaded);
        assert_string_equal(tm_trace_index_path(t), own);
        tm_trace_close(t);
        unlink(own);

        /* the untouched file, from another user in a directory others
         * cannot write: still another user's, refused */
        plant(F, F->good.p, n);
        assert_int_equal(chown(F->ix_path, 4242, 4242), 0);
        check_now(F, MUST_REJECT, "a good index, by another user");
        unlink(own);
        /* ... believed once that user could change the archive: its owner,
         * or anyone when its directory is writable by all and not sticky */
        assert_int_equal(chown(F->archive, 4242, 4242), 0);
        plant(F, F->good.p, n);
        assert_int_equal(chown(F->ix_path, 4242, 4242), 0);
        check_now(F, MUST_LOAD, "a good index, by the archive's owner");
        assert_int_equal(chown(F->archive, 0, 0), 0);
        assert_int_equal(chmod(tmpdir, 0777), 0);
        check_now(F, MUST_LOAD, "a good index, by anyone in a directory all may write");
        assert_int_equal(chmod(tmpdir, 01777), 0);
        check_now(F, MUST_REJECT, "a good index, by anyone in a sticky directory");
        assert_int_equal(chmod(tmpdir, 0700), 0);
        unlink(own);
        free(p);
}

static void not_regular(struct fmt *F)
{
        /* a symlink at the index path to a file the test owns: not
         * followed on load, replaced (not written through) on save */
        char target[300];
        snprintf(target, sizeof target, "%s/%s-victim", tmpdir, F->name);
        plant(F, F->good.p, F->good.len);
        assert_int_equal(rename(F->ix_path, target), 0);
        assert_int_equal(symlink(target, F->ix_path), 0);
        check_now(F, MUST_REJECT, "a symlink to a good index");
        struct stat sb;
        assert_int_equal(lstat(F->ix_path, &sb), 0);
        assert_true(S_ISREG(sb.st_mode));
        struct vt_buf v = slurp(target);
        assert_int_equal(v.len, F->good.len);
        assert_memory_equal(v.p, F->good.p, v.len);
        free(v.p);
        unlink(target);
        /* a FIFO: refused at once, not waited on */
        unlink(F->ix_path);
        assert_int_equal(mkfifo(F->ix_path, 0644), 0);
        check_now(F, MUST_REJECT, "a FIFO");
}

static void run_all(struct fmt *F)
{
        saving = 1; /* as a test that failed while it was 0 left it */
        fmt_setup(F);
        struct layout L = layout_of(F);
        saving = 0;
        truncations(F, &L);
        flips(F, &L);
        other_archive(F);
        huge_counts(F, &L);
        checkpoints(F, &L);
        impossible_states(F, &L);
        untrusted_writer(F, &L);
        saving = 1;
        not_regular(F);
        /* the good file still loads: the checks refuse only what is wrong */
        plant(F, F->good.p, F->good.len);
        int loaded;
        struct tm_trace *t = open_trace(F, F->cache, &loaded, "good");
        assert_true(loaded);
        tm_trace_close(t);
        fmt_teardown(F);
}

static void test_address_index(void **state)
{
        (void)state;
        struct fmt F = {.name = "pdats2", .make = make_pdats2, .n = 3000};
        run_all(&F);
        struct fmt G = {.name = "din", .make = make_din, .n = 3000};
        run_all(&G);
}

static void test_record_index(void **state)
{
        (void)state;
        struct fmt F = {.name = "hatf", .make = make_record, .n = 2000};
        run_all(&F);
}

static int setup(void **state)
{
        (void)state;
        return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
        (void)state;
        char cmd[300];
        snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
        return system(cmd);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_address_index),
            cmocka_unit_test(test_record_index),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
