public import FoodCore

/// A stage-1 food as the model sees it in the prompt.
public struct LLMCandidate: Sendable, Equatable, Codable {
    public var name: String
    public var nameZh: String
    public var confidence: Double
    public var box: NormalizedBox
    public var grams: Double

    public init(name: String, nameZh: String, confidence: Double, box: NormalizedBox, grams: Double) {
        self.name = name; self.nameZh = nameZh; self.confidence = confidence; self.box = box; self.grams = grams
    }
}

/// Everything one refinement request needs, as plain values.
public struct LLMInput: Sendable, Equatable {
    /// The photo to send: a JPEG without EXIF, already downscaled.
    public var jpeg: [UInt8]
    public var width: Int
    public var height: Int
    public var candidates: [LLMCandidate]
    public var promptVersion: String

    public init(jpeg: [UInt8], width: Int, height: Int, candidates: [LLMCandidate], promptVersion: String = LLMPrompt.version) {
        self.jpeg = jpeg; self.width = width; self.height = height; self.candidates = candidates; self.promptVersion = promptVersion
    }
}

/// One food in the model's validated answer. Boxes are normalised to the photo (0…1), like stage 1's.
public struct LLMFood: Sendable, Equatable, Codable {
    public var name: String
    public var nameZh: String
    public var grams: Double
    public var confidence: Double
    public var box: NormalizedBox

    enum CodingKeys: String, CodingKey { case name, grams, confidence, box; case nameZh = "name_zh" }

    public init(name: String, nameZh: String, grams: Double, confidence: Double, box: NormalizedBox) {
        self.name = name; self.nameZh = nameZh; self.grams = grams; self.confidence = confidence; self.box = box
    }
}

/// A validated answer and how it was obtained.
public struct LLMOutcome: Sendable, Equatable {
    public var foods: [LLMFood]
    public var provider: String
    public var model: String
    public var promptVersion: String
    /// Served from the on-disk cache (nothing was sent).
    public var cached: Bool
    /// HTTP attempts made (0 when cached).
    public var attempts: Int
    /// Time spent waiting between attempts (per the clock the client was given).
    public var waited: Duration
}
