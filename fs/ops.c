#include "ops.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "bdi.h"
#include "codecs/common/tm_err.h"
#include "codecs/common/tm_io.h"
#include "codecs/common/tm_tls.h"
#include "drop.h"
#include "inode.h"
#include "node.h"

/* Attributes and entries are cached by the kernel for this long, so that
 * archives replaced under the mount show up within about a second. */
#define OPS_TIMEOUT 1.0

/* readdir's d_ino when it is not the entry's node id (as libfuse's
 * high-level API gives it) */
#define OPS_UNKNOWN_INO 0xffffffffu

/* An open file: the source fd for pass-through files, or a view cursor. */
struct ops_file {
        int fd; /* pass-through, else -1 */
        struct node_trace *tr;
        pthread_mutex_t lock; /* serialises use of vf or mf */
        struct tm_vfile *vf;
        struct tm_member *mf;         /* a zip member, instead of vf */
        int cached;                   /* read through the page cache: drop-behind applies */
        struct drop_run run;          /* see drop.h */
        struct ops_file *prev, *next; /* ops_open_files: handles not yet released */
};

/* Every handle not yet released. At unmount the kernel may end the session
 * with RELEASE requests still unanswered (a reader killed while its reads
 * were in flight): ops_destroy frees what is left, so the traces they hold
 * are closed before node_fini. */
static struct {
        pthread_mutex_t lock;
        struct ops_file *head;
} ops_open_files = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void ops_file_link(struct ops_file *f)
{
        pthread_mutex_lock(&ops_open_files.lock);
        f->prev = NULL;
        f->next = ops_open_files.head;
        if (f->next)
                f->next->prev = f;
        ops_open_files.head = f;
        pthread_mutex_unlock(&ops_open_files.lock);
}

/* An open directory: its names, listed at opendir, served by offset. */
struct ops_dir {
        size_t n, used, cap;
        size_t *at;  /* offset of name i in names */
        char *names; /* NUL-terminated, one after another */
};

/* Read-only mode bits for a node made from the source's mode: what can be
 * read can be listed (directories get x where r is set). */
static mode_t ops_mode(mode_t src, int dir)
{
        mode_t r = src & 0444;
        if (dir)
                return S_IFDIR | r | (r >> 2);
        return S_IFREG | r;
}

static void ops_trace_attr(const struct node_res *r, struct stat *st, int dir)
{
        *st = r->st;
        st->st_mode = ops_mode(r->st.st_mode, dir);
        st->st_nlink = dir ? 2 : 1;
        st->st_size = 0;
        st->st_blocks = 0;
        st->st_blksize = 1 << 20;
}

/* The version of what r stands for (inode.h ino_ref_ver): for a trace's
 * nodes its archive's identity (device, inode, size, modification time),
 * never 0; 0 for the source's own entries (their pages are the kernel's
 * to refresh: FUSE_CAP_AUTO_INVAL_DATA). */
static uint64_t ops_version(const struct node_res *r)
{
        if (r->kind == NODE_PASS)
                return 0;
        const uint64_t v[] = {(uint64_t)r->st.st_dev, (uint64_t)r->st.st_ino,
                              (uint64_t)r->st.st_size, (uint64_t)r->st.st_mtim.tv_sec,
                              (uint64_t)r->st.st_mtim.tv_nsec};
        uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a over the fields */
        for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
                for (int b = 0; b < 64; b += 8)
                        h = (h ^ ((v[i] >> b) & 0xff)) * 0x100000001b3ull;
        return h ? h : 1;
}

/* The stat of path (absolute, under the mount) as the mount shows it, and
 * its version (ops_version) into *ver. */
