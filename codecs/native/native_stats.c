/* native_stats: where the bytes of a .tmn file go (native_stats.h). */
#include "native_stats.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "ncol.h"

/* What a walk reads through: the caller's reader, the stream's size, a
 * buffer for one block (or the schema chunk). */
struct walk {
        tm_rread_fn *read;
        void *arg;
        uint64_t size;
        uint8_t *buf;
};

/* >= a block (TMN_BLK_HDR + TMN_BODY_MAX), a schema chunk, a dictionary chunk */
#define WALK_BUF                                                                                   \
        (NCOL_SCH_HDR + NCOL_SCH_MAX > TMN_DICT_HDR + TMN_DICT_ZMAX                                \
             ? NCOL_SCH_HDR + NCOL_SCH_MAX                                                         \
             : TMN_DICT_HDR + TMN_DICT_ZMAX)
_Static_assert(WALK_BUF >= TMN_BLK_HDR + TMN_BODY_MAX, "a block fits the walk's buffer");

/* n bytes at off into w->buf: 0, or -EIO (truncated) / the reader's error. */
static int walk_read(struct walk *w, uint64_t off, size_t n, const char *what, struct tm_err *err)
{
        if (off > w->size || w->size - off < n)
                return tm_err_set(err, -EIO,
                                  "raw offset %llu: truncated %s (the file ends at %llu)",
                                  (unsigned long long)off, what, (unsigned long long)w->size);
        ssize_t got = w->read(w->arg, off, w->buf, n, err);
        if (got < 0)
                return (int)got;
        if ((size_t)got < n)
                return tm_err_set(err, -EIO, "raw offset %llu: truncated %s",
                                  (unsigned long long)(off + (uint64_t)got), what);
        return 0;
}

/* Schema 1's dictionary chunk at *off (checked whole, as the row's open
 * does); *off past it. */
static int walk_dict(struct walk *w, struct tmn_storage *s, uint64_t *off, struct tm_err *err)
{
        int rc = walk_read(w, *off, TMN_DICT_HDR, "dictionary chunk", err);
        if (rc < 0)
                return rc;
        uint32_t body = tmn_get32(w->buf + 8);
        if (body > TMN_DICT_ZMAX)
                return tm_err_set(err, -EIO, "raw offset %llu: a dictionary chunk of %u bytes",
                                  (unsigned long long)*off + 8, body);
        if ((rc = walk_read(w, *off, TMN_DICT_HDR + (size_t)body, "dictionary chunk", err)) < 0)
                return rc;
        struct tmn_dict d;
        size_t chunk;
        if ((rc = tmn_dict_get(w->buf, TMN_DICT_HDR + (size_t)body, &d, &chunk, err)) < 0)
                return rc;
        for (int k = 0; k < TMN_NSTREAMS; k++)
                s->dict_raw += d.len[k];
        tmn_dict_release(&d);
        s->dict_chunk = chunk;
        *off += chunk;
        return 0;
}

/* The file header (and schema 2's chunk, schema 1's dictionary chunk) at
 * the stream's start; *off past them. */
