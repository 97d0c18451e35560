#include "hmem.h"

#include "../include/tracemount.h"

#include <malloc.h>
#include <pthread.h>
#include <time.h>

static struct {
        pthread_mutex_t lock;
        uint64_t budget; /* 0: TM_HMEM_DEFAULT */
        uint64_t in_use; /* users' bytes and taken bytes */
        uint64_t parks;
        struct tm_hmem_user *head, *tail; /* users holding bytes, least recent first */
        uint64_t trimmed_ns;              /* CLOCK_MONOTONIC of the last trim */
        int trim_pending;                 /* a trim was asked for before it was due */
} pool = {.lock = PTHREAD_MUTEX_INITIALIZER};

void tm_hmem_set_budget(uint64_t bytes)
{
        pthread_mutex_lock(&pool.lock);
        pool.budget = bytes;
        pthread_mutex_unlock(&pool.lock);
}

static uint64_t budget_locked(void)
{
        return pool.budget ? pool.budget : TM_HMEM_DEFAULT;
}

uint64_t tm_hmem_budget(void)
{
        pthread_mutex_lock(&pool.lock);
        uint64_t b = budget_locked();
        pthread_mutex_unlock(&pool.lock);
        return b;
}

uint64_t tm_hmem_in_use(void)
{
        pthread_mutex_lock(&pool.lock);
        uint64_t n = pool.in_use;
        pthread_mutex_unlock(&pool.lock);
        return n;
}

uint64_t tm_hmem_parks(void)
{
        pthread_mutex_lock(&pool.lock);
        uint64_t n = pool.parks;
        pthread_mutex_unlock(&pool.lock);
        return n;
}

static void unlink_locked(struct tm_hmem_user *u)
{
        if (!u->listed)
                return;
        if (u->prev)
                u->prev->next = u->next;
        else
                pool.head = u->next;
        if (u->next)
                u->next->prev = u->prev;
        else
                pool.tail = u->prev;
        u->prev = u->next = NULL;
        u->listed = 0;
}

static void append_locked(struct tm_hmem_user *u)
{
        u->prev = pool.tail;
        u->next = NULL;
        if (pool.tail)
                pool.tail->next = u;
        else
                pool.head = u;
        pool.tail = u;
        u->listed = 1;
}

/* u holds bytes now; pool lock held. */
static void set_locked(struct tm_hmem_user *u, uint64_t bytes)
{
        pool.in_use = pool.in_use - u->bytes + bytes;
        u->bytes = bytes;
        unlink_locked(u);
        if (bytes)
                append_locked(u); /* the most recent */
}

/* Park u (its mu held by the caller); pool lock held. */
static void park_locked(struct tm_hmem_user *u)
{
        u->park(u);
        set_locked(u, 0);
        pool.parks++;
}

/* Park idle users other than self, least recent first, until want more
 * bytes fit in the budget; pool lock held. */
static void make_room_locked(const struct tm_hmem_user *self, uint64_t want)
{
        uint64_t budget = budget_locked();
        struct tm_hmem_user *u = pool.head;
        while (u && pool.in_use + want > budget) {
                struct tm_hmem_user *next = u->next;
                if (u != self && pthread_mutex_trylock(&u->mu) == 0) {
                        park_locked(u);
                        pthread_mutex_unlock(&u->mu);
                }
                u = next;
        }
}

void tm_hmem_join(struct tm_hmem_user *u, void (*park)(struct tm_hmem_user *u))
{
        pthread_mutex_init(&u->mu, NULL);
        u->bytes = 0;
        u->prev = u->next = NULL;
        u->listed = 0;
        u->park = park;
}

void tm_hmem_leave(struct tm_hmem_user *u)
{
        pthread_mutex_lock(&pool.lock);
        set_locked(u, 0);
        pthread_mutex_unlock(&pool.lock);
        pthread_mutex_destroy(&u->mu);
}

void tm_hmem_begin(struct tm_hmem_user *u)
{
        pthread_mutex_lock(&u->mu);
}

