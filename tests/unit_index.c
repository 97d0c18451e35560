/* unit_index: the record index (views/index.h) of address traces, built
 * as views/records.c builds it: the address row (codecs/address/arec.h)
 * opened on the raw head, then tm_index_build over the container. For
 * din, PDATS, PDATS II and lackey, plain, gzip and zstd:
 *   - every checkpoint restarts the row's decoder: from its raw offset
 *     with its state come exactly the references from its record number
 *     on (decoded independently, by the address codec), up to the next
 *     checkpoint's raw offset, and on past it;
 *   - its columns are the snprintf lengths of everything before it: the
 *     ascii (din) lines, each streams/<kind>'s, fields/type ("<decimal>\n"),
 *     fields/address ("<hex>\n"), fields/size (lackey), xdin (lackey: the
 *     din line and 4 bytes); the totals are the whole trace's;
 *   - at most K records apart, exactly K unless at a restart point of the
 *     container; in zstd frames of 1 MiB (restart points), a checkpoint
 *     at the first record of each, kept as the spacing doubles.
 * And: thinning keeps it under TM_CKPT_CAP; with the default spacing it
 * fits the 0.5% budget (TM_INDEX_BUDGET_DIV; or one checkpoint every
 * TM_INDEX_KEEP_REFS records, when more), thinned by halving or to
 * the checkpoints at restart points; the file round-trips
 * (tm_index_compare) and is refused when stale (size, mtime, inode,
 * codec, container, schema, state size), damaged or truncated;
 * tm_index_find agrees with a linear search; tm_index_compare names the
 * first difference. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "codecs/address/addr_stats.h"
#include "codecs/address/arec.h"
#include "codecs/address/lackey.h"
#include "tests/view_test.h"
#include "views/ixfile.h"
#include "views/index.h"

#define NREFS 20000

struct fix {
        char path[300];
        const struct tm_rcodec *row;
        const struct tm_rcodec *codec; /* the row's address codec */
        struct vt_buf raw;
        struct tm_ref *refs;
        uint32_t *sizes; /* lackey's, else NULL */
        size_t n;
        int fd;
        struct tm_cont *cont;
        /* what the row's open() gave, as tm_records_open keeps it */
        void *ctx;
        struct tm_schema s;
        struct tm_rstate st0;
        uint64_t hdr_len;
};

/* Write refs (and sizes, NULL but for lackey) with the row named codec as
 * an archive of kind, then decode it back with the address codec and open
 * the container and the row on it. */
static void fix_open(struct fix *fx, const char *codec, enum tm_cont_kind kind, size_t frame,
                     const struct tm_ref *refs, const uint32_t *sizes, size_t n)
{
        memset(fx, 0, sizeof *fx);
        fx->row = tm_rcodec_by_name(codec);
        assert_non_null(fx->row);
        fx->codec = fx->row;
        assert_non_null(fx->codec);
        snprintf(fx->path, sizeof fx->path, "%s", tmt_path(codec));
        snprintf(fx->path + strlen(fx->path), sizeof fx->path - strlen(fx->path), "-%d-%zu",
                 (int)kind, n);
        vt_make_sized(fx->path, fx->codec, kind, frame, refs, sizes, n, &fx->raw);
        fx->refs = vt_decode_all_sized(fx->codec, fx->raw.p, fx->raw.len, &fx->n,
                                       sizes ? &fx->sizes : NULL);
        assert_int_equal(fx->n, n);
        fx->fd = open(fx->path, O_RDONLY);
        assert_true(fx->fd >= 0);
        struct tm_err err = {0};
        assert_int_equal(tm_cont_open(fx->fd, fx->path, &fx->cont, &err), 0);
        size_t head = fx->raw.len < TM_PROBE_BYTES ? fx->raw.len : TM_PROBE_BYTES;
        int hl = fx->row->open(fx->raw.p, head, fx->path, &fx->ctx, &fx->s, &fx->st0, &err);
        if (hl < 0)
                fail_msg("open %s: %s", fx->path, err.msg);
        fx->hdr_len = (uint64_t)hl;
}

