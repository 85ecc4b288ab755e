/// Why an image could not be decoded or encoded. Messages name the problem and what to do about it;
/// the CLI prefixes the file path.
public enum ImageCodecError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file is empty.
    case empty
    /// The bytes are not an image format we know (e.g. a text file named `.jpg`).
    case notAnImage(firstBytes: String)
    /// A real image format we do not decode (HEIC, WebP, …).
    case unsupportedFormat(ImageFormat)
    /// A format we decode through a library loaded on first use (HEIC/AVIF: libheif) that cannot be loaded here.
    case decoderUnavailable(ImageFormat, detail: String)
    /// The data ends before the image is complete.
    case truncated(ImageFormat, detail: String)
    /// The library rejected the data as corrupt.
    case corrupt(ImageFormat, detail: String)
    /// The image is larger than the configured limits; nothing was allocated for it.
    case tooLarge(width: Int, height: Int, limit: Int)
    /// The file is larger than the per-file byte limit.
    case fileTooLarge(bytes: Int, limit: Int)
    /// A decoding resource limit (e.g. progressive scans) was hit.
    case resourceLimit(String)
    case outOfMemory(String)
    /// The file could not be read.
    case unreadable(path: String, reason: String)
    case encodeFailed(String)

    /// A stable machine-readable name, used as `error.kind` in JSON output.
    public var kind: String {
        switch self {
        case .empty: "empty"
        case .notAnImage: "not_an_image"
        case .unsupportedFormat: "unsupported_format"
        case .decoderUnavailable: "decoder_unavailable"
        case .truncated: "truncated"
        case .corrupt: "corrupt"
        case .tooLarge: "too_large"
        case .fileTooLarge: "file_too_large"
        case .resourceLimit: "resource_limit"
        case .outOfMemory: "out_of_memory"
        case .unreadable: "unreadable"
        case .encodeFailed: "encode_failed"
        }
    }

    public var description: String {
        switch self {
        case .empty:
            "empty file (0 bytes)"
        case .notAnImage(let first):
            "not an image: the content does not start with a JPEG, PNG, HEIC or WebP signature (first bytes: \(first))"
        case .unsupportedFormat(let format):
            "unsupported format: \(format.displayName) (\(format.conversionHint))"
        case .decoderUnavailable(let format, let detail):
            "cannot decode \(format.displayName) on this machine: \(detail)"
        case .truncated(let format, let detail):
            "truncated \(format.displayName) data (\(detail)); the file is incomplete — copy it again from its source"
        case .corrupt(let format, let detail):
            "corrupt \(format.displayName) data: \(detail)"
        case .tooLarge(let w, let h, let limit):
            "image is \(w)x\(h) = \(w * h) pixels, over the limit of \(limit) pixels (raise it with --max-pixels)"
        case .fileTooLarge(let bytes, let limit):
            "file is \(bytes) bytes, over the limit of \(limit) bytes (raise it with --max-file-bytes)"
        case .resourceLimit(let what):
            "decoding stopped at a resource limit: \(what)"
        case .outOfMemory(let what):
            "out of memory: \(what)"
        case .unreadable(let path, let reason):
            "cannot read \(path): \(reason)"
        case .encodeFailed(let why):
            "cannot encode image: \(why)"
        }
    }
}
