/* A container reading a table the registry defines: data up a layer,
 * codecs/containers into codecs/ (tests/data/calls/README.md). */
extern const int *const plant_cont_table[];

int plant_cont(int i)
{
        return *plant_cont_table[i];
}