/* n program-like references (view_test.h); for lackey with sizes and
 * reads followed by a write of the same address and size (one M line,
 * two references: a checkpoint can fall between them). zstd frames of
 * about frame raw bytes. */
static void fix_make_n(struct fix *fx, const char *codec, enum tm_cont_kind kind, size_t frame,
                       size_t n)
{
        const struct tm_rcodec *c = tm_rcodec_by_name(codec);
        assert_non_null(c);
        int sized = aref_sized(c);
        struct tm_ref *gen = malloc(n * sizeof *gen);
        uint32_t *sizes = malloc(n * sizeof *sizes);
        assert_true(gen && sizes);
        vt_gen(3, gen, n, aref_types(c), sized);
        static const uint32_t sz[] = {1, 2, 4, 8, 16, 64, 512, LACKEY_MAX_SIZE};
        for (size_t i = 0; i < n; i++) {
                sizes[i] = sz[vt_rand() % 8];
                if (sized && i && gen[i - 1].type == TM_READ && vt_rand() % 3 == 0) {
                        gen[i] = (struct tm_ref){gen[i - 1].addr, TM_WRITE};
                        sizes[i] = sizes[i - 1];
                }
        }
        fix_open(fx, codec, kind, frame, gen, sized ? sizes : NULL, n);
        free(sizes);
        free(gen);
}

/* NREFS references, zstd frames of 2 KiB (below TM_CONT_POINT_MIN_RAW:
 * no restart points but the start). */
static void fix_make(struct fix *fx, const char *codec, enum tm_cont_kind kind)
{
        fix_make_n(fx, codec, kind, 2048, NREFS);
}

static void fix_free(struct fix *fx)
{
        fx->row->close(fx->ctx);
        tm_cont_close(fx->cont);
        close(fx->fd);
        free(fx->raw.p);
        free(fx->refs);
        free(fx->sizes);
}

static struct tm_index *build(struct fix *fx, uint64_t k)
{
        struct tm_index *ix;
        struct tm_err err = {0};
        if (tm_index_build(fx->cont, fx->row, fx->ctx, &fx->s, fx->hdr_len, &fx->st0, k, NULL,
                            NULL, &ix, &err) != 0)
                fail_msg("build %s: %s", fx->path, err.msg);
        return ix;
}

static const uint64_t *ck_row(const struct tm_index *ix, uint32_t i)
{
        return ix->col + (size_t)i * ix->ncol;
}

/* ---- what every checkpoint must say ---- */

/* Schema field f by name, which the address schema must have. */
static unsigned field_col(const struct fix *fx, const char *name)
{
        int f = tm_schema_field(&fx->s, name);
        assert_true(f >= 0);
        return tm_col_field(&fx->s, (unsigned)f);
}

/* Add reference i to the positions at[], from snprintf alone: its din
 * line in ascii, in its kind's stream and (sized) in xdin with 4 bytes
 * more (" %03x" of the size), its type and address (and size) in their
 * fields' views. */
static void add_ref(const struct fix *fx, size_t i, uint64_t *at)
{
        const struct tm_ref *r = &fx->refs[i];
        char b[64];
        int line = snprintf(b, sizeof b, "%u %" PRIx64 "\n", r->type, r->addr);
        at[TM_COL_REC]++;
        at[TM_COL_ASCII] += (uint64_t)line;
        at[tm_col_kind(r->type)] += (uint64_t)line;
        at[field_col(fx, "type")] += (uint64_t)snprintf(b, sizeof b, "%u\n", r->type);
        at[field_col(fx, "address")] += (uint64_t)snprintf(b, sizeof b, "%" PRIx64 "\n", r->addr);
        if (!fx->sizes)
                return;
        at[field_col(fx, "size")] += (uint64_t)snprintf(b, sizeof b, "%u\n", fx->sizes[i]);
        at[tm_col_form(&fx->s, 0)] += (uint64_t)line + 4;
}

/* Decode from *off with state st (the row's decoder, all input there, eof)
 * until the references before number end are out; each must be fx's
 * reference *rec, which advances. */
