/* tm_trace_*: open, probe, the index life cycle, view names and sizes. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "../codecs/record/record.h"
#include "cachepath.h"
#include "index.h"
#include "ixfile.h"
#include "records.h"
#include "stats.h"
#include "trace_obj.h"

#define STATS_CAP (64u << 10)

char *tm_trace_errors_text(struct tm_trace *t, size_t *len)
{
        tm_trace_index_ready(t, NULL); /* damage found by the index pass is an error too */
        pthread_mutex_lock(&t->err_mu);
        char *s = NULL;
        int n = t->last_err.code ? asprintf(&s, "%s\n", t->last_err.msg) : asprintf(&s, "%s", "");
        pthread_mutex_unlock(&t->err_mu);
        if (n < 0)
                return NULL;
        *len = (size_t)n;
        return s;
}

/* Read the first TM_RHEAD_MIN raw bytes. */
static int read_head(struct tm_cont *c, uint8_t *head, size_t *n, struct tm_err *err)
{
        struct tm_creader *r;
        int rc = tm_creader_open_head(c, &r, err);
        if (rc < 0)
                return rc;
        size_t got = 0;
        while (got < TM_RHEAD_MIN) {
                ssize_t k = tm_creader_read(r, head + got, TM_RHEAD_MIN - got, err);
                if (k < 0 && got > 0) /* damage: the index pass meets it again */
                        break;
                if (k < 0) {
                        tm_creader_close(r);
                        return (int)k;
                }
                if (k == 0)
                        break;
                got += (size_t)k;
        }
        tm_creader_close(r);
        *n = got;
        return 0;
}

/* The container whose magic t's archive starts with ("gzip", "zstd",
 * "zip"), or NULL (plain, or unreadable). */
static const char *trace_magic(const struct tm_trace *t)
{
        uint8_t m[4];
        size_t n = t->sb.st_size < (off_t)sizeof m ? (size_t)t->sb.st_size : sizeof m;
        return pread(t->fd, m, n, 0) == (ssize_t)n ? tm_cont_magic(m, n) : NULL;
}

/* Container, head and codec of the archive open on t->fd. Returns 0 with
 * t->rt set, -EMEDIUMTYPE when no codec takes it, -ENODATA when the
 * container holds no raw bytes, or the error that stopped it. */
static int trace_probe_codec(struct tm_trace *t, struct tm_err *err)
{
        int rc = tm_cont_open(t->fd, t->path, &t->cont, err);
        if (rc == 0) {
                t->cont_name = tm_cont_name(t->cont);
                rc = read_head(t->cont, t->head, &t->headn, err);
        }
        if (rc < 0)
                return rc;
        if (!t->headn)
                return tm_err_set(err, -ENODATA, "%s: archive offset 0: %s: no raw bytes (empty)",
                                  t->path, t->cont_name);
        rc = tm_records_open(t, t->head, t->headn, &t->rt, err);
        if (rc < 0)
                return rc;
        if (!t->rt)
                return tm_err_set(err, -EMEDIUMTYPE, "%s: not a trace this build can read",
                                  t->path);
        return 0;
}

/* open(2) unless the caller gave a descriptor, container, head and codec: everything tm_probe_path
 * needs. An archive with a container's magic that is damaged (-EIO) or empty before a codec could
 * be told is a broken trace (tm_records_open_broken) whose errors view says why; one that reads
 * whole but holds no trace is not a trace. */
