/* fuzz_laplace: libFuzzer harness for the three Laplace decoders
 * (codecs/laplace/: the raw references, their text form, the kernel
 * events) and the laplace family's statistics.
 *
 * The same input goes to each decoder in turn; what is checked is
 * fz_rec.h's (whole against windows, the state copied at every call, the
 * family's pass). open never refuses a stream: the raw form's schema is a
 * built-in DTD's, the text forms read no header. */
#include "codecs/laplace/laplace.h"
#include "codecs/laplace/lapfamily.h"
#include "fz_rec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        fzr_run("fuzz_laplace", &tm_rcodec_laplace_kev, &tm_family_laplace, 1, data, size);
        fzr_run("fuzz_laplace", &tm_rcodec_laplace_text, &tm_family_laplace, 1, data, size);
        return fzr_run("fuzz_laplace", &tm_rcodec_laplace_raw, &tm_family_laplace, 1, data, size);
}
