/* The program behind the heap fixtures of tests/unit_heapin.c: a fixed
 * sequence of heap calls whose sizes the test knows. record.sh runs it
 * under glibc's mtrace and under heaptrack. No stdio: its buffers would
 * be allocations of their own. Build with -O0 so that no call is folded.
 *
 *   1  a = malloc(17)
 *   2  a = realloc(a, 4000)      moves (glibc has no room after the chunk)
 *   3  b = calloc(3, 8)          24 bytes
 *   4  c = realloc(NULL, 100)    glibc's mtrace and heaptrack: an alloc
 *   5  c = realloc(c, 50)        shrinks in place
 *   6  free(a)
 *   7  d = malloc(0); free(d)
 *   8  realloc(b, 0)             frees b; mtrace: '-', heaptrack: nothing
 *   9  malloc(1 << 62)           fails; mtrace: '+ (nil)', heaptrack: nothing
 *  10  g = aligned_alloc(64, 128); free(g)
 *  11  posix_memalign(&h, 32, 48); free(h)
 *  -- 60 ms pause, so that heaptrack's clock (10 ms ticks) moves --
 *  12  realloc(c, 1 << 62)       fails, c stays; mtrace: '!', heaptrack: nothing
 *  13  free(c)
 *  14  free(NULL)                neither logs it
 *  15  s = strdup("hello"); free(s)   6 bytes, called from libc
 *  16  malloc(33)                never freed */
#include <malloc.h>
#include <mcheck.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void pause_ms(long ms)
{
        struct timespec ts = {.tv_sec = 0, .tv_nsec = ms * 1000000L};
        nanosleep(&ts, NULL);
}

int main(void)
{
        mtrace(); /* a no-op unless MALLOC_TRACE is set and libc_malloc_debug loaded */
        char *a = malloc(17);
        a = realloc(a, 4000);
        char *b = calloc(3, 8);
        char *c = realloc(NULL, 100);
        c = realloc(c, 50);
        free(a);
        char *d = malloc(0);
        free(d);
        void *e = realloc(b, 0);
        void *f = malloc((size_t)1 << 62);
        void *g = aligned_alloc(64, 128);
        free(g);
        void *h = NULL;
        if (posix_memalign(&h, 32, 48) == 0)
                free(h);
        pause_ms(60);
        void *r = realloc(c, (size_t)1 << 62);
        free(c);
        free(NULL);
        char *s = strdup("hello");
        free(s);
        void *leak = malloc(33);
        muntrace();
        /* keep the results visibly used */
        return (e != NULL) + (f != NULL) + (r != NULL) + (leak == NULL);
}