static int trace_probe(struct tm_trace *t, struct tm_err *err)
{
        /* O_NONBLOCK: a FIFO swapped in for the archive is refused below
         * instead of waited on; reads of a regular file ignore it */
        if (t->fd < 0)
                t->fd = open(t->path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        if (t->fd < 0) {
                int e = -errno;
                return tm_err_set(err, e, "%s: %s", t->path, strerror(-e));
        }
        if (fstat(t->fd, &t->sb) < 0) {
                int e = -errno;
                return tm_err_set(err, e, "%s: %s", t->path, strerror(-e));
        }
        if (!S_ISREG(t->sb.st_mode))
                return tm_err_set(err, -EMEDIUMTYPE, "%s: not a trace (not a regular file)",
                                  t->path);
        if (t->sb.st_size == 0)
                return tm_err_set(err, -EMEDIUMTYPE, "%s: empty file", t->path);
        int fl = fcntl(t->fd, F_GETFL);
        if (fl >= 0)
                fcntl(t->fd, F_SETFL, fl & ~O_NONBLOCK);
        struct tm_err e = {0};
        int rc = trace_probe_codec(t, &e);
        const char *magic = rc == -EIO || rc == -ENODATA ? trace_magic(t) : NULL;
        if (magic && !t->rt) {
                tm_cont_close(t->cont);
                t->cont = NULL;
                t->cont_name = magic;
                if (!strstr(e.msg, t->path))
                        tm_err_prefix(&e, "%s", t->path);
                e.code = -EIO;
                rc = tm_records_open_broken(t, &e, &t->rt);
                if (rc < 0)
                        tm_err_set(&e, rc, "%s: out of memory", t->path);
        }
        if (rc < 0 && err)
                *err = e;
        return rc;
}

static struct tm_trace *trace_alloc(const char *path)
{
        struct tm_trace *t = calloc(1, sizeof *t);
        if (!t)
                return NULL;
        t->fd = -1;
        t->dirfd = -1;
        t->cache_fd = -1;
        t->ix_fd = -1;
        t->path = strdup(path);
        if (!t->path) {
                free(t);
                return NULL;
        }
        pthread_mutex_init(&t->mu, NULL);
        pthread_cond_init(&t->cv, NULL);
        pthread_mutex_init(&t->err_mu, NULL);
        return t;
}

/* A new trace for path; with fd >= 0, probed on a copy of that
 * descriptor (path then only names it), else opened by path. */
static struct tm_trace *trace_alloc_fd(int fd, const char *path)
{
        struct tm_trace *t = trace_alloc(path);
        if (t && fd >= 0 && (t->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0)) < 0) {
                tm_trace_close(t);
                return NULL;
        }
        return t;
}

/* Probe t (NULL: out of memory, not a trace), set the names as
 * tm_probe_path says and close t. 1 or 0. */
static int trace_probe_once(struct tm_trace *t, const char **codec_name, const char **cont_name)
{
        if (!t)
                return 0;
        int ok = trace_probe(t, NULL) == 0;
        if (ok && codec_name)
                *codec_name = tm_trace_codec(t);
        if (ok && cont_name)
                *cont_name = t->cont_name;
        tm_trace_close(t);
        return ok;
}

int tm_probe_fd(int fd, const char *path, const char **codec_name, const char **cont_name)
{
        return fd >= 0 && trace_probe_once(trace_alloc_fd(fd, path), codec_name, cont_name);
}

int tm_probe_path(const char *path, const char **codec_name, const char **cont_name)
{
        return trace_probe_once(trace_alloc(path), codec_name, cont_name);
}

/* A trace's views are its own (records.c) and ours: stats.json and
 * errors after the ones known at open, then the per-id streams that its
 * index adds (trace_views_more), in an array with room for all of them
 * that only grows at its end, so that a reader sees a whole list (but
 * across a retry, which takes the per-id ones back: trace_views_forget). */
static void trace_views_make(struct tm_trace *t)
{
        const char *const *rv = tm_records_views(t->rt);
        unsigned n = 0;
        while (rv[n])
                n++;
        t->views = calloc(n + 2 + TM_FAMILY_STREAMS_MAX + 1, sizeof *t->views);
        if (!t->views)
                return;
        memcpy(t->views, rv, n * sizeof *rv);
        t->views[n] = "stats.json";
        t->views[n + 1] = "errors";
        t->views_open = n;
        t->views_n = n + 2;
}

/* After the index: a record trace's per-id streams. Under mu. After a
 * retry (trace_views_forget) they are listed again, the new version's. */
static void trace_views_more(struct tm_trace *t)
{
        const char *const *rv = tm_records_views(t->rt);
        if (!t->views || t->views_n > t->views_open + 2)
                return;
        for (unsigned i = t->views_open;
             rv[i] && t->views_n < t->views_open + 2 + TM_FAMILY_STREAMS_MAX; i++)
                __atomic_store_n(&t->views[t->views_n++], rv[i], __ATOMIC_RELEASE);
}

