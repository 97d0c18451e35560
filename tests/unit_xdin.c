/* xdin: lackey's access sizes kept, and the xdin view (Dinero IV's
 * `-informat D`) of a lackey trace.
 *
 * The expected bytes come from awk over the lackey text (popen), not from
 * the codec: drop valgrind's lines, map I/L/S to i/r/w and M to r then w,
 * strip the address's leading zeros, print the decimal size as three hex
 * digits. Checked: decode_sized gives every size whatever the input is
 * cut into; the xdin view's size, whole reads and reads at random offsets
 * (checkpoints every 3 references, so every seek path is taken) in each
 * container; a sizeless trace has no xdin view; the lackey encoder writes
 * the references and sizes back so that they decode the same. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codecs/address/lackey.h"
#include "codecs/containers/container.h"
#include "view_test.h"
#include "views/view.h"
#include "tmpdir_test.h"

/* A lackey text of n record lines: all four kinds, sizes 1..512 (lackey's
 * range) and the odd 4095, valgrind lines between, 32- and 48-bit
 * addresses with and without leading zeros. */
static void make_lackey(struct vt_buf *b, int n)
{
        static const char *const kinds[] = {"I ", " L", " S", " M"};
        const char *hdr = "==77== Lackey, an example Valgrind tool\n";
        vt_put(b, hdr, strlen(hdr));
        for (int i = 0; i < n; i++) {
                char line[80];
                unsigned size = 1u << (vt_rand() % 10);
                if (i % 97 == 0)
                        size = LACKEY_MAX_SIZE;
                unsigned long long a = vt_rand() & (i % 3 ? 0xffffffffull : 0xffffffffffffull);
                int k =
                    snprintf(line, sizeof line, "%s %08llx,%u\n", kinds[vt_rand() % 4], a, size);
                vt_put(b, line, (size_t)k);
                if (i % 500 == 499)
                        vt_put(b, "--77-- a note\n", 14);
        }
}

static void write_file(const char *path, const struct vt_buf *text, enum tm_cont_kind kind)
{
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        assert_true(fd >= 0);
        struct tm_cwriter_opts wo = {.frame_size = 4096};
        struct tm_cwriter *w;
        struct tm_err err = {0};
        assert_int_equal(tm_cwriter_open(fd, path, kind, &wo, &w, &err), 0);
        assert_int_equal(tm_cwriter_write(w, text->p, text->len, &err), 0);
        assert_int_equal(tm_cwriter_close(w, &err), 0);
        close(fd);
}

/* The xdin lines of the lackey text in file src, by awk. */
static void awk_xdin(const char *src, struct vt_buf *out)
{
        char cmd[1024];
        snprintf(
            cmd, sizeof cmd,
            "awk '/^(==|--)[0-9]+(==|--)/ { next }"
            " { split($2, f, \",\"); a = tolower(f[1]); sub(/^0+/, \"\", a);"
            " if (a == \"\") a = \"0\"; s = sprintf(\"%%03x\", f[2] + 0);"
            " if ($1 == \"I\") print \"i \" a \" \" s;"
            " else if ($1 == \"L\") print \"r \" a \" \" s;"
            " else if ($1 == \"S\") print \"w \" a \" \" s;"
            " else if ($1 == \"M\") { print \"r \" a \" \" s; print \"w \" a \" \" s } }' '%s'",
            src);
        FILE *p = popen(cmd, "r");
        assert_non_null(p);
        char chunk[65536];
        size_t k;
        while ((k = fread(chunk, 1, sizeof chunk, p)) > 0)
                vt_put(out, chunk, k);
        assert_int_equal(pclose(p), 0);
        assert_true(out->len > 0);
}

/* decode_sized over the text cut at every point of a window: the sizes
 * agree with the awk lines' third field, and the references with decode. */
