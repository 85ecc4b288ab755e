/// Parsing portion text ("150 g", "5 oz", "1 cup sliced", "2 slices", "1 medium") and turning it into grams.
///
/// * Mass: g, kg, mg, oz (avoirdupois, 28.349523125 g), lb (453.59237 g) — converted directly.
/// * Volume: ml, l, tsp, tbsp, cup, fl oz, pint, quart — **US customary** (cup 236.588 ml, fl oz 29.574 ml,
///   tbsp 14.787 ml, tsp 4.929 ml), the measures USDA portion weights were taken with. US nutrition
///   *labels* round these (cup 240 ml, fl oz 30 ml, tbsp 15 ml, tsp 5 ml; 21 CFR 101.9(b)(5)(viii)), a
///   difference of at most 1.5 %. Volume becomes grams only through the food's own portion table: the
///   same measure scaled ("2 cups" from "1 cup = 150 g"), or a density taken from another volume portion.
/// * Counts (piece, slice, medium, large, banana, …) come from the food's portion table by word match.
/// Anything else is refused with the portions the food does have — never a silent 100 g.
public enum Portions {
    public enum UnitKind: Sendable, Equatable { case mass, volume }

    /// Grams per unit (mass) or millilitres per unit (volume), keyed by folded unit words.
    static let units: [(words: [String], kind: UnitKind, factor: Double)] = [
        (["fl", "oz"], .volume, 29.5735295625), (["fluid", "ounce"], .volume, 29.5735295625), (["fluid", "ounces"], .volume, 29.5735295625),
        (["g"], .mass, 1), (["gram"], .mass, 1), (["grams"], .mass, 1), (["gr"], .mass, 1), (["grammes"], .mass, 1),
        (["kg"], .mass, 1000), (["kilogram"], .mass, 1000), (["kilograms"], .mass, 1000), (["kgs"], .mass, 1000),
        (["mg"], .mass, 0.001), (["milligram"], .mass, 0.001), (["milligrams"], .mass, 0.001),
        (["oz"], .mass, 28.349523125), (["ounce"], .mass, 28.349523125), (["ounces"], .mass, 28.349523125),
        (["lb"], .mass, 453.59237), (["lbs"], .mass, 453.59237), (["pound"], .mass, 453.59237), (["pounds"], .mass, 453.59237),
        (["ml"], .volume, 1), (["milliliter"], .volume, 1), (["milliliters"], .volume, 1), (["millilitre"], .volume, 1), (["millilitres"], .volume, 1),
        (["cl"], .volume, 10), (["dl"], .volume, 100),
        (["l"], .volume, 1000), (["liter"], .volume, 1000), (["liters"], .volume, 1000), (["litre"], .volume, 1000), (["litres"], .volume, 1000),
        (["tsp"], .volume, 4.92892159375), (["teaspoon"], .volume, 4.92892159375), (["teaspoons"], .volume, 4.92892159375),
        (["tbsp"], .volume, 14.78676478125), (["tablespoon"], .volume, 14.78676478125), (["tablespoons"], .volume, 14.78676478125), (["tbs"], .volume, 14.78676478125),
        (["cup"], .volume, 236.5882365), (["cups"], .volume, 236.5882365), (["c"], .volume, 236.5882365),
        (["pint"], .volume, 473.176473), (["pints"], .volume, 473.176473), (["pt"], .volume, 473.176473),
        (["quart"], .volume, 946.352946), (["quarts"], .volume, 946.352946), (["qt"], .volume, 946.352946),
    ]

    /// A parsed portion: quantity and the unit words that follow it.
    public struct Parsed: Sendable, Equatable {
        public var quantity: Double
        /// Folded unit words ("cup", "sliced"), possibly empty.
        public var words: [String]
        /// A recognised mass or volume unit and its factor (g or ml per unit).
        public var unit: (kind: UnitKind, factor: Double, wordCount: Int)?

        public static func == (a: Parsed, b: Parsed) -> Bool {
            a.quantity == b.quantity && a.words == b.words && a.unit?.kind == b.unit?.kind && a.unit?.factor == b.unit?.factor
        }
    }

