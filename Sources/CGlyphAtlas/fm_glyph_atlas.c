// C23 #embed turns the atlas file into static data in a fraction of a second; the Swift alternatives (a byte-array
// literal from SwiftPM's embedInCode, or a base64 string in source) cost minutes of compile time or a decode.
#include "fm_glyph_atlas.h"

#pragma clang diagnostic ignored "-Wc23-extensions"
static const unsigned char atlas[] = {
#embed "glyph-atlas.fmga"
};

const unsigned char *fm_glyph_atlas_bytes(void) { return atlas; }
size_t fm_glyph_atlas_size(void) { return sizeof atlas; }