static void decode_to(const struct fix *fx, struct tm_rstate *st, uint64_t *off, uint64_t *rec,
                      uint64_t end)
{
        struct tm_rec out[64];
        struct tm_err err = {0};
        while (*rec < end) {
                size_t used = 0, cap = end - *rec < 64 ? (size_t)(end - *rec) : 64;
                ssize_t r = fx->row->decode(fx->ctx, st, fx->raw.p + *off, fx->raw.len - *off, 1,
                                            *off, &used, out, cap, &err);
                if (r < 0)
                        fail_msg("%s: resumed decode at %" PRIu64 ": %s", fx->path, *off, err.msg);
                if (r == 0 && used == 0)
                        fail_msg("%s: decode ended at reference %" PRIu64, fx->path, *rec);
                assert_true((size_t)r <= cap);
                for (ssize_t j = 0; j < r; j++) {
                        const struct tm_ref *want = &fx->refs[*rec + (uint64_t)j];
                        assert_int_equal(out[j].kind, want->type);
                        assert_int_equal(out[j].v[0], want->type);
                        assert_int_equal(out[j].v[1], want->addr);
                        assert_int_equal(out[j].v[2],
                                         fx->sizes ? fx->sizes[*rec + (uint64_t)j] : 0);
                }
                *off += used;
                *rec += (uint64_t)r;
        }
}

/* Resume at checkpoint c: its references up to the next checkpoint, whose
 * raw offset the decoder then reaches exactly, and a few past it; after
 * the last one, up to the end of the trace. (Not its state byte for byte:
 * lackey's keeps the address of an M line's write once it is out, so a
 * pass that split the line there differs in dead bytes.) */
static void check_resume(const struct fix *fx, const struct tm_index *ix, uint32_t c)
{
        struct tm_rstate st;
        memset(&st, 0, sizeof st);
        memcpy(st.b, ix->st + (size_t)c * ix->stsize, ix->stsize);
        uint64_t off = ix->raw[c], rec = ck_row(ix, c)[TM_COL_REC];
        uint64_t next = c + 1 < ix->n ? ck_row(ix, c + 1)[TM_COL_REC] : fx->n;
        decode_to(fx, &st, &off, &rec, next);
        if (c + 1 < ix->n) {
                assert_int_equal(off, ix->raw[c + 1]);
                decode_to(fx, &st, &off, &rec, fx->n - rec < 8 ? fx->n : rec + 8);
                return;
        }
        struct tm_rec out[1];
        size_t used = 1;
        struct tm_err err = {0};
        assert_int_equal(fx->row->decode(fx->ctx, &st, fx->raw.p + off, fx->raw.len - off, 1, off,
                                         &used, out, 1, &err),
                         0);
        assert_int_equal(used, 0);
        assert_int_equal(off, fx->raw.len);
}

/* Checkpoints at most K records apart and at least one; with spaced (K as
 * asked, never thinned) exactly K unless the later one is at a restart
 * point of the container. */
static void check_spacing(const struct fix *fx, const struct tm_index *ix, int spaced)
{
        assert_true(ix->n >= 1 && ix->n <= TM_CKPT_CAP);
        assert_int_equal(ix->raw[0], fx->hdr_len);
        for (uint32_t i = 1; i < ix->n; i++) {
                uint64_t gap = ck_row(ix, i)[TM_COL_REC] - ck_row(ix, i - 1)[TM_COL_REC];
                assert_true(gap >= 1 && gap <= ix->k);
                if (spaced && gap != ix->k && !tm_index_at_point(ix, fx->cont, i))
                        fail_msg("%s: checkpoint %u is %" PRIu64 " records after the last, "
                                 "not at a restart point",
                                 fx->path, i, gap);
        }
        assert_true(ix->tot[TM_COL_REC] - ck_row(ix, ix->n - 1)[TM_COL_REC] <= ix->k);
}

/* The statistics: records per kind (generic); per type the count and
 * the address range (the address family's block). The generic field
 * ranges are not gathered for a family that reports its stats whole. */