    /// Splits "1 1/2 cups, sliced" into (1.5, "cups, sliced"); (1, text) when there is no leading amount.
    public static func splitLeadingAmount(_ text: String) -> (Double, String) {
        let t = text.trimmingSpaces
        var words = t.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        guard let first = words.first, let a = number(first) else { return (1, t) }
        var amount = a
        words.removeFirst()
        if let second = words.first, second.contains("/") || vulgar[second] != nil, let b = number(second), b < 1 {
            amount += b; words.removeFirst()
        }
        return (amount, words.joined(separator: " "))
    }

    private static let vulgar: [String: Double] = ["½": 0.5, "¼": 0.25, "¾": 0.75, "⅓": 1.0 / 3, "⅔": 2.0 / 3, "⅛": 0.125]
    private static let numberWords: [String: Double] = ["a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "half": 0.5, "quarter": 0.25]

    private static func number(_ s: String) -> Double? {
        if let v = vulgar[s] { return v }
        if let d = Double(s), d.isFinite { return d }
        let parts = s.split(separator: "/")
        if parts.count == 2, let n = Double(parts[0]), let d = Double(parts[1]), d != 0 { return n / d }
        if s.count > 1, let v = vulgar[String(s.last!)], let whole = Double(s.dropLast()) { return whole + v }
        return nil
    }

    /// Parses user text. Throws for text without any unit ("150") or with a non-positive quantity.
    public static func parse(_ text: String) throws(NutritionError) -> Parsed {
        // Separate glued numbers and units: "150g" -> "150 g", "5oz" -> "5 oz".
        var spaced = ""
        var prev: Character = " "
        for ch in text.lowercased() {
            if (prev.isNumber && ch.isLetter) || (prev.isLetter && ch.isNumber) { spaced.append(" ") }
            spaced.append(ch == "," ? " " : ch)
            prev = ch
        }
        var raw = spaced.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        guard !raw.isEmpty else { throw .unparsablePortion(text) }
        var quantity = 1.0
        if let q = number(raw[0]) {
            quantity = q
            raw.removeFirst()
            if let next = raw.first, next.contains("/") || vulgar[next] != nil, let f = number(next), f < 1 {
                quantity += f; raw.removeFirst()
            }
            if raw.first == "x" || raw.first == "×" { raw.removeFirst() }
        } else if let w = numberWords[raw[0]] {
            quantity = w
            raw.removeFirst()
            if raw.first == "a" || raw.first == "an" { raw.removeFirst() } // "half a cup"
        }
        guard quantity.isFinite, quantity > 0 else { throw .invalidQuantity(text) }
        let words = Text.tokens(raw.joined(separator: " ")).filter { $0 != "of" }
        // A unit phrase is words only: "cup 1/" or "150 150 g" are typos, not portions.
        guard !words.isEmpty, !words.contains(where: { $0.unicodeScalars.contains { $0.properties.numericType != nil } }) else {
            throw .unparsablePortion(text)
        }
        var unit: (kind: UnitKind, factor: Double, wordCount: Int)?
        for u in units where words.starts(with: u.words) {
            if unit == nil || u.words.count > unit!.wordCount { unit = (u.kind, u.factor, u.words.count) }
        }
        return Parsed(quantity: quantity, words: words, unit: unit)
    }

    /// The unit of a stored portion ("cup, sliced", "fl oz", "tbsp") when it is a volume measure.
    static func volumeFactor(ofPortionUnit unit: String) -> Double? {
        let words = Text.tokens(unit)
        var best: (Double, Int)?
        for u in units where u.kind == .volume && words.starts(with: u.words) {
            if best == nil || u.words.count > best!.1 { best = (u.factor, u.words.count) }
        }
        return best?.0
    }

    /// Grams for `text` of `food`, using its portion table; throws naming the portions it has when it cannot.
    public static func grams(for food: Food, portion text: String) throws(NutritionError) -> (grams: Double, explanation: String) {
        let p = try parse(text)
        let available = food.portions.map(\.description) + (food.servingGrams.map { ["serving (\(food.servingSize ?? "label")), \(format($0)) g"] } ?? [])
        let refuse = NutritionError.portionNotConvertible(portion: text, food: "\(food.name) [\(food.id)]", available: available)

        if let unit = p.unit, unit.kind == .mass {
            let g = p.quantity * unit.factor
            return (g, "\(format(p.quantity)) \(p.words.prefix(unit.wordCount).joined(separator: " ")) = \(format(g)) g")
        }
        if let unit = p.unit, unit.kind == .volume {
            let rest = Set(p.words.dropFirst(unit.wordCount).map(Text.stem))
            let volumePortions = food.portions.compactMap { q -> (Portion, Double)? in
                volumeFactor(ofPortionUnit: q.unit).map { (q, $0) }
            }
            // Same measure first (scaled directly), then words in common ("cup sliced"), then plain measures.
            let ranked = volumePortions.enumerated().sorted { a, b in
                let ka = rankVolume(a.element, unit.factor, rest), kb = rankVolume(b.element, unit.factor, rest)
                return ka != kb ? ka > kb : a.offset < b.offset
            }
            if let (q, ml) = ranked.first?.element {
                // Same measure: scale the portion directly (exact); otherwise go through its density.
                let g = ml == unit.factor ? p.quantity / q.amount * q.grams : p.quantity * unit.factor * q.grams / (q.amount * ml)
                return (g, "\(format(p.quantity)) \(p.words.joined(separator: " ")) via \"\(q.description)\" = \(format(g)) g")
            }
            throw refuse
        }
        // Counts: "serving" of a product, else the portion whose words match best.
        let words = p.words.map(Text.stem)
        if words.first == "serving", let sg = food.servingGrams {
            let g = p.quantity * sg
            return (g, "\(format(p.quantity)) × serving (\(food.servingSize ?? "label")) = \(format(g)) g")
        }
        let sizeWords: Set<String> = ["small", "large", "extra", "mini", "miniature", "snack", "thin", "thick", "jumbo", "crust", "bite"]
        let userGaveSize = words.contains { sizeWords.contains($0) || $0 == "medium" || $0 == "regular" }
        var best: (score: Int, index: Int)?
        // The user's count word, then the words the tables use for the same thing ("slice" of pizza is FNDDS's
        // "piece"), so that the help's own example works.
        let heads = words.first.map { [$0] + (countSynonyms[$0] ?? []) } ?? []
        for head in heads where best == nil {
        for (i, q) in food.portions.enumerated() where volumeFactor(ofPortionUnit: q.unit) == nil {
            let qw = Text.tokens(q.unit).map(Text.stem)
            guard qw.contains(head) else { continue }
            var score = qw.first == head ? 20 : 0
            score += words.dropFirst().filter { qw.contains($0) }.count * 40
            if !userGaveSize {
                // "2 slices" of bread: the regular slice, not the snack-size one.
                if qw.contains("medium") || qw.contains("regular") { score += 30 }
                if qw.contains(where: { sizeWords.contains($0) }) { score -= 20 }
            }
            score -= qw.count // plainer descriptions first
            if best == nil || score > best!.score { best = (score, i) }
        }
        }
        if let best {
            let q = food.portions[best.index]
            let g = p.quantity / q.amount * q.grams
            return (g, "\(format(p.quantity)) × \"\(q.unit)\" (\(format(q.grams / q.amount)) g each) = \(format(g)) g")
        }
        throw refuse
    }

    /// Count words the portion tables spell differently (stemmed, as `Text.stem` leaves them).
    static let countSynonyms: [String: [String]] = [
        "slice": ["piece"], "piece": ["slice"], "pc": ["piece", "slice"], "pcs": ["piece", "slice"],
        "wedge": ["piece", "slice"], "serving": ["piece"],
    ]

    private static func rankVolume(_ e: (Portion, Double), _ factor: Double, _ rest: Set<String>) -> Int {
        let words = Text.tokens(e.0.unit).map(Text.stem)
        var k = 0
        if abs(e.1 - factor) < 1e-9 { k += 100 }
        k += words.filter { rest.contains($0) }.count * 10
        if words.count <= 2 { k += 5 } // "cup", "fl oz": plain measures before "cup, mashed"
        return k
    }

    /// Compact number text: 118, 0.5, 28.35.
    public static func format(_ v: Double) -> String {
        if v == v.rounded(), abs(v) < 1e9 { return String(Int(v)) }
        var s = String(format2(v))
        while s.hasSuffix("0") { s.removeLast() }
        if s.hasSuffix(".") { s.removeLast() }
        return s
    }

    private static func format2(_ v: Double) -> String {
        let r = (v * 100).rounded() / 100
        let whole = Int(r)
        let frac = Int((abs(r - Double(whole)) * 100).rounded())
        return "\(r < 0 && whole == 0 ? "-" : "")\(whole).\(frac < 10 ? "0" : "")\(frac)"
    }
}
