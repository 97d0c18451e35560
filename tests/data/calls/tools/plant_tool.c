/* Called by fs/plant_fs.c and tools/plant_sub/plant_part.c; calls a
 * library function lib_int.h names and one it does not
 * (tests/data/calls/README.md). */
int tm_plant_listed(int x);
int tm_plant_unlisted(int x);

int plant_tool(int x)
{
        return tm_plant_listed(x) + tm_plant_unlisted(x);
}
