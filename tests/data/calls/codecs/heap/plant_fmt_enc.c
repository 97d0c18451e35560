/* One format's two files calling each other: one module, no breach. */
int plant_fmt(int x);

int plant_fmt_enc(int x)
{
        return x > 0 ? plant_fmt(x - 1) : 3;
}
