/* The registry: every container and every trace codec this build reads,
 * in the order they are tried. Adding a format is its module, its row
 * here, its docs page (docs/formats/) and its tests; the views, the
 * daemon and tracetool find it through these tables alone.
 *
 * Detection: the container first (by its magic bytes; plain accepts
 * anything and comes last), then, on the first raw bytes, the address
 * codecs (binary magics first; lackey before din, as a lackey file never
 * parses as din but the reverse is not guaranteed), then the record
 * codecs (binary signatures first, text formats after). Never by name. */
#include <stddef.h>

#include "address/din.h"
#include "address/lackey.h"
#include "address/pdats.h"
#include "address/pdats2.h"
#include "containers/cont_impl.h"
#include "heap/hatf.h"
#include "heap/mtrace.h"
#include "metatf/metatf.h"

const struct tm_cont_ops *const tm_cont_table[] = {
    &tm_cont_gzip_ops,
    &tm_cont_zstd_ops,
    &tm_cont_plain_ops,
    NULL,
};

const struct tm_codec *const tm_codecs[] = {
    &tm_codec_pdats2, &tm_codec_pdats, &tm_codec_lackey, &tm_codec_din, NULL,
};

const struct tm_rcodec *const tm_rcodecs[] = {
    &tm_rcodec_hatf,
    &tm_rcodec_metatf,
    &tm_rcodec_mtrace,
    NULL,
};
