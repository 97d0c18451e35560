/* A private temporary directory for a cmocka test group, shared by
 * unit_json, unit_errors and unit_xdin: tmp_setup makes it in $TMPDIR (else
 * /tmp), tmp_teardown removes it with everything in it. Header-only. */
#ifndef TM_TMPDIR_TEST_H
#define TM_TMPDIR_TEST_H

#include <stdio.h>
#include <stdlib.h>

static char tmpdir[256];

static int tmp_setup(void **state)
{
        (void)state;
        snprintf(tmpdir, sizeof tmpdir, "%s/tm-unit.XXXXXX",
                 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
        return mkdtemp(tmpdir) ? 0 : -1;
}

static int tmp_teardown(void **state)
{
        (void)state;
        char cmd[300];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
        return system(cmd) == 0 ? 0 : -1;
}

#endif
