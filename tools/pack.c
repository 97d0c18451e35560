/* tracetool pack: re-encode a trace into another format and container.
 *
 * References come from a struct ref_src: the input decoded in one pass,
 * through its container for a file, or from stdin. They go through the
 * output codec's encoder into a tm_cwriter; the encoder's output ends on a
 * record boundary after every encode(), so each flush is a boundary for the
 * writer. Access sizes travel beside the references when the output format
 * holds them (lackey), which needs an input that has them.
 *
 * When the encoder refuses a reference for want of a wider address or a
 * finer instruction unit, pack starts again with them: a file is read
 * again from its start; stdin is copied as it is read to an unnamed
 * temporary file (the spool, in $TMPDIR), which is read back before the
 * rest of stdin. Memory stays bounded; the spool takes as much disk as the
 * input, and only while pack runs. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "codecs/containers/container.h"
#include "codecs/address/trace.h"
#include "pack_heap.h"
#include "tools.h"
#include "views/feed.h"

#define PACK_BATCH 4096        /* references per batch */
#define PACK_IN_BUF (1u << 20) /* input buffer: also the longest record */
#define PACK_OUT_FLUSH (60u << 10)
#define PACK_SPOOL_CHUNK (1u << 20)

/* ---- reference sources ---- */

/* The input, decoded in one pass through a tm_feed: a file read through its
 * container (any container and codec the library reads), or stdin, which
 * must be uncompressed. */
struct ref_src {
        const char *name;  /* for messages */
        const char *codec; /* the input's codec */
        int fd;            /* the file, or STDIN_FILENO */
        struct tm_cont *cont;
        struct tm_creader *r; /* NULL for stdin */
        int spool;            /* stdin: its copy (see the top), or -1 */
        uint64_t spool_len;   /* bytes in the spool */
        uint64_t replay;      /* next spool byte to read again; spool_len: none */
        struct tm_feed feed;
        struct progress prog;
        uint64_t total; /* raw bytes, 0: unknown */
};

/* Stop copying stdin (no restart is possible after this). */
static void src_spool_end(struct ref_src *s)
{
        if (s->spool >= 0)
                close(s->spool);
        s->spool = -1;
}

/* Append buf[0..n) to the spool; on failure (a full disk) stop spooling:
 * pack then says which option to give instead of starting again. */
static void src_spool_put(struct ref_src *s, const void *buf, size_t n)
{
        size_t done = 0;
        while (s->spool >= 0 && done < n) {
                ssize_t k = pwrite(s->spool, (const char *)buf + done, n - done,
                                   (off_t)(s->spool_len + done));
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0) {
                        src_spool_end(s);
                        return;
                }
                done += (size_t)k;
        }
        s->spool_len += done;
        s->replay = s->spool_len;
}

/* Up to n raw bytes of the input; 0 at its end. */
static ssize_t src_read(struct ref_src *s, void *buf, size_t n, struct tm_err *err)
{
        if (s->r)
                return tm_creader_read(s->r, buf, n, err);
        if (s->spool >= 0 && s->replay < s->spool_len) {
                size_t m = s->spool_len - s->replay < n ? (size_t)(s->spool_len - s->replay) : n;
                ssize_t k = pread(s->spool, buf, m, (off_t)s->replay);
                if (k <= 0)
                        return tm_err_set(err, k < 0 ? -errno : -EIO, "%s: reading its copy: %s",
                                          s->name, k < 0 ? strerror(errno) : "short");
                s->replay += (uint64_t)k;
                return k;
        }
        for (;;) {
                ssize_t k = read(s->fd, buf, n < PACK_SPOOL_CHUNK ? n : PACK_SPOOL_CHUNK);
                if (k > 0)
                        src_spool_put(s, buf, (size_t)k);
                if (k >= 0)
                        return k;
                if (errno != EINTR)
                        return tm_err_set(err, -errno, "%s: read: %s", s->name, strerror(errno));
        }
}

