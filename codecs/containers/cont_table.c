/* The containers in detection order (cont_impl.h): by their magic bytes,
 * plain last, as it takes anything. The containers' own list, so that
 * container.c finds them in its layer (tests/call_graph.py). */
#include "cont_impl.h"

const struct tm_cont_ops *const tm_cont_table[] = {
    &tm_cont_gzip_ops,
    &tm_cont_zstd_ops,
    &tm_cont_zip_ops,
    &tm_cont_plain_ops,
    NULL,
};
