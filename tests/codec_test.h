/* Helpers shared by the address codec tests (the rows of
 * codecs/address/arec.h, through tests/aref.h): encode a whole reference
 * array, decode a whole stream the way a streaming caller does (pieces of
 * a given size, a window that grows while the decoder needs more input, a
 * cap on references per call), and a state-copy check. Header-only, test
 * code. */
#ifndef TM_CODEC_TEST_H
#define TM_CODEC_TEST_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "support/aref.h"

/* Encode refs[0..n) with row c and opts into a new buffer (*out, *len,
 * caller frees), header included. rec_len, when not NULL, receives the
 * length of every non-empty enc_put()/enc_finish() output in order, and
 * *nrec their number: the PDATS encoders write at most one record per
 * reference, so these are the record lengths. */
static inline int ct_encode(const struct tm_rcodec *c, const struct tm_enc_opts *o,
                            const struct tm_ref *refs, size_t n, uint8_t **out, size_t *len,
                            size_t *rec_len, size_t *nrec, struct tm_err *err)
{
        struct aref_enc w;
        size_t nr = 0;
        int r = aref_enc_open(&w, c, o, err);
        if (r < 0)
                return r;
        for (size_t i = 0; i <= n; i++) {
                r = i < n ? aref_put(&w, &refs[i], 0, i, err) : aref_finish(&w, err);
                if (r < 0) {
                        aref_enc_free(&w);
                        return r;
                }
                if (r > 0 && rec_len)
                        rec_len[nr++] = (size_t)r;
        }
        if (nrec)
                *nrec = nr;
        *out = w.buf;
        *len = w.len;
        return 0;
}

/* ct_decode's loop, on d opened on raw with a header of h bytes. */
static inline ssize_t ct_decode_from(struct aref_dec *d, const uint8_t *raw, size_t len, size_t h,
                                     size_t piece, size_t cap, struct tm_ref *refs, size_t max,
                                     struct tm_err *err)
{
        size_t pos = h, n = 0, win = piece ? piece : len;
        struct tm_ref tmp[300];
        if (cap > 300)
                cap = 300;
        for (;;) {
                size_t avail = len - pos < win ? len - pos : win;
                int eof = pos + avail == len;
                size_t used = 0;
                ssize_t r = aref_decode(d, raw + pos, avail, eof, pos, &used, tmp, cap, err);
                if (r < 0)
                        return r;
                /* every state decoding reaches is one a checkpoint may hold */
                assert_true(aref_state_ok(d));
                if (n + (size_t)r > max)
                        return -ENOSPC;
                memcpy(refs + n, tmp, (size_t)r * sizeof *tmp);
                n += (size_t)r;
                pos += used;
                if (r == 0 && used == 0) {
                        if (eof)
                                return (ssize_t)n;  /* finished */
                        win += piece ? piece : len; /* needs more input */
                } else {
                        win = piece ? piece : len;
                }
        }
}

/* Decode raw[0..len) with c. piece: bytes offered per step beyond what is
 * left over (0: everything at once); cap: references asked per call.
 * Returns the number of references (stored in refs, at most max) or a
 * negative errno. */
static inline ssize_t ct_decode(const struct tm_rcodec *c, const uint8_t *raw, size_t len,
                                size_t piece, size_t cap, struct tm_ref *refs, size_t max,
                                struct tm_err *err)
{
        struct aref_dec d;
        ssize_t ret = aref_open(&d, c, raw, len, err);
        if (ret < 0)
                return ret;
        ret = ct_decode_from(&d, raw, len, (size_t)ret, piece, cap, refs, max, err);
        aref_close(&d);
        return ret;
}
/* Table 3 of the PDATS II paper: the 29 references and the bytes of the
 * record that starts at each (0: inside the previous record). */
