import FoodRecognition
import FoodMoment
import FoodVision
import ImageCodecs
import FoodCore
import Foundation

/// Times decoding of files at full size and DCT-scaled, in one process, so the two are directly comparable.
package struct DecodeBenchmark: Sendable {
    package struct Row: Sendable, Codable {
        package var file: String
        package var storedWidth: Int
        package var storedHeight: Int
        package var bytes: Int
        package var fullMedianMs: Double
        package var fullP95Ms: Double
        package var scaledMedianMs: Double
        package var scaledP95Ms: Double
        package var scaledWidth: Int
        package var scaledHeight: Int
        package var scale: String
        /// scaled / full (lower is better).
        package var ratio: Double

        enum CodingKeys: String, CodingKey {
            case file, bytes, scale, ratio
            case storedWidth = "stored_width", storedHeight = "stored_height"
            case fullMedianMs = "full_p50_ms", fullP95Ms = "full_p95_ms"
            case scaledMedianMs = "scaled_p50_ms", scaledP95Ms = "scaled_p95_ms"
            case scaledWidth = "scaled_width", scaledHeight = "scaled_height"
        }
    }

    package var runs: Int
    package var minShortSide: Int

    package init(runs: Int = 7, minShortSide: Int = 224) {
        self.runs = max(1, runs)
        self.minShortSide = minShortSide
    }

    /// Reads each file once, then decodes it `runs` times full size and `runs` times scaled (interleaved,
    /// after one warm-up of each), timing only the decode (EXIF orientation included).
    package func run(paths: [String]) throws -> [Row] {
        var rows: [Row] = []
        for path in paths {
            let bytes = try Array(Data(contentsOf: URL(fileURLWithPath: path)))
            let full = DecodeOptions()
            let scaled = DecodeOptions(minShortSide: minShortSide)
            _ = try ImageDecoder.decode(bytes, options: full)
            var last = try ImageDecoder.decode(bytes, options: scaled)
            var fullTimes: [Double] = [], scaledTimes: [Double] = []
            for _ in 0..<runs {
                var t = ContinuousClock.now
                _ = try ImageDecoder.decode(bytes, options: full)
                fullTimes.append((ContinuousClock.now - t).milliseconds)
                t = ContinuousClock.now
                last = try ImageDecoder.decode(bytes, options: scaled)
                scaledTimes.append((ContinuousClock.now - t).milliseconds)
            }
            let f50 = Self.percentile(fullTimes, 0.5), s50 = Self.percentile(scaledTimes, 0.5)
            rows.append(Row(file: path, storedWidth: last.storedWidth, storedHeight: last.storedHeight, bytes: bytes.count,
                            fullMedianMs: f50, fullP95Ms: Self.percentile(fullTimes, 0.95),
                            scaledMedianMs: s50, scaledP95Ms: Self.percentile(scaledTimes, 0.95),
                            scaledWidth: last.image.width, scaledHeight: last.image.height,
                            scale: last.scaleNumerator == 8 ? "1/1" : PhotoDecoder.fraction(last.scaleNumerator),
                            ratio: f50 > 0 ? (s50 / f50).rounded(toPlaces: 3) : 0))
        }
        return rows
    }

    /// Nearest-rank percentile.
    package static func percentile(_ values: [Double], _ p: Double) -> Double {
        guard !values.isEmpty else { return 0 }
        let sorted = values.sorted()
        let rank = Int((p * Double(sorted.count)).rounded(.up)) - 1
        return sorted[min(max(rank, 0), sorted.count - 1)]
    }
}
