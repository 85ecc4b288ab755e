/// Text folding shared by the index builder and the query side, so both see the same tokens.
///
/// Lowercases, folds Latin accents to ASCII ("Crème brûlée" → "creme brulee"), drops apostrophes
/// ("cow's" → "cows"), and treats every other non-alphanumeric scalar as a word break.
package enum Text {
    /// Base letters for U+00C0…U+017F ("" = word break, multi-letter entries for Æ, ß, Œ …).
    private static let latinFold: [String] = {
        let l1 = "a a a a a a ae c e e e e i i i i d n o o o o o _ o u u u u y th ss a a a a a a ae c e e e e i i i i d n o o o o o _ o u u u u y th y"
        let extA = "a a a a a a c c c c c c c c d d d d e e e e e e e e e e g g g g g g g g h h h h i i i i i i i i i i ij ij j j k k k l l l l l l l l l l n n n n n n n n n o o o o o o oe oe r r r r r r s s s s s s s s t t t t t t u u u u u u u u u u u u w w y y y z z z z z z s"
        return (l1 + " " + extA).split(separator: " ").map { $0 == "_" ? "" : String($0) }
    }()

    /// Folded tokens of `s`.
    package static func tokens(_ s: String) -> [String] {
        var out: [String] = []
        var cur = String.UnicodeScalarView()
        func flush() { if !cur.isEmpty { out.append(String(cur)); cur.removeAll() } }
        for u in s.unicodeScalars {
            let v = u.value
            if v < 0x80 {
                switch v {
                case 0x41...0x5A: cur.append(Unicode.Scalar(v + 32)!)
                case 0x61...0x7A, 0x30...0x39: cur.append(u)
                case 0x27: break // apostrophe joins: "cow's" -> "cows"
                default: flush()
                }
            } else if v >= 0xC0, v <= 0x17F {
                let f = latinFold[Int(v - 0xC0)]
                if f.isEmpty { flush() } else { cur.append(contentsOf: f.unicodeScalars) }
            } else if v == 0x2019 || v == 0x2018 {
                continue
            } else if u.properties.isAlphabetic || u.properties.numericType != nil {
                cur.append(contentsOf: u.properties.lowercaseMapping.unicodeScalars)
            } else {
                flush()
            }
        }
        flush()
        return out
    }

    /// Folded text: tokens joined by single spaces.
    package static func normalized(_ s: String) -> String { tokens(s).joined(separator: " ") }

    /// A light English plural stemmer applied to index and query tokens alike
    /// ("apples" → "apple", "berries" → "berry", "tomatoes" → "tomato", "peaches" → "peach").
    package static func stem(_ t: String) -> String {
        guard t.count > 3, t.unicodeScalars.allSatisfy({ $0.isASCII }), t.last == "s" else { return t }
        if t.hasSuffix("ss") || t.hasSuffix("us") || t.hasSuffix("is") { return t }
        if t.hasSuffix("ies") { return String(t.dropLast(3)) + "y" }
        if t.hasSuffix("oes") || t.hasSuffix("ches") || t.hasSuffix("shes") || t.hasSuffix("xes") || t.hasSuffix("sses") {
            return String(t.dropLast(2))
        }
        return String(t.dropLast())
    }

    /// True when the string contains CJK ideographs (routes a query to the Chinese dictionary).
    package static func containsHan(_ s: String) -> Bool {
        s.unicodeScalars.contains { (0x3400...0x9FFF).contains($0.value) || (0xF900...0xFAFF).contains($0.value) }
    }

    /// Damerau-Levenshtein (optimal string alignment) distance is at most 1.
    static func withinOneEdit(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        let la = a.count, lb = b.count
        if abs(la - lb) > 1 { return false }
        var i = 0
        while i < la, i < lb, a[i] == b[i] { i += 1 }
        if i == la && i == lb { return true }
        if la == lb {
            // substitution or adjacent transposition
            if i + 1 < la, a[i] == b[i + 1], a[i + 1] == b[i] {
                return suffixEqual(a, i + 2, b, i + 2)
            }
            return suffixEqual(a, i + 1, b, i + 1)
        }
        return la > lb ? suffixEqual(a, i + 1, b, i) : suffixEqual(a, i, b, i + 1)
    }

    private static func suffixEqual(_ a: UnsafeBufferPointer<UInt8>, _ ia: Int, _ b: UnsafeBufferPointer<UInt8>, _ ib: Int) -> Bool {
        if a.count - ia != b.count - ib { return false }
        var x = ia, y = ib
        while x < a.count { if a[x] != b[y] { return false }; x += 1; y += 1 }
        return true
    }
}
