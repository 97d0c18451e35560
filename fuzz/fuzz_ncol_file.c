/* fuzz_ncol_file: libFuzzer harness for the native encoding's schema-2
 * decoder alone: every input is what fuzz_ncol's file mode takes (its
 * bytes after fuzz_ncol's selector byte 0): a schema-2 .tmn file whose
 * checksums are made right, decoded whole and in windows with the state
 * copied at every call, which must agree, then the claiming family's pass.
 *
 * fuzz_ncol spends most of its executions in its round trips (the encoder
 * codes every field every way at zstd level 1: some 400 executions a CPU
 * second), so its decoder would take days of a core to see 10^7 inputs;
 * here every execution is a decode. */
#define LLVMFuzzerTestOneInput fz_ncol_any
#include "fuzz_ncol.c"
#undef LLVMFuzzerTestOneInput

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        ncf_file(data, size);
        return 0;
}
