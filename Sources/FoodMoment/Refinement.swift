import FoodVision
import FoodRecognition
public import FoodCore
public import LLMRefiner
public import Nutrition
import ImageCodecs
import Foundation

/// Whether stage 2 changed a photo's foods.
public enum RefinementStatus: String, Sendable, Codable, Equatable {
    case refined
    /// Left as stage 1 found it, with the reason.
    case unrefined
}

/// What stage 2 did to one photo: refined (with provenance and the points where the two answers disagree) or
/// left unrefined with the reason. Always present on a photo that was offered for refinement.
public struct RefinementInfo: Sendable, Codable, Equatable {
    public var status: RefinementStatus
    public var provider: String?
    public var model: String?
    public var promptVersion: String?
    /// Why it is unrefined: a stable kind (`rate_limited`, `schema_violation`, …) and a message.
    public var kind: String?
    public var reason: String?
    public var cached: Bool?
    public var attempts: Int?
    /// Wall time of the stage (upload preparation, waits, transfers, merge).
    public var milliseconds: Double?
    /// The photo as uploaded (longest side, JPEG bytes, EXIF dropped).
    public var uploadWidth: Int?
    public var uploadHeight: Int?
    public var uploadBytes: Int?
    /// Both answers where they disagree strongly (a confident stage-1 food renamed, grams off by more than 2×).
    public var disagreements: [Disagreement]?
    /// Stage-1 foods the model left out.
    public var dropped: [FoodSummary]?

    public struct FoodSummary: Sendable, Codable, Equatable {
        public var name: String
        public var grams: Double
        public var confidence: Double
        public var box: NormalizedBox
    }

    public struct Disagreement: Sendable, Codable, Equatable {
        public var what: String
        public var model: FoodSummary
        public var llm: FoodSummary
    }

    enum CodingKeys: String, CodingKey {
        case status, provider, model, kind, reason, cached, attempts, disagreements, dropped, milliseconds
        case promptVersion = "prompt_version", uploadWidth = "upload_width", uploadHeight = "upload_height", uploadBytes = "upload_bytes"
    }

    /// One line for people.
    public var summary: String {
        if status == .refined {
            let ms = milliseconds.map { String(format: ", %.0f ms", $0) } ?? ""
            var s = "🤖 refined by \(provider ?? "?") \(model ?? "")" + (cached == true ? " (cached\(ms))" : " (\(attempts ?? 1) attempt\(attempts == 1 ? "" : "s")\(ms))")
            if let d = disagreements, !d.isEmpty { s += "; \(d.count) disagreement\(d.count == 1 ? "" : "s") kept: " + d.map(\.what).joined(separator: "; ") }
            if let d = dropped, !d.isEmpty { s += "; dropped " + d.map(\.name).joined(separator: ", ") }
            return s
        }
        let ms = milliseconds.map { String(format: ", %.0f ms", $0) } ?? ""
        return "🤖 unrefined (\(kind ?? "?")\(attempts.map { ", \($0) attempt\($0 == 1 ? "" : "s")" } ?? "")\(ms)): \(reason ?? "")"
    }
}

/// Stage 2: re-decodes the photo at the upload size, sends it with the stage-1 candidates to the configured
/// model, and merges the validated answer with stage 1. A failure leaves the stage-1 result, marked unrefined.
public final class PhotoRefiner: Sendable {
    public let client: LLMClient
    public let nutrition: NutritionDatabase?
    /// Longest side of the uploaded photo (512…1024).
    public let maxSide: Int

    public init(client: LLMClient, nutrition: NutritionDatabase?, maxSide: Int = 768) {
        self.client = client
        self.nutrition = nutrition
        self.maxSide = min(max(maxSide, LLMConfiguration.maxSideRange.lowerBound), LLMConfiguration.maxSideRange.upperBound)
    }

    /// What distinguishes this refiner's results in the batch journal: provider, model, prompt version, upload size.
    public var identity: String {
        "\(client.provider.kind.rawValue)/\(client.provider.model)/\(LLMPrompt.version)/\(maxSide)"
    }

    /// Refines several photos at once (the client's concurrency limit applies), in input order.
    public func refine(_ photos: [AnalyzedPhoto]) async -> [PhotoResult] {
        await withTaskGroup(of: (Int, PhotoResult).self) { group in
            for (i, p) in photos.enumerated() { group.addTask { (i, await self.refine(p.result, bytes: p.bytes)) } }
            var out = photos.map(\.result)
            for await (i, r) in group { out[i] = r }
            return out
        }
    }

