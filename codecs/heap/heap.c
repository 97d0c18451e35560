/* The heap schema (codecs/heap/heap.h) and event <-> record conversion. */
#include "heap.h"

#include <string.h>

#define F(nm, ty, sh)                                                                              \
        {                                                                                          \
                .name = nm, .type = ty, .show = sh                                                 \
        }
#define REALLOC_FIELDS                                                                             \
        .nfields = 7, .field = {TM_HF_SIZE, TM_HF_ADDRESS, TM_HF_NEW_ADDRESS, TM_HF_THREAD,        \
                                TM_HF_HEAP, TM_HF_TIME,    TM_HF_ATTRIBUTES}
#define HEAP_FIELDS .nfields = 4, .field = {TM_HF_HEAP, TM_HF_THREAD, TM_HF_TIME, TM_HF_ATTRIBUTES}
#define THREAD_FIELDS .nfields = 3, .field = {TM_HF_THREAD, TM_HF_TIME, TM_HF_ATTRIBUTES}

const struct tm_schema tm_schema_heap = {
    .name = "heap",
    .nfields = TM_HF_N,
    .nkinds = TM_HK_N,
    .field =
        {
            [TM_HF_SIZE] = F("size", TM_FT_UINT, TM_SHOW_DEC),
            [TM_HF_ADDRESS] = F("address", TM_FT_UINT, TM_SHOW_HEX),
            [TM_HF_NEW_ADDRESS] = F("new_address", TM_FT_UINT, TM_SHOW_HEX),
            [TM_HF_THREAD] = F("thread", TM_FT_UINT, TM_SHOW_DEC),
            [TM_HF_HEAP] = F("heap", TM_FT_UINT, TM_SHOW_DEC),
            [TM_HF_TIME] = F("time", TM_FT_UINT, TM_SHOW_DEC),
            [TM_HF_ATTRIBUTES] = F("attributes", TM_FT_BYTES, TM_SHOW_DEC),
            [TM_HF_TEXT] = F("text", TM_FT_TEXT, TM_SHOW_DEC),
        },
    .kind =
        {
            [TM_HK_ALLOC] = {.name = "alloc",
                             .tag = 0,
                             .nfields = 6,
                             .field = {TM_HF_SIZE, TM_HF_ADDRESS, TM_HF_THREAD, TM_HF_HEAP,
                                       TM_HF_TIME, TM_HF_ATTRIBUTES}},
            [TM_HK_FREE] = {.name = "free",
                            .tag = 1,
                            .nfields = 5,
                            .field = {TM_HF_ADDRESS, TM_HF_THREAD, TM_HF_HEAP, TM_HF_TIME,
                                      TM_HF_ATTRIBUTES}},
            [TM_HK_REALLOC] = {.name = "realloc", .tag = 2, REALLOC_FIELDS},
            [TM_HK_REALLOC_ALLOC_FREE] = {.name = "realloc_alloc_free", .tag = 3, REALLOC_FIELDS},
            [TM_HK_REALLOC_ALLOC] = {.name = "realloc_alloc", .tag = 4, REALLOC_FIELDS},
            [TM_HK_REALLOC_FREE] = {.name = "realloc_free", .tag = 5, REALLOC_FIELDS},
            [TM_HK_CREATE_HEAP] = {.name = "createHeap", .tag = 6, HEAP_FIELDS},
            [TM_HK_DESTROY_HEAP] = {.name = "destroyHeap", .tag = 7, HEAP_FIELDS},
            [TM_HK_CREATE_THREAD] = {.name = "createThread", .tag = 8, THREAD_FIELDS},
            [TM_HK_DESTROY_THREAD] = {.name = "destroyThread", .tag = 9, THREAD_FIELDS},
            [TM_HK_COMMENT] = {.name = "comment", .tag = 10, .nfields = 1, .field = {TM_HF_TEXT}},
        },
};

static uint64_t ev_field(const struct tm_heap_ev *ev, unsigned f)
{
        switch (f) {
        case TM_HF_SIZE:
                return ev->size;
        case TM_HF_ADDRESS:
                return ev->addr;
        case TM_HF_NEW_ADDRESS:
                return ev->new_addr;
        case TM_HF_THREAD:
                return ev->thread;
        case TM_HF_HEAP:
                return ev->heap;
        case TM_HF_TIME:
                return ev->time;
        default:
                return ev->attr_len;
        }
}

void tm_heap_ev_to_rec(const struct tm_heap_ev *ev, struct tm_rec *r)
{
        const struct tm_kind *k = &tm_schema_heap.kind[ev->kind < TM_HK_N ? ev->kind : 0];
        memset(r, 0, sizeof *r);
        r->kind = ev->kind < TM_HK_N ? ev->kind : 0;
        for (unsigned i = 0; i < k->nfields; i++)
                r->v[i] = ev_field(ev, k->field[i]);
        r->var[0] = ev->attr;
}

void tm_heap_rec_to_ev(const struct tm_rec *r, struct tm_heap_ev *ev)
{
        memset(ev, 0, sizeof *ev);
        ev->kind = r->kind;
        if (r->kind >= TM_HK_N)
                return;
        const struct tm_kind *k = &tm_schema_heap.kind[r->kind];
        for (unsigned i = 0; i < k->nfields; i++) {
                uint64_t v = r->v[i];
                switch (k->field[i]) {
                case TM_HF_SIZE:
                        ev->size = v;
                        break;
                case TM_HF_ADDRESS:
                        ev->addr = v;
                        break;
                case TM_HF_NEW_ADDRESS:
                        ev->new_addr = v;
                        break;
                case TM_HF_THREAD:
                        ev->thread = v;
                        break;
                case TM_HF_HEAP:
                        ev->heap = v;
                        break;
                case TM_HF_TIME:
                        ev->time = v;
                        break;
                default: /* attributes or text: the one variable field */
                        ev->attr = r->var[0];
                        ev->attr_len = (size_t)v;
                        break;
                }
        }
}

void tm_heap_refine(const struct tm_schema *from, const struct tm_schema *to, struct tm_rec *o)
{
        int re = tm_schema_kind(to, "realloc");
        if (re < 0 || o->kind != (unsigned)re || tm_schema_kind(from, "realloc_alloc_free") >= 0)
                return;
        const struct tm_kind *k = &to->kind[re];
        int pa = tm_kind_pos(k, (unsigned)tm_schema_field(to, "address"));
        int pn = tm_kind_pos(k, (unsigned)tm_schema_field(to, "new_address"));
        if (pa < 0 || pn < 0)
                return;
        uint64_t a = o->v[pa], n = o->v[pn];
        const char *outcome = a == 0   ? "realloc_alloc"
                              : n == 0 ? "realloc_free"
                              : a == n ? "realloc"
                                       : "realloc_alloc_free";
        int t = tm_schema_kind(to, outcome);
        /* the four kinds have the same fields (heap.h), so o's values stand */
        if (t >= 0 && to->kind[t].nfields == k->nfields &&
            memcmp(to->kind[t].field, k->field, k->nfields) == 0)
                o->kind = (unsigned)t;
}
