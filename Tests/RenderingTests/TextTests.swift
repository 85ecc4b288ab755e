import FoodCore
import Foundation
import Rendering
import Testing

/// `nutrition-db/labels.json` of this checkout.
func labelsFile() throws -> [[String: Any]] {
    var url = URL(fileURLWithPath: #filePath)
    for _ in 0..<3 { url.deleteLastPathComponent() }
    let data = try Data(contentsOf: url.appendingPathComponent("nutrition-db/labels.json"))
    let root = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    return try #require(root["labels"] as? [[String: Any]])
}

@Suite("Glyph atlas and text")
struct TextTests {
    @Test func embeddedAtlasCoversEveryLabel() throws {
        let atlas = GlyphAtlas.embedded
        #expect(atlas.emSize == 40 && atlas.ascent > 0 && atlas.descent > 0)
        for label in try labelsFile() {
            let text = "\(label["name"] as? String ?? "") \(label["name_zh"] as? String ?? "") \(label["emoji"] as? String ?? "")"
            for c in text { #expect(atlas.covers(c), "no glyph for \(c) (\(label["label"] ?? ""))") }
        }
        for c in "0123456789 g·kcal🍽️❓…éñü" { #expect(atlas.covers(c), "no glyph for \(c)") }
        #expect(!atlas.covers("𝄞"))
    }

    @Test(arguments: [
        [UInt8](), Array("FMGB".utf8) + [1, 0, 0], Array("FMGA".utf8) + [2, 40, 0, 38, 0, 10, 0, 0, 0],
        Array("FMGA".utf8) + [1, 40, 0, 38, 0, 10, 0, 1, 0],          // one glyph announced, none there
        Array("FMGA".utf8) + [1, 40, 0, 38, 0, 10, 0, 0, 0],          // no missing-glyph box
        Array("FMGA".utf8) + [1, 40, 0, 38, 0, 10, 0, 1, 0, 0, 0, 2, 0, 2, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 9, 1], // runs overflow
    ])
    func corruptAtlasIsRefused(_ bytes: [UInt8]) {
        #expect(throws: RenderingError.self) { try GlyphAtlas(bytes: bytes) }
    }

    @Test(arguments: [7.0, 10, 13, 40, 97])
    func textDrawsOnlyInsideItsExtent(size: Double) {
        let renderer = TextRenderer()
        let line = "🍚 Rice · 米饭 180 g · 234 kcal j(Qy)"
        var img = canvas(900, 200)
        let drawn = renderer.draw(line, into: &img, x: 20, baseline: 120, size: size, color: .white)
        #expect(drawn == renderer.measure(line, size: size).rect(x: 20, baseline: 120))
        let changed = changedPixels(canvas(900, 200), img)
        #expect(changed.count > Int(size * size / 2), "text drew \(changed.count) pixels")
        for p in changed { #expect(drawn.contains(x: p.x, y: p.y), "pixel \(p.x),\(p.y) outside \(drawn)") }
        // Larger text covers more.
        #expect(drawn.height >= Int(size))
    }

    @Test func textScalesWithSize() {
        let r = TextRenderer()
        let small = r.measure("Rice 180 g", size: 10), big = r.measure("Rice 180 g", size: 100)
        #expect(abs(Double(big.width) / Double(small.width) - 10) < 1.5)
    }

    @Test func unknownCharactersDrawABoxAndTextClipsAtTheBorder() {
        let r = TextRenderer()
        var img = canvas(30, 20)
        r.draw("𝄞", into: &img, x: 5, baseline: 15, size: 16, color: .white)
        #expect(!changedPixels(canvas(30, 20), img).isEmpty)
        var tiny = canvas(1, 1)
        r.draw("Accompaniment 🫙 佐餐小菜", into: &tiny, x: -30, baseline: 5, size: 200, color: .black)
        var empty = canvas(0, 0)
        r.draw("x", into: &empty, x: 0, baseline: 0, size: 12, color: .black)
        #expect(tiny.pixels.count == 3 && empty.pixels.isEmpty)
        r.draw("x", into: &img, x: 0, baseline: 0, size: .nan, color: .black)
        r.draw("", into: &img, x: 0, baseline: 0, size: 12, color: .black)
    }
}
