#include "cachepath.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *base_name(const char *p)
{
        const char *s = strrchr(p, '/');
        return s ? s + 1 : p;
}

char *tm_cachepath_beside(const char *abs_path)
{
        const char *base = base_name(abs_path);
        int dirlen = (int)(base - abs_path);
        char *out = NULL;
        if (asprintf(&out, "%.*s.%s.tmidx", dirlen, abs_path, base) < 0)
                return NULL;
        return out;
}

static uint64_t fnv1a64(const char *s)
{
        uint64_t h = 0xcbf29ce484222325ull;
        for (; *s; s++) {
                h ^= (uint8_t)*s;
                h *= 0x100000001b3ull;
        }
        return h;
}

char *tm_cachepath_own(const char *cache_path)
{
        size_t n = strlen(cache_path);
        const size_t sfx = sizeof ".tmidx" - 1;
        if (n >= sfx && strcmp(cache_path + n - sfx, ".tmidx") == 0)
                n -= sfx;
        char *out = NULL;
        if (asprintf(&out, "%.*s.u%u.tmidx", (int)n, cache_path, (unsigned)geteuid()) < 0)
                return NULL;
        return out;
}

char *tm_cachepath_dir(const char *cache_dir)
{
        char *dir = NULL;
        const char *xdg = getenv("XDG_CACHE_HOME");
        const char *home = getenv("HOME");
        int k;
        if (cache_dir && *cache_dir)
                k = asprintf(&dir, "%s", cache_dir);
        else if (xdg && *xdg == '/')
                k = asprintf(&dir, "%s/tracemount", xdg);
        else if (home && *home)
                k = asprintf(&dir, "%s/.cache/tracemount", home);
        else
                return NULL;
        return k < 0 ? NULL : dir;
}

char *tm_cachepath_cache(const char *cache_dir, const char *abs_path, char **dir_out)
{
        char *dir = tm_cachepath_dir(cache_dir);
        if (!dir)
                return NULL;
        char *out = NULL;
        if (asprintf(&out, "%s/%016" PRIx64 "-%s.tmidx", dir, fnv1a64(abs_path),
                     base_name(abs_path)) < 0)
                out = NULL;
        if (dir_out && out)
                *dir_out = dir;
        else
                free(dir);
        return out;
}

/* The mode of a new directory under one with stat parent: shared with the
 * group as the parent is (setgid and group-writable: 03775, sticky so that
 * a member replaces only their own files, so a lab's cache directory stays
 * shared below it, docs/shared-cache.md), else 0755. */
static mode_t child_mode(const struct stat *parent)
{
        return (parent->st_mode & (S_ISGID | S_IWGRP)) == (S_ISGID | S_IWGRP) ? 03775 : 0755;
}

int tm_cachepath_mkdirs(const char *dir)
{
        char *p = strdup(dir);
        if (!p)
                return -ENOMEM;
        int rc = 0;
        struct stat parent = {.st_mode = 0};
        if (stat(*p == '/' ? "/" : ".", &parent) < 0)
                parent.st_mode = 0;
        for (char *s = p + 1;; s++) {
                if (*s != '/' && *s != 0)
                        continue;
                char c = *s;
                *s = 0;
                mode_t mode = child_mode(&parent);
                if (mkdir(p, mode) == 0) {
                        if (mode != 0755) /* past the umask */
                                chmod(p, mode);
                } else if (errno != EEXIST) {
                        rc = -errno;
                        break;
                }
                if (stat(p, &parent) < 0) {
                        rc = -errno;
                        break;
                }
                *s = c;
                if (!c)
                        break;
        }
        if (rc == 0 && !S_ISDIR(parent.st_mode))
                rc = -ENOTDIR;
        free(p);
        return rc;
}

int tm_cachepath_open(const char *dir, int make)
{
        int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0 && errno == ENOENT && make) {
                int rc = tm_cachepath_mkdirs(dir);
                if (rc < 0)
                        return rc;
                fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        }
        return fd < 0 ? -errno : fd;
}
