import FoodRecognition
import FoodMoment
package import FoodVision
package import FoodCore
import Foundation
import ImageCodecs

/// One training photo (or a box inside one) and its label.
package struct TrainingSample: Sendable, Equatable {
    package var path: String
    package var label: String
    /// The part of the photo showing the food; nil = the whole photo.
    package var region: NormalizedBox?

    package init(path: String, label: String, region: NormalizedBox? = nil) {
        self.path = path; self.label = label; self.region = region
    }
}

/// A detection record in the `../shared/data/detection` JSON-lines format.
package struct DetectionRecord: Sendable, Codable {
    package struct Box: Sendable, Codable {
        package var label: String
        package var x: Double, y: Double, w: Double, h: Double
        package var normalized: NormalizedBox { NormalizedBox(x: x, y: y, w: w, h: h) }
    }
    package var image: String
    package var width: Int
    package var height: Int
    package var boxes: [Box]
    package var grams: [String: Double]?
    package var source: String?
    package var group: String?
    /// ECUSTFD: the weighed portion the photo shows (`apple001`); its photos are never split apart.
    package var portion: String?
    package var split: String?
    package var coins: [Coin]?
    /// ECUSTFD `mix` photos: the single portions that photograph the same physical items (`["apple008", "banana008"]`).
    package var sameItemsAsPortions: [String]?

    enum CodingKeys: String, CodingKey {
        case image, width, height, boxes, grams, source, group, portion, split, coins
        case sameItemsAsPortions = "same_items_as_portions"
    }

    /// Portion → the physical items it shows, as one id per set of portions that share an item (a `mix` portion and
    /// the single portions it re-uses get the same id, the smallest of their names); other portions are their own.
    /// Holding out by this id keeps the same apple out of both sides of a split.
    package static func physicalItems(_ records: [DetectionRecord]) -> [String: String] {
        var parent: [String: String] = [:]
        func find(_ p: String) -> String {
            var root = p
            while let next = parent[root], next != root { root = next }
            return root
        }
        func union(_ a: String, _ b: String) {
            let (ra, rb) = (find(a), find(b))
            if ra != rb { parent[max(ra, rb)] = min(ra, rb) }
        }
        for r in records {
            guard let p = r.portion else { continue }
            if parent[p] == nil { parent[p] = p }
            for other in r.sameItemsAsPortions ?? [] {
                if parent[other] == nil { parent[other] = other }
                union(p, other)
            }
        }
        return Dictionary(uniqueKeysWithValues: parent.keys.map { ($0, find($0)) })
    }

    /// A reference coin (ECUSTFD: the 1-yuan coin, 25 mm).
    package struct Coin: Sendable, Codable {
        package var x: Double, y: Double, w: Double, h: Double
    }

    /// Reads every record; image paths are made absolute relative to the file's folder.
    package static func load(jsonl path: String) throws -> [DetectionRecord] {
        let dir = URL(fileURLWithPath: path).deletingLastPathComponent().path
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let decoder = JSONDecoder()
        return try text.split(separator: "\n").filter { !$0.isEmpty }.map { line in
            var r = try decoder.decode(DetectionRecord.self, from: Data(line.utf8))
            if !r.image.hasPrefix("/") { r.image = URL(fileURLWithPath: dir + "/" + r.image).standardizedFileURL.path }
            return r
        }
    }

    /// SOHL source-photo groups held out of head training so detection can be measured on unseen plates:
    /// a stable hash of the group id, one group in three.
    package static func isHeldOut(group: String) -> Bool {
        SplitMix64.fnv1a(group) % 3 == 0
    }
}

