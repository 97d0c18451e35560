/* fuzz_metatf: libFuzzer harness for the Meta-TF header reader and the
 * DTD-driven decoder.
 *
 * Input: byte 0 picks the DTD (bits 0-1: hatf10.dtd, built in, its
 * previous values per record; f1.dtd, every interpretation over data
 * sections 2 and 3, fields shared by two records; f2.dtd, repeats,
 * vfields, fixed bytes and two sections, previous = record and display;
 * HATF10V2.dtd, built in, found ignoring case) and whether the rest is a whole
 * file (bit 7) or records after a header built here; byte 1 the byte order
 * (bit 0); with bit 2 of byte 0, section 3 is a streamed data section
 * (its items come in chunks in the records: metatf.h) and byte 4's bytes
 * still go to section 2; byte 2 the records asked per call; byte 3 the input window (0:
 * everything at once); bytes 4 and 5 the sizes of data sections 2 and 3,
 * whose bytes follow; the rest are records. Each call is made twice from
 * the same state (a checkpoint is a copy): both must agree. Bytes and text
 * must lie inside the input given, lists must be readable. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codecs/metatf/metatf.h"

static char archive[128];

static const char f1[] =
    "tag.width = 1;\n"
    "section main 1 {\n"
    "  ev : (tag, a, b, c, d, e, f, g, vfield) {\n"
    "    tag.value = 4;\n"
    "    a.width = 2; a.interpretation = none;\n"
    "    b.interpretation = default 77;\n"
    "    c.width = 1; c.interpretation = baseOffset 1000;\n"
    "    d.width = 2; d.interpretation = delta 500;\n"
    "    e.interpretation = stride 10 3;\n"
    "    f.width = 4; f.interpretation = sectionOffset 2;\n"
    "    g.width = 2; g.interpretation = sectionStride 3 2;\n"
    "  }\n"
    "  other : (tag, a, a, d) { tag.value = 5; a.width = 1; a.interpretation = delta 0;\n"
    "    d.interpretation = stride 500 -1; }\n"
    "}\n";

static const char f2[] =
    "tag.width = 2;\n"
    "x.width = 8; x.interpretation = delta 0;\n"
    "section one 1 {\n"
    "  r : (tag, n*(p, q), vfield, blob, x) {\n"
    "    tag.value = 9; n.width = 2; n.interpretation = none;\n"
    "    p.width = 2; p.interpretation = none;\n"
    "    q.width = 1; q.interpretation = stride 0 -1;\n"
    "    blob.width = 12; blob.interpretation = none;\n"
    "  }\n"
    "}\n"
    "section two 4 {\n"
    "  r : (tag, m*y, x) { tag.value = 9; m.width = 1; m.interpretation = none;\n"
    "    y.width = 3; y.interpretation = sectionStride 3 1; x.previous = record;\n"
    "    y.display = hex; }\n"
    "  s : (tag, z : (k, w) { w.width = k.value; w.interpretation = none; }) {\n"
    "    tag.value = 700; k.width = 1; k.interpretation = none; }\n"
    "}\n";

static void write_dtd(const char *dir, const char *name, const char *text)
{
        char path[160];
        snprintf(path, sizeof path, "%s/%s", dir, name);
        FILE *f = fopen(path, "w");
        if (!f)
                abort();
        fputs(text, f);
        fclose(f);
}

static char mtf_dir[] = "/tmp/fuzz_metatf.XXXXXX";

/* At exit: the temporary directory and what is in it. */
static void mtf_cleanup(void)
{
        static const char *const names[] = {"f1.dtd", "f2.dtd", "trace.mtf"};
        char path[160];
        for (unsigned i = 0; i < 3; i++) {
                snprintf(path, sizeof path, "%s/%s", mtf_dir, names[i]);
                unlink(path);
        }
        rmdir(mtf_dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
        (void)argc;
        (void)argv;
        if (!mkdtemp(mtf_dir))
                abort();
        write_dtd(mtf_dir, "f1.dtd", f1);
        write_dtd(mtf_dir, "f2.dtd", f2);
        snprintf(archive, sizeof archive, "%s/trace.mtf", mtf_dir);
        atexit(mtf_cleanup);
        return 0;
}

/* The file: the given bytes, or a header, the data sections, records. */
static uint8_t *make_file(const uint8_t *data, size_t size, size_t *len)
{
        static const char *const dtds[] = {"hatf10.dtd", "f1.dtd", "f2.dtd", "HATF10V2.dtd"};
        if (data[0] & 0x80) {
                uint8_t *b = malloc(size - 4);
                memcpy(b, data + 4, size - 4);
                *len = size - 4;
                return b;
        }
        size_t s2 = data[4], s3 = data[5], rest = size - 6;
        s2 = s2 < rest ? s2 : rest;
        s3 = s3 < rest - s2 ? s3 : rest - s2;
        struct mtf_header h = {.class = 2, .byteorder = (uint8_t)(1 + (data[1] & 1))};
        const char *name = dtds[data[0] & 3];
        h.dtdlength = (uint8_t)strlen(name);
        memcpy(h.dtd, name, h.dtdlength);
        h.nsections = 2;
        size_t off = mtf_header_size(&h);
        h.section[0] = (struct mtf_shdr){2, (uint32_t)off, (uint32_t)s2};
        h.section[1] = (struct mtf_shdr){3, (uint32_t)(off + s2), (uint32_t)s3};
        h.start = (uint32_t)(off + s2 + s3);
        if (data[0] & 4) /* streamed: its entry at start, sized 0; s3 bytes are records */
                h.section[1] = (struct mtf_shdr){3, h.start, 0};
        *len = h.start + rest - s2 - s3;
        uint8_t *b = malloc(*len);
        if (mtf_header_write(&h, b, *len, NULL) < 0)
                abort();
        memcpy(b + off, data + 6, rest);
        return b;
}

static void check_rec(const struct tm_schema *s, const struct tm_rec *r, const uint8_t *in,
                      size_t len)
{
        if (r->kind >= s->nkinds)
                abort();
        const struct tm_kind *k = &s->kind[r->kind];
        unsigned slot = 0;
        volatile uint8_t sink = 0;
        for (unsigned i = 0; i < k->nfields; i++) {
                const struct tm_field *f = &s->field[k->field[i]];
                if (!tm_field_is_var(f))
                        continue;
                const uint8_t *p = r->var[slot++];
                if (f->type == TM_FT_LIST) {
                        for (uint64_t j = 0; j < r->v[i] * 8; j++)
                                sink ^= p[j];
                } else if (r->v[i] && (p < in || p + r->v[i] > in + len)) {
                        abort();
                }
        }
        (void)sink;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (size < 6)
                return 0;
        const struct tm_rcodec *c = &tm_rcodec_metatf;
        size_t len, cap = 1 + data[2] % 64, piece = data[3];
        uint8_t *raw = make_file(data, size, &len);
        void *ctx;
        struct tm_rstate st, copy;
        struct tm_schema s;
        struct tm_rec out[64], again[64];
        struct tm_err err = {0};
        int start = c->open(raw, len, archive, &ctx, &s, &st, &err);
        if (start < 0) {
                free(raw);
                return 0;
        }
        size_t pos = (size_t)start;
        size_t window = piece && pos + piece < len ? pos + piece : len;
        while (pos < len) {
                size_t used, used2;
                int eof = window == len;
                uint8_t *in = malloc(window - pos); /* ASan sees reads past the window */
                memcpy(in, raw + pos, window - pos);
                memcpy(copy.b, st.b, c->state_size);
                ssize_t n = c->decode(ctx, &st, in, window - pos, eof, pos, &used, out, cap, &err);
                if (n >= 0 && !c->state_ok(ctx, &st))
                        abort(); /* decoding reached a state state_ok refuses */
                if (n >= 0)
                        for (ssize_t i = 0; i < n; i++)
                                check_rec(&s, &out[i], in, window - pos);
                ssize_t m =
                    c->decode(ctx, &copy, in, window - pos, eof, pos, &used2, again, cap, &err);
                free(in);
                if (n != m ||
                    (n >= 0 && (used != used2 || memcmp(st.b, copy.b, c->state_size) != 0)))
                        abort();
                for (ssize_t i = 0; i < n; i++)
                        if (out[i].kind != again[i].kind ||
                            memcmp(out[i].v, again[i].v, sizeof out[i].v) != 0)
                                abort();
                if (n < 0)
                        break;
                pos += used;
                if (n == 0 && used == 0) {
                        if (eof)
                                abort(); /* stuck */
                        window = window + piece < len ? window + piece : len;
                } else if (window <= pos && pos < len) {
                        window = window + piece < len ? window + piece : len;
                }
        }
        c->close(ctx);
        free(raw);
        return 0;
}
