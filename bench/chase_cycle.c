/* chase_cycle N STEPS: a pointer-chasing workload for address traces.
 *
 * Builds N nodes of 64 bytes in one array, links them into one cycle in a
 * random order (a seeded Fisher-Yates shuffle, so every run is the same),
 * then walks the cycle STEPS times, reading each node's value and writing
 * every eighth one back. Prints the walk's sum (so the walk is not optimised
 * away). bench/real.sh traces it under valgrind's lackey: the loads of the
 * walk hit addresses no stride predicts. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

struct chase_node {
        struct chase_node *next;
        uint64_t value;
        uint64_t pad[6]; /* a node per 64-byte line */
};

static uint64_t chase_rand(uint64_t *s)
{
        /* xorshift64 */
        *s ^= *s << 13;
        *s ^= *s >> 7;
        *s ^= *s << 17;
        return *s;
}

static int chase_arg(const char *s, unsigned long long *v)
{
        char *end;
        *v = strtoull(s, &end, 10);
        return *s != '\0' && *end == '\0' && *v > 0;
}

int main(int argc, char **argv)
{
        unsigned long long n, steps;
        if (argc != 3 || !chase_arg(argv[1], &n) || !chase_arg(argv[2], &steps) || n > (1ULL << 28)) {
                fprintf(stderr, "usage: chase N STEPS (N nodes, 1 to 2^28; STEPS >= 1)\n");
                return 2;
        }
        struct chase_node *nodes = calloc(n, sizeof *nodes);
        size_t *order = malloc(n * sizeof *order);
        if (!nodes || !order) {
                fprintf(stderr, "chase: out of memory for %llu nodes\n", n);
                return 1;
        }
        uint64_t seed = 0x9e3779b97f4a7c15ULL;
        for (size_t i = 0; i < n; i++)
                order[i] = i;
        for (size_t i = n - 1; i > 0; i--) {
                size_t j = (size_t)(chase_rand(&seed) % (i + 1));
                size_t t = order[i];
                order[i] = order[j];
                order[j] = t;
        }
        for (size_t i = 0; i < n; i++) {
                nodes[order[i]].next = &nodes[order[(i + 1) % n]];
                nodes[order[i]].value = (uint64_t)i * 2654435761u;
        }
        struct chase_node *p = &nodes[order[0]];
        uint64_t sum = 0;
        for (unsigned long long s = 0; s < steps; s++) {
                sum += p->value;
                if ((s & 7) == 0)
                        p->value ^= s;
                p = p->next;
        }
        printf("%llu\n", (unsigned long long)sum);
        free(order);
        free(nodes);
        return 0;
}
