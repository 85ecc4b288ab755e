import ArgumentParser
import Foundation
import Nutrition
import FoodTraining

/// `--nutrition-db DIR`: where nutrition.fmdb and labels.json live. (`--db` names the meal store.)
struct NutritionDBOptions: ParsableArguments {
    @Option(name: .customLong("nutrition-db"), help: ArgumentHelp(
        "Nutrition database directory (default: $FOODMOMENT_NUTRITION_DB, else the nutrition-db/ folder of the package the executable was built in, else ./nutrition-db).",
        valueName: "dir"))
    var directory: String?

    func load() throws -> NutritionDatabase {
        let url = directory.map { URL(fileURLWithPath: $0) } ?? ProcessSettings.nutritionDirectory
        do { return try ProcessSettings.loadNutrition(url) } catch {
            Output.error(error.description)
            throw Exit.failed
        }
    }
}


func printJSON<T: Encodable>(_ value: T) throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    let data = try encoder.encode(value)
    FileHandle.standardOutput.write(data + Data("\n".utf8))
}

/// `foodmoment dev nutrition-db …`: build and inspect the compiled nutrition tables.
struct NutritionDBCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "nutrition-db",
        abstract: "Build or benchmark the compiled nutrition database (USDA + Open Food Facts).",
        subcommands: [Build.self, Bench.self]
    )

    struct Build: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "build",
            abstract: "Compile the USDA and Open Food Facts tables into nutrition-db/nutrition.fmdb.gz.",
            discussion: """
            Reproducible: the same input tables give byte-identical tables. They are written gzip-compressed, as the \
            package ships them; the first run that loads them unpacks them once into ~/.cache/foodmoment.

            Examples:
              foodmoment dev nutrition-db build --from ../shared/data/nutrition --out nutrition-db
              foodmoment dev nutrition-db build --from ../shared/data/nutrition --out /tmp/db --json
            """
        )

        @Option(help: ArgumentHelp("Folder with the source tables (sr_legacy_per100g.csv, lifyzer_off_2019.csv.gz, …).", valueName: "dir"))
        var from: String

        @Option(help: ArgumentHelp("Output folder (created if needed).", valueName: "dir"))
        var out: String

        @Flag(help: "Print the build report as JSON.")
        var json = false

        func validate() throws {
            var isDir: ObjCBool = false
            guard FileManager.default.fileExists(atPath: from, isDirectory: &isDir), isDir.boolValue else {
                throw ValidationError("--from \(from) is not a folder")
            }
        }

        func run() async throws {
            let start = Date()
            let report: NutritionDatabaseBuilder.Report
            do {
                report = try NutritionDatabaseBuilder(sourceDirectory: URL(fileURLWithPath: from)).write(to: URL(fileURLWithPath: out))
            } catch {
                Output.error(error.description)
                throw Exit.failed
            }
            let seconds = Date().timeIntervalSince(start)
            if json {
                try printJSON(report)
            } else {
                print("""
                wrote \(out)/nutrition.fmdb.gz: \(report.packedBytes) bytes (\(report.bytes) unpacked) in \(String(format: "%.1f", seconds)) s
                USDA: \(report.srLegacyFoods) SR Legacy, \(report.foundationFoods) Foundation (\(report.foundationAtwaterEnergy) with Atwater energy, \(report.foundationNoEnergy) without energy), \(report.fnddsFoods) FNDDS; \(report.portions) portions
                Open Food Facts: \(report.offRowsRead) rows read; kept \(report.products) products (\(report.productsEnergyFromMacros) with energy estimated from macros)
                  rejected: \(report.offRejectedBarcode) barcode, \(report.offRejectedName) name, \(report.offRejectedIncomplete) incomplete core nutrients, \(report.offRejectedImplausible) implausible; \(report.offDuplicates) replaced by a newer export
                  by source: \(report.productsBySource.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", "))
                search index: \(report.tokens) words, \(report.postings) postings; \(report.zhPairs) Chinese→English pairs
                """)
            }
        }
    }

    struct Bench: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "bench",
            abstract: "Time loading the database and a set of searches (build with -c release for real figures).",
            discussion: """
            Examples:
              foodmoment dev nutrition-db bench
              foodmoment dev nutrition-db bench --repeat 50 apple 牛奶 "chiken breast"
            """
        )

        @OptionGroup var db: NutritionDBOptions

        @Option(help: "Times each query is run.")
        var `repeat` = 20

        @Argument(help: "Queries to time (default: a fixed mix of English, Chinese, typo and prefix queries).")
        var queries: [String] = []

        func run() async throws {
            let clock = ContinuousClock()
            var database: NutritionDatabase?
            let loadTime = try clock.measure { database = try db.load() }
            guard let database else { throw Exit.failed }
            print("load: \(ms(loadTime)) ms (\(database.foodCount) foods, \(database.productCount) products)")
            var firstLookup: Duration = .zero
            let lookupStart = clock.now
            _ = database.food(forLabel: "banana")
            firstLookup = clock.now - lookupStart
            print("first label look-up after load: \(ms(firstLookup)) ms")
            let list = queries.isEmpty ? ["apple", "banana", "chicken breast", "chiken", "appl", "coca cola", "nutella", "fried rice", "苹果", "牛奶", "炒饭", "chocolate"] : queries
            for q in list {
                var times: [Duration] = []
                for i in 0..<max(1, `repeat`) {
                    let t = clock.measure { _ = database.search(q, limit: 10, prefix: q == "appl" || i < 0) }
                    times.append(t)
                }
                times.sort()
                let p50 = times[times.count / 2], worst = times.last!
                print("search \(q.padding(toLength: 16, withPad: " ", startingAt: 0)) p50 \(ms(p50)) ms  max \(ms(worst)) ms")
            }
        }

        func ms(_ d: Duration) -> String {
            let v = Double(d.components.seconds) * 1000 + Double(d.components.attoseconds) / 1e15
            return String(format: "%.2f", v)
        }
    }
}

