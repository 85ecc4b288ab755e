import FoodCore
import Rendering
import Testing

let rice = Annotation(box: NormalizedBox(x: 0.25, y: 0.25, w: 0.5, h: 0.5), color: RGBColor(r: 0xF4, g: 0xD3, b: 0x5E),
                      emoji: "🍚", name: "Rice", nameZh: "米饭", grams: 180, kcal: 234.4)

@Suite("Annotator")
struct AnnotatorTests {
    @Test func labelText() {
        #expect(rice.label == "🍚 Rice · 米饭 180 g · 234 kcal")
        #expect(Annotation(box: .whole, color: .black, name: "Tea").label == "Tea")
        #expect(Annotation(box: .whole, color: .black, emoji: "🍵", name: "Tea", grams: 240).label == "🍵 Tea 240 g")
    }

    @Test(arguments: [(224, 224), (400, 300), (640, 480), (3024, 4032)])
    func boxPixelsCarryTheFoodColour(width: Int, height: Int) {
        let original = canvas(width, height)
        let out = Annotator().annotated(original, [rice])
        #expect(out.width == width && out.height == height)
        let l = Annotator().layout([rice], imageWidth: width, imageHeight: height)[0]
        let x0 = Int((0.25 * Double(width)).rounded()), x1 = Int((0.75 * Double(width)).rounded())
        let y0 = Int((0.25 * Double(height)).rounded()), y1 = Int((0.75 * Double(height)).rounded())
        #expect(l.box == PixelRect(x: x0, y: y0, width: x1 - x0, height: y1 - y0))
        let t = l.lineWidth
        #expect(t == max(2, Int((Double(min(width, height)) / 250).rounded())))
        let midY = (y0 + y1) / 2, midX = (x0 + x1) / 2
        // Left, right and bottom edges (the chip sits above the top edge): every pixel across the outline.
        for k in 0..<t {
            #expect(color(out, x0 + k, midY) == rice.color, "left edge at \(x0 + k)")
            #expect(color(out, x1 - 1 - k, midY) == rice.color, "right edge at \(x1 - 1 - k)")
            #expect(color(out, midX, y1 - 1 - k) == rice.color, "bottom edge at \(y1 - 1 - k)")
        }
        // Just outside and just inside the outline: not the food colour.
        for (x, y) in [(x0 - 1, midY), (x0 + t, midY), (x1, midY), (x1 - 1 - t, midY), (midX, y1), (midX, y1 - 1 - t)] {
            #expect(color(out, x, y) != rice.color, "pixel \(x),\(y) should not be the outline")
        }
        #expect(color(out, midX, midY) == grey)
        // The chip sits on the top edge, inside the image.
        #expect(l.placement == .above && l.chip.maxY == y0 && out.bounds.contains(l.chip))
    }

    @Test func textIsDrawnInsideTheChipOnly() {
        let size = (w: 640, h: 480)
        let l = Annotator().layout([rice], imageWidth: size.w, imageHeight: size.h)[0]
        // Same chip with no text: the difference is the text, and it stays inside the chip.
        var plain = canvas(size.w, size.h)
        plain.fillRoundedRect(l.chip, radius: l.textSize * 0.3, color: rice.color, opacity: Annotator().style.chipOpacity)
        var boxes = plain
        let halo = max(1, l.lineWidth / 3)
        boxes.stroke(l.box.insetBy(-halo), color: .black, thickness: l.lineWidth + 2 * halo, opacity: 0.3)
        boxes.stroke(l.box, color: rice.color, thickness: l.lineWidth)
        boxes.fillRoundedRect(l.chip, radius: l.textSize * 0.3, color: rice.color, opacity: Annotator().style.chipOpacity)
        let out = Annotator().annotated(canvas(size.w, size.h), [rice])
        let text = changedPixels(boxes, out)
        #expect(text.count > 200, "the label drew \(text.count) pixels")
        for p in text { #expect(l.chip.contains(x: p.x, y: p.y), "text pixel \(p.x),\(p.y) outside the chip \(l.chip)") }
        // Dark text on the yellow chip.
        #expect(text.contains { color(out, $0.x, $0.y).r < 80 })
    }

    @Test(arguments: [
        NormalizedBox(x: 0, y: 0, w: 0.4, h: 0.3),          // top-left corner: label goes inside
        NormalizedBox(x: 0.8, y: 0.5, w: 0.2, h: 0.5),      // right and bottom edges
        NormalizedBox(x: 0.9, y: 0.9, w: 0.5, h: 0.5),      // partly outside
        NormalizedBox(x: -0.3, y: -0.3, w: 0.2, h: 0.2),    // wholly outside
        NormalizedBox(x: 0.5, y: 0.5, w: 0, h: 0),          // empty
        NormalizedBox(x: 0, y: 0, w: 1, h: 1),              // the whole image
        NormalizedBox(x: .nan, y: .infinity, w: -1, h: .nan),
    ])
    func chipsStayInsideAndNothingCrashes(_ box: NormalizedBox) {
        var a = rice
        a.box = box
        for (w, h) in [(640, 480), (224, 224), (1, 1), (0, 0), (3, 2000)] {
            var img = canvas(w, h)
            Annotator().annotate(&img, [a, a])
            #expect(img.width == w && img.height == h)
            guard w >= 224 else { continue }
            let ls = Annotator().layout([a], imageWidth: w, imageHeight: h)
            #expect(img.bounds.contains(ls[0].chip), "chip \(ls[0].chip) leaves the \(w)x\(h) image")
        }
    }

    @Test func topEdgeFlipsInsideAndChipsAvoidEachOther() {
        var a = rice, b = rice
        a.box = NormalizedBox(x: 0.1, y: 0, w: 0.5, h: 0.5)
        b.box = NormalizedBox(x: 0.12, y: 0.02, w: 0.5, h: 0.5)
        let ls = Annotator().layout([a, b], imageWidth: 800, imageHeight: 600)
        #expect(ls[0].placement == .inside && ls[0].chip.y == 0)
        #expect(!ls[0].chip.intersects(ls[1].chip))
    }

    @Test func longLabelsWrapOrShortenToFitSmallImages() {
        var a = rice
        a.name = "Accompaniment (chutney, pickle) with a very long user-typed description"
        let l = Annotator().layout([a], imageWidth: 224, imageHeight: 224)[0]
        #expect(l.lines.count == 2 && l.lines[0].hasSuffix("…") && l.lines[1] == "180 g · 234 kcal")
        #expect(l.chip.width <= 224)
    }
}