int tm_hmem_end(struct tm_hmem_user *u, uint64_t bytes)
{
        pthread_mutex_lock(&pool.lock);
        set_locked(u, bytes);
        make_room_locked(u, 0);
        int parked = pool.in_use > budget_locked() && u->bytes;
        if (parked)
                park_locked(u);
        pthread_mutex_unlock(&pool.lock);
        pthread_mutex_unlock(&u->mu);
        return parked;
}

int tm_hmem_take(uint64_t n)
{
        pthread_mutex_lock(&pool.lock);
        make_room_locked(NULL, n);
        int ok = pool.in_use + n <= budget_locked();
        if (ok)
                pool.in_use += n;
        pthread_mutex_unlock(&pool.lock);
        return ok ? 0 : -1;
}

void tm_hmem_give(uint64_t n)
{
        pthread_mutex_lock(&pool.lock);
        pool.in_use -= n;
        pthread_mutex_unlock(&pool.lock);
        tm_hmem_trim();
}

void tm_handle_memory_set(uint64_t bytes)
{
        tm_hmem_set_budget(bytes);
}

uint64_t tm_handle_memory_in_use(void)
{
        return tm_hmem_in_use();
}

void tm_memory_trim(void)
{
        tm_hmem_trim();
}

static uint64_t hmem_now(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* When the next trim may run (under the pool's lock): a second after the
 * last, or 50 ms after it once nothing is held. */
static uint64_t trim_due_locked(void)
{
        return pool.trimmed_ns + (pool.in_use == 0 ? 50000000u : 1000000000u);
}

/* The trimmer: a trim asked for before it was due runs when it is, so
 * that the last closes of a burst are returned too (the thread is made
 * at the first such request and waits on trim_cv for the next). */
static pthread_cond_t trim_cv;
static pthread_once_t trim_once = PTHREAD_ONCE_INIT;
static int trim_thread_ok;

static void *trim_main(void *arg)
{
        (void)arg;
        pthread_setname_np(pthread_self(), "tm-trim");
        pthread_mutex_lock(&pool.lock);
        for (;;) {
                while (!pool.trim_pending)
                        pthread_cond_wait(&trim_cv, &pool.lock);
                uint64_t due = trim_due_locked(), now = hmem_now();
                if (now < due) {
                        struct timespec ts = {.tv_sec = (time_t)(due / 1000000000u),
                                              .tv_nsec = (long)(due % 1000000000u)};
                        pthread_cond_timedwait(&trim_cv, &pool.lock, &ts);
                        continue;
                }
                pool.trim_pending = 0;
                pool.trimmed_ns = now;
                pthread_mutex_unlock(&pool.lock);
                malloc_trim(0);
                pthread_mutex_lock(&pool.lock);
        }
        return NULL;
}

static void trim_start(void)
{
        pthread_condattr_t ca;
        pthread_condattr_init(&ca);
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
        pthread_cond_init(&trim_cv, &ca);
        pthread_condattr_destroy(&ca);
        pthread_attr_t at;
        pthread_attr_init(&at);
        pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
        pthread_attr_setstacksize(&at, 64 << 10);
        pthread_t th;
        trim_thread_ok = pthread_create(&th, &at, trim_main, NULL) == 0;
        pthread_attr_destroy(&at);
}

void tm_hmem_trim(void)
{
        uint64_t now = hmem_now();
        pthread_mutex_lock(&pool.lock);
        int due = now >= trim_due_locked();
        if (due) {
                pool.trimmed_ns = now;
                pool.trim_pending = 0;
        }
        pthread_mutex_unlock(&pool.lock);
        if (due) {
                malloc_trim(0);
                return;
        }
        pthread_once(&trim_once, trim_start);
        if (!trim_thread_ok)
                return;
        pthread_mutex_lock(&pool.lock);
        pool.trim_pending = 1;
        pthread_cond_signal(&trim_cv);
        pthread_mutex_unlock(&pool.lock);
}