/* From raw offset 0: probe the head, parse the header, and hand the rest
 * of the head to a fresh feed. */
static int src_start(struct ref_src *s, struct tm_err *err)
{
        uint8_t head[TM_PROBE_BYTES];
        size_t n = 0;
        ssize_t k = 1;
        while (n < sizeof head && (k = src_read(s, head + n, sizeof head - n, err)) > 0)
                n += (size_t)k;
        if (k < 0)
                return (int)k;
        const struct tm_codec *c = tm_codec_probe(head, n);
        if (!c)
                return tm_err_set(err, -EMEDIUMTYPE, "%s: not a trace this build can read%s",
                                  s->name, s->r ? "" : " (stdin must be uncompressed)");
        struct tm_dec_state st;
        memset(&st, 0, sizeof st);
        int h = c->dec_init(&st, head, n, err);
        if (h < 0)
                return tm_err_prefix(err, "%s", s->name);
        if ((size_t)h > n)
                return tm_err_set(err, -EIO, "%s: truncated header", s->name);
        s->codec = c->name;
        tm_feed_free(&s->feed);
        if (tm_feed_init(&s->feed, c, PACK_IN_BUF) < 0)
                return tm_err_set(err, -ENOMEM, "out of memory");
        tm_feed_reset(&s->feed, (uint64_t)h, &st);
        size_t room;
        memcpy(tm_feed_space(&s->feed, &room), head + h, n - (size_t)h);
        tm_feed_commit(&s->feed, n - (size_t)h);
        s->feed.eof = k == 0;
        return 0;
}

static int src_open_file(struct ref_src *s, const char *path, struct tm_err *err)
{
        s->name = path;
        s->fd = open(path, O_RDONLY | O_CLOEXEC);
        if (s->fd < 0)
                return tm_err_set(err, -errno, "%s: %s", path, strerror(errno));
        int rc = tm_cont_open(s->fd, path, &s->cont, err);
        if (rc == 0)
                rc = tm_creader_open(s->cont, &s->r, err);
        if (rc < 0)
                return rc;
        if (!tm_cont_raw_size(s->cont, &s->total))
                s->total = 0;
        progress_init(&s->prog, "packing");
        return src_start(s, err);
}

