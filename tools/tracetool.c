/* tracetool: pack, inspect and read trace archives from the command line.
 * This file holds the command table and the commands that read one
 * archive through the API (lib_int.h); pack lives in pack.c. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib_int.h"
#include "pack.h"
#include "record/record.h"
#include "tools.h"

#ifndef TM_VERSION
#define TM_VERSION "unknown"
#endif

#define CAT_BUF (1u << 20)

struct command {
        const char *name;
        const char *args;
        const char *help;
        int nargs; /* positional arguments */
        int (*run)(char **args);
};

/* Options every command that reads an archive takes (--cache-dir DIR,
 * --no-index-beside), as tracemount does. */
static struct tm_trace_opts tool_opts;
static int tool_json; /* stat --json */

static int tool_open(const char *cmd, const char *path, struct tm_trace **t)
{
        struct tm_err err = {0};
        int rc = tm_trace_open(path, &tool_opts, t, &err);
        if (rc < 0) { /* -EMEDIUMTYPE: "PATH: empty file", "PATH: not a trace ..." */
                fprintf(stderr, "tracetool %s: %s\n", cmd, err.msg[0] ? err.msg : strerror(-rc));
                return -1;
        }
        return 0;
}

static int tool_fail(const char *cmd, const struct tm_err *err, int rc)
{
        fprintf(stderr, "tracetool %s: %s\n", cmd, err->msg[0] ? err->msg : strerror(-rc));
        return TOOL_FAIL;
}

/* One read of cat's source at off: tm_vfile_pread or tm_member_pread. */
typedef ssize_t (*cat_read_fn)(void *src, void *buf, size_t n, uint64_t off, struct tm_err *err);

static ssize_t cat_read_view(void *src, void *buf, size_t n, uint64_t off, struct tm_err *err)
{
        return tm_vfile_pread(src, buf, n, off, err);
}

static ssize_t cat_read_member(void *src, void *buf, size_t n, uint64_t off, struct tm_err *err)
{
        return tm_member_pread(src, buf, n, off, err);
}

/* Copy all of src to stdout. Returns 0 or a negative errno (err filled). */
static int cat_copy(cat_read_fn rd, void *src, struct tm_err *err)
{
        char *buf = malloc(CAT_BUF);
        uint64_t off = 0;
        ssize_t n = buf ? 0 : tm_err_set(err, -ENOMEM, "out of memory");
        while (buf && (n = rd(src, buf, CAT_BUF, off, err)) > 0) {
                off += (uint64_t)n;
                int w = tool_write_all(STDOUT_FILENO, buf, (size_t)n);
                if (w < 0) {
                        n = tm_err_set(err, w, "<stdout>: %s", strerror(-w));
                        break;
                }
        }
        free(buf);
        return n < 0 ? (int)n : 0;
}

/* Copy all of view f to stdout: the bytes where the read-ahead decoded
 * them when it has (tm_vfile_peek), else through a buffer. Returns 0 or a
 * negative errno (err filled). */
static int cat_view(struct tm_vfile *f, struct tm_err *err)
{
        char *buf = malloc(CAT_BUF);
        uint64_t off = 0;
        ssize_t n = buf ? 0 : tm_err_set(err, -ENOMEM, "out of memory");
        while (buf) {
                struct tm_vspan sp;
                int w = 0;
                n = tm_vfile_peek(f, CAT_BUF, off, &sp);
                if (n > 0) {
                        for (unsigned i = 0; i < sp.n && w == 0; i++)
                                w = tool_write_all(STDOUT_FILENO, sp.iov[i].iov_base,
                                                   sp.iov[i].iov_len);
                        tm_vfile_unpeek(&sp);
                } else if ((n = tm_vfile_pread(f, buf, CAT_BUF, off, err)) > 0) {
                        w = tool_write_all(STDOUT_FILENO, buf, (size_t)n);
                } else {
                        break;
                }
                if (w < 0) {
                        n = tm_err_set(err, w, "<stdout>: %s", strerror(-w));
                        break;
                }
                off += (uint64_t)n;
        }
        free(buf);
        return n < 0 ? (int)n : 0;
}

