/* synth_refs: program-shaped references for the renderer's benchmark and
 * tests (header only).
 *
 * As bench/gen_trace makes them but simpler: runs of sequential fetches
 * broken by jumps, each fetch followed now and then by a stack or heap
 * access (types 0/1/2 mixed, 6- to 8-digit addresses; with x86, 12 digits
 * as in 64-bit Linux processes). rand gives the random 64-bit words. */
#ifndef TM_SYNTH_REFS_H
#define TM_SYNTH_REFS_H

#include <stddef.h>
#include <stdint.h>

#include "codecs/address/trace.h"

static inline void tm_synth_refs(struct tm_ref *r, size_t n, int x86, uint64_t (*rand)(void))
{
        uint64_t code = x86 ? 0x555555554000ull : 0x400000;
        uint64_t stack = x86 ? 0x7ffffffde000ull : 0x7fff0000;
        uint64_t heap = x86 ? 0x555555580000ull : 0x10000000;
        uint64_t pc = code;
        for (size_t i = 0; i < n; i++) {
                uint64_t x = rand();
                if (x % 10 < 7) {
                        r[i] = (struct tm_ref){.addr = pc, .type = 2};
                        pc = (x >> 8) % 8 == 0 ? code + ((x >> 16) % 0x40000) * 4 : pc + 4;
                } else {
                        uint64_t base = (x >> 8) % 2 ? stack - 0x1000 : heap;
                        r[i] = (struct tm_ref){.addr = base + ((x >> 16) % 0x1000) * 4,
                                               .type = (uint32_t)((x >> 40) % 3 == 0)};
                }
        }
}

#endif