static uint64_t env_ckpt_refs(void)
{
        const char *s = getenv("TM_CKPT_REFS");
        if (!s || !*s)
                return 0;
        char *end;
        unsigned long long v = strtoull(s, &end, 10);
        return *end == 0 ? v : 0;
}

/* The directory holding the file at abs, opened by name (O_PATH), or
 * -1. */
static int trace_open_dir(const char *abs)
{
        const char *s = strrchr(abs, '/');
        if (!s)
                return open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
        char *dir = s == abs ? strdup("/") : strndup(abs, (size_t)(s - abs));
        int fd = dir ? open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC) : -1;
        free(dir);
        return fd;
}

/* The common end of both opens: t probed, t->abs and t->dirfd set. */
static int trace_open_end(struct tm_trace *t, const struct tm_trace_opts *o, struct tm_trace **out,
                          struct tm_err *err)
{
        if (o && o->cache_dir)
                t->cache_dir = strdup(o->cache_dir);
        t->cache_err = o && o->cache_dir_fd < 0 ? o->cache_dir_fd : 0;
        if (o && o->cache_dir_fd > 0 &&
            (t->cache_fd = fcntl(o->cache_dir_fd, F_DUPFD_CLOEXEC, 0)) < 0) {
                int e = -errno;
                tm_err_set(err, e, "%s: cache directory: %s", t->path, strerror(-e));
                tm_trace_close(t);
                return e;
        }
        if (!t->abs || (o && o->cache_dir && !t->cache_dir)) {
                tm_trace_close(t);
                return tm_err_set(err, -ENOMEM, "%s: out of memory", t->path);
        }
        t->no_index_beside = o ? o->no_index_beside : 0;
        t->no_save = o ? o->no_save : 0;
        t->unverified_prefix = o ? o->unverified_prefix : 0;
        t->trust_group_index = o ? o->trust_group_index : 0;
        t->ckpt_refs = o && o->ckpt_refs ? o->ckpt_refs : env_ckpt_refs();
        trace_views_make(t);
        *out = t;
        return 0;
}

int tm_trace_open(const char *path, const struct tm_trace_opts *o, struct tm_trace **out,
                  struct tm_err *err)
{
        struct tm_trace *t = trace_alloc(path);
        if (!t)
                return tm_err_set(err, -ENOMEM, "%s: out of memory", path);
        /* the directory before the probe: the codec's open looks in it */
        t->trust_group_dtd = o ? o->trust_group_dtd : 0;
        char *abs = realpath(path, NULL);
        t->abs = abs ? abs : strdup(path);
        if (t->abs)
                t->dirfd = trace_open_dir(t->abs);
        int rc = trace_probe(t, err);
        if (rc < 0) {
                tm_trace_close(t);
                return rc;
        }
        return trace_open_end(t, o, out, err);
}

int tm_trace_open_fd(int fd, int dirfd, const char *path, const struct tm_trace_opts *o,
                     struct tm_trace **out, struct tm_err *err)
{
        if (fd < 0)
                return tm_err_set(err, -EBADF, "%s: no descriptor", path);
        struct tm_trace *t = trace_alloc_fd(fd, path);
        if (!t)
                return tm_err_set(err, -ENOMEM, "%s: out of memory", path);
        /* the directory before the probe: the codec's open looks in it */
        t->trust_group_dtd = o ? o->trust_group_dtd : 0;
        t->abs = strdup(path);
        if (dirfd >= 0 && (t->dirfd = fcntl(dirfd, F_DUPFD_CLOEXEC, 0)) < 0) {
                int e = -errno;
                tm_err_set(err, e, "%s: its directory: %s", path, strerror(-e));
                tm_trace_close(t);
                return e;
        }
        int rc = trace_probe(t, err);
        if (rc < 0) {
                tm_trace_close(t);
                return rc;
        }
        return trace_open_end(t, o, out, err);
}

void tm_trace_close(struct tm_trace *t)
{
        if (!t)
                return;
        tm_records_close(t->rt);
        tm_cont_close(t->cont);
        if (t->ix_fd >= 0)
                close(t->ix_fd);
        if (t->fd >= 0)
                close(t->fd);
        if (t->dirfd >= 0)
                close(t->dirfd);
        if (t->cache_fd >= 0)
                close(t->cache_fd);
        pthread_mutex_destroy(&t->mu);
        pthread_cond_destroy(&t->cv);
        pthread_mutex_destroy(&t->err_mu);
        free(t->json);
        free(t->views);
        free(t->ix_path);
        free(t->ix_note);
        free(t->cache_dir);
        free(t->abs);
        free(t->path);
        free(t);
}

