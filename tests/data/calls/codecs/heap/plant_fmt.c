/* One format's two files calling each other: one module, no breach. */
int plant_fmt_enc(int x);

int plant_fmt(int x)
{
        return x > 0 ? plant_fmt_enc(x - 1) : 2;
}
