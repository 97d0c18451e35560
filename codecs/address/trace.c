/* Reference type names (the address codecs are found through their
 * rows: arec.h). */
#include "trace.h"

#include <string.h>

const char *tm_type_name(unsigned t)
{
        static const char *const names[TM_NTYPES] = {
            "read", "write", "ifetch", "misc", "copyback", "invalidate", "type6", "type7",
        };
        return t < TM_NTYPES ? names[t] : "unknown";
}
