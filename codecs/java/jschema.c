/* The java schema (jtrace.h): its own module, so that the family's
 * statistics (jstats.c) and the codec (jtrace.c, whose row points at the
 * family) both use it without calling each other. */
#include "jtrace.h"

#define TAG(a, b) ((uint32_t)(a) << 8 | (uint32_t)(b))
#define F(nm, ty)                                                                                  \
        {                                                                                          \
                .name = nm, .type = ty, .show = TM_SHOW_DEC                                        \
        }
#define K(nm, a, b, n, ...)                                                                        \
        {                                                                                          \
                .name = nm, .tag = TAG(a, b), .nfields = n, .field = { __VA_ARGS__ }               \
        }

const struct tm_schema tm_schema_java = {
    .name = "java",
    .nfields = TM_JF_N,
    .nkinds = TM_JK_N,
    .field =
        {
            [TM_JF_TIME] = F("time", TM_FT_UINT),
            [TM_JF_THREAD] = F("thread", TM_FT_UINT),
            [TM_JF_CLASS] = F("class", TM_FT_TEXT),
            [TM_JF_METHOD] = F("method", TM_FT_TEXT),
            [TM_JF_OBJECT] = F("object", TM_FT_UINT),
            [TM_JF_TEXT] = F("text", TM_FT_TEXT),
        },
    .kind =
        {
            [TM_JK_VM_START] = K("vm_start", 'V', 'S', 1, TM_JF_TIME),
            [TM_JK_VM_INIT] = K("vm_init", 'V', 'I', 1, TM_JF_TIME),
            [TM_JK_VM_DEATH] = K("vm_death", 'V', 'D', 1, TM_JF_TIME),
            [TM_JK_CLASS_LOAD] = K("class_load", 'C', 'L', 2, TM_JF_TIME, TM_JF_CLASS),
            [TM_JK_OBJECT_ALLOC] =
                K("object_alloc", 'O', 'A', 3, TM_JF_TIME, TM_JF_CLASS, TM_JF_OBJECT),
            [TM_JK_OBJECT_FREE] =
                K("object_free", 'O', 'F', 3, TM_JF_TIME, TM_JF_CLASS, TM_JF_OBJECT),
            [TM_JK_THREAD_START] = K("thread_start", 'T', 'B', 2, TM_JF_TIME, TM_JF_THREAD),
            [TM_JK_THREAD_END] = K("thread_end", 'T', 'E', 2, TM_JF_TIME, TM_JF_THREAD),
            [TM_JK_METHOD_ENTRY] = K("method_entry", 'M', 'N', 5, TM_JF_TIME, TM_JF_THREAD,
                                     TM_JF_CLASS, TM_JF_METHOD, TM_JF_OBJECT),
            [TM_JK_METHOD_EXIT] =
                K("method_exit", 'M', 'X', 4, TM_JF_TIME, TM_JF_THREAD, TM_JF_CLASS, TM_JF_METHOD),
            [TM_JK_FRAME_POP] =
                K("frame_pop", 'F', 'P', 4, TM_JF_TIME, TM_JF_THREAD, TM_JF_CLASS, TM_JF_METHOD),
            [TM_JK_COMMENT] = {.name = "comment", .tag = '#', .nfields = 1, .field = {TM_JF_TEXT}},
        },
};
