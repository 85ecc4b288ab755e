import FoodCore
import Foundation
@testable import Rendering
import Testing

/// The glyph atlas resource (`Sources/CGlyphAtlas/glyph-atlas.fmga`, linked in by the CGlyphAtlas C target) and the
/// checksum `GlyphAtlas` holds it to.
@Suite("Glyph atlas resource")
struct GlyphAtlasResourceTests {
    /// The resource file of this checkout.
    static let resourcePath: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() } // Tests/RenderingTests/<file> -> repository root
        return url.appendingPathComponent("Sources/CGlyphAtlas/glyph-atlas.fmga").path
    }()

    @Test func embeddedAtlasLoadsWithAMatchingChecksum() throws {
        #expect(GlyphAtlas.embeddedLoadError == nil)
        let atlas = try GlyphAtlas.loadEmbedded()
        #expect(atlas.emSize == 40 && atlas.ascent == 38 && atlas.descent == 10)
        #expect(atlas.glyphCount == 570)
        // Latin, a Chinese character of a label name, emoji with and without the presentation selector.
        for c: Character in ["A", "g", "é", "饭", "米", "🍚", "🍽️", "🍽", "❓"] {
            #expect(atlas.covers(c), "no glyph for \(c)")
        }
        #expect(!atlas.covers("𝄞"))
        // `embedded` is that same atlas, not the fallback.
        #expect(GlyphAtlas.embedded.glyphCount == atlas.glyphCount)
    }

    @Test func committedResourceHashesToTheRecordedChecksum() throws {
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: Self.resourcePath)))
        #expect(bytes.count == 994_244)
        let digest = SHA256.hexDigest(of: bytes)
        #expect(digest == GlyphAtlas.embeddedSHA256, """
            \(Self.resourcePath) has SHA-256 \(digest); after regenerating it with tools/glyphs/make_glyph_atlas.py, \
            set GlyphAtlas.embeddedSHA256 to that value
            """)
        // The file parses to the same atlas as the compiled-in copy.
        let fromFile = try GlyphAtlas(bytes: bytes)
        #expect(fromFile.glyphCount == GlyphAtlas.embedded.glyphCount && fromFile.emSize == GlyphAtlas.embedded.emSize)
    }

    @Test func bytesThatDoNotMatchTheChecksumAreRefused() throws {
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: Self.resourcePath)))
        // Ascent 38 -> 39 (byte 7): still a well-formed atlas, so only the checksum catches the change.
        bytes[7] ^= 0x01
        #expect(try GlyphAtlas(bytes: bytes).ascent == 39)
        let error = #expect(throws: RenderingError.self) {
            try GlyphAtlas(embeddedBytes: bytes, sha256: GlyphAtlas.embeddedSHA256)
        }
        let message = error.map { "\($0)" } ?? ""
        #expect(message.contains("SHA-256") && message.contains(GlyphAtlas.embeddedSHA256), "\(message)")
        let intact = try [UInt8](Data(contentsOf: URL(fileURLWithPath: Self.resourcePath)))
        #expect(try GlyphAtlas(embeddedBytes: intact, sha256: GlyphAtlas.embeddedSHA256).glyphCount == 570)
    }

    @Test func fallbackAtlasDrawsBoxes() {
        let atlas = GlyphAtlas.boxesOnly
        #expect(atlas.glyphCount == 1 && !atlas.covers("A") && atlas.emSize == 40)
        let renderer = TextRenderer(atlas: atlas)
        var img = canvas(60, 30)
        let drawn = renderer.draw("Ab", into: &img, x: 4, baseline: 24, size: 20, color: .white)
        #expect(drawn.width > 0)
        #expect(!changedPixels(canvas(60, 30), img).isEmpty)
    }
}
