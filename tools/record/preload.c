/* libtmrecord.so: records a program's heap operations as a HATF stream.
 *
 * tracetool record (record.c) starts the program with this library in
 * LD_PRELOAD and TM_RECORD_FD="FD:DEV:INO" naming the write end of a pipe.
 * The library interposes the allocator's entry points, forwards each call
 * to the next definition (glibc's, or any allocator the program brings),
 * and appends one HATF record per call that changed the heap; the encoding
 * and the outcome rules are in rec_wire.h, the decisions and their reasons
 * in docs/record.md. Without a valid TM_RECORD_FD the library only
 * forwards.
 *
 * How the hooks stay safe inside an arbitrary program:
 * - Nothing here allocates through the hooked functions. The real
 *   functions come from dlsym(RTLD_NEXT); dlsym may itself call calloc,
 *   which is served from a static arena while the lookup runs. Thread
 *   buffers are mmap'd.
 * - A thread-local guard: while a hook records (or calls the real
 *   function), calls made from inside (dlsym, pthread_setspecific, a
 *   signal handler that breaks the rules) are forwarded, not recorded.
 * - Per-thread buffers of TB_CAP bytes of whole records, written under a
 *   lock, so records of different threads never interleave and memory
 *   stays at one buffer a live thread.
 * - Order: every record carries the call's number in one sequence shared
 *   by all threads (rec_wire.h), taken where the call takes effect; the
 *   packer restores that order from the flush order within a bounded
 *   window. To keep the window small, a buffer that fills flushes every
 *   thread's buffer (what each has published), so an idle thread's
 *   records wait at most one buffer's worth of another thread's records.
 * - Flushes: when a buffer is full (all of them then), when its thread
 *   exits (a pthread key's destructor), at exit (a library destructor:
 *   every thread's buffer), before an exec and at _exit. After the exit
 *   flush each record is written at once.
 * - fork: the child stops recording and closes its copy of the pipe (its
 *   address space is a copy: its events under the parent's heap would
 *   make addresses live twice; and a child that outlives the program must
 *   not keep tracetool waiting for the end of the pipe). The parent writes
 *   a notice (rec_wire.h), as for posix_spawn, system and popen.
 * - exec: the pipe is close-on-exec and the variable carries the pipe's
 *   identity, so no exec'd program records (the process's own exec ends
 *   its recording too) and none can mistake another file for the pipe.
 *   A notice names what is exec'd (and a second one says if it failed),
 *   so that tracetool can say the trace stops there; an exec in a vfork
 *   child is a spawn notice instead (the program goes on).
 * - The pipe's identity is checked before every write: a program that
 *   closed the fd and reused the number never gets trace bytes.
 * - A write that fails (tracetool gone: EPIPE) stops recording; SIGPIPE is
 *   blocked around the write and a SIGPIPE it raised is taken back, so the
 *   program never dies of the recorder's pipe. errno is kept for the
 *   program across every hook. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "rec_wire.h"

#define EXPORT __attribute__((visibility("default")))
#define TLS __thread __attribute__((tls_model("initial-exec")))

/* A thread's buffer: one mapping, this header then the records. */
#define TB_SIZE (64u << 10)
struct tbuf {
        struct tbuf *next, *prev; /* the registry, under g.lock */
        size_t start;             /* bytes before it are written; under g.lock */
        _Atomic size_t len;       /* bytes of whole records; the owner stores it */
        uint8_t data[];
};
#define TB_CAP (TB_SIZE - offsetof(struct tbuf, data))

/* The next definitions of the hooked functions. */
static struct {
        void *(*malloc)(size_t);
        void (*free)(void *);
        void *(*calloc)(size_t, size_t);
        void *(*realloc)(void *, size_t);
        int (*posix_memalign)(void **, size_t, size_t);
        void *(*aligned_alloc)(size_t, size_t);
        void *(*memalign)(size_t, size_t);
        void *(*valloc)(size_t);
        void *(*pvalloc)(size_t);
        int (*execve)(const char *, char *const[], char *const[]);
        int (*execv)(const char *, char *const[]);
        int (*execvp)(const char *, char *const[]);
        int (*execvpe)(const char *, char *const[], char *const[]);
        int (*posix_spawn)(pid_t *, const char *, const posix_spawn_file_actions_t *,
                           const posix_spawnattr_t *, char *const[], char *const[]);
        int (*posix_spawnp)(pid_t *, const char *, const posix_spawn_file_actions_t *,
                            const posix_spawnattr_t *, char *const[], char *const[]);
        int (*system)(const char *);
        FILE *(*popen)(const char *, const char *);
        void (*exit_)(int);
        void (*Exit_)(int);
} real;

