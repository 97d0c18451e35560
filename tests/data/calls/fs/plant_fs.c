/* fs/ calling tools/: side by side, a breach (tests/data/calls/README.md). */
int plant_tool(int x);

int plant_fs(int x)
{
        return plant_tool(x);
}
