/* tracemount: mount a directory of trace archives, each shown as a
 * directory of decoded views. Option parsing and the FUSE session. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <malloc.h>
#include <mntent.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bdi.h"
#include "codecs/registry.h"
#include "drop.h"
#include "inode.h"
#include "inval.h"
#include "log.h"
#include "node.h"
#include "ops.h"
#include "rofs.h"
#include "views/cachepath.h"

#include <fuse_lowlevel.h>

/* --handle-memory's default, MiB (the library's own, TM_HMEM_DEFAULT) */
#define MAIN_HANDLE_MB 256
#define MAIN_MMAP_THRESHOLD (128 * 1024)
#define MAIN_ARENA_MAX 2

#ifndef TM_VERSION
#define TM_VERSION "unknown"
#endif

struct main_opts {
        char *cache_dir;
        int no_index_beside;
        int trust_group_index;
        int trust_group_dtd;
        int unverified_prefix;
        int direct_io;
        char *read_ahead_s; /* --read-ahead's value, parsed by main_prepare */
        long read_ahead;    /* KiB; -1: BDI_READ_AHEAD_KB */
        char *drop_s;       /* --drop-behind's value */
        long drop_mb;       /* MiB; -1: DROP_KEEP_MB_DEFAULT */
        char *hmem_s;       /* --handle-memory's value */
        long hmem_mb;       /* MiB; -1: MAIN_HANDLE_MB */
        char *traces_s;     /* --max-traces's value */
        long traces;        /* -1: NODE_OPEN_DEFAULT */
        char *tmem_s;       /* --trace-memory's value */
        long tmem_mb;       /* MiB; -1: NODE_OPEN_MB_DEFAULT */
        char *log_file;
        int help;
        int version;
        char *src; /* first non-option */
        char *mnt; /* second non-option (also kept for fuse) */
        int extra; /* more non-options than two */
};

enum { KEY_HELP, KEY_VERSION };

/* The options, each in two spellings: --dashed-name (the command line)
 * and underscore_name (-o name[=value], for mount(8) and /etc/fstab).
 * V: an option with a value, only its "=" form (fuse_opt would match
 * "--cache-dir %s" to "--cache-dir=DIR" as well, and take "=DIR" for its
 * value; main_join_args turns "--cache-dir DIR" into "--cache-dir=DIR");
 * F: a flag, set to 1. */
#define MAIN_OPTS(V, F)                                                                            \
        V("cache-dir", "cache_dir", cache_dir)                                                     \
        F("no-index-beside", "no_index_beside", no_index_beside)                                   \
        F("trust-group-index", "trust_group_index", trust_group_index)                             \
        F("trust-group-dtd", "trust_group_dtd", trust_group_dtd)                                   \
        F("unverified-prefix", "unverified_prefix", unverified_prefix)                             \
        F("direct-io", "direct_io", direct_io)                                                     \
        V("read-ahead", "read_ahead", read_ahead_s)                                                \
        V("drop-behind", "drop_behind", drop_s)                                                    \
        V("handle-memory", "handle_memory", hmem_s)                                                \
        V("max-traces", "max_traces", traces_s)                                                    \
        V("trace-memory", "trace_memory", tmem_s)                                                  \
        V("log-file", "log_file", log_file)
#define MAIN_DASH_V(d, u, f) {"--" d "=%s", offsetof(struct main_opts, f), 0},
#define MAIN_DASH_F(d, u, f) {"--" d, offsetof(struct main_opts, f), 1},
#define MAIN_UNDER_V(d, u, f) {u "=%s", offsetof(struct main_opts, f), 0},
#define MAIN_UNDER_F(d, u, f) {u, offsetof(struct main_opts, f), 1},
static const struct fuse_opt main_optspec[] = {
    MAIN_OPTS(MAIN_DASH_V, MAIN_DASH_F)   /* --dashed-name */
    MAIN_OPTS(MAIN_UNDER_V, MAIN_UNDER_F) /* -o underscore_name */
    FUSE_OPT_KEY("-h", KEY_HELP),
    FUSE_OPT_KEY("--help", KEY_HELP),
    FUSE_OPT_KEY("-V", KEY_VERSION),
    FUSE_OPT_KEY("--version", KEY_VERSION),
    FUSE_OPT_END,
};