static int walk_head(struct walk *w, struct tmn_storage *s, uint64_t *off, struct tm_err *err)
{
        int rc = walk_read(w, 0, TMN_FILE_HDR, "file header", err);
        if (rc < 0)
                return rc;
        const uint8_t *h = w->buf;
        unsigned ntypes, log2;
        int sized;
        s->schema = h[9];
        if (s->schema == TMN_SCHEMA_ADDRESS) {
                if ((rc = tmn_file_head_get(h, TMN_FILE_HDR, &ntypes, &sized, &log2, err)) < 0)
                        return rc;
                s->log2 = log2;
                s->sized = (unsigned)sized;
                s->file_hdr = *off = TMN_FILE_HDR;
                return h[8] == TMN_VERSION_DICT ? walk_dict(w, s, off, err) : 0;
        }
        uint8_t want[4];
        tmn_put32(want, (uint32_t)crc32(0, h, 16));
        if (memcmp(h, TMN_MAGIC, 8) != 0 || memcmp(want, h + 16, 4) != 0)
                return tm_err_set(err, -EIO, "raw offset 0: file header checksum mismatch");
        if ((h[8] != TMN_VERSION && h[8] != NCOL_VERSION) || s->schema != NCOL_SCHEMA)
                return tm_err_set(err, -ENOTSUP, "raw offset 0: native version %u schema %u", h[8],
                                  h[9]);
        s->log2 = h[12];
        if (s->log2 < TMN_LOG_MIN || s->log2 > NCOL_LOG_MAX)
                return tm_err_set(err, -EIO, "raw offset 0: file header out of range");
        s->file_hdr = TMN_FILE_HDR;
        if ((rc = walk_read(w, TMN_FILE_HDR, NCOL_SCH_HDR, "schema chunk", err)) < 0)
                return rc;
        uint32_t body = tmn_get32(w->buf + 4);
        if (body > NCOL_SCH_MAX)
                return tm_err_set(err, -EIO, "raw offset %u: no schema chunk", TMN_FILE_HDR);
        if ((rc = walk_read(w, TMN_FILE_HDR, NCOL_SCH_HDR + body, "schema chunk", err)) < 0)
                return rc;
        struct ncol_file f;
        rc = ncol_schema_get(w->buf, NCOL_SCH_HDR + body, TMN_FILE_HDR, &f, err);
        if (rc < 0)
                return rc;
        s->fields = f.schema;
        ncol_file_free(&f);
        s->schema_chunk = (uint64_t)rc;
        *off = TMN_FILE_HDR + (uint64_t)rc;
        return 0;
}

/* Schema 2's slot of field f's stream j (0..3: A, B, C, D) under method m
 * (keyed: f has keys, its D holds codes), or -1 when that stream must be
 * empty. */
static int s2_slot(const struct tmn_storage *s, unsigned f, unsigned m, unsigned j, int keyed)
{
        static const int8_t role_a[NCOL_M_HEAPED + 1] = {
            TMN_R_PLAIN, TMN_R_VARINT, TMN_R_DELTA, TMN_R_CODES, TMN_R_PLANES, TMN_R_CODES, -1};
        int coded = m == NCOL_M_PRED || m == NCOL_M_HEAP; /* codes, misses, ranks */
        int r = j == 0                                           ? role_a[m]
                : j == 1 && coded                                ? TMN_R_MISSES
                : j == 2 && coded                                ? TMN_R_RANKS
                : j == 3 && tm_field_is_var(&s->fields.field[f]) ? TMN_R_BYTES
                : j == 3 && keyed                                ? TMN_R_CODES
                                                                 : -1;
        return r < 0 ? -1 : 2 + (int)(f * TMN_R_N) + r;
}

/* The stream table of the block whose body is b (blen bytes, at raw
 * offset off: the block's) counted into s; 0 or -EIO. */
