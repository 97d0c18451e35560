/* tracetool record --java: run a java command with the JVMTI agent
 * (tools/javaagent/tm_jvmti.c) and check what it wrote (record.h has the
 * contract, docs/record.md "Java" the decisions).
 *
 * The agent writes a ZIP itself, from inside the JVM; tracetool only
 * builds the command line, runs it as system() would (a ^C is for the
 * program), and then opens the ZIP as a trace and builds its index, which
 * decodes every line: an archive that does not open or decode is
 * reported as the recording's failure, with the file and offset. For a
 * native OUT the ZIP is a temporary file beside it: packed into OUT,
 * whose statistics (every record decoded again) must be the ZIP's before
 * the ZIP is removed. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "include/tracemount.h"
#include "record.h"
#include "tools/tools.h"

const struct record_lib record_lib_java = {"libtmjava.so", "TM_JAVA_AGENT", "javaagent"};

/* The agent's option buffer (tm_jvmti.c, Agent_OnLoad). */
#define JAVA_OPT_MAX 4096

/* The value of the row key in the stats.json text j, or 0; *exact: the
 * row's exact (docs/stats-json.md). Rows are found by their first
 * occurrence: the ones read here come before any other of their name. */
static uint64_t json_row(const char *j, const char *key, int *exact)
{
        char k[64];
        snprintf(k, sizeof k, "\"%s\":{\"value\":", key);
        const char *p = strstr(j, k), *e = p ? strstr(p, "\"exact\":") : NULL;
        if (exact)
                *exact = !e || strncmp(e + 8, "true", 4) == 0;
        return p ? strtoull(p + strlen(k), NULL, 10) : 0;
}

/* Open out, build its index (every line decoded), its stats.json into
 * j (cap bytes, NUL-terminated); print the summary line unless quiet (a
 * temporary file, whose index is not saved either). 0, or -1 after a
 * message. */
static int java_check(const char *out, char *j, size_t cap, int quiet)
{
        struct tm_trace *t;
        struct tm_vfile *f = NULL;
        struct tm_err err = {0};
        const struct tm_trace_opts o = {.no_save = quiet};
        int rc = tm_trace_open(out, &o, &t, &err);
        if (rc < 0) {
                fprintf(stderr, "tracetool record: %s: %s\n", out,
                        rc == -EMEDIUMTYPE ? "not a Java trace (the agent wrote nothing usable)"
                        : err.msg[0]       ? err.msg
                                           : strerror(-rc));
                return -1;
        }
        ssize_t n = -EIO, k = 0;
        if ((rc = tm_trace_index(t, NULL, NULL, &err)) == 0 &&
            (rc = tm_vfile_open(t, "stats.json", &f, &err)) == 0) {
                for (n = 0;
                     (k = tm_vfile_pread(f, j + n, cap - 1 - (size_t)n, (uint64_t)n, &err)) > 0;)
                        n += k;
                n = k < 0 ? k : n;
                tm_vfile_close(f);
        }
        if (rc < 0 || n < 0) {
                fprintf(stderr, "tracetool record: %s\n",
                        err.msg[0] ? err.msg : strerror(rc < 0 ? -rc : (int)-n));
                tm_trace_close(t);
                return -1;
        }
        j[n] = '\0';
        struct stat st;
        uint64_t size = stat(out, &st) == 0 ? (uint64_t)st.st_size : 0;
        uint64_t recs = json_row(j, "records", NULL);
        int exact;
        uint64_t classes = json_row(j, "classes_named", &exact);
        if (!quiet)
                printf("tracetool record: %s: %s in %s, %" PRIu64 " records, %" PRIu64
                       " bytes (%.2f a record); %" PRIu64 " threads, %s%" PRIu64
                       " classes, %" PRIu64 " methods\n",
                       out, tm_trace_codec(t), tm_trace_container(t), recs, size,
                       recs ? (double)size / (double)recs : 0.0, json_row(j, "thread_start", NULL),
                       exact ? "" : "at least ", classes, json_row(j, "methods_named", NULL));
        tm_trace_close(t);
        return 0;
}

/* Are the statistics of two stats.json texts the same: from the generic
 * "records" row to the end, but for a native file's last member
 * "storage" (where its bytes go, docs/stats-json.md)? The members before
 * "records" name the archive, its codec and sizes. */
