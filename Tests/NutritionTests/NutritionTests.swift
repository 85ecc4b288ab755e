import Foundation
import Testing
@testable import Nutrition

/// Repository paths computed from this file: Tests/NutritionTests/NutritionTests.swift → repo root.
enum Paths {
    static let repoRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let nutritionDB = repoRoot.appendingPathComponent("nutrition-db")
    static let sharedNutrition = repoRoot.deletingLastPathComponent().appendingPathComponent("shared/data/nutrition")
    static let trainImages = repoRoot.deletingLastPathComponent().appendingPathComponent("shared/data/images/train")

    static var hasSharedNutrition: Bool {
        FileManager.default.fileExists(atPath: sharedNutrition.appendingPathComponent("sr_legacy_per100g.csv").path)
    }
    static var hasTrainImages: Bool { FileManager.default.fileExists(atPath: trainImages.path) }
}

/// The committed database, loaded once for all tests.
enum Shared {
    static let database: NutritionDatabase? = try? NutritionDatabase.load(directory: Paths.nutritionDB)
}

func db() throws -> NutritionDatabase {
    try #require(Shared.database, "nutrition-db/nutrition.fmdb or labels.json failed to load from \(Paths.nutritionDB.path)")
}

// MARK: - Known values

@Suite struct KnownValues {
    @Test func bananaRawPer100gAndMediumPortion() throws {
        let d = try db()
        let banana = try #require(d.food(id: "sr:173944"))
        #expect(banana.name == "Bananas, raw")
        #expect(banana.per100g[.energyKcal] == 89)
        #expect(banana.per100g[.protein].map { abs($0 - 1.09) < 1e-4 } == true)
        #expect(banana.per100g[.sodium] == 1) // mg
        #expect(banana.provenance.contains("SR Legacy"))
        #expect(banana.provenance.contains("173944"))
        #expect(try d.grams(for: banana, portion: "1 medium") == 118)
        let facts = try d.nutrients(for: banana, grams: 118)
        #expect(abs(facts.nutrients[.energyKcal]! - 105.02) < 0.01)
        // Nutrients the source does not report stay nil, never zero.
        #expect(facts.nutrients[.vitaminC] == nil)
    }

    @Test func labelBananaMapsToRawBanana() throws {
        let d = try db()
        let food = try #require(d.food(forLabel: "banana"))
        #expect(food.id == "sr:173944")
        let label = try #require(d.label("banana"))
        #expect(label.portionGrams == 118)
        #expect(label.portion == "1 medium (7\" to 7-7/8\" long), 118 g")
    }

    @Test func foundationAtwaterFallbackIsFlagged() throws {
        let d = try db()
        // "Tomatoes, grape, raw" has plain energy; find a Foundation food flagged as Atwater via search.
        let hits = d.search("bananas overripe raw", limit: 5)
        let f = try #require(hits.first { $0.food.source == .foundation }?.food)
        #expect(f.per100g[.energyKcal] != nil)
        #expect(f.energyIsAtwater || f.per100g[.energyKcal] != nil)
    }

    @Test func fnddsHasVitaminsAndFoodCode() throws {
        let d = try db()
        let f = try #require(d.food(id: "fndds:63107010"))
        #expect(f.name == "Banana, raw")
        #expect(f.per100g[.vitaminC] != nil)
        #expect(f.portions.contains { $0.unit == "banana" && $0.grams == 126 })
        #expect(f.provenance.contains("food code 63107010"))
    }
}

// MARK: - Products

@Suite struct Products {
    @Test func lookupByGTIN14() throws {
        let d = try db()
        let p = try #require(d.product(gtin14: "08413000065504"))
        #expect(p.name == "Fabada Asturiana")
        #expect(p.gtin14 == "08413000065504")
        #expect(p.id == "off:08413000065504")
        #expect(p.per100g[.fat].map { abs($0 - 8.3) < 0.01 } == true)
        #expect(p.per100g[.sodium].map { abs($0 - 342.5) < 1 } == true) // 0.3425 g -> mg
        #expect(p.energyEstimatedFromMacros)
        // 4 P + 9 F + 4 C = 4 * 6.4 + 9 * 8.3 + 4 * 7.9
        #expect(p.per100g[.energyKcal].map { abs($0 - 131.9) < 0.1 } == true)
        #expect(p.provenance.contains("Open Food Facts contributors"))
        #expect(d.food(id: "off:08413000065504")?.name == "Fabada Asturiana")
    }