struct ct_t3_row {
        unsigned type;
        uint64_t addr;
        unsigned pdats, pdats2;
};
static const struct ct_t3_row ct_table3[29] = {
    {2, 0x430d70, 5, 5},   {2, 0x430d74, 1, 0}, {2, 0x415130, 5, 3},   {0, 0x1000acac, 5, 5},
    {2, 0x415134, 2, 0},   {2, 0x415138, 0, 0}, {2, 0x41513c, 0, 0},   {2, 0x415140, 0, 1},
    {2, 0x430c20, 5, 3},   {2, 0x430c24, 1, 0}, {1, 0x7fff00ac, 5, 5}, {2, 0x430c28, 1, 0},
    {1, 0x7fff00a8, 2, 1}, {2, 0x430c2c, 1, 0}, {1, 0x7fff00a4, 2, 1}, {2, 0x430c30, 1, 0},
    {1, 0x7fff009c, 2, 1}, {2, 0x430c34, 1, 0}, {1, 0x7fff00a0, 2, 1}, {2, 0x430c38, 1, 0},
    {1, 0x7fff0098, 2, 1}, {2, 0x430c3c, 2, 0}, {2, 0x430c40, 0, 0},   {2, 0x430c44, 0, 0},
    {2, 0x430c48, 0, 1},   {2, 0x430c4c, 0, 0}, {2, 0x430c50, 0, 0},   {2, 0x430c54, 0, 0},
    {2, 0x430c58, 0, 0},
};

static inline void ct_table3_refs(struct tm_ref *refs)
{
        for (size_t i = 0; i < 29; i++) {
                refs[i].type = ct_table3[i].type;
                refs[i].addr = ct_table3[i].addr;
        }
}

/* Given a stream (header of hdr bytes then nrec records of rec_len bytes),
 * decode it record by record and set row_bytes[i] to the length of the
 * record whose first reference is reference i (0 for the others).
 * Returns the number of references, or a negative errno. */
static inline ssize_t ct_record_rows(const struct tm_rcodec *c, const uint8_t *raw, size_t hdr,
                                     const size_t *rec_len, size_t nrec, unsigned *row_bytes,
                                     size_t max)
{
        struct aref_dec d;
        struct tm_ref tmp[300];
        int h = aref_open(&d, c, raw, hdr, NULL);
        if (h < 0)
                return h;
        size_t pos = hdr, n = 0;
        ssize_t ret = 0;
        for (size_t j = 0; j < nrec && ret >= 0; j++) {
                size_t used = 0;
                ssize_t r = aref_decode(&d, raw + pos, rec_len[j], 1, pos, &used, tmp, 300, NULL);
                if (r <= 0 || used != rec_len[j] || n + (size_t)r > max) {
                        ret = r < 0 ? r : -EIO;
                        break;
                }
                for (ssize_t i = 0; i < r; i++)
                        row_bytes[n + (size_t)i] = i ? 0 : (unsigned)rec_len[j];
                n += (size_t)r;
                pos += used;
        }
        aref_close(&d);
        return ret < 0 ? ret : (ssize_t)n;
}

/* ct_decode_copied's loop, on d opened on raw with a header of h bytes:
 * the row's state (struct tm_rstate) is what a checkpoint copies. */
static inline ssize_t ct_copied_from(struct aref_dec *d, const uint8_t *raw, size_t len, size_t h,
                                     size_t split, struct tm_ref *refs, size_t max)
{
        struct tm_rstate st2;
        size_t pos = h, n = 0;
        for (;;) {
                size_t cap = n < split ? 1 : max - n;
                if (n == split) {
                        memcpy(&st2, &d->st, sizeof st2);
                        memset(&d->st, 0xa5, sizeof d->st);
                        memcpy(&d->st, &st2, sizeof st2);
                        memset(&st2, 0x5a, sizeof st2);
                }
                if (cap == 0)
                        return -ENOSPC;
                size_t used = 0;
                ssize_t r =
                    aref_decode(d, raw + pos, len - pos, 1, pos, &used, refs + n, cap, NULL);
                if (r < 0)
                        return r;
                n += (size_t)r;
                pos += used;
                if (r == 0 && used == 0)
                        return (ssize_t)n;
        }
}

/* Decode raw like ct_decode(piece 0) but with cap 1 for the first split
 * references, then copy the state into fresh storage, scribble over the
 * old one and finish from the copy: a checkpoint is a memcpy of the state. */
