/* tracetool pack: the command line (pack.h is the packer). What it can
 * write comes from the row table: the rows with an encoder, by their
 * suffixes, names and encodings; what it reads is what the library
 * reads, and heaptrack files. */
#include "pack.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tools.h"

static int ends_with(const char *s, size_t n, const char *suffix)
{
        size_t k = strlen(suffix);
        return n >= k && memcmp(s + n - k, suffix, k) == 0;
}

void pack_guess(const char *out, const struct tm_rcodec **row, enum tm_cont_kind *kind)
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
        *row = NULL;
        size_t best = 0; /* the longest suffix wins: ".pdt2" over ".pdt" */
        for (const struct tm_rcodec *const *c = tm_registry()->row; *c; c++) {
                const char *suf = (*c)->suffix;
                if (pack_writes(*c) && suf && ends_with(out, n, suf) && strlen(suf) > best) {
                        *row = *c;
                        best = strlen(suf);
                }
        }
}

int pack_parse_level(const char *s, int *level)
{
        char *end;
        errno = 0;
        long v = strtol(s, &end, 10);
        if (!*s || *end || errno || v < 1 || v > 22)
                return -1;
        *level = (int)v;
        return 0;
}

int pack_fd(int fd, const char *in_name, const char *out_path, const char *enc, int level,
            FILE *msg, struct tm_err *err)
{
        struct pack_opts o = {.enc = enc, .level = level, .msg = msg};
        pack_guess(out_path, &o.row, &o.kind);
        if (!o.row)
                return tm_err_set(err, -EINVAL, "%s: no format writes that name", out_path);
        return pack_trace(NULL, fd, in_name, out_path, &o, err);
}

/* ---- the command line ---- */

/* OUT when only IN is given: IN without ".gz" / ".zst" and its last
 * suffix, with the native format's; TOOL_USAGE (said) when there is
 * none to take (stdin, a name that would stay IN). */
static int pack_native_name(const char *in, char *out, size_t cap)
{
        size_t n = strlen(in);
        if (ends_with(in, n, ".gz"))
                n -= 3;
        else if (ends_with(in, n, ".zst"))
                n -= 4;
        const char *slash = strrchr(in, '/'), *dot = NULL;
        for (size_t i = slash ? (size_t)(slash - in) + 1 : 0; i < n; i++)
                if (in[i] == '.' && i > 0 && in[i - 1] != '/')
                        dot = in + i;
        if (dot)
                n = (size_t)(dot - in);
        if (strcmp(in, "-") == 0 || n + strlen(PACK_NATIVE_SUFFIX) + 1 > cap ||
            ends_with(in, strlen(in), PACK_NATIVE_SUFFIX)) {
                fprintf(stderr, "tracetool pack: %s: give OUT\n", in);
                return TOOL_USAGE;
        }
        snprintf(out, cap, "%.*s%s", (int)n, in, PACK_NATIVE_SUFFIX);
        return TOOL_OK;
}

/* The row --format names: by name, or by its suffix without the dot. */
static const struct tm_rcodec *row_by_format(const char *s)
{
        for (const struct tm_rcodec *const *c = tm_registry()->row; *c; c++)
                if (pack_writes(*c) && (strcmp((*c)->name, s) == 0 ||
                                        ((*c)->suffix && strcmp((*c)->suffix + 1, s) == 0)))
                        return *c;
        return NULL;
}

static void print_encodings(FILE *f, const struct tm_rcodec *row)
{
        const struct tm_renc_param *p = row->enc_params;
        for (unsigned i = 0; p && p[i].name; i++)
                fprintf(f, "%s-p %s=%d..%d (default %d)", i ? ", " : " parameters ", p[i].name,
                        p[i].min, p[i].max, p[i].def);
        if (!row->encodings && !p)
                fprintf(f, " (one)");
        for (const char *const *e = row->encodings; e && *e; e++)
                fprintf(f, "%s%s", e == row->encodings ? " " : ", ", *e);
}

