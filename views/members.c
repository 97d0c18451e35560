/* members: the other members of a zip trace's archive as files
 * (include/tracemount.h, "the other members of an archive").
 *
 * The table is made once from the central directory: each member's stored
 * name becomes a safe path (member_path: the rule of
 * docs/formats/containers.md, "Members in the mount"), the paths are
 * sorted, and a member whose path cannot be shown or collides with
 * another's is shown as "~<index>" instead. A cursor reads a container of
 * the member's own (tm_cont_open_member), scanned once: the scan verifies
 * the member's CRC-32 and sizes and gives it a seek index, so that no byte
 * is served unverified and a read anywhere costs one restart point's
 * spacing. The table keeps the last MEMBERS_KEEP scanned containers for
 * the next opens of the same members, and the last MEMBERS_KEEP failures.
 * What a scan learnt (the member's seek index, its windows, and that its
 * CRC-32 and sizes passed) is saved in a temporary file of the table's
 * (tm_cont_index_save, up to MEMBERS_STORE bytes), so a member is
 * inflated whole once per trace: a later open past the kept ones loads
 * its index from there instead. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hmem.h"
#include "trace_obj.h"

#define MEMBERS_MAX 65536u         /* members listed, at most */
#define MEMBERS_BYTES (16u << 20)  /* bytes of their paths, at most */
#define MEMBER_PATH_MAX 1024u      /* bytes of one path, at most */
#define MEMBER_COMPONENT_MAX 255u  /* bytes of one component (NAME_MAX) */
#define MEMBERS_KEEP 8             /* scanned members kept for the next opens */
#define MEMBER_SHOW 64u            /* bytes of a stored name in a message */
#define MEMBERS_STORE (256u << 20) /* bytes of saved seek indexes, at most */

struct mem_ent {
        size_t at; /* its path: the table's arena + at */
        uint64_t index, size;
        uint64_t ix_off, ix_len; /* its saved seek index in the store (len 0: none); under mu */
};

/* A verified member's container, shared by its cursors. */
struct mem_keep {
        uint64_t index;
        struct tm_cont *c; /* NULL: the slot is free */
        unsigned refs;     /* cursors on c */
        uint64_t tick;     /* last open, for reuse of the slot */
};

struct tm_members {
        struct mem_ent *e;
        size_t n, cap;
        char *arena; /* the paths, NUL-terminated */
        size_t used, acap;
        pthread_mutex_t mu; /* keep, tick */
        struct mem_keep keep[MEMBERS_KEEP];
        uint64_t tick;
        /* the last MEMBERS_KEEP members that failed their check, so that a
         * damaged member is read once, not at every open */
        struct mem_fail {
                uint64_t index;
                struct tm_err err; /* err.code 0: unused */
        } fail[MEMBERS_KEEP];
        unsigned nfail;      /* fails made, the next one goes to fail[nfail % KEEP] */
        FILE *store;         /* the scanned members' seek indexes, or NULL; under mu */
        uint64_t store_used; /* its bytes */
};

struct tm_member {
        struct tm_trace *t;
        struct tm_members *m;
        struct mem_keep *slot; /* NULL: c is this cursor's own */
        struct tm_cont *c;
        struct tm_creader *r; /* NULL: parked by the budget (hmem.h), opened again at a read */
        uint64_t size;
        struct tm_hmem_user hm;
};

static void member_park(struct tm_hmem_user *u)
{
        struct tm_member *f = (struct tm_member *)((char *)u - offsetof(struct tm_member, hm));
        tm_creader_close(f->r);
        f->r = NULL;
}

int tm_trace_has_members(const struct tm_trace *t)
{
        return t->cont && strcmp(t->cont_name, "zip") == 0; /* a broken zip has none */
}

static const char *ent_path(const struct tm_members *m, size_t i)
{
        return m->arena + m->e[i].at;
}

/* ---- the naming rule ---- */

/* Bytes of the valid UTF-8 sequence of a non-ASCII character at p (n bytes
 * left): 2 to 4, or 0 when p does not start one. */
