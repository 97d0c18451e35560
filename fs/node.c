#include "node.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#define FUSE_USE_VERSION 35
#include <fuse_log.h>

#include "codecs/common/tm_err.h"
#include "walk.h"

/* Bounds of the cache: entries (probe results, a few hundred bytes each);
 * entries with an opened trace (an fd and an index in memory each) are
 * bounded by node_set_bounds. */
#define NODE_BUCKETS 4096
#define NODE_MAX_ENTRIES 16384

struct node_trace {
        struct node_trace *next; /* hash chain */
        char *path;
        uint32_t hash;
        dev_t dev;
        ino_t ino;
        off_t size;
        struct timespec mtime;
        int is_trace;
        int in_table;
        int counted;   /* t is open and counted in node.nopen; under node.lock */
        unsigned refs; /* the table's own reference counts; under node.lock */
        uint64_t tick; /* last use, for eviction; under node.lock */
        uint64_t mem;  /* t's bytes when last idle, counted in node.open_bytes; under node.lock */

        pthread_mutex_t lock; /* guards the fields below */
        struct tm_trace *t;
        int open_err;
        uint64_t kept;              /* views opened once in this entry, bit per index */
        struct tm_members *members; /* t's, listed at the first lookup of members/ */
        int noted;                  /* the index's note (why it stays in memory) logged */
        char lastlog[TM_ERR_MSG];
};

static struct {
        pthread_mutex_t lock; /* the table, refs, ticks, counts */
        struct node_trace *bucket[NODE_BUCKETS];
        unsigned nentries;
        unsigned nopen;
        unsigned max_open;   /* node_set_bounds */
        uint64_t max_bytes;  /* node_set_bounds */
        uint64_t open_bytes; /* the mem of the counted entries */
        uint64_t tick;
        char src[PATH_MAX];
        size_t srclen;
        int rootfd; /* the source directory, opened once: every walk starts here */
        struct tm_trace_opts opts;
        void (*changed)(const char *mpath); /* node_set_change_hook */
} node = {.lock = PTHREAD_MUTEX_INITIALIZER,
          .rootfd = -1,
          .max_open = NODE_OPEN_DEFAULT,
          .max_bytes = (uint64_t)NODE_OPEN_MB_DEFAULT << 20};

static int node_lstat(const char *rel, struct stat *st);

static uint32_t node_hash(const char *s)
{
        uint32_t h = 2166136261u;
        for (; *s; s++)
                h = (h ^ (uint8_t)*s) * 16777619u;
        return h;
}

