/* A call up a layer: codecs/common into views/ (tests/data/calls/README.md). */
int plant_a(int x);

int plant_low(int x)
{
        return plant_a(x);
}
