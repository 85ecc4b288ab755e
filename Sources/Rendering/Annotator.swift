public import FoodCore

/// One food to draw on a photo.
public struct Annotation: Sendable, Equatable {
    public var box: NormalizedBox
    public var color: RGBColor
    public var emoji: String
    public var name: String
    /// Chinese name; left out of the label when empty.
    public var nameZh: String
    public var grams: Double?
    public var kcal: Double?

    public init(box: NormalizedBox, color: RGBColor, emoji: String = "", name: String, nameZh: String = "",
                grams: Double? = nil, kcal: Double? = nil) {
        self.box = box; self.color = color; self.emoji = emoji; self.name = name; self.nameZh = nameZh
        self.grams = grams; self.kcal = kcal
    }

    /// The title part of the label: `🍚 Rice · 米饭`.
    public var title: String {
        var parts: [String] = []
        let n = name.trimmingSpaces
        let head = emoji.isEmpty ? String(n) : (n.isEmpty ? emoji : "\(emoji) \(n)")
        if !head.isEmpty { parts.append(head) }
        let zh = nameZh.trimmingSpaces
        if !zh.isEmpty { parts.append(String(zh)) }
        return parts.joined(separator: " · ")
    }

    /// The amounts part: `180 g · 234 kcal` (empty when neither is known).
    public var amounts: String {
        var parts: [String] = []
        if let grams, grams.isFinite { parts.append("\(Int(grams.rounded())) g") }
        if let kcal, kcal.isFinite { parts.append("\(Int(kcal.rounded())) kcal") }
        return parts.joined(separator: " · ")
    }

    /// The whole label on one line: `🍚 Rice · 米饭 180 g · 234 kcal`.
    public var label: String {
        [title, amounts].filter { !$0.isEmpty }.joined(separator: " ")
    }
}

/// Sizes as fractions of the image's shorter side, so labels read the same on 224 px and 4032 px photos.
public struct AnnotationStyle: Sendable, Equatable {
    /// Box outline width.
    public var lineWidthFraction = 1.0 / 250
    public var minimumLineWidth = 2
    /// Label text size (em).
    public var textSizeFraction = 0.03
    public var minimumTextSize = 10.0
    /// Opacity of the label chip's fill.
    public var chipOpacity = 0.9

    public init() {}

    public func lineWidth(imageWidth: Int, imageHeight: Int) -> Int {
        max(minimumLineWidth, Int((Double(min(imageWidth, imageHeight)) * lineWidthFraction).rounded()))
    }

    public func textSize(imageWidth: Int, imageHeight: Int) -> Double {
        max(minimumTextSize, (Double(min(imageWidth, imageHeight)) * textSizeFraction).rounded())
    }
}

/// Where one annotation lands.
public struct AnnotationLayout: Sendable, Equatable {
    public enum Placement: String, Sendable {
        /// Above the box, its bottom on the box's top edge.
        case above
        /// Inside the box at its top (the box touches the image's top edge).
        case inside
        /// Below the box.
        case below
    }

    /// The box outline's outer edge.
    public var box: PixelRect
    public var lineWidth: Int
    /// The label chip (always inside the image when the image is at least as large as the chip).
    public var chip: PixelRect
    public var placement: Placement
    /// The label's lines (one, or title and amounts on two when one line does not fit the image).
    public var lines: [String]
    public var textSize: Double
    public var textColor: RGBColor
}

/// Draws food boxes and their label chips (`🍚 Rice · 米饭 180 g · 234 kcal`) on a photo.
public struct Annotator: Sendable {
    public var style: AnnotationStyle
    public let text: TextRenderer

    public init(style: AnnotationStyle = .init(), atlas: GlyphAtlas = .embedded) {
        self.style = style
        self.text = TextRenderer(atlas: atlas)
    }