    /// Refines one result; the photo is uploaded from `bytes` (the file as it was analysed) when given, else read
    /// again from `result.file`.
    public func refine(_ result: PhotoResult, bytes: [UInt8]? = nil) async -> PhotoResult {
        guard result.error == nil, let stage1 = result.foods, result.decode != nil else { return result }
        let start = ContinuousClock.now
        var result = result
        let provider = client.provider
        var info = RefinementInfo(status: .unrefined, provider: provider.kind.rawValue, model: provider.model, promptVersion: LLMPrompt.version)
        let input: LLMInput
        do {
            input = try upload(result, bytes: bytes)
        } catch {
            info.kind = "upload_failed"
            info.reason = "cannot prepare \(result.file) for upload: \(error)"
            result.refinement = info
            return result
        }
        info.uploadWidth = input.width; info.uploadHeight = input.height; info.uploadBytes = input.jpeg.count
        switch await client.refine(input) {
        case .failure(let f):
            info.kind = f.error.kind
            info.reason = f.error.description
            info.attempts = f.attempts
        case .success(let outcome):
            let merged = Self.merge(stage1: stage1, answer: outcome.foods, nutrition: nutrition)
            info.status = .refined
            info.cached = outcome.cached
            info.attempts = outcome.attempts
            info.disagreements = merged.disagreements.isEmpty ? nil : merged.disagreements
            info.dropped = merged.dropped.isEmpty ? nil : merged.dropped
            result.foods = merged.foods
            result.unknown = merged.foods.isEmpty
            result.totals = merged.foods.contains(where: \.hasNutrition) ? Macros(totalOf: merged.foods) : nil
            if let db = nutrition {
                let items = merged.foods.compactMap { f in f.foodId.flatMap { db.food(id: $0) }.map { (food: $0, grams: f.grams) } }
                let flags = Plausibility.check(items)
                result.flags = flags.isEmpty ? nil : flags
            }
        }
        var timings = result.timings ?? StageTimings()
        timings[.llm] = (ContinuousClock.now - start).milliseconds
        info.milliseconds = timings[.llm]
        result.timings = timings
        result.refinement = info
        return result
    }

    /// The photo as sent: decoded again (upright) from `bytes` or else `result.file`, longest side at most `maxSide`,
    /// JPEG quality 85 without EXIF (our encoder writes none), plus the stage-1 candidates.
    public func upload(_ result: PhotoResult, bytes: [UInt8]? = nil) throws -> LLMInput {
        let d = result.decode
        let longest = max(d?.width ?? maxSide, d?.height ?? maxSide), shortest = min(d?.width ?? maxSide, d?.height ?? maxSide)
        let minShort = Int((Double(maxSide) * Double(shortest) / Double(max(1, longest))).rounded(.up))
        let options = DecodeOptions(minShortSide: max(1, minShort))
        let decoded = try bytes.map { try ImageDecoder.decode($0, options: options) }
            ?? ImageDecoder.decodeFile(atPath: result.file, options: options)
        let image = decoded.image.downscaled(maxSide: maxSide)
        let jpeg = try ImageEncoder.jpeg(image, quality: 85)
        let candidates = (result.foods ?? []).map {
            LLMCandidate(name: $0.name, nameZh: $0.nameZh, confidence: $0.confidence, box: $0.box ?? .whole, grams: $0.grams)
        }
        return LLMInput(jpeg: jpeg, width: image.width, height: image.height, candidates: candidates)
    }

    // MARK: - Merge

    public struct Merged: Sendable, Equatable {
        public var foods: [MealFood]
        public var disagreements: [RefinementInfo.Disagreement]
        public var dropped: [RefinementInfo.FoodSummary]
    }

    /// Pairs stage-1 foods with the model's by name and box overlap (greedy, best pair first: a name match counts
    /// 1, plus the IoU; a pair needs a name match or IoU ≥ 0.3). A pair keeps stage 1's identity when the names
    /// agree (or the food was taught by the user) and takes the model's grams; otherwise the model's name wins
    /// (`source: llm`). Unpaired model foods are added; unpaired stage-1 foods are dropped (and listed).
    public static func merge(stage1: [MealFood], answer: [LLMFood], nutrition: NutritionDatabase?) -> Merged {
        var pairs: [(score: Double, s: Int, l: Int, names: Bool)] = []
        for (i, s) in stage1.enumerated() {
            for (j, l) in answer.enumerated() {
                let names = namesMatch(s, l)
                let iou = (s.box ?? .whole).iou(l.box)
                if names || iou >= 0.3 { pairs.append(((names ? 1 : 0) + iou, i, j, names)) }
            }
        }
        pairs.sort { $0.score != $1.score ? $0.score > $1.score : ($0.s, $0.l) < ($1.s, $1.l) }
        var usedS = Set<Int>(), usedL = Set<Int>()
        var matched: [Int: (l: Int, names: Bool)] = [:]
        for p in pairs where !usedS.contains(p.s) && !usedL.contains(p.l) {
            usedS.insert(p.s); usedL.insert(p.l); matched[p.s] = (p.l, p.names)
        }
        var foods: [MealFood] = []
        var disagreements: [RefinementInfo.Disagreement] = []
        var dropped: [RefinementInfo.FoodSummary] = []
        for (i, s) in stage1.enumerated() {
            guard let (j, names) = matched[i] else { dropped.append(summary(s)); continue }
            let l = answer[j]
            if names || s.source == .learned || s.source == .user {
                var f = s
                f.grams = (l.grams * 10).rounded() / 10
                f.gramsSource = .llm
                if s.source == .user && s.gramsSource == .user { f.grams = s.grams; f.gramsSource = .user }
                f.joinNutrition(nutrition.flatMap { tableFood(label: f.label, fallbackName: l.name, db: $0) })
                foods.append(f)
            } else {
                foods.append(detected(l, nutrition: nutrition))
                if s.confidence >= 0.5 {
                    disagreements.append(.init(what: "model says \(s.name), llm says \(l.name)", model: summary(s), llm: summary(l)))
                }
            }
            let ratio = max(l.grams, s.grams) / max(1, min(l.grams, s.grams))
            if ratio > 2 {
                disagreements.append(.init(what: "\(s.name): \(Int(s.grams.rounded())) g vs \(Int(l.grams.rounded())) g", model: summary(s), llm: summary(l)))
            }
        }
        for (j, l) in answer.enumerated() where !usedL.contains(j) {
            foods.append(detected(l, nutrition: nutrition))
        }
        return Merged(foods: foods, disagreements: disagreements, dropped: dropped)
    }

