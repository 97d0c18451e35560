/* The registry's layer, holding a table that a container reads
 * (tests/data/calls/README.md). */
static const int plant_gzip = 1;

const int *const plant_cont_table[] = {&plant_gzip, 0};