static size_t utf8_len(const uint8_t *p, size_t n)
{
        unsigned lo = 0x80, hi = 0xbf;
        size_t k;
        if (p[0] >= 0xc2 && p[0] <= 0xdf) {
                k = 2;
        } else if (p[0] >= 0xe0 && p[0] <= 0xef) {
                k = 3;
                lo = p[0] == 0xe0 ? 0xa0 : lo; /* no overlong forms */
                hi = p[0] == 0xed ? 0x9f : hi; /* no surrogates */
        } else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
                k = 4;
                lo = p[0] == 0xf0 ? 0x90 : lo;
                hi = p[0] == 0xf4 ? 0x8f : hi; /* at most U+10FFFF */
        } else {
                return 0;
        }
        if (n < k || p[1] < lo || p[1] > hi)
                return 0;
        for (size_t i = 2; i < k; i++)
                if ((p[i] & 0xc0) != 0x80)
                        return 0;
        return k;
}

/* Append component s (len bytes, not empty) to out (at *o of cap),
 * escaped. Returns 0, or -1 when it does not fit or is too long. */
static int put_component(const uint8_t *s, size_t len, char *out, size_t *o, size_t cap)
{
        static const char hex[] = "0123456789ABCDEF";
        int dots = (len == 1 && s[0] == '.') || (len == 2 && s[0] == '.' && s[1] == '.');
        size_t start = *o;
        for (size_t i = 0; i < len;) {
                size_t k = s[i] >= 0x80 ? utf8_len(s + i, len - i) : 0;
                int esc = dots || s[i] < 0x20 || s[i] == 0x7f || s[i] == '%' ||
                          (i == 0 && s[i] == '~') || (s[i] >= 0x80 && k == 0);
                size_t w = esc ? 3 : k ? k : 1;
                if (*o + w >= cap || *o + w - start > MEMBER_COMPONENT_MAX)
                        return -1;
                if (esc) {
                        out[(*o)++] = '%';
                        out[(*o)++] = hex[s[i] >> 4];
                        out[(*o)++] = hex[s[i] & 15];
                } else {
                        memcpy(out + *o, s + i, w);
                        *o += w;
                }
                i += esc ? 1 : w;
        }
        return 0;
}

/* The path a stored name (len bytes) shows as, into out (cap bytes, NUL-
 * terminated): its components between '/', the empty ones dropped, each
 * escaped (put_component). Returns its length, or 0 when the name has no
 * component or the path would be too long: the member is then "~<index>". */
static size_t member_path(const uint8_t *name, size_t len, char *out, size_t cap)
{
        size_t o = 0;
        for (size_t i = 0; i < len;) {
                size_t k = 0;
                while (i + k < len && name[i + k] != '/')
                        k++;
                if (k) {
                        if (o && o + 1 < cap)
                                out[o++] = '/';
                        if (put_component(name + i, k, out, &o, cap) < 0)
                                return 0;
                }
                i += k + 1;
        }
        out[o] = 0;
        return o;
}

/* ---- the table ---- */

/* What the listing passed over or renamed: the errors view's line. */
struct mem_notes {
        uint64_t renamed, unlisted;
        uint64_t first;              /* the first renamed member's index */
        const char *why;             /* and why */
        char shown[MEMBER_SHOW + 1]; /* its stored name, printable */
};

static void note_rename(struct mem_notes *nt, uint64_t index, const char *why, const uint8_t *name,
                        size_t len)
{
        if (nt->renamed++)
                return;
        nt->first = index;
        nt->why = why;
        size_t k = len < MEMBER_SHOW ? len : MEMBER_SHOW;
        for (size_t i = 0; i < k; i++)
                nt->shown[i] = name[i] >= 0x20 && name[i] < 0x7f ? (char)name[i] : '?';
        nt->shown[k] = 0;
}

/* Append path (len bytes) to the arena; its offset in *at. */
static int arena_add(struct tm_members *m, const char *path, size_t len, size_t *at)
{
        if (m->used + len + 1 > m->acap) {
                size_t cap = m->acap ? m->acap * 2 : 4096;
                while (cap < m->used + len + 1)
                        cap *= 2;
                char *a = realloc(m->arena, cap);
                if (!a)
                        return -ENOMEM;
                m->arena = a;
                m->acap = cap;
        }
        memcpy(m->arena + m->used, path, len);
        m->arena[m->used + len] = 0;
        *at = m->used;
        m->used += len + 1;
        return 0;
}