static int main_optproc(void *data, const char *arg, int key, struct fuse_args *args)
{
        (void)args;
        struct main_opts *o = data;
        switch (key) {
        case KEY_HELP:
                o->help = 1;
                return 0;
        case KEY_VERSION:
                o->version = 1;
                return 0;
        case FUSE_OPT_KEY_NONOPT:
                if (!o->src) {
                        o->src = strdup(arg);
                        return 0; /* not fuse's business */
                }
                if (!o->mnt) {
                        o->mnt = strdup(arg);
                        return 1;
                }
                o->extra = 1;
                return 1;
        default:
                return 1;
        }
}

static void main_usage(const char *prog)
{
        printf("usage: %s [options] SRC_DIR MOUNTPOINT\n\n"
               "Mount SRC_DIR read-only at MOUNTPOINT. Every trace archive in it is shown\n"
               "as a directory of decoded views (ascii, binary, raw, stats, streams/*);\n"
               "other files pass through unchanged.\n\n"
               "tracemount options:\n"
               "    --cache-dir DIR        keep trace indexes in DIR when the archive's\n"
               "                           directory is not writable (default:\n"
               "                           $XDG_CACHE_HOME/tracemount or ~/.cache/tracemount)\n"
               "    --no-index-beside      never write indexes beside the archives\n"
               "    --trust-group-index    believe indexes that members of a group-shared\n"
               "                           cache wrote for archives they cannot change\n"
               "                           (docs/shared-cache.md)\n"
               "    --trust-group-dtd      believe Meta-TF DTDs beside an archive that\n"
               "                           members of its directory's group may write\n"
               "                           (docs/side-files.md)\n"
               "    --unverified-prefix    a damaged gzip or zip member shows what decoded\n"
               "                           before the damage, unchecked; errors says so\n"
               "                           (default: nothing of a damaged member)\n"
               "    --direct-io            views bypass the kernel page cache: steadier\n"
               "                           one-pass reads; no caching, readahead, mmap\n"
               "    --read-ahead KB        the kernel's readahead for this mount, set when\n"
               "                           the daemon may (root); 0 leaves the kernel's\n"
               "                           (default: %d)\n"
               "    --drop-behind MB       keep only the last MB MiB a sequential reader\n"
               "                           has read of a file in the page cache (at least\n"
               "                           16, and 4 times --read-ahead); 0 keeps all\n"
               "                           (default: %d)\n"
               "    --handle-memory MB     what the open view files may hold together\n"
               "                           (decoders, buffers, readahead); past it the\n"
               "                           least recently read give theirs back and\n"
               "                           resume from a checkpoint (default: %d)\n"
               "    --max-traces N         archives kept open with their index in\n"
               "                           memory; the least recently used one past it\n"
               "                           is closed and reopened from its index file\n"
               "                           when asked for again (default: %d)\n"
               "    --trace-memory MB      the same bound in memory those hold\n"
               "                           (default: %d)\n"
               "    --log-file FILE        append the daemon's messages (the reasons for\n"
               "                           EIO) to FILE, each with the time (default:\n"
               "                           syslog in the background, stderr with -f)\n"
               "    -h, --help             this help, then the FUSE options\n"
               "    -V, --version          print the version\n\n"
               "Each option above is also taken as -o name[=value] for mount(8) and\n"
               "/etc/fstab: cache_dir=DIR, no_index_beside, trust_group_index,\n"
               "trust_group_dtd, unverified_prefix, direct_io, read_ahead=KB, drop_behind=MB,\n"
               "handle_memory=MB, max_traces=N, trace_memory=MB, log_file=FILE. The mount is\n"
               "read-only whatever -o says.\n\n",
               prog, BDI_READ_AHEAD_KB, DROP_KEEP_MB_DEFAULT, MAIN_HANDLE_MB, NODE_OPEN_DEFAULT,
               NODE_OPEN_MB_DEFAULT);
}

/* The source of the tracemount mounted at the real path m, from the mount
 * table, into src (PATH_MAX); 0 if there is one, else -1. A second mount
 * there would hide the first one without a word. */