static int walk_table(struct tmn_storage *s, const uint8_t *b, uint32_t blen, uint64_t off,
                      struct tm_err *err)
{
        unsigned long long o = (unsigned long long)off;
        unsigned coding = b[0], nf = s->fields.nfields;
        int s2 = s->schema == NCOL_SCHEMA; /* schema 1's codings 3, 4 are predicted ones */
        int ok = s2 ? coding == NCOL_CODING || coding == NCOL_CODING_ORD
                    : coding <= TMN_PREDICT_DELTA + 1;
        if (!ok)
                return tm_err_set(err, -EIO, "raw offset %llu: block coding %u", o, coding);
        unsigned nstr = s2 ? 2 + NCOL_FSTREAMS * nf : coding ? TMN_NSTREAMS : 3;
        /* coding 4: the order and keys (6 bytes a field) after the methods */
        size_t pre = 1 + (s2 ? (coding == NCOL_CODING_ORD ? 6 : 1) * nf : 0);
        size_t tab = pre + (size_t)TMN_STREAM_ENTRY * nstr;
        if (blen < tab)
                return tm_err_set(err, -EIO,
                                  "raw offset %llu: a body of %u bytes holds no stream "
                                  "table (%zu bytes)",
                                  o, blen, tab);
        for (unsigned f = 0; s2 && f < nf; f++)
                if (b[1 + f] > NCOL_M_HEAPED)
                        return tm_err_set(err, -EIO, "raw offset %llu: field %u's method %u", o, f,
                                          b[1 + f]);
        uint64_t sum = tab;
        int slot[2 + NCOL_FSTREAMS * TM_SCHEMA_FIELDS_MAX];
        for (unsigned i = 0; i < nstr; i++) {
                const uint8_t *e = b + pre + (size_t)TMN_STREAM_ENTRY * i;
                uint32_t st = tmn_get32(e + 1), raw = tmn_get32(e + 5);
                if (e[0] > (s2 || !coding || !s->dict_chunk ? 1 : TMN_STORE_DICT) ||
                    (e[0] == 0 && st != raw))
                        return tm_err_set(err, -EIO,
                                          "raw offset %llu: stream %u's entry "
                                          "(storage %u, %u bytes stored, %u raw)",
                                          o, i, e[0], st, raw);
                sum += st;
                if (s2)
                        slot[i] = i < 2
                                      ? (int)i
                                      : s2_slot(s, (i - 2) / 4, b[1 + (i - 2) / 4], (i - 2) % 4,
                                                coding == NCOL_CODING_ORD &&
                                                    tmn_get32(b + 1 + 2 * nf + 4 * ((i - 2) / 4)));
                else
                        slot[i] = coding ? (int)i : TMN_ST_PLAIN + (int)i;
                if (slot[i] < 0 && (st || raw))
                        return tm_err_set(err, -EIO,
                                          "raw offset %llu: stream %u holds %u bytes "
                                          "where its field's method has none",
                                          o, i, raw);
        }
        if (sum != blen)
                return tm_err_set(err, -EIO,
                                  "raw offset %llu: the stream table and its streams "
                                  "take %llu bytes, the body %u",
                                  o, (unsigned long long)sum, blen);
        for (unsigned i = 0; i < nstr; i++) {
                const uint8_t *e = b + pre + (size_t)TMN_STREAM_ENTRY * i;
                if (slot[i] >= 0) {
                        s->stored[slot[i]] += tmn_get32(e + 1);
                        s->raw[slot[i]] += tmn_get32(e + 5);
                }
        }
        for (unsigned f = 0; s2 && f < nf; f++)
                s->method[f][b[1 + f]]++;
        s->coded[s2 ? NCOL_CODING : coding < TMN_PREDICT_DELTA ? coding : coding - 2]++;
        s->tables += tab;
        return 0;
}

int tmn_storage_scan(tm_rread_fn *read, void *arg, uint64_t raw_size, struct tmn_storage *s,
                     struct tm_err *err)
{
        memset(s, 0, sizeof *s);
        struct walk w = {read, arg, raw_size, malloc(WALK_BUF)};
        if (!w.buf)
                return tm_err_set(err, -ENOMEM, "out of memory");
        uint64_t off = 0;
        int rc = walk_head(&w, s, &off, err);
        uint32_t nrec = 1, body = 0;
        while (rc == 0 && nrec) {
                unsigned long long o = (unsigned long long)off;
                if ((rc = walk_read(&w, off, TMN_BLK_HDR, "block header", err)) < 0 ||
                    (rc = tmn_block_head(w.buf, 1u << s->log2, off, &nrec, &body, err)) < 0 ||
                    (rc = walk_read(&w, off, TMN_BLK_HDR + (size_t)body, "block", err)) < 0)
                        break;
                if (!nrec) { /* the end mark */
                        if ((rc = tmn_end_check(w.buf, TMN_END_LEN, 1, 0, s->records, off, err)) ==
                                0 &&
                            off + TMN_END_LEN != raw_size)
                                rc = tm_err_set(err, -EIO,
                                                "raw offset %llu: bytes after the end "
                                                "mark",
                                                o + TMN_END_LEN);
                        s->end = TMN_END_LEN;
                        break;
                }
                if ((uint32_t)crc32_z(crc32(0, w.buf, 12), w.buf + TMN_BLK_HDR, body) !=
                    tmn_get32(w.buf + 12)) {
                        rc = tm_err_set(err, -EIO, "raw offset %llu: block checksum mismatch", o);
                        break;
                }
                if ((rc = walk_table(s, w.buf + TMN_BLK_HDR, body, off, err)) < 0)
                        break;
                s->blocks++;
                s->records += nrec;
                s->blk_hdr += TMN_BLK_HDR;
                off += TMN_BLK_HDR + (uint64_t)body;
        }
        free(w.buf);
        s->size = raw_size;
        return rc;
}

