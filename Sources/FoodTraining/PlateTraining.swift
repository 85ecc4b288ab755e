package import FoodRecognition
import FoodMoment
package import FoodVision
import FoodCore
import Foundation
import ImageCodecs

/// Training data and fitting for the plate head (`PlateHeadModel`): shared plates (SOHL thalis and mixed fruit
/// scenes that are not held out for detection) against single dishes and produce (photos of `<label>/` folders).
package enum PlateTraining {
    /// Photos of several foods — every SOHL plate, fruit scenes with two or more labels — among the detection records
    /// that train the cell head (`CellTraining.isTraining`: the positives), or with `heldOut`, among those held out
    /// of it (where the plate rate is reported).
    package static func plates(_ records: [DetectionRecord], heldOut: Bool = false) -> [TrainingSample] {
        records.filter { r in
            guard CellTraining.isTraining(r) != heldOut, r.source != "ecustfd" else { return false }
            return r.source == "sohl" || Set(r.boxes.map(\.label)).count >= 2
        }.map { TrainingSample(path: $0.image, label: PlateHeadModel.plateClass) }
    }

    /// Negative photos: the first `perLabel` photos of each label folder (sorted names), labelled `dish`.
    package static func dishes(_ samples: [TrainingSample], perLabel: Int) -> [TrainingSample] {
        var seen: [String: Int] = [:]
        return samples.filter { s in seen[s.label, default: 0] += 1; return seen[s.label]! <= perLabel }
            .map { TrainingSample(path: $0.path, label: "dish") }
    }

    /// Food embeddings (as `recognize` computes them: `FoodRecognizer.embeddings(of:)`) of `views` training views of
    /// each photo, on one recognizer per thread. Returns one array per sample (empty when it failed to decode).
    package static func embed(_ samples: [TrainingSample], views: @Sendable (TrainingSample) -> Int, recognizers: [FoodRecognizer],
                             seed: UInt64, progress: (@Sendable (Int, Int) -> Void)? = nil) -> [[[Float]]] {
        PhotoWorkers.map(samples.map(\.path), workers: recognizers.count, minShortSide: FoodRecognizer.inputSize, progress: progress) { w, i, decoded in
            guard case .success(let image) = decoded else { return nil }
            var rng = SplitMix64(seed: seed &+ UInt64(i))
            let tensors = EmbeddingExtractor.views(of: image, region: samples[i].region, count: views(samples[i]), rng: &rng)
            return (try? recognizers[w].embeddings(of: tensors))?.map(\.embedding)
        }.map { $0 ?? [] }
    }

    /// Fits the two-class head; views of one photo stay on one side of the hold-out split.
    package static func train(embeddings: [[[Float]]], labels: [String], l2: Float, seed: UInt64) throws(FoodVisionError) -> SoftmaxHead {
        let classes = ["dish", PlateHeadModel.plateClass]
        var xs: [[Float]] = [], ys: [Int] = [], groups: [Int] = []
        for (i, (views, label)) in zip(embeddings, labels).enumerated() {
            for v in views { xs.append(v); ys.append(label == PlateHeadModel.plateClass ? 1 : 0); groups.append(i) }
        }
        return try SoftmaxHead.train(embeddings: xs, labels: ys, classes: classes, l2: l2, holdOutFraction: 0.15,
                                     maxEpochs: 200, seed: seed, learningRate: 0.001, groupSize: 1, photoGroups: groups)
    }
}
