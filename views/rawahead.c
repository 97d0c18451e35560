#include "rawahead.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct chunk {
        uint8_t *data;
        uint64_t off; /* raw offset of data[0] */
        size_t len;
        int end;           /* nothing follows: the end of the stream, or rc */
        int rc;            /* 0, or the cursor's error after len bytes */
        struct tm_err err; /* its message */
};

/* The ring holds ready chunks ch[head], ch[head + 1], ... (count of them);
 * the thread fills ch[(head + count) % N] outside the lock and publishes it
 * only if no seek happened meanwhile (gen unchanged). Only the thread
 * touches the cursor r after open. */
struct tm_rawahead {
        struct tm_creader *r;
        pthread_t th;
        pthread_mutex_t mu;
        pthread_cond_t cv;
        int stop;
        uint64_t gen;      /* bumped by every restart */
        int seek_pending;  /* the thread must seek r to want_off first */
        uint64_t want_off;
        int ended;         /* the thread published an end chunk for gen */
        struct chunk ch[TM_RAWAHEAD_CHUNKS];
        unsigned head, count;
        size_t hpos;  /* bytes of ch[head] already returned */
        uint64_t pos; /* raw offset of the next byte returned */
};

/* Fill c from the cursor: a whole chunk unless the stream ends or fails. */
static void fill(struct tm_rawahead *a, struct chunk *c, uint64_t off)
{
        c->off = off;
        c->len = 0;
        c->end = 0;
        c->rc = 0;
        memset(&c->err, 0, sizeof c->err);
        while (c->len < TM_RAWAHEAD_CHUNK) {
                ssize_t k = tm_creader_read(a->r, c->data + c->len, TM_RAWAHEAD_CHUNK - c->len,
                                            &c->err);
                if (k <= 0) {
                        c->end = 1;
                        c->rc = (int)k;
                        return;
                }
                c->len += (size_t)k;
        }
}

static void *rawahead_main(void *arg)
{
        struct tm_rawahead *a = arg;
        pthread_mutex_lock(&a->mu);
        while (!a->stop) {
                if (a->seek_pending) {
                        uint64_t g = a->gen, off = a->want_off;
                        a->seek_pending = 0;
                        pthread_mutex_unlock(&a->mu);
                        struct tm_err e = {0};
                        int rc = tm_creader_seek(a->r, off, &e);
                        pthread_mutex_lock(&a->mu);
                        if (g != a->gen || rc == 0)
                                continue;
                        /* the seek failed: an empty end chunk carries it */
                        struct chunk *c = &a->ch[(a->head + a->count) % TM_RAWAHEAD_CHUNKS];
                        *c = (struct chunk){.data = c->data, .off = off, .end = 1, .rc = rc,
                                            .err = e};
                        a->count++;
                        a->ended = 1;
                        pthread_cond_broadcast(&a->cv);
                        continue;
                }
                if (a->ended || a->count == TM_RAWAHEAD_CHUNKS) {
                        pthread_cond_wait(&a->cv, &a->mu);
                        continue;
                }
                uint64_t g = a->gen;
                struct chunk *c = &a->ch[(a->head + a->count) % TM_RAWAHEAD_CHUNKS];
                uint64_t off = tm_creader_tell(a->r);
                pthread_mutex_unlock(&a->mu);
                fill(a, c, off);
                pthread_mutex_lock(&a->mu);
                if (g != a->gen)
                        continue; /* a seek came meanwhile: these bytes are not wanted */
                a->count++;
                a->ended = c->end;
                pthread_cond_broadcast(&a->cv);
        }
        pthread_mutex_unlock(&a->mu);
        return NULL;
}

