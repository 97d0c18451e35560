/* fuzz_render: libFuzzer harness comparing the din renderers.
 *
 * The input is a list of references, 9 bytes each (8 of address, little
 * endian, then the type, taken mod 10). tm_render_din_batch, on its
 * dispatched path (AVX-512, else AVX2, where the CPU has it) and on its portable path,
 * must write exactly the bytes of one tm_render_din call per reference,
 * never touch dst past its documented room, and read refs only in [0, n).
 * Refs sit at the end of a heap block, so ASan catches a read past them. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "codecs/address/render.h"

#define GUARD 64

static void render_check(const struct tm_ref *refs, size_t n, const char *want, size_t want_len, int scalar)
{
        size_t room = n * TM_DIN_LINE_MAX + TM_RENDER_SLACK;
        char *dst = malloc(room + GUARD);
        if (!dst)
                abort();
        memset(dst + room, 0x5a, GUARD);
        tm_render_force_scalar(scalar);
        size_t got = tm_render_din_batch(dst, refs, n);
        if (got != want_len || memcmp(dst, want, got) != 0)
                abort();
        for (size_t i = 0; i < GUARD; i++)
                if (dst[room + i] != 0x5a)
                        abort();
        free(dst);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        size_t n = size / 9;
        struct tm_ref *refs = malloc((n ? n : 1) * sizeof *refs);
        char *want = malloc(n * TM_DIN_LINE_MAX + 1);
        if (!refs || !want)
                abort();
        size_t len = 0;
        for (size_t i = 0; i < n; i++) {
                uint64_t a = 0;
                for (int b = 7; b >= 0; b--)
                        a = a << 8 | data[9 * i + (size_t)b];
                refs[i] = (struct tm_ref){.addr = a, .type = data[9 * i + 8] % 10u};
                char line[TM_DIN_LINE_MAX];
                unsigned k = tm_render_din(line, refs[i].type, a);
                memcpy(want + len, line, k);
                len += k;
        }
        render_check(refs, n, want, len, 0);
        render_check(refs, n, want, len, 1);
        free(refs);
        free(want);
        return 0;
}
