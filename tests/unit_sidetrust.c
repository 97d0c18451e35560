/* Side files are believed by who can write them, and an index by the
 * content of its archive (issue 33, items 3 and 6; docs/side-files.md,
 * docs/shared-cache.md, docs/index-format.md):
 * - a root-owned DTD of mode 0666 beside root's Meta-TF archive, rewritten
 *   by uid 2001 with alloc and free swapped: passed over (every view is the
 *   built-in DTD's), named in errors, stats and stats.json; the same file
 *   writable by root alone is believed (its views differ: the test is not
 *   vacuous); a DTD that a member of the directory's group wrote in a
 *   sticky group directory: refused, believed with trust_group_dtd (by
 *   tm_trace_open and by tm_trace_open_fd, as the daemon opens a trace);
 * - the shared cache of the old recipe (2775, index files 0664): uid 2002,
 *   a member of the lab group, swaps the read and write counts of uid
 *   2001's index (the archive's owner) and fixes its CRC: a third user
 *   (root) gets every view of a fresh decode, the file named; with
 *   trust_group_index it loads (and its stats differ); in the recipe's
 *   3775 cache with 0644 files the member can neither rewrite nor replace
 *   another's file, which the others load;
 * - an archive rewritten in place with another trace of the same size, its
 *   mtime set back (same inode, size and mtime: what sshfs shows of two
 *   traces of equal size and mtime): the old index is not used, every view
 *   equals a fresh decode of the new content.
 * Switching uid needs root: without it the whole test SKIPs (exit 77). */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "codecs/common/tm_side.h"
#include "tmpdir_test.h"
#include "view_test.h"
#include "views/ixfile.h"
#include "views/view.h"

#define UID_A 2001 /* owns the archive */
#define UID_B 2002 /* a member of the lab group */
#define GID_LAB 3001

/* Run fn(arg) in a child as uid with gid as its only group; its exit
 * status (0: fn returned 0), or -1 when the child could not switch. */
static int as_user(uid_t uid, gid_t gid, int (*fn)(void *), void *arg)
{
        pid_t p = fork();
        if (p == 0) {
                if (setgroups(1, &gid) != 0 || setresgid(gid, gid, gid) != 0 ||
                    setresuid(uid, uid, uid) != 0)
                        _exit(99);
                _exit(fn(arg) == 0 ? 0 : 1);
        }
        int st = 0;
        if (p < 0 || waitpid(p, &st, 0) != p || !WIFEXITED(st))
                return -1;
        return WEXITSTATUS(st) == 99 ? -1 : WEXITSTATUS(st);
}

static int noop(void *arg)
{
        (void)arg;
        return 0;
}

/* ---- views ---- */

#define MAX_VIEWS 200

struct views {
        unsigned n;
        char *name[MAX_VIEWS];
        struct vt_buf b[MAX_VIEWS];
};

static struct tm_trace *open_trace(const char *path, const struct tm_trace_opts *o)
{
        struct tm_trace *t;
        struct tm_err err = {0};
        if (tm_trace_open(path, o, &t, &err) < 0)
                fail_msg("open %s: %s", path, err.msg);
        if (tm_trace_index(t, NULL, NULL, &err) < 0)
                fail_msg("index %s: %s", path, err.msg);
        return t;
}

/* open_trace from descriptors, as the daemon opens a trace (the archive
 * and its directory). */
static struct tm_trace *open_trace_fd(const char *path, const struct tm_trace_opts *o)
{
        char dir[4096];
        snprintf(dir, sizeof dir, "%s", path);
        *strrchr(dir, '/') = '\0';
        int fd = open(path, O_RDONLY | O_CLOEXEC),
            dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        assert_true(fd >= 0 && dfd >= 0);
        struct tm_trace *t;
        struct tm_err err = {0};
        if (tm_trace_open_fd(fd, dfd, path, o, &t, &err) < 0)
                fail_msg("open %s: %s", path, err.msg);
        close(fd);
        close(dfd);
        if (tm_trace_index(t, NULL, NULL, &err) < 0)
                fail_msg("index %s: %s", path, err.msg);
        return t;
}

