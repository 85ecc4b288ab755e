/// A code read on one scan line: positions are sample offsets along the line.
struct LineFind {
    let format: BarcodeFormat
    let digits: String
    /// Outer edge of the start guard (in reading direction).
    let start: Float
    /// Outer edge of the end guard.
    let end: Float
    /// Width the quiet zone after the end guard must have, in modules.
    let rightQuietModules: Float
    /// Luma halfway between the darkest bar and the lightest space of the symbol on this line.
    let threshold: Float
    /// The largest T1/T2 deviation of any character from its pattern, in modules: how marginal this read was.
    let worstError: Float
}

/// Decodes EAN/UPC symbols from one luminance profile.
///
/// Buffers are kept between lines so a scan allocates once per image, not once per line.
struct LineDecoder {
    /// Minimum derivative magnitude for an edge (luma units over two samples, scaled to one pixel).
    static let absoluteEdgeThreshold: Float = 6
    /// An edge must reach this fraction of the strongest edge within `relativeWindow` pixels.
    static let relativeEdgeThreshold: Float = 0.18
    static let relativeWindow: Float = 24
    /// Quiet zones must be at least this many modules wide (specification: 7 to 11).
    static let quietZoneModules: Float = 3.5
    /// UPC-E's end guard (010101) ends in a bar, like an EAN-13 middle guard followed by a right character
    /// whose first space can be 4 modules; a wider quiet zone tells them apart.
    static let upceQuietZoneModules: Float = 5.5
    /// Per-character acceptance, in modules: the largest deviation of T1/T2 from the pattern, the margin by which
    /// the best T-class must beat the runner-up, and (1/7, 2/8 only) the deviation of the spread-corrected bar width.
    static let maxEdgeDistanceError: Float = 0.6
    static let maxBarWidthError: Float = 0.95
    /// UPC-E has no check character: its check digit hides in the parity of six characters, so a blurred
    /// symbol whose characters all drift can pass it by chance. Its characters must match more closely.
    static let upceMaxEdgeDistanceError: Float = 0.45
    static let minCharMargin: Float = 0.1

    // Plain flags: a Set lookup hashes the enum's raw string, and this runs for every bar of every line.
    private let ean13: Bool, upcA: Bool, ean8: Bool, upcE: Bool
    /// Differentiate over four samples instead of two: smoother, for noisy profiles (the second pass).
    var wideDerivative = false
    private let edgeThreshold: Float
    private let window: Float
    private var deriv: [Float]
    private var candPos: [Float] = []
    private var candMag: [Float] = []
    private var candSign: [Int8] = []
    private var edges: [Float] = []
    private var edgeSign: [Int8] = []
    private var bounds: [Float] = []
    private var reversed: [Float] = []

    init(capacity: Int, formats: Set<BarcodeFormat>, sampleStep: Float) {
        ean13 = formats.contains(.ean13); upcA = formats.contains(.upcA)
        ean8 = formats.contains(.ean8); upcE = formats.contains(.upcE)
        edgeThreshold = Self.absoluteEdgeThreshold * sampleStep
        window = Self.relativeWindow / sampleStep
        deriv = [Float](repeating: 0, count: capacity)
    }

    /// All codes found on the profile, read in both directions.
    mutating func decode(_ p: UnsafeBufferPointer<Float>) -> [LineFind] {
        let n = p.count
        guard n >= 30 else { return [] }
        findEdges(p)
        guard edges.count >= 20 else { return [] }
        // Element k spans bounds[k]..<bounds[k+1]; the first element lies before the first edge. A falling edge
        // (light to dark) starts a bar.
        bounds.removeAll(keepingCapacity: true)
        bounds.append(0)
        bounds.append(contentsOf: edges)
        bounds.append(Float(n - 1))
        let firstIsBar = edgeSign[0] > 0  // first edge rising: the element before it is dark
        var out: [LineFind] = []
        bounds.withUnsafeBufferPointer { b in decodeElements(b, firstIsBar: firstIsBar, profile: p, into: &out, flip: nil) }
        let m = bounds.count - 1
        reversed.removeAll(keepingCapacity: true)
        for k in 0...m { reversed.append(Float(n - 1) - bounds[m - k]) }
        // The last element of the forward list is the first of the reversed one.
        let lastIsBar = (m - 1) % 2 == 0 ? firstIsBar : !firstIsBar
        reversed.withUnsafeBufferPointer { b in decodeElements(b, firstIsBar: lastIsBar, profile: p, into: &out, flip: Float(n - 1)) }
        return out
    }

