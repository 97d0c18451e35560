/* fuse_floor: what FUSE alone costs on this machine, for bench/run.sh.
 *
 *   fuse_floor [--direct-io] SAMPLE SIZE MOUNTPOINT [FUSE options]
 *
 * Mounts a file system holding one read-only file, /f, of SIZE bytes: the
 * first MiB of SAMPLE (the trace's din text) repeated. Reads only copy from
 * that MiB, so reading /f measures FUSE with no decoding at all. It is set
 * up as tracemount is (1 MiB requests, st_blksize 1 MiB so that cat reads
 * 1 MiB at a time, asynchronous reads, page cache dropped at open, or
 * --direct-io), which makes it the floor any FUSE daemon here stands on:
 * cold cat of a tracemount view can only approach its time. */
#define FUSE_USE_VERSION 31

#include <errno.h>
#include <fuse.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define FLOOR_CHUNK (1u << 20)

static char floor_buf[FLOOR_CHUNK];
static size_t floor_len; /* bytes of floor_buf in use */
static off_t floor_size;
static int floor_direct;

static int floor_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
        (void)fi;
        memset(st, 0, sizeof *st);
        if (strcmp(path, "/") == 0) {
                st->st_mode = S_IFDIR | 0555;
                st->st_nlink = 2;
                return 0;
        }
        if (strcmp(path, "/f") != 0)
                return -ENOENT;
        st->st_mode = S_IFREG | 0444;
        st->st_nlink = 1;
        st->st_size = floor_size;
        st->st_blksize = FLOOR_CHUNK;
        return 0;
}

static int floor_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off,
                         struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
        (void)off, (void)fi, (void)flags;
        if (strcmp(path, "/") != 0)
                return -ENOENT;
        fill(buf, ".", NULL, 0, 0);
        fill(buf, "..", NULL, 0, 0);
        fill(buf, "f", NULL, 0, 0);
        return 0;
}

static int floor_open(const char *path, struct fuse_file_info *fi)
{
        if (strcmp(path, "/f") != 0)
                return -ENOENT;
        fi->direct_io = (unsigned)floor_direct;
        fi->keep_cache = 0;
        return 0;
}

static int floor_read(const char *path, char *buf, size_t n, off_t off, struct fuse_file_info *fi)
{
        (void)path, (void)fi;
        if (off >= floor_size)
                return 0;
        if ((off_t)n > floor_size - off)
                n = (size_t)(floor_size - off);
        for (size_t done = 0; done < n;) {
                size_t at = (size_t)((off + (off_t)done) % (off_t)floor_len);
                size_t k = floor_len - at < n - done ? floor_len - at : n - done;
                memcpy(buf + done, floor_buf + at, k);
                done += k;
        }
        return (int)n;
}

static void *floor_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
        cfg->kernel_cache = 0;
        conn->max_read = 0;
        conn->max_write = FLOOR_CHUNK;
        if (conn->capable & FUSE_CAP_ASYNC_READ)
                conn->want |= FUSE_CAP_ASYNC_READ;
        return NULL;
}

static const struct fuse_operations floor_ops = {
    .getattr = floor_getattr,
    .readdir = floor_readdir,
    .open = floor_open,
    .read = floor_read,
    .init = floor_init,
};

int main(int argc, char **argv)
{
        int a = 1;
        if (a < argc && strcmp(argv[a], "--direct-io") == 0) {
                floor_direct = 1;
                a++;
        }
        if (argc - a < 3) {
                fprintf(stderr, "usage: fuse_floor [--direct-io] SAMPLE SIZE MOUNTPOINT "
                                "[FUSE options]\n");
                return 2;
        }
        FILE *f = fopen(argv[a], "rb");
        if (!f) {
                perror(argv[a]);
                return 1;
        }
        floor_len = fread(floor_buf, 1, sizeof floor_buf, f);
        fclose(f);
        char *end;
        floor_size = (off_t)strtoll(argv[a + 1], &end, 10);
        if (floor_len == 0 || *end || floor_size <= 0) {
                fprintf(stderr, "fuse_floor: empty sample or bad size %s\n", argv[a + 1]);
                return 2;
        }
        /* fuse_main sees: program, mountpoint, then the FUSE options */
        argv[a + 1] = argv[0];
        return fuse_main(argc - a - 1, argv + a + 1, &floor_ops, NULL);
}
