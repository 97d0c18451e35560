/* tracetool record --java: run a java command with the JVMTI agent
 * (tools/javaagent/tm_jvmti.c) and check what it wrote (record.h has the
 * contract, docs/record.md "Java" the decisions).
 *
 * The agent writes OUT itself, from inside the JVM; tracetool only builds
 * the command line, runs it as system() would (a ^C is for the program),
 * and then opens OUT as a trace and builds its index, which decodes every
 * line: an archive that does not open or decode is reported as the
 * recording's failure, with the file and offset. */
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

/* Open out, build its index (every line decoded), print the summary line.
 * 0, or -1 after a message. */
static int java_check(const char *out)
{
        struct tm_trace *t;
        struct tm_vfile *f = NULL;
        struct tm_err err = {0};
        int rc = tm_trace_open(out, NULL, &t, &err);
        if (rc < 0) {
                fprintf(stderr, "tracetool record: %s: %s\n", out,
                        rc == -EMEDIUMTYPE ? "not a Java trace (the agent wrote nothing usable)"
                        : err.msg[0]       ? err.msg
                                           : strerror(-rc));
                return -1;
        }
        static char j[1 << 16];
        ssize_t n = -EIO;
        if ((rc = tm_trace_index(t, NULL, NULL, &err)) == 0 &&
            (rc = tm_vfile_open(t, "stats.json", &f, &err)) == 0) {
                n = tm_vfile_pread(f, j, sizeof j - 1, 0, &err);
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
        printf("tracetool record: %s: %s in %s, %" PRIu64 " records, %" PRIu64
               " bytes (%.2f a record); %" PRIu64 " threads, %s%" PRIu64 " classes, %" PRIu64
               " methods\n",
               out, tm_trace_codec(t), tm_trace_container(t), recs, size,
               recs ? (double)size / (double)recs : 0.0, json_row(j, "thread_start", NULL),
               exact ? "" : "at least ", classes, json_row(j, "methods_named", NULL));
        tm_trace_close(t);
        return 0;
}

/* Is prog the java launcher (its file name is "java")? */
static int is_java(const char *prog)
{
        const char *b = strrchr(prog, '/');
        return strcmp(b ? b + 1 : prog, "java") == 0;
}

/* Run argv as system() would; 0, or -1 after a message (the program could
 * not be run, or did not exit 0). */
static int java_run(char **argv)
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

int record_java(const char *out, int nothis, char **prog)
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
        /* -agentpath:PATH=OPTIONS: the JVM splits at the first '=' */
        static char opt[JAVA_OPT_MAX + PATH_MAX + 32];
        if (strchr(agent, '=') || strlen(out) + 8 >= JAVA_OPT_MAX) {
                fprintf(stderr, "tracetool record: %s: %s\n", strchr(agent, '=') ? agent : out,
                        strchr(agent, '=') ? "an agent path with '=' cannot be given to java"
                                           : "name too long for the agent's options");
                return TOOL_FAIL;
        }
        snprintf(opt, sizeof opt, "-agentpath:%s=%s%s", agent, out, nothis ? ",nothis" : "");
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
        int ran = java_run(argv);
        free(argv);
        /* what the JVM wrote before it failed is still checked and summed up */
        int checked = access(out, F_OK) == 0 || ran == 0 ? java_check(out) : -1;
        return ran == 0 && checked == 0 ? TOOL_OK : TOOL_FAIL;
}