    @Test func unknownAndMalformedBarcodes() throws {
        let d = try db()
        #expect(d.product(gtin14: "00000000000000") == nil)
        #expect(d.product(gtin14: "12345678901231") == nil)
        #expect(d.product(gtin14: "not a barcode") == nil)
        #expect(d.product(gtin14: "123456789012345") == nil)
    }
}

// MARK: - Units and portions

@Suite struct UnitsAndPortions {
    @Test(arguments: [
        ("150 g", 150.0), ("150g", 150.0), ("0.5 kg", 500.0), ("5 oz", 141.747615625), ("1 lb", 453.59237),
        ("2 pounds", 907.18474), ("250 mg", 0.25), ("1 1/2 oz", 42.5242846875),
    ])
    func massUnitsConvertDirectly(text: String, grams: Double) throws {
        let banana = try #require(try db().food(id: "sr:173944"))
        let g = try Portions.grams(for: banana, portion: text).grams
        #expect(abs(g - grams) < 1e-6, "\(text) -> \(g)")
    }

    @Test func volumeThroughThePortionTable() throws {
        let d = try db()
        let milk = try #require(d.food(id: "fndds:11111000")) // Milk, whole: 1 cup = 244 g, 1 fl oz = 30.5 g
        #expect(try d.grams(for: milk, portion: "1 cup") == 244)
        #expect(try d.grams(for: milk, portion: "8 fl oz") == 244)
        #expect(abs(try d.grams(for: milk, portion: "1 tbsp") - 244 * 14.78676478125 / 236.5882365) < 1e-9)
        #expect(abs(try d.grams(for: milk, portion: "250 ml") - 250 * 244 / 236.5882365) < 1e-9)
        #expect(abs(try d.grams(for: milk, portion: "1 l") - 1000 * 244 / 236.5882365) < 1e-9)
        let banana = try #require(d.food(id: "sr:173944"))
        #expect(try d.grams(for: banana, portion: "2 cups sliced") == 300)
        #expect(try d.grams(for: banana, portion: "1 cup, mashed") == 225)
        #expect(try d.grams(for: banana, portion: "½ cup sliced") == 75)
    }

    @Test func countsThroughThePortionTable() throws {
        let d = try db()
        let bread = try #require(d.food(id: "fndds:51101000")) // medium or regular slice = 28 g
        #expect(try d.grams(for: bread, portion: "2 slices") == 56)
        #expect(try d.grams(for: bread, portion: "1 large slice") == 43)
        let banana = try #require(d.food(id: "sr:173944"))
        #expect(try d.grams(for: banana, portion: "1 large") == 136)
        #expect(try d.grams(for: banana, portion: "a medium") == 118)
        let egg = try #require(d.food(forLabel: "egg"))
        #expect(try d.grams(for: egg, portion: "2 large") == 100)
    }

    @Test func gramsAndNutrientsBothWays() throws {
        let d = try db()
        let banana = try #require(d.food(id: "sr:173944"))
        let facts = try d.nutrients(for: banana, portion: "1 medium")
        #expect(facts.grams == 118)
        // Back from nutrients to grams: kcal / (kcal per gram) gives the grams again.
        let kcal = try #require(facts.nutrients[.energyKcal])
        #expect(abs(kcal / (89 / 100) - 118) < 1e-4) // Float32 storage
        let ounces = try d.grams(for: banana, portion: "4.16 oz")
        #expect(abs(ounces - 4.16 * 28.349523125) < 1e-9)
    }

    @Test func refusesUnitsTheFoodHasNoPortionFor() throws {
        let d = try db()
        let beignet = try #require(d.food(id: "fndds:53520510")) // only "1 beignet"
        #expect(throws: NutritionError.self) { try d.grams(for: beignet, portion: "1 cup") }
        do {
            _ = try d.grams(for: beignet, portion: "1 cup")
        } catch {
            guard case let .portionNotConvertible(portion, _, available) = error else { Issue.record("wrong error \(error)"); return }
            #expect(portion == "1 cup")
            #expect(available.contains("1 beignet, 45 g"))
            #expect(error.description.contains("1 beignet, 45 g"))
        }
        let apple = try #require(d.food(forLabel: "apple"))
        #expect(throws: NutritionError.self) { try d.grams(for: apple, portion: "2 slices") }
        let product = try #require(d.product(gtin14: "08413000065504"))
        #expect(throws: NutritionError.self) { try d.grams(for: product, portion: "1 cup") }
        #expect(try d.grams(for: product, portion: "200 g") == 200)
    }

