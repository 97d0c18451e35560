/* <tracemount/views/view.h>: the name of the library's API before
 * <tracemount.h>. Programs that include it get the same declarations; new
 * ones include <tracemount.h>. */
#include <tracemount.h>
