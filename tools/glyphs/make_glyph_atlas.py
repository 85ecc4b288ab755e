#!/usr/bin/env python3
"""Rasterises the glyphs the annotator draws into Sources/CGlyphAtlas/glyph-atlas.fmga.

Why: labels on photos are drawn by our own code (no FreeType or fontconfig at run time), so the glyph
coverage maps are made once here, from fonts whose licences allow redistribution, and committed.

  * Latin text: DejaVu Sans Bold (Bitstream Vera licence), Debian package fonts-dejavu-core.
  * Chinese names: Noto Sans CJK SC Bold (SIL OFL 1.1), package fonts-noto-cjk; only the characters
    that occur in nutrition-db/labels.json (`name_zh`).
  * Emoji: Noto Color Emoji (SIL OFL 1.1), package fonts-noto-color-emoji; only the emoji in labels.json
    plus the fallbacks 🍽 and ❓.

The file is a resource of the Rendering target, compiled into the module by SwiftPM's `.embedInCode` rule
(the `CGlyphAtlas` C target, C23 `#embed`). `GlyphAtlas.embeddedSHA256` in Sources/Rendering/GlyphAtlas.swift records
its SHA-256: the atlas is refused when the compiled bytes do not hash to it, so after writing a new file this
tool prints the line to paste there (RenderingTests fail until it matches).

Usage (from any directory; needs Pillow):
    apt-get install fonts-dejavu-core fonts-noto-cjk fonts-noto-color-emoji
    python3 tools/glyphs/make_glyph_atlas.py             # writes the resource, prints its SHA-256
    python3 tools/glyphs/make_glyph_atlas.py --check     # exit 1 when the committed resource differs
    python3 tools/glyphs/make_glyph_atlas.py --output P  # writes somewhere else

Format (little endian):
    "FMGA" u8 version=1, u16 em, u16 ascent, u16 descent, u16 glyph count, then per glyph:
    u8 key length, key (UTF-8; "" is the missing-glyph box), u8 kind (0 = 8-bit coverage, 1 = premultiplied
    RGBA), u16 width, u16 height, i16 left, i16 top (row 0 relative to the baseline, negative = above),
    u16 advance in 1/64 px, u32 data length, data: runs of (varint zero count, varint literal count, literals).
"""
import argparse
import hashlib
import json
import os
import struct
import sys

from PIL import Image, ImageDraw, ImageFont

EM = 40
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
RESOURCE = "Sources/CGlyphAtlas/glyph-atlas.fmga"
CHECKSUM_SWIFT = "Sources/Rendering/GlyphAtlas.swift"
LATIN_FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf"
CJK_FONT = ("/usr/share/fonts/opentype/noto/NotoSansCJK-Bold.ttc", "Noto Sans CJK SC")
EMOJI_FONT = "/usr/share/fonts/truetype/noto/NotoColorEmoji.ttf"
EMOJI_NATIVE = 109  # the only size Noto Color Emoji's bitmaps come in
EXTRA_PUNCTUATION = "–—‘’“”…•×·€→"


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def rle(data):
    out = bytearray()
    i, n = 0, len(data)
    while i < n:
        z = i
        while z < n and data[z] == 0:
            z += 1
        lit = z
        # A literal run ends at the first run of 4+ zeros (shorter zero runs are cheaper inline).
        while lit < n:
            if data[lit] == 0 and lit + 3 < n and data[lit:lit + 4] == b"\0\0\0\0":
                break
            if data[lit] == 0 and lit + 3 >= n and all(b == 0 for b in data[lit:]):
                break
            lit += 1
        out += varint(z - i) + varint(lit - z) + data[z:lit]
        i = lit
    return bytes(out)


def cjk_font():
    path, name = CJK_FONT
    for index in range(8):
        font = ImageFont.truetype(path, EM, index=index)
        if font.getname()[0] == name:
            return font
    sys.exit(f"{name} not found in {path}")


def mask_glyph(font, ch):
    left, top, right, bottom = font.getbbox(ch, anchor="ls")
    w, h = max(0, right - left), max(0, bottom - top)
    data = b""
    if w and h:
        img = Image.new("L", (w, h), 0)
        ImageDraw.Draw(img).text((-left, -top), ch, font=font, fill=255, anchor="ls")
        data = img.tobytes()
    return (0, w, h, left, top, font.getlength(ch), data)