static void read_view(struct tm_trace *t, const char *view, struct vt_buf *out)
{
        struct tm_vfile *f;
        struct tm_err err = {0};
        out->len = 0;
        if (tm_vfile_open(t, view, &f, &err) < 0)
                fail_msg("%s: %s", view, err.msg);
        uint8_t buf[8192];
        ssize_t r;
        while ((r = tm_vfile_pread(f, buf, sizeof buf, out->len, &err)) > 0)
                vt_put(out, buf, (size_t)r);
        tm_vfile_close(f);
        if (r < 0)
                fail_msg("%s: %s", view, err.msg);
}

/* Every view of t but errors, whole; stats and stats.json without their
 * lines of side files passed over. */
static void views_of(struct tm_trace *t, struct views *v)
{
        memset(v, 0, sizeof *v);
        for (const char *const *n = tm_trace_views(t); *n && v->n < MAX_VIEWS; n++) {
                if (strcmp(*n, "errors") == 0)
                        continue;
                struct vt_buf *b = &v->b[v->n];
                read_view(t, *n, b);
                if (strcmp(*n, "stats") == 0)
                        vt_drop_side_files(b->p, &b->len);
                if (strcmp(*n, "stats.json") == 0)
                        vt_drop_side_files_json(b->p, &b->len);
                v->name[v->n++] = strdup(*n);
        }
}

static void views_free(struct views *v)
{
        for (unsigned i = 0; i < v->n; i++) {
                free(v->name[i]);
                free(v->b[i].p);
        }
        v->n = 0;
}

/* The first view of a that differs from b's, or NULL. */
static const char *views_differ(const struct views *a, const struct views *b)
{
        if (a->n != b->n)
                return "(the list of views)";
        for (unsigned i = 0; i < a->n; i++)
                if (strcmp(a->name[i], b->name[i]) || a->b[i].len != b->b[i].len ||
                    (a->b[i].len && memcmp(a->b[i].p, b->b[i].p, a->b[i].len)))
                        return a->name[i];
        return NULL;
}

/* The text of view (NUL-terminated; the caller frees it). */
static char *text_of(struct tm_trace *t, const char *view)
{
        struct vt_buf b = {0};
        read_view(t, view, &b);
        vt_put(&b, "", 1);
        return (char *)b.p;
}

/* errors, stats and stats.json all name file and say why. */
static void check_named(struct tm_trace *t, const char *file, const char *why)
{
        char *e = text_of(t, "errors"), *s = text_of(t, "stats"), *j = text_of(t, "stats.json");
        if (!strstr(e, file) || !strstr(e, why))
                fail_msg("errors does not say '%s' of %s: '%s'", why, file, e);
        char *line = strstr(s, "side file  ");
        if (!line || !strstr(line, file) || !strstr(line, why))
                fail_msg("stats does not say '%s' of %s:\n%s", why, file, s);
        char *sf = strstr(j, "\"side_files\":[\"");
        if (!sf || !strstr(sf, why))
                fail_msg("stats.json's side_files do not say '%s':\n%s", why, j);
        free(e);
        free(s);
        free(j);
}

static void copy_file(const char *from, const char *to)
{
        struct vt_buf b = {0};
        vt_slurp(from, &b);
        vt_spit(to, b.p, b.len);
        free(b.p);
}

/* ---- 1. a DTD others may write ---- */

static char dtd_good[8192], dtd_swapped[8192];

