/* log: where the daemon's messages (the reasons for EIO, index notes) go.
 *
 * Until the mount is up they go to standard error, libfuse's default, so
 * that every failure before the daemon detaches is seen on the terminal.
 * Once mounted (log_mounted), they go to the log file when one was opened
 * (log_open: each line appended with the time, and in the foreground also
 * to standard error), else in the background to syslog (daemon facility);
 * a foreground daemon without a log file keeps standard error. */
#ifndef TMFS_LOG_H
#define TMFS_LOG_H

/* Open path for appending (created 0644 less the umask), before mounting
 * and before the daemon changes to /. 0, or -1 with a message on stderr
 * naming the file. */
int log_open(const char *path);

/* The mount is up: route libfuse's log (fuse_log) as described above. */
void log_mounted(int foreground);

/* Close the log file if one is open. */
void log_close(void);

#endif