uint64_t tm_trace_memory(const struct tm_trace *t)
{
        return sizeof *t + t->json_len + tm_records_mem(t->rt);
}

const char *tm_trace_codec(const struct tm_trace *t)
{
        return tm_records_codec(t->rt);
}

const char *tm_trace_container(const struct tm_trace *t)
{
        return t->cont_name;
}

const struct tm_err *tm_trace_open_error(const struct tm_trace *t)
{
        return tm_records_open_error(t->rt);
}

const char *const *tm_trace_views(const struct tm_trace *t)
{
        return (const char *const *)t->views;
}

/* ---- the index life cycle ---- */

/* The archive's inode number for the index key, or 0 on a FUSE file
 * system: sshfs (like any FUSE file system mounted without use_ino) numbers
 * inodes afresh on every mount and after the kernel forgets one, so a key
 * with that number would throw the index away on every mount. There the
 * key is size, mtime, codec and container (docs/network-fs.md). */
static uint64_t trace_key_ino(const struct tm_trace *t)
{
        struct statfs sf;
        if (fstatfs(t->fd, &sf) == 0 && sf.f_type == 0x65735546) /* FUSE_SUPER_MAGIC */
                return 0;
        return (uint64_t)t->sb.st_ino;
}

/* The fingerprint of the archive's content for the key (tm_ix_
 * fingerprint), read the first time for each version of the archive
 * (t->sb) and kept. */
static void trace_key_fp(struct tm_trace *t)
{
        const struct stat *a = &t->sb, *b = &t->fp_sb;
        if (t->fp_taken && b->st_ino == a->st_ino && b->st_size == a->st_size &&
            b->st_mtim.tv_sec == a->st_mtim.tv_sec && b->st_mtim.tv_nsec == a->st_mtim.tv_nsec)
                return;
        t->fp_rc =
            tm_ix_fingerprint(t->fd, (uint64_t)a->st_size, tm_cont_dir_offset(t->cont), &t->fp);
        t->fp_sb = *a;
        t->fp_taken = 1;
}

/* The key of the archive's index files; *tr gets who could change the
 * archive (tm_side.h), from its stat at open and its directory's now. */
static struct tm_index_key trace_key(struct tm_trace *t, struct tm_side_trust *tr)
{
        if (t->dirfd >= 0) /* the directory itself, not its name */
                tm_side_trust_at(t->dirfd, &t->sb, t->trust_group_index, tr);
        else
                tm_side_trust_of(t->abs, &t->sb, t->trust_group_index, tr);
        trace_key_fp(t);
        struct tm_index_key k = {
            .archive_size = (uint64_t)t->sb.st_size,
            .mtime_ns = (int64_t)t->sb.st_mtim.tv_sec * 1000000000 + t->sb.st_mtim.tv_nsec,
            .ino = trace_key_ino(t),
            .fingerprint = t->fp,
            .fp_failed = t->fp_rc < 0,
            .codec = tm_trace_codec(t),
            .container = t->cont_name,
            .trust = tr,
        };
        return k;
}

/* The places an index file of t may be, in the order they are tried:
 * beside the archive, the cache's shared file, the caller's own file in
 * the cache (when the shared one is an untrusted user's). Entries may be
 * NULL (no cache directory, ENOMEM). */
enum { IX_BESIDE, IX_SHARED, IX_OWN, IX_NPATHS };

static void trace_ix_paths(const struct tm_trace *t, char *p[IX_NPATHS])
{
        p[IX_BESIDE] = tm_cachepath_beside(t->abs);
        p[IX_SHARED] = tm_cachepath_cache(t->cache_dir, t->abs, NULL);
        p[IX_OWN] = p[IX_SHARED] ? tm_cachepath_own(p[IX_SHARED]) : NULL;
}

static void trace_ix_paths_free(char *p[IX_NPATHS])
{
        for (int i = 0; i < IX_NPATHS; i++)
                free(p[i]);
}