/* Show entry i as "~<index>". */
static int rename_ent(struct tm_members *m, size_t i)
{
        char s[32];
        int n = snprintf(s, sizeof s, "~%" PRIu64, m->e[i].index);
        return arena_add(m, s, (size_t)n, &m->e[i].at);
}

struct mem_build {
        struct tm_members *m;
        struct mem_notes nt;
        char path[MEMBER_PATH_MAX + 1];
};

static int build_entry(void *arg, const struct tm_cont_member *cm)
{
        struct mem_build *b = arg;
        struct tm_members *m = b->m;
        if (cm->is_raw || cm->is_dir)
                return 0;
        if (m->n >= MEMBERS_MAX || m->used + cm->name_len * 3 + 32 > MEMBERS_BYTES) {
                b->nt.unlisted++;
                return 0;
        }
        if (m->n == m->cap) {
                size_t cap = m->cap ? m->cap * 2 : 64;
                struct mem_ent *e = realloc(m->e, cap * sizeof *e);
                if (!e)
                        return -ENOMEM;
                m->e = e;
                m->cap = cap;
        }
        struct mem_ent *e = &m->e[m->n];
        *e = (struct mem_ent){.index = cm->index, .size = cm->size};
        size_t len = member_path((const uint8_t *)cm->name, cm->name_len, b->path, sizeof b->path);
        int rc = len ? arena_add(m, b->path, len, &e->at) : rename_ent(m, m->n);
        if (rc < 0)
                return rc;
        if (!len)
                note_rename(&b->nt, cm->index, "no component, or too long",
                            (const uint8_t *)cm->name, cm->name_len);
        m->n++;
        return 0;
}

static int ent_cmp(const void *a, const void *b, void *arg)
{
        const struct mem_ent *x = a, *y = b;
        const char *arena = arg;
        int c = strcmp(arena + x->at, arena + y->at);
        return c ? c : x->index < y->index ? -1 : x->index > y->index;
}

static void sort_ents(struct tm_members *m)
{
        if (m->n) /* an empty table has no array */
                qsort_r(m->e, m->n, sizeof *m->e, ent_cmp, m->arena);
}

