/* A part of the CLI (tools/plant_sub/) calling a command (a file of
 * tools/ itself, not of a subfolder): a call up a layer
 * (tests/data/calls/README.md). */
int plant_tool(int x);

int plant_part(int x)
{
        return plant_tool(x);
}
