/* tracetool pack: re-encode a trace into another format and container.
 *
 * References come from a struct ref_src: for a file, the library's
 * `binary` view (any format and container the library reads); for stdin,
 * the text codecs' decode() in a loop. They go through the output codec's
 * encoder into a tm_cwriter; the encoder's output ends on a record boundary
 * after every encode(), so each flush is a boundary for the writer. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "codecs/container.h"
#include "codecs/trace.h"
#include "tools.h"
#include "views/tm_binary.h"
#include "views/view.h"

#define PACK_BATCH 4096        /* references per batch */
#define PACK_IN_BUF (1u << 20) /* stdin buffer: also the longest record */
#define PACK_OUT_FLUSH (60u << 10)

/* ---- reference sources ---- */

struct ref_src {
        const char *name; /* for messages */
        const char *codec;
        /* a file: the binary view */
        struct tm_trace *t;
        struct tm_vfile *vf;
        uint64_t off;
        /* stdin: a codec decoding the stream */
        int fd;
        const struct tm_codec *dec;
        struct tm_dec_state st;
        uint8_t *buf;
        size_t len, pos;
        uint64_t raw_off; /* raw offset of buf[pos] */
        int eof;
        /* progress: bytes of the binary view (file) or of stdin read */
        struct progress prog;
        uint64_t total; /* 0: unknown */
};

static int src_open_file(struct ref_src *s, const char *path, struct tm_err *err)
{
        struct tm_trace_opts o = {.no_save = 1};
        s->name = path;
        s->fd = -1;
        int rc = tm_trace_open(path, &o, &s->t, err);
        if (rc == -EMEDIUMTYPE)
                return tm_err_set(err, rc, "%s: not a trace this build can read", path);
        if (rc < 0)
                return rc;
        s->codec = tm_trace_codec(s->t);
        /* the decoding pass that finds the views' sizes, then the one that
         * feeds the encoder */
        progress_init(&s->prog, "reading");
        rc = tm_trace_index(s->t, progress_update, &s->prog, err);
        if (rc == 0)
                rc = tm_trace_view_size(s->t, "binary", &s->total, err);
        progress_end(&s->prog);
        if (rc < 0)
                return rc;
        progress_init(&s->prog, "packing");
        return tm_vfile_open(s->t, "binary", &s->vf, err);
}

/* Read more stdin into buf (after moving the unread part to the front). */
static int src_fill(struct ref_src *s, struct tm_err *err)
{
        if (s->pos) {
                memmove(s->buf, s->buf + s->pos, s->len - s->pos);
                s->len -= s->pos;
                s->pos = 0;
        }
        if (s->len == PACK_IN_BUF)
                return tm_err_set(err, -EIO,
                                  "%s: raw offset %" PRIu64 ": record longer than %u bytes",
                                  s->name, s->raw_off, PACK_IN_BUF);
        for (;;) {
                ssize_t n = read(s->fd, s->buf + s->len, PACK_IN_BUF - s->len);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return tm_err_set(err, -errno, "%s: read: %s", s->name, strerror(errno));
                if (n == 0)
                        s->eof = 1;
                s->len += (size_t)n;
                progress_update(&s->prog, s->raw_off + s->len - s->pos, 0);
                return 0;
        }
}

static int src_open_stdin(struct ref_src *s, struct tm_err *err)
{
        s->name = "<stdin>";
        s->fd = STDIN_FILENO;
        progress_init(&s->prog, "packing");
        s->buf = malloc(PACK_IN_BUF);
        if (!s->buf)
                return tm_err_set(err, -ENOMEM, "out of memory");
        while (!s->eof && s->len < TM_PROBE_BYTES)
                if (src_fill(s, err) < 0)
                        return err->code;
        size_t head = s->len < TM_PROBE_BYTES ? s->len : TM_PROBE_BYTES;
        s->dec = tm_codec_probe(s->buf, head);
        if (!s->dec)
                return tm_err_set(err, -EMEDIUMTYPE,
                                  "<stdin>: not a trace this build can read "
                                  "(stdin must be uncompressed)");
        s->codec = s->dec->name;
        int h = s->dec->dec_init(&s->st, s->buf, s->len, err);
        if (h < 0)
                return tm_err_prefix(err, "<stdin>");
        s->pos = (size_t)h;
        s->raw_off = (uint64_t)h;
        return 0;
}