static void check_stats(const struct fix *fx, const struct tm_index *ix)
{
        uint64_t kinds[TM_SCHEMA_KINDS_MAX] = {0}, lo[TM_NTYPES], hi[TM_NTYPES] = {0};
        for (unsigned t = 0; t < TM_NTYPES; t++)
                lo[t] = UINT64_MAX;
        for (size_t i = 0; i < fx->n; i++) {
                unsigned t = fx->refs[i].type;
                uint64_t a = fx->refs[i].addr;
                kinds[t]++;
                lo[t] = a < lo[t] ? a : lo[t];
                hi[t] = a > hi[t] ? a : hi[t];
        }
        assert_int_equal(ix->stats.records, fx->n);
        assert_memory_equal(ix->stats.kind_n, kinds, sizeof kinds);
        assert_ptr_equal(ix->fam, &tm_family_address);
        const struct tm_addr_stats *as = (const struct tm_addr_stats *)ix->stats.fam;
        assert_int_equal(as->refs, fx->n);
        for (unsigned t = 0; t < TM_NTYPES; t++) {
                assert_int_equal(as->count[t], kinds[t]);
                if (kinds[t]) {
                        assert_int_equal(as->addr_min[t], lo[t]);
                        assert_int_equal(as->addr_max[t], hi[t]);
                }
        }
        for (unsigned f = 0; f < fx->s.nfields; f++)
                assert_int_equal(ix->stats.fseen[f], 0);
}

/* Everything the index says about fx, checked at every checkpoint. */
static void check_index(const struct fix *fx, const struct tm_index *ix, int spaced)
{
        const struct tm_schema *s = &fx->s;
        /* address columns only: no sections, no per-id streams */
        assert_int_equal(s->nfields, fx->sizes ? 3 : 2);
        assert_int_equal(s->nforms, fx->sizes ? 1 : 0);
        assert_true(!s->nforms || strcmp(s->form[0].name, "xdin") == 0);
        assert_int_equal(ix->ncol, 2 + s->nkinds + s->nfields + s->nforms);
        assert_int_equal(ix->stsize, fx->row->state_size);
        uint64_t *at = calloc(ix->ncol, sizeof *at);
        assert_non_null(at);
        uint32_t c = 0;
        for (size_t i = 0;; i++) {
                if (c < ix->n && ck_row(ix, c)[TM_COL_REC] == i) {
                        assert_memory_equal(ck_row(ix, c), at, ix->ncol * sizeof *at);
                        check_resume(fx, ix, c);
                        c++;
                }
                if (i == fx->n)
                        break;
                add_ref(fx, i, at);
        }
        assert_int_equal(c, ix->n); /* none missed: in order, none past the end */
        assert_memory_equal(ix->tot, at, ix->ncol * sizeof *at);
        assert_int_equal(ix->raw_size, fx->raw.len);
        check_spacing(fx, ix, spaced);
        check_stats(fx, ix);
        free(at);
}

static void test_checkpoints_all(void **state)
{
        (void)state;
        static const char *const codecs[] = {"din", "pdats", "pdats2", "lackey"};
        static const enum tm_cont_kind kinds[] = {TM_CONT_PLAIN, TM_CONT_GZIP, TM_CONT_ZSTD};
        for (unsigned c = 0; c < 4; c++)
                for (unsigned k = 0; k < 3; k++) {
                        struct fix fx;
                        fix_make(&fx, codecs[c], kinds[k]);
                        struct tm_index *ix = build(&fx, 37);
                        assert_int_equal(ix->k, 37);
                        if (kinds[k] == TM_CONT_PLAIN) /* no restart points */
                                assert_int_equal(ix->n, (NREFS + 36) / 37);
                        check_index(&fx, ix, 1);
                        tm_index_free(ix);
                        fix_free(&fx);
                }
}

/* ---- thinning and the size budget ---- */

/* A checkpoint every record (k = 1): the cap is reached at record 8191,
 * the spacing doubles to 2, the cap is reached again and it doubles to 4;
 * a halving keeps every other checkpoint, so they are then exactly every
 * 4th record: din in a plain archive, lackey (M lines) in zstd frames
 * without restart points. PDATS II in a plain archive differs: a record
 * holds several references, so checkpoints share raw offsets; those that
 * start one count as at a restart point (in a plain archive every offset
 * is one, tm_cont_restart_cost 0), and a halving keeps those while they
 * are at most three quarters: still under the cap, at most K apart, K a
 * power of two, not every K. */
