/* Called by fs/plant_fs.c (tests/data/calls/README.md). */
int plant_tool(int x)
{
        return x + 4;
}
