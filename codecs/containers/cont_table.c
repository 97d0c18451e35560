/* The containers this build reads and writes, in detection order
 * (cont_impl.h): a module of its own, so that container.c reaches the
 * container modules through it and they, using cont_io.c, never reach
 * back. */
#include <stddef.h>

#include "cont_impl.h"

const struct tm_cont_ops *const tm_cont_table[] = {
    &tm_cont_gzip_ops,
    &tm_cont_zstd_ops,
    &tm_cont_zip_ops,
    &tm_cont_plain_ops,
    NULL,
};
