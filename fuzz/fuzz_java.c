/* fuzz_java: libFuzzer harness for the Java trace decoder
 * (codecs/java/jtrace.c) and the java family's statistics.
 *
 * What it checks is fz_rec.h's (whole against windows, the state copied
 * at every call; the family's pass): the decoder returns the records
 * before a bad line first, so both passes stop at the same record. open
 * never refuses a stream. */
#include "codecs/java/jstats.h"
#include "codecs/java/jtrace.h"
#include "fz_rec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        return fzr_run("fuzz_java", &tm_rcodec_java, &tm_family_java, 1, data, size);
}
