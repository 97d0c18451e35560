/* The address reference types' names. */
#include "trace.h"

const char *tm_type_name(unsigned t)
{
        static const char *const names[TM_NTYPES] = {
            "read", "write", "ifetch", "misc", "copyback", "invalidate", "type6", "type7",
        };
        return t < TM_NTYPES ? names[t] : "unknown";
}