    @Test(arguments: ["", "150", "a bit", "some", "-1 g", "0 g", "cup 1/"])
    func refusesUnparsablePortions(text: String) throws {
        let banana = try #require(try db().food(id: "sr:173944"))
        #expect(throws: NutritionError.self) { try Portions.grams(for: banana, portion: text) }
    }

    @Test func invalidGramsAreRefused() throws {
        let d = try db()
        let banana = try #require(d.food(id: "sr:173944"))
        #expect(throws: NutritionError.self) { try d.nutrients(for: banana, grams: 0) }
        #expect(throws: NutritionError.self) { try d.nutrients(for: banana, grams: .nan) }
    }
}

// MARK: - Search

@Suite struct SearchRanking {
    @Test func appleFindsRawApplesBeforeApplePie() throws {
        let hits = try db().search("apple", limit: 60)
        let names = hits.map(\.food.name)
        let raw = try #require(names.firstIndex { $0.hasPrefix("Apples, raw, with skin") })
        let pie = try #require(names.firstIndex { $0.lowercased().contains("pie") })
        #expect(raw < pie)
        #expect(raw == 0)
        // Generic foods before branded products.
        if let firstProduct = hits.firstIndex(where: { !$0.food.source.isGeneric }) {
            #expect(hits[firstProduct...].allSatisfy { !$0.food.source.isGeneric || $0.match == .fuzzy || $0.match == .token })
        }
    }

    @Test func bananaAndGenericBeforeBranded() throws {
        let d = try db()
        #expect(d.search("banana", limit: 1).first?.food.id == "sr:173944")
        let milk = d.search("milk", limit: 5)
        #expect(milk.count == 5)
        #expect(milk.allSatisfy { $0.food.source.isGeneric })
        let whole = d.search("whole milk", limit: 3)
        #expect(whole.first?.food.name == "Milk, whole")
    }

    /// Exact before prefix before token among the plain generic foods (processed forms and products come after, by
    /// the documented ranking): the first exact hit comes before the first token hit.
    @Test func exactBeforePrefixBeforeToken() throws {
        let hits = try db().search("rice", limit: 200)
        let tiers = hits.map(\.match)
        #expect(tiers.contains(.exact))
        let firstExact = try #require(tiers.firstIndex(of: .exact)), firstToken = try #require(tiers.firstIndex(of: .token))
        #expect(firstExact < firstToken)
        let plainExact = hits.prefix { $0.match == .label || $0.match == .exact }
        #expect(plainExact.count >= 3, "\(hits.prefix(5).map(\.food.name))")
    }

    @Test func oneTypoPerWordIsTolerated() throws {
        let d = try db()
        let hits = d.search("chiken brest", limit: 5)
        #expect(!hits.isEmpty)
        #expect(hits.allSatisfy { $0.match == .fuzzy })
        #expect(hits.first.map { $0.food.name.lowercased().hasPrefix("chicken breast") } == true)
        #expect(d.search("bananna", limit: 3).contains { $0.food.id == "sr:173944" })
        // Short words are not fuzzed: "tea" must not match "pea" by a typo.
        #expect(d.search("tae", limit: 5).allSatisfy { $0.match != .fuzzy || $0.food.name.lowercased().contains("tae") })
    }

    @Test func autocompletePrefixes() throws {
        let d = try db()
        let hits = d.search("appl", limit: 5, prefix: true)
        #expect(hits.first.map { $0.food.name.lowercased().hasPrefix("apple") } == true)
        let two = d.search("chicken bre", limit: 5, prefix: true)
        #expect(two.first.map { $0.food.name.lowercased().contains("breast") } == true)
        // Without --prefix, "appl" is only a typo away from "apple" (fuzzy) — still found, ranked as fuzzy.
        #expect(d.search("appl", limit: 3).allSatisfy { $0.match == .fuzzy })
    }

    @Test(arguments: [
        ("苹果", "sr:171688"), ("炒饭", "fndds:58150310"), ("香蕉", "sr:173944"), ("西红柿", "sr:170457"), ("馒头", "fndds:58123120"),
    ])
    func chineseQueriesThroughLabels(query: String, id: String) throws {
        let hits = try db().search(query, limit: 5)
        #expect(hits.first?.food.id == id, "\(query) -> \(hits.map(\.food.name))")
        #expect(hits.first?.via?.contains("label") == true)
    }

