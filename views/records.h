/* records: a trace's records as views, behind the tm_trace / tm_vfile API.
 *
 * tm_trace_open probes the codec rows of the registry (codecs/registry.c:
 * the address codecs, the other record codecs, the bound formats); the
 * trace gets a struct tm_records for the row that takes it, and every
 * tm_trace_* / tm_vfile_* call about its views comes here. Its views, as
 * paths in the trace's directory:
 *   ascii, binary, raw, stats, schema   (codecs/record/text.h for the forms)
 *   streams/<kind>                      ascii lines of one record kind
 *   <form>                              another text form (xdin)
 *   fields/<field>                      one field's values, one a line
 *   sections/<name>                     a section's records, or its bytes
 *   streams/<field>/<id>                a family's per-id streams
 * The family (codecs/record/family.h) may lay out stats and binary its
 * own way. Reads at any offset cost at most K records of decoding
 * (index.h). Code: records.c (open, the index file), records_view.c
 * (names, kinds, sizes), records_cursor.c (cursors), records_verify.c. */
#ifndef TM_RECORDS_H
#define TM_RECORDS_H

#include <stdint.h>
#include <sys/types.h>

#include "view.h"

struct tm_trace;
struct tm_records;
struct tm_cursor;

/* Probe head (headn raw bytes of t) against the record codecs; on a match
 * open the codec and set *out. Returns 1 (opened), 0 (no record codec
 * takes it) or a negative errno. */
int tm_records_open(struct tm_trace *t, const uint8_t *head, size_t headn, struct tm_records **out,
                   struct tm_err *err);

void tm_records_close(struct tm_records *rt);

/* t's archive was rewritten in place: open t->rt's codec again on head,
 * the first headn raw bytes of cont (the new version's container, which
 * the caller installs on success), and replace the codec's per-trace
 * state, schema, initial state and header length; the index, the stats
 * text and the per-id streams listed from the old version go. Refused,
 * t->rt unchanged: -EMEDIUMTYPE when head is no longer a trace of that
 * codec, -EBUSY when the views would not be the same list (a Meta-TF DTD
 * that changed; a trace whose codec's open had failed), or the codec's
 * open error. The view name strings stay valid for readers of the views
 * list. Under t->mu, with no cursor open and no index in use. */
struct tm_cont;
int tm_records_reopen(struct tm_trace *t, struct tm_cont *cont, const uint8_t *head, size_t headn,
                     struct tm_err *err);

/* A trace whose container is recognised but nothing of which a codec
 * could open (the container damaged or cut before its first raw bytes,
 * or empty): a failed record trace (below) of codec "unknown" whose
 * views fail with why. Returns 0 or -ENOMEM. */
int tm_records_open_broken(struct tm_trace *t, const struct tm_err *why, struct tm_records **out);

/* The codec's open failed on an archive its probe took: the error every
 * view but stats and errors fails with (code -EIO), or NULL. */
const struct tm_err *tm_records_open_error(const struct tm_records *rt);

/* Could view (or a directory of views) be one the index adds, a heap
 * trace's streams/thread/<id>? (tm_trace_view_lookup) */
int tm_records_view_pending(const struct tm_records *rt, const char *view);

const char *tm_records_codec(const struct tm_records *rt);

/* The bytes rt holds (schema, plans, names, texts, index, tables' texts),
 * for the bound of open traces; read it only when no other thread uses
 * the trace. */
uint64_t tm_records_mem(const struct tm_records *rt);
const char *const *tm_records_views(const struct tm_records *rt);

/* Build the index, or load / save it as a file at path (under
 * tm_trace_index's once-only protocol; rindex.h has the rules). */
struct tm_index_key;
int tm_records_build(struct tm_trace *t, tm_progress_fn progress, void *arg, struct tm_err *err);
int tm_records_load(struct tm_trace *t, const char *path, const struct tm_index_key *key,
                   struct tm_err *err);
int tm_records_save(struct tm_trace *t, const struct tm_index_key *key, const char *path,
                   struct tm_err *err);

/* Does view's size or cursor need the index pass first? 1 when it does;
 * 0 for the stats view of a trace whose codec's open failed (its text is
 * made at open); -1 when rt has no such view (the index may add it:
 * tm_trace_view_lookup). */
int tm_records_view_indexed(const struct tm_records *rt, const char *view);

/* View sizes and cursors. They never run the index pass: the caller has
 * run it when tm_records_view_indexed says so (tm_trace_view_ready), and
 * a trace whose codec's open failed gives its open error. */
int tm_records_view_size(struct tm_trace *t, const char *view, uint64_t *size, struct tm_err *err);
int tm_records_vfile_open(struct tm_trace *t, const char *view, struct tm_cursor **out,
                         struct tm_err *err);
ssize_t tm_records_pread(struct tm_cursor *f, void *buf, size_t n, uint64_t off, struct tm_err *err);
void tm_records_vfile_close(struct tm_cursor *f);

/* Make f a readahead worker's cursor: it renders through a small buffer of
 * its own and copies out (vfile.c says why). 0 or -ENOMEM. */
int tm_records_vfile_worker(struct tm_cursor *f);

/* Where each checkpoint interval starts in view (malloc'd, *n of them;
 * the index must be ready), for the readahead; NULL on error. When two or
 * more checkpoints are at restart points of the container (rindex.h),
 * only those: a worker that starts an interval then decompresses nothing
 * in vain (a heap trace's cold cat with two workers spent ~+44% of its
 * zstd time on frame starts before checkpoints between). */
uint64_t *tm_records_segments(struct tm_trace *t, const char *view, uint32_t *n);

/* The stats.json text of a record trace into dst (cap bytes), damage the
 * damage message or NULL; returns its length (snprintf-style). The index
 * must be ready. */
size_t tm_records_stats_json(struct tm_trace *t, const char *damage, char *dst, size_t cap);

/* How the vfile layer should treat view: TM_VIEW_ASCII (text decoded from
 * records: ascii, streams/, fields/), TM_VIEW_BINARY, TM_VIEW_RAW,
 * TM_VIEW_STATS (a text made once: stats, schema, a codec's byte section)
 * or TM_VIEW_TABLE (a family's table, sections/classes); -1 if unknown. */
int tm_records_view_kind(struct tm_trace *t, const char *view);

/* Read the record index file at path for t, leaving t alone (verify):
 * as tm_records_load, into *out. */
struct tm_index;
int tm_records_load_file(struct tm_trace *t, const char *path, const struct tm_index_key *key,
                        struct tm_index **out, struct tm_err *err);

/* Decode the whole archive again with a fresh container (verify) and,
 * when file (loaded from path) is not NULL, compare it with the index
 * built with the file's checkpoints (tm_index_build_like), checkpoint by
 * checkpoint. */
int tm_records_verify(struct tm_trace *t, const struct tm_index *file, const char *path,
                     tm_progress_fn progress, void *arg, struct tm_err *err);

#endif
