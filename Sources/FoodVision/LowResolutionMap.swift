import Foundation

/// Reads a small photo's food embedding as its full-size photo's would read.
///
/// Most dishes beyond the first 65 exist in the training data only as 64×64 Food-101 thumbnails; upscaled to the
/// network's input, a thumbnail's embedding lies far from a sharp photo's of the same dish, and a head trained on
/// thumbnails names 12 % of full-size photos of those dishes. A linear map fitted on pairs (a full-size training photo
/// and its own 64 px copy, `tools/models/train-head --map-low-res`) brings thumbnails over to the sharp side before the
/// head is trained on them (full-size photos of those dishes: 45 %), and `FoodRecognizer` applies the same map to a
/// photo whose short side is at most `maxShortSide`, so a thumbnail is read the way the head was taught.
///
/// Stored as `low-res-map.json` (manifest: dimension, maxShortSide, byte count, SHA-256) and `low-res-map.bin`
/// (`(dimension + 1) × dimension` little-endian f32, row-major; the last row is the offset), over the head's
/// standardised embedding `(x − featureMean) · featureScale`.
package struct LowResolutionMap: Sendable {
    package struct Manifest: Sendable, Codable, Equatable {
        package var format: String
        package var dimension: Int
        package var maxShortSide: Int
        package var weightsFile: String
        package var bytes: Int
        package var sha256: String
        package var note: String?
    }

    package static let formatName = "foodmoment-low-res-map-v1"
    package static let manifestFileName = "low-res-map.json"

    package let dimension: Int
    /// Photos whose short side (as decoded) is at most this many pixels are read through the map.
    package let maxShortSide: Int
    /// `[(dimension + 1) × dimension]`, row-major.
    package let matrix: [Float]

    package init(dimension: Int, maxShortSide: Int, matrix: [Float]) throws(FoodVisionError) {
        guard dimension > 0, maxShortSide > 0, matrix.count == (dimension + 1) * dimension else {
            throw .invalidInput(reason: "a low-resolution map of dimension \(dimension) needs \((dimension + 1) * dimension) values, not \(matrix.count)")
        }
        self.dimension = dimension; self.maxShortSide = maxShortSide; self.matrix = matrix
    }

    /// Whether a photo of this size is read through the map.
    package func applies(width: Int, height: Int) -> Bool { min(width, height) <= maxShortSide }

    /// The embedding as the head should read it: standardised with the head's numbers, mapped, and brought back.
    package func apply(_ embedding: [Float], head: SoftmaxHead) throws(FoodVisionError) -> [Float] {
        guard embedding.count == dimension, head.dimension == dimension else {
            throw .invalidInput(reason: "low-resolution map of dimension \(dimension) for a \(embedding.count)-value embedding and a \(head.dimension)-input head")
        }
        let d = dimension
        var z = [Float](repeating: 0, count: d)
        for i in 0..<d { z[i] = (embedding[i] - head.featureMean[i]) * head.featureScale[i] }
        var y = Array(matrix[(d * d)..<(d * d + d)])
        matrix.withUnsafeBufferPointer { m in
            y.withUnsafeMutableBufferPointer { out in
                for i in 0..<d where z[i] != 0 {
                    let zi = z[i], row = i * d
                    for j in 0..<d { out[j] += zi * m[row + j] }
                }
            }
        }
        for j in 0..<d { y[j] = y[j] / head.featureScale[j] + head.featureMean[j] }
        return y
    }

    /// `low-res-map.json` and its weights in `directory`, checked (format, size, SHA-256); nil when there is none.
    package static func load(directory: String) throws(FoodVisionError) -> LowResolutionMap? {
        let manifestPath = (directory as NSString).appendingPathComponent(manifestFileName)
        guard FileManager.default.fileExists(atPath: manifestPath) else { return nil }
        let manifest = try decodeModelFile(Manifest.self, from: manifestPath, what: "low-resolution map manifest")
        guard manifest.format == formatName else {
            throw .invalidFormat(path: manifestPath, reason: "format \(manifest.format); this build reads \(formatName)")
        }
        let d = manifest.dimension
        guard d > 0, d <= 65_536, manifest.bytes == (d + 1) * d * 4 else {
            throw .manifestMismatch(path: manifestPath, reason: "\(manifest.bytes) bytes do not hold a \(d + 1)x\(d) f32 matrix")
        }
        let data = try readCheckedWeights(named: manifest.weightsFile, manifestPath: manifestPath, bytes: manifest.bytes,
                                          sha256: manifest.sha256)
        return try LowResolutionMap(dimension: d, maxShortSide: manifest.maxShortSide,
                                    matrix: littleEndianFloats(data, from: data.startIndex, count: (d + 1) * d))
    }
}