static int ops_stat(const char *path, struct stat *st, uint64_t *ver)
{
        struct node_res r;
        int rc = node_resolve(path, &r);
        if (rc < 0)
                return rc;
        *ver = ops_version(&r);
        switch (r.kind) {
        case NODE_PASS:
                *st = r.st;
                st->st_mode &= ~(mode_t)0222;
                break;
        case NODE_TRACE:
        case NODE_VDIR:
        case NODE_MDIR:
                ops_trace_attr(&r, st, 1);
                break;
        case NODE_MFILE:
                ops_trace_attr(&r, st, 0);
                st->st_size = (off_t)r.msize;
                st->st_blocks = (blkcnt_t)((r.msize + 511) / 512);
                break;
        case NODE_VFILE: {
                struct tm_err err = {0};
                uint64_t size;
                rc = tm_trace_view_size(r.t, r.view, &size, &err);
                if (rc < 0) {
                        node_trace_log(r.tr, &err);
                        rc = rc == -ENOENT ? -ENOENT : -EIO;
                        break;
                }
                node_trace_note(r.tr, r.t);
                ops_trace_attr(&r, st, 0);
                st->st_size = (off_t)size;
                st->st_blocks = (blkcnt_t)((size + 511) / 512);
                break;
        }
        }
        node_res_put(&r);
        return rc;
}

/* The path of node ino into path (PATH_MAX); replies the error if none. */
static int ops_path(fuse_req_t req, fuse_ino_t ino, char *path)
{
        int rc = ino_path(ino, path, PATH_MAX);
        if (rc < 0)
                fuse_reply_err(req, -rc);
        return rc;
}

/* node_resolve of ino's path for an open: -ESTALE when the source object
 * there is not the one the kernel was last told ino stands for (it
 * checked the caller's permissions against that one's attributes; the
 * kernel then looks the path up again and retries once). */
static int ops_resolve_told(fuse_ino_t ino, const char *path, struct node_res *r)
{
        int rc = node_resolve(path, r);
        if (rc < 0)
                return rc;
        if (ino_same_object(ino, r->st.st_dev, r->st.st_ino) == 0 ||
            ino_same_version(ino, ops_version(r)) == 0) {
                node_res_put(r);
                return -ESTALE;
        }
        return 0;
}

static void ops_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
        char path[PATH_MAX];
        if (ops_path(req, parent, path) < 0)
                return;
        size_t n = strlen(path), len = strlen(name);
        if (len > NAME_MAX || n + 1 + len >= sizeof path) {
                fuse_reply_err(req, ENAMETOOLONG);
                return;
        }
        if (n > 1)
                path[n++] = '/';
        memcpy(path + n, name, len + 1);
        struct fuse_entry_param e = {0};
        uint64_t ver = 0;
        int rc = ops_stat(path, &e.attr, &ver);
        if (rc == 0 && (e.ino = ino_ref_ver(path, ver)) == 0)
                rc = -ENOMEM;
        if (rc < 0) {
                fuse_reply_err(req, -rc);
                return;
        }
        ino_set_object(e.ino, &e.attr);
        e.attr.st_ino = e.ino;
        e.attr_timeout = e.entry_timeout = OPS_TIMEOUT;
        if (fuse_reply_entry(req, &e) != 0)
                ino_forget(e.ino, 1); /* the kernel never got it */
}

static void ops_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
        ino_forget(ino, nlookup);
        fuse_reply_none(req);
}

static void ops_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *forgets)
{
        for (size_t i = 0; i < count; i++)
                ino_forget(forgets[i].ino, forgets[i].nlookup);
        fuse_reply_none(req);
}

static void ops_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
        (void)fi;
        char path[PATH_MAX];
        struct stat st;
        if (ops_path(req, ino, path) < 0)
                return;
        uint64_t ver = 0;
        int rc = ops_stat(path, &st, &ver);
        /* Another version of the archive is at the path now, or a file
         * that is no trace (mid-rewrite): a trace's node (version not 0)
         * stays what it was told to be, so that its open files keep their
         * size (their reads fail: the archive changed) and an open through
         * it passes the kernel's permission check and gets -ESTALE from
         * ops_resolve_told, after which the kernel looks the name up again
         * and gets the new version's node (ino_ref_ver). -ESTALE: the
         * archive changed between the stat and the trace's open, the same
         * case; never the answer to a getattr (fstat of an open file). */
        int other = rc == 0 ? ino_same_version(ino, ver) == 0
                            : rc == -ESTALE || (rc == -ENOTDIR && ino_same_version(ino, 0) == 0);
        struct stat told;
        if (other && ino_told_attr(ino, &told) == 1) {
                told.st_ino = ino;
                fuse_reply_attr(req, &told, OPS_TIMEOUT);
                return;
        }
        if (rc < 0) {
                fuse_reply_err(req, rc == -ESTALE ? EIO : -rc);
                return;
        }
        ino_set_object(ino, &st);
        st.st_ino = ino;
        fuse_reply_attr(req, &st, OPS_TIMEOUT);
}

