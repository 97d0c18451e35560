/* chase: a pointer-chasing program for bench/native.sh to record with
 * valgrind's lackey: a data-address predictor has little to hold on to.
 *
 *   chase [NODES [ROUNDS]]   (default 100000 nodes, 8 rounds)
 *
 * Links NODES nodes of a random permutation into a list and inserts the
 * same keys into an unbalanced binary search tree, then ROUNDS times
 * walks the list and looks every key up in the tree (in list order),
 * summing what it finds; prints the sum, so the walks are not optimised
 * away. Deterministic (a fixed xorshift seed). */
#include <stdio.h>
#include <stdlib.h>

struct node {
        struct node *next;
        unsigned long key;
        struct node *left, *right;
};

static unsigned long rnd(unsigned long *s)
{
        *s ^= *s << 13;
        *s ^= *s >> 7;
        *s ^= *s << 17;
        return *s;
}

static struct node *insert(struct node *root, struct node *n)
{
        struct node **p = &root;
        while (*p)
                p = n->key < (*p)->key ? &(*p)->left : &(*p)->right;
        *p = n;
        return root;
}

static const struct node *find(const struct node *t, unsigned long key)
{
        while (t && t->key != key)
                t = key < t->key ? t->left : t->right;
        return t;
}

int main(int argc, char **argv)
{
        size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 100000;
        int rounds = argc > 2 ? atoi(argv[2]) : 8;
        if (n < 2)
                n = 2;
        struct node *pool = calloc(n, sizeof *pool);
        size_t *perm = malloc(n * sizeof *perm);
        if (!pool || !perm)
                return 1;
        unsigned long s = 88172645463325252ul;
        for (size_t i = 0; i < n; i++)
                perm[i] = i;
        for (size_t i = n - 1; i > 0; i--) {
                size_t j = rnd(&s) % (i + 1), t = perm[i];
                perm[i] = perm[j];
                perm[j] = t;
        }
        struct node *root = NULL;
        for (size_t i = 0; i < n; i++) {
                struct node *x = &pool[perm[i]];
                x->key = rnd(&s);
                x->next = i + 1 < n ? &pool[perm[i + 1]] : NULL;
                root = insert(root, x);
        }
        unsigned long sum = 0;
        for (int r = 0; r < rounds; r++)
                for (const struct node *x = &pool[perm[0]]; x; x = x->next)
                        sum += find(root, x->key) == x;
        printf("%lu\n", sum);
        free(perm);
        free(pool);
        return 0;
}
