internal import FoodCore
public import Foundation

/// The compiled nutrition tables (`nutrition.fmdb`) plus the recognition-label mapping (`labels.json`).
///
/// Loading reads the file once into memory and checks the header and section bounds; every look-up
/// afterwards is a binary search or an index walk over those bytes. Immutable, so safe to share.
public final class NutritionDatabase: Sendable {
    /// Where the files were loaded from.
    public let directory: URL
    /// Every label of labels.json, keyed by label.
    public let labels: [String: FoodLabel]

    /// The file, memory-mapped read-only (pages load on first touch); in memory when a packed file was inflated here.
    let bytes: Data
    let sections: [(offset: Int, count: Int)]
    /// Folded English names and aliases of labels → label.
    let labelAliases: [String: String]

    /// Environment variable that overrides the default directory.
    public static let environmentVariable = "FOODMOMENT_NUTRITION_DB"

    public var foodCount: Int { sections[Format.Section.foods.rawValue].count }
    public var productCount: Int { sections[Format.Section.products.rawValue].count }

    private init(directory: URL, bytes: Data, sections: [(Int, Int)], labels: [String: FoodLabel]) {
        self.directory = directory
        self.bytes = bytes
        self.sections = sections.map { (offset: $0.0, count: $0.1) }
        self.labels = labels
        var aliases: [String: String] = [:]
        for key in labels.keys.sorted() {
            let l = labels[key]!
            for a in [key.replacingOccurrences(of: "_", with: " "), l.name] + l.aliases.en {
                let k = Text.tokens(a).map(Text.stem).joined(separator: " ")
                if !k.isEmpty, aliases[k] == nil { aliases[k] = key }
            }
        }
        labelAliases = aliases
    }

    /// Loads `nutrition.fmdb` and `labels.json` from `directory`; where there is only the packed
    /// `nutrition.fmdb.gz` (as the package ships it), its unpacked copy in `cacheDirectory` (default:
    /// `defaultCacheDirectory()`), made on first use. A plain `nutrition.fmdb` wins over a packed one beside it.
    public static func load(directory: URL, cacheDirectory: URL? = nil) throws(NutritionError) -> NutritionDatabase {
        let file = directory.appendingPathComponent(Format.fileName)
        let packed = directory.appendingPathComponent(Format.packedFileName)
        let bytes: Data, sections: [(Int, Int)]
        if FileManager.default.fileExists(atPath: file.path) {
            bytes = try readPlain(file)
            sections = try validate(bytes, path: file.path)
        } else if FileManager.default.fileExists(atPath: packed.path) {
            let cache = cacheDirectory ?? defaultCacheDirectory(environment: [:])
            let first = try PackedTables.bytes(of: packed, cacheDirectory: cache)
            do {
                (bytes, sections) = (first.bytes, try validate(first.bytes, path: packed.path))
            } catch where first.fromCache {
                // The cached copy was damaged after it was written; inflate again and replace it.
                let fresh = try PackedTables.bytes(of: packed, cacheDirectory: cache, useCache: false)
                (bytes, sections) = (fresh.bytes, try validate(fresh.bytes, path: packed.path))
            }
        } else {
            throw .databaseMissing(path: file.path)
        }
        let labels = try FoodLabel.load(from: directory.appendingPathComponent(Format.labelsFileName))
        return NutritionDatabase(directory: directory, bytes: bytes, sections: sections, labels: labels)
    }

    private static func readPlain(_ file: URL) throws(NutritionError) -> Data {
        // Checked before reading: Foundation's mapped read of an empty file leaks its 4 KiB buffer (found by the
        // nutrition-db fuzz target), and a file shorter than the header cannot be a database anyway.
        let size = fileSize(atPath: file.path) ?? 0
        guard size >= Format.headerSize else {
            throw .databaseCorrupt(path: file.path, reason: "the file is \(size) bytes, shorter than the \(Format.headerSize)-byte header (truncated?)")
        }
        do { return try Data(contentsOf: file, options: .alwaysMapped) } catch {
            throw .databaseCorrupt(path: file.path, reason: "unreadable: \(error.localizedDescription)")
        }
    }

    /// Where packed tables are unpacked: `$XDG_CACHE_HOME/foodmoment`, else `~/.cache/foodmoment`, else a
    /// `foodmoment-cache` folder in the temporary directory. Every copy is named by its content, so processes and
    /// versions can share the folder, and deleting it only costs the next run an unpack (a third of a second on a slow core).
    /// `environment` is the executable's (the library reads none of its own).
    public static func defaultCacheDirectory(environment env: [String: String]) -> URL {
        if let xdg = env["XDG_CACHE_HOME"], xdg.hasPrefix("/") {
            return URL(fileURLWithPath: xdg).appendingPathComponent("foodmoment")
        }
        if let home = env["HOME"], home.hasPrefix("/") {
            return URL(fileURLWithPath: home).appendingPathComponent(".cache/foodmoment")
        }
        return URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("foodmoment-cache")
    }

