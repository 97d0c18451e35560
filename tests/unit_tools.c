/* Unit tests of the pieces of fs/ and tools/ that do not need a mount:
 * the output-name rules of tracetool pack, and fs/node.c's path
 * resolution and trace cache on a real source tree of din text traces. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "fs/bdi.h"
#include "fs/node.h"
#include "tools/pack.h"
#include "tools/tools.h"

static void expect_guess(const char *name, const char *codec, enum tm_cont_kind kind)
{
        const struct tm_rcodec *c;
        enum tm_cont_kind k;
        pack_guess(name, &c, &k);
        if (codec) {
                assert_non_null(c);
                assert_string_equal(c->name, codec);
        } else {
                assert_null(c);
        }
        assert_int_equal(k, kind);
}

static void test_pack_guess(void **state)
{
        (void)state;
        expect_guess("sort.pdt2.zst", "pdats2", TM_CONT_ZSTD);
        expect_guess("sort.pdt2.gz", "pdats2", TM_CONT_GZIP);
        expect_guess("sort.pdt2", "pdats2", TM_CONT_PLAIN);
        expect_guess("dir.x/sort.pdt", "pdats", TM_CONT_PLAIN);
        expect_guess("sort.pdt.gz", "pdats", TM_CONT_GZIP);
        expect_guess("sort.din.zst", "din", TM_CONT_ZSTD);
        expect_guess("sort.din", "din", TM_CONT_PLAIN);
        expect_guess("sort.zst", NULL, TM_CONT_ZSTD);
        expect_guess("sort.txt", NULL, TM_CONT_PLAIN);
        expect_guess("sort.pdt2.zst.bak", NULL, TM_CONT_PLAIN);
        expect_guess("lackey.zst", NULL, TM_CONT_ZSTD); /* no suffix: ".lackey" is */
        expect_guess("l.lackey.zst", "lackey", TM_CONT_ZSTD);
        expect_guess("h.hatf", "hatf", TM_CONT_PLAIN);
        expect_guess("h.mtf.gz", "metatf", TM_CONT_GZIP);
        expect_guess("o.ptfb.zst", "ptf_bin", TM_CONT_ZSTD);
        expect_guess("log.mtrace", NULL, TM_CONT_PLAIN); /* read only */
}

static void test_hidden_name(void **state)
{
        (void)state;
        assert_true(node_hidden_name(".sort.pdt2.zst.tmidx"));
        assert_true(node_hidden_name(".a.tmidx"));
        assert_true(node_hidden_name(".a.tmidx.Xy12Zw"));
        assert_false(node_hidden_name("a.tmidx"));
        assert_false(node_hidden_name(".tmidx"));
        assert_false(node_hidden_name(".a.tmidx.toolong"));
        assert_false(node_hidden_name(".a.tmidxx"));
        assert_false(node_hidden_name("sort.pdt2.zst"));
        assert_false(node_hidden_name("."));
        assert_false(node_hidden_name(".."));
}

/* ---- node_resolve on a temporary source tree ---- */

static char src[256];

static void write_file(const char *rel, const char *text)
{
        char path[512], tmp[520];
        snprintf(path, sizeof path, "%s/%s", src, rel);
        snprintf(tmp, sizeof tmp, "%s.new", path);
        FILE *f = fopen(tmp, "w");
        assert_non_null(f);
        fputs(text, f);
        assert_int_equal(fclose(f), 0);
        assert_int_equal(rename(tmp, path), 0); /* a new inode, like a real replacement */
}

static int setup_tree(void **state)
{
        (void)state;
        snprintf(src, sizeof src, "/tmp/unit_tools.XXXXXX");
        if (!mkdtemp(src))
                return -1;
        char d[300];
        snprintf(d, sizeof d, "%s/sub", src);
        mkdir(d, 0755);
        snprintf(d, sizeof d, "%s/sub/dir", src);
        mkdir(d, 0755);
        write_file("sub/t.din", "2 400000\n0 1000\n2 400004\n1 2000\n");
        write_file("notes.txt", "hello, not a trace\n");
        struct tm_trace_opts o = {.no_save = 1};
        return node_init(src, &o);
}

static int teardown_tree(void **state)
{
        (void)state;
        node_fini();
        char cmd[300];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", src);
        return system(cmd) == 0 ? 0 : -1;
}

