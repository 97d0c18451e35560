/* The planted tree's tools/lib_int.h: tools/ may call tm_plant_listed. */