    /// Edge positions of a profile (tests and diagnostics).
    mutating func edgePositions(_ p: UnsafeBufferPointer<Float>) -> [Float] {
        findEdges(p)
        return edges
    }

    // MARK: - Edges

    /// Sub-pixel edges: extrema of the central difference, thresholded against the local edge strength,
    /// with signs forced to alternate (of two neighbours with one sign the stronger stays).
    private mutating func findEdges(_ p: UnsafeBufferPointer<Float>) {
        let n = p.count
        candPos.removeAll(keepingCapacity: true)
        candMag.removeAll(keepingCapacity: true)
        candSign.removeAll(keepingCapacity: true)
        deriv.withUnsafeMutableBufferPointer { d in
            d[0] = 0; d[n - 1] = 0
            if wideDerivative {
                d[1] = p[2] - p[0]; d[n - 2] = p[n - 1] - p[n - 3]
                for i in 2..<(n - 2) { d[i] = 0.5 * (p[i + 2] + p[i + 1] - p[i - 1] - p[i - 2]) }
            } else {
                for i in 1..<(n - 1) { d[i] = p[i + 1] - p[i - 1] }
            }
            let t = edgeThreshold
            var i = 2
            while i < n - 2 {
                let v = d[i]
                if v > t, v >= d[i - 1], v > d[i + 1] {
                    candPos.append(Float(i) + Self.parabolaOffset(d[i - 1], v, d[i + 1]))
                    candMag.append(v); candSign.append(1)
                } else if v < -t, v <= d[i - 1], v < d[i + 1] {
                    candPos.append(Float(i) + Self.parabolaOffset(-d[i - 1], -v, -d[i + 1]))
                    candMag.append(-v); candSign.append(-1)
                }
                i += 1
            }
        }
        edges.removeAll(keepingCapacity: true)
        edgeSign.removeAll(keepingCapacity: true)
        let k = candPos.count
        guard k > 0 else { return }
        var edgeMag: Float = 0
        var lo = 0, hi = 0
        for j in 0..<k {
            let pos = candPos[j]
            while candPos[lo] < pos - window { lo += 1 }
            while hi + 1 < k, candPos[hi + 1] <= pos + window { hi += 1 }
            var local: Float = 0
            for q in lo...hi where candMag[q] > local { local = candMag[q] }
            let mag = candMag[j]
            guard mag >= Self.relativeEdgeThreshold * local else { continue }
            if let last = edgeSign.last, last == candSign[j] {
                if mag > edgeMag { edges[edges.count - 1] = pos; edgeMag = mag }
            } else {
                edges.append(pos); edgeSign.append(candSign[j]); edgeMag = mag
            }
        }
    }

    /// Vertex offset of the parabola through three samples (b the largest), in -0.5…0.5.
    @inline(__always)
    private static func parabolaOffset(_ a: Float, _ b: Float, _ c: Float) -> Float {
        let den = a - 2 * b + c
        guard den < 0 else { return 0 }
        return min(0.5, max(-0.5, 0.5 * (a - c) / den))
    }

    // MARK: - Symbols

    private func decodeElements(_ b: UnsafeBufferPointer<Float>, firstIsBar: Bool, profile p: UnsafeBufferPointer<Float>,
                                into out: inout [LineFind], flip: Float?) {
        let m = b.count - 1
        func emit(_ format: BarcodeFormat, _ digits: [Int], _ s: Int, _ e: Int, rightQuiet: Float, worst: Float) {
            var start = b[s], end = b[e]
            if let f = flip { start = f - start; end = f - end }
            let lo = Int(min(start, end)), hi = min(p.count - 1, Int(max(start, end)) + 1)
            var dark = Float.greatestFiniteMagnitude, light: Float = 0
            for i in lo...hi { dark = min(dark, p[i]); light = max(light, p[i]) }
            out.append(LineFind(format: format, digits: String(digits.map { Character(String($0)) }), start: start, end: end,
                                rightQuietModules: rightQuiet, threshold: dark + 0.5 * (light - dark), worstError: worst))
        }
        var k = firstIsBar ? 2 : 1
        var worst: Float = 0
        while k + 3 < m {
            defer { k += 2 }
            if ean13 || upcA, k + 59 < m, let d = decodeEAN13(b, k, worst: &worst) {
                if d[0] == 0, upcA {
                    emit(.upcA, Array(d.dropFirst()), k, k + 59, rightQuiet: Self.quietZoneModules, worst: worst)
                } else if ean13 {
                    emit(.ean13, d, k, k + 59, rightQuiet: Self.quietZoneModules, worst: worst)
                }
                continue
            }
            if ean8, k + 43 < m, let d = decodeEAN8(b, k, worst: &worst) {
                emit(.ean8, d, k, k + 43, rightQuiet: Self.quietZoneModules, worst: worst)
                continue
            }
            if upcE, k + 33 < m, let d = decodeUPCE(b, k, worst: &worst) {
                emit(.upcE, d, k, k + 33, rightQuiet: Self.upceQuietZoneModules, worst: worst)
            }
        }
    }