/* The first entry whose path is not below key in byte order. */
static size_t lower_bound(const struct tm_members *m, const char *key)
{
        size_t lo = 0, hi = m->n;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (strcmp(ent_path(m, mid), key) < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo;
}

/* Does some entry's path start with dir + '/'? (dir "" : any entry) */
static int has_below(const struct tm_members *m, const char *dir)
{
        size_t n = strlen(dir);
        if (!n)
                return m->n > 0;
        char key[MEMBER_PATH_MAX + 2];
        if (n > MEMBER_PATH_MAX)
                return 0;
        memcpy(key, dir, n);
        key[n] = '/';
        key[n + 1] = 0;
        size_t i = lower_bound(m, key);
        return i < m->n && strncmp(ent_path(m, i), key, n + 1) == 0;
}

/* A path of two members, or of a member and a directory of others: the
 * later of two alike, the file beside the directory, become "~<index>"
 * (which no mapped path can be: a leading '~' is escaped). */
static int resolve_collisions(struct tm_members *m, struct mem_build *b)
{
        size_t n0 = m->n;
        unsigned char *mv = calloc(n0 ? n0 : 1, 1);
        if (!mv)
                return -ENOMEM;
        for (size_t i = 0; i < n0; i++) {
                const char *p = ent_path(m, i);
                if (p[0] == '~')
                        continue;
                if (i > 0 && strcmp(ent_path(m, i - 1), p) == 0)
                        mv[i] = 1;
                else if (has_below(m, p))
                        mv[i] = 2;
        }
        int rc = 0;
        for (size_t i = 0; i < n0 && rc == 0; i++) {
                if (!mv[i])
                        continue;
                const char *p = ent_path(m, i);
                note_rename(&b->nt, m->e[i].index,
                            mv[i] == 1 ? "the same path as another member"
                                       : "a directory of other members",
                            (const uint8_t *)p, strlen(p));
                rc = rename_ent(m, i);
        }
        free(mv);
        if (rc == 0)
                sort_ents(m);
        return rc;
}

/* The errors view's line about members not shown by their names. */
static void note_listing(struct tm_trace *t, const struct mem_notes *nt)
{
        if (!nt->renamed && !nt->unlisted)
                return;
        struct tm_err e = {.code = -EIO};
        int k = snprintf(e.msg, sizeof e.msg, "%s: zip: members/:", t->path);
        if (nt->renamed && k > 0 && (size_t)k < sizeof e.msg)
                k += snprintf(e.msg + k, sizeof e.msg - (size_t)k,
                              " %" PRIu64 " shown as ~<index> (member %" PRIu64 " \"%s\": %s)",
                              nt->renamed, nt->first, nt->shown, nt->why);
        if (nt->unlisted && k > 0 && (size_t)k < sizeof e.msg)
                snprintf(e.msg + k, sizeof e.msg - (size_t)k,
                         " %" PRIu64 " not listed (at most %u members, %u MiB of names)",
                         nt->unlisted, MEMBERS_MAX, MEMBERS_BYTES >> 20);
        tm_trace_note_err(t, &e);
}

int tm_members_open(struct tm_trace *t, struct tm_members **out, struct tm_err *err)
{
        *out = NULL;
        struct tm_members *m = calloc(1, sizeof *m);
        struct mem_build *b = calloc(1, sizeof *b);
        if (!m || !b) {
                free(m);
                free(b);
                return tm_err_set(err, -ENOMEM, "%s: out of memory", t->path);
        }
        pthread_mutex_init(&m->mu, NULL);
        b->m = m;
        int rc = 0;
        if (tm_trace_has_members(t)) {
                struct tm_cont *c;
                rc = tm_cont_open(t->fd, t->path, &c, err);
                if (rc == 0) {
                        rc = tm_cont_members(c, build_entry, b, err);
                        tm_cont_close(c);
                }
                if (rc == -ENOMEM)
                        tm_err_set(err, rc, "%s: out of memory", t->path);
        }
        if (rc == 0) {
                sort_ents(m);
                rc = resolve_collisions(m, b);
        }
        if (rc == 0)
                note_listing(t, &b->nt);
        free(b);
        if (rc < 0) {
                tm_trace_note_err(t, err);
                tm_members_close(m);
                return rc;
        }
        *out = m;
        return 0;
}

void tm_members_close(struct tm_members *m)
{
        if (!m)
                return;
        for (unsigned i = 0; i < MEMBERS_KEEP; i++)
                tm_cont_close(m->keep[i].c);
        if (m->store)
                fclose(m->store);
        pthread_mutex_destroy(&m->mu);
        free(m->e);
        free(m->arena);
        free(m);
}

/* The entry at exactly path, or -1. */
static ssize_t find_ent(const struct tm_members *m, const char *path)
{
        size_t i = lower_bound(m, path);
        return i < m->n && strcmp(ent_path(m, i), path) == 0 ? (ssize_t)i : -1;
}

int tm_members_find(const struct tm_members *m, const char *path, uint64_t *size)
{
        if (!*path)
                return 2;
        ssize_t i = find_ent(m, path);
        if (i >= 0) {
                if (size)
                        *size = m->e[i].size;
                return 1;
        }
        return has_below(m, path) ? 2 : 0;
}

int tm_members_list(const struct tm_members *m, const char *dir, tm_members_fn fn, void *arg)
{
        size_t n = strlen(dir);
        if (n && tm_members_find(m, dir, NULL) != 2)
                return -ENOENT;
        char key[MEMBER_PATH_MAX + 2], name[MEMBER_COMPONENT_MAX + 1];
        memcpy(key, dir, n);
        key[n] = n ? '/' : 0;
        key[n + 1] = 0;
        size_t skip = n ? n + 1 : 0, last = 0;
        const char *prev = NULL;
        /* the paths under dir are one run of the sorted table, and those
         * under one of its directories one run of that */
        for (size_t i = lower_bound(m, key); i < m->n; i++) {
                const char *p = ent_path(m, i);
                if (strncmp(p, key, skip) != 0)
                        break;
                const char *c = p + skip;
                size_t len = strcspn(c, "/");
                if (prev && len == last && memcmp(prev, c, len) == 0)
                        continue;
                prev = c;
                last = len;
                memcpy(name, c, len);
                name[len] = 0;
                int rc = fn(arg, name, c[len] == '/');
                if (rc)
                        return rc;
        }
        return 0;
}

/* ---- cursors ---- */

/* A new container of member e, read once whole: verified, with its seek
 * index. */
static int member_scan(struct tm_trace *t, const struct mem_ent *e, struct tm_cont **out,
                       struct tm_err *err)
{
        struct tm_cont *c;
        int rc = tm_cont_open_member(t->fd, t->path, e->index, &c, err);
        if (rc == 0 && (rc = tm_cont_scan(c, NULL, NULL, err)) != 0)
                tm_cont_close(c);
        if (rc == 0)
                *out = c;
        return rc;
}

/* Keep c, member index's verified container, in a free slot or the least
 * recently opened one without cursors, or use the one another cursor kept
 * meanwhile (c is closed then); m->mu held. Returns the slot, with one
 * more cursor, or NULL when every slot is in use (c stays the caller's).
 * *old receives what the caller closes after unlocking. */
static struct mem_keep *keep_install(struct tm_members *m, uint64_t index, struct tm_cont *c,
                                     struct tm_cont **old)
{
        struct mem_keep *s = NULL;
        *old = NULL;
        for (unsigned i = 0; i < MEMBERS_KEEP; i++) {
                struct mem_keep *k = &m->keep[i];
                if (k->c && k->index == index) { /* another cursor scanned it too */
                        s = k;
                        *old = c;
                        break;
                }
                if (k->refs == 0 && (!s || !k->c || (s->c && k->tick < s->tick)))
                        s = k;
        }
        if (s && !*old) {
                *old = s->c;
                *s = (struct mem_keep){.index = index, .c = c};
        }
        if (s) {
                s->refs++;
                s->tick = ++m->tick;
        }
        return s;
}

/* A kept verified container of member index for f, or the error a kept
 * failure of it gives; m->mu held. Returns 0 (f->c set or not) or that
 * error. */
static int keep_find(struct tm_member *f, uint64_t index, struct tm_err *err)
{
        struct tm_members *m = f->m;
        for (unsigned i = 0; i < MEMBERS_KEEP; i++) {
                struct mem_keep *k = &m->keep[i];
                if (k->c && k->index == index) {
                        k->refs++;
                        k->tick = ++m->tick;
                        f->slot = k;
                        f->c = k->c;
                        return 0;
                }
        }
        for (unsigned i = 0; i < MEMBERS_KEEP; i++)
                if (m->fail[i].err.code && m->fail[i].index == index)
                        return tm_err_set(err, m->fail[i].err.code, "%s", m->fail[i].err.msg);
        return 0;
}

/* An unlinked temporary file for the store, in $TMPDIR or /tmp; NULL
 * when none can be made (members are then scanned at each open). */
static FILE *store_open(void)
{
        const char *dir = getenv("TMPDIR");
        int fd = open(dir && *dir ? dir : "/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
        FILE *f = fd >= 0 ? fdopen(fd, "w+") : tmpfile();
        if (!f && fd >= 0)
                close(fd);
        return f;
}

/* Save c's seek index (member e's, just scanned) in the store; m->mu
 * held. Nothing is saved past MEMBERS_STORE bytes or on a failure. */
static void store_save(struct tm_members *m, struct mem_ent *e, const struct tm_cont *c)
{
        if (e->ix_len || m->store_used >= MEMBERS_STORE ||
            (!m->store && !(m->store = store_open())))
                return;
        if (fseeko(m->store, (off_t)m->store_used, SEEK_SET) != 0)
                return;
        int64_t n = tm_cont_index_save(c, m->store, NULL);
        if (n <= 0 || fflush(m->store) != 0)
                return;
        e->ix_off = m->store_used;
        e->ix_len = (uint64_t)n;
        m->store_used += (uint64_t)n;
}

/* A new container of member e with the seek index a scan saved at
 * [off, off+len) of the store: verified once, not inflated again. */
static int member_load(struct tm_trace *t, const struct tm_members *m, const struct mem_ent *e,
                       uint64_t off, uint64_t len, struct tm_cont **out, struct tm_err *err)
{
        struct tm_cont *c;
        int rc = tm_cont_open_member(t->fd, t->path, e->index, &c, err);
        if (rc == 0 && (rc = tm_cont_index_load(c, fileno(m->store), off, len, err)) != 0)
                tm_cont_close(c);
        if (rc == 0)
                *out = c;
        return rc;
}

/* The verified container of member e for f: a kept one, else one with
 * the seek index its first scan saved, else scanned now (and kept, see
 * keep_install, and its index saved). */
static int member_get(struct tm_member *f, struct mem_ent *e, struct tm_err *err)
{
        struct tm_members *m = f->m;
        struct tm_cont *c = NULL, *old = NULL;
        pthread_mutex_lock(&m->mu);
        int rc = keep_find(f, e->index, err);
        uint64_t off = e->ix_off, len = e->ix_len;
        pthread_mutex_unlock(&m->mu);
        if (f->c || rc < 0)
                return rc;
        int loaded = len && member_load(f->t, m, e, off, len, &c, err) == 0;
        if (!loaded)
                rc = member_scan(f->t, e, &c, err);
        pthread_mutex_lock(&m->mu);
        if (rc == 0 && !loaded)
                store_save(m, e, c);
        if (rc == 0)
                f->slot = keep_install(m, e->index, c, &old);
        else if (rc != -ENOMEM)
                m->fail[m->nfail++ % MEMBERS_KEEP] = (struct mem_fail){e->index, *err};
        pthread_mutex_unlock(&m->mu);
        f->c = f->slot ? f->slot->c : c;
        tm_cont_close(old);
        return rc;
}

/* Give back f's container. */
static void member_put(struct tm_member *f)
{
        if (!f->slot) {
                tm_cont_close(f->c);
                return;
        }
        pthread_mutex_lock(&f->m->mu);
        f->slot->refs--;
        pthread_mutex_unlock(&f->m->mu);
}

int tm_member_open(struct tm_trace *t, struct tm_members *m, const char *path,
                   struct tm_member **out, struct tm_err *err)
{
        struct tm_err own = {0};
        if (!err)
                err = &own; /* member_get keeps a failure's message */
        *out = NULL;
        ssize_t i = find_ent(m, path);
        if (i < 0)
                return tm_err_set(err, -ENOENT, "%s: no member %s", t->path, path);
        struct tm_member *f = calloc(1, sizeof *f);
        if (!f)
                return tm_err_set(err, -ENOMEM, "%s: out of memory", t->path);
        f->t = t;
        f->m = m;
        f->size = m->e[i].size;
        int rc = member_get(f, &m->e[i], err);
        if (rc == 0 && (rc = tm_creader_open(f->c, &f->r, err)) < 0)
                member_put(f);
        if (rc != 0) {
                free(f);
                tm_trace_note_err(t, err);
                return rc < 0 ? rc : -EIO;
        }
        tm_hmem_join(&f->hm, member_park);
        tm_hmem_begin(&f->hm);
        tm_hmem_end(&f->hm, tm_creader_mem(f->r));
        *out = f;
        return 0;
}

uint64_t tm_member_size(const struct tm_member *f)
{
        return f->size;
}

ssize_t tm_member_pread(struct tm_member *f, void *buf, size_t n, uint64_t off, struct tm_err *err)
{
        if (off >= f->size)
                return 0;
        if (n > f->size - off)
                n = (size_t)(f->size - off);
        tm_hmem_begin(&f->hm);
        int rc = f->r ? 0 : tm_creader_open(f->c, &f->r, err); /* parked */
        if (rc == 0 && tm_creader_tell(f->r) != off)
                rc = tm_creader_seek(f->r, off, err);
        ssize_t got = rc < 0 ? rc : tm_creader_read_full(f->r, buf, n, err);
        tm_hmem_end(&f->hm, f->r ? tm_creader_mem(f->r) : 0);
        if (got < 0)
                tm_trace_note_err(f->t, err);
        return got;
}

void tm_member_close(struct tm_member *f)
{
        if (!f)
                return;
        tm_hmem_leave(&f->hm); /* first: then no other thread parks f */
        tm_creader_close(f->r);
        member_put(f);
        free(f);
        tm_hmem_trim();
}
