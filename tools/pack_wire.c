/* pack_wire: tracetool record's stream made a heap trace (pack_wire.h). */
#include "pack_wire.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "lib_int.h"
#include "record/rec_wire.h"

#define NOTE_LEN 400

__attribute__((format(printf, 2, 3))) static int note(struct pack_wire *w, const char *fmt, ...)
{
        char text[NOTE_LEN];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(text, sizeof text, fmt, ap);
        va_end(ap);
        return w->note(w->arg, text);
}

static int wire_emit(void *arg, const struct reorder_rec *o)
{
        struct pack_wire *w = arg;
        struct tm_heap_ev ev = {.kind = o->kind,
                                .size = o->size,
                                .addr = o->addr,
                                .new_addr = o->new_addr,
                                .thread = o->thread,
                                .time = o->time};
        struct tm_rec r;
        tm_heap_ev_to_rec(&ev, &r);
        return w->emit(w->arg, &r);
}

int pack_wire_probe(const struct tm_rcodec *row, const uint8_t *head, size_t n)
{
        static const uint8_t mark[] = {RECW_COMMENT, 0, RECW_MARK_LEN};
        return row == &tm_rcodec_hatf && n >= HATF_SIGNATURE_LEN + 3 + RECW_MARK_LEN &&
               memcmp(head + HATF_SIGNATURE_LEN, mark, 3) == 0 &&
               memcmp(head + HATF_SIGNATURE_LEN + 3, RECW_MARK, RECW_MARK_LEN) == 0;
}

int pack_wire_init(struct pack_wire *w, const char *name,
                   int (*emit)(void *, const struct tm_rec *), int (*note_fn)(void *, const char *),
                   void *arg, struct tm_err *err)
{
        memset(w, 0, sizeof *w);
        w->name = name;
        w->emit = emit;
        w->note = note_fn;
        w->arg = arg;
        if (reorder_init(&w->ord, 0, wire_emit, w) < 0)
                return tm_err_set(err, -ENOMEM, "%s: out of memory", name);
        return 0;
}

/* A notice "tmrecord VERB SEQ ARG" (rec_wire.h). */
static int wire_notice(struct pack_wire *w, const char *t, size_t n)
{
        char verb[16], arg[256];
        unsigned long long seq = 0;
        char text[300];
        snprintf(text, sizeof text, "%.*s", (int)(n < sizeof text - 1 ? n : sizeof text - 1), t);
        arg[0] = '\0';
        if (sscanf(text, RECW_NOTE_PREFIX "%15s %llu %255[^\n]", verb, &seq, arg) < 2)
                return 0; /* the mark, or a notice of a later recorder */
        if (strcmp(verb, "exec") == 0) {
                w->exec_pending = 1;
                w->exec_seq = seq;
                snprintf(w->exec_what, sizeof w->exec_what, "%s", arg);
        } else if (strcmp(verb, "exec-failed") == 0) {
                w->exec_pending = 0;
        } else if (strcmp(verb, "fork") == 0) {
                if (!w->forks++)
                        w->fork_seq = seq;
        } else if (strcmp(verb, "spawn") == 0) {
                if (!w->spawns++)
                        snprintf(w->spawn_what, sizeof w->spawn_what, "%s", arg);
        } else if (strcmp(verb, "pymalloc") == 0) {
                return note(w,
                            "%s is a Python allocating through its own allocator (%s): "
                            "only the blocks it takes from malloc are in the trace; run it "
                            "with PYTHONMALLOC=malloc",
                            w->name, strcmp(arg, "-") ? arg : "pymalloc");
        }
        return 0;
}

int pack_wire_put(struct pack_wire *w, const struct tm_rec *r, struct tm_err *err)
{
        struct tm_heap_ev ev;
        tm_heap_rec_to_ev(r, &ev);
        if (ev.kind == TM_HK_COMMENT)
                return strncmp((const char *)ev.attr, RECW_NOTE_PREFIX, 9) == 0 && ev.attr_len > 9
                           ? wire_notice(w, (const char *)ev.attr, ev.attr_len)
                           : 0;
        if (ev.kind > TM_HK_REALLOC_FREE)
                return 0; /* the recorder writes no other kind */
        struct reorder_rec o = {.seq = ev.heap,
                                .size = ev.size,
                                .addr = ev.addr,
                                .new_addr = ev.new_addr,
                                .time = ev.time,
                                .thread = (uint32_t)ev.thread,
                                .kind = (uint8_t)ev.kind};
        int rc = reorder_put(&w->ord, &o);
        return rc == -ENOMEM ? tm_err_set(err, rc, "%s: out of memory (reorder window)", w->name)
                             : rc;
}

int pack_wire_end(struct pack_wire *w)
{
        int rc = reorder_finish(&w->ord);
        const struct reorder *o = &w->ord;
        if (rc == 0 && (o->late || o->passed))
                rc = note(w,
                          "the order of the calls is not restored for %llu records: they "
                          "came more than %zu records late (a thread held them that long) "
                          "and are in the order they arrived",
                          (unsigned long long)(o->late ? o->late : o->passed), o->max);
        if (rc == 0 && reorder_missing(o))
                rc = note(w,
                          "%llu records were lost (buffered in threads when the process "
                          "ended or was killed)",
                          (unsigned long long)reorder_missing(o));
        if (rc == 0 && w->forks)
                rc = note(w,
                          "%s forked %llu time(s), first after %llu records: what the "
                          "children did is not in the trace",
                          w->name, (unsigned long long)w->forks, (unsigned long long)w->fork_seq);
        if (rc == 0 && w->spawns)
                rc = note(w, "%s started %llu program(s) (%s%s): they are not in the trace",
                          w->name, (unsigned long long)w->spawns, w->spawn_what,
                          w->spawns > 1 ? ", ..." : "");
        if (rc == 0 && w->exec_pending)
                rc = note(w,
                          "%s exec'd %s after %llu records: nothing after the exec is in "
                          "the trace; name the real program",
                          w->name, w->exec_what, (unsigned long long)w->exec_seq);
        return rc;
}

void pack_wire_free(struct pack_wire *w)
{
        reorder_free(&w->ord);
}
