/* fuzz_pdats2: libFuzzer harness comparing PDATS II's two decoders.
 *
 * Input: byte 0 picks the instruction unit (bits 0-1: 1, 2 or 4) and the
 * address width (bit 2: 32 or 64), byte 1 the references asked per call,
 * byte 2 the input window (0: everything at once); the rest are the
 * records of the file, after a valid header.
 * Every byte sequence is a stream of records. The block decoder (AVX-512,
 * where the CPU has it) and the scalar one decode it in lockstep, offered
 * the same windows as a view's feed would: each call must give the same
 * references, consume the same bytes and leave the same state, and the
 * same error at the end if the last record is cut. The input and the
 * output buffers end exactly where the decoder may stop, so ASan catches
 * a read past the input or a write past cap. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codecs/address/pdats2.h"
#include "tests/p2_lockstep.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (size < 3)
                return 0;
        static const uint8_t unit[4] = {1, 2, 4, 4};
        const size_t cap = 1 + (size_t)data[1] * 17; /* 1 .. 4336 */
        const size_t piece = (size_t)data[2] * 9;    /* 0: all at once */
        const size_t len = 8 + size - 3;
        uint8_t *raw = malloc(len);
        struct tm_ref *a = malloc(cap * sizeof *a), *b = malloc(cap * sizeof *b);
        if (!raw || !a || !b)
                abort();
        static const uint8_t head[8] = {'P', 'D', 'T', '2', 1, 32, 0, 0};
        memcpy(raw, head, 8);
        raw[5] = data[0] & 4 ? 64 : 32;
        raw[6] = unit[data[0] & 3];
        memcpy(raw + 8, data + 3, size - 3);

        char why[512];
        if (p2_lockstep(raw, len, piece, cap, a, b, NULL, why, sizeof why) < 0) {
                fprintf(stderr, "fuzz_pdats2: %s\n", why);
                abort();
        }
        free(raw);
        free(a);
        free(b);
        return 0;
}