/* Up to cap references into out; returns the count, 0 at the end, or a
 * negative errno. */
static ssize_t src_next(struct ref_src *s, struct tm_ref *out, size_t cap, struct tm_err *err)
{
        if (s->vf) {
                static struct tm_binary_ref rec[PACK_BATCH];
                if (cap > PACK_BATCH)
                        cap = PACK_BATCH;
                ssize_t n = tm_vfile_pread(s->vf, rec, cap * sizeof rec[0], s->off, err);
                if (n <= 0)
                        return n;
                if (n % (ssize_t)sizeof rec[0])
                        return tm_err_set(err, -EIO, "%s: binary view: partial record", s->name);
                s->off += (uint64_t)n;
                progress_update(&s->prog, s->off, s->total);
                size_t k = (size_t)n / sizeof rec[0];
                for (size_t i = 0; i < k; i++) {
                        const uint8_t *a = (const uint8_t *)&rec[i].addr;
                        uint64_t v = 0;
                        for (int b = 7; b >= 0; b--)
                                v = v << 8 | a[b];
                        out[i].addr = v;
                        out[i].type = rec[i].type;
                }
                return (ssize_t)k;
        }
        for (;;) {
                size_t used = 0;
                ssize_t n = s->dec->decode(&s->st, s->buf + s->pos, s->len - s->pos, s->eof,
                                           s->raw_off, &used, out, cap, err);
                if (n < 0)
                        return tm_err_prefix(err, "%s", s->name);
                s->pos += used;
                s->raw_off += used;
                if (n > 0)
                        return n;
                if (used)
                        continue;
                if (s->eof)
                        return 0;
                if (src_fill(s, err) < 0)
                        return err->code;
        }
}

static int src_rewind(struct ref_src *s)
{
        if (!s->vf)
                return -ESPIPE;
        s->off = 0;
        return 0;
}

static void src_close(struct ref_src *s)
{
        progress_end(&s->prog);
        tm_vfile_close(s->vf);
        tm_trace_close(s->t);
        free(s->buf);
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
                if ((*c)->encode && suf && ends_with(out, n, suf) && strlen(suf) > best) {
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
        struct tm_enc_state st;
        uint64_t idx = 0;
        int k = c->enc_init(&st, eo, o->buf, err);
        if (k < 0)
                return k;
        o->len = (size_t)k;
        for (;;) {
                ssize_t n = src_next(s, refs, PACK_BATCH, err);
                if (n < 0)
                        return (int)n;
                if (n == 0)
                        break;
                for (ssize_t i = 0; i < n; i++, idx++) {
                        k = c->encode(&st, &refs[i], idx, o->buf + o->len, err);
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
               "OUT's name chooses format and compression: NAME.{pdt,pdt2,din}[.gz|.zst],\n"
               "e.g. sort.pdt2.zst. '-' is stdin / stdout (stdout needs --format and --compress;\n"
               "stdin must be uncompressed).\n\n"
               "  --format din|pdats|pdats2   output format (default: from OUT's suffix)\n"
               "  --compress none|gzip|zstd   container (default: from OUT's suffix)\n"
               "  --level N                   compression level (default: the library's)\n"
               "  --frame-size BYTES          zstd: raw bytes per seekable frame (default 1 MiB)\n"
               "  --addr-bits 32|64           address width (default: 64 for lackey input, else\n"
               "                              32, switching to 64 when needed for file input)\n"
               "  --unit 1|2|4                instruction unit (default: 1 for lackey input, else\n"
               "                              4, switching to 1 when needed for file input)\n"
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
                if (!j->codec || !j->codec->encode) {
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
                        "(use .pdt, .pdt2 or .din, optionally + .gz or .zst, or --format)\n",
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
        struct ref_src s = {0};
        struct tm_err err = {0};
        int rc =
            strcmp(j->in, "-") == 0 ? src_open_stdin(&s, &err) : src_open_file(&s, j->in, &err);
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
        if (pack_parse(argc, argv, &j.po, &help) < 0) {
                pack_usage(stderr);
                return TOOL_USAGE;
        }
        if (help) {
                pack_usage(stdout);
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
