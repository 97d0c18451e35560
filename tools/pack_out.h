/* pack_out: tracetool pack's output, the encoders of its row.
 *
 * Candidates, one an encoding of the output row (tm_rcodec.encodings),
 * are fed the same records at once; each writes its own temporary file
 * beside OUT (OUT.tmp, or OUT.<encoding>.tmp when there are several)
 * through the container OUT's name asks for, and the smallest becomes OUT
 * (renamed over it) while the others are removed. Writing to stdout there
 * is one candidate and no file.
 *
 * An encoder's output goes to its container writer in pieces of at least
 * PACK_OUT_FLUSH bytes, each ending on a record boundary (every sink call
 * does, record.h), which the writer is told: seekable zstd ends a frame
 * only there (codecs/containers/container.h). */
#ifndef TM_PACK_OUT_H
#define TM_PACK_OUT_H

#include <stdint.h>
#include <sys/types.h>

#include "codecs/containers/container.h"
#include "codecs/record/record.h"

#define PACK_OUT_CANDS 16          /* candidates at most */
#define PACK_OUT_FLUSH (60u << 10) /* encoded bytes handed to the writer at once */

struct pack_cand {
        const char *enc; /* NULL: the row's one unnamed encoding */
        char *tmp;       /* its file, NULL for stdout */
        int fd;
        struct tm_cwriter *w;
        struct tm_renc *e;
        uint8_t *buf; /* encoded bytes not yet given to the writer: whole records */
        size_t len, cap;
        uint64_t raw;       /* bytes the encoder wrote */
        off_t size;         /* the file's, once finished */
        struct tm_err werr; /* the writer's error, which the sink cannot return */
};

struct pack_out {
        const struct tm_rcodec *row;
        const struct tm_renc_src *src; /* for the row's enc_open_src */
        struct pack_cand c[PACK_OUT_CANDS];
        unsigned n;
};

/* Open n candidates (encodings enc[0..n), NULL for the row's unnamed
 * one; by the row's enc_open_src for input src when it has one) of row
 * writing out (a path; NULL: stdout, n must be 1) in a
 * container of kind with wo. Returns 0 or a negative errno with err;
 * pack_out_free frees o either way. */
int pack_out_open(struct pack_out *o, const struct tm_rcodec *row, const char *out,
                  enum tm_cont_kind kind, const struct tm_cwriter_opts *wo, const char *const *enc,
                  unsigned n, const struct tm_renc_src *src, struct tm_err *err);

/* Record r (of row's enc_schema), record number idx, to every candidate.
 * Returns 0 or the first encoder's refusal (negative errno, err). */
int pack_out_put(struct pack_out *o, const struct tm_rec *r, size_t n, uint64_t idx,
                 struct tm_err *err);

/* Finish every candidate and keep the smallest of those that finished as
 * out (not for stdout); *best receives its index. Returns 0, or a negative
 * errno with err when none finished or out cannot be written. */
int pack_out_finish(struct pack_out *o, const char *out, unsigned *best, struct tm_err *err);

/* Free o: encoders and writers not finished, files not kept. */
void pack_out_free(struct pack_out *o);

#endif
