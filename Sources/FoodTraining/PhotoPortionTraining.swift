package import FoodRecognition
import FoodCore
import FoodMoment
import Foundation
import ImageCodecs

/// The typical framing of each label for grams without a coin (`dev fit-photo-portions`).
package enum PhotoPortionTraining {
    /// Per photo, the box area of `analyze`'s answer when it is one food of the photo's own label (nil otherwise),
    /// on the recognisers' workers, in photo order. `recognizers` should have no coin finder and no photo-portion model
    /// (the framing is measured as a photo without a coin shows it).
    package static func singleFoodAreas(_ jobs: [(label: String, path: String)], recognizers: [FoodRecognizer],
                                        progress: (@Sendable (Int, Int) -> Void)? = nil) -> [Double?] {
        let decoder = PhotoDecoder(options: DecodeOptions(minShortSide: FoodRecognizer.inputSize))
        return WorkerPool.map(jobs.count, workers: recognizers.count, progress: progress) { i, w in
            guard case .success(let (decoded, _)) = decoder.decode(path: jobs[i].path),
                  let foods = try? recognizers[w].recognize(decoded.image).foods,
                  foods.count == 1, foods[0].label == jobs[i].label else { return nil }
            return foods[0].box.clipped.area
        }
    }

    /// The median of a label's areas when it has at least 5 (rounded to 0.001), else nil.
    package static func typicalArea(_ areas: [Double]) -> Double? {
        let values = areas.sorted()
        return values.count >= 5 ? (values[values.count / 2] * 1000).rounded() / 1000 : nil
    }
}