static void expect_kind(const char *path, int rc, enum node_kind kind)
{
        struct node_res r;
        int got = node_resolve(path, &r);
        assert_int_equal(got, rc);
        if (rc == 0) {
                assert_int_equal(r.kind, kind);
                node_res_put(&r);
        }
}

static void test_resolve_kinds(void **state)
{
        (void)state;
        expect_kind("/", 0, NODE_PASS);
        expect_kind("/notes.txt", 0, NODE_PASS);
        expect_kind("/sub", 0, NODE_PASS);
        expect_kind("/sub/dir", 0, NODE_PASS);
        expect_kind("/sub/t.din", 0, NODE_TRACE);
        expect_kind("/sub/t.din/ascii", 0, NODE_VFILE);
        expect_kind("/sub/t.din/binary", 0, NODE_VFILE);
        expect_kind("/sub/t.din/streams", 0, NODE_VDIR);
        expect_kind("/sub/t.din/streams/read", 0, NODE_VFILE);
        expect_kind("/sub/t.din/nothing", -ENOENT, NODE_PASS);
        expect_kind("/sub/t.din/streams/read/x", -ENOENT, NODE_PASS);
        expect_kind("/sub/t.din/stream", -ENOENT, NODE_PASS);
        expect_kind("/notes.txt/x", -ENOTDIR, NODE_PASS);
        expect_kind("/missing", -ENOENT, NODE_PASS);
        expect_kind("/missing/x", -ENOENT, NODE_PASS);
        expect_kind("relative", -EINVAL, NODE_PASS);
}

static void test_resolve_fields(void **state)
{
        (void)state;
        struct node_res r;
        assert_int_equal(node_resolve("/sub/t.din/streams/write", &r), 0);
        assert_int_equal(r.kind, NODE_VFILE);
        assert_string_equal(r.view, "streams/write");
        char want[300];
        snprintf(want, sizeof want, "%s/sub/t.din", src);
        assert_string_equal(r.src, want);
        assert_true(S_ISREG(r.st.st_mode));
        assert_non_null(r.t);
        assert_int_equal(r.view_idx, node_view_index(r.t, "streams/write"));
        assert_string_equal(tm_trace_views(r.t)[r.view_idx], "streams/write");
        assert_true(node_view_is_dir(r.t, ""));
        assert_true(node_view_is_dir(r.t, "streams"));
        assert_false(node_view_is_dir(r.t, "ascii"));
        assert_false(node_view_is_dir(r.t, "stream"));
        uint64_t size;
        assert_int_equal(tm_trace_view_size(r.t, "streams/write", &size, NULL), 0);
        assert_int_equal(size, strlen("1 2000\n"));
        node_res_put(&r);
        assert_null(r.tr);
}

static void test_cache_identity(void **state)
{
        (void)state;
        struct node_res a, b, c;
        assert_int_equal(node_resolve("/sub/t.din/ascii", &a), 0);
        assert_int_equal(node_resolve("/sub/t.din/ascii", &b), 0);
        assert_ptr_equal(a.tr, b.tr); /* same identity: the cached entry */
        node_res_put(&b);

        /* keep_cache: no the first time for a view of an entry, then yes */
        assert_int_equal(node_trace_keep_cache(a.tr, 3), 0);
        assert_int_equal(node_trace_keep_cache(a.tr, 3), 1);
        assert_int_equal(node_trace_keep_cache(a.tr, 4), 0);

        /* replaced: a new entry, new content; the old one stays usable */
        struct node_trace *held = a.tr;
        node_trace_get(held); /* like an open file handle */
        write_file("sub/t.din", "0 10\n0 20\n0 30\n");
        assert_int_equal(node_resolve("/sub/t.din/ascii", &c), 0);
        assert_ptr_not_equal(a.tr, c.tr);
        assert_int_equal(node_trace_keep_cache(c.tr, 3), 0);
        uint64_t size;
        assert_int_equal(tm_trace_view_size(c.t, "ascii", &size, NULL), 0);
        assert_int_equal(size, strlen("0 10\n0 20\n0 30\n"));
        assert_int_equal(tm_trace_view_size(a.t, "ascii", &size, NULL), 0);
        assert_int_equal(size, strlen("2 400000\n0 1000\n2 400004\n1 2000\n"));
        node_res_put(&c);
        node_res_put(&a);
        node_trace_put(held); /* the last reference: frees the old entry */

        /* replaced by something that is not a trace: a plain file again */
        write_file("sub/t.din", "this is prose, not a trace\n");
        expect_kind("/sub/t.din", 0, NODE_PASS);
        expect_kind("/sub/t.din/ascii", -ENOTDIR, NODE_PASS);
        write_file("sub/t.din", "2 400000\n0 1000\n2 400004\n1 2000\n");
        expect_kind("/sub/t.din/ascii", 0, NODE_VFILE);
}