static inline ssize_t ct_decode_copied(const struct tm_rcodec *c, const uint8_t *raw, size_t len,
                                       size_t split, struct tm_ref *refs, size_t max)
{
        struct aref_dec d;
        int h = aref_open(&d, c, raw, len, NULL);
        if (h < 0)
                return h;
        ssize_t ret = ct_copied_from(&d, raw, len, (size_t)h, split, refs, max);
        aref_close(&d);
        return ret;
}
/* Assert a[0..n) and b[0..n) hold the same references. */
static inline void ct_assert_refs(const struct tm_ref *a, const struct tm_ref *b, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                if (a[i].type != b[i].type || a[i].addr != b[i].addr)
                        fail_msg("reference %zu: got %u %llx, want %u %llx", i, a[i].type,
                                 (unsigned long long)a[i].addr, b[i].type,
                                 (unsigned long long)b[i].addr);
        }
}

/* Hostile-input check: decoding buf all at once (cap 300) and in small
 * pieces with small caps, chosen from iter, must give the same references
 * or the same error, and only -EIO or -ENOTSUP as errors. got and got2
 * hold cap references each. */
static inline void ct_assert_paths_agree(const struct tm_rcodec *c, const uint8_t *buf, size_t n,
                                         int iter, struct tm_ref *got, struct tm_ref *got2,
                                         size_t cap)
{
        ssize_t r = ct_decode(c, buf, n, 0, 300, got, cap, NULL);
        ssize_t r2 = ct_decode(c, buf, n, 1 + (size_t)iter % 5, 1 + (size_t)iter % 7, got2, cap,
                               NULL);
        assert_true(r >= 0 || r == -EIO || r == -ENOTSUP);
        assert_int_equal(r, r2);
        if (r > 0)
                ct_assert_refs(got, got2, (size_t)r);
}

/* Encode refs with c and o, then decode the stream in pieces of many small
 * sizes, with several caps (1 stops after every reference), and through a
 * state copy at several points; every decode must give refs back. Returns
 * the encoded size in bytes. */
static inline size_t ct_check_roundtrip(const struct tm_rcodec *c, const struct tm_enc_opts *o,
                                        const struct tm_ref *refs, size_t n)
{
        static const size_t pieces[] = {0, 1, 2, 3, 4, 5, 6, 7, 9, 10, 13, 64};
        static const size_t caps[] = {1, 2, 3, 31, 32, 300};
        struct tm_err err = {0};
        uint8_t *raw = NULL;
        size_t len = 0;
        int r = ct_encode(c, o, refs, n, &raw, &len, NULL, NULL, &err);
        if (r < 0)
                fail_msg("%s encode: %d %s", c->name, r, err.msg);
        struct tm_ref *got = malloc((n + 1) * sizeof *got);
        for (size_t pi = 0; pi < sizeof pieces / sizeof *pieces; pi++) {
                for (size_t ci = 0; ci < sizeof caps / sizeof *caps; ci++) {
                        if (pieces[pi] && pieces[pi] < 9 && caps[ci] > 3 && n > 3000)
                                continue; /* keep the slow combinations to small inputs */
                        ssize_t m = ct_decode(c, raw, len, pieces[pi], caps[ci], got, n + 1, &err);
                        if (m < 0)
                                fail_msg("%s decode piece %zu cap %zu: %zd %s", c->name, pieces[pi],
                                         caps[ci], m, err.msg);
                        assert_int_equal(m, n);
                        ct_assert_refs(got, refs, n);
                }
        }
        size_t splits[] = {0, 1, 2, n / 3, n / 2 + 1, n ? n - 1 : 0};
        for (size_t si = 0; si < sizeof splits / sizeof *splits; si++) {
                ssize_t m = ct_decode_copied(c, raw, len, splits[si], got, n + 1);
                assert_int_equal(m, n);
                ct_assert_refs(got, refs, n);
        }
        free(got);
        free(raw);
        return len;
}

/* Decode raw with c through a window of at most win bytes and one
 * reference a call, copying the state between calls, and assert that every
 * call makes progress (consumes input or yields a reference) until the end:
 * a long line tail must be skipped, never waited for. Returns the number of
 * references. */