/* spool: keep a copy of stdin so that pack can start again. */
static int src_open_stdin(struct ref_src *s, int spool, struct tm_err *err)
{
        s->name = "<stdin>";
        s->fd = STDIN_FILENO;
        s->spool = -1;
        if (spool) {
                const char *dir = getenv("TMPDIR");
                s->spool = open(dir && *dir ? dir : "/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
        }
        progress_init(&s->prog, "packing");
        return src_start(s, err);
}

/* Up to cap references into out; returns the count, 0 at the end, or a
 * negative errno. */
static ssize_t src_next(struct ref_src *s, struct tm_ref *out, uint32_t *sizes, size_t cap,
                        struct tm_err *err)
{
        for (;;) {
                ssize_t n = tm_feed_decode_sized(&s->feed, out, sizes, cap, err);
                if (n < 0)
                        return tm_err_prefix(err, "%s", s->name);
                if (n > 0 || s->feed.eof)
                        return n;
                size_t room;
                uint8_t *p = tm_feed_space(&s->feed, &room);
                ssize_t k = src_read(s, p, room, err);
                if (k < 0)
                        return k;
                tm_feed_commit(&s->feed, (size_t)k);
                s->feed.eof = k == 0;
                progress_update(&s->prog, s->feed.raw_off + s->feed.len - s->feed.pos, s->total);
        }
}

/* Back to the first reference, for a second pass with other options. */
static int src_rewind(struct ref_src *s)
{
        struct tm_err err;
        if (!s->r) {
                if (s->spool < 0)
                        return -ESPIPE;
                s->replay = 0;
        } else if (tm_creader_seek(s->r, 0, &err) < 0) {
                return -ESPIPE;
        }
        return src_start(s, &err);
}

/* When the encoder refuses a reference, damage the container has not
 * reported yet may be the cause: read the rest of a file's raw stream
 * (checksums included) and, if it is damaged, put that in err instead. */
static void src_blame_damage(struct ref_src *s, struct tm_err *err)
{
        static uint8_t buf[64 << 10];
        struct tm_err e = {0};
        ssize_t k = 1;
        while (s->r && (k = tm_creader_read(s->r, buf, sizeof buf, &e)) > 0)
                ;
        if (k < 0)
                *err = e;
}

static void src_close(struct ref_src *s)
{
        progress_end(&s->prog);
        if (!s->r)
                src_spool_end(s);
        tm_feed_free(&s->feed);
        tm_creader_close(s->r);
        tm_cont_close(s->cont);
        if (s->fd > STDIN_FILENO)
                close(s->fd);
}

/* ---- output ---- */

struct pack_opts {
        const char *format;   /* codec name, NULL: from OUT's suffix */
        const char *compress; /* "none", "gzip", "zstd", NULL: from suffix */
        int level;
        size_t frame_size;
        unsigned addr_bits, unit; /* 0: not given */
};

static int ends_with(const char *s, size_t n, const char *suffix)
{
        size_t k = strlen(suffix);
        return n >= k && memcmp(s + n - k, suffix, k) == 0;
}

void pack_guess(const char *out, const struct tm_codec **codec, enum tm_cont_kind *kind)
{
        size_t n = strlen(out);
        *kind = TM_CONT_PLAIN;
        if (ends_with(out, n, ".gz")) {
                *kind = TM_CONT_GZIP;
                n -= 3;
        } else if (ends_with(out, n, ".zst")) {
                *kind = TM_CONT_ZSTD;
                n -= 4;
        }
        *codec = NULL;
        size_t best = 0; /* the longest suffix wins: ".pdt2" over ".pdt" */
        for (const struct tm_codec *const *c = tm_codecs; *c; c++) {
                const char *suf = (*c)->suffix;
                if (((*c)->encode || (*c)->encode_sized) && suf && ends_with(out, n, suf) &&
                    strlen(suf) > best) {
                        *codec = *c;
                        best = strlen(suf);
                }
        }
}

static int pack_kind_by_name(const char *s, enum tm_cont_kind *kind)
{
        if (strcmp(s, "none") == 0 || strcmp(s, "plain") == 0)
                *kind = TM_CONT_PLAIN;
        else if (strcmp(s, "gzip") == 0 || strcmp(s, "gz") == 0)
                *kind = TM_CONT_GZIP;
        else if (strcmp(s, "zstd") == 0 || strcmp(s, "zst") == 0)
                *kind = TM_CONT_ZSTD;
        else
                return -1;
        return 0;
}

struct pack_out {
        struct tm_cwriter *w;
        uint8_t buf[PACK_OUT_FLUSH + TM_ENC_MAX_OUT];
        size_t len;
};

/* Hand the buffered bytes (whole records) to the writer, then mark the
 * record boundary. */
static int out_flush(struct pack_out *o, struct tm_err *err)
{
        if (!o->len)
                return 0;
        int rc = tm_cwriter_write(o->w, o->buf, o->len, err);
        o->len = 0;
        if (rc < 0)
                return rc;
        return tm_cwriter_boundary(o->w, err);
}

/* One encoding pass from s's current position to the end. */
static int pack_pass(struct ref_src *s, const struct tm_codec *c, const struct tm_enc_opts *eo,
                     struct pack_out *o, struct tm_err *err)
{
        static struct tm_ref refs[PACK_BATCH];
        static uint32_t sizes[PACK_BATCH];
        uint32_t *sz = c->encode_sized ? sizes : NULL;
        struct tm_enc_state st;
        uint64_t idx = 0;
        int k = c->enc_init(&st, eo, o->buf, err);
        if (k < 0)
                return k;
        o->len = (size_t)k;
        for (;;) {
                ssize_t n = src_next(s, refs, sz, PACK_BATCH, err);
                if (n < 0)
                        return (int)n;
                if (n == 0)
                        break;
                for (ssize_t i = 0; i < n; i++, idx++) {
                        k = sz ? c->encode_sized(&st, &refs[i], sz[i], idx, o->buf + o->len, err)
                               : c->encode(&st, &refs[i], idx, o->buf + o->len, err);
                        if (k < 0)
                                return k;
                        o->len += (size_t)k;
                        if (o->len >= PACK_OUT_FLUSH && out_flush(o, err) < 0)
                                return err->code;
                }
        }
        k = c->finish(&st, o->buf + o->len, err);
        if (k < 0)
                return k;
        o->len += (size_t)k;
        return out_flush(o, err);
}

static void pack_usage(FILE *f)
{
        fprintf(
            f, "usage: tracetool pack [options] IN OUT\n\n"
               "Re-encode the trace IN (din or lackey text, or any trace tracetool reads) as OUT.\n"
               "OUT's name chooses format and compression:\n"
               "NAME.{pdt,pdt2,din,lackey}[.gz|.zst], e.g. sort.pdt2.zst; lackey output keeps\n"
               "lackey input's access sizes. '-' is stdin / stdout (stdout needs --format and\n"
               "--compress; stdin must be uncompressed). Heap traces: NAME.hatf, NAME.mtf\n"
               "(below).\n\n"
               "  --format din|pdats|pdats2|lackey  output format (default: from OUT's suffix)\n"
               "  --compress none|gzip|zstd   container (default: from OUT's suffix)\n"
               "  --level N                   compression level (default: the library's)\n"
               "  --frame-size BYTES          zstd: raw bytes per seekable frame (default 1 MiB)\n"
               "  --addr-bits 32|64           address width (default: 64 for lackey input, else\n"
               "                              32, switching to 64 when needed)\n"
               "  --unit 1|2|4                instruction unit (default: 1 for lackey input, else\n"
               "                              4, switching to 1 when needed)\n"
               "  -h, --help                  this help\n");
}

static int pack_parse_uint(const char *s, unsigned long long max, unsigned long long *v)
{
        char *end;
        errno = 0;
        unsigned long long x = strtoull(s, &end, 0);
        if (errno || end == s || *end || x > max || s[0] == '-')
                return -1;
        *v = x;
        return 0;
}

static int pack_parse(int argc, char **argv, struct pack_opts *o, int *help)
{
        static const struct option lo[] = {
            {"format", required_argument, 0, 'F'},
            {"compress", required_argument, 0, 'C'},
            {"level", required_argument, 0, 'L'},
            {"frame-size", required_argument, 0, 'S'},
            {"addr-bits", required_argument, 0, 'A'},
            {"unit", required_argument, 0, 'U'},
            {"help", no_argument, 0, 'h'},
            {0, 0, 0, 0},
        };
        int ch;
        unsigned long long v;
        optind = 1;
        while ((ch = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
                switch (ch) {
                case 'F':
                        o->format = optarg;
                        break;
                case 'C':
                        o->compress = optarg;
                        break;
                case 'L':
                        if (pack_parse_uint(optarg, 22, &v) < 0) {
                                fprintf(stderr, "tracetool pack: bad --level %s\n", optarg);
                                return -1;
                        }
                        o->level = (int)v;
                        break;
                case 'S':
                        if (pack_parse_uint(optarg, 1ull << 32, &v) < 0 || v == 0) {
                                fprintf(stderr, "tracetool pack: bad --frame-size %s\n", optarg);
                                return -1;
                        }
                        o->frame_size = (size_t)v;
                        break;
                case 'A':
                        if (pack_parse_uint(optarg, 64, &v) < 0 || (v != 32 && v != 64)) {
                                fprintf(stderr, "tracetool pack: --addr-bits is 32 or 64\n");
                                return -1;
                        }
                        o->addr_bits = (unsigned)v;
                        break;
                case 'U':
                        if (pack_parse_uint(optarg, 4, &v) < 0 || (v != 1 && v != 2 && v != 4)) {
                                fprintf(stderr, "tracetool pack: --unit is 1, 2 or 4\n");
                                return -1;
                        }
                        o->unit = (unsigned)v;
                        break;
                case 'h':
                        *help = 1;
                        return 0;
                default:
                        return -1;
                }
        }
        return 0;
}

/* Everything pack decided from its arguments. */
struct pack_job {
        const char *in, *out;
        const struct tm_codec *codec;
        enum tm_cont_kind kind;
        struct tm_cwriter_opts wo;
        struct pack_opts po;
        int to_stdout;
        char tmp[4096];
};

static int pack_resolve(struct pack_job *j)
{
        pack_guess(j->out, &j->codec, &j->kind);
        if (j->po.format) {
                j->codec = tm_codec_by_name(j->po.format);
                if (!j->codec || !(j->codec->encode || j->codec->encode_sized)) {
                        fprintf(stderr, "tracetool pack: cannot write format '%s'\n", j->po.format);
                        return TOOL_USAGE;
                }
        }
        if (j->po.compress && pack_kind_by_name(j->po.compress, &j->kind) < 0) {
                fprintf(stderr, "tracetool pack: unknown --compress '%s'\n", j->po.compress);
                return TOOL_USAGE;
        }
        if (j->to_stdout && (!j->po.format || !j->po.compress)) {
                fprintf(stderr,
                        "tracetool pack: writing to stdout needs --format and --compress\n");
                return TOOL_USAGE;
        }
        if (!j->codec) {
                fprintf(stderr,
                        "tracetool pack: %s: cannot tell the format from the name "
                        "(use .pdt, .pdt2, .din or .lackey, optionally + .gz or .zst, or "
                        "--format)\n",
                        j->out);
                return TOOL_USAGE;
        }
        j->wo.level = j->po.level;
        j->wo.frame_size = j->po.frame_size;
        return TOOL_OK;
}

static int pack_open_out(struct pack_job *j, int *fd)
{
        if (j->to_stdout) {
                *fd = STDOUT_FILENO;
                return 0;
        }
        if ((size_t)snprintf(j->tmp, sizeof j->tmp, "%s.tmp", j->out) >= sizeof j->tmp) {
                fprintf(stderr, "tracetool pack: %s: name too long\n", j->out);
                return -1;
        }
        *fd = open(j->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (*fd < 0) {
                fprintf(stderr, "tracetool pack: %s: %s\n", j->tmp, strerror(errno));
                return -1;
        }
        return 0;
}

/* Can we start again after -ERANGE / -EDOM with wider options? Adjusts eo
 * and says so, or explains which option to use. */
static int pack_can_retry(struct pack_job *j, struct ref_src *s, struct tm_enc_opts *eo, int rc,
                          const struct tm_err *err)
{
        const char *opt = rc == -ERANGE ? "--addr-bits 64" : "--unit 1";
        int given = rc == -ERANGE ? j->po.addr_bits != 0 : j->po.unit != 0;
        if (given || j->to_stdout || src_rewind(s) < 0) {
                fprintf(stderr, "tracetool pack: %s\ntracetool pack: use %s\n", err->msg, opt);
                return 0;
        }
        if (rc == -ERANGE)
                eo->addr_bits = 64;
        else
                eo->unit = 1;
        fprintf(stderr, "tracetool pack: %s; starting again with %s\n", err->msg, opt);
        return 1;
}

static int pack_run(struct pack_job *j)
{
        struct ref_src s = {.spool = -1};
        struct tm_err err = {0};
        /* a copy of stdin only when pack may have to start again */
        int spool = !j->to_stdout && !(j->po.addr_bits && j->po.unit);
        int rc = strcmp(j->in, "-") == 0 ? src_open_stdin(&s, spool, &err)
                                         : src_open_file(&s, j->in, &err);
        if (rc == 0 && j->codec->encode_sized && !tm_codec_by_name(s.codec)->decode_sized)
                rc = tm_err_set(&err, -EINVAL, "%s: %s output needs access sizes, which %s has not",
                                s.name, j->codec->name, s.codec);
        if (rc < 0) {
                fprintf(stderr, "tracetool pack: %s\n", err.msg);
                src_close(&s);
                return TOOL_FAIL;
        }
        /* lackey traces come from 64-bit machines with byte-granular
         * instructions; din ones are usually 32-bit RISC */
        int lackey = strcmp(s.codec, "lackey") == 0;
        unsigned def_bits = lackey ? 64 : 32, def_unit = lackey ? 1 : 4;
        struct tm_enc_opts eo = {
            .addr_bits = j->po.addr_bits ? j->po.addr_bits : def_bits,
            .unit = j->po.unit ? j->po.unit : def_unit,
        };
        if (!s.r && eo.addr_bits == 64 && eo.unit == 1)
                src_spool_end(&s); /* the widest options: nothing to start again for */
        int fd;
        if (pack_open_out(j, &fd) < 0) {
                src_close(&s);
                return TOOL_FAIL;
        }
        static struct pack_out o;
        for (int attempt = 0;; attempt++) {
                memset(&err, 0, sizeof err);
                o.len = 0;
                rc = tm_cwriter_open(fd, j->to_stdout ? "<stdout>" : j->tmp, j->kind, &j->wo, &o.w,
                                     &err);
                if (rc < 0)
                        break;
                rc = pack_pass(&s, j->codec, &eo, &o, &err);
                if (rc == 0) {
                        rc = tm_cwriter_close(o.w, &err);
                        break;
                }
                struct tm_err ignored;
                tm_cwriter_close(o.w, &ignored);
                if (rc == -EINVAL)
                        src_blame_damage(&s, &err);
                if ((rc != -ERANGE && rc != -EDOM) || attempt >= 2)
                        break;
                if (!pack_can_retry(j, &s, &eo, rc, &err)) {
                        err.msg[0] = '\0';
                        break;
                }
                if (ftruncate(fd, 0) < 0 || lseek(fd, 0, SEEK_SET) < 0) {
                        rc = tm_err_set(&err, -errno, "%s: %s", j->tmp, strerror(errno));
                        break;
                }
        }
        src_close(&s);
        if (rc == 0 && !j->to_stdout && fsync(fd) < 0)
                rc = tm_err_set(&err, -errno, "%s: %s", j->tmp, strerror(errno));
        if (!j->to_stdout && close(fd) < 0 && rc == 0)
                rc = tm_err_set(&err, -errno, "%s: %s", j->tmp, strerror(errno));
        if (rc == 0 && !j->to_stdout && rename(j->tmp, j->out) < 0)
                rc = tm_err_set(&err, -errno, "rename %s: %s", j->out, strerror(errno));
        if (rc < 0) {
                if (err.msg[0])
                        fprintf(stderr, "tracetool pack: %s\n", err.msg);
                if (!j->to_stdout)
                        unlink(j->tmp);
                return TOOL_FAIL;
        }
        return TOOL_OK;
}

int pack_main(int argc, char **argv)
{
        struct pack_job j = {0};
        int help = 0;
        if (pack_heap_wanted(argc, argv))
                return pack_heap_main(argc, argv);
        if (pack_parse(argc, argv, &j.po, &help) < 0) {
                pack_usage(stderr);
                return TOOL_USAGE;
        }
        if (help) {
                pack_usage(stdout);
                fputc('\n', stdout);
                pack_heap_usage(stdout);
                return TOOL_OK;
        }
        if (argc - optind != 2) {
                pack_usage(stderr);
                return TOOL_USAGE;
        }
        j.in = argv[optind];
        j.out = argv[optind + 1];
        j.to_stdout = strcmp(j.out, "-") == 0;
        int rc = pack_resolve(&j);
        if (rc != TOOL_OK)
                return rc;
        return pack_run(&j);
}