static void test_thinning(void **state)
{
        (void)state;
        static const char *const codecs[] = {"din", "pdats2", "lackey"};
        static const enum tm_cont_kind kinds[] = {TM_CONT_PLAIN, TM_CONT_PLAIN, TM_CONT_ZSTD};
        for (unsigned c = 0; c < 3; c++) {
                struct fix fx;
                fix_make(&fx, codecs[c], kinds[c]);
                struct tm_index *ix = build(&fx, 1);
                assert_true(ix->k >= 4 && (ix->k & (ix->k - 1)) == 0);
                if (c != 1) {
                        assert_int_equal(ix->k, 4);
                        assert_int_equal(ix->n, NREFS / 4 + 1);
                        for (uint32_t i = 0; i < ix->n; i++)
                                assert_int_equal(ck_row(ix, i)[TM_COL_REC], (uint64_t)i * 4);
                }
                check_index(&fx, ix, 0);
                tm_index_free(ix);

                ix = build(&fx, 0); /* the default spacing: one checkpoint */
                assert_int_equal(ix->k, TM_CKPT_REFS_DEFAULT);
                assert_int_equal(ix->n, 1);
                check_index(&fx, ix, 1);
                tm_index_free(ix);
                fix_free(&fx);
        }
}

/* Checkpoints at the container's restart points: zstd frames of 1 MiB,
 * each a point (TM_CONT_POINT_MIN_RAW), ending between records as
 * vt_make writes them. The first record of every frame starts a
 * checkpoint, besides every K records (check_index: K apart unless at a
 * point), and keeps it when the spacing doubles: din with K = 1000, and
 * lackey with K = 16, past the cap (thinned twice, to 64). */
static void test_points(void **state)
{
        (void)state;
        static const char *const codecs[] = {"din", "lackey"};
        static const size_t n[] = {400000, 300000};
        static const uint64_t spacing[] = {1000, 16};
        for (unsigned c = 0; c < 2; c++) {
                struct fix fx;
                fix_make_n(&fx, codecs[c], TM_CONT_ZSTD, 1 << 20, n[c]);
                struct tm_index *ix = build(&fx, spacing[c]);
                int thinned = ix->k != spacing[c];
                assert_int_equal(thinned, c == 1);
                check_index(&fx, ix, !thinned);
                unsigned points = 0;
                uint32_t i = 0;
                for (uint64_t p = 0; tm_cont_next_point(fx.cont, p, &p); points++) {
                        while (i < ix->n && ix->raw[i] < p)
                                i++;
                        if (i == ix->n || ix->raw[i] != p || !tm_index_at_point(ix, fx.cont, i))
                                fail_msg("%s: no checkpoint at the point %" PRIu64, fx.path, p);
                }
                assert_true(points >= 3);
                tm_index_free(ix);
                fix_free(&fx);
        }
}

/* How an index met the size budget (budget_case). */
enum thin { THIN_NONE, THIN_HALVED, THIN_POINTS };

/* With the default spacing the checkpoints stay within the size budget
 * (archive size / TM_INDEX_BUDGET_DIV), all of them still restarting
 * right. n references of a loop, which compresses to almost nothing;
 * noisy: its reads at random addresses, which compresses less. how: not
 * thinned (plain din text), thinned by halving (fewer than two restart
 * points fit, or they are fewer than half of what fits), or to the
 * checkpoints at restart points alone, every
 * second or third... as many as fit (then K is the most records between
 * two of them). */
