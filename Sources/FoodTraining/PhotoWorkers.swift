import FoodMoment
import FoodCore
import Foundation
import ImageCodecs

/// The evaluators' and trainers' worker loop: photo i is decoded and handled on worker i mod n (each worker owns its
/// networks: they are not shared between threads), progress is reported after every photo, and the results come back
/// in input order.
enum PhotoWorkers {
    /// `body(worker, index, decoded)` for every path — `decoded` is the photo (upright, at least `minShortSide` on its
    /// short side) or why it could not be decoded; nil results stay nil.
    static func map<T>(_ paths: [String], workers: Int, minShortSide: Int, progress: (@Sendable (Int, Int) -> Void)?,
                       _ body: @Sendable (_ worker: Int, _ index: Int, _ decoded: Result<RGBImage, PhotoError>) -> T?) -> [T?] {
        let decoder = PhotoDecoder(options: DecodeOptions(minShortSide: minShortSide))
        return WorkerPool.map(paths.count, workers: workers, progress: progress) { i, w in
            body(w, i, decoder.decode(path: paths[i]).map(\.0.image))
        }
    }
}