static struct {
        atomic_int on;    /* recording: set once the header is written */
        atomic_int final; /* past the exit flush: write each record at once */
        int fd;
        dev_t dev;
        ino_t ino;
        pid_t pid;            /* the recorded process */
        pid_t spawned;        /* the last vfork child whose exec was noted */
        uint64_t t0;          /* CLOCK_MONOTONIC ns at start */
        int clock;            /* TM_RECORD_CLOCK: 0 ns, 1 us, 2 seq (the sequence) */
        _Atomic uint64_t seq; /* the records' sequence: the last number taken */
        pthread_key_t key;
        pthread_mutex_t lock; /* the fd and the registry */
        struct tbuf *bufs;
} g = {.lock = PTHREAD_MUTEX_INITIALIZER};

static TLS struct {
        struct tbuf *buf;
        uint32_t tid;
        uint8_t guard; /* inside a hook: forward, do not record */
        uint8_t nobuf; /* past the thread's key destructor, or mmap failed */
} me;

/* ---- bootstrap: dlsym may call calloc before calloc is known ---- */

#define ARENA_SIZE 8192
static _Alignas(16) uint8_t arena[ARENA_SIZE];
static atomic_size_t arena_used;
static atomic_int resolving;

static int in_arena(const void *p)
{
        return (const uint8_t *)p >= arena && (const uint8_t *)p < arena + ARENA_SIZE;
}

/* Zeroed, 16-aligned, never freed; the size sits in the 16 bytes before. */
static void *arena_alloc(size_t n)
{
        size_t need = 16 + ((n + 15) & ~(size_t)15);
        size_t at = atomic_fetch_add(&arena_used, need);
        if (n > ARENA_SIZE || at + need > ARENA_SIZE)
                return NULL;
        memcpy(arena + at, &n, sizeof n);
        return arena + at + 16;
}

static size_t arena_size(const void *p)
{
        size_t n;
        memcpy(&n, (const uint8_t *)p - 16, sizeof n);
        return n;
}

#define RESOLVE(name) real.name = (__typeof__(real.name))dlsym(RTLD_NEXT, #name)

static void resolve(void)
{
        atomic_store(&resolving, 1);
        RESOLVE(malloc);
        RESOLVE(free);
        RESOLVE(calloc);
        RESOLVE(realloc);
        RESOLVE(posix_memalign);
        RESOLVE(aligned_alloc);
        RESOLVE(memalign);
        RESOLVE(valloc);
        RESOLVE(pvalloc);
        RESOLVE(execve);
        RESOLVE(execv);
        RESOLVE(execvp);
        RESOLVE(execvpe);
        RESOLVE(posix_spawn);
        RESOLVE(posix_spawnp);
        RESOLVE(system);
        RESOLVE(popen);
        real.exit_ = (void (*)(int))dlsym(RTLD_NEXT, "_exit");
        real.Exit_ = (void (*)(int))dlsym(RTLD_NEXT, "_Exit");
        atomic_store(&resolving, 0);
}

/* Are the real functions known? While they are being looked up, the
 * caller serves the request from the arena. */
static int ready(void)
{
        if (real.malloc)
                return 1;
        if (atomic_load(&resolving))
                return 0;
        resolve();
        return real.malloc != NULL;
}

/* ---- writing ---- */

/* Is g.fd still the pipe tracetool gave? */
static int fd_is_ours(void)
{
        struct stat st;
        return fstat(g.fd, &st) == 0 && st.st_dev == g.dev && st.st_ino == g.ino;
}

/* Write p[0..n) to the pipe; under g.lock. On any failure recording stops
 * for good: a partial stream ends at a record boundary or is cut, never
 * interleaved. SIGPIPE (reader gone) is blocked around the write and, if
 * this write raised it, taken back. */
