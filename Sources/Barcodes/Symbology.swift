/// EAN/UPC character tables, shared by the decoder and the encoder.
///
/// Widths are in modules, in the order the elements are met reading left to right. Left-half characters start
/// with a space (L = odd parity, G = even parity), right-half characters with a bar (R, same widths as L).
enum Symbology {
    /// L (odd-parity) widths: space, bar, space, bar.
    static let lWidths: [[Int]] = [
        [3, 2, 1, 1], [2, 2, 2, 1], [2, 1, 2, 2], [1, 4, 1, 1], [1, 1, 3, 2],
        [1, 2, 3, 1], [1, 1, 1, 4], [1, 3, 1, 2], [1, 2, 1, 3], [3, 1, 1, 2],
    ]
    /// G (even-parity) widths: the L widths reversed.
    static let gWidths: [[Int]] = lWidths.map { Array($0.reversed()) }

    /// EAN-13 first digit → parity of the six left characters (true = G / even), indexed by first digit.
    static let ean13Parity: [[Bool]] = [
        "LLLLLL", "LLGLGG", "LLGGLG", "LLGGGL", "LGLLGG", "LGGLLG", "LGGGLL", "LGLGLG", "LGLGGL", "LGGLGL",
    ].map { $0.map { $0 == "G" } }

    /// UPC-E number system 0: check digit → parity of the six characters (true = G / even). System 1 is the complement.
    static let upceParityNS0: [[Bool]] = [
        "GGGLLL", "GGLGLL", "GGLLGL", "GGLLLG", "GLGGLL", "GLLGGL", "GLLLGG", "GLGLGL", "GLGLLG", "GLLGLG",
    ].map { $0.map { $0 == "G" } }

    /// The EAN-13 first digit encoded by a left-half parity pattern, or nil when no digit has that pattern.
    static func ean13FirstDigit(parity: [Bool]) -> Int? {
        ean13Parity.firstIndex(of: parity)
    }

    /// (number system, check digit) encoded by a UPC-E parity pattern, or nil.
    static func upceSystemAndCheck(parity: [Bool]) -> (Int, Int)? {
        if let c = upceParityNS0.firstIndex(of: parity) { return (0, c) }
        let flipped = parity.map { !$0 }
        if let c = upceParityNS0.firstIndex(of: flipped) { return (1, c) }
        return nil
    }
}

/// Turns a validated code into its sequence of modules (true = bar), guards included, quiet zones excluded.
///
/// Used to print test symbols and by callers that want to render a code; GTIN-14 has no EAN/UPC symbol.
public enum BarcodeEncoder {
    public static func modules(for code: GTIN) -> [Bool]? {
        let v = code.digits.map { Int($0.asciiValue! - 48) }
        var out: [Bool] = []
        func put(_ widths: [Int], startWithBar: Bool) {
            var bar = startWithBar
            for w in widths {
                out.append(contentsOf: repeatElement(bar, count: w))
                bar.toggle()
            }
        }
        let guardWidths = [1, 1, 1], middle = [1, 1, 1, 1, 1]
        switch code.format {
        case .ean13, .upcA:
            let d = code.format == .upcA ? [0] + v : v
            let parity = Symbology.ean13Parity[d[0]]
            put(guardWidths, startWithBar: true)
            for i in 0..<6 { put(parity[i] ? Symbology.gWidths[d[1 + i]] : Symbology.lWidths[d[1 + i]], startWithBar: false) }
            put(middle, startWithBar: false)
            for i in 0..<6 { put(Symbology.lWidths[d[7 + i]], startWithBar: true) }
            put(guardWidths, startWithBar: true)
        case .ean8:
            put(guardWidths, startWithBar: true)
            for i in 0..<4 { put(Symbology.lWidths[v[i]], startWithBar: false) }
            put(middle, startWithBar: false)
            for i in 4..<8 { put(Symbology.lWidths[v[i]], startWithBar: true) }
            put(guardWidths, startWithBar: true)
        case .upcE:
            var parity = Symbology.upceParityNS0[v[7]]
            if v[0] == 1 { parity = parity.map { !$0 } }
            put(guardWidths, startWithBar: true)
            for i in 0..<6 { put(parity[i] ? Symbology.gWidths[v[1 + i]] : Symbology.lWidths[v[1 + i]], startWithBar: false) }
            put([1, 1, 1, 1, 1, 1], startWithBar: false)
        case .gtin14:
            return nil
        }
        return out
    }
}
