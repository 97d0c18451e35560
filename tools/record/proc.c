/* The recorder's process helpers (proc.h), under both launchers: the
 * heap recorder (record.c) and the Java one (record_java.c). */
#include "proc.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tools/lib_int.h"

#ifndef TM_RECORD_LIBDIR
#define TM_RECORD_LIBDIR "/usr/local/lib"
#endif
#ifndef TM_RECORD_RELLIBDIR
#define TM_RECORD_RELLIBDIR "lib"
#endif
static int file_exists(const char *p)
{
        struct stat st;
        return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

int record_find(const struct record_lib *l, const char *exe_dir, char *buf, size_t n)
{
        const char *env = getenv(l->env);
        if (env && *env) {
                if ((size_t)snprintf(buf, n, "%s", env) >= n)
                        return -1;
                return 0;
        }
        char self[PATH_MAX];
        if (!exe_dir) {
                ssize_t k = readlink("/proc/self/exe", self, sizeof self - 1);
                if (k > 0) {
                        self[k] = '\0';
                        char *slash = strrchr(self, '/');
                        if (slash)
                                *slash = '\0';
                        exe_dir = self;
                }
        }
        if (exe_dir) {
                /* The build tree (tools/tracetool beside tools/<subdir>/), then
                 * an install prefix (bin/ beside lib/...). */
                static const char *const beside[] = {
                    "%s/%s/%s", "%s/../" TM_RECORD_RELLIBDIR "/%.0s%s", "%s/../lib/%.0s%s"};
                for (size_t i = 0; i < sizeof beside / sizeof beside[0]; i++)
                        if ((size_t)snprintf(buf, n, beside[i], exe_dir, l->subdir, l->name) < n &&
                            file_exists(buf))
                                return 0;
        }
        snprintf(buf, n, "%s/%s", TM_RECORD_LIBDIR, l->name);
        return file_exists(buf) ? 0 : -1;
}

int record_preload_value(const char *lib, const char *old, char *buf, size_t n)
{
        if (!*lib || strpbrk(lib, " :\t\n"))
                return -1;
        int k = old && *old ? snprintf(buf, n, "%s %s", lib, old) : snprintf(buf, n, "%s", lib);
        return k < 0 || (size_t)k >= n ? -1 : 0;
}

int record_exec_result(int err_fd)
{
        int e = 0;
        ssize_t k;
        do
                k = read(err_fd, &e, sizeof e);
        while (k < 0 && errno == EINTR);
        return k == (ssize_t)sizeof e ? e : 0;
}

pid_t record_fork(struct record_sigs *s)
{
        struct sigaction ign = {.sa_handler = SIG_IGN};
        sigemptyset(&ign.sa_mask);
        sigaction(SIGINT, &ign, &s->old_int);
        sigaction(SIGQUIT, &ign, &s->old_quit);
        fflush(NULL);
        pid_t pid = fork();
        if (pid == 0)
                record_sigs_restore(s);
        return pid;
}

void record_sigs_restore(const struct record_sigs *s)
{
        sigaction(SIGINT, &s->old_int, NULL);
        sigaction(SIGQUIT, &s->old_quit, NULL);
}

int record_report_status(const char *prog, int status)
{
        if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
                return 0;
        if (WIFEXITED(status))
                fprintf(stderr, "tracetool record: %s exited with status %d\n", prog,
                        WEXITSTATUS(status));
        else if (WIFSIGNALED(status))
                fprintf(stderr, "tracetool record: %s was killed by signal %d (%s)%s\n", prog,
                        WTERMSIG(status), strsignal(WTERMSIG(status)),
                        WCOREDUMP(status) ? ", core dumped" : "");
        return -1;
}

int record_default_name(const char *prog, pid_t pid, const char *suffix, char *buf, size_t n)
{
        const char *b = strrchr(prog, '/');
        int k = snprintf(buf, n, "%s.%ld%s", b && b[1] ? b + 1 : prog, (long)pid, suffix);
        return k < 0 || (size_t)k >= n ? -1 : 0;
}

const char *record_native_suffix(void)
{
        for (const struct tm_rcodec *const *c = tm_registry()->row; *c; c++)
                if (strcmp((*c)->name, "native") == 0 && (*c)->suffix)
                        return (*c)->suffix;
        return ".tmn";
}

int record_is_native(const char *out)
{
        const char *suf = record_native_suffix();
        size_t n = strlen(out), k = strlen(suf);
        return n > k && strcmp(out + n - k, suf) == 0;
}
