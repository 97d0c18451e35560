/* ncol_marks: marks at times 1..n, ranked from the newest: what schema
 * 2's move-to-front ranks (ncol_blk.c) and the allocator model's orders
 * (ncol_heap.c) keep. A bit set of the times, with counts per 64-bit
 * word and per group of NCOL_MARKS_GROUP words, so setting or clearing a
 * mark is O(1); ranks are mostly small, so both ways (a time's rank, the
 * time of a rank) walk down from the newest time, over at most n / 2^12
 * groups and 2 x NCOL_MARKS_GROUP words. Memory: about n / 7 bytes. */
#ifndef TM_NCOL_MARKS_H
#define TM_NCOL_MARKS_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define NCOL_MARKS_GROUP 64

struct ncol_marks {
        uint64_t *bits; /* [n / 64 + 1]: bit t, a mark at time t */
        uint8_t *wcnt;  /* marks per word */
        uint32_t *gcnt; /* marks per group */
        uint32_t now;   /* the newest time handed out (the caller's clock) */
        uint32_t marks; /* marks set */
};

/* Room for times 1..n; 0 or -1 (nothing held then). */
static inline int ncol_marks_alloc(struct ncol_marks *k, size_t n)
{
        size_t words = n / 64 + 1;
        k->bits = malloc(words * sizeof *k->bits);
        k->wcnt = malloc(words);
        k->gcnt = malloc((words / NCOL_MARKS_GROUP + 1) * sizeof *k->gcnt);
        if (k->bits && k->wcnt && k->gcnt)
                return 0;
        free(k->bits);
        free(k->wcnt);
        free(k->gcnt);
        k->bits = NULL;
        k->wcnt = NULL;
        k->gcnt = NULL;
        return -1;
}

static inline void ncol_marks_free(struct ncol_marks *k)
{
        free(k->bits);
        free(k->wcnt);
        free(k->gcnt);
        memset(k, 0, sizeof *k);
}

/* No marks, the clock at 0, for times 1..n (n as allocated or less). */
static inline void ncol_marks_reset(struct ncol_marks *k, size_t n)
{
        size_t words = n / 64 + 1;
        memset(k->bits, 0, words * sizeof *k->bits);
        memset(k->wcnt, 0, words);
        memset(k->gcnt, 0, (words / NCOL_MARKS_GROUP + 1) * sizeof *k->gcnt);
        k->now = k->marks = 0;
}

/* A mark at time t set (d 1; t not marked) or cleared (d -1; t marked). */
static inline void ncol_marks_flip(struct ncol_marks *k, uint32_t t, int d)
{
        uint32_t wd = t / 64;
        k->bits[wd] ^= 1ull << (t % 64);
        k->wcnt[wd] = (uint8_t)(k->wcnt[wd] + d);
        k->gcnt[wd / NCOL_MARKS_GROUP] += (uint32_t)d;
        k->marks += (uint32_t)d;
}

/* Marks after time t (t <= now): the rank of the mark at t. */
static inline uint32_t ncol_marks_after(const struct ncol_marks *k, uint32_t t)
{
        uint32_t wd = t / 64, top = k->now / 64, g = wd / NCOL_MARKS_GROUP;
        uint32_t gtop = top / NCOL_MARKS_GROUP;
        uint32_t r = (uint32_t)__builtin_popcountll(t % 64 == 63 ? 0 : k->bits[wd] >> (t % 64 + 1));
        uint32_t wend = g == gtop ? top : (g + 1) * NCOL_MARKS_GROUP - 1;
        for (uint32_t x = wd + 1; x <= wend; x++)
                r += k->wcnt[x];
        for (uint32_t x = g + 1; x <= gtop; x++)
                r += k->gcnt[x];
        return r;
}

/* The time of the mark of rank x (x < marks): the (x + 1)-th from the
 * newest. */
static inline uint32_t ncol_marks_nth(const struct ncol_marks *k, uint32_t x)
{
        uint32_t wd = k->now / 64, g = wd / NCOL_MARKS_GROUP;
        for (;; wd--) { /* the newest group's words, newest first */
                if (x < k->wcnt[wd])
                        goto found;
                x -= k->wcnt[wd];
                if (wd == g * NCOL_MARKS_GROUP)
                        break;
        }
        while (x >= k->gcnt[--g])
                x -= k->gcnt[g];
        for (wd = (g + 1) * NCOL_MARKS_GROUP - 1; x >= k->wcnt[wd]; wd--)
                x -= k->wcnt[wd];
found:;
        uint64_t b = k->bits[wd];
        for (; x; x--)
                b &= ~(1ull << (63 - __builtin_clzll(b)));
        return wd * 64 + 63 - (uint32_t)__builtin_clzll(b);
}

/* The newest mark older than time t; 0: none. */
static inline uint32_t ncol_marks_older(const struct ncol_marks *k, uint32_t t)
{
        uint32_t wd = t / 64;
        uint64_t b = k->bits[wd] & ((1ull << (t % 64)) - 1);
        while (!b) {
                if (wd == 0)
                        return 0;
                wd--;
                if (wd % NCOL_MARKS_GROUP == NCOL_MARKS_GROUP - 1) { /* pass empty groups */
                        uint32_t g = wd / NCOL_MARKS_GROUP;
                        while (!k->gcnt[g]) {
                                if (g == 0)
                                        return 0;
                                g--;
                        }
                        wd = g * NCOL_MARKS_GROUP + NCOL_MARKS_GROUP - 1;
                }
                b = k->bits[wd];
        }
        return wd * 64 + 63 - (uint32_t)__builtin_clzll(b);
}

#endif