static int java_same_stats(const char *a, const char *b)
{
        const char *key = "\"records\":{\"value\":";
        const char *pa = strstr(a, key), *pb = strstr(b, key);
        if (!pa || !pb)
                return 0;
        const char *ea = strstr(pa, ",\"storage\":{"), *eb = strstr(pb, ",\"storage\":{");
        size_t na = ea ? (size_t)(ea - pa) : strlen(pa) - 2; /* without "}\n" */
        size_t nb = eb ? (size_t)(eb - pb) : strlen(pb) - 2;
        return na == nb && memcmp(pa, pb, na) == 0;
}

/* Is prog the java launcher (its file name is "java")? */
static int is_java(const char *prog)
{
        const char *b = strrchr(prog, '/');
        return strcmp(b ? b + 1 : prog, "java") == 0;
}

/* Run argv as system() would; 0, or -1 after a message (the program could
 * not be run, or did not exit 0). When name is not NULL and empty, the
 * default OUT for the java process's pid is made in it (cap bytes) and
 * said on stderr, as soon as the process runs. */
static int java_run(char **argv, char *name, size_t cap)
{
        int efd[2];
        if (pipe2(efd, O_CLOEXEC) < 0) {
                fprintf(stderr, "tracetool record: pipe: %s\n", strerror(errno));
                return -1;
        }
        struct record_sigs sigs;
        pid_t pid = record_fork(&sigs);
        if (pid == 0) {
                close(efd[0]);
                execvp(argv[0], argv);
                int e = errno;
                ssize_t w = write(efd[1], &e, sizeof e);
                (void)w;
                _exit(127);
        }
        close(efd[1]);
        int rc = -1, status = 0, e = pid < 0 ? errno : record_exec_result(efd[0]);
        close(efd[0]);
        if (pid > 0 && !e && name && !name[0]) {
                if (record_default_name(argv[0], pid, record_native_suffix(), name, cap) < 0)
                        snprintf(name, cap, "java.%ld%s", (long)pid, record_native_suffix());
                fprintf(stderr, "tracetool record: writing %s\n", name);
        }
        pid_t w = 0;
        if (pid > 0)
                while ((w = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
                        ;
        if (e)
                fprintf(stderr, "tracetool record: cannot run %s: %s\n", argv[0], strerror(e));
        else if (w < 0)
                fprintf(stderr, "tracetool record: waitpid: %s\n", strerror(errno));
        else
                rc = record_report_status(argv[0], status);
        record_sigs_restore(&sigs);
        return rc;
}

/* The temporary ZIP the agent writes for a native OUT (NULL: the
 * default, in the current directory): a new file "OUT.XXXXXX.zip" beside
 * it, into zip (cap bytes). 0, or -1 after a message. */
static int java_zip_name(const char *out, char *zip, size_t cap)
{
        if (snprintf(zip, cap, "%s.XXXXXX.zip", out ? out : "java") >= (int)cap) {
                fprintf(stderr, "tracetool record: %s: name too long\n", out);
                return -1;
        }
        int fd = mkstemps(zip, 4);
        if (fd < 0) {
                fprintf(stderr, "tracetool record: %s: %s\n", zip, strerror(errno));
                return -1;
        }
        close(fd);
        return 0;
}

/* The agent's ZIP packed into the native out, checked: the ZIP decodes,
 * out decodes to the same statistics; then the ZIP is removed (kept, and
 * said, with TM_RECORD_KEEP_ZIP=1: tests compare the two). 0, or -1
 * after a message saying the ZIP is kept. */
static int java_pack(const struct record_packer *pk, const char *zip, const char *out)
{
        enum { J_CAP = 4 << 20 };
        char *a = malloc(J_CAP), *b = malloc(J_CAP);
        int rc = -1;
        struct tm_err err = {0};
        if (!a || !b) {
                fprintf(stderr, "tracetool record: out of memory\n");
        } else if (java_check(zip, a, J_CAP, 1) == 0) {
                int fd = open(zip, O_RDONLY | O_CLOEXEC);
                int prc = fd < 0 ? -errno : pk->pack_fd(fd, zip, out, NULL, 0, stderr, &err);
                if (fd >= 0)
                        close(fd);
                if (prc < 0)
                        fprintf(stderr, "tracetool record: %s\n",
                                err.msg[0] ? err.msg : strerror(-prc));
                else if (java_check(out, b, J_CAP, 0) == 0 && java_same_stats(a, b))
                        rc = 0;
                else
                        fprintf(stderr, "tracetool record: %s does not hold %s's records\n", out,
                                zip);
        }
        free(a);
        free(b);
        const char *keep = getenv("TM_RECORD_KEEP_ZIP"); /* tests compare it with out */
        if (rc == 0 && keep && strcmp(keep, "1") == 0)
                fprintf(stderr, "tracetool record: the recording is kept in %s\n", zip);
        else if (rc == 0 && unlink(zip) < 0)
                fprintf(stderr, "tracetool record: %s: cannot remove: %s\n", zip, strerror(errno));
        if (rc < 0)
                fprintf(stderr, "tracetool record: the recording is kept in %s\n", zip);
        return rc;
}

int record_java(const struct record_packer *pk, const char *out, int nothis, char **prog)
{
        if (!is_java(prog[0])) {
                fprintf(stderr,
                        "tracetool record: --java: PROGRAM must be the java launcher (named "
                        "java), not '%s'\n(see tracetool record --help)\n",
                        prog[0]);
                return TOOL_USAGE;
        }
        char agent[PATH_MAX];
        if (record_find(&record_lib_java, NULL, agent, sizeof agent) < 0) {
                fprintf(stderr,
                        "tracetool record: %s not found beside tracetool nor at %s (built when "
                        "meson finds a JDK; set %s)\n",
                        record_lib_java.name, agent, record_lib_java.env);
                return TOOL_FAIL;
        }
        int native = !out || record_is_native(out);
        char zip[PATH_MAX], name[PATH_MAX] = "";
        if (native && java_zip_name(out, zip, sizeof zip) < 0)
                return TOOL_FAIL;
        const char *written = native ? zip : out;
        /* -agentpath:PATH=OPTIONS: the JVM splits at the first '=' */
        static char opt[JAVA_OPT_MAX + PATH_MAX + 32];
        if (strchr(agent, '=') || strlen(written) + 8 >= JAVA_OPT_MAX) {
                fprintf(stderr, "tracetool record: %s: %s\n", strchr(agent, '=') ? agent : written,
                        strchr(agent, '=') ? "an agent path with '=' cannot be given to java"
                                           : "name too long for the agent's options");
                if (native)
                        unlink(zip);
                return TOOL_FAIL;
        }
        snprintf(opt, sizeof opt, "-agentpath:%s=%s%s", agent, written, nothis ? ",nothis" : "");
        size_t n = 0;
        while (prog[n])
                n++;
        char **argv = calloc(n + 2, sizeof *argv);
        if (!argv) {
                fprintf(stderr, "tracetool record: out of memory\n");
                return TOOL_FAIL;
        }
        argv[0] = prog[0];
        argv[1] = opt;
        memcpy(argv + 2, prog + 1, n * sizeof *argv); /* with the NULL */
        int ran = java_run(argv, native && !out ? name : NULL, sizeof name);
        free(argv);
        struct stat st;
        if (native && (stat(zip, &st) < 0 || st.st_size == 0)) { /* the agent wrote nothing */
                unlink(zip);
                if (ran == 0)
                        fprintf(stderr, "tracetool record: the agent wrote nothing\n");
                return TOOL_FAIL;
        }
        if (native) {                 /* what the JVM wrote before it failed is packed too */
                if (!out && !name[0]) /* java_run could not say the pid */
                        snprintf(name, sizeof name, "java%s", record_native_suffix());
                int packed = java_pack(pk, zip, out ? out : name);
                return ran == 0 && packed == 0 ? TOOL_OK : TOOL_FAIL;
        }
        /* what the JVM wrote before it failed is still checked and summed up */
        static char j[1 << 20];
        int checked = access(out, F_OK) == 0 || ran == 0 ? java_check(out, j, sizeof j, 0) : -1;
        return ran == 0 && checked == 0 ? TOOL_OK : TOOL_FAIL;
}