static inline size_t ct_decode_window(const struct tm_rcodec *c, const uint8_t *raw, size_t len,
                                      size_t win, struct tm_ref *refs, size_t max)
{
        struct aref_dec d;
        struct tm_rstate copy;
        int h = aref_open(&d, c, raw, len, NULL);
        assert_true(h >= 0);
        size_t pos = (size_t)h, k = 0;
        for (;;) {
                size_t used = 0, w = len - pos < win ? len - pos : win;
                assert_true(k < max);
                ssize_t r =
                    aref_decode(&d, raw + pos, w, pos + w == len, pos, &used, refs + k, 1, NULL);
                assert_true(r >= 0);
                if (r == 0 && used == 0) {
                        assert_int_equal(pos, len);
                        aref_close(&d);
                        return k;
                }
                k += (size_t)r;
                pos += used;
                memcpy(&copy, &d.st, sizeof copy);
                memset(&d.st, 0x5a, sizeof d.st);
                memcpy(&d.st, &copy, sizeof copy);
        }
}

/* Assert that row c's open on h[0..n) fails with code and a message
 * naming an offset and containing what. */
static inline void ct_expect_init(const struct tm_rcodec *c, const uint8_t *h, size_t n, int code,
                                  const char *what)
{
        struct aref_dec d;
        struct tm_err err = {0};
        assert_int_equal(aref_open(&d, c, h, n, &err), code);
        assert_non_null(strstr(err.msg, "offset"));
        assert_non_null(strstr(err.msg, what));
}

/* The header checks PDATS and PDATS II share: good is a valid 8-byte
 * header; a short one, another magic, version or width, or flags fail. */
static inline void ct_check_header_errors(const struct tm_rcodec *c, const uint8_t *good)
{
        uint8_t h[8];
        struct aref_dec d;
        memcpy(h, good, 8);
        assert_int_equal(aref_open(&d, c, h, 8, NULL), 8);
        aref_close(&d);
        ct_expect_init(c, h, 7, -EIO, "truncated");
        ct_expect_init(c, h, 0, -EIO, "truncated");
        h[3] ^= 1;
        ct_expect_init(c, h, 8, -EIO, "magic");
        memcpy(h, good, 8);
        h[4] = 2;
        ct_expect_init(c, h, 8, -ENOTSUP, "version");
        h[4] = 0;
        ct_expect_init(c, h, 8, -ENOTSUP, "version");
        memcpy(h, good, 8);
        h[5] = 48;
        ct_expect_init(c, h, 8, -ENOTSUP, "width");
        memcpy(h, good, 8);
        h[7] = 0x80;
        ct_expect_init(c, h, 8, -ENOTSUP, "flags");
}

/* A reproducible pseudo-random generator (xorshift64*). */
static inline uint64_t ct_rand(uint64_t *s)
{
        *s ^= *s >> 12;
        *s ^= *s << 25;
        *s ^= *s >> 27;
        return *s * 2685821657736338717ull;
}

/* Fill refs[0..n) with a program-shaped trace: sequential fetches in units
 * of unit (unit 1: x86-like lengths 1-15), loops, far calls, stack pushes,
 * strided arrays and scattered heap accesses; addresses fit bits. Only
 * types < ntypes occur (data types 0/1 and, when ntypes > 3, others). */
static inline void ct_gen_program(struct tm_ref *refs, size_t n, uint64_t seed, unsigned bits,
                                  unsigned unit, unsigned ntypes)
{
        uint64_t s = seed * 0x9e3779b97f4a7c15ull + 1;
        uint64_t mask = bits == 64 ? UINT64_MAX : UINT32_MAX;
        uint64_t code = bits == 64 ? 0x55d4a0001000ull : 0x00400000ull;
        uint64_t stack = bits == 64 ? 0x7ffc9a3b2ff8ull : 0x7fff00acull;
        uint64_t heap = bits == 64 ? 0x55d4a2c00000ull : 0x1000acacull;
        uint64_t pc = code, arr = heap, loop_start = pc;
        for (size_t i = 0; i < n; i++) {
                uint64_t r = ct_rand(&s);
                unsigned what = (unsigned)(r % 100);
                struct tm_ref *f = &refs[i];
                if (what < 55) {
                        f->type = TM_IFETCH;
                        f->addr = pc & mask;
                        pc += unit == 1 ? 1 + (r >> 8) % 15 : unit;
                } else if (what < 60) {
                        loop_start = pc;
                        pc = (code + ((r >> 8) % 0x100000) * unit) & mask; /* call/jump */
                        f->type = TM_IFETCH;
                        f->addr = pc;
                } else if (what < 64) {
                        pc = loop_start; /* loop back */
                        f->type = TM_IFETCH;
                        f->addr = pc & mask;
                } else if (what < 75) {
                        stack -= 8; /* push */
                        f->type = TM_WRITE;
                        f->addr = stack & mask;
                } else if (what < 80) {
                        f->type = TM_READ;
                        f->addr = stack & mask;
                        stack += 8; /* pop */
                } else if (what < 90) {
                        f->type = (r >> 20) & 1;
                        arr += (r >> 24) % 3 == 0 ? 64 : 4; /* strided array */
                        f->addr = arr & mask;
                } else if (what < 97 || ntypes <= 3) {
                        f->type = (r >> 20) & 1; /* scattered heap, sometimes far */
                        f->addr = (heap + ((r >> 24) % ((r & 1) ? 0x100 : 0x10000000))) & mask;
                } else {
                        f->type = 3 + (unsigned)((r >> 20) % (ntypes - 3));
                        f->addr = (r >> 8) & mask;
                }
        }
}

