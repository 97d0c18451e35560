/* feed: a trace decoder with its input buffer.
 *
 * The codec's decode() takes whole records and leaves a record cut by the
 * end of its input for the next call; a feed keeps those bytes and the
 * decoder state together. Bytes arrive either pushed by tm_cont_scan's sink
 * (the index pass) or pulled from a container cursor (a vfile); both copy
 * into tm_feed_space() and tm_feed_commit() them. The buffer has a fixed
 * size: a record that does not fit in it is corrupt input (-EIO), so memory
 * never depends on the input. */
#ifndef TM_FEED_H
#define TM_FEED_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../codecs/address/trace.h"

struct tm_feed {
        const struct tm_codec *codec;
        struct tm_dec_state st;
        uint8_t *buf;
        size_t cap, pos, len; /* unconsumed input is buf[pos..len) */
        uint64_t raw_off;     /* raw offset of buf[pos] */
        int eof;              /* set by the owner: nothing follows buf[len] */
};

/* Allocate a buffer of cap bytes. Returns 0 or -ENOMEM. */
int tm_feed_init(struct tm_feed *f, const struct tm_codec *codec, size_t cap);

void tm_feed_free(struct tm_feed *f);

/* Drop buffered input and restart decoding at raw offset raw_off with
 * state st (a checkpoint). */
void tm_feed_reset(struct tm_feed *f, uint64_t raw_off, const struct tm_dec_state *st);

/* Room for more input: moves unconsumed bytes to the front and returns
 * where to write; *room gets the free bytes (0 when the buffer is full). */
uint8_t *tm_feed_space(struct tm_feed *f, size_t *room);

/* n bytes were written at tm_feed_space(). */
static inline void tm_feed_commit(struct tm_feed *f, size_t n)
{
        f->len += n;
}

/* Decode up to cap references into out. Returns the count (> 0), 0 when
 * it needs more input (f->eof unset) or the stream is finished (f->eof
 * set), or a negative errno with err set ("raw offset N: ..."). A full
 * buffer that still does not hold one record is -EIO. */
ssize_t tm_feed_decode(struct tm_feed *f, struct tm_ref *out, size_t cap, struct tm_err *err);

/* tm_feed_decode that also writes the access size of out[i] to sizes[i]
 * when sizes is not NULL (codecs with decode_sized only). */
ssize_t tm_feed_decode_sized(struct tm_feed *f, struct tm_ref *out, uint32_t *sizes, size_t cap,
                             struct tm_err *err);

#endif
