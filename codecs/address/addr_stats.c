#include "addr_stats.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { RUN_NONE, RUN_JUMP, RUN_CLUSTER };

void tm_addr_stats_init(struct tm_addr_acc *a)
{
        memset(a, 0, sizeof *a);
        for (unsigned t = 0; t < TM_NTYPES; t++)
                a->s.addr_min[t] = UINT64_MAX;
}

static void stats_close_run(struct tm_addr_acc *a)
{
        uint64_t b = a->run_len < TM_ADDR_RUN_MAX ? a->run_len : TM_ADDR_RUN_MAX;
        if (a->run == RUN_JUMP) {
                a->s.jump_runs[b]++;
                a->s.jump_fetches[b] += a->run_len;
        } else if (a->run == RUN_CLUSTER) {
                a->s.clus_runs[b]++;
                a->s.clus_fetches[b] += a->run_len;
        }
        a->run = RUN_NONE;
        a->run_len = 0;
}

static void stats_ifetch(struct tm_addr_acc *a, uint64_t addr)
{
        uint64_t d = addr - a->prev_ifetch;
        int seq = a->have_ifetch && d >= 1 && d <= TM_ADDR_SEQ_MAX;
        a->prev_ifetch = addr;
        a->have_ifetch = 1;
        if (a->run != RUN_NONE && seq) {
                a->run_len++;
                return;
        }
        stats_close_run(a);
        a->run = RUN_JUMP;
        a->run_len = 1;
}

static void stats_data(struct tm_addr_acc *a, uint64_t addr)
{
        if (a->have_data) {
                int64_t d = (int64_t)(addr - a->prev_data);
                if (d >= -TM_ADDR_OFF_MAX && d <= TM_ADDR_OFF_MAX)
                        a->s.data_off[d + TM_ADDR_OFF_MAX]++;
                else if (d >= INT8_MIN && d <= INT8_MAX)
                        a->s.data_off_range[TM_ADDR_OFF_8BIT]++;
                else if (d >= INT16_MIN && d <= INT16_MAX)
                        a->s.data_off_range[TM_ADDR_OFF_16BIT]++;
                else if (d >= INT32_MIN && d <= INT32_MAX)
                        a->s.data_off_range[TM_ADDR_OFF_32BIT]++;
                else
                        a->s.data_off_range[TM_ADDR_OFF_64BIT]++;
        }
        a->prev_data = addr;
        a->have_data = 1;
        stats_close_run(a);
        a->run = RUN_CLUSTER;
}

/* One reference of type t at addr. */
static inline void stats_one(struct tm_addr_acc *a, unsigned t, uint64_t addr)
{
        struct tm_addr_stats *s = &a->s;
        t &= TM_NTYPES - 1;
        s->count[t]++;
        if (addr < s->addr_min[t])
                s->addr_min[t] = addr;
        if (addr > s->addr_max[t])
                s->addr_max[t] = addr;
        if (t == TM_IFETCH)
                stats_ifetch(a, addr);
        else if (t == TM_READ || t == TM_WRITE)
                stats_data(a, addr);
        else
                stats_close_run(a);
}

void tm_addr_stats_add(struct tm_addr_acc *a, const struct tm_ref *refs, size_t n)
{
        a->s.refs += n;
        for (size_t i = 0; i < n; i++)
                stats_one(a, refs[i].type, refs[i].addr);
}

/* tm_addr_stats_add of n references given as columns: types and addresses. */
static void stats_add_cols(struct tm_addr_acc *a, const uint64_t *type, const uint64_t *addr,
                           size_t n)
{
        a->s.refs += n;
        for (size_t i = 0; i < n; i++)
                stats_one(a, (unsigned)type[i], addr[i]);
}

void tm_addr_stats_finish(struct tm_addr_acc *a)
{
        stats_close_run(a);
}

/* ---- rows ---- */

static double ratio(uint64_t a, uint64_t b)
{
        return b ? (double)a / (double)b : 0.0;
}

/* One histogram: its totals, then per length with runs the runs, the
 * fetches in them, and (in the text) the cumulative fraction of all
 * fetches in runs up to that length (the y axis of Figures 3 and 4). */