static int main_mounted_here(const char *m, char *src)
{
        FILE *f = setmntent("/proc/self/mounts", "r");
        if (!f)
                return -1;
        int found = -1;
        struct mntent *e;
        while ((e = getmntent(f)) != NULL)
                if (strcmp(e->mnt_dir, m) == 0 && strcmp(e->mnt_type, "fuse.tracemount") == 0) {
                        snprintf(src, PATH_MAX, "%s", e->mnt_fsname);
                        found = 0;
                }
        endmntent(f);
        return found;
}

/* The mount point must be a directory, not a tracemount already, and not
 * inside the source tree (the daemon would look into its own mount and
 * deadlock). Its real path into m (PATH_MAX). */
static int main_check_paths(const char *src, const char *mnt, char *m)
{
        size_t n = strlen(src);
        struct stat st;
        char other[PATH_MAX];
        if (!realpath(mnt, m) || stat(m, &st) < 0) {
                fprintf(stderr, "tracemount: mount point %s: %s\n", mnt, strerror(errno));
                return -1;
        }
        if (!S_ISDIR(st.st_mode)) {
                fprintf(stderr, "tracemount: mount point %s is not a directory\n", mnt);
                return -1;
        }
        if (main_mounted_here(m, other) == 0) {
                fprintf(stderr,
                        "tracemount: %s is already a tracemount (of %s); unmount it first "
                        "(fusermount3 -u %s)\n",
                        m, other, m);
                return -1;
        }
        if (strncmp(m, src, n) == 0 && (m[n] == '/' || m[n] == '\0')) {
                fprintf(stderr, "tracemount: mount point %s is inside the source %s\n", m, src);
                return -1;
        }
        return 0;
}

/* Mount and serve until unmounted or signalled. Returns the exit status:
 * 0, 2 for options libfuse refuses, 1 for anything else. */
static int main_serve(struct fuse_args *args, const struct fuse_cmdline_opts *co,
                      struct tmfs_conf *conf)
{
        if (ino_init() < 0) {
                fprintf(stderr, "tracemount: out of memory\n");
                return 1;
        }
        struct fuse_lowlevel_ops ops = tmfs_ops; /* libfuse keeps a copy */
        rofs_fill(&ops);
        struct fuse_session *se = fuse_session_new(args, &ops, sizeof ops, conf);
        if (!se) { /* libfuse has named the option */
                fprintf(stderr, "tracemount: not mounted (tracemount --help lists the options)\n");
                ino_fini();
                return 2;
        }
        int rc = 1;
        if (fuse_set_signal_handlers(se) == 0) {
                if (fuse_session_mount(se, co->mountpoint) < 0) {
                        fprintf(stderr, "tracemount: cannot mount on %s (see above)\n", conf->mnt);
                } else {
                        log_mounted(co->foreground);
                        if (fuse_daemonize(co->foreground) == 0) {
                                struct fuse_loop_config *cfg = NULL;
                                /* after fuse_daemonize (a fork keeps no threads) */
                                const unsigned ra = conf->read_ahead_kb ? conf->read_ahead_kb
                                                                        : BDI_KERNEL_READ_AHEAD_KB;
                                int drc = drop_start(se, (uint64_t)conf->drop_behind_mb << 20,
                                                     (uint64_t)ra << 10);
                                if (drc < 0)
                                        fuse_log(FUSE_LOG_WARNING,
                                                 "tracemount: no drop-behind: %s\n",
                                                 strerror(-drc));
                                int irc = inval_start(se);
                                if (irc < 0)
                                        fuse_log(FUSE_LOG_WARNING,
                                                 "tracemount: no invalidation of changed "
                                                 "archives' pages: %s\n",
                                                 strerror(-irc));
                                else
                                        node_set_change_hook(inval_note);
                                if (co->singlethread) {
                                        rc = fuse_session_loop(se);
                                } else if ((cfg = fuse_loop_cfg_create()) != NULL) {
                                        fuse_loop_cfg_set_clone_fd(cfg, (unsigned)co->clone_fd);
                                        fuse_loop_cfg_set_idle_threads(cfg, co->max_idle_threads);
                                        fuse_loop_cfg_set_max_threads(cfg, co->max_threads);
                                        rc = fuse_session_loop_mt(se, cfg);
                                        fuse_loop_cfg_destroy(cfg);
                                }
                                node_set_change_hook(NULL);
                                inval_stop();
                                drop_stop();
                                rc = rc == 0 ? 0 : 1;
                        }
                        fuse_session_unmount(se);
                }
                fuse_remove_signal_handlers(se);
        }
        fuse_session_destroy(se); /* runs ops' destroy: node_fini */
        ino_fini();
        return rc;
}

