#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include <fuse_log.h>

static int log_fd = -1;
static int log_also_stderr;

int log_open(const char *path)
{
        int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY, 0644);
        if (fd < 0) {
                fprintf(stderr, "tracemount: --log-file %s: %s\n", path, strerror(errno));
                return -1;
        }
        log_close();
        log_fd = fd;
        return 0;
}

void log_close(void)
{
        if (log_fd >= 0)
                close(log_fd);
        log_fd = -1;
}

static void log_syslog(enum fuse_log_level level, const char *fmt, va_list ap)
{
        vsyslog((int)level, fmt, ap);
}

/* One line: "2026-11-24 18:05:01 +0000 [pid] message", written with one
 * write(2) so that lines of concurrent threads do not interleave. */
static void log_to_file(enum fuse_log_level level, const char *fmt, va_list ap)
{
        (void)level;
        char line[2048];
        time_t now = time(NULL);
        struct tm tm;
        size_t n = 0;
        if (localtime_r(&now, &tm))
                n = strftime(line, sizeof line, "%Y-%m-%d %H:%M:%S %z ", &tm);
        n += (size_t)snprintf(line + n, sizeof line - n, "[%ld] ", (long)getpid());
        va_list ap2;
        va_copy(ap2, ap);
        int m = vsnprintf(line + n, sizeof line - n, fmt, ap2);
        va_end(ap2);
        if (m > 0)
                n += (size_t)m;
        if (n > sizeof line - 2) /* truncated: keep room for the newline */
                n = sizeof line - 2;
        if (n == 0 || line[n - 1] != '\n')
                line[n++] = '\n';
        ssize_t w = write(log_fd, line, n);
        (void)w; /* nowhere left to report a failed log write */
        if (log_also_stderr)
                vfprintf(stderr, fmt, ap);
}

void log_mounted(int foreground)
{
        if (log_fd >= 0) {
                log_also_stderr = foreground;
                fuse_set_log_func(log_to_file);
        } else if (!foreground) {
                openlog("tracemount", LOG_PID, LOG_DAEMON);
                fuse_set_log_func(log_syslog);
        }
}