/* The mount's device from mountinfo: octal escapes in the mount point, the
 * last of stacked mounts, no match for a prefix or a missing point. */
static void test_bdi_find_dev(void **state)
{
        (void)state;
        char path[] = "/tmp/tm-mountinfo-XXXXXX";
        int fd = mkstemp(path);
        assert_true(fd >= 0);
        static const char info[] =
            "22 1 0:21 / / rw,relatime - ext4 /dev/vda rw\n"
            "40 22 0:38 / /mnt/my\\040traces rw,nosuid - fuse.tracemount /data ro\n"
            "41 22 0:39 / /mnt/t rw - fuse.tracemount /a ro\n"
            "42 41 0:45 / /mnt/t rw - fuse.tracemount /b ro\n"
            "43 22 0:46 / /mnt/tt rw - fuse.tracemount /c ro\n";
        assert_int_equal(write(fd, info, sizeof info - 1), (ssize_t)(sizeof info - 1));
        close(fd);
        char dev[64];
        assert_int_equal(bdi_find_dev(path, "/mnt/my traces", dev, sizeof dev), 0);
        assert_string_equal(dev, "0:38");
        assert_int_equal(bdi_find_dev(path, "/mnt/t", dev, sizeof dev), 0);
        assert_string_equal(dev, "0:45");
        assert_int_equal(bdi_find_dev(path, "/mnt", dev, sizeof dev), -1);
        assert_int_equal(bdi_find_dev(path, "/mnt/t", dev, 4), -1); /* no room */
        unlink(path);
        assert_int_equal(bdi_find_dev(path, "/mnt/t", dev, sizeof dev), -1);
}

/* Progress off a terminal (a log, a pipe): quiet until PROGRESS_LINE_S
 * seconds have passed since the last line (at first, since the job
 * began), then one plain line saying how far; no bar, no carriage return.
 * The clock is moved by hand: nothing waits. */
static void test_progress_lines(void **state)
{
        (void)state;
        struct progress p;
        progress_init(&p, "packing");
        p.tty = 0;
        p.out = tmpfile();
        assert_non_null(p.out);
        p.last.tv_sec += 3600; /* the last line in the future: too soon */
        progress_update(&p, 10, 100);
        assert_int_equal(ftell(p.out), 0);
        p.start.tv_sec -= 3600 + 2 * PROGRESS_LINE_S;
        p.last.tv_sec -= 3600 + 2 * PROGRESS_LINE_S;
        progress_update(&p, (uint64_t)42 << 20, (uint64_t)100 << 20);
        progress_update(&p, (uint64_t)43 << 20, (uint64_t)100 << 20); /* within the interval */
        progress_end(&p);
        char buf[256] = {0};
        rewind(p.out);
        size_t n = fread(buf, 1, sizeof buf - 1, p.out);
        fclose(p.out);
        assert_true(n > 0 && buf[n - 1] == '\n');
        assert_ptr_equal(strchr(buf, '\n'), buf + n - 1); /* one line */
        assert_null(strchr(buf, '\r'));
        const char *want = "packing: 42%, 42.0 of 100.0 MiB, ";
        assert_memory_equal(buf, want, strlen(want));
        long secs = strtol(buf + strlen(want), NULL, 10);
        assert_true(secs >= 2 * PROGRESS_LINE_S);
        assert_string_equal(strchr(buf + strlen(want), ' '), " s\n");
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_pack_guess),     cmocka_unit_test(test_bdi_find_dev),
            cmocka_unit_test(test_hidden_name),    cmocka_unit_test(test_resolve_kinds),
            cmocka_unit_test(test_resolve_fields), cmocka_unit_test(test_cache_identity),
            cmocka_unit_test(test_progress_lines),
        };
        return cmocka_run_group_tests(tests, setup_tree, teardown_tree);
}
