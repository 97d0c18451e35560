/* lib_int.h: what tracetool uses of libtracemount, in one place. The
 * commands that read an archive use the API (include/tracemount.h) and
 * the binary view's record (views/tm_binary.h). The packer (pack*.c), the
 * recorder (record/) and the heap readers (heapin/) use these internals
 * beyond it, and no others: tests/call_graph.py fails on a library
 * function a file of tools/ calls that is neither in the API nor named
 * below, and tests/include_graph.py on a file of tools/ that includes a
 * header of codecs/ or views/ but through this one.
 *
 *   errors        tm_err_set, tm_err_prefix (codecs/common/tm_err.h);
 *                 tm_hex_parse (tm_hex.h, inline)
 *   containers    tm_cont_open, tm_cont_close, tm_cont_raw_size,
 *                 tm_creader_open, tm_creader_read, tm_creader_seek,
 *                 tm_creader_close, tm_cwriter_open, tm_cwriter_write,
 *                 tm_cwriter_boundary, tm_cwriter_close
 *                 (codecs/containers/container.h)
 *   registry      tm_registry (codecs/registry.h): its rows
 *   record model  tm_rcodec_probe, tm_rcodec_head_want, tm_schema_field,
 *                 tm_schema_kind (codecs/record/record.h); tm_rmap_init,
 *                 tm_rmap_kind_ok, tm_rmap_rec (codecs/record/rmap.h);
 *                 tm_family_of (codecs/record/family.h), the family
 *                 tm_rmap_init takes
 *   heap family   tm_schema_heap, tm_heap_ev_to_rec, tm_heap_rec_to_ev
 *                 (codecs/heap/heap.h); tm_rcodec_hatf, the recorder's
 *                 stream's codec (codecs/heap/hatf.h)
 *   decoding      tm_feed_init, tm_feed_space, tm_feed_decode,
 *                 tm_feed_reset, tm_feed_free (views/feed.h) */
#ifndef TM_TOOLS_LIB_INT_H
#define TM_TOOLS_LIB_INT_H

#include "codecs/common/tm_err.h"
#include "codecs/common/tm_hex.h"
#include "codecs/containers/container.h"
#include "codecs/heap/hatf.h"
#include "codecs/heap/heap.h"
#include "codecs/record/family.h"
#include "codecs/record/record.h"
#include "codecs/registry.h"
#include "codecs/record/rmap.h"
#include "include/tracemount.h"
#include "views/feed.h"
#include "views/tm_binary.h"

#endif
