#include "tm_err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int tm_err_set(struct tm_err *err, int code, const char *fmt, ...)
{
        if (!err)
                return code;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
        err->code = code;
        return code;
}

int tm_err_prefix(struct tm_err *err, const char *fmt, ...)
{
        if (!err)
                return 0;
        char head[TM_ERR_MSG];
        char old[TM_ERR_MSG];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(head, sizeof head, fmt, ap);
        va_end(ap);
        memcpy(old, err->msg, sizeof old);
        /* too long: keep the start and say so with "..." at the end */
        if (snprintf(err->msg, sizeof err->msg, "%s: %s", head, old) >= (int)sizeof err->msg)
                memcpy(err->msg + sizeof err->msg - 4, "...", 4);
        return err->code;
}
