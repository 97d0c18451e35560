/* tracetool record: run a program under libtmrecord.so and pack what it
 * records (record.h has the contract, docs/record.md the design).
 *
 * The parent creates a pipe, forks, and the child execs the program with
 * LD_PRELOAD (the library in front of any the user set) and TM_RECORD_FD
 * naming the pipe's write end and its identity. The parent reads the pipe
 * through pack_fd, which ends at the pipe's end: when the program and
 * everything that holds the write end have gone (the library closes it in
 * forked children and marks it close-on-exec). Then it reaps the program
 * and reports. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "record.h"
#include "tools/lib_int.h"
#include "tools/tools.h"

#define RECORD_LIB_NAME "libtmrecord.so"

static void record_usage(FILE *f, const struct record_packer *pk)
{
        fprintf(f,
                "usage: tracetool record [-o OUT] [-e ENCODING] [--] PROGRAM [ARGS...]\n"
                "       tracetool record --java[=nothis] [-o OUT] [--] java [ARGS...]\n\n"
                "Run PROGRAM and record its heap operations (malloc, calloc, realloc, free,\n"
                "posix_memalign, aligned_alloc, memalign, valloc, pvalloc, reallocarray)\n"
                "into the archive OUT, by default PROGRAM.PID%s in the current directory\n"
                "(PID: the recorded process's; the name is printed on stderr): the native\n"
                "format (%s: on long runs a third of HATF's bytes), or by OUT's name HATF\n"
                "(.hatf.zst: seekable zstd, .hatf.gz, .hatf) or any format tracetool pack\n"
                "writes heap records in (.mtf, ...).\n\n"
                "  -o, --output OUT        the archive to write (default PROGRAM.PID%s)\n"
                "  -e, --encoding ENC      HATF encoding (for an OUT named .hatf...): ",
                record_native_suffix(), record_native_suffix(), record_native_suffix());
        for (const char *const *e = tm_rcodec_hatf.encodings; *e; e++)
                fprintf(f, "%s%s", *e, e[1] ? ", " : "\n");
        fprintf(f,
                "                          (default: best, which keeps up with the program;\n"
                "                          tracetool pack then tries them all)\n"
                "  --level N               compression level (%s and .zst 1-22, .gz 1-9;\n"
                "                          default: zstd %d, gzip its own; tracetool pack: %d)\n"
                "  --clock us|ns|seq       the time field: microseconds since the start\n"
                "                          (default), nanoseconds, or the event's number\n"
                "                          in one order shared by all threads (packs\n"
                "                          smallest)\n"
                "  --java[=nothis]         record a Java program instead: run the java\n"
                "                          command with the JVMTI agent libtmjava.so\n"
                "                          (-agentpath:AGENT=ZIP inserted after 'java'),\n"
                "                          which writes a ZIP of one member, trace; then\n"
                "                          check it decodes and sum it up. For OUT in the\n"
                "                          native format (the default java.PID%s) the ZIP\n"
                "                          is a temporary file beside OUT, packed into OUT,\n"
                "                          checked against it and removed (kept, and said,\n"
                "                          when that fails); an OUT named .zip is the\n"
                "                          agent's own. nothis: method entries without\n"
                "                          their object (faster)\n"
                "  -h, --help              this help\n\n"
                "Records are in the order the calls took effect, across threads.\n"
                "Only PROGRAM's own process is recorded: not the children it forks, not\n"
                "what it execs (tracetool says so, and the trace's stats carry it as a\n"
                "note). Statically linked and set-user-ID programs cannot be\n"
                "recorded (no LD_PRELOAD). The library is found beside tracetool, then in\n"
                "the install libdir; TM_RECORD_LIB overrides (the Java agent: likewise,\n"
                "TM_JAVA_AGENT).\n\n"
                "exit status: 0 PROGRAM exited 0 and OUT was written; 1 PROGRAM failed\n"
                "(OUT still holds what it recorded) or OUT could not be written; 2 usage\n",
                record_native_suffix(), pk->level, pk->pack_level, record_native_suffix());
}

static int usage_error(const char *fmt, const char *what)
{
        fprintf(stderr, "tracetool record: ");
        fprintf(stderr, fmt, what);
        fprintf(stderr, "\n(see tracetool record --help)\n");
        return TOOL_USAGE;
}

const struct record_lib record_lib_heap = {RECORD_LIB_NAME, "TM_RECORD_LIB", "record"};

int record_find_lib(const char *exe_dir, char *buf, size_t n)
{
        return record_find(&record_lib_heap, exe_dir, buf, n);
}

/* What the child does: restore the signals the parent ignores while it
 * waits, set the environment and exec. An exec failure's errno goes back
 * through err_fd (close-on-exec, so its end tells the parent exec worked). */