/// `foodmoment search QUERY`: foods and products by name, English or Chinese.
struct SearchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "search",
        abstract: "Search foods (USDA) and packaged products (Open Food Facts) by name, in English or Chinese.",
        discussion: """
        Ranking: label alias > exact name (or name head: "apple" finds "Apples, raw, with skin") > name \
        prefix > all words > one typo per word (words of 4+ letters); USDA foods before branded products, \
        then shorter names. Chinese queries go through label names (labels.json) and the Open Food Facts \
        taxonomy (zh -> en).

        Examples:
          foodmoment search apple
          foodmoment search "chiken breast" --limit 5
          foodmoment search appl --prefix           autocomplete: the last word may be incomplete
          foodmoment search 炒饭 --json
        """
    )

    @Argument(help: "Search text.") var query: String
    // Unconditional: `--limit -3` is read as a value and refused with the range, not as an unknown option.
    @Option(name: .shortAndLong, parsing: .unconditional, help: "Maximum number of results (1-200).") var limit = 10
    @Flag(help: "Autocomplete mode: treat the last word as a prefix.") var prefix = false
    @Flag(help: "JSON output.") var json = false
    @OptionGroup var db: NutritionDBOptions

    func validate() throws {
        guard (1...200).contains(limit) else { throw ValidationError("--limit must be between 1 and 200 (got \(limit))") }
        guard !query.trimmingCharacters(in: .whitespaces).isEmpty else { throw ValidationError("the search text is empty") }
    }

    struct Hit: Encodable {
        var id: String, name: String, brand: String?, source: String, match: String, via: String?
        var energyKcalPer100g: Double?
        enum CodingKeys: String, CodingKey { case id, name, brand, source, match, via, energyKcalPer100g = "energy_kcal_per_100g" }
    }

    func run() async throws {
        let database = try db.load()
        let results = database.search(query, limit: limit, prefix: prefix)
        if json {
            try printJSON(results.map { r in
                Hit(id: r.food.id, name: r.food.name, brand: r.food.brand.isEmpty ? nil : r.food.brand, source: r.food.source.dataType,
                    match: r.match.rawValue, via: r.via, energyKcalPer100g: r.food.per100g[.energyKcal].map { ($0 * 100).rounded() / 100 })
            })
            return
        }
        if results.isEmpty {
            Output.error("no match for \"\(query)\"")
            throw Exit.failed
        }
        let idWidth = results.map(\.food.id.count).max() ?? 0
        for r in results {
            let kcal = r.food.per100g[.energyKcal].map { "\(Int($0.rounded())) kcal/100 g" } ?? "energy n/a"
            let brand = r.food.brand.isEmpty ? "" : " (\(r.food.brand))"
            let via = r.via.map { "  [\($0)]" } ?? ""
            print("\(r.food.id.padding(toLength: idWidth, withPad: " ", startingAt: 0))  \(r.match.rawValue.padding(toLength: 6, withPad: " ", startingAt: 0))  \(r.food.name)\(brand) — \(kcal)\(via)")
        }
    }
}