    @inline(__always)
    private static func w(_ b: UnsafeBufferPointer<Float>, _ k: Int) -> Float { b[k + 1] - b[k] }

    /// Guard of `count` single-module elements starting at element `k`; returns the module width or nil.
    @inline(__always)
    private static func guardModule(_ b: UnsafeBufferPointer<Float>, _ k: Int, count: Int, expected: Float?) -> Float? {
        let total = b[k + count] - b[k]
        let mod = total / Float(count)
        if let e = expected, mod < 0.7 * e || mod > 1.4 * e { return nil }
        for i in 0..<count {
            let x = w(b, k + i) / mod
            if x < 0.45 || x > 1.65 { return nil }
        }
        return mod
    }

    /// One character as read: its T-class (the code 0-19, G codes +10; for the 1/7 and 2/8 pairs the lower one)
    /// and the measured width of its two bars in modules, kept to tell the pairs apart once the symbol's ink
    /// spread is known.
    struct CharRead {
        var code: Int
        var bars: Float
        var ambiguous: Bool
        let startsWithBar: Bool
        /// Largest T1/T2 deviation from the chosen pattern, in modules.
        var error: Float
        /// The runner-up T-class and by how much it lost (summed T1/T2 deviation, modules).
        var alternative: Int
        var margin: Float
    }

    /// A character whose runner-up lost by less than this is "marginal": see `isUnambiguous`.
    static let marginalMargin: Float = 0.35
    /// A 1/7 or 2/8 whose corrected bar width lies within half this of the midpoint is doubtful too.
    static let barDecisionMargin: Float = 1.0
    /// More combinations of doubtful characters than this and the line is too uncertain to count.
    static let maxAlternativeCombinations = 512

    /// True when no other choice among the doubtful characters (each taken as read or as an alternative) also
    /// makes a valid symbol. Blur can pull several characters of one symbol towards the same neighbouring
    /// patterns on every line alike; when the check digit happens to accept that misreading, agreement between
    /// lines does not help, but the true code then shows up here as a valid alternative, and the line is dropped.
    private static func isUnambiguous(_ chars: [CharRead], isValid: ([Int]) -> Bool) -> Bool {
        guard let resolved = resolve(chars) else { return false }
        let spread = inkSpread(chars)
        // Each doubtful character with the codes it might also be: the runner-up T-class (both members of a
        // 1/7 or 2/8 pair), and for a pair member whose spread-corrected bar width fell near the midpoint, the
        // other member.
        var options: [(index: Int, codes: [Int])] = []
        for (i, c) in chars.enumerated() {
            var alternatives: [Int] = []
            if c.margin < marginalMargin, c.alternative >= 0 {
                alternatives.append(c.alternative)
                if c.alternative % 10 == 1 || c.alternative % 10 == 2 { alternatives.append(c.alternative + 6) }
            }
            if c.ambiguous {
                let corrected = c.bars - spread
                let ea = abs(corrected - idealBars(c.code, startsWithBar: c.startsWithBar))
                let eb = abs(corrected - idealBars(c.code + 6, startsWithBar: c.startsWithBar))
                if abs(ea - eb) < barDecisionMargin { alternatives.append(resolved[i] == c.code ? c.code + 6 : c.code) }
            }
            if !alternatives.isEmpty { options.append((i, alternatives)) }
        }
        if options.isEmpty { return true }
        var combinations = 1
        for o in options {
            combinations *= o.codes.count + 1
            if combinations > maxAlternativeCombinations { return false }
        }
        var trial = resolved
        for combination in 1..<combinations {
            var rest = combination
            for o in options {
                let pick = rest % (o.codes.count + 1)
                rest /= o.codes.count + 1
                trial[o.index] = pick == 0 ? resolved[o.index] : o.codes[pick - 1]
            }
            if isValid(trial) { return false }
        }
        return true
    }

    /// Ideal bar width (modules) of code 0-19 read from a character starting with a bar (right half) or a space.
    @inline(__always)
    static func idealBars(_ code: Int, startsWithBar: Bool) -> Float {
        let p = code < 10 ? Symbology.lWidths[code] : Symbology.gWidths[code - 10]
        return Float(startsWithBar ? p[0] + p[2] : p[1] + p[3])
    }

