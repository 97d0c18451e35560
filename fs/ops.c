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

#include "codecs/tm_io.h"
#include "bdi.h"
#include "node.h"

/* Attributes and entries are cached by the kernel for this long, so that
 * archives replaced under the mount show up within about a second. */
#define OPS_TIMEOUT 1.0

/* An open file: the source fd for pass-through files, or a view cursor. */
struct ops_file {
        int fd; /* pass-through, else -1 */
        struct node_trace *tr;
        pthread_mutex_t lock; /* serialises use of vf */
        struct tm_vfile *vf;
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

static int ops_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
        (void)fi;
        struct node_res r;
        int rc = node_resolve(path, &r);
        if (rc < 0)
                return rc;
        switch (r.kind) {
        case NODE_PASS:
                *st = r.st;
                st->st_mode &= ~(mode_t)0222;
                break;
        case NODE_TRACE:
        case NODE_VDIR:
                ops_trace_attr(&r, st, 1);
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
                ops_trace_attr(&r, st, 0);
                st->st_size = (off_t)size;
                st->st_blocks = (blkcnt_t)((size + 511) / 512);
                break;
        }
        }
        node_res_put(&r);
        return rc;
}

static int ops_readlink(const char *path, char *buf, size_t size)
{
        struct node_res r;
        int rc = node_resolve(path, &r);
        if (rc < 0)
                return rc;
        node_res_put(&r);
        if (r.kind != NODE_PASS)
                return -EINVAL;
        ssize_t n = readlink(r.src, buf, size - 1);
        if (n < 0)
                return -errno;
        buf[n] = '\0';
        return 0;
}

/* Once, at the first open: FUSE_INIT has been answered by then, so the
 * kernel will not lower the value again (see bdi.h). Without the right
 * (not root) the kernel's value stays, quietly: --help says so. */
static void ops_read_ahead_once(void)
{
        static atomic_int done;
        if (atomic_load_explicit(&done, memory_order_relaxed) || atomic_exchange(&done, 1))
                return; /* every later open: one load */
        const struct tmfs_conf *conf = fuse_get_context()->private_data;
        if (!conf || !conf->read_ahead_kb || !conf->mnt)
                return;
        int rc = bdi_set_read_ahead(conf->mnt, conf->read_ahead_kb);
        if (rc < 0 && rc != -EACCES && rc != -EPERM && rc != -EROFS)
                fuse_log(FUSE_LOG_WARNING, "tracemount: cannot set the readahead of %s: %s\n",
                         conf->mnt, strerror(-rc));
}