/* The built-in hatf10.dtd with the names alloc and free swapped. */
static void make_dtds(void)
{
        struct vt_buf b = {0};
        vt_slurp(TM_SOURCE_DIR "/codecs/metatf/dtd/hatf10.dtd", &b);
        assert_true(b.len < sizeof dtd_good);
        memcpy(dtd_good, b.p, b.len);
        memcpy(dtd_swapped, b.p, b.len);
        free(b.p);
        char *a = strstr(dtd_swapped, "    alloc : ("), *f = strstr(dtd_swapped, "    free : (");
        assert_non_null(a);
        assert_non_null(f);
        /* "alloc" and "free " have five characters each */
        memcpy(a + 4, "free ", 5);
        memcpy(f + 4, "alloc", 5);
}

static const char *dtd_path;

static int write_swapped(void *arg)
{
        (void)arg;
        int fd = open(dtd_path, O_WRONLY | O_TRUNC);
        if (fd < 0)
                return -1;
        ssize_t n = write(fd, dtd_swapped, strlen(dtd_swapped));
        close(fd);
        return n == (ssize_t)strlen(dtd_swapped) ? 0 : -1;
}

static int create_swapped(void *arg)
{
        (void)arg;
        int fd = open(dtd_path, O_WRONLY | O_CREAT | O_EXCL, 0644);
        if (fd < 0)
                return -1;
        ssize_t n = write(fd, dtd_swapped, strlen(dtd_swapped));
        close(fd);
        return n == (ssize_t)strlen(dtd_swapped) ? 0 : -1;
}

static void test_dtd_writable_by_all(void **state)
{
        (void)state;
        assert_int_equal(chmod(tmpdir, 0755), 0); /* the other users reach in */
        make_dtds();
        char dir[300], archive[400], dtd[400];
        snprintf(dir, sizeof dir, "%s/mtf", tmpdir);
        snprintf(archive, sizeof archive, "%s/heapwork.mtf.zst", dir);
        snprintf(dtd, sizeof dtd, "%s/hatf10.dtd", dir);
        assert_int_equal(mkdir(dir, 0755), 0);
        copy_file(TM_SOURCE_DIR "/examples/heapwork.mtf.zst", archive);
        struct tm_trace_opts o = {.no_save = 1};
        struct views ref, got;
        struct tm_trace *t = open_trace(archive, &o); /* nothing beside: the built-in DTD */
        views_of(t, &ref);
        tm_trace_close(t);

        /* root's DTD, mode 0666, rewritten by another user */
        vt_spit(dtd, dtd_good, strlen(dtd_good));
        assert_int_equal(chmod(dtd, 0666), 0);
        dtd_path = dtd;
        assert_int_equal(as_user(UID_A, UID_A, write_swapped, NULL), 0);
        struct stat sb;
        assert_int_equal(stat(dtd, &sb), 0);
        assert_int_equal(sb.st_uid, 0);
        t = open_trace(archive, &o);
        views_of(t, &got);
        const char *d = views_differ(&got, &ref);
        if (d)
                fail_msg("a DTD writable by all was believed: %s differs from the built-in's", d);
        check_named(t, dtd, "not trusted: writable by all (mode 0666)");
        tm_trace_close(t);
        views_free(&got);

        /* the same file, writable by root alone: believed (views differ) */
        assert_int_equal(chmod(dtd, 0644), 0);
        t = open_trace(archive, &o);
        views_of(t, &got);
        assert_non_null(views_differ(&got, &ref));
        tm_trace_close(t);
        views_free(&got);
        views_free(&ref);
        unlink(dtd);
}