static void rows_runs(struct tm_rows *k, const char *key, const char *title_runs,
                      const uint64_t *runs, const uint64_t *fetches)
{
        uint64_t total = 0, nruns = 0;
        for (unsigned i = 0; i <= TM_ADDR_RUN_MAX; i++) {
                total += fetches[i];
                nruns += runs[i];
        }
        tm_row_u64(k, TM_KEY(key, "runs"), nruns, "runs", 1, title_runs);
        tm_row_u64(k, TM_KEY(key, "fetches"), total, "references", 1, "{} instruction fetches\n");
        if (nruns)
                tm_row_text(k, "  length             runs        fetches   cum.frac\n");
        uint64_t cum = 0;
        for (unsigned i = 0; i <= TM_ADDR_RUN_MAX; i++) {
                if (!runs[i])
                        continue;
                cum += fetches[i];
                char len[16];
                snprintf(len, sizeof len, "%u", i);
                tm_row_u64(k, TM_KEY(key, "histogram", len, "runs"), runs[i], "runs", 1,
                           i == TM_ADDR_RUN_MAX ? "  >={N-6} {14}" : "  {N-8} {14}");
                tm_row_u64(k, TM_KEY(key, "histogram", len, "fetches"), fetches[i], "references",
                           1, " {14}");
                tm_row_real(k, NULL, ratio(cum, total), NULL, 1, " {10.4}\n");
        }
}

static void rows_offsets(struct tm_rows *k, const struct tm_addr_stats *s)
{
        static const char *const range[TM_ADDR_OFF_NRANGE] = {"8bit", "16bit", "32bit", "64bit"};
        static const char *const label[TM_ADDR_OFF_NRANGE] = {
            "  other, 8-bit   {14}", "  16-bit         {14}", "  32-bit         {14}",
            "  64-bit         {14}"};
        uint64_t total = 0;
        for (unsigned i = 0; i < TM_ADDR_OFF_EXACT; i++)
                total += s->data_off[i];
        for (unsigned i = 0; i < TM_ADDR_OFF_NRANGE; i++)
                total += s->data_off_range[i];
        tm_row_u64(k, TM_KEY("data_offsets", "total"), total, "references", 1,
                   "\ndata offsets (address minus previous data address): {}\n");
        if (total)
                tm_row_text(k, "  offset                  count   fraction\n");
        for (int d = -TM_ADDR_OFF_MAX; d <= TM_ADDR_OFF_MAX; d++) {
                uint64_t c = s->data_off[d + TM_ADDR_OFF_MAX];
                char off[16];
                snprintf(off, sizeof off, "%d", d);
                if (!c)
                        continue;
                tm_row_u64(k, TM_KEY("data_offsets", "by_offset", off), c, "references", 1,
                           "  {n-14} {14}");
                tm_row_real(k, NULL, ratio(c, total), NULL, 1, " {10.4}\n");
        }
        for (unsigned i = 0; i < TM_ADDR_OFF_NRANGE; i++) {
                uint64_t c = s->data_off_range[i];
                tm_row_u64(k, TM_KEY("data_offsets", "other", range[i]), c, "references", 1,
                           c ? label[i] : NULL);
                if (c)
                        tm_row_real(k, NULL, ratio(c, total), NULL, 1, " {10.4}\n");
        }
}

/* The trace's name, sizes and damage: lines of the text only. */
static void rows_head(struct tm_rows *k, const struct tm_family_info *in)
{
        tm_row_str(k, NULL, in->name, "archive        {}\n");
        tm_row_str(k, NULL, in->codec, "codec          {}\n");
        tm_row_str(k, NULL, in->container, "container      {}\n");
        if (in->damage)
                tm_row_str(k, NULL, in->damage,
                           "damaged        {} (the numbers are of the intact prefix before it)\n");
        tm_row_u64(k, NULL, in->archive_size, "bytes", 1, "archive bytes  {}\n");
        tm_row_u64(k, NULL, in->raw_size, "bytes", 1, "raw bytes      {}\n");
        tm_row_u64(k, NULL, in->ascii_size, "bytes", 1, "din bytes      {}\n");
}