    /// The directory to use when the caller gives none: `$FOODMOMENT_NUTRITION_DB`, else a `nutrition-db`
    /// folder next to the executable or in one of its parent folders (the package checkout when run from
    /// `.build/…`), else `./nutrition-db`.
    public static func defaultDirectory(environment: [String: String],
                                        executablePath: String = CommandLine.arguments.first ?? "") -> URL {
        if let env = environment[environmentVariable], !env.isEmpty {
            return URL(fileURLWithPath: env)
        }
        var dir = URL(fileURLWithPath: executablePath).resolvingSymlinksInPath().deletingLastPathComponent()
        for _ in 0..<6 {
            let candidate = dir.appendingPathComponent("nutrition-db")
            if [Format.fileName, Format.packedFileName].contains(where: {
                FileManager.default.fileExists(atPath: candidate.appendingPathComponent($0).path)
            }) { return candidate }
            let parent = dir.deletingLastPathComponent()
            if parent.path == dir.path { break }
            dir = parent
        }
        return URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent("nutrition-db")
    }

    private static func validate(_ b: Data, path: String) throws(NutritionError) -> [(Int, Int)] {
        guard b.count >= Format.headerSize, Array(b.prefix(8)) == Format.magic else {
            throw .databaseCorrupt(path: path, reason: "not a FoodMoment nutrition database (bad magic)")
        }
        let result: Result<[(Int, Int)], NutritionError> = b.withUnsafeBytes { raw in
            let v = RawView(base: raw)
            guard v.u32(8) == Format.version else { return .failure(.databaseCorrupt(path: path, reason: "format version \(v.u32(8)), expected \(Format.version)")) }
            guard v.u32(12) == UInt32(Nutrient.allCases.count) else { return .failure(.databaseCorrupt(path: path, reason: "nutrient count \(v.u32(12))")) }
            let strides = [1, Format.foodStride, Format.portionStride, Format.productStride, Format.tokenStride, 4, Format.zhStride, Format.productExtraStride]
            var out: [(Int, Int)] = []
            for s in 0..<Format.sectionCount {
                let off = Int(v.u32(16 + 8 * s)), count = Int(v.u32(20 + 8 * s))
                guard off <= b.count, off + count * strides[s] <= b.count else {
                    return .failure(.databaseCorrupt(path: path, reason: "section \(s) runs past the end of the file (truncated?)"))
                }
                out.append((off, count))
            }
            return .success(out)
        }
        return try result.get()
    }

    // MARK: - Raw access

    @inline(__always) func withView<T>(_ body: (RawView) -> T) -> T {
        bytes.withUnsafeBytes { body(RawView(base: $0)) }
    }

    /// Byte range of a string reference inside the file.
    @inline(__always) func stringRange(_ v: RawView, _ ref: UInt32) -> Range<Int> {
        let base = sections[Format.Section.strings.rawValue]
        let o = base.offset + Int(ref)
        guard Int(ref) + 2 <= base.count else { return 0..<0 }
        let len = Int(v.u16(o))
        guard Int(ref) + 2 + len <= base.count else { return 0..<0 }
        return (o + 2)..<(o + 2 + len)
    }

    func string(_ v: RawView, _ ref: UInt32) -> String {
        let r = stringRange(v, ref)
        return String(decoding: UnsafeRawBufferPointer(rebasing: v.base[r]), as: UTF8.self)
    }

    func foodOffset(_ i: Int) -> Int { sections[Format.Section.foods.rawValue].offset + i * Format.foodStride }
    func productOffset(_ i: Int) -> Int { sections[Format.Section.products.rawValue].offset + i * Format.productStride }

    /// Entry numbering shared with the search index: foods first, then products.
    func entry(_ e: Int) -> Food {
        e < foodCount ? foodRecord(e) : productRecord(e - foodCount)
    }

    func foodRecord(_ i: Int) -> Food {
        withView { v in
            let o = foodOffset(i)
            let source = FoodSource(rawValue: v.u8(o + 8)) ?? .srLegacy
            let flags = v.u8(o + 9)
            let portionCount = Int(v.u16(o + 10))
            let first = Int(v.u32(o + 20))
            var raw = [Float](repeating: .nan, count: Nutrient.allCases.count)
            for k in 0..<raw.count { raw[k] = v.f32(o + 36 + 4 * k) }
            let pBase = sections[Format.Section.portions.rawValue]
            var portions: [Portion] = []
            for p in first..<min(first + portionCount, pBase.count) {
                let po = pBase.offset + p * Format.portionStride
                portions.append(Portion(amount: Double(v.f32(po)), unit: string(v, v.u32(po + 8)), grams: Double(v.f32(po + 4))))
            }
            return Food(id: "\(source.idPrefix):\(v.u64(o))", name: string(v, v.u32(o + 12)), source: source,
                        category: string(v, v.u32(o + 16)), brand: "", per100g: NutrientValues(raw: raw),
                        energyIsAtwater: flags & Format.foodFlagAtwaterEnergy != 0, energyEstimatedFromMacros: false,
                        portions: portions, servingSize: nil, servingGrams: nil, gtin14: nil)
        }
    }

