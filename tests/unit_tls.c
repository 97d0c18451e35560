/* Per-thread buffers made on first use (codecs/common/tm_tls.h): a thread
 * gets the same buffer until it lets go of it, threads get their own, a
 * thread's buffers are freed when it ends or releases them (so an idle
 * FUSE worker holds none: issue 33's RSS after the handles close), and a
 * program that asks for more slots than there are gets NULL, not another
 * slot's buffer. */
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "codecs/common/tm_tls.h"

#define BIG (4u << 20) /* mapped apart by malloc: mallinfo2's hblkhd sees it */

/* Under AddressSanitizer malloc is its own and mallinfo2 counts nothing:
 * there LeakSanitizer checks the frees at the end instead. */
#ifdef __SANITIZE_ADDRESS__
#define MAPPED() ((size_t)0)
#define COUNTS 0
#else
#define MAPPED() mallinfo2().hblkhd
#define COUNTS 1
#endif

static struct tm_tls small_slot = TM_TLS_INIT(4096);
static struct tm_tls big_slot = TM_TLS_INIT(BIG);

static void test_same_until_released(void **state)
{
        (void)state;
        uint8_t *a = tm_tls_get(&small_slot);
        assert_non_null(a);
        memset(a, 0xab, 4096);
        assert_ptr_equal(tm_tls_get(&small_slot), a);
        assert_int_equal(a[4095], 0xab); /* as the thread left it */
        uint8_t *b = tm_tls_get(&big_slot);
        assert_non_null(b);
        assert_ptr_not_equal(a, b);
        size_t mapped = MAPPED();
        tm_tls_release();
        if (COUNTS)
                assert_true(MAPPED() + BIG <= mapped); /* the big one is gone */
        uint8_t *c = tm_tls_get(&big_slot);
        assert_non_null(c);
        memset(c, 1, BIG); /* whole and writable */
        tm_tls_release();
}

struct seen {
        void *buf;
        size_t mapped_with; /* hblkhd while the thread held its big buffer */
};

static void *thread_main(void *arg)
{
        struct seen *s = arg;
        s->buf = tm_tls_get(&big_slot);
        if (s->buf)
                memset(s->buf, 2, BIG);
        s->mapped_with = MAPPED();
        return NULL;
}

static void test_threads_own_and_free(void **state)
{
        (void)state;
        void *mine = tm_tls_get(&big_slot);
        assert_non_null(mine);
        size_t before = MAPPED();
        struct seen s = {0};
        pthread_t th;
        assert_int_equal(pthread_create(&th, NULL, thread_main, &s), 0);
        assert_int_equal(pthread_join(th, NULL), 0);
        assert_non_null(s.buf);
        assert_ptr_not_equal(s.buf, mine);
        if (COUNTS) {
                assert_true(s.mapped_with >= before + BIG);
                assert_true(MAPPED() <= before); /* freed when the thread ended */
        }
        assert_ptr_equal(tm_tls_get(&big_slot), mine);
        tm_tls_release();
}

static void test_slots_run_out(void **state)
{
        (void)state;
        /* two slots above are numbered; the library's own may be too */
        static struct tm_tls more[TM_TLS_SLOTS + 1];
        void *got[TM_TLS_SLOTS + 1];
        int ok = 0, refused = 0;
        for (int i = 0; i <= TM_TLS_SLOTS; i++) {
                more[i] = (struct tm_tls)TM_TLS_INIT(64 + (size_t)i);
                got[i] = tm_tls_get(&more[i]);
                if (got[i]) {
                        memset(got[i], i, 64 + (size_t)i);
                        ok++;
                } else {
                        refused++;
                }
        }
        assert_true(refused >= 3); /* at most TM_TLS_SLOTS - 2 of them had a slot */
        assert_true(ok <= TM_TLS_SLOTS - 2);
        for (int i = 0; i <= TM_TLS_SLOTS; i++) {
                if (!got[i])
                        continue;
                assert_ptr_equal(tm_tls_get(&more[i]), got[i]); /* still its own */
                for (int j = 0; j < 64 + i; j++)
                        assert_int_equal(((uint8_t *)got[i])[j], (uint8_t)i);
        }
        tm_tls_release();
}

int main(void)
{
        /* as the daemon (fs/main.c): large buffers always mapped apart,
         * never from an arena after glibc raised its threshold */
        mallopt(M_MMAP_THRESHOLD, 128 * 1024);
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_same_until_released),
            cmocka_unit_test(test_threads_own_and_free),
            cmocka_unit_test(test_slots_run_out),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