static void test_dtd_group_opt_in(void **state)
{
        (void)state;
        assert_int_equal(chmod(tmpdir, 0755), 0); /* the other users reach in */
        make_dtds();
        char dir[300], archive[400], dtd[400];
        snprintf(dir, sizeof dir, "%s/gmtf", tmpdir);
        snprintf(archive, sizeof archive, "%s/heapwork.mtf.zst", dir);
        snprintf(dtd, sizeof dtd, "%s/hatf10.dtd", dir);
        assert_int_equal(mkdir(dir, 0755), 0);
        copy_file(TM_SOURCE_DIR "/examples/heapwork.mtf.zst", archive);
        /* a lab directory, sticky: members cannot replace root's archive */
        assert_int_equal(chown(dir, 0, GID_LAB), 0);
        assert_int_equal(chmod(dir, 03775), 0);
        struct tm_trace_opts o = {.no_save = 1};
        struct views ref, got;
        struct tm_trace *t = open_trace(archive, &o);
        views_of(t, &ref);
        tm_trace_close(t);
        dtd_path = dtd; /* a member's DTD */
        assert_int_equal(as_user(UID_B, GID_LAB, create_swapped, NULL), 0);

        t = open_trace(archive, &o);
        views_of(t, &got);
        assert_null(views_differ(&got, &ref));
        check_named(t, dtd, "written by another user, who cannot change the archive");
        tm_trace_close(t);
        views_free(&got);

        /* believed with the opt-in, when the caller is in the group */
        gid_t lab = GID_LAB;
        assert_int_equal(setgroups(1, &lab), 0);
        o.trust_group_dtd = 1;
        t = open_trace(archive, &o);
        views_of(t, &got);
        assert_non_null(views_differ(&got, &ref));
        tm_trace_close(t);
        views_free(&got);
        t = open_trace_fd(archive, &o); /* as the daemon opens it */
        views_of(t, &got);
        assert_non_null(views_differ(&got, &ref));
        tm_trace_close(t);
        views_free(&got);
        assert_int_equal(setgroups(0, NULL), 0);
        /* and not when the caller is not in the group */
        t = open_trace(archive, &o);
        views_of(t, &got);
        assert_null(views_differ(&got, &ref));
        tm_trace_close(t);
        views_free(&got);
        views_free(&ref);
        unlink(dtd);
}

/* ---- 2. the shared cache ---- */

static const char *ix_forge_path;

static uint64_t get64(const uint8_t *p)
{
        uint64_t v = 0;
        for (int i = 0; i < 8; i++)
                v |= (uint64_t)p[i] << (8 * i);
        return v;
}

static void swap64(uint8_t *a, uint8_t *b)
{
        uint8_t t[8];
        memcpy(t, a, 8);
        memcpy(a, b, 8);
        memcpy(b, t, 8);
}

/* As a member of the lab: swap the read and write counts of the din
 * trace's index (the generic records per kind, and the address family's
 * count, lowest and highest address by type), fix the CRC, write it in
 * place. Every check of the loader still passes. */
static int forge_swap(void *arg)
{
        (void)arg;
        int fd = open(ix_forge_path, O_RDWR);
        if (fd < 0)
                return -1;
        struct stat sb;
        uint8_t *p = NULL;
        if (fstat(fd, &sb) != 0 || !(p = malloc((size_t)sb.st_size)) ||
            pread(fd, p, (size_t)sb.st_size, 0) != sb.st_size)
                return -1;
        uint64_t st = get64(p + TM_IX_KEY_END + 40); /* stats offset */
        swap64(p + st + 8, p + st + 16);             /* kinds 0 and 1: read, write */
        uint8_t *fam = p + st + 8 * 161;             /* the address family's block */
        for (int part = 0; part < 3; part++) {       /* count, addr_min, addr_max */
                uint8_t *w = fam + 8 + 8 * 8 * part;
                swap64(w, w + 8);
        }
        uint32_t crc = (uint32_t)crc32(0, p + 16, (uInt)(sb.st_size - 16));
        for (int k = 0; k < 4; k++)
                p[12 + k] = (uint8_t)(crc >> (8 * k));
        int ok = pwrite(fd, p, (size_t)sb.st_size, 0) == sb.st_size;
        free(p);
        close(fd);
        return ok ? 0 : -1;
}

/* As a member of the lab: open the file for writing, or rename a file of
 * one's own over it. 0 if either worked. */
