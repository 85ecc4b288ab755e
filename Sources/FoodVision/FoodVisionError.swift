/// Everything that can go wrong in FoodVision: loading or converting a model, or feeding it bad input.
///
/// Each case carries the file and the detail a person needs to fix the problem; `description` says what to do.
public enum FoodVisionError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A file the model directory must contain is not there (or cannot be read).
    case missingFile(path: String)
    /// The file could not be read or written (permissions, disk full, …).
    case io(path: String, reason: String)
    /// A manifest or safetensors header that is not what this runtime understands.
    case invalidFormat(path: String, reason: String)
    /// The weights file's SHA-256 differs from the manifest's.
    case checksumMismatch(path: String, expected: String, actual: String)
    /// The weights file is shorter than the layer table says.
    case truncatedWeights(path: String, expectedBytes: Int, actualBytes: Int)
    /// The manifest's layer table does not match the network (missing tensor, wrong shape, overlapping ranges, …).
    case manifestMismatch(path: String, reason: String)
    /// An input image or embedding has the wrong shape.
    case invalidInput(reason: String)
    /// A head or matcher cannot be trained from the data given.
    case invalidTrainingData(reason: String)

    public var description: String {
        switch self {
        case .missingFile(let path):
            "missing file \(path): convert the model again with `foodmoment dev model convert --safetensors PATH --out DIR`"
        case .io(let path, let reason):
            "cannot access \(path): \(reason)"
        case .invalidFormat(let path, let reason):
            "invalid model file \(path): \(reason)"
        case .checksumMismatch(let path, let expected, let actual):
            "weights file \(path) is corrupt: SHA-256 is \(actual) but the manifest expects \(expected); re-convert or re-copy the model"
        case .truncatedWeights(let path, let expectedBytes, let actualBytes):
            "weights file \(path) is truncated: \(actualBytes) bytes, the layer table needs \(expectedBytes); re-convert or re-copy the model"
        case .manifestMismatch(let path, let reason):
            "manifest \(path) does not match the network: \(reason)"
        case .invalidInput(let reason):
            "invalid input: \(reason)"
        case .invalidTrainingData(let reason):
            "cannot train: \(reason)"
        }
    }
}