/* A descriptor of t's cache directory for index files to be named in
 * (the caller closes it): a copy of the caller's (tm_trace_opts.
 * cache_dir_fd: the daemon's, opened once at mount), else the cache
 * directory opened by name now (tm_cachepath_open, made first when
 * make), for a caller that gave none. Returns it or a negative errno,
 * the caller's when it could not open one (-ENOENT: no cache directory
 * can be named). */
static int trace_cache_open(const struct tm_trace *t, int make)
{
        if (t->cache_fd >= 0) {
                int fd = fcntl(t->cache_fd, F_DUPFD_CLOEXEC, 0);
                return fd < 0 ? -errno : fd;
        }
        if (t->cache_err < 0)
                return t->cache_err;
        char *dir = tm_cachepath_dir(t->cache_dir);
        int fd = dir ? tm_cachepath_open(dir, make) : -ENOENT;
        free(dir);
        return fd;
}

/* The directory descriptor index file i of t is named in (key->dir_fd):
 * the archive's beside it, else *cache_fd (trace_cache_open's, or
 * negative). Returns whether something is at path i to try. */
static int trace_ix_at(const struct tm_trace *t, int i, const char *path, const int *cache_fd,
                       struct tm_index_key *key)
{
        key->dir_fd = i == IX_BESIDE ? &t->dirfd : cache_fd;
        if (!path || *key->dir_fd < 0)
                return 0;
        const char *base = strrchr(path, '/');
        return faccessat(*key->dir_fd, base ? base + 1 : path, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
}

/* Try the index beside the archive, then the ones in the cache. A file
 * that fails to load is ignored; since its container part may have been
 * half applied, the container is then reopened so that a scan starts
 * clean (no reader exists yet). */
static int trace_load(struct tm_trace *t)
{
        if (tm_records_open_error(t->rt)) /* nothing to load an index for */
                return -ENOENT;
        struct tm_side_trust tr;
        struct tm_index_key key = trace_key(t, &tr);
        char *paths[IX_NPATHS];
        trace_ix_paths(t, paths);
        const int cache_fd = trace_cache_open(t, 0);
        int rc = -ENOENT;
        for (int i = 0; i < IX_NPATHS && rc < 0; i++) {
                if (!trace_ix_at(t, i, paths[i], &cache_fd, &key))
                        continue;
                struct tm_err e = {0};
                rc = tm_records_load(t, paths[i], &key, &e);
                /* not trusted (another user's, or writable by others): the
                 * caller's own file goes beside it; another user's file
                 * there is how a lab's cache works, not worth a note */
                if ((rc == -EPERM || rc == -EACCES) && i == IX_SHARED)
                        t->ix_shared_refused = 1;
                if (rc < 0 && rc != -ESTALE && rc != -ENOENT && rc != -ENOMEM &&
                    !(rc == -EPERM && i == IX_SHARED))
                        tm_trace_note_side(t, &e); /* refused: say which and why */
                if (rc == 0) {
                        t->ix_path = paths[i];
                        paths[i] = NULL;
                } else if (rc != -ESTALE) {
                        struct tm_cont *c;
                        if (tm_cont_open(t->fd, t->path, &c, NULL) == 0) {
                                tm_cont_close(t->cont);
                                t->cont = c;
                        }
                }
        }
        if (cache_fd >= 0)
                close(cache_fd);
        trace_ix_paths_free(paths);
        return rc;
}

/* Save beside the archive if allowed and possible, else in the cache;
 * when neither works, say why in ix_note (the cache's reason). */
static void trace_save(struct tm_trace *t)
{
        struct tm_side_trust tr;
        struct tm_index_key key = trace_key(t, &tr);
        struct tm_err e = {0};
        if (!t->no_index_beside && t->dirfd >= 0) {
                char *p = tm_cachepath_beside(t->abs);
                key.dir_fd = &t->dirfd;
                if (p && tm_records_save(t, &key, p, &e) == 0) {
                        t->ix_path = p;
                        return;
                }
                free(p);
        }
        char *dir = NULL;
        char *p = tm_cachepath_cache(t->cache_dir, t->abs, &dir);
        if (p && t->ix_shared_refused) { /* leave the other user's file be */
                char *own = tm_cachepath_own(p);
                free(p);
                p = own;
        }
        memset(&e, 0, sizeof e);
        const int cache_fd = p ? trace_cache_open(t, 1) : -ENOENT;
        key.dir_fd = &cache_fd;
        if (cache_fd < 0)
                tm_err_set(&e, cache_fd, "%s: %s", p ? dir : "no cache directory (no $HOME)",
                           strerror(-cache_fd));
        if (cache_fd >= 0 && tm_records_save(t, &key, p, &e) == 0)
                t->ix_path = p;
        else
                free(p);
        if (cache_fd >= 0)
                close(cache_fd);
        if (!t->ix_path && asprintf(&t->ix_note, "index in memory only: %s", e.msg) < 0)
                t->ix_note = NULL;
        free(dir);
}

/* The damage message of a prefix served unverified, on request. */
static void trace_note_unverified(const struct tm_trace *t, struct tm_err *err)
{
        size_t n = strlen(err->msg);
        if (tm_cont_unverified(t->cont) && n < sizeof err->msg)
                snprintf(err->msg + n, sizeof err->msg - n,
                         " (unverified prefix served: the bytes before the damage in its "
                         "member passed no CRC-32)");
}

static int trace_build(struct tm_trace *t, tm_progress_fn progress, void *arg, struct tm_err *err)
{
        if (t->cont)
                tm_cont_set_unverified(t->cont, t->unverified_prefix);
        int rc = tm_records_build(t, progress, arg, err);
        if (rc < 0)
                return tm_trace_err_path(t, rc, err);
        t->ix_source = TM_INDEX_BUILT;
        if (rc == TM_INDEX_PREFIX) { /* never saved: a load would hide the damage */
                tm_trace_err_path(t, -EIO, err);
                if (err->code == 0)
                        tm_err_set(err, -EIO, "%s: cannot index", t->path);
                trace_note_unverified(t, err);
                t->damage = *err;
                t->damaged = 1;
                return 0;
        }
        if (!t->no_save)
                trace_save(t);
        return 0;
}

/* Take back the per-id streams that the old version's index listed
 * (tm_records_reopen took them from the record trace's list): the next
 * index lists the new version's. A reader walking the list across this
 * may see some of each version's; every name stays valid. Under mu. */
static void trace_views_forget(struct tm_trace *t)
{
        unsigned keep = t->views_open + 2; /* the views known at open, stats.json, errors */
        if (!t->views || t->views_n <= keep)
                return;
        __atomic_store_n(&t->views[keep], NULL, __ATOMIC_RELEASE);
        for (unsigned i = keep + 1; i < t->views_n; i++)
                __atomic_store_n(&t->views[i], NULL, __ATOMIC_RELAXED);
        t->views_n = keep;
}

/* After a failed build, or one that kept a damaged archive's prefix, with
 * no cursor open: if the archive was rewritten in place since (size,
 * mtime or ctime differ) and still holds a trace of the same codec with the same
 * views, forget the failure and start over with a fresh container and the
 * codec opened again on the new header (tm_records_reopen). Else it stays
 * failed. No reader of the index exists, since readers need it. Under mu. */
static void trace_retry_if_changed(struct tm_trace *t)
{
        struct stat sb;
        struct tm_cont *c;
        if (fstat(t->fd, &sb) < 0 || tm_trace_same_version(&sb, &t->sb))
                return;
        uint8_t head[TM_RHEAD_MIN];
        size_t headn = 0;
        if (tm_cont_open(t->fd, t->path, &c, NULL) < 0)
                return;
        if (read_head(c, head, &headn, NULL) < 0 ||
            tm_records_reopen(t, c, head, headn, NULL) < 0) {
                tm_cont_close(c); /* another codec, other views: stay failed */
                return;
        }
        memcpy(t->head, head, headn);
        t->headn = headn;
        tm_cont_close(t->cont);
        t->cont = c;
        t->cont_name = tm_cont_name(c);
        t->sb = sb;
        t->ix_state = TM_IX_NONE;
        memset(&t->ix_err, 0, sizeof t->ix_err);
        trace_views_forget(t);
        free(t->json);
        t->json = NULL;
        t->damaged = 0;
        memset(&t->damage, 0, sizeof t->damage);
}

int tm_trace_index(struct tm_trace *t, tm_progress_fn progress, void *arg, struct tm_err *err)
{
        pthread_mutex_lock(&t->mu);
        while (t->ix_state == TM_IX_BUILDING)
                pthread_cond_wait(&t->cv, &t->mu);
        /* idle: no cursor at all, not even one on a damaged trace's
         * prefix (its views stay open on the index that kept it) */
        int idle = __atomic_load_n(&t->nvfiles, __ATOMIC_ACQUIRE) == 0;
        if (idle && (t->ix_state == TM_IX_FAILED || (t->ix_state == TM_IX_READY && t->damaged)))
                trace_retry_if_changed(t);
        if (t->ix_state == TM_IX_READY || t->ix_state == TM_IX_FAILED) {
                const struct tm_err *e = t->ix_state == TM_IX_READY ? &t->damage : &t->ix_err;
                if (e->code < 0 && err)
                        *err = *e;
                pthread_mutex_unlock(&t->mu);
                return e->code;
        }
        t->ix_state = TM_IX_BUILDING;
        pthread_mutex_unlock(&t->mu);

        struct tm_err e = {0};
        int rc = 0;
        if (trace_load(t) == 0)
                t->ix_source = TM_INDEX_LOADED;
        else
                rc = trace_build(t, progress, arg, &e);

        pthread_mutex_lock(&t->mu);
        if (rc < 0) {
                if (e.code == 0)
                        tm_err_set(&e, rc, "%s: cannot index", t->path);
                t->ix_err = e;
        }
        if (rc == 0)
                trace_views_more(t);
        if (rc == 0 && t->damaged)
                rc = t->damage.code;
        if (rc < 0) {
                tm_trace_note_err(t, &e);
                if (err)
                        *err = e;
        }
        t->ix_state = t->ix_err.code < 0 ? TM_IX_FAILED : TM_IX_READY;
        pthread_cond_broadcast(&t->cv);
        pthread_mutex_unlock(&t->mu);
        return rc;
}

int tm_trace_index_ready(struct tm_trace *t, struct tm_err *err)
{
        struct tm_err e = {0};
        int rc = tm_trace_index(t, NULL, NULL, &e);
        if (rc < 0 && !t->damaged) {
                if (err)
                        *err = e;
                return rc;
        }
        return 0;
}

const char *tm_trace_index_path(const struct tm_trace *t)
{
        return t->ix_path;
}

const char *tm_trace_index_note(const struct tm_trace *t)
{
        return t->ix_note;
}

enum tm_index_source tm_trace_index_source(const struct tm_trace *t)
{
        return t->ix_source;
}

/* ---- views ---- */

int tm_trace_view_lookup(struct tm_trace *t, const char *view)
{
        if (!tm_records_view_pending(t->rt, view))
                return 0;
        return tm_trace_index_ready(t, NULL);
}

int tm_trace_view_ready(struct tm_trace *t, const char *view, struct tm_err *err)
{
        int need = tm_records_view_indexed(t->rt, view);
        if (need < 0) {
                tm_trace_view_lookup(t, view);
                need = tm_records_view_indexed(t->rt, view);
        }
        if (need <= 0)
                return 0; /* the records' stats text, or no such view (ENOENT there) */
        if (tm_records_open_error(t->rt)) { /* the index pass fails with it */
                tm_trace_index_ready(t, NULL);
                return 0;
        }
        return tm_trace_index_ready(t, err);
}

int tm_trace_text_view(const char *view, enum tm_view_kind *kind)
{
        if (strcmp(view, "stats.json") == 0)
                *kind = TM_VIEW_JSON;
        else if (strcmp(view, "errors") == 0)
                *kind = TM_VIEW_ERRORS;
        else
                return 0;
        return 1;
}

int tm_trace_json_text(struct tm_trace *t, const char **text, size_t *len, struct tm_err *err)
{
        pthread_mutex_lock(&t->mu);
        const char *dmg = t->damaged ? t->damage.msg : NULL;
        for (int pass = 0; pass < 2 && !t->json; pass++) { /* measure, then write */
                size_t cap = pass ? t->json_len + 1 : 0;
                char *buf = pass ? malloc(cap) : NULL;
                if (pass && !buf)
                        break;
                t->json_len = tm_records_stats_json(t, dmg, buf, cap);
                t->json = buf;
        }
        pthread_mutex_unlock(&t->mu);
        if (!t->json)
                return tm_err_set(err, -ENOMEM, "%s: out of memory", t->path);
        *text = t->json;
        *len = t->json_len;
        return 0;
}

static int view_size(struct tm_trace *t, const char *view, uint64_t *size, struct tm_err *err)
{
        enum tm_view_kind kind = TM_VIEW_ASCII;
        const char *text;
        size_t len = 0;
        int rc;
        if (tm_trace_text_view(view, &kind)) {
                if (kind == TM_VIEW_ERRORS) {
                        char *e = tm_trace_errors_text(t, &len);
                        free(e);
                        *size = len;
                        return e ? 0 : tm_err_set(err, -ENOMEM, "%s: out of memory", t->path);
                }
                rc = tm_trace_index_ready(t, err);
                if (rc == 0)
                        rc = tm_trace_json_text(t, &text, &len, err);
                if (rc == 0)
                        *size = len;
                return rc;
        }
        rc = tm_trace_view_ready(t, view, err);
        if (rc == 0)
                rc = tm_records_view_size(t, view, size, err);
        kind = (enum tm_view_kind)tm_records_view_kind(t, view);
        /* the views decoded from records end with the damage (docs/damage.md) */
        if (rc == 0 && t->damaged && kind != TM_VIEW_STATS)
                *size += TM_DAMAGE_MARK;
        return rc;
}

/* Counted as a cursor while it runs (nvfiles): the index whose totals it
 * reads unlocked is replaced only while none exists
 * (trace_retry_if_changed). */
int tm_trace_view_size_strict(struct tm_trace *t, const char *view, uint64_t *size,
                              struct tm_err *err)
{
        __atomic_fetch_add(&t->nvfiles, 1, __ATOMIC_ACQ_REL);
        int rc = view_size(t, view, size, err);
        __atomic_fetch_sub(&t->nvfiles, 1, __ATOMIC_RELEASE);
        return rc;
}

int tm_trace_view_size(struct tm_trace *t, const char *view, uint64_t *size, struct tm_err *err)
{
        int rc = tm_trace_view_size_strict(t, view, size, err);
        if (rc < 0 && rc != -ENOENT) {
                pthread_mutex_lock(&t->mu);
                int failed = t->ix_state == TM_IX_FAILED;
                pthread_mutex_unlock(&t->mu);
                if (failed) { /* no index: a size that makes every read meet the error */
                        *size = TM_DAMAGE_MARK;
                        return 0;
                }
        }
        return rc;
}

/* ---- verify ---- */

/* The index file of this archive version, if one exists: 1 and *out, 0
 * if none, or a negative errno if one exists but is corrupt. */
static int verify_find_file(struct tm_trace *t, struct tm_index **out, char **path,
                            struct tm_err *err)
{
        struct tm_side_trust tr;
        struct tm_index_key key = trace_key(t, &tr);
        char *paths[IX_NPATHS];
        trace_ix_paths(t, paths);
        const int cache_fd = trace_cache_open(t, 0);
        int rc = 0;
        for (int i = 0; i < IX_NPATHS && rc == 0; i++) {
                if (!trace_ix_at(t, i, paths[i], &cache_fd, &key))
                        continue;
                int r = tm_records_load_file(t, paths[i], &key, out, err);
                if (r == 0 || (r != -ESTALE && r != -ENOENT && r != -EPERM)) {
                        rc = r == 0 ? 1 : r;
                        *path = paths[i];
                        paths[i] = NULL;
                }
        }
        if (cache_fd >= 0)
                close(cache_fd);
        trace_ix_paths_free(paths);
        return rc;
}

int tm_trace_verify(struct tm_trace *t, tm_progress_fn progress, void *arg, struct tm_err *err)
{
        const struct tm_err *failed = tm_records_open_error(t->rt);
        if (failed) {
                if (err)
                        *err = *failed;
                return failed->code;
        }
        struct tm_index *file = NULL;
        char *path = NULL;
        int rc = verify_find_file(t, &file, &path, err);
        if (rc >= 0)
                rc = tm_records_verify(t, file, path, progress, arg, err);
        tm_index_free(file);
        free(path);
        return rc;
}