/// `foodmoment nutrition FOOD`: nutrients of an amount of one food.
struct NutritionCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "nutrition",
        abstract: "Nutrients of an amount of a food (per-100 g values × grams / 100, with provenance).",
        discussion: """
        FOOD is a food id (sr:173944, fndds:63107010, off:08413000065504), a GTIN, a recognition label \
        (banana, fried_rice) or search text (the best USDA hit is used, else the best product). Without \
        --grams or --portion, a label's default portion is used, otherwise 100 g (the output says which).

        Units: g, kg, mg, oz, lb are masses, converted directly. ml, l, tsp, tbsp, cup, fl oz, pint, quart \
        are US customary volumes (cup 236.59 ml, fl oz 29.57 ml, tbsp 14.79 ml, tsp 4.93 ml; US food labels \
        round these to 240/30/15/5 ml), converted through the food's own portion table. Counts (slice, \
        piece, medium, large, ...) come from the portion table. A unit the food has no portion for is \
        refused, listing the portions it does have.

        Examples:
          foodmoment nutrition banana --portion "1 medium"
          foodmoment nutrition sr:173944 --grams 150 --json
          foodmoment nutrition "whole milk" --portion "1 cup"
          foodmoment nutrition 8413000065504 --grams 200      a product by barcode
        """
    )

    @Argument(help: "Food id, GTIN, label or search text.") var food: String
    @Option(parsing: .unconditional, help: "Amount in grams.") var grams: Double?
    @Flag(help: "Accept an amount over 5 kg of one food (it looks like a typo otherwise).") var force = false
    @Option(help: "Household amount: \"1 cup\", \"2 slices\", \"150 g\", \"5 oz\", \"1 medium\".") var portion: String?
    @Flag(help: "JSON output.") var json = false
    @OptionGroup var db: NutritionDBOptions

    func validate() throws {
        if grams != nil && portion != nil { throw ValidationError("give either --grams or --portion, not both") }
        if let g = grams, !(g > 0 && g.isFinite) { throw ValidationError("--grams must be a positive number (got \(g))") }
        if let g = grams, g > Self.largeGrams, !force {
            throw ValidationError("--grams \(Portions.format(g)) is more than 5 kg of one food; add --force if that is right")
        }
    }

    /// More than this of one food is refused without --force (a typo: `--grams 1e9`).
    static let largeGrams = 5_000.0

    struct FactsJSON: Encodable {
        var id: String, name: String, brand: String?, source: String, provenance: String
        var grams: Double, portion: String
        var energyIsAtwater: Bool, energyEstimatedFromMacros: Bool
        var per100g: NutrientValues, nutrients: NutrientValues
        var portions: [String]
        enum CodingKeys: String, CodingKey {
            case id, name, brand, source, provenance, grams, portion, per100g = "per_100g", nutrients, portions
            case energyIsAtwater = "energy_is_atwater", energyEstimatedFromMacros = "energy_estimated_from_macros"
        }
    }

    func run() async throws {
        let database = try db.load()
        let facts: NutritionFacts
        do {
            let f = try database.resolve(food)
            if let grams {
                facts = try database.nutrients(for: f, grams: grams)
            } else if let portion {
                facts = try database.nutrients(for: f, portion: portion)
            } else if let l = database.label(food), l.food == f.id {
                var x = try database.nutrients(for: f, grams: l.portionGrams)
                x.portion = "label default: \(l.portion)"
                facts = x
            } else {
                var x = try database.nutrients(for: f, grams: 100)
                x.portion = "100 g (no amount given)"
                facts = x
            }
        } catch {
            Output.error(error.description)
            throw Exit.failed
        }
        if facts.grams > Self.largeGrams, !force {
            Output.error("\(facts.portion) is \(Portions.format(facts.grams)) g, more than 5 kg of one food; add --force if that is right")
            throw Exit.usage
        }
        let f = facts.food
        if json {
            try printJSON(FactsJSON(id: f.id, name: f.name, brand: f.brand.isEmpty ? nil : f.brand, source: f.source.dataType, provenance: f.provenance,
                                 grams: (facts.grams * 100).rounded() / 100, portion: facts.portion, energyIsAtwater: f.energyIsAtwater,
                                 energyEstimatedFromMacros: f.energyEstimatedFromMacros, per100g: f.per100g, nutrients: facts.nutrients,
                                 portions: f.portions.map(\.description)))
            return
        }
        print("\(f.name)\(f.brand.isEmpty ? "" : " (\(f.brand))") [\(f.id)]")
        print("source: \(f.provenance)")
        print("amount: \(Portions.format(facts.grams)) g — \(facts.portion)")
        if f.energyIsAtwater { print("note: energy is Atwater energy (no plain energy value in Foundation Foods)") }
        if f.energyEstimatedFromMacros { print("note: energy estimated from macros (4 P + 9 F + 4 C), not reported by the product") }
        for (n, v) in facts.nutrients.reported {
            let shown = v >= 100 ? String(format: "%.0f", v) : (v >= 1 ? String(format: "%.1f", v) : String(format: "%.2f", v))
            print("  \(n.displayName.padding(toLength: 16, withPad: " ", startingAt: 0)) \(shown) \(n.unit)")
        }
    }
}
