/* What both passes over an archive share (index.h): the front of the
 * scan's sink, the end of the pass, the check of unverified bytes, and
 * verify's message. */
#include "index.h"

#include <errno.h>
#include <string.h>

size_t tm_scan_front(struct tm_scan_front *s, const uint8_t **buf, size_t n)
{
        s->seen += n;
        if (s->progress && s->seen >= s->next_progress) {
                uint64_t total = 0;
                tm_cont_raw_size(s->cont, &total);
                s->progress(s->arg, s->seen, total);
                s->next_progress = s->seen + TM_SCAN_PROGRESS_EVERY;
        }
        if (s->limited && s->seen > s->limit) {
                uint64_t over = s->seen - s->limit;
                n = over >= n ? 0 : n - (size_t)over;
                s->stop = 1;
        }
        size_t k = n < s->skip ? n : (size_t)s->skip;
        *buf += k;
        s->skip -= k;
        return n - k;
}

int tm_scan_unverified(struct tm_cont *c, uint64_t end, uint64_t *limit, struct tm_err *err)
{
        if (end <= tm_cont_scan_good(c))
                return 0;
        struct tm_err e = {0};
        int rc = tm_cont_scan(c, NULL, NULL, &e);
        if (rc == -ENOMEM)
                return tm_err_set(err, rc, "out of memory");
        if (rc == 0)
                return 0;
        if (err)
                *err = e;
        *limit = tm_cont_scan_good(c);
        return 1;
}

int tm_scan_end(const struct tm_scan_front *s, size_t left, uint64_t raw_off, struct tm_err *err)
{
        if (left)
                return tm_err_set(err, -EIO, "raw offset %llu: %zu bytes after the last record",
                                  (unsigned long long)raw_off, left);
        if (s->skip)
                return tm_err_set(err, -EIO, "raw offset %llu: truncated header",
                                  (unsigned long long)s->seen);
        return 0;
}

int tm_scan_result(int rc, struct tm_err *err)
{
        if (rc > 0)
                rc = -EIO;
        if (rc < 0 && rc != -ENOMEM) { /* damage: keep the intact prefix */
                if (err && !err->code)
                        tm_err_set(err, rc, "cannot index");
                return TM_INDEX_PREFIX;
        }
        return rc;
}

/* One pass; limit: NULL, or the raw offset past which nothing is decoded
 * (tm_scan_unverified). */
int tm_index_differ(struct tm_err *err, const char *what, uint64_t i)
{
        return tm_err_set(err, -EIO, "index differs from the archive: %s (%llu)", what,
                          (unsigned long long)i);
}

