/* fuzz_dtd: libFuzzer harness for the Meta-TF DTD parser and compiler.
 *
 * Input: DTD text. Parsing and compiling must return 0 or a negative errno
 * with a "file:line:col: " message, never crash or read past the text
 * (which ends exactly where the input does); what compiles must keep the
 * layout's invariants (caps, a tag first, widths from earlier fields). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codecs/metatf/dtd.h"

static struct mtf_dtd dtd;
static struct mtf_layout lay;

static void dtd_check(int ok, const char *what)
{
        if (!ok) {
                fprintf(stderr, "invariant broken: %s\n", what);
                abort();
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char *text = malloc(size ? size : 1);
        memcpy(text, data, size);
        struct tm_err err = {0};
        int ret = mtf_dtd_parse(&dtd, "f.dtd", text, size, &err);
        if (ret >= 0)
                ret = mtf_dtd_compile(&dtd, &lay, &err);
        if (ret < 0) {
                dtd_check(err.code == ret, "error code");
                dtd_check(strncmp(err.msg, "f.dtd:", 6) == 0 ||
                          strncmp(err.msg, "predefined:", 11) == 0,
                      "message names the file");
                free(text);
                return 0;
        }
        dtd_check(lay.nkinds <= MTF_KINDS_MAX && lay.tag_width >= 1 && lay.tag_width <= 4, "caps");
        for (unsigned k = 0; k < lay.nkinds; k++) {
                const struct mtf_kind *mk = &lay.kind[k];
                dtd_check(mk->nleaves >= 1 && mk->nleaves <= MTF_LEAVES_MAX, "leaf count");
                dtd_check(strcmp(mk->leaf[0].name, "tag") == 0 && mk->leaf[0].value == mk->tag, "tag");
                for (unsigned i = 1; i < mk->nleaves; i++) {
                        const struct mtf_leaf *l = &mk->leaf[i];
                        dtd_check(l->width_of < (int)i, "width from an earlier field");
                        dtd_check(i + l->rep < mk->nleaves, "repeat inside the record");
                        dtd_check(l->interp >= MTF_I_NONE && l->interp <= MTF_I_SECTIONSTRIDE,
                              "interpretation");
                        dtd_check(mtf_leaf_is_bytes(l) || l->width <= 8, "numbers are 0..8 bytes");
                }
        }
        free(text);
        return 0;
}