static void child_exec(char **prog, int wfd, int err_fd, const char *preload)
{
        struct stat st;
        char target[96];
        int e = 0;
        if (fstat(wfd, &st) < 0)
                e = errno;
        snprintf(target, sizeof target, "%d:%llu:%llu", wfd, (unsigned long long)st.st_dev,
                 (unsigned long long)st.st_ino);
        if (!e && (setenv("TM_RECORD_FD", target, 1) < 0 || setenv("LD_PRELOAD", preload, 1) < 0))
                e = errno;
        if (!e) {
                execvp(prog[0], prog);
                e = errno;
        }
        ssize_t w = write(err_fd, &e, sizeof e);
        (void)w;
        _exit(127);
}

/* Wait until the pipe has bytes or has ended; 1 if it ended with none (the
 * program never loaded the library). */
static int pipe_ended_empty(int fd)
{
        struct pollfd p = {.fd = fd, .events = POLLIN};
        while (poll(&p, 1, -1) < 0)
                if (errno != EINTR)
                        return 0;
        int avail = 0;
        return (p.revents & POLLHUP) && ioctl(fd, FIONREAD, &avail) == 0 && avail == 0;
}

/* Options into *out, *enc; returns the index of PROGRAM in argv, or the
 * exit status (negated, <= 0) for --help or a usage error. */
static int parse_args(const struct record_packer *pk, int argc, char **argv, const char **out,
                      const char **enc, const char **clock, const char **level, int *java)
{
        int i = 1;
        for (; i < argc; i++) {
                const char *a = argv[i];
                if (strcmp(a, "--") == 0) {
                        i++;
                        break;
                }
                if (a[0] != '-' || a[1] == '\0')
                        break;
                if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
                        record_usage(stdout, pk);
                        return -TOOL_OK;
                }
                if (strcmp(a, "--java") == 0 || strcmp(a, "--java=nothis") == 0) {
                        *java = a[6] ? RECORD_JAVA_NOTHIS : RECORD_JAVA;
                        continue;
                }
                const char **dst = NULL;
                const char *val = NULL;
                if (strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0)
                        dst = out;
                else if (strcmp(a, "-e") == 0 || strcmp(a, "--encoding") == 0)
                        dst = enc;
                else if (strncmp(a, "--output=", 9) == 0)
                        dst = out, val = a + 9;
                else if (strncmp(a, "--encoding=", 11) == 0)
                        dst = enc, val = a + 11;
                else if (strcmp(a, "--clock") == 0)
                        dst = clock;
                else if (strncmp(a, "--clock=", 8) == 0)
                        dst = clock, val = a + 8;
                else if (strcmp(a, "--level") == 0)
                        dst = level;
                else if (strncmp(a, "--level=", 8) == 0)
                        dst = level, val = a + 8;
                else
                        return -usage_error("unknown option '%s'", a);
                if (!val) {
                        if (i + 1 >= argc)
                                return -usage_error("option '%s' needs a value", a);
                        val = argv[++i];
                }
                *dst = val;
        }
        if (*out && !**out)
                return -usage_error("%s", "-o OUT: empty name");
        if (*enc) {
                const char *const *e = tm_rcodec_hatf.encodings;
                while (*e && strcmp(*e, *enc) != 0)
                        e++;
                if (!*e)
                        return -usage_error("unknown encoding '%s' for option '-e'", *enc);
                if (!*out || !strstr(*out, ".hatf"))
                        return -usage_error("%s",
                                            "-e is HATF's encoding: give -o OUT.hatf[.zst|.gz]");
        }
        if (strcmp(*clock, "ns") && strcmp(*clock, "us") && strcmp(*clock, "seq"))
                return -usage_error("unknown clock '%s' for option '--clock' (ns, us, seq)",
                                    *clock);
        int lv;
        if (*level && pk->parse_level(*level, &lv) < 0)
                return -usage_error("bad level '%s' for option '--level' (1-22)", *level);
        if (i >= argc)
                return -usage_error("%s", "no PROGRAM to run");
        return i;
}