static void main_free(struct main_opts *o, struct fuse_args *args)
{
        fuse_opt_free_args(args);
        free(o->src);
        free(o->mnt);
        free(o->cache_dir);
        free(o->read_ahead_s);
        free(o->drop_s);
        free(o->hmem_s);
        free(o->traces_s);
        free(o->tmem_s);
        free(o->log_file);
        log_close();
}

/* Options of ours that take a value, which may come as a separate argument. */
static const char *const main_valued[] = {"--cache-dir",     "--read-ahead", "--drop-behind",
                                          "--handle-memory", "--max-traces", "--trace-memory",
                                          "--log-file"};

/* A copy of argv in args with "--cache-dir DIR" joined into
 * "--cache-dir=DIR" (and the other options of main_valued likewise). -1
 * when out of memory. */
static int main_join_args(int argc, char *argv[], struct fuse_args *args)
{
        for (int i = 0; i < argc; i++) {
                const char *a = argv[i];
                char *joined = NULL;
                for (size_t k = 0; k < sizeof main_valued / sizeof *main_valued; k++)
                        if (i + 1 < argc && strcmp(a, main_valued[k]) == 0 &&
                            asprintf(&joined, "%s=%s", a, argv[i + 1]) < 0)
                                return -1;
                int rc = fuse_opt_add_arg(args, joined ? joined : a);
                i += joined != NULL;
                free(joined);
                if (rc < 0)
                        return -1;
        }
        return 0;
}

/* The value s of option opt: a whole number from 0 to max (in unit)
 * into *v; s NULL leaves *v. 0, or -1 with a message. */
static int main_parse_size(const char *opt, const char *s, long max, const char *unit, long *v)
{
        if (!s)
                return 0;
        char *end;
        errno = 0;
        long x = strtol(s, &end, 10);
        if (errno || end == s || *end || x < 0 || x > max) {
                fprintf(stderr, "tracemount: %s %s: not a size in %s (0 to %ld)\n", opt, s, unit,
                        max);
                return -1;
        }
        *v = x;
        return 0;
}

/* A relative --cache-dir made absolute: the daemon changes to / when it
 * goes to the background. */
static int main_abs_cache_dir(struct main_opts *o)
{
        if (!o->cache_dir || !*o->cache_dir || o->cache_dir[0] == '/')
                return 0;
        char cwd[PATH_MAX], *abs;
        if (!getcwd(cwd, sizeof cwd) || asprintf(&abs, "%s/%s", cwd, o->cache_dir) < 0) {
                fprintf(stderr, "tracemount: --cache-dir %s: %s\n", o->cache_dir, strerror(errno));
                return -1;
        }
        free(o->cache_dir);
        o->cache_dir = abs;
        return 0;
}

/* The cache directory, --cache-dir DIR or else the default
 * ($XDG_CACHE_HOME/tracemount, $HOME/.cache/tracemount of the daemon's
 * user: tm_cachepath_dir), made if missing and opened once at mount:
 * index files in it are then read and written through this descriptor,
 * never through the path (docs/reliability.md, "Threat model"). *dir
 * gets its path, for messages (NULL when none can be named: no cache
 * directory is used). Returns the descriptor, or a negative errno when it
 * cannot be opened as a directory (the library then uses none, and says
 * why in the index's note), or 0 when none can be named. */
static int main_open_cache_dir(const char *given, char **dir)
{
        *dir = tm_cachepath_dir(given);
        if (!*dir)
                return 0;
        int fd = tm_cachepath_open(*dir, 1);
        if (fd == 0) { /* 0 means none in struct tm_trace_opts */
                fd = fcntl(0, F_DUPFD_CLOEXEC, 1);
                fd = fd < 0 ? -errno : fd;
                close(0);
        }
        return fd;
}