void tm_addr_stats_rows(const struct tm_addr_stats *s, const struct tm_family_info *in,
                        unsigned ntypes, struct tm_rows *k)
{
        rows_head(k, in);
        tm_row_u64(k, TM_KEY("references"), s->refs, "references", 1, "references     {}\n");
        tm_row_real(k, TM_KEY("refs_per_byte", "archive"), ratio(s->refs, in->archive_size),
                    "references per byte", 1, "refs/byte      {.4} archive, ");
        tm_row_real(k, TM_KEY("refs_per_byte", "raw"), ratio(s->refs, in->raw_size),
                    "references per byte", 1, "{.4} raw\n");
        tm_row_real(k, TM_KEY("ascii_per_byte", "archive"), ratio(in->ascii_size, in->archive_size),
                    NULL, 1, "din/size       {.4} archive, ");
        tm_row_real(k, TM_KEY("ascii_per_byte", "raw"), ratio(in->ascii_size, in->raw_size), NULL,
                    1, "{.4} raw\n");
        tm_row_text(k, "\n  type           references   fraction             lowest            highest\n");
        uint64_t lo = UINT64_MAX, hi = 0;
        for (unsigned t = 0; t < ntypes && t < TM_NTYPES; t++) {
                const char *name = tm_type_name(t);
                int have = s->count[t] != 0;
                tm_row_u64(k, TM_KEY("types", name, "type"), t, NULL, 1, "  {} {N-8}");
                tm_row_u64(k, TM_KEY("types", name, "references"), s->count[t], "references", 1,
                           " {14}");
                tm_row_real(k, TM_KEY("types", name, "fraction"), ratio(s->count[t], s->refs), NULL,
                            1, " {10.4}");
                tm_row_addr(k, TM_KEY("types", name, "lowest"), s->addr_min[t], have,
                            have ? " {18x}" : NULL);
                tm_row_addr(k, TM_KEY("types", name, "highest"), s->addr_max[t], have,
                            have ? " {18x}\n" : "\n");
                if (have) {
                        lo = s->addr_min[t] < lo ? s->addr_min[t] : lo;
                        hi = s->addr_max[t] > hi ? s->addr_max[t] : hi;
                }
        }
        if (s->refs) {
                tm_row_u64(k, NULL, s->refs, "references", 1, "  all        {14}");
                tm_row_real(k, NULL, 1.0, NULL, 1, " {10.4}");
        }
        tm_row_addr(k, TM_KEY("lowest"), lo, s->refs != 0, s->refs ? " {18x}" : NULL);
        tm_row_addr(k, TM_KEY("highest"), hi, s->refs != 0, s->refs ? " {18x}\n" : NULL);
        rows_runs(k, "jump_runs", "\njump-initiated instruction runs: {} runs, ", s->jump_runs,
                  s->jump_fetches);
        rows_runs(k, "clusters",
                  "\ndata-instruction clusters (fetches after a data reference): {} runs, ",
                  s->clus_runs, s->clus_fetches);
        rows_offsets(k, s);
}

/* ---- the address family (family.h) ---- */

struct tm_family_acc {
        struct tm_addr_acc a;
};

/* The address schema (arec.h): fields type (hidden) and address (hex
 * without 0x), maybe size, and kinds whose tags are their indexes. A DTD
 * cannot hide a field, so no Meta-TF schema is taken for one. */
static int addr_claims(const struct tm_schema *s)
{
        if (s->nfields < 2 || s->nfields > 3 || s->nkinds < 1 || s->nkinds > TM_NTYPES ||
            strcmp(s->field[0].name, "type") != 0 || !(s->field[0].show & TM_SHOW_HIDDEN) ||
            strcmp(s->field[1].name, "address") != 0 || s->field[1].show != TM_SHOW_HEXN)
                return 0;
        for (unsigned k = 0; k < s->nkinds; k++)
                if (s->kind[k].tag != k || s->kind[k].nfields != s->nfields)
                        return 0;
        return 1;
}

static struct tm_family_acc *addr_start(const struct tm_schema *s)
{
        (void)s;
        struct tm_family_acc *a = malloc(sizeof *a);
        if (a)
                tm_addr_stats_init(&a->a);
        return a;
}

