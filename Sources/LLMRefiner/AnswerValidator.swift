import FoodCore
import Foundation

/// Turns the model's text into validated foods: strict JSON (one surrounding Markdown code fence is tolerated,
/// nothing else), every field present with the right type, numbers in range, boxes inside the photo.
public enum AnswerValidator {
    public static let maxFoods = 24
    public static let gramsRange: ClosedRange<Double> = 1...3000
    /// Boxes may overshoot the photo by this much (rounding); they are clipped afterwards.
    public static let boxTolerance = 0.02

    public static func foods(fromAnswer text: String) throws(LLMError) -> [LLMFood] {
        var t = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if t.hasPrefix("```") {
            t = String(t.drop { $0 != "\n" }.dropFirst())
            if t.hasSuffix("```") { t = String(t.dropLast(3)) }
        }
        guard !t.isEmpty else { throw .malformedJSON("empty answer") }
        let parsed: Any
        do {
            parsed = try JSONSerialization.jsonObject(with: Data(t.utf8))
        } catch {
            throw .malformedJSON("\(preview(t)) (\(t.utf8.count) bytes)")
        }
        guard let root = parsed as? [String: Any] else { throw .schemaViolation("the answer is not a JSON object") }
        guard let list = root["foods"] else { throw .schemaViolation("missing \"foods\"") }
        guard let items = list as? [Any] else { throw .schemaViolation("\"foods\" is not an array") }
        guard items.count <= maxFoods else { throw .schemaViolation("\(items.count) foods; at most \(maxFoods) are plausible in one photo") }
        var foods: [LLMFood] = []
        for (i, item) in items.enumerated() {
            let at = "foods[\(i)]"
            guard let o = item as? [String: Any] else { throw .schemaViolation("\(at) is not an object") }
            guard let name = o["name"] as? String else { throw .schemaViolation("\(at).name is missing or not a string") }
            let trimmed = name.trimmingCharacters(in: .whitespacesAndNewlines)
            guard !trimmed.isEmpty, trimmed.count <= 120 else { throw .schemaViolation("\(at).name is empty or longer than 120 characters") }
            guard let nameZh = o["name_zh"] as? String else { throw .schemaViolation("\(at).name_zh is missing or not a string") }
            guard let grams = JSON.number(o["grams"]) else { throw .schemaViolation("\(at).grams is missing or not a number") }
            guard grams.isFinite, gramsRange.contains(grams) else {
                throw .schemaViolation("\(at).grams = \(grams) is not a plausible portion (\(Int(gramsRange.lowerBound))–\(Int(gramsRange.upperBound)) g)")
            }
            guard let confidence = JSON.number(o["confidence"]) else { throw .schemaViolation("\(at).confidence is missing or not a number") }
            guard confidence.isFinite, (0...1).contains(confidence) else { throw .schemaViolation("\(at).confidence = \(confidence) is outside 0…1") }
            guard let b = o["box"] as? [String: Any] else { throw .schemaViolation("\(at).box is missing or not an object") }
            var v: [Double] = []
            for key in ["x", "y", "w", "h"] {
                guard let n = JSON.number(b[key]), n.isFinite else { throw .schemaViolation("\(at).box.\(key) is missing or not a number") }
                v.append(n)
            }
            let box = NormalizedBox(x: v[0], y: v[1], w: v[2], h: v[3])
            let tol = boxTolerance
            guard box.w > 0, box.h > 0, box.x >= -tol, box.y >= -tol, box.x + box.w <= 1 + tol, box.y + box.h <= 1 + tol else {
                throw .schemaViolation("\(at).box [\(v.map { String(format: "%.3f", $0) }.joined(separator: ", "))] is not inside the photo (x, y, w, h normalised to 0…1)")
            }
            foods.append(LLMFood(name: trimmed, nameZh: nameZh.trimmingCharacters(in: .whitespacesAndNewlines), grams: grams,
                                 confidence: confidence, box: Self.inside(box) ? box : box.clipped))
        }
        return foods
    }

    static func inside(_ b: NormalizedBox) -> Bool { b.x >= 0 && b.y >= 0 && b.x + b.w <= 1 && b.y + b.h <= 1 }

    static func preview(_ s: String) -> String {
        let p = s.prefix(60).replacingOccurrences(of: "\n", with: " ")
        return s.count > 60 ? "\"\(p)…\"" : "\"\(p)\""
    }
}