static void test_decode_sizes(void **state)
{
        (void)state;
        const struct tm_rcodec *c = &tm_rcodec_lackey;
        const char *text = "==1== x\nI  0401ab70,3\n M 1fff000628,8\n S 10,512\n L 00,4095\n";
        static const uint32_t want_size[] = {3, 8, 8, 512, 4095};
        static const uint32_t want_type[] = {2, 0, 1, 1, 0};
        size_t len = strlen(text);
        for (size_t split = 0; split <= len; split++) {
                struct aref_dec d;
                struct tm_err err = {0};
                assert_int_equal(aref_open(&d, c, (const uint8_t *)text, len, &err), 0);
                struct tm_ref out[8];
                uint32_t sizes[8];
                size_t n = 0, pos = 0, end = split;
                while (n < 5) {
                        size_t used = 0;
                        size_t cap = split % 2 ? 1 : 8 - n; /* also one at a time */
                        ssize_t r = aref_decode_sized(&d, (const uint8_t *)text + pos, end - pos,
                                                      end == len, pos, &used, out + n, sizes + n,
                                                      cap, &err);
                        assert_true(r >= 0);
                        n += (size_t)r;
                        pos += used;
                        if (r == 0 && used == 0) { /* wants more: the rest arrives */
                                assert_true(end < len);
                                end = len;
                        }
                }
                assert_int_equal(n, 5);
                aref_close(&d);
                for (size_t i = 0; i < n; i++) {
                        assert_int_equal(sizes[i], want_size[i]);
                        assert_int_equal(out[i].type, want_type[i]);
                }
        }
        /* above LACKEY_MAX_SIZE is corrupt, naming the offset */
        struct aref_dec d;
        struct tm_err err = {0};
        const char *big = "I  10,4096\n";
        struct tm_ref out[2];
        uint32_t sizes[2];
        size_t used;
        assert_int_equal(aref_open(&d, c, (const uint8_t *)big, strlen(big), &err), 0);
        assert_int_equal(aref_decode_sized(&d, (const uint8_t *)big, strlen(big), 1, 0, &used, out,
                                           sizes, 2, &err),
                         -EIO);
        aref_close(&d);
        assert_non_null(strstr(err.msg, "raw offset 9"));
        /* a line longer than LACKEY_MAX_LINE is refused whole too, as it is
         * when a window ends inside it (fuzz_lackey's kind of input) */
        char lng[LACKEY_MAX_LINE + 32];
        int n = snprintf(lng, sizeof lng, "I  10,%0*d\n", LACKEY_MAX_LINE, 3);
        assert_int_equal(aref_open(&d, c, (const uint8_t *)lng, (size_t)n, &err), 0);
        assert_int_equal(aref_decode_sized(&d, (const uint8_t *)lng, (size_t)n, 1, 0, &used, out,
                                           sizes, 2, &err),
                         -EIO);
        aref_close(&d);
        assert_int_equal(aref_open(&d, c, (const uint8_t *)lng, (size_t)n, &err), 0);
        assert_int_equal(aref_decode_sized(&d, (const uint8_t *)lng, LACKEY_MAX_LINE, 0, 0, &used,
                                           out, sizes, 2, &err),
                         -EIO);
        aref_close(&d);
}

static void check_xdin(const char *path, const struct vt_buf *want)
{
        struct tm_trace_opts o = {.no_save = 1, .ckpt_refs = 3};
        struct tm_trace *t;
        struct tm_err err = {0};
        assert_int_equal(tm_trace_open(path, &o, &t, &err), 0);
        int listed = 0;
        for (const char *const *v = tm_trace_views(t); *v; v++)
                listed += strcmp(*v, "xdin") == 0;
        assert_int_equal(listed, 1);
        uint64_t size;
        assert_int_equal(tm_trace_view_size(t, "xdin", &size, &err), 0);
        assert_int_equal(size, want->len);
        struct tm_vfile *f;
        assert_int_equal(tm_vfile_open(t, "xdin", &f, &err), 0);
        char *got = malloc(want->len + 1);
        assert_non_null(got);
        /* whole, in odd chunks */
        size_t off = 0;
        while (off < want->len) {
                size_t n = 1 + vt_rand() % 9000;
                ssize_t k = tm_vfile_pread(f, got + off, n, off, &err);
                assert_true(k > 0);
                off += (size_t)k;
        }
        assert_int_equal(off, want->len);
        assert_memory_equal(got, want->p, want->len);
        /* random offsets and lengths */
        for (int i = 0; i < 400; i++) {
                uint64_t at = vt_rand() % want->len;
                size_t n = 1 + vt_rand() % 300;
                size_t exp = want->len - at < n ? want->len - at : n;
                ssize_t k = tm_vfile_pread(f, got, n, at, &err);
                assert_int_equal(k, exp);
                assert_memory_equal(got, want->p + at, exp);
        }
        assert_int_equal(tm_vfile_pread(f, got, 10, want->len, &err), 0);
        free(got);
        tm_vfile_close(f);
        tm_trace_close(t);
}