int record_main(int argc, char **argv, const struct record_packer *pk)
{
        /* microseconds by default: reading the clock costs 45-70 ns and a
         * hook ~130 ns here, so a nanosecond's digits are mostly noise, and
         * noise that costs ~0.7 bytes a record after compression
         * (docs/record.md, "The clock") */
        const char *out = NULL, *enc = NULL, *clock = "us", *level_arg = NULL;
        int java = 0;
        int at = parse_args(pk, argc, argv, &out, &enc, &clock, &level_arg, &java);
        if (at <= 0)
                return -at;
        if (java && (enc || level_arg || strcmp(clock, "us")))
                return usage_error("%s", "--java: -e, --level and --clock are for heap recordings");
        if (java)
                return record_java(pk, out, java == RECORD_JAVA_NOTHIS, argv + at);
        /* below pack's default: the program waits on the packer
         * (docs/record.md, "Compression level") */
        size_t ol = out ? strlen(out) : 0;
        int level = ol > 4 && strcmp(out + ol - 4, ".zst") == 0 ? pk->level : 0;
        if (level_arg)
                pk->parse_level(level_arg, &level);
        /* read by the interposer in the child (inherited through exec) */
        if (setenv("TM_RECORD_CLOCK", clock, 1) < 0) {
                perror("tracetool record: setenv");
                return TOOL_FAIL;
        }
        char **prog = argv + at;

        char lib[PATH_MAX], preload[2 * PATH_MAX + 8192];
        if (record_find_lib(NULL, lib, sizeof lib) < 0) {
                fprintf(stderr,
                        "tracetool record: %s not found beside tracetool nor at %s "
                        "(set TM_RECORD_LIB)\n",
                        RECORD_LIB_NAME, lib);
                return TOOL_FAIL;
        }
        if (record_preload_value(lib, getenv("LD_PRELOAD"), preload, sizeof preload) < 0) {
                fprintf(stderr,
                        "tracetool record: %s: cannot be preloaded (a space or colon "
                        "in its path, or LD_PRELOAD too long)\n",
                        lib);
                return TOOL_FAIL;
        }

        int pfd[2], efd[2];
        if (pipe2(pfd, O_CLOEXEC) < 0 || pipe2(efd, O_CLOEXEC) < 0) {
                fprintf(stderr, "tracetool record: pipe: %s\n", strerror(errno));
                return TOOL_FAIL;
        }
        /* Like system(): a ^C is for the program; tracetool stays to pack
         * what it recorded. */
        struct record_sigs sigs;
        pid_t pid = record_fork(&sigs);
        if (pid == 0) {
                close(pfd[0]);
                close(efd[0]);
                /* The write end must survive the exec: a copy without
                 * close-on-exec (the library sets it again at start). */
                int wfd = fcntl(pfd[1], F_DUPFD, 3);
                child_exec(prog, wfd, efd[1], preload);
        }
        int rc = TOOL_OK;
        close(pfd[1]);
        close(efd[1]);
        if (pid < 0) {
                fprintf(stderr, "tracetool record: fork: %s\n", strerror(errno));
                close(pfd[0]);
                close(efd[0]);
                rc = TOOL_FAIL;
                goto restore;
        }
        int e = record_exec_result(efd[0]);
        close(efd[0]);
        if (e) {
                fprintf(stderr, "tracetool record: cannot run %s: %s\n", prog[0], strerror(e));
                close(pfd[0]);
                waitpid(pid, NULL, 0);
                rc = TOOL_FAIL;
                goto restore;
        }

        char name[PATH_MAX];
        if (!out) {
                if (record_default_name(prog[0], pid, record_native_suffix(), name, sizeof name) <
                    0)
                        snprintf(name, sizeof name, "record.%ld%s", (long)pid,
                                 record_native_suffix());
                out = name;
                fprintf(stderr, "tracetool record: writing %s\n", out);
        }
        struct tm_err err = {0};
        int prc;
        if (pipe_ended_empty(pfd[0])) {
                fprintf(stderr,
                        "tracetool record: %s recorded nothing: statically linked or "
                        "set-user-ID (LD_PRELOAD not honoured)?\n",
                        prog[0]);
                prc = -1;
        } else {
                /* Trying every encoding at once costs ~8x the packer's CPU
                 * while the program waits on the pipe: "best" alone by
                 * default (docs/record.md). */
                if (!enc && strstr(out, ".hatf"))
                        enc = "best";
                prc = pk->pack_fd(pfd[0], prog[0], out, enc, level, stderr, &err);
                if (prc < 0)
                        fprintf(stderr, "tracetool record: %s\n",
                                err.msg[0] ? err.msg : strerror(-prc));
        }
        /* If packing stopped early the program gets EPIPE and its recording
         * stops; it runs on. */
        close(pfd[0]);

        int status = 0;
        pid_t w;
        while ((w = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
                ;
        if (w < 0) {
                fprintf(stderr, "tracetool record: waitpid: %s\n", strerror(errno));
                rc = TOOL_FAIL;
        } else if (record_report_status(prog[0], status) < 0) {
                rc = TOOL_FAIL;
        }
        if (prc < 0)
                rc = TOOL_FAIL;
restore:
        record_sigs_restore(&sigs);
        return rc;
}