def emoji_glyph(font, ch, latin):
    left, top, right, bottom = font.getbbox(ch, anchor="ls")
    img = Image.new("RGBA", (right - left, bottom - top), (0, 0, 0, 0))
    ImageDraw.Draw(img).text((-left, -top), ch, font=font, embedded_color=True, anchor="ls")
    img = img.crop(img.getbbox())
    size = round(EM * 1.15)
    scale = size / max(img.size)
    w, h = max(1, round(img.width * scale)), max(1, round(img.height * scale))
    img = img.resize((w, h), Image.LANCZOS)
    # Centred on the middle of the capitals, like the text around it.
    cap = -latin.getbbox("H", anchor="ls")[1]
    top = round(-cap / 2 - h / 2)
    px = bytearray()
    raw = img.tobytes()
    for i in range(0, len(raw), 4):
        r, g, b, a = raw[i:i + 4]
        px += bytes((r * a // 255, g * a // 255, b * a // 255, a))
    return (1, w, h, round(EM * 0.05), top, size + EM * 0.15, bytes(px))


def notdef_glyph():
    w, h, t = round(EM * 0.5), round(EM * 0.7), max(2, round(EM * 0.07))
    img = Image.new("L", (w, h), 0)
    ImageDraw.Draw(img).rectangle((0, 0, w - 1, h - 1), outline=255, width=t)
    return (0, w, h, round(EM * 0.06), -h, EM * 0.62, img.tobytes())


def main():
    parser = argparse.ArgumentParser(description=f"Writes {RESOURCE} and prints its SHA-256.")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--output", metavar="PATH", default=os.path.join(ROOT, RESOURCE),
                      help=f"where to write the atlas (default: {RESOURCE})")
    mode.add_argument("--check", action="store_true", help=f"exit 1 when the committed {RESOURCE} differs")
    args = parser.parse_args()

    labels = json.load(open(os.path.join(ROOT, "nutrition-db", "labels.json"), encoding="utf-8"))["labels"]
    latin = ImageFont.truetype(LATIN_FONT, EM)
    cjk = cjk_font()
    emoji_font = ImageFont.truetype(EMOJI_FONT, EMOJI_NATIVE)

    glyphs = {"": notdef_glyph()}
    for cp in list(range(0x20, 0x7F)) + list(range(0xA0, 0x100)):
        glyphs[chr(cp)] = mask_glyph(latin, chr(cp))
    for ch in EXTRA_PUNCTUATION:
        glyphs[ch] = mask_glyph(latin, ch)
    for ch in sorted({c for l in labels for c in l["name_zh"]}):
        if ch not in glyphs:
            glyphs[ch] = mask_glyph(cjk, ch)
    for e in sorted({l["emoji"] for l in labels} | {"🍽️", "❓"}):
        key = e.replace("\ufe0f", "")
        glyphs[key] = emoji_glyph(emoji_font, key, latin)

    ascent, descent = latin.getmetrics()
    blob = bytearray(b"FMGA") + struct.pack("<BHHHH", 1, EM, ascent, descent, len(glyphs))
    for key, (kind, w, h, left, top, advance, data) in glyphs.items():
        k = key.encode("utf-8")
        packed = rle(data)
        blob += struct.pack("<B", len(k)) + k
        blob += struct.pack("<BHHhhHI", kind, w, h, left, top, round(advance * 64), len(packed)) + packed

    blob = bytes(blob)
    digest = hashlib.sha256(blob).hexdigest()
    summary = f"{len(glyphs)} glyphs at {EM} px, {len(blob)} bytes, SHA-256 {digest}"
    if args.check:
        with open(os.path.join(ROOT, RESOURCE), "rb") as f:
            if f.read() != blob:
                sys.exit(f"{RESOURCE} differs from a fresh rasterisation ({summary}); run tools/glyphs/make_glyph_atlas.py")
        print(f"{RESOURCE} is up to date ({summary})", file=sys.stderr)
        return
    with open(args.output, "wb") as f:
        f.write(blob)
    print(f"wrote {args.output}: {summary}", file=sys.stderr)
    print(f"Put this in {CHECKSUM_SWIFT} (GlyphAtlas.embeddedSHA256):", file=sys.stderr)
    print(f'    public static let embeddedSHA256 = "{digest}"')


main()