    @Test func chineseQueriesThroughTheTaxonomy() throws {
        let hits = try db().search("牛奶", limit: 5)
        let first = try #require(hits.first)
        #expect(first.food.name.hasPrefix("Milk"))
        #expect(first.food.source.isGeneric)
        #expect(first.via?.contains("牛奶") == true)
    }

    @Test func brandedProductsAreSearchable() throws {
        let hits = try db().search("nutella", limit: 5)
        #expect(!hits.isEmpty)
        #expect(hits.allSatisfy { $0.food.name.lowercased().contains("nutella") })
        // The brand's products before dishes named after it ("Nutella sandwich on white bread").
        #expect(hits.prefix(3).allSatisfy { !$0.food.source.isGeneric }, "\(hits.map(\.food.name))")
    }

    @Test func emptyAndNonsenseQueries() throws {
        let d = try db()
        #expect(d.search("", limit: 5).isEmpty)
        #expect(d.search("   ,,, ", limit: 5).isEmpty)
        #expect(d.search("zzqxqzzqx", limit: 5).isEmpty)
        #expect(d.search("apple", limit: 0).isEmpty)
    }

    @Test func timingsArePrinted() throws {
        // Prints, never asserts: wall-clock thresholds do not belong in tests (see `foodmoment dev nutrition-db bench`).
        let clock = ContinuousClock()
        var loaded: NutritionDatabase?
        let load = try clock.measure { loaded = try NutritionDatabase.load(directory: Paths.nutritionDB) }
        let d = try #require(loaded)
        var lines = ["load \(load)"]
        for q in ["apple", "chiken", "appl", "牛奶", "chocolate"] {
            let t = clock.measure { _ = d.search(q, limit: 10, prefix: q == "appl") }
            lines.append("\(q) \(t)")
        }
        print("nutrition timings (debug build unless -c release):", lines.joined(separator: "; "))
    }
}

// MARK: - Plausibility

@Suite struct PlausibilityFlags {
    @Test func ordinaryMealHasNoFlags() throws {
        let d = try db()
        let banana = try #require(d.food(id: "sr:173944"))
        let rice = try #require(d.food(forLabel: "fried_rice"))
        #expect(Plausibility.check([(banana, 118), (rice, 198)]).isEmpty)
    }

    @Test func largeMealAndBadGramsAreFlagged() throws {
        let d = try db()
        let pizza = try #require(d.food(forLabel: "pizza")) // 266 kcal/100 g
        let flags = Plausibility.check([(pizza, 800)])
        #expect(flags.map(\.kind) == [.mealEnergyHigh])
        #expect(Plausibility.check([(pizza, -5)]).map(\.kind) == [.implausibleGrams])
    }

    @Test func usdaFoodsAreRarelyFlagged() throws {
        // Curated USDA data should mostly pass; many flags would mean the bounds are wrong, not the data.
        let d = try db()
        var flagged: [String: Int] = [:]
        for i in 0..<d.foodCount {
            for f in Plausibility.check([(d.entry(i), 100)]) { flagged[f.kind.rawValue, default: 0] += 1 }
        }
        print("USDA foods flagged per 100 g:", flagged.sorted { $0.key < $1.key }, "of", d.foodCount)
        #expect(flagged.values.reduce(0, +) < d.foodCount / 20)
    }

    @Test func atwaterAndDensityChecksUseTheNumbers() throws {
        var banana = try #require(try db().food(id: "sr:173944"))
        banana.per100g[.energyKcal] = 300 // 4P + 4C + 9F is ~98 kcal; also 3 kcal/g for a fruit is allowed (dried fruit)
        #expect(Plausibility.check([(banana, 100)]).map(\.kind) == [.atwaterMismatch])
        banana.per100g[.energyKcal] = 500
        #expect(Set(Plausibility.check([(banana, 100)]).map(\.kind)) == [.atwaterMismatch, .energyDensity])
    }
}

// MARK: - Labels