static void write_locked(const uint8_t *p, size_t n)
{
        if (!atomic_load_explicit(&g.on, memory_order_relaxed) || n == 0)
                return;
        if (!fd_is_ours()) {
                atomic_store(&g.on, 0);
                return;
        }
        sigset_t pipe_set, old, pending;
        sigemptyset(&pipe_set);
        sigaddset(&pipe_set, SIGPIPE);
        pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
        sigpending(&pending);
        int was_pending = sigismember(&pending, SIGPIPE);
        while (n > 0) {
                ssize_t w = write(g.fd, p, n);
                if (w < 0 && errno == EINTR)
                        continue;
                if (w <= 0) {
                        atomic_store(&g.on, 0);
                        if (w < 0 && errno == EPIPE && !was_pending) {
                                static const struct timespec zero = {0, 0};
                                sigtimedwait(&pipe_set, NULL, &zero);
                        }
                        break;
                }
                p += w;
                n -= (size_t)w;
        }
        pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* Write what every thread has buffered; under g.lock. Another thread may
 * be appending meanwhile: only the bytes its release store has published
 * are taken, and start remembers them for its own next flush. The pieces
 * go out FLUSH_IOV at a time, one write each when they fit a page (the
 * common case: a few threads), else one by one. */
#define FLUSH_IOV 16
static void flush_all_locked(void)
{
        struct tbuf *b = g.bufs;
        while (b) {
                struct iovec v[FLUSH_IOV];
                int n = 0;
                size_t total = 0;
                for (; b && n < FLUSH_IOV; b = b->next) {
                        size_t len = atomic_load_explicit(&b->len, memory_order_acquire);
                        if (len > b->start) {
                                v[n++] = (struct iovec){b->data + b->start, len - b->start};
                                total += len - b->start;
                        }
                        b->start = len;
                }
                static uint8_t page[4096]; /* under g.lock; not on a thread's small stack */
                if (n > 1 && total <= sizeof page) {
                        size_t at = 0;
                        for (int i = 0; i < n; i++) {
                                memcpy(page + at, v[i].iov_base, v[i].iov_len);
                                at += v[i].iov_len;
                        }
                        write_locked(page, at);
                } else {
                        for (int i = 0; i < n; i++)
                                write_locked(v[i].iov_base, v[i].iov_len);
                }
        }
}

/* The owner's buffer is full: write every thread's buffer (so that the
 * packer's reorder window stays small: rec_wire.h) and empty its own. */
static void tbuf_flush(struct tbuf *b)
{
        pthread_mutex_lock(&g.lock);
        flush_all_locked();
        b->start = 0;
        atomic_store_explicit(&b->len, 0, memory_order_relaxed);
        pthread_mutex_unlock(&g.lock);
}

/* At exit, exec, _exit. */
static void flush_all(void)
{
        pthread_mutex_lock(&g.lock);
        flush_all_locked();
        pthread_mutex_unlock(&g.lock);
}

/* The pthread key's destructor: the thread is exiting. What it records
 * after this (other keys' destructors may still free) is written at once. */
static void tbuf_release(void *v)
{
        struct tbuf *b = v;
        uint8_t guard = me.guard;
        me.guard = 1;
        tbuf_flush(b);
        pthread_mutex_lock(&g.lock);
        if (b->prev)
                b->prev->next = b->next;
        else
                g.bufs = b->next;
        if (b->next)
                b->next->prev = b->prev;
        pthread_mutex_unlock(&g.lock);
        munmap(b, TB_SIZE);
        me.buf = NULL;
        me.nobuf = 1;
        me.guard = guard;
}

static struct tbuf *tbuf_new(void)
{
        void *m = mmap(NULL, TB_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED) {
                me.nobuf = 1;
                return NULL;
        }
        struct tbuf *b = m;
        pthread_mutex_lock(&g.lock);
        b->next = g.bufs;
        if (g.bufs)
                g.bufs->prev = b;
        g.bufs = b;
        pthread_mutex_unlock(&g.lock);
        me.buf = b;
        pthread_setspecific(g.key, b);
        return b;
}

/* Append one record of this thread. */
static void emit(const uint8_t *rec, size_t n)
{
        struct tbuf *b = me.buf;
        if (!b && !me.nobuf)
                b = tbuf_new();
        if (!b) {
                pthread_mutex_lock(&g.lock);
                write_locked(rec, n);
                pthread_mutex_unlock(&g.lock);
                return;
        }
        size_t len = atomic_load_explicit(&b->len, memory_order_relaxed);
        if (len + n > TB_CAP) {
                tbuf_flush(b);
                len = 0;
        }
        memcpy(b->data + len, rec, n);
        atomic_store_explicit(&b->len, len + n, memory_order_release);
        if (atomic_load_explicit(&g.final, memory_order_relaxed))
                tbuf_flush(b);
}

/* A record's place in the order of the calls (rec_wire.h): the next
 * number of the sequence, and the time field that goes with it:
 * nanoseconds since the start, microseconds, or (TM_RECORD_CLOCK=seq) the
 * number itself, for traces that compress better (the low bits of
 * nanosecond deltas are noise to a compressor). Taken where the call takes
 * effect: a free's before the real free releases the address, an
 * allocation's after the real call obtained it, so that the free of an
 * address comes before the allocation in another thread that reuses it.
 * The fetch-add is sequentially consistent, and the allocator's own
 * synchronization orders the free before the reuse. */
struct stamp {
        uint64_t seq, time;
};

static struct stamp stamp_now(void)
{
        struct stamp s = {atomic_fetch_add(&g.seq, 1) + 1, 0};
        if (g.clock == 2) {
                s.time = s.seq;
                return s;
        }
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        uint64_t ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec - g.t0;
        s.time = g.clock == 1 ? ns / 1000 : ns;
        return s;
}

static uint32_t my_tid(void)
{
        if (!me.tid)
                me.tid = (uint32_t)gettid();
        return me.tid;
}

static void rec_alloc(size_t size, const void *p)
{
        uint8_t r[RECW_MAX_LEN];
        struct stamp s = stamp_now();
        emit(r, recw_alloc(r, size, (uintptr_t)p, my_tid(), s.seq, s.time));
}

static void rec_free(const void *p, struct stamp s)
{
        uint8_t r[RECW_MAX_LEN];
        emit(r, recw_free(r, (uintptr_t)p, my_tid(), s.seq, s.time));
}

/* Write a notice (rec_wire.h) at once, every buffer first so that it
 * follows the records taken before it. Rare: exec, fork, spawn, start. */
static void notice(const char *verb, const char *arg)
{
        uint8_t r[512];
        size_t n = recw_note(r, sizeof r, verb, atomic_load(&g.seq), arg);
        pthread_mutex_lock(&g.lock);
        flush_all_locked();
        write_locked(r, n);
        pthread_mutex_unlock(&g.lock);
}

/* ---- start, fork, exit ---- */

static void at_fork_parent(void)
{
        if (me.guard || !atomic_load(&g.on))
                return;
        me.guard = 1;
        notice("fork", NULL);
        me.guard = 0;
}

static void at_fork_child(void)
{
        if (!atomic_load(&g.on))
                return;
        atomic_store(&g.on, 0);
        close(g.fd);
}

/* A Python that allocates through its own allocator (pymalloc, mimalloc)
 * calls malloc only for large blocks: say so (docs/record.md). Its
 * symbols are visible here: the executable and its libraries are loaded
 * before any constructor runs. */
static void python_check(void)
{
        if (!dlsym(RTLD_DEFAULT, "PyObject_Malloc"))
                return;
        const char *pm = getenv("PYTHONMALLOC");
        if (pm && (strcmp(pm, "malloc") == 0 || strcmp(pm, "malloc_debug") == 0))
                return;
        notice("pymalloc", pm && *pm ? pm : NULL);
}

__attribute__((constructor)) static void tmrec_start(void)
{
        if (!ready())
                return;
        const char *v = getenv("TM_RECORD_FD");
        int fd;
        uint64_t dev, ino;
        struct stat st;
        if (!v || recw_parse_target(v, &fd, &dev, &ino) < 0 || fstat(fd, &st) < 0 ||
            (uint64_t)st.st_dev != dev || (uint64_t)st.st_ino != ino)
                return;
        me.guard = 1;
        g.fd = fd;
        g.pid = getpid();
        g.dev = st.st_dev;
        g.ino = st.st_ino;
        fcntl(fd, F_SETFD, fcntl(fd, F_GETFD) | FD_CLOEXEC);
        const char *ck = getenv("TM_RECORD_CLOCK");
        g.clock = ck && strcmp(ck, "us") == 0 ? 1 : ck && strcmp(ck, "seq") == 0 ? 2 : 0;
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        g.t0 = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
        if (pthread_key_create(&g.key, tbuf_release) == 0 &&
            pthread_atfork(NULL, at_fork_parent, at_fork_child) == 0) {
                atomic_store(&g.on, 1);
                pthread_mutex_lock(&g.lock);
                write_locked(recw_header, sizeof recw_header);
                pthread_mutex_unlock(&g.lock);
                python_check();
        }
        me.guard = 0;
}

/* Runs after the program's atexit handlers and most libraries'
 * destructors (this library was loaded first, so it is finalized late). */
__attribute__((destructor)) static void tmrec_stop(void)
{
        if (!atomic_load(&g.on))
                return;
        atomic_store(&g.final, 1);
        flush_all();
}

/* ---- the hooks ---- */

/* Is this call to be recorded? If so the guard is taken: release it with
 * leave(). */
static int enter(void)
{
        if (me.guard || !atomic_load_explicit(&g.on, memory_order_relaxed))
                return 0;
        me.guard = 1;
        return 1;
}

static void leave(int saved_errno)
{
        me.guard = 0;
        errno = saved_errno;
}

EXPORT void *malloc(size_t n)
{
        if (!ready())
                return arena_alloc(n);
        if (!enter())
                return real.malloc(n);
        void *p = real.malloc(n);
        int e = errno;
        if (p)
                rec_alloc(n, p);
        leave(e);
        return p;
}

EXPORT void *calloc(size_t n, size_t m)
{
        if (!ready())
                return arena_alloc(n * m); /* dlsym's own: small, no overflow */
        if (!enter())
                return real.calloc(n, m);
        void *p = real.calloc(n, m);
        int e = errno;
        if (p)
                rec_alloc(n * m, p);
        leave(e);
        return p;
}

EXPORT void free(void *p)
{
        if (!p || in_arena(p) || !ready())
                return;
        if (!enter()) {
                real.free(p);
                return;
        }
        /* Stamped before the real free: once it returns another thread may
         * get p back, and its alloc must come later. */
        int e = errno;
        rec_free(p, stamp_now());
        real.free(p);
        leave(e);
}

/* realloc's heart, shared with reallocarray. */
static void *do_realloc(void *old, size_t n)
{
        if (in_arena(old)) {
                void *p = malloc(n);
                if (p) {
                        size_t k = arena_size(old);
                        memcpy(p, old, k < n ? k : n);
                }
                return p;
        }
        if (!enter())
                return real.realloc(old, n);
        /* realloc(p, 0) may free p: stamped before the call (see free), and
         * it is always recorded (recw_realloc_outcome), so the number is not
         * wasted. Every other outcome after the call, when the new block
         * exists; a moved block's old address is released inside the call,
         * before the stamp: the one race left (docs/record.md). */
        struct stamp before = {0, 0};
        if (old && n == 0)
                before = stamp_now();
        void *p = real.realloc(old, n);
        int e = errno;
        int tag = recw_realloc_outcome(old, n, p);
        if (tag >= 0) {
                uint8_t r[RECW_MAX_LEN];
                struct stamp s = old && n == 0 ? before : stamp_now();
                emit(r, recw_realloc(r, (unsigned)tag, n, (uintptr_t)old, (uintptr_t)p, my_tid(),
                                     s.seq, s.time));
        }
        leave(e);
        return p;
}

EXPORT void *realloc(void *old, size_t n)
{
        if (!ready()) {
                void *p = arena_alloc(n);
                if (p && old)
                        memcpy(p, old, arena_size(old) < n ? arena_size(old) : n);
                return p;
        }
        return do_realloc(old, n);
}

/* glibc's reallocarray calls its realloc internally (not through the
 * PLT), so it is hooked itself and goes through do_realloc. */
EXPORT void *reallocarray(void *old, size_t n, size_t m)
{
        size_t bytes;
        if (__builtin_mul_overflow(n, m, &bytes)) {
                errno = ENOMEM;
                return NULL;
        }
        if (!ready())
                return NULL;
        return do_realloc(old, bytes);
}

EXPORT int posix_memalign(void **out, size_t align, size_t n)
{
        if (!ready())
                return ENOMEM;
        if (!enter())
                return real.posix_memalign(out, align, n);
        int rc = real.posix_memalign(out, align, n);
        int e = errno;
        if (rc == 0)
                rec_alloc(n, *out);
        leave(e);
        return rc;
}

/* aligned_alloc, memalign: the same shape. */
#define ALIGNED_HOOK(name)                                                                         \
        EXPORT void *name(size_t align, size_t n)                                                  \
        {                                                                                          \
                if (!ready() || !real.name)                                                        \
                        return NULL;                                                               \
                if (!enter())                                                                      \
                        return real.name(align, n);                                                \
                void *p = real.name(align, n);                                                     \
                int e = errno;                                                                     \
                if (p)                                                                             \
                        rec_alloc(n, p);                                                           \
                leave(e);                                                                          \
                return p;                                                                          \
        }
ALIGNED_HOOK(aligned_alloc)
ALIGNED_HOOK(memalign)

/* valloc, pvalloc: the size recorded is the one asked for (pvalloc rounds
 * it up to a page; the program asked for n). */
#define PAGE_HOOK(name)                                                                            \
        EXPORT void *name(size_t n)                                                                \
        {                                                                                          \
                if (!ready() || !real.name)                                                        \
                        return NULL;                                                               \
                if (!enter())                                                                      \
                        return real.name(n);                                                       \
                void *p = real.name(n);                                                            \
                int e = errno;                                                                     \
                if (p)                                                                             \
                        rec_alloc(n, p);                                                           \
                leave(e);                                                                          \
                return p;                                                                          \
        }
PAGE_HOOK(valloc)
PAGE_HOOK(pvalloc)

/* ---- exec and _exit: the buffers go out first ---- */

/* glibc's exec* functions reach execve inside libc, not through the PLT,
 * so each is hooked (fexecve and execveat are not: what their caller
 * buffered is lost; docs/record.md). */
static void before_exec(void)
{
        if (me.guard || !atomic_load(&g.on))
                return;
        me.guard = 1;
        flush_all();
        me.guard = 0;
}

/* Notices of an exec (rec_wire.h): "exec" before it, with the buffers out
 * first; "exec-failed" if it returned. */
static void exec_notice(const char *verb, const char *what)
{
        if (me.guard || !atomic_load(&g.on))
                return;
        int e = errno;
        me.guard = 1;
        notice(verb, what);
        me.guard = 0;
        errno = e;
}

/* The program execvp would run for file: the first executable dir/file of
 * PATH (glibc's default when unset), into buf; file itself if it holds a
 * slash or none is found. */
static const char *path_search(const char *file, char *buf, size_t cap)
{
        if (!file || strchr(file, '/'))
                return file;
        const char *path = getenv("PATH");
        if (!path)
                path = "/bin:/usr/bin";
        for (const char *d = path;; d++) {
                const char *end = strchr(d, ':');
                size_t dl = end ? (size_t)(end - d) : strlen(d);
                int k = dl ? snprintf(buf, cap, "%.*s/%s", (int)dl, d, file)
                           : snprintf(buf, cap, "%s", file);
                if (k > 0 && (size_t)k < cap && access(buf, X_OK) == 0)
                        return buf;
                if (!end)
                        return file;
                d = end;
        }
}

/* An exec in a child that vfork made (sharing our memory, so recording
 * looks on) starts another program, as posix_spawn does: the program goes
 * on, so the notice is "spawn", once a child, for the first program that
 * exists (a shell's PATH search tries several). */
static int vfork_exec(const char *what)
{
        if (!atomic_load(&g.on) || getpid() == g.pid)
                return 0;
        if (g.spawned != getpid() && what && access(what, X_OK) == 0) {
                g.spawned = getpid();
                exec_notice("spawn", what);
        }
        return 1;
}

#define EXEC_HOOK(call, name)                                                                      \
        do {                                                                                       \
                if (!ready() || !real.name)                                                        \
                        return errno = ENOSYS, -1;                                                 \
                if (vfork_exec(what))                                                              \
                        return call;                                                               \
                exec_notice("exec", what); /* every buffer goes out first */                       \
                int rc_ = call;                                                                    \
                exec_notice("exec-failed", what);                                                  \
                return rc_;                                                                        \
        } while (0)

EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
        const char *what = path;
        EXEC_HOOK(real.execve(path, argv, envp), execve);
}