static void ops_readlink(fuse_req_t req, fuse_ino_t ino)
{
        char path[PATH_MAX], buf[PATH_MAX];
        if (ops_path(req, ino, path) < 0)
                return;
        struct node_res r;
        int rc = ops_resolve_told(ino, path, &r);
        if (rc == 0) {
                node_res_put(&r);
                /* the symlink itself, reached with none followed */
                int fd = r.kind == NODE_PASS ? node_open_entry(&r, O_PATH) : -EINVAL;
                ssize_t n = fd < 0 ? (errno = -fd, -1) : readlinkat(fd, "", buf, sizeof buf - 1);
                rc = n < 0 ? -errno : 0;
                if (n >= 0)
                        buf[n] = '\0';
                if (fd >= 0)
                        close(fd);
        }
        if (rc < 0)
                fuse_reply_err(req, -rc);
        else
                fuse_reply_readlink(req, buf);
}

/* Once, at the first open: FUSE_INIT has been answered by then, so the
 * kernel will not lower the value again (see bdi.h). Without the right
 * (not root) the kernel's value stays, quietly: --help says so. */
static void ops_read_ahead_once(const struct tmfs_conf *conf)
{
        static atomic_int done;
        if (atomic_load_explicit(&done, memory_order_relaxed) || atomic_exchange(&done, 1))
                return; /* every later open: one load */
        if (!conf || !conf->read_ahead_kb || !conf->mnt)
                return;
        int rc = bdi_set_read_ahead(conf->mnt, conf->read_ahead_kb);
        if (rc < 0 && rc != -EACCES && rc != -EPERM && rc != -EROFS)
                fuse_log(FUSE_LOG_WARNING, "tracemount: cannot set the readahead of %s: %s\n",
                         conf->mnt, strerror(-rc));
}

static void ops_file_free(struct ops_file *f)
{
        pthread_mutex_lock(&ops_open_files.lock);
        if (f->prev)
                f->prev->next = f->next;
        else if (ops_open_files.head == f)
                ops_open_files.head = f->next;
        if (f->next)
                f->next->prev = f->prev;
        pthread_mutex_unlock(&ops_open_files.lock);
        if (f->fd >= 0) {
                close(f->fd);
        } else {
                tm_vfile_close(f->vf);
                tm_member_close(f->mf);
                pthread_mutex_destroy(&f->lock);
                node_trace_put(f->tr);
        }
        free(f);
}

/* An open of view vf (r's) through node ino, whose size the kernel was
 * told: -ESTALE when that size is not the view's (the archive changed
 * since the kernel was told: it looks the name up again, learns the new
 * size, and retries the open once), else 0. Views whose size changes
 * while the trace is open (tm_vfile_volatile: errors) are not checked. */
static int ops_open_told_size(fuse_ino_t ino, const struct node_res *r, const struct tm_vfile *vf)
{
        uint64_t told, size;
        struct tm_err err = {0};
        if (tm_vfile_volatile(vf) || ino_told_size(ino, &told) != 1)
                return 0;
        if (tm_trace_view_size(r->t, r->view, &size, &err) < 0)
                return 0; /* its reads say why */
        return size == told ? 0 : -ESTALE;
}

/* Open path, node ino, for reading into a new handle in fi. 0 or a
 * negative errno. */
