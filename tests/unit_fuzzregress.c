/* unit_fuzzregress: every input the fuzzers found (tests/data/fuzz/<harness>/)
 * and every committed seed (fuzz/corpus/<harness>/) replayed through the
 * harness's own entry point, compiled here without libFuzzer or clang: the
 * harnesses' checks (decoders agreeing with each other, views equal to the
 * reference, errors with messages) abort on a regression, and the ASan
 * build of the suite catches what the sanitizers caught. Each harness must
 * have at least one input, so no harness is skipped unnoticed. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

/* Each harness's LLVMFuzzerTestOneInput (and LLVMFuzzerInitialize) under a
 * name of its own. */
#define LLVMFuzzerTestOneInput fz_archive_one
#include "fuzz/fuzz_archive.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fz_container_one
#include "fuzz/fuzz_container.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fz_codec_one
#include "fuzz/fuzz_codec.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fz_pdats2_one
#include "fuzz/fuzz_pdats2.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fz_render_one
#include "fuzz/fuzz_render.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fz_hatf_one
#include "fuzz/fuzz_hatf.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fz_metatf_one
#define LLVMFuzzerInitialize fz_metatf_init
#include "fuzz/fuzz_metatf.c"
#undef LLVMFuzzerTestOneInput
#undef LLVMFuzzerInitialize
#define LLVMFuzzerTestOneInput fz_dtd_one
#include "fuzz/fuzz_dtd.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fz_index_one
#define LLVMFuzzerInitialize fz_index_init
#include "fuzz/fuzz_index.c"
#undef LLVMFuzzerTestOneInput
#undef LLVMFuzzerInitialize
#define LLVMFuzzerTestOneInput fz_java_one
#include "fuzz/fuzz_java.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fz_laplace_one
#include "fuzz/fuzz_laplace.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fz_ncol_one
#include "fuzz/fuzz_ncol.c"
#undef LLVMFuzzerTestOneInput
/* fuzz/fuzz_ncol_file.c: fuzz_ncol's file mode alone */
static int fz_ncol_file_one(const uint8_t *d, size_t n)
{
        ncf_file(d, n);
        return 0;
}

struct harness {
        const char *name;
        int (*one)(const uint8_t *, size_t);
        int (*init)(int *, char ***);
        const char *codec; /* fuzz_codec.c's codec */
};

static int replay_dir(const struct harness *h, const char *dir)
{
        DIR *d = opendir(dir);
        if (!d)
                return 0;
        int n = 0;
        struct dirent *e;
        while ((e = readdir(d))) {
                if (e->d_name[0] == '.')
                        continue;
                char path[1024];
                snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
                FILE *f = fopen(path, "rb");
                assert_non_null(f);
                static uint8_t buf[1 << 20];
                size_t len = fread(buf, 1, sizeof buf, f);
                fclose(f);
                /* an exact-size copy, so ASan sees a read past the input */
                uint8_t *in = malloc(len ? len : 1);
                assert_non_null(in);
                memcpy(in, buf, len);
                fzd_codec = h->codec ? h->codec : FZ_CODEC;
                print_message("%s %s (%zu bytes)\n", h->name, e->d_name, len);
                assert_int_equal(h->one(in, len), 0);
                free(in);
                n++;
        }
        closedir(d);
        return n;
}

static void replay(void **state)
{
        const struct harness *h = *state;
        if (h->init)
                assert_int_equal(h->init(NULL, NULL), 0);
        char dir[1024];
        snprintf(dir, sizeof dir, "%s/tests/data/fuzz/%s", TM_SOURCE_DIR, h->name);
        int n = replay_dir(h, dir);
        snprintf(dir, sizeof dir, "%s/fuzz/corpus/%s", TM_SOURCE_DIR, h->name);
        n += replay_dir(h, dir);
        print_message("%s: %d inputs replayed\n", h->name, n);
        assert_true(n > 0);
}

static struct harness harnesses[] = {
    {"fuzz_archive", fz_archive_one, NULL, NULL},
    {"fuzz_container", fz_container_one, NULL, NULL},
    {"fuzz_din", fz_codec_one, NULL, "din"},
    {"fuzz_pdats", fz_codec_one, NULL, "pdats"},
    {"fuzz_lackey", fz_codec_one, NULL, "lackey"},
    {"fuzz_pdats2", fz_pdats2_one, NULL, NULL},
    {"fuzz_render", fz_render_one, NULL, NULL},
    {"fuzz_hatf", fz_hatf_one, NULL, NULL},
    {"fuzz_metatf", fz_metatf_one, fz_metatf_init, NULL},
    {"fuzz_dtd", fz_dtd_one, NULL, NULL},
    {"fuzz_index", fz_index_one, fz_index_init, NULL},
    {"fuzz_java", fz_java_one, NULL, NULL},
    {"fuzz_laplace", fz_laplace_one, NULL, NULL},
    {"fuzz_ncol", fz_ncol_one, NULL, NULL},
    {"fuzz_ncol_file", fz_ncol_file_one, NULL, NULL},
};

#define H(i)                                                                                       \
        {                                                                                          \
                harnesses[i].name, replay, NULL, NULL, &harnesses[i]                               \
        }

int main(void)
{
        const struct CMUnitTest tests[] = {
            H(0), H(1), H(2),  H(3),  H(4),  H(5),  H(6),  H(7),
            H(8), H(9), H(10), H(11), H(12), H(13), H(14),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
