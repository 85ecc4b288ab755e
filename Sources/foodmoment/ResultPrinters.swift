import FoodMoment
import FoodVision
import Foundation
import Nutrition

/// One output format of `analyze`: told when the batch starts, of every finished photo (in input order), and when it
/// ends. Results go to stdout (or the user's file); notes and progress stay on stderr.
protocol ResultPrinter {
    func begin()
    func print(_ item: BatchRunner.Item)
    func finish(summary: String)
}

extension ResultPrinter {
    func begin() {}
    /// Machine formats keep stdout for the results: the summary goes to stderr.
    func finish(summary: String) { Output.note("summary: " + summary) }
}

/// `--json`: one array, streamed as photos finish (each element pretty-printed and indented).
final class JSONArrayPrinter: ResultPrinter {
    private let out = LineWriter.standardOutput
    private let encoder: JSONEncoder = {
        let e = JSONEncoder()
        e.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return e
    }()
    private var first = true

    func begin() { out.write("[") }

    func print(_ item: BatchRunner.Item) {
        guard let data = try? encoder.encode(item.result) else { return }
        let text = String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
            .map { "  " + $0 }.joined(separator: "\n")
        out.write((first ? "" : ",") + "\n" + text, newline: false)
        first = false
    }

    func finish(summary: String) {
        out.write(first ? "]" : "\n]")
        Output.note("summary: " + summary)
    }
}

/// `--ndjson`: one compact JSON object per photo per line.
struct NDJSONPrinter: ResultPrinter {
    private let out = LineWriter.standardOutput
    private let encoder: JSONEncoder = {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return e
    }()

    func print(_ item: BatchRunner.Item) {
        if let data = try? encoder.encode(item.result) { out.write(String(decoding: data, as: UTF8.self)) }
    }
}

/// `--csv FILE`: one row per food (one per file without foods), beside whichever format goes to stdout.
struct CSVFilePrinter: ResultPrinter {
    private let out: LineWriter

    init(path: String) throws { out = try LineWriter(path: path) }

    func begin() { out.write(ResultCSV.header) }
    func print(_ item: BatchRunner.Item) { for row in ResultCSV.rows(item.result) { out.write(row) } }
    func finish(summary: String) { out.close() }
}

/// The default: aligned text for a person, one block per photo, the summary line last.
struct TextPrinter: ResultPrinter {
    var nameWidth: Int

    func finish(summary: String) { Swift.print(summary) }

    /// "new meal 3f2a9c1b at 12:31 (EXIF time)"; says when a file time kept the photo out of other meals.
    static func diaryLine(_ logged: LoggedMeal) -> String {
        let id = logged.mealID.prefix(8)
        var text: String
        switch logged.outcome {
        case .created: text = "new meal \(id)"
        case .merged: text = "merged into meal \(id)"
        case .duplicate: return "already in meal \(id)"
        case .replaced: text = "foods replaced in meal \(id)"
        case .deleted: return "not logged: you deleted its meal earlier (--force logs it again)"
        }
        if let time = logged.time {
            text += " at \(LocalDates.hhmm(time))"
            switch logged.timeSource {
            case .exif?, .exifLocal?: text += " (EXIF time)"
            case .given?: text += " (--time)"
            case .fileTime? where logged.outcome == .created:
                text += " (file time: no EXIF date, so not merged with other photos; --time sets one)"
            case .fileTime?: text += " (file time)"
            case nil: break
            }
        }
        return text
    }

    func print(_ item: BatchRunner.Item) {
        // Every line through `visible`: the file name, and error messages that quote it, may hold control characters.
        func out(_ text: String) { Swift.print(Output.visible(text)) }
        let r = item.result
        let file = Output.pad(Output.visible(r.file), nameWidth)
        if let d = r.decode {
            let size = Output.pad("\(d.format.uppercased()) \(d.width)x\(d.height)", 15)
            let orient = Output.pad(d.orientation == 1 ? "upright" : "EXIF \(d.orientationDescription)", 27)
            let decoded = Output.pad("decoded \(d.decodedWidth)x\(d.decodedHeight) (\(d.scale))", 24)
            // Decoding alone, then the photo's whole time (decode, recognition, nutrition, refinement).
            var time = String(format: "%7.1f ms", d.decodeMilliseconds)
            if let total = r.timings?[.total] {
                time += String(format: ", total %7.1f ms", total + (r.timings?[.llm] ?? 0))
            }
            var line = "\(file)  \(size) \(orient) \(decoded) \(time)"
            if !d.warnings.isEmpty { line += "  warning: \(d.warnings.joined(separator: "; "))" }
            if let e = r.error { line += "  error: \(e.message)" }
            if item.origin == .journal { line += "  (journal)" }
            out(line)
            if r.unknown == true {
                // The head's likeliest labels, so a person can pick one (`meal edit`) when the photo is a food.
                let guesses = (r.top ?? []).prefix(3).filter { $0.probability >= 0.05 }
                    .map { String(format: "%@ %.2f", $0.label, $0.probability) }
                let best = guesses.isEmpty ? "" : " (best guesses: \(guesses.joined(separator: ", ")))"
                out("    ❓ unknown / not a food we know\(best)")
            }
            for f in r.foods ?? [] {
                let food = f
                let area = food.box ?? .whole
                let names = food.nameZh.isEmpty ? food.name : "\(food.name) · \(food.nameZh)"
                let box = String(format: "[%.2f %.2f %.2f×%.2f]", area.x, area.y, area.w, area.h)
                let kcal = f.knownNutrients.map { String(format: "%5.0f kcal", $0.kcal) } ?? "      — kcal"
                out("    \(food.emoji) \(Output.pad(names, 30)) \(String(format: "%.2f", food.confidence))  \(box)  "
                      + "\(Output.padLeft(String(format: "%.0f g", food.grams), 6)) (\(food.gramsSource.rawValue))  \(kcal)"
                      + (food.source == .learned ? "  taught by you" : ""))
            }
            if let t = r.totals, (r.foods?.count ?? 0) > 1 {
                out(String(format: "    total %.0f kcal · protein %.1f g · carbs %.1f g · fat %.1f g · fiber %.1f g",
                             t.kcal, t.proteinG, t.carbsG, t.fatG, t.fiberG))
            }
            for flag in r.flags ?? [] { out("    ⚠️  \(flag.message)") }
            if let info = r.refinement { out("    \(info.summary)") }
            if case .success(let path)? = item.output { out("    🖼️  \(path)") }
            if let logged = item.logged { out("    📔 " + Self.diaryLine(logged)) }
        } else if let e = r.error {
            out("\(file)  error: \(e.message)")
        } else if let reason = r.skipReason {
            out("\(file)  skipped: \(reason)")
        }
    }
}