@Suite struct LabelMapping {
    static let folderLabels = [
        "apple", "apple_pie", "asparagus", "avocado", "baby_back_ribs", "baklava", "banana", "beef_carpaccio", "beef_tartare",
        "beet", "beet_salad", "beignets", "bell_pepper", "bibimbap", "bread", "bread_pudding", "breakfast_burrito", "bun",
        "cabbage", "carrot", "chicken_curry", "chicken_wings", "cucumber", "doughnut", "egg", "eggplant", "fried_dough_twist",
        "fried_rice", "garlic", "ginger", "grape", "grapefruit", "grilled_salmon", "hamburger", "ice_cream", "kiwi", "leek",
        "lemon", "lime", "litchi", "mandarin", "mango", "melon", "mooncake", "mushroom", "nectarine", "onion", "orange",
        "papaya", "passion_fruit", "peach", "pear", "pineapple", "pizza", "plum", "pomegranate", "potato", "ramen", "sachima",
        "steak", "sushi", "sweet_potato", "tomato", "watermelon", "zucchini",
    ]
    static let sohlClasses = [
        "dal_or_sambar", "accompaniment", "bread_or_roti_naan", "curry_dish", "drink", "dry_vegetable", "eggs", "fish_dish",
        "fruits", "pasta", "rice_dish", "salad", "snack_item", "soup", "south_indian_breakfast", "sweet_item",
    ]

    @Test func everyLabelMapsToAnExistingFood() throws {
        let d = try db()
        #expect(Self.folderLabels.count == 65)
        #expect(Self.sohlClasses.count == 16)
        var missing: [String] = []
        for label in Self.folderLabels + Self.sohlClasses {
            guard let l = d.label(label) else { missing.append("\(label): no mapping"); continue }
            guard let food = d.food(id: l.food) else { missing.append("\(label): food \(l.food) not in the tables"); continue }
            #expect(d.food(forLabel: label) == food)
            #expect(food.per100g[.energyKcal] != nil, "\(label) -> \(food.name) has no energy")
        }
        #expect(missing.isEmpty, "\(missing)")
    }

    /// Whatever the shipped food head can answer, the product can name (English and Chinese), draw (emoji) and weigh
    /// (a food with energy and a household portion): `models/food-head/head.json`'s classes against labels.json.
    @Test func everyClassOfTheShippedHeadHasANutritionRowAndNames() throws {
        let d = try db()
        let data = try Data(contentsOf: Paths.repoRoot.appendingPathComponent("models/food-head/head.json"))
        let head = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let classes = try #require(head["classes"] as? [String])
        #expect(classes.count >= 160, "the vocabulary has \(classes.count) labels")
        var missing: [String] = []
        for label in classes {
            guard let l = d.label(label) else { missing.append("\(label): no row in labels.json"); continue }
            guard let food = d.food(id: l.food), let kcal = food.per100g[.energyKcal], kcal >= 0 else {
                missing.append("\(label): food \(l.food) missing or without energy"); continue
            }
            if l.name.isEmpty || !Text.containsHan(l.nameZh) || l.emoji.isEmpty { missing.append("\(label): names or emoji") }
            if !(l.portionGrams > 0 && l.portionGrams < 2000) { missing.append("\(label): portion \(l.portionGrams) g") }
        }
        #expect(missing.isEmpty, "\(missing)")
    }