    /// The character at elements k…k+3. Left-half characters may be L (0-9) or G (10-19); right-half ones are R (0-9).
    ///
    /// Matching uses edge-to-similar-edge distances (T1 = e0+e1, T2 = e1+e2 in modules), which do not move when blur
    /// or ink spread shifts every bar edge the same way. Only the pairs 1/7 and 2/8 share T1 and T2; they differ
    /// by two modules of bar width and are settled in `resolve` once the symbol's ink spread is known.
    @inline(__always)
    private static func character(_ b: UnsafeBufferPointer<Float>, _ k: Int, module: inout Float, allowG: Bool,
                                  maxError: Float = maxEdgeDistanceError) -> CharRead? {
        let total = b[k + 4] - b[k]
        let charModule = total / 7
        guard charModule > 0.72 * module, charModule < 1.38 * module else { return nil }
        let scale = 7 / total
        let n0 = w(b, k) * scale, n1 = w(b, k + 1) * scale, n2 = w(b, k + 2) * scale, n3 = w(b, k + 3) * scale
        let t1 = n0 + n1, t2 = n1 + n2
        var best = -1, bestP = -1, second = -1
        var bestErr = Float.greatestFiniteMagnitude, secondErr = Float.greatestFiniteMagnitude
        var bestMax: Float = 0
        let count = allowG ? 20 : 10
        for c in 0..<count {
            let p = c < 10 ? Symbology.lWidths[c] : Symbology.gWidths[c - 10]
            let p1 = p[0] + p[1], p2 = p[1] + p[2]
            let e1 = abs(t1 - Float(p1)), e2 = abs(t2 - Float(p2))
            let err = e1 + e2
            let key = p1 * 8 + p2
            if key == bestP { continue }  // 7 after 1, 8 after 2: same T-class
            if err < bestErr {
                secondErr = bestErr; second = best; bestErr = err; best = c; bestP = key; bestMax = max(e1, e2)
            } else if err < secondErr {
                secondErr = err; second = c
            }
        }
        guard bestMax <= maxError, secondErr - bestErr >= minCharMargin else { return nil }
        module = 0.5 * module + 0.5 * charModule
        let startsWithBar = !allowG
        let digit = best % 10
        return CharRead(code: best, bars: startsWithBar ? n0 + n2 : n1 + n3, ambiguous: digit == 1 || digit == 2,
                        startsWithBar: startsWithBar, error: bestMax, alternative: second, margin: secondErr - bestErr)
    }

    /// Settles 1/7 and 2/8 by bar width after removing the ink spread measured on the unambiguous characters
    /// (blur and exposure make every bar wider or thinner by about the same amount). Returns codes 0-19.
    /// Mean excess bar width (modules, two bars) of the characters that are not 1/7 or 2/8.
    private static func inkSpread(_ chars: [CharRead]) -> Float {
        var spread: Float = 0, n: Float = 0
        for c in chars where !c.ambiguous {
            spread += c.bars - idealBars(c.code, startsWithBar: c.startsWithBar); n += 1
        }
        return n > 0 ? spread / n : 0
    }

    private static func resolve(_ chars: [CharRead]) -> [Int]? {
        let spread = inkSpread(chars)
        var out: [Int] = []
        out.reserveCapacity(chars.count)
        for c in chars {
            guard c.ambiguous else { out.append(c.code); continue }
            let corrected = c.bars - spread
            let a = c.code, b = c.code + 6  // 1 → 7, 2 → 8 (and 11 → 17, 12 → 18)
            let ea = abs(corrected - idealBars(a, startsWithBar: c.startsWithBar))
            let eb = abs(corrected - idealBars(b, startsWithBar: c.startsWithBar))
            guard min(ea, eb) <= maxBarWidthError else { return nil }
            out.append(ea < eb ? a : b)
        }
        return out
    }

    private static func quiet(_ b: UnsafeBufferPointer<Float>, _ k: Int, module: Float, modules: Float) -> Bool {
        w(b, k) >= modules * module
    }