static void pack_usage(FILE *f)
{
        fprintf(f, "usage: tracetool pack [options] IN [OUT]\n\n"
                   "Re-encode the trace IN as OUT. IN is any trace tracetool reads (din or lackey\n"
                   "text, PDATS, HATF, Meta-TF, a glibc mtrace log, ...) or a heaptrack file;\n"
                   "plain, gzip or zstd; '-' is stdin (uncompressed unless it is a file). OUT's\n"
                   "name chooses format and compression, NAME<suffix>[.gz|.zst], e.g.\n"
                   "sort.pdt2.zst; '-' is stdout (with --format and --compress). Without OUT:\n"
                   "IN's name with its compression suffix and its last suffix replaced by\n"
                   "%s (the native format). Formats:\n\n",
                   PACK_NATIVE_SUFFIX);
        for (const struct tm_rcodec *const *c = tm_registry()->row; *c; c++) {
                if (!pack_writes(*c) || !(*c)->suffix)
                        continue;
                if ((*c)->enc_params) {
                        fprintf(f,
                                "  OUT%s  the native format (%s: tracemount's own, of any trace;\n"
                                "      compressed inside, no .gz/.zst), parameters (-p NAME=N):\n",
                                (*c)->suffix, (*c)->name);
                        for (const struct tm_renc_param *q = (*c)->enc_params; q->name; q++)
                                fprintf(f, "      %s %d..%d (default %d): %s\n", q->name, q->min,
                                        q->max, q->def, q->what);
                        continue;
                }
                fprintf(f, "  OUT%s[.gz|.zst]  %s, encodings:", (*c)->suffix, (*c)->name);
                print_encodings(f, *c);
                fputc('\n', f);
        }
        fprintf(f,
                "\nWithout -e, pack writes every encoding of the format and keeps the smallest\n"
                "(in gzip or zstd: compared on the first %u records in zstd level %d, then\n"
                "only the one kept is packed, at the final level),\n"
                "but for address formats, whose encodings are address widths (BITS[/UNIT]):\n"
                "there it writes 32/4 (64/1 for lackey input, which has access sizes) and\n"
                "starts again with 64-bit addresses or unit 1 when a reference needs them.\n"
                "Records OUT's format cannot hold are an error naming the first one.\n\n"
                "  -e, --encoding NAME         the format's encoding to write\n"
                "  -p, --param NAME=N          a parameter of a format that has them (native:\n"
                "                              level, block-log2; --level sets level)\n"
                "  --format NAME               output format: its name or suffix (default: from\n"
                "                              OUT's name)\n"
                "  --compress none|gzip|zstd   container (default: from OUT's suffix)\n"
                "  --level N                   compression level: zstd 1-22, gzip 1-9; higher:\n"
                "                              smaller and slower, 19 for the smallest archives\n"
                "                              (default: zstd %d, address formats the library's\n"
                "                              3; gzip %d)\n"
                "  --frame-size BYTES          zstd: raw bytes per seekable frame (default 1 MiB)\n"
                "  --addr-bits 32|64           address formats: address width\n"
                "  --unit 1|2|4                address formats: PDATS II instruction unit\n"
                "  -h, --help                  this help\n",
                PACK_PICK_RECORDS, PACK_PICK_LEVEL, PACK_LEVEL, PACK_GZIP_LEVEL);
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

#define PACK_PARAMS_MAX 8 /* -p options at most */

/* What the options say. */
struct pack_args {
        const char *format, *compress;
        const char *param[PACK_PARAMS_MAX]; /* -p's, resolved once the row is known */
        unsigned nparam;
        struct pack_opts o;
};

int pack_set_param(struct pack_opts *o, const char *s)
{
        const struct tm_renc_param *p = o->row->enc_params;
        const char *eq = strchr(s, '=');
        for (unsigned i = 0; eq && p && p[i].name && i < TM_RENC_PARAMS_MAX; i++) {
                if (strlen(p[i].name) != (size_t)(eq - s) || memcmp(p[i].name, s, eq - s) != 0)
                        continue;
                unsigned long long v;
                if (pack_parse_uint(eq + 1, (unsigned long long)p[i].max, &v) < 0 ||
                    v < (unsigned long long)p[i].min) {
                        fprintf(stderr, "tracetool pack: %s %s: %s is %d..%d\n", o->row->name, s,
                                p[i].name, p[i].min, p[i].max);
                        return -1;
                }
                o->param[i] = (int)v;
                o->param_set |= 1u << i;
                return 0;
        }
        fprintf(stderr, "tracetool pack: %s has no parameter '%s' (", o->row->name, s);
        print_encodings(stderr, o->row);
        fprintf(stderr, " )\n");
        return -1;
}

static int pack_option(int ch, struct pack_args *a)
{
        unsigned long long v;
        switch (ch) {
        case 'e':
                a->o.enc = optarg;
                return 0;
        case 'p':
                if (a->nparam < PACK_PARAMS_MAX) {
                        a->param[a->nparam++] = optarg;
                        return 0;
                }
                fprintf(stderr, "tracetool pack: more than %d -p\n", PACK_PARAMS_MAX);
                return -1;
        case 'F':
                a->format = optarg;
                return 0;
        case 'C':
                a->compress = optarg;
                return 0;
        case 'L':
                if (pack_parse_uint(optarg, 22, &v) == 0) {
                        a->o.level = (int)v;
                        return 0;
                }
                fprintf(stderr, "tracetool pack: bad --level '%s' (1-22)\n", optarg);
                return -1;
        case 'S':
                if (pack_parse_uint(optarg, 1ull << 32, &v) == 0 && v) {
                        a->o.frame_size = (size_t)v;
                        return 0;
                }
                fprintf(stderr, "tracetool pack: bad --frame-size %s\n", optarg);
                return -1;
        case 'A':
                if (pack_parse_uint(optarg, 64, &v) == 0 && (v == 32 || v == 64)) {
                        a->o.addr_bits = (unsigned)v;
                        return 0;
                }
                fprintf(stderr, "tracetool pack: --addr-bits is 32 or 64\n");
                return -1;
        case 'U':
                if (pack_parse_uint(optarg, 4, &v) == 0 && (v == 1 || v == 2 || v == 4)) {
                        a->o.unit = (unsigned)v;
                        return 0;
                }
                fprintf(stderr, "tracetool pack: --unit is 1, 2 or 4\n");
                return -1;
        default:
                return -1;
        }
}

/* 0, 1 for --help, -1 for a usage error (said). */
static int pack_parse(int argc, char **argv, struct pack_args *a)
{
        static const struct option lo[] = {
            {"encoding", required_argument, 0, 'e'},
            {"param", required_argument, 0, 'p'},
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
        optind = 1;
        while ((ch = getopt_long(argc, argv, "he:p:", lo, NULL)) != -1) {
                if (ch == 'h')
                        return 1;
                if (pack_option(ch, a) < 0)
                        return -1;
        }
        return 0;
}

/* The output's row, container and encoding from the name and options;
 * TOOL_OK or TOOL_USAGE (said). */
static int pack_resolve(struct pack_args *a, const char *out)
{
        struct pack_opts *o = &a->o;
        int to_stdout = strcmp(out, "-") == 0;
        pack_guess(out, &o->row, &o->kind);
        if (a->format && !(o->row = row_by_format(a->format))) {
                fprintf(stderr, "tracetool pack: cannot write format '%s'\n", a->format);
                return TOOL_USAGE;
        }
        if (a->compress && pack_kind_by_name(a->compress, &o->kind) < 0) {
                fprintf(stderr, "tracetool pack: unknown --compress '%s'\n", a->compress);
                return TOOL_USAGE;
        }
        if (to_stdout && (!a->format || !a->compress)) {
                fprintf(stderr,
                        "tracetool pack: writing to stdout needs --format and --compress\n");
                return TOOL_USAGE;
        }
        if (!o->row) {
                fprintf(stderr, "tracetool pack: %s: cannot tell the format from the name (use",
                        out);
                for (const struct tm_rcodec *const *c = tm_registry()->row; *c; c++)
                        if (pack_writes(*c) && (*c)->suffix)
                                fprintf(stderr, " %s", (*c)->suffix);
                fprintf(stderr, ", optionally + .gz or .zst, or --format)\n");
                return TOOL_USAGE;
        }
        if ((o->addr_bits || o->unit) && (!pack_widths(o->row) || o->enc)) {
                fprintf(stderr,
                        "tracetool pack: --addr-bits and --unit are for address formats, "
                        "without -e (%s: -e BITS/UNIT)\n",
                        o->row->name);
                return TOOL_USAGE;
        }
        for (unsigned i = 0; i < a->nparam; i++)
                if (pack_set_param(o, a->param[i]) < 0)
                        return TOOL_USAGE;
        if (o->enc && a->nparam) {
                fprintf(stderr, "tracetool pack: -e and -p do not go together\n");
                return TOOL_USAGE;
        }
        if (o->enc && !pack_enc_listed(o->row, o->enc)) {
                fprintf(stderr,
                        "tracetool pack: unknown %s encoding '%s' (encodings:", o->row->name,
                        o->enc);
                print_encodings(stderr, o->row);
                fprintf(stderr, ")\n");
                return TOOL_USAGE;
        }
        return TOOL_OK;
}

int pack_main(int argc, char **argv)
{
        struct pack_args a = {0};
        int p = pack_parse(argc, argv, &a);
        if (p < 0 || (p == 0 && argc - optind != 2 && argc - optind != 1)) {
                pack_usage(stderr);
                return TOOL_USAGE;
        }
        if (p > 0) {
                pack_usage(stdout);
                return TOOL_OK;
        }
        const char *in = argv[optind];
        char named[PATH_MAX];
        const char *out = argc - optind == 2 ? argv[optind + 1] : named;
        if (out == named && pack_native_name(in, named, sizeof named) != TOOL_OK)
                return TOOL_USAGE;
        int rc = pack_resolve(&a, out);
        if (rc != TOOL_OK)
                return rc;
        a.o.msg = stderr;
        struct tm_err err = {0};
        if (pack_trace(in, -1, strcmp(in, "-") == 0 ? "<stdin>" : in, out, &a.o, &err) < 0) {
                if (err.msg[0])
                        fprintf(stderr, "tracetool pack: %s\n", err.msg);
                return TOOL_FAIL;
        }
        return TOOL_OK;
}