/* cat ARCHIVE members/PATH: a member of a zip archive. */
static int cat_member(struct tm_trace *t, const char *archive, const char *path)
{
        struct tm_members *m;
        struct tm_member *f = NULL;
        struct tm_err err = {0};
        int rc = tm_members_open(t, &m, &err);
        if (rc == 0) {
                rc = tm_member_open(t, m, path, &f, &err);
                if (rc == -ENOENT)
                        fprintf(stderr, "tracetool cat: %s: no member '%s'\n", archive, path);
                else if (rc == 0)
                        rc = cat_copy(cat_read_member, f, &err);
                tm_member_close(f);
                tm_members_close(m);
        }
        tm_trace_close(t);
        return rc == -ENOENT ? TOOL_FAIL : rc < 0 ? tool_fail("cat", &err, rc) : TOOL_OK;
}

static int cmd_cat(char **args)
{
        struct tm_trace *t;
        struct tm_vfile *f;
        struct tm_err err = {0};
        if (tool_open("cat", args[0], &t) < 0)
                return TOOL_FAIL;
        if (tm_trace_has_members(t) && strncmp(args[1], "members/", 8) == 0)
                return cat_member(t, args[0], args[1] + 8);
        int rc = tm_vfile_open(t, args[1], &f, &err);
        if (rc == -ENOENT) {
                fprintf(stderr, "tracetool cat: %s: no view '%s' (see tracetool views)\n", args[0],
                        args[1]);
                tm_trace_close(t);
                return TOOL_FAIL;
        }
        if (rc < 0) {
                tm_trace_close(t);
                return tool_fail("cat", &err, rc);
        }
        rc = cat_view(f, &err);
        tm_vfile_close(f);
        /* a view that describes a damaged trace's prefix (stats) is read
         * whole: the damage still fails the command */
        if (rc == 0)
                rc = tm_trace_index(t, NULL, NULL, &err);
        tm_trace_close(t);
        return rc < 0 ? tool_fail("cat", &err, rc) : TOOL_OK;
}

static int cmd_views(char **args)
{
        struct tm_trace *t;
        if (tool_open("views", args[0], &t) < 0)
                return TOOL_FAIL;
        tm_trace_view_lookup(t, "streams"); /* every view, the index's too */
        for (const char *const *v = tm_trace_views(t); v && *v; v++)
                printf("%s\n", *v);
        tm_trace_close(t);
        return TOOL_OK;
}

/* One pass over the whole archive (index build or verify) with a progress
 * bar; on success prints "ARCHIVE: " and what done() says. */
typedef int (*pass_fn)(struct tm_trace *t, tm_progress_fn progress, void *arg, struct tm_err *err);

static int run_pass(const char *cmd, const char *label, const char *path, pass_fn pass,
                    void (*done)(const struct tm_trace *t))
{
        struct tm_trace *t;
        struct tm_err err = {0};
        struct progress p;
        if (tool_open(cmd, path, &t) < 0)
                return TOOL_FAIL;
        progress_init(&p, label);
        int rc = pass(t, progress_update, &p, &err);
        progress_end(&p);
        if (rc == 0) {
                printf("%s: ", path);
                done(t);
        }
        tm_trace_close(t);
        return rc < 0 ? tool_fail(cmd, &err, rc) : TOOL_OK;
}

static void index_done(const struct tm_trace *t)
{
        const char *ip = tm_trace_index_path(t);
        enum tm_index_source how = tm_trace_index_source(t);
        printf("index %s (%s)\n", ip ? ip : "in memory only",
               how == TM_INDEX_BUILT ? "built" : "loaded");
        if (tm_trace_index_note(t))
                fprintf(stderr, "tracetool: %s\n", tm_trace_index_note(t));
}

static void verify_done(const struct tm_trace *t)
{
        (void)t;
        printf("ok\n");
}

static int cmd_index(char **args)
{
        return run_pass("index", "indexing", args[0], tm_trace_index, index_done);
}

static int cmd_verify(char **args)
{
        return run_pass("verify", "verifying", args[0], tm_trace_verify, verify_done);
}