/* The memory policy of the daemon, and the bounds of the options.
 * Buffers from 128 KiB on (a cursor's input and line buffers, a zstd
 * frame, readahead segments) are mapped apart, so that a close returns
 * them to the system at once: glibc's default threshold rises to the
 * largest buffer freed, after which such buffers come from the arenas
 * and stay there. Two arenas for all threads: each arena keeps fragments
 * that malloc_trim cannot return. What each choice measured:
 * docs/performance.md, "Memory". */
static void main_memory(const struct main_opts *o)
{
        mallopt(M_MMAP_THRESHOLD, MAIN_MMAP_THRESHOLD);
        mallopt(M_ARENA_MAX, MAIN_ARENA_MAX);
        tm_handle_memory_set((uint64_t)(o->hmem_mb < 0 ? MAIN_HANDLE_MB : o->hmem_mb) << 20);
        node_set_bounds(o->traces < 0 ? NODE_OPEN_DEFAULT : (unsigned)o->traces,
                        (uint64_t)(o->tmem_mb < 0 ? NODE_OPEN_MB_DEFAULT : o->tmem_mb) << 20);
}

/* Everything before the FUSE session; returns -1 to go on, else an exit status.
 * src and mnt (PATH_MAX each) get the real paths of both directories. */
static int main_prepare(struct main_opts *o, struct fuse_args *args, const char *prog, char *src,
                        char *mnt)
{
        if (fuse_opt_parse(args, o, main_optspec, main_optproc) < 0)
                return 2;
        if (o->version) {
                printf("tracemount %s (libfuse %s)\n", TM_VERSION, fuse_pkgversion());
                return 0;
        }
        if (o->help) {
                main_usage(prog);
                printf("FUSE options:\n");
                fuse_cmdline_help();
                fuse_lowlevel_help();
                return 0;
        }
        if (!o->src || !o->mnt || o->extra) {
                fprintf(stderr, "usage: %s [options] SRC_DIR MOUNTPOINT (try --help)\n", prog);
                return 2;
        }
        struct stat st;
        if (!realpath(o->src, src) || stat(src, &st) < 0) {
                fprintf(stderr, "tracemount: %s: %s\n", o->src, strerror(errno));
                return 1;
        }
        if (!S_ISDIR(st.st_mode)) {
                fprintf(stderr, "tracemount: %s: not a directory\n", o->src);
                return 1;
        }
        if (main_parse_size("--read-ahead", o->read_ahead_s, 1 << 20, "KiB", &o->read_ahead) < 0 ||
            main_parse_size("--drop-behind", o->drop_s, 1L << 30, "MiB", &o->drop_mb) < 0 ||
            main_parse_size("--handle-memory", o->hmem_s, 1L << 30, "MiB", &o->hmem_mb) < 0 ||
            main_parse_size("--max-traces", o->traces_s, 1L << 20, "traces", &o->traces) < 0 ||
            main_parse_size("--trace-memory", o->tmem_s, 1L << 30, "MiB", &o->tmem_mb) < 0)
                return 2;
        if (o->hmem_mb == 0 || o->traces == 0) {
                fprintf(stderr, "tracemount: %s 0: at least 1\n",
                        o->hmem_mb == 0 ? "--handle-memory" : "--max-traces");
                return 2;
        }
        if (main_abs_cache_dir(o) < 0)
                return 1;
        if (main_check_paths(src, o->mnt, mnt) < 0)
                return 1;
        if (o->log_file && log_open(o->log_file) < 0)
                return 1;
        if (strcmp(src, "/") == 0)
                src[0] = '\0'; /* paths are appended to it */
        return -1;
}

/* glibc's per-thread caches of freed chunks (tcache, up to 7 a size a
 * thread) stay with each idle FUSE worker and pin arena pages that
 * malloc_trim cannot return: with them, RSS after 2,000 handles closed
 * stayed 30-36% above idle, without them 2-5% (docs/performance.md,
 * "Memory"). Only the environment can turn them off (GLIBC_TUNABLES, read
 * by the dynamic loader before the first malloc), so the daemon starts
 * itself again with glibc.malloc.tcache_count=0 added, unless the
 * variable already names tcache_count (the user's choice, or this is the
 * second start). When the new start fails the daemon goes on as it is. */
