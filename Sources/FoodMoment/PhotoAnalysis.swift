public import FoodRecognition
public import FoodCore
public import FoodVision
public import Nutrition
public import ImageCodecs
import Foundation

/// What the decode stage learnt about one photo.
public struct DecodeSummary: Sendable, Codable, Equatable {
    public var format: String
    /// Upright size at full resolution.
    public var width: Int
    public var height: Int
    public var storedWidth: Int
    public var storedHeight: Int
    public var orientation: Int
    public var orientationDescription: String
    public var decodedWidth: Int
    public var decodedHeight: Int
    /// libjpeg DCT scale (or libwebp's scaling), e.g. "1/8"; "1/1" for full size; "thumbnail" when a HEIC was
    /// decoded from its embedded thumbnail.
    public var scale: String
    public var decodeMilliseconds: Double
    public var warnings: [String]
    public var dateTimeOriginal: String?
    public var offsetTimeOriginal: String?

    enum CodingKeys: String, CodingKey {
        case format, width, height, orientation, scale, warnings
        case storedWidth = "stored_width", storedHeight = "stored_height"
        case orientationDescription = "orientation_description"
        case decodedWidth = "decoded_width", decodedHeight = "decoded_height"
        case decodeMilliseconds = "decode_ms"
        case dateTimeOriginal = "date_time_original", offsetTimeOriginal = "offset_time_original"
    }
}

/// A failure with a stable kind (for machines) and a message (for people).
public struct PhotoError: Error, Sendable, Codable, Equatable {
    public var kind: PhotoErrorKind
    public var message: String
    public init(kind: PhotoErrorKind, message: String) { self.kind = kind; self.message = message }
    public init(_ error: ImageCodecError) { self.init(kind: PhotoErrorKind(rawValue: error.kind), message: error.description) }
}

/// Why a photo failed, as the stable word every output format writes (`error.kind` in JSON, the CSV's `error`).
/// A struct over the word rather than an enum: results kept in a journal by an earlier version may name a kind this one
/// does not know, and must still read back.
public struct PhotoErrorKind: RawRepresentable, Sendable, Codable, Hashable, CustomStringConvertible {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    public init(from decoder: any Decoder) throws { rawValue = try decoder.singleValueContainer().decode(String.self) }
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(rawValue)
    }

    // Reading and decoding (`ImageCodecError.kind`).
    public static let empty = Self(rawValue: "empty")
    public static let notAnImage = Self(rawValue: "not_an_image")
    public static let unsupportedFormat = Self(rawValue: "unsupported_format")
    public static let decoderUnavailable = Self(rawValue: "decoder_unavailable")
    public static let truncated = Self(rawValue: "truncated")
    public static let corrupt = Self(rawValue: "corrupt")
    public static let tooLarge = Self(rawValue: "too_large")
    public static let fileTooLarge = Self(rawValue: "file_too_large")
    public static let resourceLimit = Self(rawValue: "resource_limit")
    public static let outOfMemory = Self(rawValue: "out_of_memory")
    public static let unreadable = Self(rawValue: "unreadable")
    // The stages after decoding.
    public static let recognitionFailed = Self(rawValue: "recognition_failed")
    public static let annotateFailed = Self(rawValue: "annotate_failed")
    public static let writeFailed = Self(rawValue: "write_failed")
}

/// What became of one input file, the same word in every output format (`status` in JSON, NDJSON and CSV).
public enum PhotoStatus: String, Sendable, Codable, CaseIterable {
    /// Analysed; `foods` has what was found.
    case ok
    /// Decoded and analysed, but no food we know (`top` has the best guesses).
    case unknown
    /// Decoded only (`--decode-only`).
    case decoded
    /// Could not be read, decoded or analysed; `error` says why. Counts in the exit code.
    case failed
    /// Inside a folder, not a photo (neither a photo's name nor an image's content); `skip_reason` says why.
    case skipped
}

/// The result for one input file: either a result or an error, never both.
public struct PhotoResult: Sendable, Codable, Equatable {
    public var file: String
    /// SHA-256 of the file's bytes (nil when the file could not be read).
    public var photoHash: String?
    public var decode: DecodeSummary?
    public var error: PhotoError?
    /// Stage 1 (+ nutrition): the foods found, best first. nil when recognition did not run.
    public var foods: [MealFood]?
    /// True when the photo was judged not to show a known food.
    public var unknown: Bool?
    /// The food head's best labels for the whole photo.
    public var top: [LabelScore]?
    /// Milliseconds per stage.
    public var timings: StageTimings?
    /// The arithmetic of the backbone's 1×1 convolutions that recognised the photo (`--precision`); nil when
    /// recognition did not run. Answers can differ slightly between arithmetics, so a result says which it came from.
    public var precision: InferencePrecision?
    /// The scale reference (a coin) found in the photo; it is never one of `foods`.
    public var reference: ReferenceObject?
    /// Plausibility flags on the nutrition (kcal per gram out of range for the food, Atwater mismatch, a meal
    /// over 2,000 kcal): reported, never silently corrected.
    public var flags: [PlausibilityFlag]?
    /// Sums over the foods that have nutrition.
    public var totals: Macros?
    /// Stage 2 (optional LLM refinement): refined or why not. nil when refinement was not asked for.
    public var refinement: RefinementInfo?
    /// Why a file found in a folder was not analysed (it is not a photo); nil for every photo.
    public var skipReason: String?