static int ops_open(const char *path, struct fuse_file_info *fi)
{
        if ((fi->flags & O_ACCMODE) != O_RDONLY)
                return -EROFS;
        ops_read_ahead_once();
        struct node_res r;
        int rc = node_resolve(path, &r);
        if (rc < 0)
                return rc;
        if (r.kind == NODE_TRACE || r.kind == NODE_VDIR) {
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
                 * device would be opened with the daemon's rights. No
                 * symlink either, in case the file was swapped for one
                 * since it was looked up. */
                f->fd = S_ISREG(r.st.st_mode)
                            ? open(r.src, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
                            : (errno = EACCES, -1);
                struct stat st;
                if (f->fd >= 0 && (fstat(f->fd, &st) < 0 || !S_ISREG(st.st_mode))) {
                        close(f->fd);
                        f->fd = -1;
                        errno = EACCES;
                }
                if (f->fd < 0) {
                        rc = -errno;
                        free(f);
                        return rc;
                }
                fi->keep_cache = 0;
                fi->fh = (uintptr_t)f;
                return 0;
        }
        struct tm_err err = {0};
        rc = tm_vfile_open(r.t, r.view, &f->vf, &err);
        if (rc < 0) {
                node_trace_log(r.tr, &err);
                node_res_put(&r);
                free(f);
                return rc == -ENOENT ? -ENOENT : -EIO;
        }
        pthread_mutex_init(&f->lock, NULL);
        f->tr = r.tr; /* the reference moves to the handle */
        const struct tmfs_conf *conf = fuse_get_context()->private_data;
        if (conf && conf->direct_io)
                fi->direct_io = 1;
        else
                fi->keep_cache = node_trace_keep_cache(r.tr, (unsigned)r.view_idx);
        fi->fh = (uintptr_t)f;
        return 0;
}

static int ops_read(const char *path, char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
        (void)path;
        struct ops_file *f = (struct ops_file *)(uintptr_t)fi->fh;
        if (off < 0)
                return -EINVAL;
        if (size > INT_MAX)
                size = INT_MAX;
        if (f->fd >= 0) {
                /* An error fails the whole request, as for views below: a
                 * short reply would read as the end of the file. */
                ssize_t n = tm_pread_full(f->fd, buf, size, (uint64_t)off);
                return (int)n;
        }

        struct tm_err err = {0};
        size_t done = 0;
        pthread_mutex_lock(&f->lock);
        while (done < size) {
                ssize_t n =
                    tm_vfile_pread(f->vf, buf + done, size - done, (uint64_t)off + done, &err);
                /* The whole request fails even if some bytes came first: a
                 * short reply would read as the end of the file to the
                 * kernel, hiding the damage. */
                if (n < 0) {
                        pthread_mutex_unlock(&f->lock);
                        node_trace_log(f->tr, &err);
                        return -EIO;
                }
                if (n == 0)
                        break;
                done += (size_t)n;
        }
        pthread_mutex_unlock(&f->lock);
        return (int)done;
}

static int ops_release(const char *path, struct fuse_file_info *fi)
{
        (void)path;
        struct ops_file *f = (struct ops_file *)(uintptr_t)fi->fh;
        if (f->fd >= 0) {
                close(f->fd);
        } else {
                tm_vfile_close(f->vf);
                pthread_mutex_destroy(&f->lock);
                node_trace_put(f->tr);
        }
        free(f);
        return 0;
}

static int ops_fill_source_dir(const char *src, void *buf, fuse_fill_dir_t fill)
{
        DIR *d = opendir(src);
        if (!d)
                return -errno;
        struct dirent *de;
        errno = 0;
        while ((de = readdir(d)) != NULL) {
                if (node_hidden_name(de->d_name))
                        continue;
                if (fill(buf, de->d_name, NULL, 0, 0))
                        break;
        }
        int rc = errno ? -errno : 0;
        closedir(d);
        return rc;
}

/* The names directly under view dir (prefix "" for the trace's own dir). */
static int ops_fill_view_dir(struct tm_trace *t, const char *dir, void *buf, fuse_fill_dir_t fill)
{
        const char *const *v = tm_trace_views(t);
        size_t n = strlen(dir);
        fill(buf, ".", NULL, 0, 0);
        fill(buf, "..", NULL, 0, 0);
        for (int i = 0; v && v[i]; i++) {
                const char *p = v[i];
                if (n) {
                        if (strncmp(p, dir, n) != 0 || p[n] != '/')
                                continue;
                        p += n + 1;
                }
                char name[NAME_MAX + 1];
                size_t len = strcspn(p, "/");
                if (len == 0 || len > NAME_MAX)
                        continue;
                memcpy(name, p, len);
                name[len] = '\0';
                /* a directory shows once however many views it holds */
                int seen = 0;
                for (int j = 0; j < i && !seen; j++) {
                        const char *q = v[j];
                        if (n && (strncmp(q, dir, n) != 0 || q[n] != '/'))
                                continue;
                        q += n ? n + 1 : 0;
                        seen = strncmp(q, name, len) == 0 && (q[len] == '/' || !q[len]);
                }
                if (!seen && fill(buf, name, NULL, 0, 0))
                        break;
        }
        return 0;
}

static int ops_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off,
                       struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
        (void)off;
        (void)fi;
        (void)flags;
        struct node_res r;
        int rc = node_resolve(path, &r);
        if (rc < 0)
                return rc;
        switch (r.kind) {
        case NODE_PASS:
                rc = S_ISDIR(r.st.st_mode) ? ops_fill_source_dir(r.src, buf, fill) : -ENOTDIR;
                break;
        case NODE_TRACE:
                rc = node_trace_open(r.tr, &r.t);
                if (rc == 0)
                        rc = ops_fill_view_dir(r.t, "", buf, fill);
                break;
        case NODE_VDIR:
                rc = ops_fill_view_dir(r.t, r.view, buf, fill);
                break;
        case NODE_VFILE:
                rc = -ENOTDIR;
                break;
        }
        node_res_put(&r);
        return rc;
}

static int ops_statfs(const char *path, struct statvfs *sv)
{
        struct node_res r;
        int rc = node_resolve("/", &r);
        (void)path;
        if (rc < 0)
                return rc;
        if (statvfs(r.src, sv) < 0)
                return -errno;
        sv->f_flag |= ST_RDONLY;
        return 0;
}

static void *ops_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
        cfg->entry_timeout = OPS_TIMEOUT;
        cfg->attr_timeout = OPS_TIMEOUT;
        cfg->negative_timeout = 0;
        cfg->kernel_cache = 0; /* decided per open: see node_trace_keep_cache */
        cfg->auto_cache = 0;

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
        return fuse_get_context()->private_data; /* the struct tmfs_conf */
}

static void ops_destroy(void *data)
{
        (void)data;
        node_fini();
}

const struct fuse_operations tmfs_ops = {
    .getattr = ops_getattr,
    .readlink = ops_readlink,
    .open = ops_open,
    .read = ops_read,
    .release = ops_release,
    .readdir = ops_readdir,
    .statfs = ops_statfs,
    .init = ops_init,
    .destroy = ops_destroy,
};
