import FoodRecognition
import FoodMoment
import FoodVision
package import FoodCore
import Foundation
import ImageCodecs

extension EmbeddingExtractor {
    /// Fine-tuning views of one photo: the whole region, its mirror image, and `count - 2` random resized crops
    /// (30–100 % of the region's area, aspect 3:4…4:3, mirrored at random); every crop gets a mild colour jitter
    /// (brightness ±0.08, per-channel gain 0.9…1.1 on the normalised values).
    package static func strongViews(of image: RGBImage, region: NormalizedBox?, count: Int, rng: inout SplitMix64) -> [FloatImage] {
        augmentedViews(of: image, region: region, count: count, area: 0.3...1.0, aspect: 0.75...(4.0 / 3.0), colorJitter: true, rng: &rng)
    }

    /// The output of MBConv block `tapBlock` (default the last: 7 × 7 × 320 at 224; block 14 or 11: 7 × 7 × 192)
    /// of `views` strong views of every sample, into one set: view `s * views + v` is view v of sample s, labelled
    /// `labels[s]`. A sample that fails keeps label -1. `tapBlock` must be one of the stride-32 blocks (11…15).
    package func blockOutputs(_ samples: [TrainingSample], labels: [Int], views: Int, seed: UInt64 = 1,
                             tapBlock: Int = EfficientNetLite0.blockShapes.count - 1,
                             progress: (@Sendable (Int, Int) -> Void)? = nil) -> (set: BlockOutputSet, failures: [Failure]) {
        let grid = (FoodRecognizer.inputSize + 31) / 32
        let set = BlockOutputSet(count: samples.count * views, cells: grid * grid,
                                 channels: EfficientNetLite0.blockShapes[tapBlock].outChannels)
        let failures = forEachSample(samples, seed: seed, progress: progress) { image, region, rng in
            Self.strongViews(of: image, region: region, count: views, rng: &rng)
        } use: { i, net, inputs in
            let outs = try net.forward(inputs, includeBlockOutput: true, blockOutputIndex: tapBlock)
            for (v, o) in outs.enumerated() {
                guard let b = o.blockOutput, b.values.count == set.viewSize else { continue }
                set.set(i * views + v, b.values, label: labels[i])
            }
        }
        return (set, failures)
    }
}
