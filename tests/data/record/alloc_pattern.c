/* A program with a known heap history, for tests/integration/record.sh.
 *
 * The main thread (scale 10) and four threads (scales 1-4) each run
 * pattern(s), whose recorded operations are, in order (sizes times s):
 *
 *   alloc 17, alloc 24 (calloc 3 x 8), realloc_alloc_free 4096 (grows:
 *   moves), realloc 100 (shrinks: in place), realloc_alloc 40
 *   (realloc(NULL)), free, alloc 200 (posix_memalign), alloc 512
 *   (aligned_alloc), realloc_free 0 (realloc(p, 0)), free x 3, alloc 48
 *   (memalign), alloc 64 (valloc), alloc 80 (pvalloc), realloc_alloc 45
 *   (reallocarray(NULL, 5, 9)), free x 4
 *
 * and the calls that change nothing are not recorded: free(NULL) and a
 * failed malloc. So each thread has 7 alloc, 8 free, 1 realloc, 1
 * realloc_alloc_free, 2 realloc_alloc, 1 realloc_free of its own.
 *
 * Then the main thread forks a child that allocates 777 and 778 bytes
 * (the child is not recorded), and after the child has exited allocates
 * 555 bytes itself. With the argument "exec" it finally allocates 999
 * bytes and execs "ls /" (not recorded); with "vfork" a vfork child
 * execs /bin/true and, after it, the main thread allocates 888 bytes;
 * otherwise it exits.
 *
 * Output: one line "thread SCALE TID" per thread, so the test can find
 * each thread's records. Exit 0, or 1 if an allocation it expects fails. */
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define NTHREADS 4

/* Where the pointers go, so that no call can be optimized away. */
static void *volatile sink;
static int failed;

static void *check(void *p)
{
        if (!p)
                failed = 1;
        sink = p;
        return p;
}

static void pattern(size_t s)
{
        char *a = check(malloc(17 * s));
        void *b = check(calloc(3, 8 * s));
        a = check(realloc(a, 4096 * s)); /* b sits after a: a moves */
        a = check(realloc(a, 100 * s));  /* shrinking stays in place */
        void *c = check(realloc(NULL, 40 * s));
        free(b);
        void *d = NULL;
        if (posix_memalign(&d, 64, 200 * s) != 0)
                failed = 1;
        sink = d;
        void *e = check(aligned_alloc(256, 512 * s));
        sink = realloc(c, 0); /* frees c; NULL in glibc */
        free(a);
        free(d);
        free(e);
        free(NULL);                  /* not recorded */
        sink = malloc(SIZE_MAX / 2); /* fails: not recorded */
        void *f = check(memalign(32, 48 * s));
        void *g = check(valloc(64 * s));
        void *h = check(pvalloc(80 * s));
        void *i = check(reallocarray(NULL, 5, 9 * s));
        free(f);
        free(g);
        free(h);
        free(i);
}

struct worker {
        pthread_t th;
        size_t scale;
        pid_t tid;
};

static void *worker_run(void *arg)
{
        struct worker *w = arg;
        w->tid = gettid();
        pattern(w->scale);
        return NULL;
}

int main(int argc, char **argv)
{
        struct worker w[NTHREADS];
        for (int k = 0; k < NTHREADS; k++) {
                w[k].scale = (size_t)k + 1;
                if (pthread_create(&w[k].th, NULL, worker_run, &w[k]) != 0)
                        return 1;
        }
        pattern(10);
        for (int k = 0; k < NTHREADS; k++)
                pthread_join(w[k].th, NULL);

        pid_t child = fork();
        if (child == 0) {
                sink = malloc(777);
                free(sink);
                sink = malloc(778);
                _exit(0);
        }
        int status;
        if (child < 0 || waitpid(child, &status, 0) != child || status != 0)
                return 1;
        sink = malloc(555);

        printf("thread 10 %d\n", (int)getpid());
        for (int k = 0; k < NTHREADS; k++)
                printf("thread %zu %d\n", w[k].scale, (int)w[k].tid);
        fflush(stdout);
        if (failed)
                return 1;
        if (argc > 1 && strcmp(argv[1], "exec") == 0) {
                sink = malloc(999);
                execl("/bin/ls", "ls", "/", (char *)NULL);
                return 1;
        }
        if (argc > 1 && strcmp(argv[1], "vfork") == 0) {
                pid_t c = vfork();
                if (c == 0) {
                        execl("/bin/true", "true", (char *)NULL);
                        _exit(127);
                }
                if (c < 0 || waitpid(c, &status, 0) != c || status != 0)
                        return 1;
                sink = malloc(888);
        }
        return 0;
}
