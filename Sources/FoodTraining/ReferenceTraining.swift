package import FoodRecognition
import FoodCore
import FoodVision
import FoodMoment
import Foundation
import ImageCodecs

/// Training data for the grams-from-a-coin path (`dev train-reference`): the coin head's labelled map cells, and the
/// (label, area at the coin's scale, weighed grams) samples the areal-density model is fitted on.
package enum ReferenceTraining {
    /// One weighed food at a coin's scale, with the physical item it shows (folds hold out items, not photos).
    package typealias Sample = (label: String, areaCm2: Double, grams: Double, item: String)

    /// The labelled cells of each photo's map as `analyze` gives it to the coin finder (the localisation pass's, or the
    /// fused whole-photo map): per ECUSTFD photo (a `record`) the cell holding the coin's centre (1), the food's centre
    /// and random cells two or more away (0), up to 8; per photo without a coin (`record` nil) 20 random cells (0).
    /// Seeded per photo and kept in photo order, so the training set never depends on thread timing.
    package static func coinCells(_ jobs: [(path: String, record: DetectionRecord?)], recognizers: [FoodRecognizer],
                                  progress: (@Sendable (Int, Int) -> Void)? = nil) -> (features: [[Float]], labels: [Int]) {
        let decoder = PhotoDecoder(options: DecodeOptions(minShortSide: FoodRecognizer.inputSize))
        let perPhoto = WorkerPool.map(jobs.count, workers: recognizers.count, progress: progress) { i, w -> [([Float], Int)]? in
            var rng = SplitMix64(seed: UInt64(i + 1))
            guard case .success(let (decoded, _)) = decoder.decode(path: jobs[i].path),
                  let map = try? recognizers[w].cellMap(of: decoded.image) else { return nil }
            let gw = map.width, gh = map.height, d = map.channels
            func cell(_ x: Int, _ y: Int) -> [Float] { Array(map.values[((y * gw + x) * d)..<((y * gw + x + 1) * d)]) }
            var local: [([Float], Int)] = []
            if let r = jobs[i].record, let coin = r.coins?.first {
                let cx = min(gw - 1, Int((coin.x + coin.w / 2) * Double(gw))), cy = min(gh - 1, Int((coin.y + coin.h / 2) * Double(gh)))
                local.append((cell(cx, cy), 1))
                if let food = r.boxes.first {
                    let fx = min(gw - 1, Int((food.x + food.w / 2) * Double(gw))), fy = min(gh - 1, Int((food.y + food.h / 2) * Double(gh)))
                    if max(abs(fx - cx), abs(fy - cy)) >= 2 { local.append((cell(fx, fy), 0)) }
                }
                var tries = 0
                while local.count < 8 && tries < 100 {
                    tries += 1
                    let x = Int(rng.next() % UInt64(gw)), y = Int(rng.next() % UInt64(gh))
                    if max(abs(x - cx), abs(y - cy)) >= 2 { local.append((cell(x, y), 0)) }
                }
            } else {
                for _ in 0..<20 { local.append((cell(Int(rng.next() % UInt64(gw)), Int(rng.next() % UInt64(gh))), 0)) }
            }
            return local
        }.compactMap { $0 }
        return (perPhoto.flatMap { $0.map(\.0) }, perPhoto.flatMap { $0.map(\.1) })
    }

    /// Samples from the annotated boxes and coins (`--fit truth`).
    package static func truthSamples(_ train: [DetectionRecord], coinDiameterMM: Double,
                                     item: (DetectionRecord) -> String) -> [Sample] {
        var samples: [Sample] = []
        for r in train {
            guard let coin = r.coins?.first, let grams = r.grams else { continue }
            let diameter = max(coin.w * Double(r.width), coin.h * Double(r.height))
            let mm = coinDiameterMM / diameter
            for b in r.boxes {
                if let g = grams[b.label] { samples.append((b.label, b.w * Double(r.width) * b.h * Double(r.height) * mm * mm / 100, g, item(r))) }
            }
        }
        return sorted(samples)
    }

    /// Samples from `analyze`'s own boxes and found coins (`--fit predicted`): `recognizers` are the loaded ones with the
    /// coin finder just trained. `found`: photos whose coin was found.
    package static func predictedSamples(_ train: [DetectionRecord], recognizers: [FoodRecognizer],
                                         item: @Sendable (DetectionRecord) -> String) -> (samples: [Sample], found: Int) {
        let decoder = PhotoDecoder(options: DecodeOptions(minShortSide: FoodRecognizer.inputSize))
        let perPhoto = WorkerPool.map(train.count, workers: recognizers.count) { i, w -> [Sample]? in
            let r = train[i]
            guard let grams = r.grams, case .success(let (decoded, _)) = decoder.decode(path: r.image),
                  let rec = try? recognizers[w].recognize(decoded.image), let ref = rec.reference else { return nil }
            let mm = ref.millimetresPerPixel
            var local: [Sample] = []
            for b in r.boxes {
                guard let g = grams[b.label],
                      let f = rec.foods.filter({ $0.label == b.label }).max(by: { $0.box.iou(b.normalized) < $1.box.iou(b.normalized) })
                else { continue }
                local.append((b.label, f.box.w * Double(decoded.image.width) * f.box.h * Double(decoded.image.height) * mm * mm / 100, g, item(r)))
            }
            return local
        }
        return (sorted(perPhoto.compactMap { $0 }.flatMap { $0 }), perPhoto.filter { $0 != nil }.count)
    }

    /// In one order, so the fit (and its sums) is the same every run.
    static func sorted(_ samples: [Sample]) -> [Sample] {
        samples.sorted { ($0.item, $0.label, $0.areaCm2, $0.grams) < ($1.item, $1.label, $1.areaCm2, $1.grams) }
    }
}
