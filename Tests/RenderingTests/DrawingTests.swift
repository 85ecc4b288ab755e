import FoodCore
import Rendering
import Testing

let grey = RGBColor(r: 128, g: 128, b: 128)

func canvas(_ w: Int, _ h: Int) -> RGBImage {
    RGBImage(width: w, height: h, fill: (grey.r, grey.g, grey.b))
}

func color(_ image: RGBImage, _ x: Int, _ y: Int) -> RGBColor {
    let p = image[x, y]
    return RGBColor(r: p.r, g: p.g, b: p.b)
}

/// Pixels that differ between two images of one size.
func changedPixels(_ a: RGBImage, _ b: RGBImage) -> [(x: Int, y: Int)] {
    var out: [(Int, Int)] = []
    for y in 0..<a.height {
        for x in 0..<a.width where a[x, y] != b[x, y] { out.append((x, y)) }
    }
    return out
}

@Suite("Colours")
struct ColorTests {
    @Test func parsesLabelColours() throws {
        #expect(try RGBColor(hex: "#D62828") == RGBColor(r: 0xD6, g: 0x28, b: 0x28))
        #expect(try RGBColor(hex: "6a994e") == RGBColor(r: 0x6A, g: 0x99, b: 0x4E))
        #expect(try RGBColor(hex: " #fff ") == .white)
        #expect(try RGBColor(hex: "#D62828").hex == "#d62828")
    }

    @Test(arguments: ["", "#", "#12345", "#1234567", "#GG0000", "red", "#12 456"])
    func refusesBadColours(_ text: String) {
        #expect(throws: RenderingError.invalidColor(text)) { try RGBColor(hex: text) }
    }

    @Test func textContrast() throws {
        #expect(try RGBColor(hex: "#F4D35E").contrastingText != .white)  // yellow: dark text
        #expect(try RGBColor(hex: "#1D3557").contrastingText == .white)  // navy: white text
    }
}

@Suite("Drawing primitives")
struct DrawingTests {
    @Test func strokeLandsOnExactPixels() {
        var img = canvas(40, 30)
        let red = RGBColor(r: 200, g: 10, b: 20)
        img.stroke(PixelRect(x: 5, y: 4, width: 20, height: 10), color: red, thickness: 3)
        for y in 0..<30 {
            for x in 0..<40 {
                let inRect = x >= 5 && x < 25 && y >= 4 && y < 14
                let inHole = x >= 8 && x < 22 && y >= 7 && y < 11
                let expected = inRect && !inHole ? red : grey
                #expect(color(img, x, y) == expected, "pixel \(x),\(y)")
            }
        }
    }

    @Test func fillBlendsWithOpacity() {
        var img = canvas(4, 4)
        img.fill(PixelRect(x: 1, y: 1, width: 2, height: 2), color: .white, opacity: 0.5)
        // 128 · (1 − 128/255) + 255 · 128/255, rounded
        #expect(color(img, 1, 1) == RGBColor(r: 192, g: 192, b: 192))
        #expect(color(img, 0, 0) == grey && color(img, 3, 3) == grey)
    }

    @Test func roundedRectHasSoftCornersAndSolidMiddle() {
        var img = canvas(50, 30)
        img.fillRoundedRect(PixelRect(x: 5, y: 5, width: 40, height: 20), radius: 8, color: .black)
        #expect(color(img, 25, 15) == .black)
        #expect(color(img, 5, 15) == .black)                  // middle of the left edge
        #expect(color(img, 5, 5) == grey)                     // the corner pixel is outside the arc
        let edge = color(img, 7, 7)                           // on the arc: partly covered
        #expect(edge.r < grey.r)
        #expect(color(img, 4, 15) == grey && color(img, 45, 15) == grey)
    }

    static let awkwardRects: [PixelRect] = [
        PixelRect(x: -10, y: -10, width: 15, height: 15), PixelRect(x: 95, y: 45, width: 30, height: 30),
        PixelRect(x: -50, y: 10, width: 20, height: 20), PixelRect(x: 200, y: 200, width: 5, height: 5),
        PixelRect(x: 10, y: 10, width: 0, height: 0), PixelRect(x: 10, y: 10, width: -5, height: 7),
        PixelRect(x: -1_000_000, y: -1_000_000, width: 2_000_000, height: 2_000_000), PixelRect(x: 0, y: 0, width: 1, height: 1),
    ]

    @Test(arguments: awkwardRects)
    func everyOperationClips(_ rect: PixelRect) {
        for (w, h) in [(100, 50), (1, 1), (0, 0)] {
            var img = canvas(w, h)
            img.fill(rect, color: .white)
            img.fill(rect, color: .black, opacity: 0.3)
            img.stroke(rect, color: .white, thickness: 4)
            img.stroke(rect, color: .white, thickness: 1_000)
            img.fillRoundedRect(rect, radius: 6, color: .black, opacity: 0.9)
            #expect(img.width == w && img.height == h && img.pixels.count == w * h * 3)
            // Only pixels of the rectangle changed.
            let before = canvas(w, h)
            for p in changedPixels(before, img) { #expect(rect.contains(x: p.x, y: p.y)) }
        }
    }

    @Test func boxesMapToRoundedEdges() {
        let r = PixelRect(NormalizedBox(x: 0.25, y: 0.1, w: 0.5, h: 0.333), imageWidth: 401, imageHeight: 300)
        #expect(r == PixelRect(x: 100, y: 30, width: 201, height: 100)) // 100.25 → 100, 300.75 → 301; 30, 129.9 → 130
        let nan = PixelRect(NormalizedBox(x: .nan, y: 0, w: .infinity, h: 1), imageWidth: 10, imageHeight: 10)
        #expect(nan.x == 0)
    }
}
