package import FoodRecognition
import FoodMoment
import FoodVision
package import FoodCore
import Foundation
import ImageCodecs

/// Training data for the per-cell food detector: feature-map cells labelled from annotated boxes.
package enum CellTraining {
    /// Which detection records train the cell head: SOHL plates not held out, ECUSTFD `train`, fruit scenes not
    /// held out.
    package static func isTraining(_ r: DetectionRecord) -> Bool {
        switch r.source {
        case "sohl": return !(r.group.map(DetectionRecord.isHeldOut(group:)) ?? true)
        case "ecustfd": return r.split == "train"
        case "fruitdet": return !isHeldOutFruitScene(r)
        default: return r.split != "dev" && r.split != "test"
        }
    }

    /// Fruit-scene photos kept out of cell training so boxes can be measured on unseen scenes: a stable hash of the
    /// file name, one photo in three (the data has no split of its own).
    package static func isHeldOutFruitScene(_ r: DetectionRecord) -> Bool {
        r.source == "fruitdet" && SplitMix64.fnv1a(URL(fileURLWithPath: r.image).lastPathComponent) % 3 == 0
    }

    /// Labelled cells of one feature map: every foreground cell up to `maxForeground` and background cells up to
    /// `maxBackground` (a seeded random choice when there are more); ignored cells are skipped.
    package static func cells(of map: FloatImage, targets: [CellTarget], maxForeground: Int, maxBackground: Int,
                             rng: inout SplitMix64) -> (features: [[Float]], labels: [Int]) {
        precondition(targets.count == map.width * map.height, "\(targets.count) targets for a \(map.width)×\(map.height) map")
        var fg: [(Int, Int)] = [], bg: [Int] = []
        for (i, t) in targets.enumerated() {
            switch t {
            case .label(let l): fg.append((i, l))
            case .background: bg.append(i)
            case .ignore: break
            }
        }
        rng.shuffle(&fg)
        rng.shuffle(&bg)
        let d = map.channels
        var features: [[Float]] = [], labels: [Int] = []
        for (i, l) in fg.prefix(maxForeground) { features.append(Array(map.values[(i * d)..<((i + 1) * d)])); labels.append(l) }
        for i in bg.prefix(maxBackground) { features.append(Array(map.values[(i * d)..<((i + 1) * d)])); labels.append(0) }
        return (features, labels)
    }

    /// The labelled cells of one photo for every localisation size in `sizes` and input shape in `aspects` (false =
    /// stretched square, true = aspect kept, see `LocalizationInput`), plain and (with `mirror`) mirrored.
    /// `classIndex` maps a box label to its class (0 = background); unknown labels are ignored cells.
    /// With a recogniser whose calibration fuses the whole-photo map (`fusedMapBlocks`), the maps are that recogniser's
    /// own (`cellMap(of:)`) and `sizes` and `aspects` do not apply.
    package static func cells(of image: RGBImage, record: DetectionRecord, classIndex: [String: Int], sizes: [Int], mirror: Bool,
                             aspects: [Bool] = [false], recognizer: FoodRecognizer, maxForeground: Int, maxBackground: Int,
                             backgroundBelow: Double = 0, rng: inout SplitMix64) throws -> (features: [[Float]], labels: [Int]) {
        let views: [(RGBImage, Bool)] = mirror ? [(image, false), (image.applying(.upMirrored), true)] : [(image, false)]
        var features: [[Float]] = [], labels: [Int] = []
        let fused = recognizer.calibration.fusedMapBlocks != nil
        for size in fused ? [0] : sizes { for keepAspect in fused ? [false] : aspects {
            let maps: [FloatImage?] = fused
                ? try views.map { try recognizer.cellMap(of: $0.0) }
                : try recognizer.backbone.forward(views.map { LocalizationInput.tensor($0.0, size: size, keepAspect: keepAspect) },
                                                  includeFeatureMap: true).map(\.featureMap)
            for (k, map) in maps.enumerated() {
                guard let map else { continue }
                let flip = views[k].1
                var boxes: [(label: Int, box: NormalizedBox)] = []
                var ignored: [NormalizedBox] = []
                for b in record.boxes {
                    let box = flip ? CellLabeling.mirrored(b.normalized) : b.normalized
                    if let c = classIndex[b.label] { boxes.append((c, box)) } else { ignored.append(box) }
                }
                var targets = CellLabeling.targets(boxes: boxes, gridWidth: map.width, gridHeight: map.height, backgroundBelow: backgroundBelow)
                // Cells under a food the head has no class for are neither that food nor background.
                if !ignored.isEmpty {
                    let unknown = CellLabeling.targets(boxes: ignored.map { (1, $0) }, gridWidth: map.width, gridHeight: map.height, minOverlap: 0)
                    for i in targets.indices where unknown[i] != .background && targets[i] == .background { targets[i] = .ignore }
                }
                let got = cells(of: map, targets: targets, maxForeground: maxForeground, maxBackground: maxBackground, rng: &rng)
                features += got.features; labels += got.labels
            }
        } }
        return (features, labels)
    }
}

extension CellTraining {
    /// How many cells of each map train the head (`dev train-cells`): SOHL plates and fruit scenes, and ECUSTFD's
    /// one-food photos (which have plenty, and are not mirrored).
    package struct CellBudget: Sendable {
        package var maxForeground = 60, maxBackground = 30, ecustfdForeground = 6, ecustfdBackground = 5
        package var backgroundBelow = 0.0
        package init() {}
    }

    /// The labelled cells of every training record (`cells(of:record:…)`), photo by photo on the recognisers' workers,
    /// seeded per photo and kept in photo order; `failures` are the photos that could not be decoded or mapped.
    package static func extract(_ train: [DetectionRecord], classIndex: [String: Int], sizes: [Int], aspects: [Bool],
                                budget: CellBudget, recognizers: [FoodRecognizer],
                                progress: (@Sendable (Int, Int) -> Void)? = nil)
        -> (features: [[Float]], labels: [Int], failures: [String]) {
        let decoder = PhotoDecoder(options: DecodeOptions(minShortSide: FoodRecognizer.inputSize))
        let perPhoto = WorkerPool.map(train.count, workers: recognizers.count, progress: progress) { i, w -> (features: [[Float]], labels: [Int])? in
            let r = train[i]
            var rng = SplitMix64(seed: UInt64(i + 1))
            let ecustfd = r.source == "ecustfd"
            guard case .success(let (decoded, _)) = decoder.decode(path: r.image) else { return nil }
            return try? cells(of: decoded.image, record: r, classIndex: classIndex, sizes: sizes, mirror: !ecustfd,
                              aspects: aspects, recognizer: recognizers[w],
                              maxForeground: ecustfd ? budget.ecustfdForeground : budget.maxForeground,
                              maxBackground: ecustfd ? budget.ecustfdBackground : budget.maxBackground,
                              backgroundBelow: budget.backgroundBelow, rng: &rng)
        }
        let failures = train.indices.filter { perPhoto[$0] == nil }.map { train[$0].image }
        let got = perPhoto.compactMap { $0 }
        return (got.flatMap(\.features), got.flatMap(\.labels), failures)
    }
}
