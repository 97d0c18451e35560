/* feed: a record decoder with its input buffer.
 *
 * Records returned by tm_feed_decode point into the buffer (tm_rec.var):
 * they stay valid until the next tm_feed_space or tm_feed_decode call.
 * The buffer has a fixed size: a record that does not fit in it is
 * corrupt input (-EIO), so memory never depends on the input. */
#ifndef TM_FEED_H
#define TM_FEED_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../codecs/heap/hatf_text.h"
#include "../codecs/record/record.h"

/* Big enough for the largest HATF record (a 64 KiB comment or attribute)
 * with room to spare. */
#define TM_FEED_CAP (256u << 10)

struct tm_feed {
        const struct tm_rcodec *codec;
        void *ctx;
        struct tm_rstate st;
        uint8_t *buf;
        size_t cap, pos, len; /* unconsumed input is buf[pos..len) */
        uint64_t raw_off;     /* raw offset of buf[pos] */
        int eof;              /* set by the owner: nothing follows buf[len] */
        tm_rtext_fn *text;    /* the codec's text decoder (tm_rcodec.text_of), or NULL */
        tm_rbin_fn *bin;      /* its binary decoder (tm_rcodec.binary_of), or NULL */
};

/* Allocate the buffer. Returns 0 or -ENOMEM. */
int tm_feed_init(struct tm_feed *f, const struct tm_rcodec *codec, void *ctx);

void tm_feed_free(struct tm_feed *f);

/* Drop buffered input; decoding restarts at raw_off with the first
 * state_size bytes of st. */
void tm_feed_reset(struct tm_feed *f, uint64_t raw_off, const void *st);

/* Room for more input (moves unconsumed bytes to the front). */
uint8_t *tm_feed_space(struct tm_feed *f, size_t *room);

static inline void tm_feed_commit(struct tm_feed *f, size_t n)
{
        f->len += n;
}

/* Decode up to cap records. Returns the count (> 0), 0 when it needs more
 * input (eof unset) or the stream is finished (eof set), or a negative
 * errno ("raw offset N: ..."). */
ssize_t tm_feed_decode(struct tm_feed *f, struct tm_rec *out, size_t cap, struct tm_err *err);

/* tm_feed_decode into a column batch, for a codec with decode_batch. */
ssize_t tm_feed_decode_batch(struct tm_feed *f, struct tm_rbatch *b, size_t cap,
                              struct tm_err *err);

/* The ascii lines of the buffered records through the codec's text
 * decoder (f->text, which must be set): whole lines into dst while they
 * fit in cap bytes, at most maxrec lines; kind >= 0 (a row with
 * text_kinds): only that kind's lines, the other records passed over.
 * Returns the bytes written; 0 when the next record is for tm_feed_decode
 * (more input, the end, an error, a line that does not fit) or all it
 * decoded were of other kinds. Records are consumed as by tm_feed_decode. */
size_t tm_feed_text(struct tm_feed *f, const struct tm_text_plan *p, char *dst, size_t cap,
                     size_t maxrec, long kind);

/* The same for the binary view, through the codec's binary decoder
 * (f->bin, which must be set): whole records, at most maxrec. */
size_t tm_feed_binary(struct tm_feed *f, uint8_t *dst, size_t cap, size_t maxrec);

#endif
