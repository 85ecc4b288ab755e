import FoodCore
import Foundation

/// The prompt and the strict answer schema. Changing either changes `version`, which is part of the cache key.
public enum LLMPrompt {
    public static let version = "fm-refine-1"

    static let system = """
    You check the foods an on-device model found in a meal photo. Identify every distinct food or drink that is \
    visible, correct wrong names, add foods the candidates missed, drop candidates that are not in the photo, \
    and estimate the grams of each visible edible portion. Answer only with JSON that follows the given schema.
    """

    /// The user text: photo size and the stage-1 candidates with their boxes and confidences.
    public static func userText(width: Int, height: Int, candidates: [LLMCandidate]) -> String {
        var lines = ["Photo: \(width)x\(height) pixels. Boxes are [x, y, w, h] normalised to the photo (0 to 1, origin top-left)."]
        if candidates.isEmpty {
            lines.append("The on-device model found no food.")
        } else {
            lines.append("On-device candidates (name, Chinese name, confidence, box, grams estimate):")
            for (i, c) in candidates.enumerated() {
                let box = [c.box.x, c.box.y, c.box.w, c.box.h].map { String(format: "%.3f", $0) }.joined(separator: ", ")
                lines.append("\(i + 1). \(c.name) (\(c.nameZh.isEmpty ? "-" : c.nameZh)), confidence \(String(format: "%.2f", c.confidence)), box [\(box)], \(Int(c.grams.rounded())) g")
            }
        }
        lines.append("""
        Return {"foods": [...]}: one entry per food with name (English, common name), name_zh (Simplified Chinese), \
        grams (edible weight visible, 1 to 3000), confidence (0 to 1) and box {x, y, w, h} inside the photo.
        """)
        return lines.joined(separator: "\n")
    }

    /// JSON Schema for OpenAI `response_format: json_schema` (strict) and Ollama `format`: every property
    /// required, no additional properties (ranges are checked by `AnswerValidator`, not by the provider).
    static func jsonSchema() -> [String: Any] {
        let number: [String: Any] = ["type": "number"]
        let box: [String: Any] = [
            "type": "object", "additionalProperties": false, "required": ["x", "y", "w", "h"],
            "properties": ["x": number, "y": number, "w": number, "h": number],
        ]
        let food: [String: Any] = [
            "type": "object", "additionalProperties": false, "required": ["name", "name_zh", "grams", "confidence", "box"],
            "properties": ["name": ["type": "string"], "name_zh": ["type": "string"], "grams": number, "confidence": number, "box": box],
        ]
        return ["type": "object", "additionalProperties": false, "required": ["foods"],
                "properties": ["foods": ["type": "array", "items": food]]]
    }

    /// The same schema in Gemini's `responseSchema` dialect (OpenAPI subset, upper-case types, property order).
    static func geminiSchema() -> [String: Any] {
        let number: [String: Any] = ["type": "NUMBER"]
        let box: [String: Any] = [
            "type": "OBJECT", "required": ["x", "y", "w", "h"], "propertyOrdering": ["x", "y", "w", "h"],
            "properties": ["x": number, "y": number, "w": number, "h": number],
        ]
        let food: [String: Any] = [
            "type": "OBJECT", "required": ["name", "name_zh", "grams", "confidence", "box"],
            "propertyOrdering": ["name", "name_zh", "grams", "confidence", "box"],
            "properties": ["name": ["type": "STRING"], "name_zh": ["type": "STRING"], "grams": number, "confidence": number, "box": box],
        ]
        return ["type": "OBJECT", "required": ["foods"], "properties": ["foods": ["type": "ARRAY", "items": food]]]
    }
}

enum JSON {
    static func encode(_ object: Any) -> [UInt8] {
        // Only dictionaries/arrays of strings, numbers and bools built in this module reach here.
        (try? Array(JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]))) ?? []
    }

    static func object(_ bytes: [UInt8]) -> [String: Any]? {
        try? JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed]) as? [String: Any]
    }

    /// A JSON number as Double; nil for anything else, including true/false (which Foundation also hands over
    /// as NSNumber).
    static func number(_ any: Any?) -> Double? {
        guard let n = any as? NSNumber, !(any is String) else { return nil }
        if String(cString: n.objCType) == "c" { return nil }
        return n.doubleValue
    }
}
