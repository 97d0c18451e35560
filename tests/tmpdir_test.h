/* A private temporary directory for a cmocka test group (unit_json,
 * unit_errors, unit_xdin, ...): tmp_setup makes it in $TMPDIR (else /tmp),
 * tmp_teardown removes it with everything in it. The names of
 * tests/support/tmtest.h (tmt_dir, tmt_group_setup, tmt_group_teardown),
 * which new tests use directly. */
#ifndef TM_TMPDIR_TEST_H
#define TM_TMPDIR_TEST_H

#include "support/tmtest.h"

static char *const tmpdir = tmt_dir;

static int tmp_setup(void **state)
{
        return tmt_group_setup(state);
}

static int tmp_teardown(void **state)
{
        return tmt_group_teardown(state);
}

#endif
