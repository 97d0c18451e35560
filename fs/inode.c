#include "inode.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* One id: chained in two hash tables, by path and by id. */
struct ino_node {
        uint64_t ino;
        uint64_t nlookup;
        uint64_t obj_dev, obj_ino; /* the source object last told (ino_set_object) */
        struct stat told;          /* the attributes last told (obj_set) */
        uint64_t ver;              /* the version of the archive (ino_ref_ver) */
        int obj_set;
        int retired; /* another version has the path: in the id table only */
        struct ino_node *by_path, *by_ino;
        char path[]; /* NUL-terminated */
};

static struct {
        pthread_mutex_t mu;
        struct ino_node **path_tab, **ino_tab;
        size_t nb;    /* buckets in each table, a power of two */
        size_t count; /* nodes, root excluded */
        uint64_t next;
} T = {.mu = PTHREAD_MUTEX_INITIALIZER};

#define INO_NB_MIN 1024u

static size_t ino_hash_path(const char *p)
{
        uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
        for (; *p; p++)
                h = (h ^ (unsigned char)*p) * 0x100000001b3ull;
        return (size_t)(h ^ h >> 32);
}

static size_t ino_hash_id(uint64_t ino)
{
        return (size_t)(ino * 0x9e3779b97f4a7c15ull >> 20);
}

/* Chain n into both tables of nb buckets (a retired n into the id table
 * only). */
static void ino_link(struct ino_node **pt, struct ino_node **it, size_t nb, struct ino_node *n)
{
        size_t a = ino_hash_path(n->path) & (nb - 1), b = ino_hash_id(n->ino) & (nb - 1);
        if (!n->retired) {
                n->by_path = pt[a];
                pt[a] = n;
        }
        n->by_ino = it[b];
        it[b] = n;
}

/* Double the tables when they hold more nodes than buckets (a failed
 * allocation keeps the old ones: longer chains, still correct). Under mu. */
static void ino_grow(void)
{
        if (T.count < T.nb)
                return;
        size_t nb = T.nb * 2;
        struct ino_node **pt = calloc(nb, sizeof *pt), **it = calloc(nb, sizeof *it);
        if (!pt || !it) {
                free(pt);
                free(it);
                return;
        }
        for (size_t i = 0; i < T.nb; i++)
                for (struct ino_node *n = T.ino_tab[i], *next; n; n = next) {
                        next = n->by_ino;
                        ino_link(pt, it, nb, n);
                }
        free(T.path_tab);
        free(T.ino_tab);
        T.path_tab = pt;
        T.ino_tab = it;
        T.nb = nb;
}

static struct ino_node *ino_new(const char *path, uint64_t ino)
{
        size_t len = strlen(path);
        struct ino_node *n = malloc(sizeof *n + len + 1);
        if (!n)
                return NULL;
        memcpy(n->path, path, len + 1);
        n->ino = ino;
        n->nlookup = 0;
        n->obj_set = 0;
        n->ver = 0;
        n->retired = 0;
        return n;
}

int ino_init(void)
{
        T.nb = INO_NB_MIN;
        T.path_tab = calloc(T.nb, sizeof *T.path_tab);
        T.ino_tab = calloc(T.nb, sizeof *T.ino_tab);
        struct ino_node *root = ino_new("/", INO_ROOT);
        if (!T.path_tab || !T.ino_tab || !root) {
                free(root);
                ino_fini();
                return -ENOMEM;
        }
        ino_link(T.path_tab, T.ino_tab, T.nb, root);
        T.count = 0;
        T.next = INO_ROOT + 1;
        return 0;
}

void ino_fini(void)
{
        for (size_t i = 0; T.ino_tab && i < T.nb; i++)
                for (struct ino_node *n = T.ino_tab[i], *next; n; n = next) {
                        next = n->by_ino;
                        free(n);
                }
        free(T.path_tab);
        free(T.ino_tab);
        T.path_tab = T.ino_tab = NULL;
        T.nb = T.count = 0;
}

static struct ino_node *ino_find_id(uint64_t ino)
{
        struct ino_node *n = T.ino_tab[ino_hash_id(ino) & (T.nb - 1)];
        while (n && n->ino != ino)
                n = n->by_ino;
        return n;
}

int ino_path(uint64_t ino, char *buf, size_t n)
{
        pthread_mutex_lock(&T.mu);
        struct ino_node *node = ino_find_id(ino);
        int rc = -ENOENT;
        if (node) {
                size_t len = strlen(node->path);
                rc = len < n ? 0 : -ENAMETOOLONG;
                if (rc == 0)
                        memcpy(buf, node->path, len + 1);
        }
        pthread_mutex_unlock(&T.mu);
        return rc;
}

/* Unchain n from the bucket at *head (following link). */
static void ino_unchain(struct ino_node **head, struct ino_node *n, int by_path)
{
        while (*head != n)
                head = by_path ? &(*head)->by_path : &(*head)->by_ino;
        *head = by_path ? n->by_path : n->by_ino;
}

