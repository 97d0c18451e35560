/* fz_tmn: what the native encoding's harnesses (fuzz_native, fuzz_ncol)
 * share: making a fuzzed .tmn file's checksums right so the fuzzer gets
 * past them (docs/formats/native.md), and a growing sink that an encoder
 * writes a file into. */
#ifndef TM_FZ_TMN_H
#define TM_FZ_TMN_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "codecs/native/native.h"

/* The file header's checksum of f[0..n) made right; 0 when it is too
 * short for one, else where what follows the header starts. */
static inline size_t fz_tmn_fix_head(uint8_t *f, size_t n)
{
        if (n < TMN_FILE_HDR)
                return 0;
        tmn_put32(f + 16, (uint32_t)crc32(0, f, 16));
        return TMN_FILE_HDR;
}

/* The checksum of every block of f[pos..n) it can walk to made right. */
static inline void fz_tmn_fix_blocks(uint8_t *f, size_t n, size_t pos)
{
        while (n - pos >= TMN_BLK_HDR) {
                uint32_t body = tmn_get32(f + pos + 8);
                if (body > n - pos - TMN_BLK_HDR)
                        return;
                uLong c = crc32_z(crc32(0, f + pos, 12), f + pos + TMN_BLK_HDR, body);
                tmn_put32(f + pos + 12, (uint32_t)c);
                pos += TMN_BLK_HDR + body;
        }
}

/* A file an encoder writes (its tm_rsink: fz_tmn_sink, arg the struct). */
struct fz_tmn_out {
        uint8_t *p;
        size_t len, cap;
};

static inline int fz_tmn_sink(void *arg, const void *p, size_t n)
{
        struct fz_tmn_out *b = arg;
        if (b->len + n > b->cap) {
                b->cap = (b->len + n) * 2;
                b->p = realloc(b->p, b->cap);
                if (!b->p)
                        abort();
        }
        memcpy(b->p + b->len, p, n);
        b->len += n;
        return 0;
}

#endif