static int ops_open_path(fuse_ino_t ino, const char *path, struct fuse_file_info *fi,
                         const struct tmfs_conf *conf)
{
        struct node_res r;
        int rc = ops_resolve_told(ino, path, &r);
        if (rc < 0)
                return rc;
        if (r.kind == NODE_TRACE || r.kind == NODE_VDIR || r.kind == NODE_MDIR) {
                node_res_put(&r);
                return -EISDIR;
        }
        struct ops_file *f = calloc(1, sizeof *f);
        if (!f) {
                node_res_put(&r);
                return -ENOMEM;
        }
        f->fd = -1;
        if (r.kind == NODE_PASS) {
                /* Regular files only: a FIFO would block a worker and a
                 * device would be opened with the daemon's rights. The
                 * walk follows no symlink and the object must be the one
                 * resolved (node_open_entry). */
                f->fd =
                    S_ISREG(r.st.st_mode) ? node_open_entry(&r, O_RDONLY | O_NONBLOCK) : -EACCES;
                struct stat st;
                if (f->fd >= 0 && (fstat(f->fd, &st) < 0 || !S_ISREG(st.st_mode))) {
                        close(f->fd);
                        f->fd = -EACCES;
                }
                if (f->fd < 0) {
                        rc = f->fd;
                        free(f);
                        return rc;
                }
                fi->keep_cache = 0;
                f->cached = 1;
                ops_file_link(f);
                fi->fh = (uintptr_t)f;
                return 0;
        }
        struct tm_err err = {0};
        if (r.kind == NODE_MFILE)
                rc = tm_member_open(r.t, r.mem, r.member, &f->mf, &err);
        else
                rc = tm_vfile_open(r.t, r.view, &f->vf, &err);
        if (rc < 0) {
                node_trace_log(r.tr, &err);
                node_res_put(&r);
                free(f);
                return rc == -ENOENT ? -ENOENT : -EIO;
        }
        if (f->vf && (rc = ops_open_told_size(ino, &r, f->vf)) < 0) {
                tm_vfile_close(f->vf);
                node_res_put(&r);
                free(f);
                return rc;
        }
        pthread_mutex_init(&f->lock, NULL);
        f->tr = r.tr; /* the reference moves to the handle */
        f->cached = !(conf && conf->direct_io) && (f->mf || !tm_vfile_volatile(f->vf));
        if (f->cached && f->mf)
                fi->keep_cache = 0; /* read afresh at each open: not among the kept views */
        else if (f->cached)
                fi->keep_cache = node_trace_keep_cache(r.tr, (unsigned)r.view_idx);
        else
                fi->direct_io = 1;
        ops_file_link(f);
        fi->fh = (uintptr_t)f;
        return 0;
}

static void ops_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
        char path[PATH_MAX];
        if ((fi->flags & O_ACCMODE) != O_RDONLY) {
                fuse_reply_err(req, EROFS);
                return;
        }
        const struct tmfs_conf *conf = fuse_req_userdata(req);
        ops_read_ahead_once(conf);
        if (ops_path(req, ino, path) < 0)
                return;
        int rc = ops_open_path(ino, path, fi, conf);
        if (rc < 0)
                fuse_reply_err(req, -rc);
        else if (fuse_reply_open(req, fi) != 0)
                ops_file_free((struct ops_file *)(uintptr_t)fi->fh); /* interrupted */
}

/* Account a read of n bytes at off for drop-behind. Call it before the
 * reply: once that has gone, a release on another thread may free f. */
static void ops_note_read(struct ops_file *f, fuse_ino_t ino, off_t off, size_t n)
{
        if (f->cached)
                drop_note(&f->run, ino, (uint64_t)off, (uint64_t)n);
}

/* A view's read of node ino met the view's end at end. The kernel holds
 * the size it was last told as the file's size: an end inside it is not
 * the end of the file but another version's (the archive changed since,
 * and the handle is of the other version): -EIO, with err saying so, so
 * that no reader takes it for the end and the kernel does not cut the
 * file's size there. Else 0. Views whose size changes while the trace
 * is open (tm_vfile_volatile: errors) end where they end. */
static int ops_read_end(fuse_ino_t ino, const struct ops_file *f, uint64_t end, struct tm_err *err)
{
        uint64_t told;
        if (f->mf || tm_vfile_volatile(f->vf) || ino_told_size(ino, &told) != 1 || end >= told)
                return 0;
        return tm_err_set(err, -EIO,
                          "view offset %llu: the view ends there, inside the size of %llu bytes "
                          "the kernel was given: the archive changed, reopen it",
                          (unsigned long long)end, (unsigned long long)told);
}

