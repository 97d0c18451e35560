/* gen_trace: write a synthetic, program-shaped din trace to stdout.
 *
 *   gen_trace N [SEED] [--x86]
 *
 * N references of Dinero text. The shape follows what the PDATS II paper
 * describes in real traces: instruction fetches in basic blocks of 1-16
 * sequential instructions, loops that repeat blocks, calls between
 * functions, data references clustered in a stack zone (pushes and pops of
 * +-4/+-8) and a heap zone (strided array walks), and a few far globals.
 * --x86 makes 64-bit addresses and byte-granular instruction lengths.
 * Deterministic for a given SEED, so benchmarks are repeatable. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng_state;

static uint64_t rng(void)
{
        /* xorshift64*: fast and good enough for shaping a trace */
        rng_state ^= rng_state >> 12;
        rng_state ^= rng_state << 25;
        rng_state ^= rng_state >> 27;
        return rng_state * 2685821657736338717ULL;
}

static unsigned below(unsigned n)
{
        return (unsigned)((rng() >> 32) % n);
}

static char obuf[1 << 20];
static size_t olen;

static void emit(unsigned type, uint64_t addr)
{
        static const char hex[] = "0123456789abcdef";
        char tmp[16];
        int n = 0;
        do {
                tmp[n++] = hex[addr & 15];
                addr >>= 4;
        } while (addr);
        if (olen + 20 > sizeof obuf) {
                fwrite(obuf, 1, olen, stdout);
                olen = 0;
        }
        obuf[olen++] = (char)('0' + type);
        obuf[olen++] = ' ';
        while (n)
                obuf[olen++] = tmp[--n];
        obuf[olen++] = '\n';
}

/* A fixed synthetic program: functions made of basic blocks, each block a
 * run of instructions, some followed by a data reference of a fixed kind.
 * Walking it repeats the same code paths, as real programs do, so the text
 * compresses like a real trace (tens of times), not like noise. */
#define NFUNC 64
#define NBLK 12
#define NINS 16

struct insn {
        uint8_t kind;  /* 0 none, 1 stack slot, 2 array walk, 3 global */
        uint8_t write;
        uint16_t arg;  /* stack slot, array id or global index */
};
struct block {
        uint64_t pc;
        unsigned len;
        struct insn ins[NINS];
        int loop_to;    /* block index to loop back to, -1 for none */
        unsigned trips; /* loop iterations */
        int call;       /* function called at the end, -1 for none */
};
struct func {
        unsigned nblk;
        unsigned frame;
        struct block b[NBLK];
};

static struct func prog[NFUNC];
static uint64_t arr_pos[256];
static unsigned arr_stride[256];
static uint64_t done, total;
static int x86;
static uint64_t code, stack, heap, glob, sp;

static void build_program(void)
{
        uint64_t pc = code;
        for (unsigned f = 0; f < NFUNC; f++) {
                struct func *fn = &prog[f];
                fn->nblk = 1 + below(NBLK);
                fn->frame = 16 + 8 * below(24);
                for (unsigned i = 0; i < fn->nblk; i++) {
                        struct block *b = &fn->b[i];
                        b->pc = pc;
                        b->len = 1 + below(NINS);
                        for (unsigned k = 0; k < b->len; k++) {
                                unsigned r = below(10);
                                struct insn *in = &b->ins[k];
                                in->kind = r < 6 ? 0 : r < 8 ? 1 : r < 9 ? 2 : 3;
                                in->write = below(3) == 0;
                                in->arg = (uint16_t)(in->kind == 1   ? below(fn->frame / 4)
                                                     : in->kind == 2 ? below(256)
                                                                     : below(4096));
                                pc += x86 ? 1 + below(7) : 4;
                        }
                        b->loop_to = i > 0 && below(3) == 0 ? (int)below(i + 1) : -1;
                        b->trips = 2 + below(40);
                        b->call = f + 1 < NFUNC && below(4) == 0 ? (int)(f + 1 + below(NFUNC - f - 1)) : -1;
                        pc += (x86 ? 1 : 4) * below(8);
                }
                pc += 64 * (1 + below(64));
        }
        for (unsigned a = 0; a < 256; a++) {
                arr_pos[a] = heap + 0x4000ULL * a;
                arr_stride[a] = below(2) ? 4 : 8;
        }
}

static void run_block(const struct func *fn, const struct block *b)
{
        uint64_t pc = b->pc;
        for (unsigned k = 0; k < b->len && done < total; k++) {
                emit(2, pc);
                done++;
                pc += x86 ? 1 + (pc % 7) : 4;
                const struct insn *in = &b->ins[k];
                if (!in->kind || done >= total)
                        continue;
                uint64_t a;
                if (in->kind == 1) {
                        a = sp + 4ULL * in->arg;
                } else if (in->kind == 2) {
                        a = arr_pos[in->arg];
                        arr_pos[in->arg] += arr_stride[in->arg];
                        if (arr_pos[in->arg] >= heap + 0x4000ULL * (in->arg + 1))
                                arr_pos[in->arg] = heap + 0x4000ULL * in->arg;
                } else {
                        a = glob + 8ULL * in->arg;
                }
                (void)fn;
                emit(in->write, a);
                done++;
        }
}

static void run_func(unsigned f, unsigned depth)
{
        const struct func *fn = &prog[f];
        sp -= fn->frame;
        for (unsigned i = 0; i < fn->nblk && done < total; i++) {
                const struct block *b = &fn->b[i];
                run_block(fn, b);
                if (b->call >= 0 && depth < 6)
                        run_func((unsigned)b->call, depth + 1);
                if (b->loop_to >= 0) {
                        /* a loop: run the blocks loop_to..i again trips-1 times */
                        for (unsigned t = 1; t < b->trips && done < total; t++)
                                for (int j = b->loop_to; j <= (int)i && done < total; j++)
                                        run_block(fn, &fn->b[j]);
                }
        }
        sp += fn->frame;
}

int main(int argc, char **argv)
{
        if (argc < 2) {
                fprintf(stderr, "usage: gen_trace N [SEED] [--x86]\n");
                return 2;
        }
        total = strtoull(argv[1], NULL, 0);
        rng_state = argc > 2 && argv[2][0] != '-' ? strtoull(argv[2], NULL, 0) : 88172645463325252ULL;
        if (!rng_state)
                rng_state = 1;
        x86 = argc > 2 && !strcmp(argv[argc - 1], "--x86");
        code = x86 ? 0x555555554000ULL : 0x400000;
        stack = x86 ? 0x7ffffffde000ULL : 0x7fff0000;
        heap = x86 ? 0x555555580000ULL : 0x10000000;
        glob = x86 ? 0x7ffff7dd0000ULL : 0x600000;
        sp = stack;
        build_program();
        while (done < total)
                run_func(below(8), 0); /* a main loop calling a few hot functions */
        fwrite(obuf, 1, olen, stdout);
        return fflush(stdout) ? 1 : 0;
}
