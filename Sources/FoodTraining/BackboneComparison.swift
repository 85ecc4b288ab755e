import FoodVision
import Foundation

/// Compares backbones (and concatenations of their embeddings) by what they buy on photos: the same linear food
/// head trained on each one's embeddings, scored on dev and on whole held-out sources, next to each backbone's cost.
/// Every feature set gets the same photos, views, head and seeds, so the only difference is the features.
package struct BackboneComparison: Sendable {
    /// One photo's embeddings: view 0 the whole photo, view 1 its mirror image.
    package struct Photo: Sendable {
        package var path: String, label: String, split: Split, source: String?
        package var views: [[Float]]
        package init(path: String, label: String, split: Split, source: String?, views: [[Float]]) {
            self.path = path; self.label = label; self.split = split; self.source = source; self.views = views
        }
    }

    package enum Split: String, Sendable, Codable { case train, dev }

    /// A protocol's result for one feature set.
    package struct Score: Sendable, Codable, Equatable {
        /// Photos scored.
        package var photos: Int
        /// Top-1 from the whole photo only.
        package var top1: Double
        /// Top-1 from the mean of the photo's and its mirror image's probabilities (test-time views).
        package var top1Mirror: Double
        package var dishTop1: Double?
        package var produceTop1: Double?

        enum CodingKeys: String, CodingKey {
            case photos, top1
            case top1Mirror = "top1_mirror", dishTop1 = "dish_top1", produceTop1 = "produce_top1"
        }
    }

    package struct Row: Sendable, Codable {
        /// The backbones whose embeddings are concatenated (one for a single backbone).
        package var backbones: [String]
        /// Sum of the backbones' median forward times at their input size, one thread.
        package var milliseconds: Double
        package var dev: Score
        /// Held-out source → score of a head trained without that source, on its photos of `crossLabels`.
        package var crossSource: [String: Score]

        enum CodingKeys: String, CodingKey {
            case backbones, milliseconds, dev
            case crossSource = "cross_source"
        }
    }

    package let photos: [String: [Photo]]
    package let crossLabels: Set<String>
    package var l2: Float = 0.01
    package var learningRate: Float = 0.0003
    package var seed: UInt64 = 1

    /// `photos`: per backbone name, the same photos in the same order.
    package init(photos: [String: [Photo]], crossLabels: Set<String>) {
        self.photos = photos
        self.crossLabels = crossLabels
    }

    /// The photos of `names` with their embeddings concatenated in that order.
    func concatenated(_ names: [String]) -> [Photo] {
        let first = photos[names[0]]!
        return first.indices.map { i in
            var p = first[i]
            for n in names.dropFirst() {
                let other = photos[n]![i]
                precondition(other.path == p.path, "backbones embedded different photos")
                p.views = zip(p.views, other.views).map { $0 + $1 }
            }
            return p
        }
    }

    /// Trains the head on `train` (every view) and scores it on `test`.
    func score(train: [Photo], test: [Photo]) throws -> Score {
        let classes = Array(Set(train.map(\.label))).sorted()
        let index = Dictionary(uniqueKeysWithValues: classes.enumerated().map { ($1, $0) })
        let views = train.first?.views.count ?? 0
        var xs: [[Float]] = [], ys: [Int] = []
        for p in train { for v in p.views { xs.append(v); ys.append(index[p.label]!) } }
        let groups = TrainingSet.holdOutGroups(train.map { TrainingSample(path: $0.path, label: $0.label) })
        let head = try SoftmaxHead.train(embeddings: xs, labels: ys, classes: classes, l2: l2, holdOutFraction: 0.15, seed: seed,
                                         learningRate: learningRate, groupSize: views, photoGroups: groups)
        var right = 0, rightMirror = 0
        var byGroup: [String: (n: Int, right: Int)] = [:]
        for p in test {
            let single = try head.predict(p.views[0])
            var mean = [String: Float]()
            for s in single { mean[s.label, default: 0] += s.probability }
            for v in p.views.dropFirst() { for s in try head.predict(v) { mean[s.label, default: 0] += s.probability } }
            let best = mean.max { $0.value < $1.value || ($0.value == $1.value && $0.key > $1.key) }?.key
            let ok = single.first?.label == p.label
            right += ok ? 1 : 0
            rightMirror += best == p.label ? 1 : 0
            let g = LabelGroup.group(of: p.label)
            byGroup[g, default: (0, 0)].n += 1
            byGroup[g, default: (0, 0)].right += ok ? 1 : 0
        }
        let n = max(1, test.count)
        func rate(_ g: String) -> Double? { byGroup[g].map { Double($0.right) / Double(max(1, $0.n)) } }
        return Score(photos: test.count, top1: Double(right) / Double(n), top1Mirror: Double(rightMirror) / Double(n),
                     dishTop1: rate("dish"), produceTop1: rate("produce"))
    }

    /// Dev: train on every train photo, score dev. Each held-out source S: train on the train photos not from S,
    /// score S's photos (train and dev) of `crossLabels`.
    package func row(_ names: [String], milliseconds: Double, heldOut sources: [String]) throws -> Row {
        let all = concatenated(names)
        let train = all.filter { $0.split == .train }
        let dev = try score(train: train, test: all.filter { $0.split == .dev })
        var cross: [String: Score] = [:]
        for s in sources {
            let test = all.filter { $0.source == s && crossLabels.contains($0.label) }
            guard !test.isEmpty else { continue }
            cross[s] = try score(train: train.filter { $0.source != s }, test: test)
        }
        return Row(backbones: names, milliseconds: milliseconds, dev: dev, crossSource: cross)
    }
}

