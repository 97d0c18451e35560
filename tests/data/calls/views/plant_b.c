/* A circle with plant_a.c (tests/data/calls/README.md). */
int plant_a(int x);

int plant_b(int x)
{
        return x > 0 ? plant_a(x - 1) : 1;
}

/* A library function that the planted tools/lib_int.h does not name. */
int tm_plant_unlisted(int x)
{
        return x + 6;
}
