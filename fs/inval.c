/* inval: see inval.h. */
#include "inval.h"

#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "inode.h"

/* Paths waiting for the thread; one more is merged into "/". */
#define INVAL_QUEUE 16

static struct {
        pthread_mutex_t mu;
        pthread_cond_t cv;
        struct fuse_session *se;
        int running, stop;
        pthread_t th;
        unsigned count;
        char q[INVAL_QUEUE][PATH_MAX];
} inval = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

/* Tell the kernel to drop the attributes and pages of every id below
 * mpath. */
static void inval_send(const char *mpath)
{
        uint64_t few[64], *ids = few;
        size_t cap = 64, n = ino_under(mpath, few, cap);
        if (n > cap && (ids = malloc(n * sizeof *ids)) != NULL) {
                cap = n;
                n = ino_under(mpath, ids, cap);
        } else if (n > cap) {
                ids = few; /* out of memory: the first ones */
        }
        for (size_t i = 0; i < n && i < cap; i++)
                /* -ENOENT when the kernel has forgotten the node: nothing
                 * of it is cached then */
                (void)fuse_lowlevel_notify_inval_inode(inval.se, ids[i], 0, 0);
        if (ids != few)
                free(ids);
}

static void *inval_main(void *arg)
{
        (void)arg;
        static char path[PATH_MAX];
        pthread_mutex_lock(&inval.mu);
        for (;;) {
                while (!inval.stop && inval.count == 0)
                        pthread_cond_wait(&inval.cv, &inval.mu);
                if (inval.stop)
                        break;
                inval.count--;
                memcpy(path, inval.q[inval.count], sizeof path);
                pthread_mutex_unlock(&inval.mu);
                inval_send(path);
                pthread_mutex_lock(&inval.mu);
        }
        pthread_mutex_unlock(&inval.mu);
        return NULL;
}

int inval_start(struct fuse_session *se)
{
        inval.se = se;
        inval.stop = 0;
        inval.count = 0;
        int rc = pthread_create(&inval.th, NULL, inval_main, NULL);
        if (rc != 0)
                return -rc;
        (void)pthread_setname_np(inval.th, "tm-inval");
        pthread_mutex_lock(&inval.mu);
        inval.running = 1;
        pthread_mutex_unlock(&inval.mu);
        return 0;
}

void inval_stop(void)
{
        pthread_mutex_lock(&inval.mu);
        const int running = inval.running;
        inval.running = 0;
        inval.stop = 1;
        pthread_cond_signal(&inval.cv);
        pthread_mutex_unlock(&inval.mu);
        if (running)
                pthread_join(inval.th, NULL);
}

void inval_note(const char *mpath)
{
        if (strlen(mpath) >= PATH_MAX)
                mpath = "/";
        pthread_mutex_lock(&inval.mu);
        int queued = !inval.running;
        for (unsigned i = 0; i < inval.count && !queued; i++)
                queued = strcmp(inval.q[i], mpath) == 0 || strcmp(inval.q[i], "/") == 0;
        if (!queued) {
                if (inval.count == INVAL_QUEUE)
                        strcpy(inval.q[--inval.count], "/"); /* the last one merged: all */
                else
                        strcpy(inval.q[inval.count], mpath);
                inval.count++;
                pthread_cond_signal(&inval.cv);
        }
        pthread_mutex_unlock(&inval.mu);
}
