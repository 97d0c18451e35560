/* hatf_text: HATF decoded straight into the ascii view's lines.
 *
 * The views' generic path decodes a batch of records into struct tm_rec
 * (168 bytes each) and renders the batch afterwards. This one decodes the
 * common records (every field a number) in one vector register each into
 * 64-byte number records that stay in L1 and renders them with the view's
 * own line renderer (tm_text_nums); the rest one at a time through the
 * generic decoder and tm_text_lines (hatf_text.c says how). The bytes
 * are those of the generic path, record by record.
 *
 * It stops, leaving the rest to the generic decoder (tm_rcodec.decode),
 * before a record cut by the end of the input and before anything the
 * generic decoder would reject, so errors are reported by one path only,
 * with the same words and offsets. */
#ifndef TM_HATF_TEXT_H
#define TM_HATF_TEXT_H

#include <stddef.h>
#include <stdint.h>

#include "../record/text.h"
#include "../record/record.h"

/* HATF's text decoder on this machine, or NULL: it needs AVX-512 and
 * the vector renderer (so TM_NO_SIMD=1 turns it off, as
 * tm_text_force_scalar(1) does). The row's text_of; declared in
 * hatf_impl.h. */

/* HATF's. */
size_t hatf_text(struct tm_rstate *st, const uint8_t *in, size_t len, uint64_t raw_off,
                 size_t *used, const struct tm_text_plan *p, char *dst, size_t cap,
                 size_t maxrec, long kind, size_t *nrec);

#endif