package enum TrainingSet {
    /// `DIR/<label>/<photo>`: every file under each label folder (non-images fail later, per file).
    package static func folders(_ dir: String) throws -> [TrainingSample] {
        let labels = try FileManager.default.contentsOfDirectory(atPath: dir).sorted().filter { name in
            var isDir: ObjCBool = false
            return !name.hasPrefix(".") && FileManager.default.fileExists(atPath: dir + "/" + name, isDirectory: &isDir) && isDir.boolValue
        }
        var samples: [TrainingSample] = []
        for label in labels {
            for file in try FileManager.default.contentsOfDirectory(atPath: dir + "/" + label).sorted() where !file.hasPrefix(".") {
                samples.append(TrainingSample(path: dir + "/" + label + "/" + file, label: label))
            }
        }
        return samples
    }

    /// Hold-out groups, one id per sample: the shots of one weighed ECUSTFD portion (`apple001S(1).jpg`,
    /// `apple001T(2).jpg` … → `apple001`) form one group, and so do the box crops of one photo; every other photo
    /// is its own group. Holding out by group keeps near-identical shots of one portion off both sides of a split.
    package static func holdOutGroups(_ samples: [TrainingSample]) -> [Int] {
        var ids: [String: Int] = [:]
        return samples.map { s in
            let dir = (s.path as NSString).deletingLastPathComponent, name = (s.path as NSString).lastPathComponent
            var key = s.path
            if let r = name.range(of: #"^[A-Za-z_]+[0-9]+(?=[ST]\([0-9]+\)\.)"#, options: .regularExpression) {
                key = dir + "/" + name[r]
            }
            if let id = ids[key] { return id }
            ids[key] = ids.count
            return ids.count - 1
        }
    }

    /// Box crops from a detection file (with a 10 % margin), skipping held-out groups and tiny boxes.
    package static func detectionCrops(_ records: [DetectionRecord], source: String = "sohl") -> [TrainingSample] {
        var samples: [TrainingSample] = []
        for r in records where r.source == source {
            if let g = r.group, DetectionRecord.isHeldOut(group: g) { continue }
            for b in r.boxes where b.w * b.h >= 0.01 {
                let mx = b.w * 0.1, my = b.h * 0.1
                let box = NormalizedBox(x: b.x - mx, y: b.y - my, w: b.w + 2 * mx, h: b.h + 2 * my).clipped
                samples.append(TrainingSample(path: r.image, label: b.label, region: box))
            }
        }
        return samples
    }
}

