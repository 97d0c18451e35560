#include "cachepath.h"

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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

char *tm_cachepath_cache(const char *cache_dir, const char *abs_path, char **dir_out)
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
        if (k < 0)
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

int tm_cachepath_mkdirs(const char *dir)
{
        char *p = strdup(dir);
        if (!p)
                return -ENOMEM;
        int rc = 0;
        for (char *s = p + 1;; s++) {
                if (*s != '/' && *s != 0)
                        continue;
                char c = *s;
                *s = 0;
                if (mkdir(p, 0755) < 0 && errno != EEXIST) {
                        rc = -errno;
                        break;
                }
                *s = c;
                if (!c)
                        break;
        }
        free(p);
        return rc;
}