EXPORT int execv(const char *path, char *const argv[])
{
        const char *what = path;
        EXEC_HOOK(real.execv(path, argv), execv);
}

EXPORT int execvp(const char *file, char *const argv[])
{
        char buf[PATH_MAX];
        const char *what = path_search(file, buf, sizeof buf);
        EXEC_HOOK(real.execvp(file, argv), execvp);
}

EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
        char buf[PATH_MAX];
        const char *what = path_search(file, buf, sizeof buf);
        EXEC_HOOK(real.execvpe(file, argv, envp), execvpe);
}

/* ---- programs started in a child: a notice, nothing recorded ---- */

static void spawn_notice(const char *what)
{
        exec_notice("spawn", what);
}

EXPORT int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
                       const posix_spawnattr_t *at, char *const argv[], char *const envp[])
{
        if (!ready() || !real.posix_spawn)
                return ENOSYS;
        int rc = real.posix_spawn(pid, path, fa, at, argv, envp);
        if (rc == 0)
                spawn_notice(path);
        return rc;
}

EXPORT int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
                        const posix_spawnattr_t *at, char *const argv[], char *const envp[])
{
        if (!ready() || !real.posix_spawnp)
                return ENOSYS;
        int rc = real.posix_spawnp(pid, file, fa, at, argv, envp);
        if (rc == 0)
                spawn_notice(file);
        return rc;
}

