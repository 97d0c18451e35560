/* Per-thread buffers made on first use (tm_tls.h). */
#include "tm_tls.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

_Thread_local void *tm_tls_bufs[TM_TLS_SLOTS];

static pthread_mutex_t tls_lock = PTHREAD_MUTEX_INITIALIZER;
static int tls_used;          /* slots numbered so far */
static pthread_key_t tls_key; /* its destructor frees a thread's buffers */
static pthread_once_t tls_once = PTHREAD_ONCE_INIT;
static int tls_key_ok;

/* At a thread's end (the key's value is the thread's table). */
static void tls_free(void *table)
{
        void **b = table;
        for (int i = 0; i < TM_TLS_SLOTS; i++) {
                free(b[i]);
                b[i] = NULL;
        }
}

void tm_tls_release(void)
{
        tls_free(tm_tls_bufs);
}

static void tls_start(void)
{
        tls_key_ok = pthread_key_create(&tls_key, tls_free) == 0;
}

/* The slot's number, given once under the lock; 0 when none is left. */
static int tls_number(struct tm_tls *s)
{
        int id = __atomic_load_n(&s->id, __ATOMIC_ACQUIRE);
        if (id > 0)
                return id;
        pthread_mutex_lock(&tls_lock);
        id = s->id;
        if (id == 0) {
                if (tls_used < TM_TLS_SLOTS) {
                        id = ++tls_used;
                        __atomic_store_n(&s->id, id, __ATOMIC_RELEASE);
                } else {
                        static int told;
                        id = -1;
                        s->id = -1;
                        if (!told++)
                                fprintf(stderr,
                                        "tracemount: more than %d per-thread buffers "
                                        "(TM_TLS_SLOTS)\n",
                                        TM_TLS_SLOTS);
                }
        }
        pthread_mutex_unlock(&tls_lock);
        return id > 0 ? id : 0;
}

void *tm_tls_slow(struct tm_tls *s)
{
        pthread_once(&tls_once, tls_start);
        int id = tls_number(s);
        if (!id || !tls_key_ok)
                return NULL;
        void *b = malloc(s->size);
        if (!b)
                return NULL;
        /* the key's value names this thread's table, so that its
         * destructor runs at the thread's end */
        if (pthread_setspecific(tls_key, tm_tls_bufs) != 0) {
                free(b);
                return NULL;
        }
        tm_tls_bufs[id - 1] = b;
        return b;
}