int node_init(const char *src, const struct tm_trace_opts *o)
{
        size_t n = strlen(src);
        if (n >= sizeof node.src)
                return -ENAMETOOLONG;
        int fd = open(n ? src : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        if (node.rootfd >= 0)
                close(node.rootfd);
        node.rootfd = fd;
        memcpy(node.src, src, n + 1);
        node.srclen = n;
        if (o)
                node.opts = *o;
        return 0;
}

/* The source path abs (node.src followed by '/' and the rest, or node.src
 * itself) relative to the source root: "" for the root. */
static const char *node_rel(const char *abs)
{
        return abs[node.srclen] ? abs + node.srclen + 1 : "";
}

static int node_same_object(const struct stat *a, const struct stat *b)
{
        return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* Open the regular file rel below the root for reading (O_NONBLOCK: a FIFO
 * swapped in is not waited on), through its directory, which *dirfd gets
 * (O_PATH) when dirfd is not NULL; *st gets the file's fstat. Returns the
 * descriptor or a negative errno as walk_open. */
static int node_open_file(const char *rel, struct stat *st, int *dirfd)
{
        const char *base;
        int dfd = walk_open_parent(node.rootfd, rel, &base);
        if (dfd < 0)
                return dfd;
        int fd = openat(dfd, base, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
        int e = fd < 0 ? -errno : 0;
        if (fd >= 0 && fstat(fd, st) < 0) {
                e = -errno;
                close(fd);
        }
        if (e < 0 || !dirfd)
                close(dfd);
        else
                *dirfd = dfd;
        return e < 0 ? e : fd;
}

static void node_free(struct node_trace *tr)
{
        tm_members_close(tr->members);
        if (tr->t)
                tm_trace_close(tr->t);
        pthread_mutex_destroy(&tr->lock);
        free(tr->path);
        free(tr);
}

/* tr's trace no longer counts in the bounds; node.lock held. */
static void node_uncount_locked(struct node_trace *tr)
{
        node.nopen--;
        node.open_bytes -= tr->mem;
        tr->mem = 0;
        tr->counted = 0;
}

/* Unlink tr from the table; node.lock held. Returns 1 if tr must be freed
 * by the caller (outside the lock). */
static int node_unlink_locked(struct node_trace *tr)
{
        struct node_trace **pp = &node.bucket[tr->hash % NODE_BUCKETS];
        while (*pp && *pp != tr)
                pp = &(*pp)->next;
        if (*pp)
                *pp = tr->next;
        tr->in_table = 0;
        node.nentries--;
        if (tr->counted)
                node_uncount_locked(tr);
        return --tr->refs == 0;
}

/* The least recently used entry nobody but the table holds, optionally
 * only among those with an opened trace; node.lock held. */
static struct node_trace *node_lru_locked(int with_trace)
{
        struct node_trace *best = NULL;
        for (unsigned b = 0; b < NODE_BUCKETS; b++)
                for (struct node_trace *e = node.bucket[b]; e; e = e->next) {
                        if (e->refs != 1 || (with_trace && !e->counted))
                                continue;
                        if (!best || e->tick < best->tick)
                                best = e;
                }
        return best;
}

void node_set_bounds(unsigned max_open, uint64_t max_bytes)
{
        pthread_mutex_lock(&node.lock);
        node.max_open = max_open ? max_open : 1;
        node.max_bytes = max_bytes;
        pthread_mutex_unlock(&node.lock);
}

/* Record what tr's trace holds now that nobody but the table holds tr
 * (so no other thread uses the trace: a new holder must take node.lock
 * first); node.lock held. */
static void node_weigh_locked(struct node_trace *tr)
{
        if (!tr->counted || tr->refs != 1)
                return;
        uint64_t m = tm_trace_memory(tr->t);
        node.open_bytes = node.open_bytes - tr->mem + m;
        tr->mem = m;
}

static int node_over_locked(void)
{
        return node.nopen > node.max_open || (node.open_bytes > node.max_bytes && node.nopen > 1);
}

/* Close the least recently used traces nobody holds while the open ones
 * are over a bound (count or bytes); node.lock held. Returns how many it
 * closed. Closing a trace of an entry nobody holds is safe: a new holder
 * must take node.lock first; the next access opens it again and loads its
 * index file (or builds the index again, when it has none). */
static unsigned node_close_over_locked(void)
{
        unsigned closed = 0;
        while (node_over_locked()) {
                struct node_trace *e = node_lru_locked(1);
                if (!e)
                        break;
                tm_members_close(e->members);
                e->members = NULL;
                tm_trace_close(e->t);
                e->t = NULL;
                e->kept = 0;
                node_uncount_locked(e);
                closed++;
        }
        return closed;
}

/* Keep the cache within its bounds; node.lock held. Returns the traces
 * it closed (the caller then calls tm_memory_trim, outside the lock). */
static unsigned node_evict_locked(void)
{
        unsigned closed = node_close_over_locked();
        if (node.nentries <= NODE_MAX_ENTRIES)
                return closed;
        while (node.nentries > NODE_MAX_ENTRIES / 8 * 7) {
                struct node_trace *e = node_lru_locked(0);
                if (!e)
                        break;
                if (node_unlink_locked(e))
                        node_free(e);
        }
        return closed;
}

static int node_same_identity(const struct node_trace *tr, const struct stat *st)
{
        return tr->dev == st->st_dev && tr->ino == st->st_ino && tr->size == st->st_size &&
               tr->mtime.tv_sec == st->st_mtim.tv_sec && tr->mtime.tv_nsec == st->st_mtim.tv_nsec;
}

void node_set_change_hook(void (*fn)(const char *mpath))
{
        node.changed = fn;
}

/* The source file path (absolute) changed: tell the hook its mount path. */
static void node_tell_changed(const char *path)
{
        if (node.changed)
                node.changed(path[node.srclen] ? path + node.srclen : "/");
}

static struct node_trace *node_find_locked(const char *path, uint32_t h)
{
        for (struct node_trace *e = node.bucket[h % NODE_BUCKETS]; e; e = e->next)
                if (e->hash == h && strcmp(e->path, path) == 0)
                        return e;
        return NULL;
}

/* Is the file of the new entry n a trace? Probed on a descriptor of the
 * object n names (dev, ino, size, mtime), walked to below the root; 0 if
 * another is there now (the next resolve sees it). */
static int node_probe(const struct node_trace *n)
{
        struct stat st;
        int fd = node_open_file(node_rel(n->path), &st, NULL);
        if (fd < 0)
                return 0;
        int is = node_same_identity(n, &st) && tm_probe_fd(fd, n->path, NULL, NULL) == 1;
        close(fd);
        return is;
}

/* The cache entry of the regular file path whose lstat is st, probing it
 * if it is new or changed. Returns a referenced entry or NULL (-ENOMEM). */
static struct node_trace *node_get(const char *path, const struct stat *st)
{
        uint32_t h = node_hash(path);
        struct node_trace *old = NULL;

        pthread_mutex_lock(&node.lock);
        struct node_trace *e = node_find_locked(path, h);
        if (e && node_same_identity(e, st)) {
                e->refs++;
                e->tick = ++node.tick;
                pthread_mutex_unlock(&node.lock);
                return e;
        }
        int changed = e != NULL;
        if (e && node_unlink_locked(e))
                old = e;
        pthread_mutex_unlock(&node.lock);
        if (old)
                node_free(old);
        if (changed)
                node_tell_changed(path);

        struct node_trace *n = calloc(1, sizeof *n);
        if (!n)
                return NULL;
        n->path = strdup(path);
        if (!n->path) {
                free(n);
                return NULL;
        }
        pthread_mutex_init(&n->lock, NULL);
        n->hash = h;
        n->dev = st->st_dev;
        n->ino = st->st_ino;
        n->size = st->st_size;
        n->mtime = st->st_mtim;
        n->is_trace = node_probe(n);
        n->refs = 2; /* the table's and the caller's */

        pthread_mutex_lock(&node.lock);
        e = node_find_locked(path, h);
        if (e && node_same_identity(e, st)) {
                /* another thread probed it meanwhile: use theirs */
                e->refs++;
                e->tick = ++node.tick;
                pthread_mutex_unlock(&node.lock);
                node_free(n);
                return e;
        }
        old = NULL;
        if (e && node_unlink_locked(e))
                old = e;
        n->next = node.bucket[h % NODE_BUCKETS];
        node.bucket[h % NODE_BUCKETS] = n;
        n->in_table = 1;
        n->tick = ++node.tick;
        node.nentries++;
        unsigned closed = node_evict_locked();
        pthread_mutex_unlock(&node.lock);
        if (old)
                node_free(old);
        if (closed)
                tm_memory_trim();
        return n;
}

void node_trace_get(struct node_trace *tr)
{
        pthread_mutex_lock(&node.lock);
        tr->refs++;
        pthread_mutex_unlock(&node.lock);
}

void node_trace_put(struct node_trace *tr)
{
        if (!tr)
                return;
        unsigned closed = 0;
        pthread_mutex_lock(&node.lock);
        int last = --tr->refs == 0;
        if (tr->refs == 1 && tr->in_table) {
                node_weigh_locked(tr);
                if (node_over_locked())
                        closed = node_evict_locked();
        }
        pthread_mutex_unlock(&node.lock);
        if (last)
                node_free(tr);
        if (closed)
                tm_memory_trim();
}

void node_res_put(struct node_res *r)
{
        node_trace_put(r->tr);
        r->tr = NULL;
        r->t = NULL;
        r->mem = NULL;
}

/* Prefix the message with the archive path unless it names it already. */
static void node_name_archive(struct node_trace *tr, struct tm_err *err)
{
        if (!strstr(err->msg, tr->path))
                tm_err_prefix(err, "%s", tr->path);
}

/* Log msg unless it is the last one logged through last (a buffer of at
 * least strlen(msg) + 1 bytes, guarded by mu): a failing path is asked
 * about again and again. */
static void node_log_once(pthread_mutex_t *mu, char *last, const char *msg)
{
        pthread_mutex_lock(mu);
        int repeat = strcmp(last, msg) == 0;
        if (!repeat)
                strcpy(last, msg);
        pthread_mutex_unlock(mu);
        if (!repeat)
                fuse_log(FUSE_LOG_ERR, "tracemount: %s\n", msg);
}

void node_trace_log(struct node_trace *tr, const struct tm_err *err)
{
        struct tm_err e = *err;
        if (!e.msg[0])
                snprintf(e.msg, sizeof e.msg, "error %d", e.code);
        node_name_archive(tr, &e);
        node_log_once(&tr->lock, tr->lastlog, e.msg);
}

void node_trace_note(struct node_trace *tr, struct tm_trace *t)
{
        const char *note = tm_trace_index_note(t);
        if (!note)
                return;
        pthread_mutex_lock(&tr->lock);
        int first = !tr->noted;
        tr->noted = 1;
        pthread_mutex_unlock(&tr->lock);
        if (first)
                fuse_log(FUSE_LOG_WARNING, "tracemount: %s: %s\n", tr->path, note);
}

/* Open tr's trace from its archive walked to below the root: -ESTALE,
 * with nothing remembered, when the object there is not the one tr names
 * (replaced since it was resolved: the next resolve makes a new entry).
 * Under tr->lock. */
static int node_trace_open_fd(struct node_trace *tr, struct tm_err *err)
{
        struct stat st;
        int dfd = -1;
        int fd = node_open_file(node_rel(tr->path), &st, &dfd);
        if (fd < 0)
                return tm_err_set(err, fd, "%s: %s", tr->path, strerror(-fd));
        int rc = node_same_identity(tr, &st) ? 0 : -ESTALE;
        if (rc == 0)
                rc = tm_trace_open_fd(fd, dfd, tr->path, &node.opts, &tr->t, err);
        close(fd);
        close(dfd);
        return rc;
}

int node_trace_open(struct node_trace *tr, struct tm_trace **t)
{
        struct tm_err err = {0};
        int opened = 0;

        int stale = 0;
        pthread_mutex_lock(&tr->lock);
        if (!tr->t && !tr->open_err) {
                int rc = node_trace_open_fd(tr, &err);
                if (rc == -ESTALE) {
                        stale = 1;
                } else if (rc < 0) {
                        tr->t = NULL;
                        tr->open_err = rc;
                } else {
                        opened = 1;
                }
        }
        *t = tr->t;
        int rc = tr->t ? 0 : stale ? -ESTALE : -EIO;
        pthread_mutex_unlock(&tr->lock);

        if (opened) {
                pthread_mutex_lock(&node.lock);
                unsigned closed = 0;
                if (tr->in_table && !tr->counted) {
                        tr->counted = 1;
                        node.nopen++;
                        closed = node_evict_locked();
                }
                pthread_mutex_unlock(&node.lock);
                if (closed)
                        tm_memory_trim();
        }
        if (rc < 0 && err.code)
                node_trace_log(tr, &err);
        if (opened && tm_trace_open_error(*t)) /* a damaged archive: say why once */
                node_trace_log(tr, tm_trace_open_error(*t));
        return rc;
}

int node_trace_changed(struct node_trace *tr)
{
        struct stat st;
        if (node_lstat(node_rel(tr->path), &st) == 0 && node_same_identity(tr, &st))
                return 0;
        node_tell_changed(tr->path);
        return 1;
}

int node_trace_keep_cache(struct node_trace *tr, unsigned idx)
{
        if (idx >= 64)
                return 0;
        pthread_mutex_lock(&tr->lock);
        int keep = (tr->kept >> idx) & 1;
        tr->kept |= UINT64_C(1) << idx;
        pthread_mutex_unlock(&tr->lock);
        return keep;
}

int node_hidden_name(const char *name)
{
        /* ".<archive>.tmidx", and ".<archive>.tmidx.XXXXXX" while one is
         * being written (views/index.c renames it into place) */
        size_t n = strlen(name);
        if (name[0] != '.')
                return 0;
        if (n > 7 && strcmp(name + n - 6, ".tmidx") == 0)
                return 1;
        return n > 14 && strncmp(name + n - 13, ".tmidx.", 7) == 0;
}

int node_view_index(struct tm_trace *t, const char *view)
{
        const char *const *v = tm_trace_views(t);
        for (int i = 0; v && v[i]; i++)
                if (strcmp(v[i], view) == 0)
                        return i;
        return -1;
}

int node_view_is_dir(struct tm_trace *t, const char *view)
{
        size_t n = strlen(view);
        if (n == 0)
                return 1;
        const char *const *v = tm_trace_views(t);
        for (int i = 0; v && v[i]; i++)
                if (strncmp(v[i], view, n) == 0 && v[i][n] == '/')
                        return 1;
        return 0;
}

/* view is "members" or below it in the trace r->t (open) of r->tr: list
 * the members if not yet done, and fill in the node's kind. */
static int node_resolve_member(struct node_res *r, const char *view)
{
        struct node_trace *tr = r->tr;
        struct tm_err err = {0};
        int rc = 0;
        pthread_mutex_lock(&tr->lock);
        if (!tr->members)
                rc = tm_members_open(r->t, &tr->members, &err);
        r->mem = tr->members;
        pthread_mutex_unlock(&tr->lock);
        if (rc < 0) {
                node_trace_log(tr, &err);
                node_res_put(r);
                return -EIO;
        }
        r->member = r->view + NODE_MEMBERS_LEN + (view[NODE_MEMBERS_LEN] == '/');
        switch (tm_members_find(r->mem, r->member, &r->msize)) {
        case 1:
                r->kind = NODE_MFILE;
                return 0;
        case 2:
                r->kind = NODE_MDIR;
                return 0;
        default:
                node_res_put(r);
                return -ENOENT;
        }
}

/* r->src names a regular file of the source tree: fill in its kind, and
 * for a trace with a non-empty view the view's kind. */
static int node_resolve_file(struct node_res *r, const char *view)
{
        struct node_trace *tr = node_get(r->src, &r->st);
        if (!tr)
                return -ENOMEM;
        if (!tr->is_trace) {
                node_trace_put(tr);
                if (*view)
                        return -ENOTDIR;
                r->kind = NODE_PASS;
                return 0;
        }
        r->tr = tr;
        if (!*view) {
                r->kind = NODE_TRACE;
                return 0;
        }
        if (strlen(view) >= sizeof r->view) {
                node_res_put(r);
                return -ENAMETOOLONG;
        }
        strcpy(r->view, view);
        int rc = node_trace_open(tr, &r->t);
        if (rc < 0) {
                node_res_put(r);
                return rc;
        }
        if (tm_trace_has_members(r->t) && strncmp(view, NODE_MEMBERS, NODE_MEMBERS_LEN) == 0 &&
            (view[NODE_MEMBERS_LEN] == '/' || !view[NODE_MEMBERS_LEN]))
                return node_resolve_member(r, view);
        tm_trace_view_lookup(r->t, view); /* views the index adds (view.h) */
        r->view_idx = node_view_index(r->t, view);
        if (r->view_idx >= 0) {
                r->kind = NODE_VFILE;
                return 0;
        }
        if (node_view_is_dir(r->t, view)) {
                r->kind = NODE_VDIR;
                return 0;
        }
        node_res_put(r);
        return -ENOENT;
}

/* The error a failed walk to src gives the kernel: what the path is
 * (missing, not a directory, not allowed, too long, a symlink where a
 * directory was: ELOOP) as is, one leaving the root (EXDEV) as missing;
 * the source failing (a network share gone: ENOTCONN, ESTALE, ...) as
 * EIO, as reads of views report it, and logged naming src (once in a row:
 * the kernel asks again and again). */
static int node_lstat_err(const char *src, int e)
{
        static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
        static char last[sizeof((struct node_res *)0)->src + 64];
        switch (e) {
        case ENOENT:
        case ENOTDIR:
        case EACCES:
        case EPERM:
        case ENAMETOOLONG:
        case ELOOP:
                return -e;
        case EXDEV:
                return -ENOENT;
        default: {
                char msg[sizeof last];
                snprintf(msg, sizeof msg, "%s: stat: %s", src, strerror(e));
                node_log_once(&mu, last, msg);
                return -EIO;
        }
        }
}

/* lstat of rel below the root, walked to with no symlink followed: the
 * entry itself when it is one. 0 or a positive errno. */
static int node_lstat(const char *rel, struct stat *st)
{
        int fd = walk_open(node.rootfd, rel, O_PATH);
        if (fd < 0)
                return -fd;
        int e = fstat(fd, st) == 0 ? 0 : errno;
        close(fd);
        return e;
}

int node_open_entry(const struct node_res *r, int flags)
{
        int fd = walk_open(node.rootfd, r->rel, flags);
        if (fd < 0)
                return node_lstat_err(r->src, -fd);
        struct stat st;
        int e = fstat(fd, &st) < 0 ? node_lstat_err(r->src, errno) : 0;
        if (e == 0 && !node_same_object(&st, &r->st))
                e = -ESTALE;
        if (e < 0) {
                close(fd);
                return e;
        }
        return fd;
}

int node_statvfs(struct statvfs *sv)
{
        return fstatvfs(node.rootfd, sv) == 0 ? 0 : node_lstat_err(node.src, errno);
}

/* The device the cached entry of the archive at src (a source path) was
 * on, or 0 when none is cached. */
static dev_t node_cached_dev(const char *src)
{
        uint32_t h = node_hash(src);
        pthread_mutex_lock(&node.lock);
        struct node_trace *e = node_find_locked(src, h);
        dev_t dev = e ? e->dev : 0;
        pthread_mutex_unlock(&node.lock);
        return dev;
}

/* A walk to r->src (path below the mount) found nothing (e: ENOENT). If
 * a prefix of it is an archive the cache knows and that
 * archive's directory is now on another device than the archive was, the
 * file system the archive was on went away under its directory (a share
 * unmounted when its client exited): -EIO, logged, rather than a missing
 * name, since the trace's directory was there a moment ago. Else -e. */
static int node_walk_missing(struct node_res *r, const char *path, int e)
{
        static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
        static char last[sizeof r->src + 96];
        size_t plen = strlen(path);
        for (size_t i = plen; i > 1; i--) {
                if (i < plen && path[i] != '/')
                        continue;
                char c = r->src[node.srclen + i];
                r->src[node.srclen + i] = '\0';
                dev_t dev = node_cached_dev(r->src);
                char *slash = dev ? strrchr(r->src, '/') : NULL;
                struct stat st;
                int moved = 0;
                if (slash) {
                        *slash = '\0';
                        moved = node_lstat(node_rel(r->src), &st) == 0 && st.st_dev != dev;
                        *slash = '/';
                }
                if (moved) {
                        char msg[sizeof last];
                        snprintf(msg, sizeof msg, "%s: stat: its file system is gone (%s)", r->src,
                                 strerror(e));
                        node_log_once(&mu, last, msg);
                }
                r->src[node.srclen + i] = c;
                if (dev)
                        return moved ? -EIO : -e;
        }
        return -e;
}

int node_resolve(const char *path, struct node_res *r)
{
        r->tr = NULL;
        r->t = NULL;
        r->mem = NULL;
        r->member = NULL;
        r->view[0] = '\0';
        r->view_idx = -1;
        if (path[0] != '/')
                return -EINVAL;
        size_t plen = strlen(path);
        if (plen == 1)
                plen = 0; /* the root: the source dir itself */
        if (node.srclen + plen >= sizeof r->src)
                return -ENAMETOOLONG;
        memcpy(r->src, node.src, node.srclen);
        memcpy(r->src + node.srclen, path, plen);
        r->src[node.srclen + plen] = '\0';
        r->rel = node_rel(r->src);

        int e = node_lstat(r->rel, &r->st);
        if (e == 0) {
                if (!S_ISREG(r->st.st_mode)) {
                        r->kind = NODE_PASS;
                        return 0;
                }
                return node_resolve_file(r, "");
        }
        if (e == ENOENT)
                return node_walk_missing(r, path, e);
        if (e != ENOTDIR)
                return node_lstat_err(r->src, e);

        /* Some component is not a directory: find the first one. If it is
         * a trace, the rest of the path is a view inside it. */
        for (size_t i = 1; i < plen; i++) {
                if (path[i] != '/')
                        continue;
                r->src[node.srclen + i] = '\0';
                if ((e = node_lstat(r->rel, &r->st)) != 0 && e != ENOENT)
                        return node_lstat_err(r->src, e);
                if (e) {
                        r->src[node.srclen + i] = '/';
                        return node_walk_missing(r, path, e);
                }
                if (S_ISDIR(r->st.st_mode)) {
                        r->src[node.srclen + i] = '/';
                        continue;
                }
                if (!S_ISREG(r->st.st_mode))
                        return -ENOTDIR;
                return node_resolve_file(r, path + i + 1);
        }
        return -ENOENT;
}

void node_fini(void)
{
        pthread_mutex_lock(&node.lock);
        for (unsigned b = 0; b < NODE_BUCKETS; b++) {
                struct node_trace *e = node.bucket[b];
                while (e) {
                        struct node_trace *next = e->next;
                        if (node_unlink_locked(e))
                                node_free(e);
                        e = next;
                }
        }
        pthread_mutex_unlock(&node.lock);
        if (node.rootfd >= 0)
                close(node.rootfd);
        node.rootfd = -1;
}
