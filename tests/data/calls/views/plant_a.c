/* A circle with plant_b.c (tests/data/calls/README.md). */
int plant_b(int x);

int plant_a(int x)
{
        return x > 0 ? plant_b(x - 1) : 0;
}