/* Read by copying: pass-through files, and views when tm_vfile_peek
 * cannot serve the bytes in place. */
static void ops_read_copy(fuse_req_t req, fuse_ino_t ino, struct ops_file *f, size_t size,
                          off_t off)
{
        char *buf = malloc(size ? size : 1);
        if (!buf) {
                fuse_reply_err(req, ENOMEM);
                return;
        }
        ssize_t done = 0;
        if (f->fd >= 0) {
                /* An error fails the whole request, as for views below: a
                 * short reply would read as the end of the file. */
                done = tm_pread_full(f->fd, buf, size, (uint64_t)off);
        } else {
                struct tm_err err = {0};
                pthread_mutex_lock(&f->lock);
                while ((size_t)done < size) {
                        char *at = buf + done;
                        size_t want = size - (size_t)done;
                        uint64_t pos = (uint64_t)off + (size_t)done;
                        ssize_t n = f->mf ? tm_member_pread(f->mf, at, want, pos, &err)
                                          : tm_vfile_pread(f->vf, at, want, pos, &err);
                        /* The whole request fails even if some bytes came
                         * first: a short reply would read as the end of the
                         * file to the kernel, hiding the damage. */
                        if (n < 0) {
                                done = -EIO;
                                break;
                        }
                        if (n == 0)
                                break;
                        done += n;
                }
                pthread_mutex_unlock(&f->lock);
                if (done >= 0 && (size_t)done < size &&
                    ops_read_end(ino, f, (uint64_t)off + (uint64_t)done, &err) < 0)
                        done = -EIO;
                if (done < 0) {
                        node_trace_log(f->tr, &err);
                        (void)node_trace_changed(f->tr); /* then the kernel drops the old */
                }
        }
        if (done < 0) {
                fuse_reply_err(req, (int)-done);
        } else {
                ops_note_read(f, ino, off, (size_t)done);
                fuse_reply_buf(req, buf, (size_t)done);
        }
        free(buf);
}

/* A sequential reader's bytes are usually decoded ahead already: the reply
 * is written to the kernel straight from the read-ahead's buffers, held
 * until it has gone (no copy into a reply buffer first). */
static void ops_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
                     struct fuse_file_info *fi)
{
        struct ops_file *f = (struct ops_file *)(uintptr_t)fi->fh;
        if (off < 0) {
                fuse_reply_err(req, EINVAL);
                return;
        }
        if (size > INT_MAX)
                size = INT_MAX;
        if (f->vf) {
                struct tm_vspan sp;
                pthread_mutex_lock(&f->lock);
                ssize_t n = tm_vfile_peek(f->vf, size, (uint64_t)off, &sp);
                pthread_mutex_unlock(&f->lock);
                if (n > 0) {
                        ops_note_read(f, ino, off, (size_t)n);
                        fuse_reply_iov(req, sp.iov, (int)sp.n);
                        tm_vfile_unpeek(&sp);
                        return;
                }
        }
        ops_read_copy(req, ino, f, size, off);
        tm_tls_release(); /* an idle worker holds no decode buffers */
}

static void ops_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
        (void)ino;
        ops_file_free((struct ops_file *)(uintptr_t)fi->fh);
        fuse_reply_err(req, 0);
}

/* Append name to d. 0 or -ENOMEM. */
static int ops_dir_add(struct ops_dir *d, const char *name, size_t len)
{
        if (d->n % 64 == 0) {
                size_t *at = realloc(d->at, (d->n + 64) * sizeof *at);
                if (!at)
                        return -ENOMEM;
                d->at = at;
        }
        if (d->used + len + 1 > d->cap) {
                size_t cap = d->cap ? d->cap * 2 : 4096;
                while (cap < d->used + len + 1)
                        cap *= 2;
                char *names = realloc(d->names, cap);
                if (!names)
                        return -ENOMEM;
                d->names = names;
                d->cap = cap;
        }
        d->at[d->n++] = d->used;
        memcpy(d->names + d->used, name, len);
        d->names[d->used + len] = '\0';
        d->used += len + 1;
        return 0;
}

