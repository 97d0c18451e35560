/* tm_err: error values with a human message.
 *
 * Every fallible function in tracemount returns a negative errno-style code
 * (-EIO for corrupt or truncated input, -ENOMEM, -EINVAL for bad arguments,
 * -ENOTSUP for a valid but unsupported feature) and, when given a non-NULL
 * struct tm_err, fills it with one line that names what failed and where:
 * "<file>: archive offset N: ..." or "<file>: raw offset N: ...".
 * Lower layers that do not know the file name write "raw offset N: ..." and
 * the layer that knows the path prefixes it with tm_err_prefix().
 * Input never aborts the process. */
#ifndef TM_ERR_H
#define TM_ERR_H

#include <stdint.h>

/* struct tm_err and TM_ERR_MSG are part of the library API. */
#include "../../include/tracemount.h"

/* Set err (which may be NULL) to code and a printf-style message; returns
 * code so callers can write `return tm_err_set(err, -EIO, ...)`. */
int tm_err_set(struct tm_err *err, int code, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

/* Prepend "<formatted>: " to err's message, keeping its code; returns the
 * code. Does nothing but return 0 when err is NULL. */
int tm_err_prefix(struct tm_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
