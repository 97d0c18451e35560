#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "bdi.h"

/* Undo mountinfo's octal escapes (\040 for a space, ...) in place. */
static void bdi_unescape(char *s)
{
        char *o = s;
        for (; *s; s++) {
                if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
                    s[3] >= '0' && s[3] <= '7') {
                        *o++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 | (s[3] - '0'));
                        s += 3;
                } else {
                        *o++ = *s;
                }
        }
        *o = '\0';
}

int bdi_find_dev(const char *mountinfo, const char *mnt, char *dev, size_t n)
{
        FILE *f = fopen(mountinfo, "r");
        if (!f)
                return -1;
        char line[8192];
        int found = -1;
        /* id parent MAJ:MIN root mountpoint options ... */
        while (fgets(line, sizeof line, f)) {
                char d[64], point[4096];
                if (sscanf(line, "%*s %*s %63s %*s %4095s", d, point) != 2)
                        continue;
                bdi_unescape(point);
                if (strcmp(point, mnt) == 0 && strlen(d) < n) {
                        strcpy(dev, d);
                        found = 0;
                }
        }
        fclose(f);
        return found;
}

int bdi_set_read_ahead(const char *mnt, unsigned kb)
{
        char dev[64], path[128];
        if (bdi_find_dev("/proc/self/mountinfo", mnt, dev, sizeof dev) < 0)
                return -ENOENT;
        snprintf(path, sizeof path, "/sys/class/bdi/%s/read_ahead_kb", dev);
        FILE *f = fopen(path, "w");
        if (!f)
                return -errno;
        int ok = fprintf(f, "%u\n", kb) > 0;
        ok = fclose(f) == 0 && ok;
        return ok ? 0 : -EIO;
}