static void budget_case(const char *codec, enum tm_cont_kind kind, size_t n, int noisy,
                        enum thin how)
{
        struct tm_ref *gen = malloc(n * sizeof *gen);
        assert_non_null(gen);
        for (size_t i = 0; i < n; i++) {
                uint64_t r = noisy ? vt_rand() % 4096 : i % 4096;
                gen[i].type = i % 8 == 7 ? TM_READ : TM_IFETCH;
                gen[i].addr = i % 8 == 7 ? 0x10000000 + 4 * r : 0x400000 + 4 * (i % 64);
        }
        struct fix fx;
        fix_open(&fx, codec, kind, 1 << 20, gen, NULL, n);
        free(gen);
        struct tm_index *ix = build(&fx, 0);
        uint64_t per = 8 * (1 + (uint64_t)ix->ncol) + ix->stsize; /* bytes of a checkpoint */
        uint64_t budget = tm_cont_archive_size(fx.cont) / TM_INDEX_BUDGET_DIV;
        uint64_t floor = (n / TM_INDEX_KEEP_REFS + 2) * per; /* one every 2^17 records */
        budget = budget > floor ? budget : floor;
        assert_true(ix->n == 1 || ix->n * per <= budget);
        uint64_t spaced = 1 + (n - 1) / TM_CKPT_REFS_DEFAULT; /* every K records */
        switch (how) {
        case THIN_NONE:
                assert_int_equal(ix->k, TM_CKPT_REFS_DEFAULT);
                assert_int_equal(ix->n, spaced);
                break;
        case THIN_HALVED:
                assert_true(ix->n < spaced);
                assert_true(ix->k > TM_CKPT_REFS_DEFAULT && (ix->k & (ix->k - 1)) == 0);
                assert_true(ix->k <= TM_INDEX_KEEP_REFS); /* never sparser */
                break;
        case THIN_POINTS: {
                assert_true(ix->n >= 2 && ix->n < spaced && 2 * ix->n * per >= budget);
                uint64_t most = n - ck_row(ix, ix->n - 1)[TM_COL_REC];
                for (uint32_t i = 0; i < ix->n; i++) {
                        assert_true(tm_index_at_point(ix, fx.cont, i));
                        uint64_t gap =
                            i ? ck_row(ix, i)[TM_COL_REC] - ck_row(ix, i - 1)[TM_COL_REC] : 0;
                        most = gap > most ? gap : most;
                }
                assert_int_equal(ix->k, most);
                break;
        }
        }
        check_index(&fx, ix, how == THIN_NONE);
        tm_index_free(ix);
        fix_free(&fx);
}

static void test_budget(void **state)
{
        (void)state;
        budget_case("pdats2", TM_CONT_ZSTD, 600000, 0, THIN_HALVED);
        /* many records a byte: one checkpoint every 2^17 records stays */
        budget_case("pdats2", TM_CONT_ZSTD, 3000000, 0, THIN_HALVED);
        budget_case("din", TM_CONT_PLAIN, 600000, 0, THIN_NONE);
        /* the frame starts alone fit the floor of one every 2^17 records */
        budget_case("din", TM_CONT_ZSTD, 600000, 0, THIN_POINTS);
        budget_case("din", TM_CONT_ZSTD, 1200000, 1, THIN_POINTS);
        /* a few frames where many more checkpoints fit: halving, which
         * keeps checkpoints between them (not the frame starts alone) */
        budget_case("pdats2", TM_CONT_ZSTD, 2400000, 1, THIN_HALVED);
}

/* ---- the file ---- */

/* The key's state_ok: the row's, on fx's ctx (as records.c's). */
static int fix_state_ok(const void *ctx, const void *st)
{
        const struct fix *fx = ctx;
        return fx->row->state_ok(fx->ctx, st);
}

static int load(const struct fix *fx, const char *path, const struct tm_index_key *key,
                const struct tm_schema *s, size_t stsize, struct tm_index **out)
{
        struct tm_err err = {0};
        int rc = tm_index_load(path, key, s, stsize, fx->hdr_len, NULL, out, NULL, &err);
        if (rc == 0)
                tm_index_free(*out);
        else
                assert_true(err.msg[0] != 0);
        return rc;
}

/* Bytes after the magic changed one at a time (every one of the head,
 * sparser further on): refused, as another version (-ESTALE) in the key
 * and the schema's words, else as damage (-EIO); then the file cut short
 * at several lengths: -EIO. */
