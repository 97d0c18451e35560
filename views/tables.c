/* A family's tables by a pass of their own (tables.h). */
#include "tables.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "feed.h"

#define TB_BATCH 256

/* The pass's error e (a container's or decoder's, which may lack the
 * path) as err, naming src's file. */
static int tables_fail(const struct tm_tables_src *src, struct tm_err *e, struct tm_err *err)
{
        if (!e->code)
                tm_err_set(e, -EIO, "cannot read the trace");
        if (!strstr(e->msg, src->path))
                tm_err_prefix(e, "%s", src->path);
        if (err)
                *err = *e;
        return e->code;
}

/* Feed the first src->nrec records of src to the accumulator a, through
 * a verifying reader (tm_creader_open). 0, or the error that came before
 * the last of them (tables_fail), or -ENOMEM. */
static int tables_pass(const struct tm_tables_src *src, const struct tm_family *fam,
                       struct tm_family_acc *a, struct tm_err *err)
{
        struct tm_creader *r = NULL;
        struct tm_feed feed;
        struct tm_rec *recs = malloc(TB_BATCH * sizeof *recs);
        if (!recs || tm_feed_init(&feed, src->codec, src->ctx) < 0) {
                free(recs);
                return tm_err_set(err, -ENOMEM, "%s: out of memory", src->path);
        }
        struct tm_err e = {0};
        int rc = tm_creader_open(src->cont, &r, &e);
        if (rc == 0)
                rc = tm_creader_seek(r, src->hdr_len, &e);
        tm_feed_reset(&feed, src->hdr_len, src->st0->b);
        uint64_t done = 0;
        int one = 0; /* a batch failed: its good records one at a time */
        while (rc == 0 && done < src->nrec) {
                struct tm_feed at = feed; /* the state and place before the call */
                uint64_t left = src->nrec - done;
                size_t cap = one ? 1 : left < TB_BATCH ? (size_t)left : TB_BATCH;
                ssize_t n = tm_feed_decode(&feed, recs, cap, &e);
                if (n > 0) {
                        fam->acc_add(a, recs, (size_t)n);
                        done += (uint64_t)n;
                        continue;
                }
                if (n < 0 && !one) { /* a decoder may fail a whole batch */
                        feed = at;
                        one = 1;
                        memset(&e, 0, sizeof e);
                        continue;
                }
                if (n < 0 || feed.eof) {
                        if (n == 0)
                                tm_err_set(&e, -EIO,
                                           "raw offset %llu: the trace ends before the %llu "
                                           "records its index counted",
                                           (unsigned long long)feed.raw_off,
                                           (unsigned long long)src->nrec);
                        rc = -EIO;
                        break;
                }
                size_t room;
                uint8_t *dst = tm_feed_space(&feed, &room);
                ssize_t k = tm_creader_read(r, dst, room, &e);
                if (k < 0) {
                        rc = (int)k;
                        break;
                }
                feed.eof = k == 0;
                tm_feed_commit(&feed, (size_t)k);
        }
        tm_creader_close(r);
        tm_feed_free(&feed);
        free(recs);
        if (rc == -ENOMEM)
                return tm_err_set(err, rc, "%s: out of memory", src->path);
        return rc < 0 ? tables_fail(src, &e, err) : 0;
}

int tm_tables_build(const struct tm_tables_src *src, const struct tm_family *fam, char **text,
                    size_t *len, struct tm_family_acc **acc, struct tm_err *err)
{
        struct tm_family_acc *a = fam->acc_start(src->s);
        if (!a)
                return tm_err_set(err, -ENOMEM, "%s: out of memory", src->path);
        int rc = tables_pass(src, fam, a, err);
        if (rc == 0) {
                uint64_t block[TM_FAMILY_STATS_MAX / 8];
                fam->acc_finish(a, block);
        }
        unsigned n = 0;
        while (rc == 0 && tm_family_more(fam)->tables[n]) {
                if (tm_family_more(fam)->table(a, n, &text[n], &len[n]) < 0)
                        rc = tm_err_set(err, -ENOMEM, "%s: out of memory", src->path);
                else
                        n++;
        }
        if (rc < 0) {
                fam->acc_free(a);
                while (n)
                        free(text[--n]);
                return rc;
        }
        *acc = a;
        return 0;
}
