/* A small real workload for the heap-trace tests: reads lines, keeps them
 * in a growing array (realloc), copies them (strdup), sorts them, builds a
 * chained hash table of the distinct ones, frees half, prints counts.
 * It calls mtrace(), so with MALLOC_TRACE set and glibc's
 * libc_malloc_debug.so.0 preloaded it writes a glibc mtrace log. */
#include <mcheck.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct node {
        char *s;
        struct node *next;
};

static int cmp(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(void)
{
        mtrace();
        size_t n = 0, cap = 4;
        char **lines = malloc(cap * sizeof *lines);
        char buf[4096];
        while (lines && fgets(buf, sizeof buf, stdin)) {
                if (n == cap) {
                        char **p = realloc(lines, (cap *= 2) * sizeof *lines);
                        if (!p)
                                return 1;
                        lines = p;
                }
                lines[n++] = strdup(buf);
        }
        if (!lines)
                return 1;
        qsort(lines, n, sizeof *lines, cmp);
        size_t nb = 1024, distinct = 0;
        struct node **tab = calloc(nb, sizeof *tab);
        for (size_t i = 0; tab && i < n; i++) {
                if (i && strcmp(lines[i], lines[i - 1]) == 0)
                        continue;
                unsigned long h = 5381;
                for (const char *c = lines[i]; *c; c++)
                        h = h * 33 + (unsigned char)*c;
                struct node *nd = malloc(sizeof *nd);
                nd->s = lines[i];
                nd->next = tab[h % nb];
                tab[h % nb] = nd;
                distinct++;
        }
        for (size_t i = 0; i < n; i += 2) {
                char *grown = realloc(lines[i], 200); /* some move, some stay */
                free(grown);
        }
        for (size_t b = 0; tab && b < nb; b++)
                while (tab[b]) {
                        struct node *nx = tab[b]->next;
                        free(tab[b]);
                        tab[b] = nx;
                }
        free(tab);
        printf("%zu lines, %zu distinct\n", n, distinct);
        free(lines);
        muntrace();
        return 0;
}