static void test_view(void **state)
{
        (void)state;
        static const enum tm_cont_kind kinds[] = {TM_CONT_PLAIN, TM_CONT_GZIP, TM_CONT_ZSTD};
        struct vt_buf text = {0}, want = {0};
        make_lackey(&text, 20000);
        char src[300];
        snprintf(src, sizeof src, "%s/src.lackey", tmpdir);
        write_file(src, &text, TM_CONT_PLAIN);
        awk_xdin(src, &want);
        for (unsigned k = 0; k < 3; k++) {
                char path[320];
                snprintf(path, sizeof path, "%s/t%u.lackey", tmpdir, k);
                write_file(path, &text, kinds[k]);
                check_xdin(path, &want);
        }
        free(text.p);
        free(want.p);
}

/* din has no sizes: no xdin view, and asking for it is ENOENT. */
static void test_no_sizes(void **state)
{
        (void)state;
        char path[300];
        snprintf(path, sizeof path, "%s/t.din", tmpdir);
        struct vt_buf text = {0};
        vt_put(&text, "0 10\n1 20\n2 30\n", 15);
        write_file(path, &text, TM_CONT_PLAIN);
        struct tm_trace *t;
        struct tm_err err = {0};
        struct tm_trace_opts o = {.no_save = 1};
        assert_int_equal(tm_trace_open(path, &o, &t, &err), 0);
        for (const char *const *v = tm_trace_views(t); *v; v++)
                assert_string_not_equal(*v, "xdin");
        uint64_t size;
        assert_int_equal(tm_trace_view_size(t, "xdin", &size, &err), -ENOENT);
        tm_trace_close(t);
        free(text.p);
}

/* The encoder writes valgrind's line forms: decoding them again gives the
 * same references and sizes (an L then an S of one address and size comes
 * back the same, written as one M line). */
static void test_encode_round_trip(void **state)
{
        (void)state;
        const struct tm_rcodec *c = &tm_rcodec_lackey;
        struct vt_buf text = {0};
        make_lackey(&text, 3000);
        struct tm_err err = {0};
        size_t n = 0, m = 0;
        uint32_t *sizes = NULL, *bsizes = NULL;
        struct tm_ref *refs =
            vt_decode_sized(c, (const uint8_t *)text.p, text.len, &n, &sizes); /* all of it */
        assert_true(n > 3000);
        struct aref_enc es;
        assert_int_equal(aref_enc_open(&es, c, &(struct tm_enc_opts){64, 1}, &err), 0);
        assert_int_equal(es.len, 0);
        for (size_t i = 0; i < n; i++) {
                int k = aref_put(&es, &refs[i], sizes[i], (uint64_t)i, &err);
                assert_true(k >= 0 && k <= TM_ENC_MAX_OUT);
        }
        assert_true(aref_finish(&es, &err) >= 0);
        struct vt_buf enc = {es.buf, es.len, es.cap};
        struct tm_ref *back = vt_decode_sized(c, enc.p, enc.len, &m, &bsizes);
        assert_int_equal(m, n);
        for (size_t i = 0; i < n; i++) {
                assert_int_equal(back[i].addr, refs[i].addr);
                assert_int_equal(back[i].type, refs[i].type);
                assert_int_equal(bsizes[i], sizes[i]);
        }
        struct aref_enc bad;
        assert_int_equal(aref_enc_open(&bad, c, &(struct tm_enc_opts){64, 1}, &err), 0);
        /* types lackey has no line for are refused, naming the reference */
        struct tm_ref misc = {0x10, TM_MISC};
        assert_int_equal(aref_put(&bad, &misc, 4, 41, &err), -EINVAL);
        assert_non_null(strstr(err.msg, "reference 41"));
        aref_enc_free(&bad);
        free(refs);
        free(back);
        free(sizes);
        free(bsizes);
        free(text.p);
        free(enc.p);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_decode_sizes),
            cmocka_unit_test(test_view),
            cmocka_unit_test(test_no_sizes),
            cmocka_unit_test(test_encode_round_trip),
        };
        return cmocka_run_group_tests(tests, tmp_setup, tmp_teardown);
}
