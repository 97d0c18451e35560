/* tmtest: what the unit tests share, instead of a copy in each.
 *
 *   temporary directories  tmt_tmpdir_make / tmt_tmpdir_remove, and
 *                          tmt_group_setup / tmt_group_teardown for a cmocka
 *                          group that wants one private directory (tmt_dir)
 *   a seeded RNG           tmt_rand (xorshift64*, reproducible from a seed)
 *   whole files            tmt_slurp / tmt_spit
 *   an archive's raw bytes tmt_raw_of: decompressed through the container
 *                          API (codecs/containers/container.h)
 *   a growing buffer       struct tmt_buf, tmt_put
 *
 * None of these asserts (the library does not link cmocka): each returns
 * NULL or a negative errno, and the test decides. Built as a static library
 * in tests/meson.build (tmtest_dep). */
#ifndef TM_TMTEST_H
#define TM_TMTEST_H

#include <stddef.h>
#include <stdint.h>

/* A private directory made by tmt_group_setup, removed by
 * tmt_group_teardown (with everything in it). */
extern char tmt_dir[256];

/* Make a new directory "$TMPDIR/<tag>.XXXXXX" (TMPDIR unset or empty:
 * /tmp) and write its path to dir (cap bytes). Returns 0 or -errno. */
int tmt_tmpdir_make(const char *tag, char *dir, size_t cap);

/* Remove dir and everything below it (no symlink followed). Returns 0 or
 * -errno (the first failure). */
int tmt_tmpdir_remove(const char *dir);

/* cmocka group set-up and tear-down making and removing tmt_dir. */
int tmt_group_setup(void **state);
int tmt_group_teardown(void **state);

/* "<tmt_dir>/<name>" in a static buffer of one of 4 slots (so a call can
 * take two or three); names longer than the slot are cut. */
const char *tmt_path(const char *name);

/* The next value of the generator whose state is *s. A state of 0 is
 * taken as a fixed non-zero one, so any seed works. */
uint64_t tmt_rand(uint64_t *s);

/* A value below n (0 when n is 0). */
uint64_t tmt_below(uint64_t *s, uint64_t n);

/* The whole file at path, malloc'd (one extra byte, a NUL, past *len so
 * text can be used as a string), or NULL with errno set. */
uint8_t *tmt_slurp(const char *path, size_t *len);

/* Write p[0..n) as the file at path (made 0644, or emptied). Returns 0 or
 * -errno. */
int tmt_spit(const char *path, const void *p, size_t n);

/* The raw (decompressed) bytes of the archive at path, through the
 * container that tm_cont_open detects, malloc'd; NULL with *err filled
 * when it cannot be opened or read. At most max bytes are kept (0: all);
 * *len receives how many. */
struct tm_err;
uint8_t *tmt_raw_of(const char *path, size_t max, size_t *len, struct tm_err *err);

/* A buffer that grows as bytes are appended. */
struct tmt_buf {
        uint8_t *p;
        size_t len, cap;
};

/* Append n bytes of src; 0 or -ENOMEM. */
int tmt_put(struct tmt_buf *b, const void *src, size_t n);

#endif
