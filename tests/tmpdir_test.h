/* A private temporary directory for a cmocka test group, shared by
 * unit_json and unit_errors: tmp_setup makes it, tmp_teardown removes it
 * with everything in it. Header-only. */
#ifndef TM_TMPDIR_TEST_H
#define TM_TMPDIR_TEST_H

#include <stdio.h>
#include <stdlib.h>

static char tmpdir[64];

static int tmp_setup(void **state)
{
        (void)state;
        snprintf(tmpdir, sizeof tmpdir, "%s", "/tmp/tm-unit.XXXXXX");
        return mkdtemp(tmpdir) ? 0 : -1;
}

static int tmp_teardown(void **state)
{
        (void)state;
        char cmd[128];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
        return system(cmd) == 0 ? 0 : -1;
}

#endif
