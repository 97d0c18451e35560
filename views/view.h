/* view.h: the library API, as the code in this tree includes it. The API
 * is include/tracemount.h (installed as <tracemount.h>, with the contract of
 * every function); this header adds nothing, so that each declaration
 * lives in one place. It is installed as <tracemount/views/view.h> too
 * (include/view_compat.h), for programs written against that name.
 *
 * Below the API: containers (codecs/containers/container.h), trace codecs
 * (codecs/address/trace.h, codecs/record/record.h) and the checkpoint
 * index (views/index.h). */
#ifndef TM_VIEW_H
#define TM_VIEW_H

#include "../include/tracemount.h"

#endif
