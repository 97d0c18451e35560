/* A circle with plant_b.c (tests/data/calls/README.md). */
int plant_b(int x);

int plant_a(int x)
{
        return x > 0 ? plant_b(x - 1) : 0;
}

/* A library function that the planted tools/lib_int.h names. */
int tm_plant_listed(int x)
{
        return x + 5;
}