int tm_rawahead_open(struct tm_cont *c, struct tm_rawahead **out, struct tm_err *err)
{
        struct tm_rawahead *a = calloc(1, sizeof *a);
        if (!a)
                return tm_err_set(err, -ENOMEM, "out of memory");
        int rc = tm_creader_open(c, &a->r, err);
        if (rc < 0) {
                free(a);
                return rc;
        }
        for (unsigned i = 0; i < TM_RAWAHEAD_CHUNKS; i++) {
                a->ch[i].data = malloc(TM_RAWAHEAD_CHUNK);
                if (!a->ch[i].data)
                        rc = tm_err_set(err, -ENOMEM, "out of memory");
        }
        pthread_mutex_init(&a->mu, NULL);
        pthread_cond_init(&a->cv, NULL);
        if (rc == 0 && (rc = pthread_create(&a->th, NULL, rawahead_main, a)) != 0)
                rc = tm_err_set(err, -rc, "cannot start a decompression thread");
        if (rc < 0) {
                a->stop = 1; /* no thread to join */
                a->th = pthread_self();
                tm_rawahead_close(a);
                return rc;
        }
        *out = a;
        return 0;
}

void tm_rawahead_close(struct tm_rawahead *a)
{
        if (!a)
                return;
        pthread_mutex_lock(&a->mu);
        int joined = a->stop; /* set before: the thread never started */
        a->stop = 1;
        pthread_cond_broadcast(&a->cv);
        pthread_mutex_unlock(&a->mu);
        if (!joined)
                pthread_join(a->th, NULL);
        tm_creader_close(a->r);
        for (unsigned i = 0; i < TM_RAWAHEAD_CHUNKS; i++)
                free(a->ch[i].data);
        pthread_mutex_destroy(&a->mu);
        pthread_cond_destroy(&a->cv);
        free(a);
}

/* Done with ch[head]. Under mu. */
static void release_head(struct tm_rawahead *a)
{
        a->head = (a->head + 1) % TM_RAWAHEAD_CHUNKS;
        a->count--;
        a->hpos = 0;
        pthread_cond_broadcast(&a->cv);
}

int tm_rawahead_seek(struct tm_rawahead *a, uint64_t raw_off, struct tm_err *err)
{
        (void)err;
        pthread_mutex_lock(&a->mu);
        /* forward within the ready chunks: skip to it */
        while (raw_off >= a->pos && a->count > 0) {
                const struct chunk *c = &a->ch[a->head];
                uint64_t avail = c->len - a->hpos;
                if (raw_off - a->pos < avail || (raw_off - a->pos == avail && !c->end)) {
                        a->hpos += (size_t)(raw_off - a->pos);
                        a->pos = raw_off;
                        if (a->hpos == c->len)
                                release_head(a);
                        pthread_mutex_unlock(&a->mu);
                        return 0;
                }
                if (c->end)
                        break;
                a->pos += avail;
                release_head(a);
        }
        /* elsewhere: start over there */
        a->gen++;
        a->head = a->count = 0;
        a->hpos = 0;
        a->ended = 0;
        a->seek_pending = 1;
        a->want_off = raw_off;
        a->pos = raw_off;
        pthread_cond_broadcast(&a->cv);
        pthread_mutex_unlock(&a->mu);
        return 0;
}

ssize_t tm_rawahead_read(struct tm_rawahead *a, void *buf, size_t n, struct tm_err *err)
{
        pthread_mutex_lock(&a->mu);
        for (;;) {
                if (a->count == 0) {
                        pthread_cond_wait(&a->cv, &a->mu);
                        continue;
                }
                struct chunk *c = &a->ch[a->head];
                size_t avail = c->len - a->hpos;
                if (avail == 0 && c->end) {
                        int rc = c->rc;
                        if (rc < 0 && err)
                                *err = c->err;
                        pthread_mutex_unlock(&a->mu);
                        return rc;
                }
                if (avail == 0) {
                        release_head(a);
                        continue;
                }
                size_t k = n < avail ? n : avail;
                /* ready chunks are the reader's alone: copy outside the lock */
                const uint8_t *src = c->data + a->hpos;
                pthread_mutex_unlock(&a->mu);
                memcpy(buf, src, k);
                pthread_mutex_lock(&a->mu);
                a->hpos += k;
                a->pos += k;
                if (a->hpos == c->len && !c->end)
                        release_head(a);
                pthread_mutex_unlock(&a->mu);
                return (ssize_t)k;
        }
}

uint64_t tm_rawahead_tell(const struct tm_rawahead *a)
{
        return a->pos;
}