/// Embeddings of a photo list on disk, so a comparison re-run does not re-run the backbones:
/// `[u32 photos][u32 views][u32 dim][u64 FNV-1a of the paths][photos*views*dim f32]`, little-endian.
package enum ViewEmbeddingCache {
    static func key(_ paths: [String]) -> UInt64 {
        var h: UInt64 = 0xcbf29ce484222325
        for p in paths { for b in p.utf8 { h = (h ^ UInt64(b)) &* 0x100000001b3 }; h = (h ^ 10) &* 0x100000001b3 }
        return h
    }

    package static func write(_ path: String, paths: [String], embeddings: [[[Float]]]) throws {
        let views = embeddings.first?.count ?? 0, dim = embeddings.first?.first?.count ?? 0
        var data = Data()
        var header: [UInt32] = [UInt32(paths.count), UInt32(views), UInt32(dim)]
        data.append(Data(bytes: &header, count: 12))
        var k = key(paths)
        data.append(Data(bytes: &k, count: 8))
        for photo in embeddings { for v in photo { v.withUnsafeBytes { data.append(contentsOf: $0) } } }
        try data.write(to: URL(fileURLWithPath: path), options: .atomic)
    }

    /// Nil when absent or made for other photos.
    package static func read(_ path: String, paths: [String]) -> [[[Float]]]? {
        guard let data = FileManager.default.contents(atPath: path), data.count >= 20 else { return nil }
        return data.withUnsafeBytes { raw -> [[[Float]]]? in
            let n = Int(raw.loadUnaligned(fromByteOffset: 0, as: UInt32.self)), views = Int(raw.loadUnaligned(fromByteOffset: 4, as: UInt32.self))
            let dim = Int(raw.loadUnaligned(fromByteOffset: 8, as: UInt32.self)), k = raw.loadUnaligned(fromByteOffset: 12, as: UInt64.self)
            guard n == paths.count, k == key(paths), data.count == 20 + n * views * dim * 4 else { return nil }
            var out: [[[Float]]] = []
            out.reserveCapacity(n)
            var offset = 20
            for _ in 0..<n {
                var photo: [[Float]] = []
                for _ in 0..<views {
                    photo.append((0..<dim).map { raw.loadUnaligned(fromByteOffset: offset + $0 * 4, as: Float.self) })
                    offset += dim * 4
                }
                out.append(photo)
            }
            return out
        }
    }
}