/* ---- the rows ---- */

static const char *const s1_key[TMN_ST_S1] = {
    "type", "ihit", "imiss", "dhit", "dmiss", "size", "plain_type", "plain_address", "plain_size"};
static const char *const s1_label[TMN_ST_S1] = {
    "type patterns", "instruction hit codes", "instruction misses", "data hit codes", "data misses",
    "sizes",         "types (plain)",         "addresses (plain)",  "sizes (plain)"};
static const char *const role_key[TMN_R_N] = {"plain",  "varint", "delta",  "codes",
                                              "misses", "ranks",  "planes", "bytes"};
static const char *const role_label[TMN_R_N] = {
    "plain values", "varints", "deltas", "hit codes", "misses", "ranks", "byte planes", "bytes"};
static const char *const method_key[NCOL_M_HEAPED + 1] = {
    "plain", "varint", "delta", "predicted", "planes", "allocator", "with_address"};
#define CODED (1u << TMN_R_CODES | 1u << TMN_R_MISSES | 1u << TMN_R_RANKS)
/* The roles each method's blocks store (bit r: enum tmn_role; method 6's
 * values are coded with the address field's, method 5). */
static const unsigned method_roles[NCOL_M_HEAPED + 1] = {
    1u << TMN_R_PLAIN, 1u << TMN_R_VARINT, 1u << TMN_R_DELTA, CODED, 1u << TMN_R_PLANES, CODED, 0};

static double ratio(uint64_t a, uint64_t b)
{
        return b ? (double)a / (double)b : 0.0;
}

/* One part of the file: a line of the text, a group of rows keyed
 * k0.k1[.k2] (bytes, bytes_per_record, percent, and raw for a stream:
 * has_raw). */
static void part(const struct tmn_storage *s, struct tm_rows *o, const char *k0, const char *k1,
                 const char *k2, const char *label, uint64_t bytes, int has_raw, uint64_t raw)
{
        const char *key[TM_ROW_DEPTH + 1] = {k0, k1, k2, NULL, NULL, NULL};
        unsigned n = !k1 ? 1 : k2 ? 3 : 2;
        tm_row_str(o, NULL, label, k2 ? "    {-26}" : "  {-28}");
        key[n] = "bytes";
        tm_row_u64(o, key, bytes, "bytes", 1, "{12}");
        key[n] = "bytes_per_record";
        tm_row_real(o, key, ratio(bytes, s->records), "bytes per record", 1, "{14.4}");
        key[n] = "percent";
        tm_row_real(o, key, 100.0 * ratio(bytes, s->size), "percent", 1, "{10.2}%");
        if (!has_raw) {
                tm_row_text(o, "\n");
                return;
        }
        key[n] = "raw";
        tm_row_u64(o, key, raw, "bytes", 1, "{15}\n");
}

static void framing_rows(const struct tmn_storage *s, struct tm_rows *o)
{
        part(s, o, "framing", "file_header", NULL, "file header", s->file_hdr, 0, 0);
        if (s->dict_chunk)
                part(s, o, "framing", "dictionary", NULL, "dictionary chunk", s->dict_chunk, 1,
                     s->dict_raw);
        if (s->schema == NCOL_SCHEMA)
                part(s, o, "framing", "schema_chunk", NULL, "schema chunk", s->schema_chunk, 0, 0);
        part(s, o, "framing", "block_headers", NULL, "block headers", s->blk_hdr, 0, 0);
        part(s, o, "framing", "stream_tables", NULL, "block stream tables", s->tables, 0, 0);
        part(s, o, "framing", "end_mark", NULL, "end mark", s->end, 0, 0);
}