static void main_malloc_tunables(char *argv[])
{
        const char *t = getenv("GLIBC_TUNABLES");
        if (t && strstr(t, "glibc.malloc.tcache_count"))
                return;
        char v[1024], was[1024];
        int n = snprintf(v, sizeof v, "%s%sglibc.malloc.tcache_count=0", t ? t : "",
                         t && *t ? ":" : "");
        if (n < 0 || (size_t)n >= sizeof v)
                return;
        snprintf(was, sizeof was, "%s", t ? t : ""); /* fits: shorter than v */
        int had = t != NULL;
        if (setenv("GLIBC_TUNABLES", v, 1) < 0)
                return;
        execv("/proc/self/exe", argv);
        /* the process is as it was: its own GLIBC_TUNABLES back */
        if (had)
                setenv("GLIBC_TUNABLES", was, 1);
        else
                unsetenv("GLIBC_TUNABLES");
}

int main(int argc, char *argv[])
{
        main_malloc_tunables(argv);
        struct fuse_args args = FUSE_ARGS_INIT(0, NULL);
        struct main_opts o = {
            .read_ahead = -1, .drop_mb = -1, .hmem_mb = -1, .traces = -1, .tmem_mb = -1};
        if (main_join_args(argc, argv, &args) < 0) {
                fprintf(stderr, "tracemount: out of memory\n");
                return 1;
        }
        char src[PATH_MAX];
        static char mnt[PATH_MAX];

        int rc = main_prepare(&o, &args, argv[0], src, mnt);
        if (rc >= 0) {
                main_free(&o, &args);
                return rc;
        }
        /* the registry built now, in the directory and with the stderr the
         * daemon was started with (TM_BOUND_FORMATS' names, its reports),
         * not on the first probe after fuse_daemonize */
        tm_registry();
        char *cache_dir;
        int cache_fd = main_open_cache_dir(o.cache_dir, &cache_dir);
        free(o.cache_dir);
        o.cache_dir = cache_dir; /* main_free's */
        struct tm_trace_opts topts = {
            .cache_dir = o.cache_dir,
            .cache_dir_fd = cache_fd,
            .no_index_beside = o.no_index_beside,
            .trust_group_index = o.trust_group_index,
            .trust_group_dtd = o.trust_group_dtd,
            .unverified_prefix = o.unverified_prefix,
        };
        char extra[PATH_MAX + 64];
        if (strchr(src, ',') || strchr(src, '\\'))
                snprintf(extra, sizeof extra, "-odefault_permissions,subtype=tracemount");
        else
                snprintf(extra, sizeof extra, "-odefault_permissions,subtype=tracemount,fsname=%s",
                         src[0] ? src : "/");
        /* before the user's arguments, so that theirs win; max_idle_threads works
         * around libfuse 3.14 warning about its own default (-1). After them,
         * so that ours win: read-only whatever mount(8) passes ("rw,dev,suid"
         * from mount.fuse3), and no setuid or device files from the source. */
        if (node_init(src, &topts) < 0 || fuse_opt_insert_arg(&args, 1, extra) < 0 ||
            fuse_opt_insert_arg(&args, 1, "-omax_idle_threads=16") < 0 ||
            fuse_opt_add_arg(&args, "-oro,nosuid,nodev") < 0) {
                fprintf(stderr, "tracemount: cannot set up\n");
                main_free(&o, &args);
                return 1;
        }
        struct fuse_cmdline_opts co;
        if (fuse_parse_cmdline(&args, &co) != 0) {
                main_free(&o, &args);
                return 2;
        }
        main_memory(&o);
        static struct tmfs_conf conf;
        conf.direct_io = o.direct_io;
        conf.read_ahead_kb = o.read_ahead < 0 ? BDI_READ_AHEAD_KB : (unsigned)o.read_ahead;
        conf.drop_behind_mb = o.drop_mb < 0 ? DROP_KEEP_MB_DEFAULT : (unsigned)o.drop_mb;
        conf.mnt = mnt;
        rc = main_serve(&args, &co, &conf);
        free(co.mountpoint);
        main_free(&o, &args);
        return rc;
}