static void ops_dir_free(struct ops_dir *d)
{
        if (d) {
                free(d->at);
                free(d->names);
                free(d);
        }
}

/* The names of the source directory r names, opened with none of the
 * path's symlinks followed (node_open_entry). */
static int ops_list_source_dir(const struct node_res *r, struct ops_dir *d)
{
        int fd = node_open_entry(r, O_RDONLY | O_DIRECTORY);
        if (fd < 0)
                return fd;
        DIR *dir = fdopendir(fd);
        if (!dir) {
                int e = -errno;
                close(fd);
                return e;
        }
        struct dirent *de;
        int rc = 0;
        errno = 0;
        while (rc == 0 && (de = readdir(dir)) != NULL)
                if (!node_hidden_name(de->d_name))
                        rc = ops_dir_add(d, de->d_name, strlen(de->d_name));
        if (rc == 0 && errno)
                rc = -errno;
        closedir(dir);
        return rc;
}

/* View v's name below view dir (n bytes; "" holds every view), or NULL
 * when v is not under dir. */
static const char *ops_view_under(const char *v, const char *dir, size_t n)
{
        if (!n)
                return v;
        return strncmp(v, dir, n) == 0 && v[n] == '/' ? v + n + 1 : NULL;
}

/* The names directly under view dir (prefix "" for the trace's own dir). */
static int ops_list_view_dir(struct tm_trace *t, const char *dir, struct ops_dir *d)
{
        size_t n = strlen(dir);
        if (n)
                tm_trace_view_lookup(t, dir); /* streams/: the per-id directories */
        const char *const *v = tm_trace_views(t);
        int rc = ops_dir_add(d, ".", 1);
        if (rc == 0)
                rc = ops_dir_add(d, "..", 2);
        for (int i = 0; rc == 0 && v && v[i]; i++) {
                const char *p = ops_view_under(v[i], dir, n);
                if (!p)
                        continue;
                size_t len = strcspn(p, "/");
                if (len == 0 || len > NAME_MAX)
                        continue;
                /* a directory shows once however many views it holds */
                int seen = 0;
                for (int j = 0; j < i && !seen; j++) {
                        const char *q = ops_view_under(v[j], dir, n);
                        seen = q && strncmp(q, p, len) == 0 && (q[len] == '/' || !q[len]);
                }
                if (!seen)
                        rc = ops_dir_add(d, p, len);
        }
        return rc;
}

/* The trace's own directory: its views, and a zip trace's "members"
 * (listed only when it is looked up). */
static int ops_list_trace_dir(struct tm_trace *t, struct ops_dir *d)
{
        int rc = ops_list_view_dir(t, "", d);
        if (rc == 0 && tm_trace_has_members(t))
                rc = ops_dir_add(d, NODE_MEMBERS, NODE_MEMBERS_LEN);
        return rc;
}

/* The trace r resolved to, opened if not yet: its directory's names, or
 * node_trace_open's -EIO or -ESTALE (the archive replaced since). */
static int ops_list_trace(struct node_res *r, struct ops_dir *d)
{
        int rc = node_trace_open(r->tr, &r->t);
        return rc < 0 ? rc : ops_list_trace_dir(r->t, d);
}

static int ops_member_name(void *arg, const char *name, int is_dir)
{
        (void)is_dir;
        return ops_dir_add(arg, name, strlen(name));
}

/* The names directly under dir of a zip trace's members. */
static int ops_list_member_dir(const struct node_res *r, struct ops_dir *d)
{
        int rc = ops_dir_add(d, ".", 1);
        if (rc == 0)
                rc = ops_dir_add(d, "..", 2);
        return rc == 0 ? tm_members_list(r->mem, r->member, ops_member_name, d) : rc;
}

/* A directory's names are listed once, at opendir, and readdir serves
 * them by offset (an index into the list). */