static int try_write(void *arg)
{
        (void)arg;
        int fd = open(ix_forge_path, O_WRONLY);
        if (fd >= 0) {
                close(fd);
                return 0;
        }
        char mine[600];
        snprintf(mine, sizeof mine, "%s.mine", ix_forge_path);
        fd = open(mine, O_WRONLY | O_CREAT | O_EXCL, 0644);
        if (fd < 0)
                return -1;
        close(fd);
        int r = rename(mine, ix_forge_path);
        unlink(mine);
        return r == 0 ? 0 : -1;
}

static void test_shared_cache(void **state)
{
        (void)state;
        assert_int_equal(chmod(tmpdir, 0755), 0);
        char arch[300], archive[400], lab[300], empty[300];
        snprintf(arch, sizeof arch, "%s/arch", tmpdir);
        snprintf(archive, sizeof archive, "%s/t.din", arch);
        snprintf(lab, sizeof lab, "%s/lab", tmpdir);
        snprintf(empty, sizeof empty, "%s/empty", tmpdir);
        assert_int_equal(mkdir(arch, 0755), 0);
        assert_int_equal(mkdir(lab, 0755), 0);
        assert_int_equal(mkdir(empty, 0755), 0);
        copy_file(TM_SOURCE_DIR "/examples/tex-table3.din", archive);
        assert_int_equal(chown(arch, UID_A, UID_A), 0);
        assert_int_equal(chown(archive, UID_A, UID_A), 0);
        /* the shared cache of the old recipe */
        assert_int_equal(chown(lab, 0, GID_LAB), 0);
        assert_int_equal(chmod(lab, 02775), 0);

        struct tm_trace_opts ref_o = {.cache_dir = empty, .no_index_beside = 1, .no_save = 1};
        struct tm_trace_opts o = {.cache_dir = lab, .no_index_beside = 1};
        struct views ref, got;
        struct tm_trace *t = open_trace(archive, &ref_o); /* a fresh decode */
        views_of(t, &ref);
        tm_trace_close(t);

        /* A's index in the cache, group-writable as the old recipe made it */
        t = open_trace(archive, &o);
        char ix[600];
        assert_non_null(tm_trace_index_path(t));
        snprintf(ix, sizeof ix, "%s", tm_trace_index_path(t));
        tm_trace_close(t);
        assert_int_equal(chown(ix, UID_A, GID_LAB), 0);
        assert_int_equal(chmod(ix, 0664), 0);
        ix_forge_path = ix;
        assert_int_equal(as_user(UID_B, GID_LAB, forge_swap, NULL), 0);

        /* a third user (root, not in the group) */
        t = open_trace(archive, &o);
        views_of(t, &got);
        const char *d = views_differ(&got, &ref);
        if (d)
                fail_msg("an index the lab group may write was believed: %s differs", d);
        assert_int_equal(tm_trace_index_source(t), TM_INDEX_BUILT);
        check_named(t, ix, "writable by group 3001 (mode 0664)");
        tm_trace_close(t);
        views_free(&got);

        /* the opt-in believes the group: the forgery loads (not vacuous) */
        char own[620];
        snprintf(own, sizeof own, "%.*s.u0.tmidx", (int)(strlen(ix) - 6), ix);
        unlink(own);
        gid_t g = GID_LAB;
        assert_int_equal(setgroups(1, &g), 0);
        o.trust_group_index = 1;
        t = open_trace(archive, &o);
        assert_int_equal(tm_trace_index_source(t), TM_INDEX_LOADED);
        views_of(t, &got);
        d = views_differ(&got, &ref);
        if (!d || strncmp(d, "stats", 5) != 0)
                fail_msg("the forged index did not change the stats: %s", d ? d : "none");
        tm_trace_close(t);
        views_free(&got);
        assert_int_equal(setgroups(0, NULL), 0);
        o.trust_group_index = 0;

        /* the recipe: a sticky cache, files 0644. A's index is loaded by
         * others; a member can neither rewrite nor replace it */
        unlink(ix);
        unlink(own);
        assert_int_equal(chmod(lab, 03775), 0);
        t = open_trace(archive, &o);
        tm_trace_close(t);
        struct stat sb;
        assert_int_equal(stat(ix, &sb), 0);
        assert_int_equal(sb.st_mode & 07777, 0644);
        assert_int_equal(chown(ix, UID_A, GID_LAB), 0);
        assert_int_not_equal(as_user(UID_B, GID_LAB, try_write, NULL), 0);
        t = open_trace(archive, &o);
        assert_int_equal(tm_trace_index_source(t), TM_INDEX_LOADED);
        views_of(t, &got);
        assert_null(views_differ(&got, &ref));
        tm_trace_close(t);
        views_free(&got);
        views_free(&ref);
}

