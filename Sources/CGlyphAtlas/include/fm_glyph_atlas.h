#ifndef FM_GLYPH_ATLAS_H
#define FM_GLYPH_ATLAS_H
#include <stddef.h>

/// The committed glyph atlas (tools/glyphs/make_glyph_atlas.py) as read-only bytes linked into the binary.
const unsigned char *fm_glyph_atlas_bytes(void);
size_t fm_glyph_atlas_size(void);

#endif
