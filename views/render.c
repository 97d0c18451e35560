#include "render.h"

/* clang-format off */
#define TM_HEX_ROW(h) \
        h "0" h "1" h "2" h "3" h "4" h "5" h "6" h "7" \
        h "8" h "9" h "a" h "b" h "c" h "d" h "e" h "f"

const char tm_render_hex_pairs[513] =
        TM_HEX_ROW("0") TM_HEX_ROW("1") TM_HEX_ROW("2") TM_HEX_ROW("3")
        TM_HEX_ROW("4") TM_HEX_ROW("5") TM_HEX_ROW("6") TM_HEX_ROW("7")
        TM_HEX_ROW("8") TM_HEX_ROW("9") TM_HEX_ROW("a") TM_HEX_ROW("b")
        TM_HEX_ROW("c") TM_HEX_ROW("d") TM_HEX_ROW("e") TM_HEX_ROW("f");
/* clang-format on */