/* Print the stats view, byte for byte as `cat ARCHIVE stats` gives it (the
 * same text: views/stats.c and the family's report). */
static int stat_print_view(struct tm_trace *t, struct tm_err *err)
{
        struct tm_vfile *f;
        int rc = tm_vfile_open(t, "stats", &f, err);
        if (rc < 0)
                return rc;
        rc = cat_copy(cat_read_view, f, err);
        tm_vfile_close(f);
        return rc;
}

/* Print each view's name and size in two columns, the names padded to the
 * longest. Returns 0 or a negative errno (err filled). */
static int stat_print_sizes(struct tm_trace *t, struct tm_err *err)
{
        const char *const *views = tm_trace_views(t);
        int width = 0;
        for (const char *const *v = views; v && *v; v++)
                width = (int)strlen(*v) > width ? (int)strlen(*v) : width;
        printf("views\n");
        for (const char *const *v = views; v && *v; v++) {
                uint64_t size;
                int rc = tm_trace_view_size(t, *v, &size, err);
                if (rc < 0)
                        return rc;
                printf("  %-*s %14" PRIu64 " bytes\n", width, *v, size);
        }
        return 0;
}

static int cmd_stat(char **args)
{
        struct tm_trace *t;
        struct tm_err err = {0};
        if (tool_json) { /* the stats.json view (docs/stats-json.md) */
                char view[] = "stats.json";
                char *cat_args[] = {args[0], view};
                return cmd_cat(cat_args);
        }
        if (tool_open("stat", args[0], &t) < 0)
                return TOOL_FAIL;
        int rc = stat_print_view(t, &err);
        /* a damaged trace's numbers are those of its intact prefix: the
         * report says so, and so does the exit status */
        struct tm_err damage = {0};
        int damaged = rc == 0 && tm_trace_index(t, NULL, NULL, &damage) < 0;
        if (rc == 0) {
                const char *ip = tm_trace_index_path(t);
                const char *note = tm_trace_index_note(t);
                printf("\nindex      %s\n", ip ? ip : note ? note : "(in memory only)");
                rc = stat_print_sizes(t, &err);
        }
        tm_trace_close(t);
        if (rc < 0)
                return tool_fail("stat", &err, rc);
        return damaged ? tool_fail("stat", &damage, -EIO) : TOOL_OK;
}

static const struct command commands[] = {
    {"pack", "[options] IN OUT", "re-encode a trace (see tracetool pack --help)", -1,
     NULL /* pack_main parses its own options */},
    {"record", "-o OUT -- PROGRAM", "record a program's heap operations (see --help)", -1,
     NULL /* record_main parses its own options */},
    {"cat", "ARCHIVE VIEW",
     "write a view (ascii, binary, raw, stats, streams/read, ...), or a zip archive's "
     "members/NAME, to stdout",
     2, cmd_cat},
    {"stat", "[--json] ARCHIVE",
     "the stats view, then the index location and each view's size; --json: the stats.json view", 1,
     cmd_stat},
    {"index", "ARCHIVE", "build or load the index (progress on stderr)", 1, cmd_index},
    {"verify", "ARCHIVE", "decode everything and check checksums and index; exit 1 on error", 1,
     cmd_verify},
    {"views", "ARCHIVE", "list the views of a trace", 1, cmd_views},
};

#define NCOMMANDS (sizeof commands / sizeof commands[0])

static void usage(FILE *f)
{
        fprintf(f, "usage: tracetool COMMAND [ARGS]\n\ncommands:\n");
        for (size_t i = 0; i < NCOMMANDS; i++)
                fprintf(f, "  %-6s %-18s %s\n", commands[i].name, commands[i].args,
                        commands[i].help);
        fprintf(f, "\n  tracetool COMMAND --help    help for one command\n"
                   "  tracetool --version\n\n"
                   "exit status: 0 ok, 1 failure, 2 usage error\n");
}