/// Backbone embeddings for training and learning, on several threads (one network instance per thread).
package final class EmbeddingExtractor: @unchecked Sendable {
    private let networks: [EfficientNetLite0]
    /// When set, `embed` gives the food embedding (this top over its tap block's output), the one a head next to a
    /// shipped `food-top.json` reads; else the backbone's own pooled embedding.
    package let foodTop: FoodTop?
    /// The side of the square views `embed` feeds the network (nil = its own input size, 224 for Lite0): 64 reads a
    /// photo as a thumbnail does.
    package var viewSize: Int?

    package init(modelDirectory: String, threads: Int, foodTop: FoodTop? = nil, inference: InferenceOptions = InferenceOptions()) throws {
        networks = try (0..<max(1, threads)).map { _ in try EfficientNetLite0(modelDirectory: modelDirectory, options: inference) }
        self.foodTop = foodTop
    }

    package init(networks: [EfficientNetLite0], foodTop: FoodTop? = nil) {
        self.networks = networks
        self.foodTop = foodTop
    }


    /// The training views of one photo: the whole region, its mirror image, and `views - 2` random crops
    /// (70–95 % of the region's area, aspect jittered, mirrored at random).
    /// `size` is the network's input size (224 for Lite0).
    package static func views(of image: RGBImage, region: NormalizedBox?, count: Int, size: Int = FoodRecognizer.inputSize,
                             rng: inout SplitMix64) -> [FloatImage] {
        augmentedViews(of: image, region: region, count: count, area: 0.7...0.95, aspect: 0.8...1.25, colorJitter: false,
                       size: size, rng: &rng)
    }

    /// The whole region, its mirror image, and `count - 2` random crops (`area` of the region, aspect in `aspect`,
    /// mirrored at random), each crop with a mild colour jitter when `colorJitter` (brightness ±0.08, per-channel
    /// gain 0.9…1.1 on the normalised values). The random draws per crop are area, aspect, x, y, mirror, then the
    /// jitter, so the plain views of a seed do not change when jitter is added elsewhere.
    static func augmentedViews(of image: RGBImage, region: NormalizedBox?, count: Int, area: ClosedRange<Double>,
                               aspect: ClosedRange<Double>, colorJitter: Bool, size: Int = FoodRecognizer.inputSize,
                               rng: inout SplitMix64) -> [FloatImage] {
        let base = region ?? .whole
        let mirrored = image.applying(.upMirrored)
        func tensor(_ img: RGBImage, _ box: NormalizedBox) -> FloatImage {
            ImageResampler.tensor(from: img, mode: .region(box), size: size)
        }
        var out = count > 1 ? RegionViews.pair(of: image, mirroredImage: mirrored, region: base, size: size) : [tensor(image, base)]
        while out.count < count {
            let a = Double.random(in: area, using: &rng)
            let r = Double.random(in: aspect, using: &rng)
            let w = min(1, (a * r).squareRoot()), h = min(1, (a / r).squareRoot())
            let x = Double.random(in: 0...(1 - w), using: &rng), y = Double.random(in: 0...(1 - h), using: &rng)
            let crop = NormalizedBox(x: base.x + x * base.w, y: base.y + y * base.h, w: w * base.w, h: h * base.h)
            var view = Bool.random(using: &rng) ? tensor(mirrored, RegionViews.mirrored(crop)) : tensor(image, crop)
            if colorJitter {
                let brightness = Float.random(in: -0.08...0.08, using: &rng)
                let gains = (0..<3).map { _ in Float.random(in: 0.9...1.1, using: &rng) }
                for i in view.values.indices { view.values[i] = min(1, max(-1, view.values[i] * gains[i % 3] + brightness)) }
            }
            out.append(view)
        }
        return out
    }

    package struct Failure: Sendable { package var path: String; package var reason: String }

    /// Embeddings for every sample × `views`, in sample order; failures are reported, not fatal.
    package func embed(_ samples: [TrainingSample], views: Int, seed: UInt64 = 1,
                      progress: (@Sendable (Int, Int) -> Void)? = nil) -> (embeddings: [[[Float]]], failures: [Failure]) {
        let lock = NSLock()
        nonisolated(unsafe) var results = [[[Float]]](repeating: [], count: samples.count)
        let size = viewSize ?? networks[0].inputSize
        let failures = forEachSample(samples, seed: seed, progress: progress) { image, region, rng in
            Self.views(of: image, region: region, count: views, size: size, rng: &rng)
        } use: { [foodTop] i, net, inputs in
            let embeddings: [[Float]]
            if let foodTop {
                embeddings = try foodTop.forward(inputs, on: net).map { try foodTop.embedding(of: $0) }
            } else {
                embeddings = try net.forward(inputs).map(\.embedding)
            }
            lock.lock(); results[i] = embeddings; lock.unlock()
        }
        return (results, failures)
    }

    /// The worker loop of `embed` and `blockOutputs`: every sample decoded once on one of the networks' threads
    /// (sample i on worker i mod n, its random views seeded by i), `makeViews` gives its inputs and `use` runs them;
    /// a photo that fails to decode or run is a failure, not fatal. Returns the failures.
    func forEachSample(_ samples: [TrainingSample], seed: UInt64, progress: (@Sendable (Int, Int) -> Void)?,
                       makeViews: @Sendable (RGBImage, NormalizedBox?, inout SplitMix64) -> [FloatImage],
                       use: @Sendable (Int, EfficientNetLite0, [FloatImage]) throws -> Void) -> [Failure] {
        PhotoWorkers.map(samples.map(\.path), workers: networks.count,
                         minShortSide: max(FoodRecognizer.inputSize, networks[0].inputSize), progress: progress) { worker, i, decoded -> Failure? in
            let s = samples[i]
            switch decoded {
            case .success(let image):
                var rng = SplitMix64(seed: seed &+ UInt64(i) &* 0x9E37)
                do {
                    try use(i, networks[worker], makeViews(image, s.region, &rng))
                    return nil
                } catch {
                    return Failure(path: s.path, reason: "\(error)")
                }
            case .failure(let e):
                return Failure(path: s.path, reason: e.message)
            }
        }.compactMap { $0 }
    }
}