/* n's path is another version's now: n leaves the path table; it goes
 * when the kernel forgets it. Under mu. */
static void ino_retire(struct ino_node *n)
{
        ino_unchain(&T.path_tab[ino_hash_path(n->path) & (T.nb - 1)], n, 1);
        n->retired = 1;
        if (n->nlookup == 0) {
                ino_unchain(&T.ino_tab[ino_hash_id(n->ino) & (T.nb - 1)], n, 0);
                T.count--;
                free(n);
        }
}

uint64_t ino_ref_ver(const char *path, uint64_t ver)
{
        pthread_mutex_lock(&T.mu);
        struct ino_node *n = T.path_tab[ino_hash_path(path) & (T.nb - 1)];
        while (n && strcmp(n->path, path) != 0)
                n = n->by_path;
        if (n && n->ver != ver && n->ino != INO_ROOT) {
                ino_retire(n);
                n = NULL;
        }
        if (!n && (n = ino_new(path, T.next)) != NULL) {
                T.next++;
                n->ver = ver;
                ino_link(T.path_tab, T.ino_tab, T.nb, n);
                T.count++;
                ino_grow();
        }
        uint64_t ino = 0;
        if (n) {
                n->nlookup++;
                ino = n->ino;
        }
        pthread_mutex_unlock(&T.mu);
        return ino;
}

uint64_t ino_ref(const char *path)
{
        return ino_ref_ver(path, 0);
}

int ino_same_version(uint64_t ino, uint64_t ver)
{
        pthread_mutex_lock(&T.mu);
        struct ino_node *n = ino_find_id(ino);
        int rc = !n ? -ENOENT : n->ino == INO_ROOT || n->ver == ver;
        pthread_mutex_unlock(&T.mu);
        return rc;
}

void ino_forget(uint64_t ino, uint64_t k)
{
        if (ino == INO_ROOT)
                return;
        pthread_mutex_lock(&T.mu);
        struct ino_node *n = ino_find_id(ino);
        if (n) {
                n->nlookup = k < n->nlookup ? n->nlookup - k : 0;
                if (n->nlookup == 0) {
                        if (!n->retired)
                                ino_unchain(&T.path_tab[ino_hash_path(n->path) & (T.nb - 1)], n, 1);
                        ino_unchain(&T.ino_tab[ino_hash_id(ino) & (T.nb - 1)], n, 0);
                        T.count--;
                        free(n);
                }
        }
        pthread_mutex_unlock(&T.mu);
}

void ino_set_object(uint64_t ino, const struct stat *st)
{
        pthread_mutex_lock(&T.mu);
        struct ino_node *n = ino_find_id(ino);
        if (n) {
                n->obj_dev = (uint64_t)st->st_dev;
                n->obj_ino = (uint64_t)st->st_ino;
                n->told = *st;
                n->obj_set = 1;
        }
        pthread_mutex_unlock(&T.mu);
}

int ino_told_attr(uint64_t ino, struct stat *st)
{
        pthread_mutex_lock(&T.mu);
        struct ino_node *n = ino_find_id(ino);
        int rc = !n ? -ENOENT : n->obj_set;
        if (rc == 1)
                *st = n->told;
        pthread_mutex_unlock(&T.mu);
        return rc;
}

int ino_same_object(uint64_t ino, uint64_t dev, uint64_t obj)
{
        pthread_mutex_lock(&T.mu);
        struct ino_node *n = ino_find_id(ino);
        int rc = !n ? -ENOENT : !n->obj_set || (n->obj_dev == dev && n->obj_ino == obj);
        pthread_mutex_unlock(&T.mu);
        return rc;
}

int ino_told_size(uint64_t ino, uint64_t *size)
{
        struct stat st;
        int rc = ino_told_attr(ino, &st);
        if (rc == 1)
                *size = (uint64_t)st.st_size;
        return rc;
}

/* Is p path itself or below it (path absolute, "/" holding everything)? */
static int ino_is_under(const char *p, const char *path, size_t len)
{
        if (len == 1)
                return 1;
        return strncmp(p, path, len) == 0 && (p[len] == '\0' || p[len] == '/');
}

size_t ino_under(const char *path, uint64_t *ids, size_t max)
{
        size_t len = strlen(path), k = 0;
        pthread_mutex_lock(&T.mu);
        for (size_t b = 0; b < T.nb; b++)
                for (const struct ino_node *n = T.ino_tab[b]; n; n = n->by_ino)
                        if (ino_is_under(n->path, path, len)) {
                                if (k < max)
                                        ids[k] = n->ino;
                                k++;
                        }
        pthread_mutex_unlock(&T.mu);
        return k;
}

size_t ino_count(void)
{
        pthread_mutex_lock(&T.mu);
        size_t c = T.count;
        pthread_mutex_unlock(&T.mu);
        return c;
}