    @Test(.enabled(if: Paths.hasTrainImages, "needs ../shared/data/images/train"))
    func trainFoldersAreTheLabelList() throws {
        let folders = try FileManager.default.contentsOfDirectory(atPath: Paths.trainImages.path).filter { name in
            var isDir: ObjCBool = false
            return FileManager.default.fileExists(atPath: Paths.trainImages.appendingPathComponent(name).path, isDirectory: &isDir) && isDir.boolValue
        }
        #expect(Set(folders) == Set(Self.folderLabels))
        let d = try db()
        for f in folders { #expect(d.food(forLabel: f) != nil, "folder \(f) has no mapping") }
    }

    @Test func labelEntriesAreWellFormed() throws {
        let d = try db()
        for (key, l) in d.labels {
            #expect(l.label == key)
            #expect(!l.name.isEmpty && !l.emoji.isEmpty)
            #expect(Text.containsHan(l.nameZh), "\(key) name_zh")
            #expect(l.color.count == 7 && l.color.hasPrefix("#") && l.color.dropFirst().allSatisfy(\.isHexDigit), "\(key) color")
            #expect(l.portion.hasSuffix(", \(Portions.format(l.portionGrams)) g"), "\(key) portion text")
            #expect(l.aliases.zh.allSatisfy(Text.containsHan), "\(key) zh aliases")
        }
        // Picked carefully: the raw fruit, not a pie or juice.
        #expect(d.food(forLabel: "banana")?.name == "Bananas, raw")
        #expect(d.food(forLabel: "apple")?.name.hasPrefix("Apples, raw, with skin") == true)
        #expect(d.food(forLabel: "fried_rice")?.name == "Rice, fried, NFS")
    }
}

// MARK: - Building

@Suite struct Building {
    @Test func missingOrDamagedDatabaseIsAClearError() throws {
        #expect(throws: NutritionError.databaseMissing(path: "/nonexistent/\(Format.fileName)")) {
            try NutritionDatabase.load(directory: URL(fileURLWithPath: "/nonexistent"))
        }
        let tmp = FileManager.default.temporaryDirectory.appendingPathComponent("nutrition-bad-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: tmp, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: tmp) }
        try Data("FMNUTDB1 but truncated".utf8).write(to: tmp.appendingPathComponent(Format.fileName))
        #expect(throws: NutritionError.self) { try NutritionDatabase.load(directory: tmp) }
        // Regression (fuzzer: an empty file leaked Foundation's read buffer): refused before reading, with the size.
        try Data().write(to: tmp.appendingPathComponent(Format.fileName))
        do {
            _ = try NutritionDatabase.load(directory: tmp)
            Issue.record("loaded an empty database")
        } catch {
            #expect(error.description.contains("0 bytes"))
        }
        var header = Format.magic + [UInt8](repeating: 0, count: 72)
        header[8] = 99 // wrong version
        try Data(header).write(to: tmp.appendingPathComponent(Format.fileName))
        do {
            _ = try NutritionDatabase.load(directory: tmp)
            Issue.record("loaded a database of version 99")
        } catch {
            #expect(error.description.contains("version"))
        }
    }
}

// MARK: - Parsing helpers

@Suite struct Helpers {
    @Test func csvQuotesNewlinesAndBOM() throws {
        let text = "\u{FEFF}a,b,c\n1,\"x, \"\"y\"\"\",3\n2,\"multi\nline\",\r\n\n3,,\n"
        var rows: [[String]] = []
        let header = try CSV.forEachRow(in: Array(text.utf8)) { row throws(NutritionError) in rows.append((0..<row.count).map { row[$0] }) }
        #expect(header == ["a", "b", "c"])
        #expect(rows == [["1", "x, \"y\"", "3"], ["2", "multi\nline", ""], ["3", "", ""]])
        var tsv: [[String]] = []
        try CSV.forEachRow(in: Array("h1\th2\nv1\tv,2\n".utf8), delimiter: 9) { row throws(NutritionError) in tsv.append([row[0], row[1]]) }
        #expect(tsv == [["v1", "v,2"]])
    }

    @Test func textFoldingAndStemming() {
        #expect(Text.tokens("Crème Brûlée, 100% (Cow's)") == ["creme", "brulee", "100", "cows"])
        #expect(Text.tokens("Bananas, raw") == ["bananas", "raw"])
        #expect(Text.stem("apples") == "apple")
        #expect(Text.stem("berries") == "berry")
        #expect(Text.stem("tomatoes") == "tomato")
        #expect(Text.stem("peaches") == "peach")
        #expect(Text.stem("hummus") == "hummus")
        #expect(Text.stem("glass") == "glass")
        #expect(Text.containsHan("炒饭"))
        #expect(!Text.containsHan("fried rice"))
    }

    @Test(arguments: [
        ("chicken", "chiken", true), ("chicken", "chicken", true), ("chicken", "chikcen", true), ("chicken", "chickenn", true),
        ("chicken", "xhicken", true), ("chicken", "chiknn", false), ("apple", "apepl", false), ("apple", "aple", true),
    ])
    func damerauLevenshteinWithinOne(a: String, b: String, expected: Bool) {
        let x = Array(a.utf8), y = Array(b.utf8)
        let r = x.withUnsafeBufferPointer { p in y.withUnsafeBufferPointer { q in Text.withinOneEdit(p, q) } }
        #expect(r == expected)
    }

    @Test func portionParsing() throws {
        #expect(try Portions.parse("1 1/2 cups").quantity == 1.5)
        #expect(try Portions.parse("½ cup").quantity == 0.5)
        #expect(try Portions.parse("half a cup").quantity == 0.5)
        #expect(try Portions.parse("5oz").unit?.kind == .mass)
        #expect(try Portions.parse("8 fl oz").unit?.factor == 29.5735295625)
        #expect(try Portions.parse("2 slices").unit == nil)
        #expect(Portions.splitLeadingAmount("1 cup, sliced") == (1, "cup, sliced"))
        #expect(Portions.splitLeadingAmount("Quantity not specified") == (1, "Quantity not specified"))
        #expect(Portions.splitLeadingAmount("1 1/2 cup") == (1.5, "cup"))
    }
}