/* ---- 3. same size, mtime and inode, other content ---- */

static void test_same_key_other_content(void **state)
{
        (void)state;
        char dir[300], archive[400], refdir[300], refpath[400], cache[300];
        snprintf(dir, sizeof dir, "%s/inplace", tmpdir);
        snprintf(archive, sizeof archive, "%s/x.din", dir);
        snprintf(refdir, sizeof refdir, "%s/ref", tmpdir);
        snprintf(refpath, sizeof refpath, "%s/x.din", refdir);
        snprintf(cache, sizeof cache, "%s/cache3", tmpdir);
        assert_int_equal(mkdir(dir, 0755), 0);
        assert_int_equal(mkdir(refdir, 0755), 0);
        struct vt_buf a = {0};
        vt_slurp(TM_SOURCE_DIR "/examples/tex-table3.din", &a);
        assert_true(a.len > 8 && a.p[0] == '2');
        vt_spit(archive, a.p, a.len);
        struct tm_trace_opts o = {.cache_dir = cache};
        struct tm_trace *t = open_trace(archive, &o); /* its index beside it */
        char ix[600];
        assert_non_null(tm_trace_index_path(t));
        snprintf(ix, sizeof ix, "%s", tm_trace_index_path(t));
        tm_trace_close(t);
        struct stat before, after;
        assert_int_equal(stat(archive, &before), 0);

        /* another trace of the same size: the first reference a read */
        a.p[0] = '0';
        vt_spit(refpath, a.p, a.len);
        int fd = open(archive, O_WRONLY);
        assert_true(fd >= 0);
        assert_int_equal(pwrite(fd, a.p, a.len, 0), (ssize_t)a.len);
        close(fd);
        struct timespec ts[2] = {before.st_atim, before.st_mtim};
        assert_int_equal(utimensat(AT_FDCWD, archive, ts, 0), 0);
        assert_int_equal(stat(archive, &after), 0);
        assert_int_equal(after.st_ino, before.st_ino);
        assert_int_equal(after.st_size, before.st_size);
        assert_int_equal(after.st_mtim.tv_nsec, before.st_mtim.tv_nsec);
        assert_int_equal(after.st_mtim.tv_sec, before.st_mtim.tv_sec);
        free(a.p);

        struct tm_trace_opts ref_o = {.cache_dir = cache, .no_save = 1, .no_index_beside = 1};
        struct views ref, got;
        t = open_trace(refpath, &ref_o);
        views_of(t, &ref);
        tm_trace_close(t);
        t = open_trace(archive, &o);
        views_of(t, &got);
        const char *d = views_differ(&got, &ref);
        if (d)
                fail_msg("the other content's index was used: %s differs", d);
        assert_int_equal(tm_trace_index_source(t), TM_INDEX_BUILT);
        tm_trace_close(t);
        views_free(&got);
        /* the file saved again is this content's: loaded next time */
        t = open_trace(archive, &o);
        assert_int_equal(tm_trace_index_source(t), TM_INDEX_LOADED);
        views_of(t, &got);
        assert_null(views_differ(&got, &ref));
        tm_trace_close(t);
        views_free(&got);
        views_free(&ref);
        unlink(ix);
}

/* ---- 4. the rule, case by case (tm_side_open) ---- */