/* glibc's system and popen spawn through its internal posix_spawn. */
EXPORT int system(const char *cmd)
{
        if (!ready() || !real.system)
                return -1;
        if (cmd)
                spawn_notice(cmd);
        return real.system(cmd);
}

EXPORT FILE *popen(const char *cmd, const char *mode)
{
        if (!ready() || !real.popen)
                return NULL;
        FILE *f = real.popen(cmd, mode);
        if (f)
                spawn_notice(cmd);
        return f;
}

/* execl, execlp, execle: the list into an array on the stack, then the
 * v-form above. */
#define EXECL_ARGV(arg, ap, argv)                                                                  \
        size_t n_ = 1; /* glibc: arg is non-null */                                                \
        va_start(ap, arg);                                                                         \
        while (va_arg(ap, char *))                                                                 \
                n_++;                                                                              \
        va_end(ap);                                                                                \
        char *argv[n_ + 1];                                                                        \
        argv[0] = (char *)arg;                                                                     \
        va_start(ap, arg);                                                                         \
        for (size_t i_ = 1; i_ <= n_; i_++) /* the last one read is the NULL */                    \
                argv[i_] = va_arg(ap, char *);

EXPORT int execl(const char *path, const char *arg, ...)
{
        va_list ap;
        EXECL_ARGV(arg, ap, argv);
        va_end(ap);
        return execv(path, argv);
}

EXPORT int execlp(const char *file, const char *arg, ...)
{
        va_list ap;
        EXECL_ARGV(arg, ap, argv);
        va_end(ap);
        return execvp(file, argv);
}

EXPORT int execle(const char *path, const char *arg, ...)
{
        va_list ap;
        EXECL_ARGV(arg, ap, argv);
        char *const *envp = va_arg(ap, char *const *);
        va_end(ap);
        return execve(path, argv, envp);
}

EXPORT void _exit(int status)
{
        before_exec();
        if (ready() && real.exit_)
                real.exit_(status);
        syscall(SYS_exit_group, status); /* no next _exit: not in glibc */
        __builtin_unreachable();
}

EXPORT void _Exit(int status)
{
        before_exec();
        if (ready() && real.Exit_)
                real.Exit_(status);
        syscall(SYS_exit_group, status);
        __builtin_unreachable();
}