    /// Where each annotation's box and chip go on a `width × height` image, in order. Chips avoid the image
    /// border and, where they can, each other: above the box, else inside it at the top, else below it.
    public func layout(_ annotations: [Annotation], imageWidth width: Int, imageHeight height: Int) -> [AnnotationLayout] {
        let lineWidth = style.lineWidth(imageWidth: width, imageHeight: height)
        let size = style.textSize(imageWidth: width, imageHeight: height)
        var placed: [PixelRect] = []
        var result: [AnnotationLayout] = []
        for a in annotations {
            let box = PixelRect(a.box, imageWidth: width, imageHeight: height)
            let lines = fitLines(a, size: size, maxWidth: width)
            let chipSize = self.chipSize(lines, size: size)
            let x = max(0, min(box.x, width - chipSize.width))
            func at(_ y: Int) -> PixelRect {
                PixelRect(x: x, y: max(0, min(y, height - chipSize.height)), width: chipSize.width, height: chipSize.height)
            }
            let candidates: [(AnnotationLayout.Placement, Int)] = [
                (.above, box.y - chipSize.height), (.inside, box.y), (.below, box.maxY),
            ]
            let fitting = candidates.filter { $0.1 >= 0 && $0.1 + chipSize.height <= height }
            let choice = fitting.first { c in !placed.contains { $0.intersects(at(c.1)) } }
                ?? fitting.first ?? (.inside, box.y)
            let chip = at(choice.1)
            placed.append(chip)
            result.append(AnnotationLayout(box: box, lineWidth: lineWidth, chip: chip, placement: choice.0,
                                           lines: lines, textSize: size, textColor: a.color.contrastingText))
        }
        return result
    }

    /// Draws every box, then every chip (so labels stay readable over other boxes).
    public func annotate(_ image: inout RGBImage, _ annotations: [Annotation]) {
        guard image.width > 0, image.height > 0 else { return }
        let layouts = layout(annotations, imageWidth: image.width, imageHeight: image.height)
        for l in layouts where !l.box.isEmpty {
            // A faint dark halo either side of the outline keeps light colours visible on light food.
            let halo = max(1, l.lineWidth / 3)
            image.stroke(l.box.insetBy(-halo), color: .black, thickness: l.lineWidth + 2 * halo, opacity: 0.3)
        }
        for (a, l) in zip(annotations, layouts) {
            image.stroke(l.box, color: a.color, thickness: l.lineWidth)
        }
        var cache = ScaledGlyphCache()
        for (a, l) in zip(annotations, layouts) {
            image.fillRoundedRect(l.chip, radius: l.textSize * 0.3, color: a.color, opacity: style.chipOpacity)
            let padding = self.padding(l.textSize)
            var top = l.chip.y + padding.vertical
            for line in l.lines {
                let extent = text.measure(line, size: l.textSize)
                _ = text.draw(line, into: &image, x: l.chip.x + padding.horizontal - extent.minX, baseline: top - extent.minY,
                          size: l.textSize, color: l.textColor, cache: &cache)
                top += extent.height
            }
        }
    }

    /// A copy of `image` with the annotations drawn.
    public func annotated(_ image: RGBImage, _ annotations: [Annotation]) -> RGBImage {
        var copy = image
        annotate(&copy, annotations)
        return copy
    }

    private func padding(_ size: Double) -> (horizontal: Int, vertical: Int) {
        (Int((size * 0.4).rounded()), Int((size * 0.15).rounded()))
    }

    private func chipSize(_ lines: [String], size: Double) -> (width: Int, height: Int) {
        let p = padding(size)
        var w = 0, h = 0
        for line in lines {
            let e = text.measure(line, size: size)
            w = max(w, e.width); h += e.height
        }
        return (w + 2 * p.horizontal, h + 2 * p.vertical)
    }

    /// One line when it fits the image, else title and amounts on two lines, the title shortened with `…` if needed.
    private func fitLines(_ a: Annotation, size: Double, maxWidth: Int) -> [String] {
        let room = maxWidth - 2 * padding(size).horizontal
        let one = a.label
        if text.measure(one, size: size).width <= room || a.amounts.isEmpty || a.title.isEmpty {
            return [shorten(one, size: size, room: room)]
        }
        return [shorten(a.title, size: size, room: room), shorten(a.amounts, size: size, room: room)]
    }

    private func shorten(_ line: String, size: Double, room: Int) -> String {
        guard text.measure(line, size: size).width > room else { return line }
        var characters = Array(line)
        while !characters.isEmpty {
            characters.removeLast()
            let candidate = String(String(characters).trimmingSpaces) + "…"
            if text.measure(candidate, size: size).width <= room { return candidate }
        }
        return ""
    }
}