static void ops_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
        char path[PATH_MAX];
        if (ops_path(req, ino, path) < 0)
                return;
        struct node_res r;
        int rc = ops_resolve_told(ino, path, &r);
        if (rc < 0) {
                fuse_reply_err(req, -rc);
                return;
        }
        struct ops_dir *d = calloc(1, sizeof *d);
        if (!d)
                rc = -ENOMEM;
        else if (r.kind == NODE_PASS)
                rc = S_ISDIR(r.st.st_mode) ? ops_list_source_dir(&r, d) : -ENOTDIR;
        else if (r.kind == NODE_TRACE)
                rc = ops_list_trace(&r, d);
        else if (r.kind == NODE_MDIR)
                rc = ops_list_member_dir(&r, d);
        else if (r.kind == NODE_VDIR)
                rc = ops_list_view_dir(r.t, r.view, d);
        else
                rc = -ENOTDIR;
        node_res_put(&r);
        if (rc < 0) {
                ops_dir_free(d);
                fuse_reply_err(req, -rc);
                return;
        }
        fi->fh = (uintptr_t)d;
        if (fuse_reply_open(req, fi) != 0)
                ops_dir_free(d);
}

static void ops_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
                        struct fuse_file_info *fi)
{
        (void)ino;
        const struct ops_dir *d = (const struct ops_dir *)(uintptr_t)fi->fh;
        char *buf = malloc(size ? size : 1);
        if (!buf) {
                fuse_reply_err(req, ENOMEM);
                return;
        }
        struct stat st = {.st_ino = OPS_UNKNOWN_INO};
        size_t used = 0;
        for (size_t i = off < 0 ? 0 : (size_t)off; i < d->n; i++) {
                size_t k = fuse_add_direntry(req, buf + used, size - used, d->names + d->at[i], &st,
                                             (off_t)(i + 1));
                if (k > size - used)
                        break;
                used += k;
        }
        fuse_reply_buf(req, buf, used);
        free(buf);
}

static void ops_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
        (void)ino;
        ops_dir_free((struct ops_dir *)(uintptr_t)fi->fh);
        fuse_reply_err(req, 0);
}

static void ops_statfs(fuse_req_t req, fuse_ino_t ino)
{
        (void)ino;
        struct statvfs sv;
        int rc = node_statvfs(&sv);
        if (rc < 0) {
                fuse_reply_err(req, -rc);
                return;
        }
        sv.f_flag |= ST_RDONLY;
        fuse_reply_statfs(req, &sv);
}

static void ops_init(void *userdata, struct fuse_conn_info *conn)
{
        (void)userdata;
        /* Large requests: libfuse offers the kernel max_pages from
         * max_write, and its buffers hold FUSE_MAX_MAX_PAGES (256) pages, so
         * reads of up to 1 MiB reach us in one request. max_read 0 means
         * no limit of ours; max_readahead can only lower the kernel's value,
         * so keep the largest it offered. */
        conn->max_read = 0;
        conn->max_write = 1 << 20;
        if (conn->capable & FUSE_CAP_AUTO_INVAL_DATA)
                conn->want |= FUSE_CAP_AUTO_INVAL_DATA;
        if (conn->capable & FUSE_CAP_ASYNC_READ)
                conn->want |= FUSE_CAP_ASYNC_READ;
        if (conn->capable & FUSE_CAP_PARALLEL_DIROPS)
                conn->want |= FUSE_CAP_PARALLEL_DIROPS;
}

static void ops_destroy(void *userdata)
{
        (void)userdata;
        /* the session's threads have ended: no request uses these now */
        while (ops_open_files.head)
                ops_file_free(ops_open_files.head);
        node_fini();
}

const struct fuse_lowlevel_ops tmfs_ops = {
    .init = ops_init,
    .destroy = ops_destroy,
    .lookup = ops_lookup,
    .forget = ops_forget,
    .forget_multi = ops_forget_multi,
    .getattr = ops_getattr,
    .readlink = ops_readlink,
    .open = ops_open,
    .read = ops_read,
    .release = ops_release,
    .opendir = ops_opendir,
    .readdir = ops_readdir,
    .releasedir = ops_releasedir,
    .statfs = ops_statfs,
};