static void s1_rows(const struct tmn_storage *s, struct tm_rows *o)
{
        uint64_t pred = s->coded[1] + s->coded[2];
        tm_row_u64(o, TM_KEY("blocks", "predicted"), pred, "blocks", 1, ": {} predicted");
        tm_row_u64(o, TM_KEY("blocks", "plain"), s->coded[0], "blocks", 1, ", {} plain\n");
        tm_row_text(o, "  part                            stored   bytes/record  of the file      "
                       "raw bytes\n");
        framing_rows(s, o);
        for (unsigned i = 0; i < TMN_ST_S1; i++) {
                int plain = i >= TMN_ST_PLAIN;
                int is_size = i == TMN_S_SIZE || i == TMN_ST_PLAIN + 2;
                if (!(plain ? s->coded[0] : pred) || (is_size && !s->sized))
                        continue;
                part(s, o, "streams", s1_key[i], NULL, s1_label[i], s->stored[i], 1, s->raw[i]);
        }
}

static void s2_field_rows(const struct tmn_storage *s, unsigned f, struct tm_rows *o)
{
        const char *name = s->fields.field[f].name;
        unsigned roles = tm_field_is_var(&s->fields.field[f]) ? 1u << TMN_R_BYTES : 0, first = 1;
        tm_row_str(o, NULL, name, "  field {}, blocks by method:");
        for (unsigned m = 0; m <= NCOL_M_HEAPED; m++) {
                if (!s->method[f][m])
                        continue;
                tm_row_u64(o, TM_KEY("fields", name, "methods", method_key[m]), s->method[f][m],
                           "blocks", 1, first ? " {n} {}" : ", {n} {}");
                roles |= method_roles[m];
                first = 0;
        }
        tm_row_text(o, "\n");
        for (unsigned r = 0; r < TMN_R_N; r++) {
                unsigned i = 2 + f * TMN_R_N + r;
                if (roles >> r & 1)
                        part(s, o, "fields", name, role_key[r], role_label[r], s->stored[i], 1,
                             s->raw[i]);
        }
}

static void s2_rows(const struct tmn_storage *s, struct tm_rows *o)
{
        tm_row_text(o, "\n");
        tm_row_text(o, "  part                            stored   bytes/record  of the file      "
                       "raw bytes\n");
        framing_rows(s, o);
        part(s, o, "streams", "kind", NULL, "kinds", s->stored[0], 1, s->raw[0]);
        if (s->fields.nsections)
                part(s, o, "streams", "section", NULL, "sections", s->stored[1], 1, s->raw[1]);
        for (unsigned f = 0; f < s->fields.nfields; f++)
                s2_field_rows(s, f, o);
}

void tmn_storage_rows(const struct tmn_storage *s, struct tm_rows *o)
{
        tm_row_text(o, "\nstorage: where the file's bytes go (its blocks' stream tables)\n");
        tm_row_u64(o, TM_KEY("blocks", "total"), s->blocks, "blocks", 1, "  blocks     {}");
        tm_row_u64(o, TM_KEY("blocks", "records_max"), UINT64_C(1) << s->log2, "records", 1,
                   " of at most {} records");
        if (s->schema == NCOL_SCHEMA)
                s2_rows(s, o);
        else
                s1_rows(s, o);
        uint64_t sum =
            s->file_hdr + s->dict_chunk + s->schema_chunk + s->blk_hdr + s->tables + s->end;
        for (unsigned i = 0; i < TMN_ST_S2; i++)
                sum += s->stored[i];
        part(s, o, "total", NULL, NULL, "total", sum, 0, 0);
}

int tmn_storage(void *ctx, const struct tm_schema *schema, tm_rread_fn *read, void *arg,
                uint64_t raw_size, struct tm_rows *out, struct tm_err *err)
{
        (void)ctx;
        (void)schema; /* the file's own: its header and schema chunk */
        struct tmn_storage *s = malloc(sizeof *s);
        if (!s)
                return tm_err_set(err, -ENOMEM, "out of memory");
        int rc = tmn_storage_scan(read, arg, raw_size, s, err);
        if (rc == 0)
                tmn_storage_rows(s, out);
        free(s);
        return rc;
}