    func productRecord(_ i: Int) -> Food {
        withView { v in
            let o = productOffset(i)
            let gtin = String(v.u64(o))
            let padded = String(repeating: "0", count: max(0, 14 - gtin.count)) + gtin
            var raw = [Float](repeating: .nan, count: Nutrient.allCases.count)
            for (k, n) in Nutrient.core.enumerated() {
                let q = v.u16(o + 24 + 2 * k)
                raw[n.rawValue] = q == 0xFFFF ? .nan : Float(q) / Format.productScale[k]
            }
            var brand = "", serving = "", sg = Float.nan
            let extra = v.u32(o + 16)
            let extras = sections[Format.Section.productExtras.rawValue]
            if extra != 0xFFFF_FFFF, Int(extra) < extras.count {
                let eo = extras.offset + Int(extra) * Format.productExtraStride
                brand = string(v, v.u32(eo)); serving = string(v, v.u32(eo + 4)); sg = v.f32(eo + 8)
            }
            return Food(id: "off:\(padded)", name: string(v, v.u32(o + 8)), source: FoodSource(rawValue: v.u8(o + 20)) ?? .offLifyzer2019,
                        category: "", brand: brand, per100g: NutrientValues(raw: raw),
                        energyIsAtwater: false, energyEstimatedFromMacros: v.u8(o + 21) & Format.productFlagEnergyFromMacros != 0,
                        portions: [], servingSize: serving.isEmpty ? nil : serving, servingGrams: sg.isNaN ? nil : Double(sg), gtin14: padded)
        }
    }

    // MARK: - Look-ups

    /// A food or product by id: `sr:173944`, `foundation:321360`, `fndds:63107010`, `off:05449000039231`.
    public func food(id: String) -> Food? {
        let parts = id.split(separator: ":", maxSplits: 1).map(String.init)
        guard parts.count == 2 else { return nil }
        if parts[0] == "off" { return product(gtin14: parts[1]) }
        // USDA foods: the same binary search the label boost uses.
        return entryIndex(forID: id).map(foodRecord)
    }

    /// A packaged product by its GTIN-14 (14 digits; shorter digit strings are zero-padded on the left).
    public func product(gtin14: String) -> Food? {
        let digits = gtin14.trimmingSpaces
        guard !digits.isEmpty, digits.count <= 14, let key = UInt64(digits) else { return nil }
        let index: Int? = withView { v in
            var lo = 0, hi = productCount
            while lo < hi {
                let mid = (lo + hi) / 2
                let k = v.u64(productOffset(mid))
                if k == key { return mid }
                if k < key { lo = mid + 1 } else { hi = mid }
            }
            return nil
        }
        return index.map(productRecord)
    }

    /// The mapping of a recognition label (folder name such as `banana`, or SOHL class such as `dal_or_sambar`).
    public func label(_ name: String) -> FoodLabel? {
        labels[name] ?? labels[name.lowercased().replacingOccurrences(of: " ", with: "_")]
    }

    /// The food a recognition label maps to.
    public func food(forLabel label: String) -> Food? {
        self.label(label).flatMap { food(id: $0.food) }
    }

    /// Resolves free text to one food: an id, a GTIN, a label, else the best search hit.
    public func resolve(_ text: String) throws(NutritionError) -> Food {
        if let f = food(id: text) { return f }
        let t = text.trimmingSpaces
        if t.count >= 8, t.count <= 14, t.allSatisfy(\.isNumber), let p = product(gtin14: t) { return p }
        if let f = food(forLabel: t) { return f }
        // Free text: the best USDA food when one matches well, else the best hit (a branded product).
        let hits = search(t, limit: 20)
        if let first = hits.first {
            if first.food.source.isGeneric { return first.food }
            if let generic = hits.first(where: { $0.food.source.isGeneric && $0.match <= .token }) { return generic.food }
            return first.food
        }
        throw .unknownFood(text)
    }

    // MARK: - Amounts

    /// Grams for a portion text of `food` ("1 medium", "2 slices", "1 cup", "150 g", "5 oz").
    public func grams(for food: Food, portion: String) throws(NutritionError) -> Double {
        try Portions.grams(for: food, portion: portion).grams
    }

    /// Nutrients of `grams` of `food`: per-100 g values × grams / 100.
    public func nutrients(for food: Food, grams: Double) throws(NutritionError) -> NutritionFacts {
        guard grams.isFinite, grams > 0 else { throw .invalidQuantity(String(grams)) }
        return NutritionFacts(food: food, grams: grams, portion: "\(Portions.format(grams)) g", nutrients: food.per100g.scaled(by: grams / 100))
    }

    /// Nutrients of a portion text of `food`, keeping how the grams were worked out.
    public func nutrients(for food: Food, portion: String) throws(NutritionError) -> NutritionFacts {
        let (g, explanation) = try Portions.grams(for: food, portion: portion)
        var facts = try nutrients(for: food, grams: g)
        facts.portion = explanation
        return facts
    }
}