static void check_damage(const struct fix *fx, const char *path, const struct tm_index_key *key)
{
        struct tm_index *back;
        struct stat sb;
        assert_int_equal(stat(path, &sb), 0);
        int fd = open(path, O_RDWR);
        assert_true(fd >= 0);
        for (off_t off = 8; off < sb.st_size; off += 1 + off / 3) {
                uint8_t b, x;
                assert_int_equal(pread(fd, &b, 1, off), 1);
                x = b ^ 0x10;
                assert_int_equal(pwrite(fd, &x, 1, off), 1);
                int rc = load(fx, path, key, &fx->s, fx->row->state_size, &back);
                /* bytes 72-83: schema CRC, state size, column count */
                if (rc == 0 || (rc != -EIO && (rc != -ESTALE || off >= TM_IX_KEY_END + 12)))
                        fail_msg("damage at %lld: %d", (long long)off, rc);
                assert_int_equal(pwrite(fd, &b, 1, off), 1);
        }
        assert_int_equal(load(fx, path, key, &fx->s, fx->row->state_size, &back), 0);
        static const off_t cut[] = {1, 8, 100, 1000};
        for (unsigned i = 0; i < 4; i++) {
                assert_true(cut[i] < sb.st_size);
                assert_int_equal(ftruncate(fd, sb.st_size - cut[i]), 0);
                assert_int_equal(load(fx, path, key, &fx->s, fx->row->state_size, &back), -EIO);
        }
        assert_int_equal(ftruncate(fd, 0), 0);
        assert_int_equal(load(fx, path, key, &fx->s, fx->row->state_size, &back), -EIO);
        close(fd);
}

static void test_file(void **state)
{
        (void)state;
        struct fix fx;
        fix_make(&fx, "pdats", TM_CONT_GZIP);
        struct tm_index *ix = build(&fx, 100), *back;
        struct tm_index_key key = {.archive_size = 1234,
                                   .mtime_ns = 5678,
                                   .ino = 9,
                                   .fingerprint = 0x0123456789abcdefull,
                                   .codec = "pdats",
                                   .container = "gzip",
                                   .state_ok = fix_state_ok,
                                   .state_ctx = &fx};
        const char *path = tmt_path("idx.tmidx");
        uint32_t crc = tm_index_schema_crc(&fx.s);
        size_t stsize = fx.row->state_size;
        struct tm_err err = {0};
        assert_int_equal(tm_index_save(ix, fx.cont, &key, crc, path, &err), 0);

        /* a fresh container gets its seek index from the file */
        struct tm_cont *c2;
        int ifd = -1;
        assert_int_equal(tm_cont_open(fx.fd, fx.path, &c2, &err), 0);
        if (tm_index_load(path, &key, &fx.s, stsize, fx.hdr_len, c2, &back, &ifd, &err) != 0)
                fail_msg("load: %s", err.msg);
        assert_true(ifd >= 0);
        assert_int_equal(tm_index_compare(ix, back, &err), 0);
        check_index(&fx, back, 1);
        uint64_t rs;
        assert_int_equal(tm_cont_raw_size(c2, &rs), 1);
        assert_int_equal(rs, fx.raw.len);
        tm_index_free(back);
        tm_cont_close(c2);
        close(ifd);

        /* another version of the archive, another trace, another schema */
        struct tm_index_key k2 = key;
        k2.archive_size++;
        assert_int_equal(load(&fx, path, &k2, &fx.s, stsize, &back), -ESTALE);
        k2 = key;
        k2.mtime_ns++;
        assert_int_equal(load(&fx, path, &k2, &fx.s, stsize, &back), -ESTALE);
        k2 = key;
        k2.ino++;
        assert_int_equal(load(&fx, path, &k2, &fx.s, stsize, &back), -ESTALE);
        k2 = key; /* the content differs (sshfs: size, mtime equal, no inode) */
        k2.fingerprint ^= 1ull << 40;
        assert_int_equal(load(&fx, path, &k2, &fx.s, stsize, &back), -ESTALE);
        k2 = key; /* the content could not be read: no file matches */
        k2.fp_failed = 1;
        assert_int_equal(load(&fx, path, &k2, &fx.s, stsize, &back), -ESTALE);
        k2 = key;
        k2.codec = "pdats2";
        assert_int_equal(load(&fx, path, &k2, &fx.s, stsize, &back), -ESTALE);
        k2 = key;
        k2.container = "zstd";
        assert_int_equal(load(&fx, path, &k2, &fx.s, stsize, &back), -ESTALE);
        struct tm_schema s2; /* the schema made again: the same */
        tm_addr_schema(&s2, fx.s.nkinds, 0);
        assert_int_equal(load(&fx, path, &key, &s2, stsize, &back), 0);
        s2.field[1].show = TM_SHOW_HEX; /* the same columns, addresses shown otherwise */
        assert_int_equal(load(&fx, path, &key, &s2, stsize, &back), -ESTALE);
        tm_addr_schema(&s2, fx.s.nkinds - 1, 0);
        assert_int_equal(load(&fx, path, &key, &s2, stsize, &back), -ESTALE);
        assert_int_equal(load(&fx, path, &key, &fx.s, stsize - 8, &back), -ESTALE);

        check_damage(&fx, path, &key);
        assert_int_equal(unlink(path), 0);
        assert_int_equal(load(&fx, path, &key, &fx.s, stsize, &back), -ENOENT);

        /* a directory that cannot hold the file: an error, nothing left */
        path = tmt_path("no/such/dir/idx.tmidx");
        assert_true(tm_index_save(ix, fx.cont, &key, crc, path, &err) < 0);
        tm_index_free(ix);
        fix_free(&fx);
}