    enum CodingKeys: String, CodingKey {
        case file, decode, error, foods, unknown, top, timings, precision, flags, totals, refinement, reference
        case photoHash = "photo_hash", skipReason = "skip_reason"
    }

    private enum StatusKey: String, CodingKey { case status }

    public init(file: String, decode: DecodeSummary? = nil, error: PhotoError? = nil) {
        self.file = file
        self.decode = decode
        self.error = error
    }

    /// A file inside a folder that is not a photo: listed with its reason, never analysed.
    public static func skipped(file: String, reason: String) -> PhotoResult {
        var r = PhotoResult(file: file)
        r.skipReason = reason
        return r
    }

    /// Skipped files are not failures: they do not count in the exit code.
    public var succeeded: Bool { error == nil }

    public var status: PhotoStatus {
        if skipReason != nil { return .skipped }
        if error != nil { return .failed }
        if unknown == true { return .unknown }
        return foods == nil ? .decoded : .ok
    }

    /// The stored fields plus `status`, which is derived (so a result read back from the journal cannot disagree).
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(file, forKey: .file)
        try c.encodeIfPresent(photoHash, forKey: .photoHash)
        try c.encodeIfPresent(decode, forKey: .decode)
        try c.encodeIfPresent(error, forKey: .error)
        try c.encodeIfPresent(foods, forKey: .foods)
        try c.encodeIfPresent(unknown, forKey: .unknown)
        // Four decimals: 176 labels leave most probabilities tiny, and 0.0001293184 is noise to a reader.
        try c.encodeIfPresent(top?.map { LabelScore(label: $0.label, probability: ($0.probability * 10_000).rounded() / 10_000) },
                              forKey: .top)
        try c.encodeIfPresent(timings, forKey: .timings)
        try c.encodeIfPresent(precision, forKey: .precision)
        try c.encodeIfPresent(reference, forKey: .reference)
        try c.encodeIfPresent(flags, forKey: .flags)
        try c.encodeIfPresent(totals, forKey: .totals)
        try c.encodeIfPresent(refinement, forKey: .refinement)
        try c.encodeIfPresent(skipReason, forKey: .skipReason)
        var s = encoder.container(keyedBy: StatusKey.self)
        try s.encode(status, forKey: .status)
    }
}

/// Stage 0 of the pipeline: read and decode one photo, with timing, into an upright RGB image.
public struct PhotoDecoder: Sendable {
    public var options: DecodeOptions

    public init(options: DecodeOptions = .init(minShortSide: 224)) {
        self.options = options
    }

    public func decode(path: String) -> Result<(DecodedImage, DecodeSummary), PhotoError> {
        let start = ContinuousClock.now
        do {
            return decode(try PhotoFile.read(atPath: path, maxBytes: options.maxFileBytes), start: start)
        } catch {
            return .failure(PhotoError(error))
        }
    }

    /// Decodes a file already read (and hashed) by `PhotoFile.read`.
    public func decode(_ file: PhotoFile, start: ContinuousClock.Instant = .now) -> Result<(DecodedImage, DecodeSummary), PhotoError> {
        do {
            let decoded = try ImageDecoder.decode(file.bytes, options: options)
            let elapsed = ContinuousClock.now - start
            let full = decoded.uprightFullSize
            let summary = DecodeSummary(
                format: decoded.format.rawValue,
                width: full.width, height: full.height,
                storedWidth: decoded.storedWidth, storedHeight: decoded.storedHeight,
                orientation: decoded.exif.orientation.rawValue,
                orientationDescription: decoded.exif.orientation.description,
                decodedWidth: decoded.image.width, decodedHeight: decoded.image.height,
                scale: decoded.fromThumbnail ? "thumbnail" : decoded.scaleNumerator == 8 ? "1/1" : Self.fraction(decoded.scaleNumerator),
                decodeMilliseconds: elapsed.milliseconds,
                warnings: decoded.warnings,
                dateTimeOriginal: decoded.exif.dateTimeOriginal,
                offsetTimeOriginal: decoded.exif.offsetTimeOriginal
            )
            return .success((decoded, summary))
        } catch {
            return .failure(PhotoError(error))
        }
    }

    package static func fraction(_ n: Int) -> String {
        var a = n, b = 8
        while a % 2 == 0 && b % 2 == 0 { a /= 2; b /= 2 }
        return "\(a)/\(b)"
    }

}

extension Double {
    package func rounded(toPlaces p: Int) -> Double {
        var m = 1.0
        for _ in 0..<p { m *= 10 }
        return (self * m).rounded() / m
    }
}