static void command_usage(FILE *f, const struct command *c)
{
        fprintf(f,
                "usage: tracetool %s [--cache-dir DIR] [--no-index-beside] [--trust-group-index]\n"
                "       [--trust-group-dtd] [--unverified-prefix] %s\n\n%s\n\n"
                "  --cache-dir DIR     where indexes go when the archive's directory is not\n"
                "                      writable (default $XDG_CACHE_HOME/tracemount)\n"
                "  --no-index-beside   never write an index beside the archive\n"
                "  --trust-group-index believe indexes that members of a group-shared cache\n"
                "                      wrote for archives they cannot change\n"
                "  --trust-group-dtd   believe a Meta-TF DTD beside the archive that members\n"
                "                      of its directory's group may write\n"
                "  --unverified-prefix a damaged gzip or zip member: show what decoded before\n"
                "                      the damage, unchecked (the damage message says so)\n",
                c->name, c->args, c->help);
}

/* Take the common options out of argv[2..argc) (moving the rest down);
 * returns the new argc, or -1 after a usage message. */
static int tool_options(int argc, char **argv, const struct command *c)
{
        int out = 2;
        for (int a = 2; a < argc; a++) {
                const char *s = argv[a];
                if (strcmp(s, "--cache-dir") == 0 && a + 1 < argc) {
                        tool_opts.cache_dir = argv[++a];
                } else if (strncmp(s, "--cache-dir=", 12) == 0 && s[12]) {
                        tool_opts.cache_dir = s + 12;
                } else if (strcmp(s, "--no-index-beside") == 0) {
                        tool_opts.no_index_beside = 1;
                } else if (strcmp(s, "--trust-group-index") == 0) {
                        tool_opts.trust_group_index = 1;
                } else if (strcmp(s, "--trust-group-dtd") == 0) {
                        tool_opts.trust_group_dtd = 1;
                } else if (strcmp(s, "--unverified-prefix") == 0) {
                        tool_opts.unverified_prefix = 1;
                } else if (strcmp(s, "--json") == 0 && c->run == cmd_stat) {
                        tool_json = 1;
                } else if (s[0] == '-' && s[1]) {
                        fprintf(stderr, "tracetool %s: %s '%s'\n\n", c->name,
                                strcmp(s, "--cache-dir") == 0 ? "a value is needed for"
                                                              : "unknown option",
                                s);
                        command_usage(stderr, c);
                        return -1;
                } else {
                        argv[out++] = argv[a];
                }
        }
        return out;
}

int main(int argc, char **argv)
{
        if (argc < 2) {
                usage(stderr);
                return TOOL_USAGE;
        }
        if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 ||
            strcmp(argv[1], "help") == 0) {
                usage(stdout);
                return TOOL_OK;
        }
        if (strcmp(argv[1], "-V") == 0 || strcmp(argv[1], "--version") == 0) {
                printf("tracetool %s\n", TM_VERSION);
                return TOOL_OK;
        }
        if (strcmp(argv[1], "pack") == 0)
                return pack_main(argc - 1, argv + 1);
        if (strcmp(argv[1], "record") == 0) {
                static const struct record_packer pk = {pack_parse_level, pack_fd,
                                                        PACK_RECORD_LEVEL, PACK_LEVEL};
                return record_main(argc - 1, argv + 1, &pk);
        }
        for (size_t i = 0; i < NCOMMANDS; i++) {
                const struct command *c = &commands[i];
                if (strcmp(argv[1], c->name) != 0)
                        continue;
                for (int a = 2; a < argc; a++)
                        if (strcmp(argv[a], "-h") == 0 || strcmp(argv[a], "--help") == 0) {
                                command_usage(stdout, c);
                                return TOOL_OK;
                        }
                argc = tool_options(argc, argv, c);
                if (argc < 0)
                        return TOOL_USAGE;
                if (argc - 2 != c->nargs) {
                        fprintf(stderr, "tracetool %s: takes %d argument%s, got %d\n\n", c->name,
                                c->nargs, c->nargs == 1 ? "" : "s", argc - 2);
                        command_usage(stderr, c);
                        return TOOL_USAGE;
                }
                return c->run(argv + 2);
        }
        fprintf(stderr, "tracetool: unknown command '%s'\n\n", argv[1]);
        usage(stderr);
        return TOOL_USAGE;
}