    static func summary(_ f: MealFood) -> RefinementInfo.FoodSummary {
        .init(name: f.name, grams: f.grams, confidence: f.confidence, box: f.box ?? .whole)
    }

    static func summary(_ l: LLMFood) -> RefinementInfo.FoodSummary {
        .init(name: l.name, grams: l.grams, confidence: l.confidence, box: l.box)
    }

    /// Folded for comparison: lower case, letters and digits only, a trailing plural "s" removed.
    static func fold(_ s: String) -> String {
        var t = String(s.lowercased().unicodeScalars.filter { CharacterSet.alphanumerics.contains($0) }.map(Character.init))
        if t.count > 3, t.hasSuffix("s") { t.removeLast() }
        return t
    }

    static func namesMatch(_ s: MealFood, _ l: LLMFood) -> Bool {
        let ours = [s.name, s.label.replacingOccurrences(of: "_", with: " "), s.nameZh].map(fold).filter { !$0.isEmpty }
        let theirs = [l.name, l.nameZh].map(fold).filter { !$0.isEmpty }
        for a in ours {
            for b in theirs {
                if a == b { return true }
                if min(a.count, b.count) >= 3, a.contains(b) || b.contains(a) { return true }
            }
        }
        return false
    }

    /// A model-named food: its table food by search (English name, then Chinese; fuzzy matches refused), the
    /// label display when the food is a label's.
    static func detected(_ l: LLMFood, nutrition db: NutritionDatabase?) -> MealFood {
        var label = l.name.lowercased().replacingOccurrences(of: " ", with: "_")
        var display = LabelDisplay.fallback(label)
        var table: Food?
        if let db {
            table = tableFood(name: l.name, nameZh: l.nameZh, db: db)
            if let t = table, let fl = db.labels.values.first(where: { $0.food == t.id }) {
                label = fl.label
                display = LabelDisplay(name: fl.name, nameZh: fl.nameZh, emoji: fl.emoji, color: fl.color, portionGrams: fl.portionGrams, portion: fl.portion)
            }
        }
        var food = MealFood(label: label, name: l.name, nameZh: l.nameZh.isEmpty ? display.nameZh : l.nameZh, emoji: display.emoji,
                            color: display.color, confidence: (l.confidence * 1000).rounded() / 1000, box: l.box,
                            grams: (l.grams * 10).rounded() / 10, gramsSource: .llm, source: .llm)
        food.joinNutrition(table)
        return food
    }

    /// A kept food's table food: its label's, else the model's name searched.
    static func tableFood(label: String, fallbackName: String, db: NutritionDatabase) -> Food? {
        db.food(forLabel: label) ?? tableFood(name: fallbackName, nameZh: "", db: db)
    }

    /// The table food for a model-given name: the first search hit that is a label, an exact or prefix match, or a
    /// whole-word match on a generic (USDA) food; tried with the English name, the Chinese name, then the English
    /// name without its last word ("Lemon wedge" → "Lemon"). Typo matches and branded word matches are refused.
    static func tableFood(name: String, nameZh: String, db: NutritionDatabase) -> Food? {
        var queries = [name, nameZh]
        var words = name.split(separator: " ")
        while words.count > 1 { words.removeLast(); queries.append(words.joined(separator: " ")) }
        for q in queries where !q.isEmpty {
            let hit = db.search(q, limit: 10).first { r in
                [.label, .exact, .prefix].contains(r.match) || (r.match == .token && r.food.source.isGeneric)
            }
            if let hit { return hit.food }
        }
        return nil
    }
}