/* Fill refs[0..n) with arbitrary types < ntypes and addresses < 2^bits,
 * with runs of repeats so run boundaries are hit. */
static inline void ct_gen_random(struct tm_ref *refs, size_t n, uint64_t seed, unsigned bits,
                                 unsigned ntypes)
{
        uint64_t s = seed * 0x9e3779b97f4a7c15ull + 7;
        uint64_t mask = bits == 64 ? UINT64_MAX : UINT32_MAX;
        for (size_t i = 0; i < n; i++) {
                uint64_t r = ct_rand(&s);
                refs[i].type = (unsigned)(r % ntypes);
                unsigned shape = (unsigned)(r >> 8) % 4;
                uint64_t v = ct_rand(&s);
                if (shape == 0)
                        refs[i].addr = v & mask;
                else if (shape == 1)
                        refs[i].addr = (v >> (v & 63)) & mask;
                else
                        refs[i].addr = v & 0xff;
        }
}

/* Round trips of random traces (types < ntypes) in both address widths. */
static inline void ct_check_random(const struct tm_rcodec *c, unsigned ntypes, unsigned unit)
{
        size_t n = 3000;
        struct tm_ref *refs = malloc(n * sizeof *refs);
        for (unsigned seed = 1; seed <= 4; seed++) {
                for (unsigned bits = 32; bits <= 64; bits += 32) {
                        ct_gen_random(refs, n, seed, bits, ntypes);
                        struct tm_enc_opts o = {.addr_bits = bits, .unit = unit};
                        ct_check_roundtrip(c, &o, refs, n);
                }
        }
        free(refs);
}

/* Hostile text for a line codec: copies of valid text (whole lines) with a
 * few bytes changed to characters of alpha, or random alpha text. The fast
 * path (all input, cap 300) and the exact path (small pieces and caps) must
 * give the same references or the same error, and never crash. */
static inline void ct_check_text_hostile(const struct tm_rcodec *c, const char *valid,
                                         const char *alpha, uint64_t seed)
{
        char buf[512];
        struct tm_ref *got = malloc(1200 * sizeof *got), *got2 = malloc(1200 * sizeof *got2);
        size_t vl = strlen(valid), na = strlen(alpha);
        for (int iter = 0; iter < 2000; iter++) {
                size_t n = 0, cut = ct_rand(&seed) % (sizeof buf - vl);
                if (iter % 4) {
                        while (n + vl <= cut) {
                                memcpy(buf + n, valid, vl);
                                n += vl;
                        }
                        for (unsigned m = iter % 4; m-- > 0 && n;)
                                buf[ct_rand(&seed) % n] = alpha[ct_rand(&seed) % na];
                } else {
                        for (n = 0; n < cut; n++)
                                buf[n] = alpha[ct_rand(&seed) % na];
                }
                ssize_t r = ct_decode(c, (const uint8_t *)buf, n, 0, 300, got, 1200, NULL);
                ssize_t r2 = ct_decode(c, (const uint8_t *)buf, n, 1 + (size_t)iter % 4,
                                       1 + (size_t)iter % 3, got2, 1200, NULL);
                assert_true(r >= 0 || r == -EIO);
                assert_int_equal(r, r2);
                if (r > 0)
                        ct_assert_refs(got, got2, (size_t)r);
                c->probe((const uint8_t *)buf, n);
        }
        free(got);
        free(got2);
}

#endif
