internal import FoodCore
package import Foundation
package import Nutrition

/// Turns the shared USDA and Open Food Facts tables into `nutrition.fmdb` (see `Format`).
///
/// Reproducible: the output depends only on the input bytes (every table is sorted before it is
/// written, no timestamps, no hash-order iteration), so the same inputs give identical files.
package struct NutritionDatabaseBuilder: Sendable {
    /// What one build produced, for the CLI and SOURCES.md.
    package struct Report: Sendable, Codable, Equatable {
        package var srLegacyFoods = 0
        package var foundationFoods = 0
        package var foundationAtwaterEnergy = 0
        package var foundationNoEnergy = 0
        package var fnddsFoods = 0
        package var portions = 0
        package var offRowsRead = 0
        package var offRejectedBarcode = 0
        package var offRejectedName = 0
        package var offRejectedIncomplete = 0
        package var offRejectedImplausible = 0
        package var offDuplicates = 0
        package var productsBySource: [String: Int] = [:]
        package var products = 0
        package var productsEnergyFromMacros = 0
        package var tokens = 0
        package var postings = 0
        package var zhPairs = 0
        package var bytes = 0
        /// Size of the packed file written (`nutrition.fmdb.gz`).
        package var packedBytes = 0
    }

    package let sourceDirectory: URL

    package init(sourceDirectory: URL) { self.sourceDirectory = sourceDirectory }

    /// Builds `nutrition.fmdb` and writes it packed, as the package ships it, to `nutrition.fmdb.gz` in
    /// `outputDirectory` (created if needed). A plain `nutrition.fmdb` there is removed: it would be loaded instead.
    @discardableResult
    package func write(to outputDirectory: URL) throws(NutritionError) -> Report {
        var (bytes, report) = try build()
        let out = outputDirectory.appendingPathComponent(Format.packedFileName)
        let plain = outputDirectory.appendingPathComponent(Format.fileName)
        let partial = outputDirectory.appendingPathComponent(".\(Format.packedFileName).partial")
        do {
            try FileManager.default.createDirectory(at: outputDirectory, withIntermediateDirectories: true)
        } catch {
            throw .outputUnwritable(path: outputDirectory.path, reason: "\(error)")
        }
        try PackedTables.write(bytes, to: partial)
        do {
            if FileManager.default.fileExists(atPath: plain.path) { try FileManager.default.removeItem(at: plain) }
            if FileManager.default.fileExists(atPath: out.path) { try FileManager.default.removeItem(at: out) }
            try FileManager.default.moveItem(at: partial, to: out)
        } catch {
            try? FileManager.default.removeItem(at: partial)
            throw .outputUnwritable(path: out.path, reason: "\(error)")
        }
        report.packedBytes = fileSize(atPath: out.path) ?? 0
        return report
    }

    /// Builds the database in memory.
    package func build() throws(NutritionError) -> (bytes: [UInt8], report: Report) {
        var report = Report()
        var foods: [FoodDraft] = []
        try loadSRLegacy(into: &foods, report: &report)
        try loadFoundation(into: &foods, report: &report)
        try loadFNDDS(into: &foods, report: &report)
        foods.sort { ($0.source, $0.id) < ($1.source, $1.id) }

        var products: [UInt64: ProductDraft] = [:]
        // Oldest first; newer exports replace older rows for the same GTIN.
        try loadLifyzer(into: &products, report: &report)
        try loadOFFExport("off_techchallenge_2020.csv", delimiter: UInt8(ascii: ","), source: .offExport2020, energyIsKcal: true, into: &products, report: &report)
        try loadOFFExport("off_food_ml_2021.tsv", delimiter: UInt8(ascii: "\t"), source: .offExport2021, energyIsKcal: false, into: &products, report: &report)
        try loadOFFExport("off_mlops_2024.tsv", delimiter: UInt8(ascii: "\t"), source: .offExport2024, energyIsKcal: false, into: &products, report: &report)
        let productList = products.keys.sorted().map { products[$0]! }
        report.products = productList.count
        for p in productList {
            report.productsBySource[p.source.dataType, default: 0] += 1
            if p.energyFromMacros { report.productsEnergyFromMacros += 1 }
        }

        let zh = try loadTaxonomy(report: &report)
        let bytes = serialize(foods: foods, products: productList, zh: zh, report: &report)
        report.bytes = bytes.count
        return (bytes, report)
    }

    // MARK: - Drafts

    struct PortionDraft { var amount: Float; var grams: Float; var text: String }

    struct FoodDraft {
        var source: FoodSource
        var id: UInt64
        var name: String
        var category: String
        var aliasText: String
        var flags: UInt8
        var nutrients: [Float]
        var portions: [PortionDraft]
    }

    struct ProductDraft {
        var gtin: UInt64
        var name: String
        var brand: String
        var serving: String
        var servingGrams: Float
        var source: FoodSource
        var flags: UInt8
        var nutrients: [Float] // Nutrient.core order
        var energyFromMacros: Bool { flags & Format.productFlagEnergyFromMacros != 0 }
    }

    // MARK: - Reading

    private func read(_ name: String) throws(NutritionError) -> [UInt8] {
        let url = sourceDirectory.appendingPathComponent(name)
        do { return [UInt8](try Data(contentsOf: url)) } catch {
            throw .sourceUnreadable(path: url.path, reason: error.localizedDescription)
        }
    }

    /// gunzip through the system `gzip` (no zlib binding in this module; output is the same bytes either way).
    private func readGzip(_ name: String) throws(NutritionError) -> [UInt8] {
        let url = sourceDirectory.appendingPathComponent(name)
        guard FileManager.default.fileExists(atPath: url.path) else { throw .sourceUnreadable(path: url.path, reason: "no such file") }
        let gzip = ["/usr/bin/gzip", "/bin/gzip"].first { FileManager.default.isExecutableFile(atPath: $0) }
        guard let gzip else { throw .sourceUnreadable(path: url.path, reason: "gzip is not installed (apt-get install gzip)") }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: gzip)
        process.arguments = ["-dc", url.path]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        var out = Data()
        do {
            try process.run()
            out = pipe.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
        } catch {
            throw .sourceUnreadable(path: url.path, reason: "gzip failed to start: \(error)")
        }
        guard process.terminationStatus == 0 else { throw .sourceUnreadable(path: url.path, reason: "gzip exited with status \(process.terminationStatus)") }
        return [UInt8](out)
    }

    private func columns(_ header: [String], _ names: [String], file: String) throws(NutritionError) -> [Int] {
        var out: [Int] = []
        for n in names {
            guard let i = header.firstIndex(of: n) else { throw .sourceMalformed(path: file, reason: "missing column \"\(n)\"") }
            out.append(i)
        }
        return out
    }

    /// Reads the header only (first row) so that column positions can be resolved before the scan.
    private func header(of data: [UInt8], delimiter: UInt8 = UInt8(ascii: ",")) -> [String] {
        var end = 0
        while end < data.count, data[end] != 10 { end += 1 }
        var h: [String] = []
        let line = Array(data[0..<end]) + [10, 10]
        // Header plus a blank row: forEachRow returns the header without calling the body.
        h = (try? CSV.forEachRow(in: line, delimiter: delimiter) { _ throws(NutritionError) in }) ?? []
        return h
    }

    private static func f(_ d: Double?) -> Float { d.map { Float($0) } ?? .nan }

    // MARK: - USDA

    private func loadSRLegacy(into foods: inout [FoodDraft], report: inout Report) throws(NutritionError) {
        let file = "sr_legacy_per100g.csv"
        let data = try read(file)
        let h = header(of: data)
        let c = try columns(h, ["fdc_id", "ndb_number", "description", "category", "energy_kcal", "protein_g", "fat_g", "satfat_g", "carb_g", "fiber_g", "sugars_g", "sodium_mg", "cholesterol_mg", "calcium_mg", "iron_mg", "potassium_mg", "water_g"], file: file)
        let portions = try srPortions()
        try CSV.forEachRow(in: data) { row throws(NutritionError) in
            guard let id = UInt64(row[c[0]].trimmingSpaces), let name = row.value(c[2]) else {
                throw .sourceMalformed(path: file, reason: "row without fdc_id/description")
            }
            var n = [Float](repeating: .nan, count: Nutrient.allCases.count)
            let map: [(Nutrient, Int)] = [(.energyKcal, 4), (.protein, 5), (.fat, 6), (.saturatedFat, 7), (.carbohydrate, 8), (.fiber, 9), (.sugars, 10), (.sodium, 11), (.cholesterol, 12), (.calcium, 13), (.iron, 14), (.potassium, 15), (.water, 16)]
            for (nut, k) in map { n[nut.rawValue] = Self.f(row.number(c[k])) }
            let flags: UInt8 = n[0].isNaN ? Format.foodFlagNoEnergy : 0
            foods.append(FoodDraft(source: .srLegacy, id: id, name: name, category: row[c[3]], aliasText: "",
                                   flags: flags, nutrients: n, portions: portions.byFDC[id] ?? []))
            report.srLegacyFoods += 1
            report.portions += portions.byFDC[id]?.count ?? 0
        }
    }

    /// SR Legacy household measures keyed by FDC id, and by NDB number for Foundation foods that lack them.
    private func srPortions() throws(NutritionError) -> (byFDC: [UInt64: [PortionDraft]], byNDB: [String: [PortionDraft]]) {
        let file = "sr_legacy_portions.csv"
        let data = try read(file)
        let c = try columns(header(of: data), ["fdc_id", "seq_num", "amount", "unit", "modifier", "gram_weight"], file: file)
        var byFDC: [UInt64: [(Int, PortionDraft)]] = [:]
        try CSV.forEachRow(in: data) { row throws(NutritionError) in
            guard let id = UInt64(row[c[0]].trimmingSpaces), let grams = row.number(c[5]), grams > 0 else { return }
            let amount = row.number(c[2]) ?? 1
            let unit = row[c[3]].trimmingSpaces
            let modifier = row[c[4]].trimmingSpaces
            let text = unit == "undetermined" || unit.isEmpty ? modifier : (modifier.isEmpty ? unit : unit + " " + modifier)
            guard !text.isEmpty, amount > 0 else { return }
            byFDC[id, default: []].append((Int(row.number(c[1]) ?? 0), PortionDraft(amount: Float(amount), grams: Float(grams), text: text)))
        }
        // NDB numbers come from the per-100 g table.
        let foodsData = try read("sr_legacy_per100g.csv")
        let fc = try columns(header(of: foodsData), ["fdc_id", "ndb_number"], file: "sr_legacy_per100g.csv")
        var byNDB: [String: [PortionDraft]] = [:]
        var sorted: [UInt64: [PortionDraft]] = [:]
        for (k, v) in byFDC { sorted[k] = v.sorted { $0.0 < $1.0 }.map(\.1) }
        try CSV.forEachRow(in: foodsData) { row throws(NutritionError) in
            guard let id = UInt64(row[fc[0]].trimmingSpaces), let ndb = Int(row[fc[1]].trimmingSpaces), let p = sorted[id] else { return }
            byNDB[String(ndb)] = p
        }
        return (sorted, byNDB)
    }

    private func loadFoundation(into foods: inout [FoodDraft], report: inout Report) throws(NutritionError) {
        let file = "foundation_2024_10_31_per100g.csv"
        let data = try read(file)
        let c = try columns(header(of: data), ["fdc_id", "ndb_number", "description", "category", "energy_kcal", "energy_atwater_specific_kcal", "energy_atwater_general_kcal", "protein_g", "fat_g", "carb_g", "fiber_g", "sugars_g", "sodium_mg", "water_g"], file: file)
        let pfile = "foundation_2024_10_31_portions.csv"
        let pdata = try read(pfile)
        let pc = try columns(header(of: pdata), ["fdc_id", "amount", "unit", "portion_description", "modifier", "gram_weight"], file: pfile)
        var own: [UInt64: [PortionDraft]] = [:]
        try CSV.forEachRow(in: pdata) { row throws(NutritionError) in
            guard let id = UInt64(row[pc[0]].trimmingSpaces), let grams = row.number(pc[5]), grams > 0 else { return }
            let amount = row.number(pc[1]) ?? 1
            let parts = [row[pc[2]], row[pc[3]], row[pc[4]]].map(\.trimmingSpaces).filter { !$0.isEmpty && $0 != "undetermined" && $0 != "Quantity not specified" }
            guard !parts.isEmpty, amount > 0 else { return }
            own[id, default: []].append(PortionDraft(amount: Float(amount), grams: Float(grams), text: parts.joined(separator: " ")))
        }
        let sr = try srPortions()
        try CSV.forEachRow(in: data) { row throws(NutritionError) in
            guard let id = UInt64(row[c[0]].trimmingSpaces), let name = row.value(c[2]) else {
                throw .sourceMalformed(path: file, reason: "row without fdc_id/description")
            }
            var n = [Float](repeating: .nan, count: Nutrient.allCases.count)
            var flags: UInt8 = 0
            if let e = row.number(c[4]) {
                n[Nutrient.energyKcal.rawValue] = Float(e)
            } else if let e = row.number(c[5]) ?? row.number(c[6]) {
                n[Nutrient.energyKcal.rawValue] = Float(e)
                flags |= Format.foodFlagAtwaterEnergy
                report.foundationAtwaterEnergy += 1
            } else {
                flags |= Format.foodFlagNoEnergy
                report.foundationNoEnergy += 1
            }
            let map: [(Nutrient, Int)] = [(.protein, 7), (.fat, 8), (.carbohydrate, 9), (.fiber, 10), (.sugars, 11), (.sodium, 12), (.water, 13)]
            for (nut, k) in map { n[nut.rawValue] = Self.f(row.number(c[k])) }
            var portions = own[id] ?? []
            if let ndb = Int(row[c[1]].trimmingSpaces), let extra = sr.byNDB[String(ndb)] {
                // Foundation has few portions; SR Legacy measures of the same NDB item fill the gap.
                let have = Set(portions.map { Text.normalized($0.text) })
                portions += extra.filter { !have.contains(Text.normalized($0.text)) }
            }
            foods.append(FoodDraft(source: .foundation, id: id, name: name, category: row[c[3]], aliasText: "",
                                   flags: flags, nutrients: n, portions: portions))
            report.foundationFoods += 1
            report.portions += portions.count
        }
    }

    private func loadFNDDS(into foods: inout [FoodDraft], report: inout Report) throws(NutritionError) {
        let file = "fndds_2021_2023_nutrient_values.csv"
        let data = try read(file)
        let columnsByNutrient: [(Nutrient, String)] = [
            (.energyKcal, "Energy (kcal)"), (.protein, "Protein (g)"), (.fat, "Total Fat (g)"),
            (.saturatedFat, "Fatty acids, total saturated (g)"), (.carbohydrate, "Carbohydrate (g)"),
            (.fiber, "Fiber, total dietary (g)"), (.sugars, "Sugars, total (g)"), (.sodium, "Sodium (mg)"),
            (.cholesterol, "Cholesterol (mg)"), (.calcium, "Calcium (mg)"), (.iron, "Iron (mg)"),
            (.potassium, "Potassium (mg)"), (.magnesium, "Magnesium (mg)"), (.zinc, "Zinc (mg)"),
            (.phosphorus, "Phosphorus (mg)"), (.vitaminC, "Vitamin C (mg)"), (.vitaminA, "Vitamin A, RAE (mcg_RAE)"),
            (.vitaminD, "Vitamin D (D2 + D3) (mcg)"), (.vitaminB12, "Vitamin B-12 (mcg)"), (.folate, "Folate, DFE (mcg_DFE)"),
            (.water, "Water (g)"), (.alcohol, "Alcohol (g)"), (.caffeine, "Caffeine (mg)"),
        ]
        let h = header(of: data)
        let base = try columns(h, ["Food code", "Main food description", "WWEIA Category description"], file: file)
        let nc = try columns(h, columnsByNutrient.map(\.1), file: file)

        // Additional descriptions ("leche fresca") become search aliases.
        let ffile = "fndds_2021_2023_foods.csv"
        let fdata = try read(ffile)
        let fc = try columns(header(of: fdata), ["Food code", "Additional food description"], file: ffile)
        var extra: [UInt64: String] = [:]
        try CSV.forEachRow(in: fdata) { row throws(NutritionError) in
            if let code = UInt64(row[fc[0]].trimmingSpaces), let a = row.value(fc[1]) { extra[code] = a }
        }

        let pfile = "fndds_compact_portions.csv"
        let pdata = try read(pfile)
        let pc = try columns(header(of: pdata), ["food_code", "seq", "portion_description", "grams"], file: pfile)
        var portions: [UInt64: [(Int, PortionDraft)]] = [:]
        try CSV.forEachRow(in: pdata) { row throws(NutritionError) in
            guard let code = UInt64(row[pc[0]].trimmingSpaces), let grams = row.number(pc[3]), grams > 0,
                  let desc = row.value(pc[2]), desc != "Quantity not specified" else { return }
            let (amount, rest) = Portions.splitLeadingAmount(desc)
            guard amount > 0, !rest.isEmpty else { return }
            portions[code, default: []].append((Int(row.number(pc[1]) ?? 0), PortionDraft(amount: Float(amount), grams: Float(grams), text: rest)))
        }

        try CSV.forEachRow(in: data) { row throws(NutritionError) in
            guard let code = UInt64(row[base[0]].trimmingSpaces), let name = row.value(base[1]) else {
                throw .sourceMalformed(path: file, reason: "row without food code/description")
            }
            var n = [Float](repeating: .nan, count: Nutrient.allCases.count)
            for (k, (nut, _)) in columnsByNutrient.enumerated() { n[nut.rawValue] = Self.f(row.number(nc[k])) }
            let p = (portions[code] ?? []).sorted { $0.0 < $1.0 }.map(\.1)
            foods.append(FoodDraft(source: .fndds, id: code, name: name, category: row[base[2]], aliasText: extra[code] ?? "",
                                   flags: n[0].isNaN ? Format.foodFlagNoEnergy : 0, nutrients: n, portions: p))
            report.fnddsFoods += 1
            report.portions += p.count
        }
    }

    // MARK: - Open Food Facts

    /// Core nutrients per 100 g in `Nutrient.core` order, energy estimated with Atwater 4/9/4 when absent.
    private static func product(energyKcal: Double?, protein: Double?, fat: Double?, satFat: Double?, carbs: Double?,
                                fiber: Double?, sugars: Double?, sodiumGrams: Double?, saltGrams: Double?) -> (nutrients: [Float], flags: UInt8, complete: Bool, plausible: Bool) {
        let sodium = sodiumGrams ?? saltGrams.map { $0 / 2.5 }
        guard let p = protein, let f = fat, let sf = satFat, let c = carbs, let fi = fiber, let s = sugars, let na = sodium else {
            return ([], 0, false, false)
        }
        var flags: UInt8 = 0
        var kcal = energyKcal ?? -1
        if energyKcal == nil {
            kcal = 4 * p + 9 * f + 4 * c
            flags |= Format.productFlagEnergyFromMacros
        }
        let grams = [p, f, sf, c, fi, s, na]
        let plausible = grams.allSatisfy { $0 >= 0 && $0 <= 100 } && p + f + c <= 105 && sf <= f + 0.5 && s <= c + 0.5
            && kcal >= 0 && kcal <= 950 && na <= 40
        let values: [Float] = [Float(kcal), Float(p), Float(f), Float(sf), Float(c), Float(fi), Float(s), Float(na * 1000)]
        return (values, flags, true, plausible)
    }

    /// Canonical GTIN-14 for a stored barcode, or nil unless it is 8/12/13/14 digits with a valid GS1 check digit.
    /// Leading zeros lost by spreadsheets (the 2020 export) are restored by trying 12 and 13 digits.
    static func gtin14(_ raw: String) -> UInt64? {
        let digits = raw.trimmingSpaces
        guard !digits.isEmpty, digits.count <= 14, digits.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return nil }
        var candidates: [String] = []
        if [8, 12, 13, 14].contains(digits.count) { candidates.append(digits) }
        if digits.count < 12 { candidates.append(String(repeating: "0", count: 12 - digits.count) + digits) }
        if digits.count < 13 { candidates.append(String(repeating: "0", count: 13 - digits.count) + digits) }
        for c in candidates where GTIN.checkDigitValid(c) {
            let padded = String(repeating: "0", count: 14 - c.count) + c
            if let v = UInt64(padded), v != 0 { return v }
        }
        return nil
    }

    private static func plausibleName(_ s: String) -> Bool {
        s.unicodeScalars.contains { $0.properties.isAlphabetic } && s.count >= 2
    }

    private func loadLifyzer(into products: inout [UInt64: ProductDraft], report: inout Report) throws(NutritionError) {
        let file = "lifyzer_off_2019.csv.gz"
        let data = try readGzip(file)
        let c = try columns(header(of: data), ["code", "product_name", "fat_100g", "saturated_fat_100g", "carbohydrates_100g", "sugars_100g", "fiber_100g", "proteins_100g", "salt_100g", "sodium_100g", "gtin_check_ok"], file: file)
        try CSV.forEachRow(in: data) { row throws(NutritionError) in
            report.offRowsRead += 1
            guard row[c[10]] == "1", let gtin = Self.gtin14(row[c[0]]) else { report.offRejectedBarcode += 1; return }
            guard let name = row.value(c[1]), Self.plausibleName(name) else { report.offRejectedName += 1; return }
            let r = Self.product(energyKcal: nil, protein: row.number(c[7]), fat: row.number(c[2]), satFat: row.number(c[3]),
                                 carbs: row.number(c[4]), fiber: row.number(c[6]), sugars: row.number(c[5]),
                                 sodiumGrams: row.number(c[9]), saltGrams: row.number(c[8]))
            guard r.complete else { report.offRejectedIncomplete += 1; return }
            guard r.plausible else { report.offRejectedImplausible += 1; return }
            if products[gtin] != nil { report.offDuplicates += 1 }
            products[gtin] = ProductDraft(gtin: gtin, name: name, brand: "", serving: "", servingGrams: .nan,
                                          source: .offLifyzer2019, flags: r.flags, nutrients: r.nutrients)
        }
    }

    private func loadOFFExport(_ file: String, delimiter: UInt8, source: FoodSource, energyIsKcal: Bool,
                               into products: inout [UInt64: ProductDraft], report: inout Report) throws(NutritionError) {
        let data = try read(file)
        let h = header(of: data, delimiter: delimiter)
        let c = try columns(h, ["code", "product_name", "brands", "serving_size", "serving_quantity", "energy-kcal_100g", "energy_100g",
                                "proteins_100g", "fat_100g", "saturated-fat_100g", "carbohydrates_100g", "fiber_100g", "sugars_100g",
                                "sodium_100g", "salt_100g"], file: file)
        // Name fallbacks: the main name, then English, then generic names, then any other language (header order).
        var nameColumns = [c[1]]
        for n in ["product_name_en", "generic_name", "generic_name_en", "abbreviated_product_name"] {
            if let i = h.firstIndex(of: n) { nameColumns.append(i) }
        }
        for (i, n) in h.enumerated() where n.hasPrefix("product_name_") && !nameColumns.contains(i) { nameColumns.append(i) }
        let kj = h.firstIndex(of: "energy-kj_100g")
        try CSV.forEachRow(in: data, delimiter: delimiter) { row throws(NutritionError) in
            report.offRowsRead += 1
            guard let gtin = Self.gtin14(row[c[0]]) else { report.offRejectedBarcode += 1; return }
            guard let name = nameColumns.lazy.compactMap({ row.value($0) }).first(where: Self.plausibleName) else {
                report.offRejectedName += 1; return
            }
            var energy = row.number(c[5])
            if energy == nil, energyIsKcal { energy = row.number(c[6]) }
            if energy == nil, let kj, let e = row.number(kj) { energy = e / 4.184 }
            let r = Self.product(energyKcal: energy, protein: row.number(c[7]), fat: row.number(c[8]), satFat: row.number(c[9]),
                                 carbs: row.number(c[10]), fiber: row.number(c[11]), sugars: row.number(c[12]),
                                 sodiumGrams: row.number(c[13]), saltGrams: row.number(c[14]))
            guard r.complete else { report.offRejectedIncomplete += 1; return }
            guard r.plausible else { report.offRejectedImplausible += 1; return }
            if products[gtin] != nil { report.offDuplicates += 1 }
            let brand = row[c[2]].split(separator: ",").first.map { String($0).trimmingSpaces } ?? ""
            let servingGrams = row.number(c[4]).flatMap { $0 > 0 && $0 < 5000 ? Float($0) : nil } ?? .nan
            products[gtin] = ProductDraft(gtin: gtin, name: name, brand: brand, serving: row[c[3]].trimmingSpaces, servingGrams: servingGrams,
                                          source: source, flags: r.flags, nutrients: r.nutrients)
        }
    }

    /// Chinese → English pairs from the OFF taxonomy (names and synonyms).
    private func loadTaxonomy(report: inout Report) throws(NutritionError) -> [(zh: String, en: String)] {
        let file = "off_taxonomy_en_zh.csv"
        let data = try read(file)
        let c = try columns(header(of: data), ["en", "zh", "zh_synonyms"], file: file)
        var pairs = Set<[String]>()
        try CSV.forEachRow(in: data) { row throws(NutritionError) in
            guard let en = row.value(c[0]) else { return }
            var zhs = [row[c[1]]]
            zhs += row[c[2]].split(separator: "|").map(String.init)
            for z in zhs.map(\.trimmingSpaces) where !z.isEmpty && Text.containsHan(z) { pairs.insert([z, en]) }
        }
        let sorted = pairs.map { ($0[0], $0[1]) }.sorted { a, b in
            a.0.utf8.elementsEqual(b.0.utf8) ? a.1.utf8.lexicographicallyPrecedes(b.1.utf8) : a.0.utf8.lexicographicallyPrecedes(b.0.utf8)
        }
        report.zhPairs = sorted.count
        return sorted.map { (zh: $0.0, en: $0.1) }
    }

    // MARK: - Writing

    /// The stemmed search key of a name and the byte length of its head (the part before the first comma).
    static func searchKey(_ name: String) -> (key: String, head: UInt8) {
        let key = Text.tokens(name).map(Text.stem).joined(separator: " ")
        let headText = name.split(separator: ",", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? name
        let head = Text.tokens(headText).map(Text.stem).joined(separator: " ")
        return (key, UInt8(min(head.utf8.count, 255)))
    }

    private func serialize(foods: [FoodDraft], products: [ProductDraft], zh: [(zh: String, en: String)], report: inout Report) -> [UInt8] {
        var strings = StringTable()
        var foodW = ByteWriter(), portionW = ByteWriter(), productW = ByteWriter()
        var portionIndex: UInt32 = 0
        var postingsByToken: [String: [UInt32]] = [:]

        func index(_ entry: UInt32, _ texts: [String]) {
            var seen = Set<String>()
            for t in texts { for tok in Text.tokens(t) { let s = Text.stem(tok); if seen.insert(s).inserted { postingsByToken[s, default: []].append(entry) } } }
        }

        for (i, f) in foods.enumerated() {
            foodW.u64(f.id)
            foodW.u8(f.source.rawValue)
            foodW.u8(f.flags)
            foodW.u16(UInt16(min(f.portions.count, Int(UInt16.max))))
            foodW.u32(strings.ref(f.name))
            foodW.u32(strings.ref(f.category))
            foodW.u32(portionIndex)
            foodW.u32(strings.ref(f.aliasText))
            let key = Self.searchKey(f.name)
            foodW.u32(strings.ref(key.key))
            foodW.u8(key.head); foodW.u8(0); foodW.u16(0)
            for v in f.nutrients { foodW.f32(v) }
            for p in f.portions.prefix(Int(UInt16.max)) {
                portionW.f32(p.amount); portionW.f32(p.grams); portionW.u32(strings.ref(p.text))
                portionIndex += 1
            }
            index(UInt32(i), [f.name, f.aliasText])
        }
        var extraW = ByteWriter()
        var extraCount: UInt32 = 0
        for (j, p) in products.enumerated() {
            productW.u64(p.gtin)
            productW.u32(strings.ref(p.name))
            let key = Self.searchKey(p.name)
            productW.u32(strings.ref(key.key))
            if p.brand.isEmpty && p.serving.isEmpty && p.servingGrams.isNaN {
                productW.u32(0xFFFF_FFFF)
            } else {
                productW.u32(extraCount)
                extraW.u32(strings.ref(p.brand)); extraW.u32(strings.ref(p.serving)); extraW.f32(p.servingGrams)
                extraCount += 1
            }
            productW.u8(p.source.rawValue)
            productW.u8(p.flags)
            productW.u8(key.head); productW.u8(0)
            for (k, v) in p.nutrients.enumerated() {
                productW.u16(v.isNaN ? 0xFFFF : UInt16(min(65534, max(0, (v * Format.productScale[k]).rounded()))))
            }
            index(UInt32(foods.count + j), [p.name, p.brand])
        }

        let tokens = postingsByToken.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        var tokenW = ByteWriter(), postingW = ByteWriter()
        var postingCount: UInt32 = 0
        for t in tokens {
            let list = postingsByToken[t]!
            tokenW.u32(strings.ref(t)); tokenW.u32(postingCount); tokenW.u32(UInt32(list.count))
            for e in list { postingW.u32(e) }
            postingCount += UInt32(list.count)
        }
        var zhW = ByteWriter()
        for p in zh { zhW.u32(strings.ref(p.zh)); zhW.u32(strings.ref(p.en)) }
        report.tokens = tokens.count
        report.postings = Int(postingCount)

        var out = ByteWriter()
        out.bytes = Format.magic
        out.u32(Format.version)
        out.u32(UInt32(Nutrient.allCases.count))
        let tableStart = out.bytes.count
        for _ in 0..<(Format.sectionCount * 2) { out.u32(0) }
        let sections: [(Format.Section, [UInt8], Int)] = [
            (.strings, strings.writer.bytes, strings.writer.bytes.count),
            (.foods, foodW.bytes, foods.count),
            (.portions, portionW.bytes, Int(portionIndex)),
            (.products, productW.bytes, products.count),
            (.tokens, tokenW.bytes, tokens.count),
            (.postings, postingW.bytes, Int(postingCount)),
            (.zhPairs, zhW.bytes, zh.count),
            (.productExtras, extraW.bytes, Int(extraCount)),
        ]
        for (section, bytes, count) in sections {
            out.align8()
            out.patch32(at: tableStart + section.rawValue * 8, UInt32(out.bytes.count))
            out.patch32(at: tableStart + section.rawValue * 8 + 4, UInt32(count))
            out.bytes.append(contentsOf: bytes)
        }
        out.align8()
        return out.bytes
    }
}

/// GS1 check digits (the Barcodes module owns decoding; this is only the database key check).
enum GTIN {
    static func checkDigitValid(_ digits: String) -> Bool {
        let d = digits.utf8.map { Int($0) - 48 }
        guard d.count >= 8, d.allSatisfy({ (0...9).contains($0) }) else { return false }
        var sum = 0
        for (k, v) in d.dropLast().reversed().enumerated() { sum += v * (k % 2 == 0 ? 3 : 1) }
        return (10 - sum % 10) % 10 == d.last!
    }
}
