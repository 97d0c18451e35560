/* fuzz_ptf: libFuzzer harness for the PTF decoders (codecs/object/ptf.c,
 * the ASCII form; ptf_bin.c, the binary form) and the object family's
 * statistics and verifier (ptf_stats.c).
 *
 * Byte 0's bit 7 picks the form (binary when set); the rest of the input
 * is fz_rec.h's (the records asked per call, the window, the raw stream,
 * the binary form's header first), and so is the check: whole against
 * windows with the state copied at every call (both decoders return the
 * records before a bad line or record first), then the object family's
 * pass, report and verify. */
#include "codecs/object/ptf.h"
#include "codecs/object/ptf_stats.h"
#include "fz_rec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        const struct tm_rcodec *c = size && (data[0] & 0x80) ? &tm_rcodec_ptf_bin : &tm_rcodec_ptf;
        return fzr_run("fuzz_ptf", c, &tm_family_object, 0, data, size);
}