struct rule_case {
        unsigned a_mode, a_gid; /* the archive (root's, in root's 0755 directory) */
        unsigned f_mode, f_gid; /* the side file (root's) */
        unsigned d_mode, d_uid; /* its directory (group GID_LAB) */
        int want;               /* 0, -EACCES */
        const char *why;        /* in the message when refused */
};

static void test_rule(void **state)
{
        (void)state;
        static const struct rule_case cases[] = {
            {0100644, 0, 0644, 0, 0755, 0, 0, NULL},
            {0100644, 0, 0666, 0, 0755, 0, -EACCES, "writable by all (mode 0666)"},
            {0100666, 0, 0666, 0, 0755, 0, 0, NULL}, /* anyone may change the archive */
            {0100644, 0, 0664, GID_LAB, 0755, 0, -EACCES, "writable by group 3001 (mode 0664)"},
            {0100664, GID_LAB, 0664, GID_LAB, 0755, 0, 0, NULL}, /* the group may */
            {0100664, GID_LAB + 1, 0664, GID_LAB, 0755, 0, -EACCES, "writable by group 3001"},
            {0100644, 0, 0644, 0, 0777, 0, -EACCES, "writable by all and not sticky (mode 0777)"},
            {0100644, 0, 0644, 0, 01777, 0, 0, NULL}, /* others replace only their own */
            {0100644, 0, 0644, 0, 02775, 0, -EACCES, "writable by group 3001 and not sticky"},
            {0100644, 0, 0644, 0, 03775, 0, 0, NULL},
            {0100644, 0, 0644, 0, 0755, UID_B, -EACCES, "belongs to another user"},
        };
        assert_int_equal(chmod(tmpdir, 0755), 0);
        char dir[300], p[400];
        snprintf(dir, sizeof dir, "%s/rule", tmpdir);
        snprintf(p, sizeof p, "%s/side", dir);
        for (unsigned i = 0; i < sizeof cases / sizeof *cases; i++) {
                const struct rule_case *c = &cases[i];
                mkdir(dir, 0755);
                vt_spit(p, "x", 1);
                assert_int_equal(chown(p, 0, c->f_gid), 0);
                assert_int_equal(chmod(p, c->f_mode), 0);
                assert_int_equal(chown(dir, c->d_uid, GID_LAB), 0);
                assert_int_equal(chmod(dir, c->d_mode), 0);
                struct tm_side_trust tr = {.a_uid = 0,
                                           .a_gid = c->a_gid,
                                           .a_mode = c->a_mode,
                                           .d_uid = 0,
                                           .d_gid = 0,
                                           .d_mode = 040755};
                int fd = -1;
                struct stat sb;
                struct tm_err err = {0};
                int rc = tm_side_open(p, &tr, 0, &fd, &sb, &err);
                if (rc != c->want || (c->why && !strstr(err.msg, c->why)))
                        fail_msg("case %u: %d '%s', not %d '%s'", i, rc, err.msg, c->want,
                                 c->why ? c->why : "");
                if (fd >= 0)
                        close(fd);
                unlink(p);
        }
}

int main(void)
{
        if (geteuid() != 0 || as_user(UID_A, UID_A, noop, NULL) != 0) {
                printf("SKIP: unit_sidetrust: needs root to switch to uid %d and %d\n", UID_A,
                       UID_B);
                fprintf(stderr, "SKIP: unit_sidetrust: needs root to switch to uid %d and %d\n",
                        UID_A, UID_B);
                return 77;
        }
        setenv("TM_READ_THREADS", "0", 1); /* no threads across fork */
        umask(022);
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_dtd_writable_by_all),
            cmocka_unit_test(test_dtd_group_opt_in),
            cmocka_unit_test(test_shared_cache),
            cmocka_unit_test(test_same_key_other_content),
            cmocka_unit_test(test_rule),
        };
        int rc = cmocka_run_group_tests(tests, tmp_setup, tmp_teardown);
        return rc;
}
