extension Duration {
    /// Milliseconds, rounded to a microsecond: the unit of every timing the product reports.
    public var milliseconds: Double {
        let c = components
        let ms = Double(c.seconds) * 1000 + Double(c.attoseconds) / 1e15
        return (ms * 1000).rounded() / 1000
    }
}

/// A step of the pipeline that reports its time (`timings` in every format, under these names).
public enum PipelineStage: String, Sendable, Codable, CaseIterable, Hashable {
    case decode, preprocess, backbone
    /// The localisation pass at 448 px (or a second pass for plates).
    case backboneLocal = "backbone_local"
    /// The fused whole-photo map, when it stands in for the localisation pass.
    case fuse
    case head, reference, localise
    /// The optional LLM refinement.
    case llm
    /// Reading, decoding and recognising the photo, from the first byte read.
    case total
}

/// Milliseconds per pipeline step of one photo. JSON: an object keyed by the steps' names; a name this version does not
/// know (a newer one's) is left out when read.
public struct StageTimings: Sendable, Equatable, Codable {
    public private(set) var milliseconds: [PipelineStage: Double] = [:]

    public init() {}

    public subscript(_ stage: PipelineStage) -> Double? {
        get { milliseconds[stage] }
        set { milliseconds[stage] = newValue }
    }

    public var isEmpty: Bool { milliseconds.isEmpty }

    private struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Key.self)
        for key in c.allKeys {
            if let stage = PipelineStage(rawValue: key.stringValue) { milliseconds[stage] = try c.decode(Double.self, forKey: key) }
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Key.self)
        for stage in PipelineStage.allCases { if let ms = milliseconds[stage] { try c.encode(ms, forKey: Key(stringValue: stage.rawValue)) } }
    }
}
