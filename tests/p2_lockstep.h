/* p2_lockstep: PDATS II's block decoder against its scalar one, call by
 * call. Shared by tests/unit_pdats2.c and fuzz/fuzz_pdats2.c.
 *
 * raw[0..len) (a whole file, header first) is decoded by both decoders in
 * lockstep, offered in windows of piece bytes as a view's feed does (0:
 * all at once), cap references a call: every call must give the same
 * references (or the same error), consume the same bytes and leave the
 * same state. a and b hold cap references each. before_blocks, if not
 * NULL, runs just before each block-decoder call (the unit test poisons
 * the stack with it). Returns 0 when they agree to the end, 1 when they
 * agree up to the same error, -1 at the first difference, described in
 * why. */
#ifndef TM_P2_LOCKSTEP_H
#define TM_P2_LOCKSTEP_H

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "arch/x86/pdats2_x86.h"
#include "support/aref.h"

/* p2_lockstep's loop on da and db, both opened on raw (a header of h
 * bytes). */
static inline int p2_lockstep_from(struct aref_dec *da, struct aref_dec *db, const uint8_t *raw,
                                   size_t len, size_t h, size_t piece, size_t cap, struct tm_ref *a,
                                   struct tm_ref *b, void (*before_blocks)(void), char *why,
                                   size_t whylen)
{
        size_t pos = h, end = piece ? pos + piece : len;
        while (pos < len) {
                size_t avail = (end < len ? end : len) - pos;
                int eof = pos + avail == len;
                size_t ua = 0, ub = 0;
                struct tm_err ea = {0}, eb = {0};
                p2x_force_scalar(1);
                ssize_t ra = aref_decode(da, raw + pos, avail, eof, pos, &ua, a, cap, &ea);
                p2x_force_scalar(0);
                if (before_blocks)
                        before_blocks();
                ssize_t rb = aref_decode(db, raw + pos, avail, eof, pos, &ub, b, cap, &eb);
                if (ra != rb || (ra >= 0 && ua != ub)) {
                        snprintf(why, whylen,
                                 "raw offset %zu, piece %zu, cap %zu: scalar %zd refs %zu bytes, "
                                 "blocks %zd refs %zu bytes",
                                 pos, piece, cap, ra, ua, rb, ub);
                        return -1;
                }
                if (ra < 0) {
                        if (strcmp(ea.msg, eb.msg) == 0)
                                return 1;
                        snprintf(why, whylen, "raw offset %zu: errors differ: %.100s / %.100s", pos,
                                 ea.msg, eb.msg);
                        return -1;
                }
                for (ssize_t k = 0; k < ra; k++)
                        if (a[k].addr != b[k].addr || a[k].type != b[k].type) {
                                snprintf(why, whylen,
                                         "raw offset %zu, piece %zu, cap %zu, reference %zd: "
                                         "scalar %u %" PRIx64 ", blocks %u %" PRIx64,
                                         pos, piece, cap, k, a[k].type, a[k].addr, b[k].type,
                                         b[k].addr);
                                return -1;
                        }
                if (memcmp(da->st.b, db->st.b, da->c->state_size) != 0) {
                        snprintf(why, whylen,
                                 "raw offset %zu, piece %zu, cap %zu: states differ after the call",
                                 pos, piece, cap);
                        return -1;
                }
                pos += ua;
                if (ra == 0 && ua == 0) {
                        if (eof)
                                break;
                        end += piece;
                } else if (piece && end <= pos) {
                        end = pos + piece;
                }
        }
        return 0;
}

static inline int p2_lockstep(const uint8_t *raw, size_t len, size_t piece, size_t cap,
                              struct tm_ref *a, struct tm_ref *b, void (*before_blocks)(void),
                              char *why, size_t whylen)
{
        struct aref_dec da, db;
        int h = aref_open(&da, &tm_rcodec_pdats2, raw, len, NULL);
        if (h < 0) {
                snprintf(why, whylen, "bad header");
                return -1;
        }
        if (aref_open(&db, &tm_rcodec_pdats2, raw, len, NULL) != h) {
                aref_close(&da);
                snprintf(why, whylen, "headers differ");
                return -1;
        }
        int ret = p2_lockstep_from(&da, &db, raw, len, (size_t)h, piece, cap, a, b, before_blocks,
                                   why, whylen);
        aref_close(&da);
        aref_close(&db);
        return ret;
}
#endif