/* tm_index_compare (tracetool verify) names the first difference. */
static void test_compare(void **state)
{
        (void)state;
        struct fix fx;
        fix_make(&fx, "pdats", TM_CONT_ZSTD);
        struct tm_index *a = build(&fx, 50);
        tm_cont_close(fx.cont);
        struct tm_err err = {0};
        assert_int_equal(tm_cont_open(fx.fd, fx.path, &fx.cont, &err), 0);
        struct tm_index *b = build(&fx, 50);
        assert_int_equal(tm_index_compare(a, b, &err), 0);
        b->st[17 * b->stsize + 3] ^= 1;
        assert_int_equal(tm_index_compare(a, b, &err), -EIO);
        assert_non_null(strstr(err.msg, "checkpoint (17)"));
        b->st[17 * b->stsize + 3] ^= 1;
        b->col[17 * b->ncol + tm_col_kind(TM_READ)]++;
        assert_int_equal(tm_index_compare(a, b, &err), -EIO);
        assert_non_null(strstr(err.msg, "checkpoint (17)"));
        b->col[17 * b->ncol + tm_col_kind(TM_READ)]--;
        b->stats.kind_n[0]++;
        assert_int_equal(tm_index_compare(a, b, &err), -EIO);
        assert_non_null(strstr(err.msg, "stats"));
        b->stats.kind_n[0]--;
        b->tot[tm_col_kind(TM_WRITE)]++;
        assert_int_equal(tm_index_compare(a, b, &err), -EIO);
        assert_non_null(strstr(err.msg, "view size of column"));
        b->tot[tm_col_kind(TM_WRITE)]--;
        assert_int_equal(tm_index_compare(a, b, &err), 0);
        tm_index_free(a);
        tm_index_free(b);
        fix_free(&fx);
}

/* tm_index_find: the last checkpoint at or before v in any column, as a
 * linear search finds it (columns of kinds and fields stand still over
 * checkpoints without their records: the last of equals). */
static void test_find(void **state)
{
        (void)state;
        struct fix fx;
        fix_make(&fx, "din", TM_CONT_PLAIN);
        struct tm_index *ix = build(&fx, 13);
        for (int i = 0; i < 20000; i++) {
                unsigned col = (unsigned)(vt_rand() % ix->ncol);
                uint64_t v = vt_rand() % (ix->tot[col] + 10);
                uint32_t want = 0;
                for (uint32_t j = 0; j < ix->n; j++)
                        if (ck_row(ix, j)[col] <= v)
                                want = j;
                assert_int_equal(tm_index_find(ix, col, v), want);
        }
        tm_index_free(ix);
        fix_free(&fx);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_thinning), cmocka_unit_test(test_points),
            cmocka_unit_test(test_budget),   cmocka_unit_test(test_checkpoints_all),
            cmocka_unit_test(test_file),     cmocka_unit_test(test_find),
            cmocka_unit_test(test_compare),
        };
        return cmocka_run_group_tests(tests, tmt_group_setup, tmt_group_teardown);
}