    /// EAN-13 (UPC-A when the first digit is 0) whose start guard's first bar is element k.
    private func decodeEAN13(_ b: UnsafeBufferPointer<Float>, _ k: Int, worst: inout Float) -> [Int]? {
        guard var mod = Self.guardModule(b, k, count: 3, expected: nil),
              Self.quiet(b, k - 1, module: mod, modules: Self.quietZoneModules) else { return nil }
        var chars: [CharRead] = []
        chars.reserveCapacity(12)
        var e = k + 3
        for _ in 0..<6 {
            guard let c = Self.character(b, e, module: &mod, allowG: true) else { return nil }
            chars.append(c); e += 4
        }
        guard let mm = Self.guardModule(b, e, count: 5, expected: mod) else { return nil }
        mod = 0.5 * mod + 0.5 * mm
        e += 5
        for _ in 0..<6 {
            guard let c = Self.character(b, e, module: &mod, allowG: false) else { return nil }
            chars.append(c); e += 4
        }
        guard let em = Self.guardModule(b, e, count: 3, expected: mod),
              Self.quiet(b, e + 3, module: em, modules: Self.quietZoneModules),
              let codes = Self.resolve(chars),
              let first = Symbology.ean13FirstDigit(parity: codes[0..<6].map { $0 >= 10 }) else { return nil }
        let digits = [first] + codes.map { $0 % 10 }
        guard GTIN.checkDigit(forPayload: digits.dropLast()) == digits[12] else { return nil }
        guard Self.isUnambiguous(chars, isValid: { alt in
            guard let f = Symbology.ean13FirstDigit(parity: alt[0..<6].map { $0 >= 10 }) else { return false }
            let d = [f] + alt.map { $0 % 10 }
            return GTIN.checkDigit(forPayload: d.dropLast()) == d[12]
        }) else { return nil }
        worst = chars.map(\.error).max()!
        return digits
    }

    private func decodeEAN8(_ b: UnsafeBufferPointer<Float>, _ k: Int, worst: inout Float) -> [Int]? {
        guard var mod = Self.guardModule(b, k, count: 3, expected: nil),
              Self.quiet(b, k - 1, module: mod, modules: Self.quietZoneModules) else { return nil }
        var chars: [CharRead] = []
        chars.reserveCapacity(8)
        var e = k + 3
        for _ in 0..<4 {
            // EAN-8's left half is all L: a G reading is a misread (checked after resolving).
            guard let c = Self.character(b, e, module: &mod, allowG: true) else { return nil }
            chars.append(c); e += 4
        }
        guard let mm = Self.guardModule(b, e, count: 5, expected: mod) else { return nil }
        mod = 0.5 * mod + 0.5 * mm
        e += 5
        for _ in 0..<4 {
            guard let c = Self.character(b, e, module: &mod, allowG: false) else { return nil }
            chars.append(c); e += 4
        }
        guard let em = Self.guardModule(b, e, count: 3, expected: mod),
              Self.quiet(b, e + 3, module: em, modules: Self.quietZoneModules),
              let codes = Self.resolve(chars), codes.allSatisfy({ $0 < 10 }) else { return nil }
        guard GTIN.checkDigit(forPayload: codes.dropLast()) == codes[7] else { return nil }
        guard Self.isUnambiguous(chars, isValid: { alt in
            alt.allSatisfy { $0 < 10 } && GTIN.checkDigit(forPayload: alt.dropLast()) == alt[7]
        }) else { return nil }
        worst = chars.map(\.error).max()!
        return codes
    }

    private func decodeUPCE(_ b: UnsafeBufferPointer<Float>, _ k: Int, worst: inout Float) -> [Int]? {
        guard var mod = Self.guardModule(b, k, count: 3, expected: nil),
              Self.quiet(b, k - 1, module: mod, modules: Self.quietZoneModules) else { return nil }
        var chars: [CharRead] = []
        chars.reserveCapacity(6)
        var e = k + 3
        for _ in 0..<6 {
            guard let c = Self.character(b, e, module: &mod, allowG: true, maxError: Self.upceMaxEdgeDistanceError) else { return nil }
            chars.append(c); e += 4
        }
        guard let em = Self.guardModule(b, e, count: 6, expected: mod),
              Self.quiet(b, e + 6, module: em, modules: Self.upceQuietZoneModules),
              let codes = Self.resolve(chars),
              let (ns, check) = Symbology.upceSystemAndCheck(parity: codes.map { $0 >= 10 }) else { return nil }
        let digits = [ns] + codes.map { $0 % 10 } + [check]
        let expanded = GTIN.expandUPCEDigits(digits)
        guard GTIN.checkDigit(forPayload: expanded.dropLast()) == check else { return nil }
        guard Self.isUnambiguous(chars, isValid: { alt in
            guard let (ns2, check2) = Symbology.upceSystemAndCheck(parity: alt.map { $0 >= 10 }) else { return false }
            let d = [ns2] + alt.map { $0 % 10 } + [check2]
            let x = GTIN.expandUPCEDigits(d)
            return GTIN.checkDigit(forPayload: x.dropLast()) == check2
        }) else { return nil }
        worst = chars.map(\.error).max()!
        return digits
    }
}