/* Records of the address schema: v[0] the type, v[1] the address. */
static void addr_add(struct tm_family_acc *a, const struct tm_rec *r, size_t n)
{
        a->a.s.refs += n;
        for (size_t i = 0; i < n; i++)
                stats_one(&a->a, (unsigned)r[i].v[0], r[i].v[1]);
}

static void addr_add_batch(struct tm_family_acc *a, const struct tm_rbatch *b)
{
        stats_add_cols(&a->a, b->col[0], b->col[1], b->n);
}

static void addr_finish(struct tm_family_acc *a, void *block)
{
        tm_addr_stats_finish(&a->a);
        memcpy(block, &a->a.s, sizeof a->a.s);
}

static void addr_free(struct tm_family_acc *a)
{
        free(a);
}

static size_t addr_peak(const struct tm_family_acc *a)
{
        return sizeof *a;
}

/* Parts no larger than their wholes, ranges that are ranges. */
static int addr_stats_ok(const void *block)
{
        const struct tm_addr_stats *s = block;
        uint64_t sum = 0, runs = 0;
        for (unsigned t = 0; t < TM_NTYPES; t++) {
                if (s->count[t] > s->refs || (s->count[t] && s->addr_min[t] > s->addr_max[t]))
                        return 0;
                sum += s->count[t];
        }
        /* runs of length i (a cluster may have none) hold i fetches each; the
         * last bucket, runs of TM_ADDR_RUN_MAX or more */
        for (unsigned i = 0; i <= TM_ADDR_RUN_MAX; i++) {
                const uint64_t *r[2] = {s->jump_runs, s->clus_runs};
                const uint64_t *f[2] = {s->jump_fetches, s->clus_fetches};
                for (unsigned j = 0; j < 2; j++) {
                        if (r[j][i] > s->refs || f[j][i] > s->refs ||
                            (i < TM_ADDR_RUN_MAX ? f[j][i] != i * r[j][i] : f[j][i] < i * r[j][i]))
                                return 0;
                        runs += f[j][i];
                }
        }
        return sum == s->refs && runs <= 2 * s->count[TM_IFETCH];
}

static void addr_rows(const void *block, const struct tm_schema *s,
                      const struct tm_family_info *in, struct tm_rows *out)
{
        tm_addr_stats_rows(block, in, s->nkinds, out);
}

/* struct tm_binary_ref (views/tm_binary.h): the address, little-endian,
 * the type, seven zero bytes. */
static void addr_binary(const struct tm_family_acc *tables, uint8_t *dst, const struct tm_schema *s,
                        const struct tm_rec *r, size_t n)
{
        (void)tables;
        (void)s;
        for (size_t i = 0; i < n; i++, dst += TM_ADDR_BIN_SIZE)
                tm_addr_bin_put(dst, r[i].v[1], (uint32_t)r[i].v[0]);
}

static size_t addr_layout(char *dst, size_t cap)
{
        return (size_t)snprintf(dst, cap,
                                "binary: 16-byte little-endian records, one a reference\n"
                                "C (tracemount/views/tm_binary.h):\n"
                                "    struct tm_binary_ref {\n"
                                "        uint64_t addr;\n"
                                "        uint8_t type;   /* Dinero label 0..7 */\n"
                                "        uint8_t pad[7]; /* zero */\n"
                                "    };\n"
                                "numpy:\n"
                                "    np.dtype([(\"addr\", \"<u8\"), (\"type\", \"u1\"), "
                                "(\"pad\", \"V7\")])\n");
}

_Static_assert(sizeof(struct tm_addr_stats) <= TM_FAMILY_STATS_MAX, "a family block");

static const struct tm_family_more addr_more = {
    .acc_add_batch = addr_add_batch,
    .text_whole = 1,
};

const struct tm_family tm_family_address = {
    .name = "address",
    .claims = addr_claims,
    .stats_size = sizeof(struct tm_addr_stats),
    .acc_start = addr_start,
    .acc_add = addr_add,
    .acc_finish = addr_finish,
    .acc_free = addr_free,
    .acc_peak_mem = addr_peak,
    .stats_ok = addr_stats_ok,
    .rows = addr_rows,
    .bin_size = TM_ADDR_BIN_SIZE,
    .binary = addr_binary,
    .bin_layout = addr_layout,
    .more = &addr_more,
};
