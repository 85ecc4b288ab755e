import FoodRecognition
public import FoodCore
public import Foundation
import ImageCodecs
import FoodVision

/// Runs a batch: every worker has its own analyzer; photos are read once and hashed, finished photos come back
/// from the journal instead of being analysed again, and every new result is journaled (and logged) in input
/// order as soon as its chunk is done, so a run killed at any moment loses at most one chunk of work and a
/// re-run never duplicates anything. Memory is bounded by the chunk, whatever the folder's size.
/// A photo's result with the bytes the batch read and hashed for it: refinement and pictures use these, so a file
/// that changes during the run is never sent or drawn under another photo's hash.
public struct AnalyzedPhoto: Sendable {
    public var result: PhotoResult
    /// The file's content as analysed (nil when it could not be read).
    public var bytes: [UInt8]?

    public init(result: PhotoResult, bytes: [UInt8]?) { self.result = result; self.bytes = bytes }
}

public final class BatchRunner: @unchecked Sendable {
    public struct Options: Sendable {
        /// Identifies what produced a result (model, decode settings): results made otherwise are redone.
        public var settings: String
        /// Redo photos even when the journal has them (their diary foods are replaced).
        public var force: Bool
        /// Merge results into the diary.
        public var log: Bool
        public var timeZone: TimeZone
        /// Photos per worker per chunk.
        public var chunkPerWorker: Int
        /// The time every logged photo of this run was taken (`--time`), instead of its EXIF or file time.
        public var givenTime: Date?

        public init(settings: String, force: Bool = false, log: Bool = false, timeZone: TimeZone = .current, chunkPerWorker: Int = 4,
                    givenTime: Date? = nil) {
            self.settings = settings; self.force = force; self.log = log; self.timeZone = timeZone
            self.chunkPerWorker = chunkPerWorker; self.givenTime = givenTime
        }
    }

    public enum Origin: String, Sendable { case analysed, journal }

    public struct Item: Sendable {
        public var index: Int
        public var result: PhotoResult
        public var origin: Origin
        public var logged: LoggedMeal?
        /// Why the result could not be journaled or logged (the result itself is still good).
        public var journalError: String?
        /// What the per-photo output step (e.g. `--annotate`) reported: a path written or an error.
        public var output: Result<String, PhotoError>?

        /// A file the walk found in a folder that is not a photo: every output format lists it as `skipped`.
        public static func skipped(index: Int, path: String, reason: String) -> Item {
            Item(index: index, result: .skipped(file: path, reason: reason), origin: .analysed)
        }
    }

    public struct Summary: Sendable, Codable, Equatable {
        public var files = 0
        public var succeeded = 0
        public var failed = 0
        /// Files in folders that are not photos (listed, not analysed; not failures).
        public var skipped = 0
        public var foods = 0
        public var fromJournal = 0
        public var analysed = 0
        public var mealsCreated = 0
        public var mealsMerged = 0
        public var duplicates = 0
        /// Photos whose meal the user deleted earlier: not logged again.
        public var keptDeleted = 0
        /// Photos that showed no food we know (with `--log`, each is an "Unrecognised photo" meal).
        public var unknown = 0
        public var journalErrors = 0
        public var seconds = 0.0
        public var workers = 1

        public var photosPerSecond: Double { seconds > 0 ? Double(analysed) / seconds : 0 }

        enum CodingKeys: String, CodingKey {
            case files, succeeded, failed, skipped, foods, analysed, seconds, workers, duplicates
            case fromJournal = "from_journal", mealsCreated = "meals_created", mealsMerged = "meals_merged"
            case journalErrors = "journal_errors", keptDeleted = "kept_deleted", unknown
        }
    }

    let analyzers: [MealAnalyzer]
    let decoder: PhotoDecoder
    let journal: (any BatchJournal)?
    let options: Options
    let refine: (@Sendable ([AnalyzedPhoto]) async -> [PhotoResult])?
    /// Runs for every successful result of a chunk, on all workers at once (annotated pictures).
    public var output: (@Sendable (AnalyzedPhoto) -> Result<String, PhotoError>)?
    /// The first photo, read and decoded while the caller loaded the model (`EarlyDecode`); used when it is `paths[0]`.
    public var firstPhoto: Background<EarlyDecode>?

    /// `analyzers` empty = decode only (nothing is journaled then). `refine` (stage 2) runs on each chunk's new
    /// results before they are journaled; a photo whose refinement failed is not journaled, so a re-run retries it.
    public init(analyzers: [MealAnalyzer], decoder: PhotoDecoder, journal: (any BatchJournal)?, options: Options,
                refine: (@Sendable ([AnalyzedPhoto]) async -> [PhotoResult])? = nil) {
        self.analyzers = analyzers
        self.decoder = decoder
        self.journal = analyzers.isEmpty ? nil : journal
        self.options = options
        self.refine = refine
    }

    /// Processes `paths`; `onItem` is called on the calling thread in input order; `onDone` from worker threads
    /// (for progress). `shouldStop` is checked between chunks (Ctrl-C).
    public func run(paths: [String], workers requested: Int, onItem: (Item) -> Void,
                    onDone: @Sendable (String) -> Void = { _ in }, shouldStop: () -> Bool = { false }) async -> Summary {
        let workers = max(1, min(requested, max(1, paths.count), analyzers.isEmpty ? requested : analyzers.count))
        var summary = Summary()
        summary.workers = workers
        let start = ContinuousClock.now
        let chunkSize = workers * max(1, options.chunkPerWorker)
        // A photo's bytes wait for the rest of its chunk only where a later step reads them again (refinement sends the
        // photo, `output` draws on it): otherwise a chunk of 12 MP JPEGs would hold 2–6 MB a photo, four per worker.
        let keepBytes = refine != nil || output != nil
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var chunkStart = 0
        while chunkStart < paths.count, !shouldStop() {
            let chunk = Array(paths[chunkStart..<min(paths.count, chunkStart + chunkSize)])
            let early = chunkStart == 0 ? firstPhoto : nil
            var values = WorkerPool.map(chunk.count, workers: workers) { i, w in
                var value = process(path: chunk[i], worker: w, early: i == 0 ? early?.value : nil)
                if !keepBytes { value.3 = nil }
                onDone(chunk[i])
                return value
            }
            if let refine {
                let fresh = values.indices.filter { values[$0]?.1 == .analysed && values[$0]?.0.succeeded == true }
                let refined = await refine(fresh.map { AnalyzedPhoto(result: values[$0]!.0, bytes: values[$0]!.3) })
                for (k, i) in fresh.enumerated() where k < refined.count { values[i]!.0 = refined[k] }
            }
            var outputs = [Result<String, PhotoError>?](repeating: nil, count: values.count)
            if let output {
                let done = values
                outputs = WorkerPool.map(done.count, workers: workers) { i, _ in
                    guard let (r, _, _, bytes) = done[i], r.succeeded, r.foods != nil else { return nil }
                    return output(AnalyzedPhoto(result: r, bytes: bytes))
                }
            }
            for (offset, slot) in values.enumerated() {
                guard let (result, origin, modified, _) = slot else { continue }
                var item = Item(index: chunkStart + offset, result: result, origin: origin)
                item.output = outputs[offset]
                if let journal, result.succeeded, let hash = result.photoHash, origin == .analysed || options.log,
                   result.refinement?.status != .unrefined {
                    let meal = options.log ? result.mealInput(fileModified: modified, timeZone: options.timeZone,
                                                              givenTime: options.givenTime) : nil
                    do {
                        var stored = result
                        stored.timings = nil  // the journal keeps what the photo showed, not how long it took this time
                        item.logged = try journal.record(hash: hash, path: result.file, settings: options.settings,
                                                         result: try encoder.encode(stored), meal: meal,
                                                         replace: options.force && origin == .analysed)
                        item.logged?.time = meal?.photo.takenAt
                        item.logged?.timeSource = meal?.photo.timeSource
                    } catch {
                        item.journalError = "\(error)"
                        summary.journalErrors += 1
                    }
                }
                summary.files += 1
                if result.succeeded { summary.succeeded += 1 } else { summary.failed += 1 }
                summary.foods += result.foods?.count ?? 0
                if origin == .journal { summary.fromJournal += 1 } else { summary.analysed += 1 }
                switch item.logged?.outcome {
                case .created: summary.mealsCreated += 1
                case .merged: summary.mealsMerged += 1
                case .duplicate: summary.duplicates += 1
                case .deleted: summary.keptDeleted += 1
                default: break
                }
                if result.status == .unknown { summary.unknown += 1 }
                onItem(item)
            }
            chunkStart += chunk.count
        }
        summary.seconds = (ContinuousClock.now - start).milliseconds / 1000
        return summary
    }

    /// One photo: read + hash, the journal's answer when it has one, else decode (+ recognise + nutrition). `early`:
    /// this photo already read and decoded (used only when its path is `path`).
    func process(path: String, worker: Int, early: EarlyDecode? = nil) -> (PhotoResult, Origin, Date, [UInt8]?) {
        let early = early?.path == path ? early : nil
        // The timings count the early read and decode, not the wait for the model that followed them.
        let start = ContinuousClock.now - (early?.elapsed ?? .zero)
        let file: PhotoFile
        switch early?.file ?? Result(catching: { () throws(ImageCodecError) in
            try PhotoFile.read(atPath: path, maxBytes: decoder.options.maxFileBytes)
        }) {
        case .success(let read): file = read
        case .failure(let error):
            return (PhotoResult(file: path, error: PhotoError(error)), .analysed, Date(timeIntervalSince1970: 0), nil)
        }
        if let journal, !options.force,
           let data = try? journal.finishedResults(hashes: [file.sha256], settings: options.settings)[file.sha256],
           var cached = try? JSONDecoder().decode(PhotoResult.self, from: data) {
            cached.file = path
            return (cached, .journal, file.modified, file.bytes)
        }
        if worker < analyzers.count {
            let analyzer = analyzers[worker]
            let result = early.map { analyzer.analyze(file, decoded: $0.decoded, start: start) } ?? analyzer.analyze(file, start: start)
            return (result, .analysed, file.modified, file.bytes)
        }
        var result: PhotoResult
        switch early?.decoded ?? decoder.decode(file, start: start) {
        case .success(let (_, summary)): result = PhotoResult(file: path, decode: summary)
        case .failure(let error): result = PhotoResult(file: path, error: error)
        }
        result.photoHash = file.sha256
        return (result, .analysed, file.modified, file.bytes)
    }
}

/// A batch's first photo read, hashed and decoded on a thread of its own while the command loads the model and the
/// nutrition tables: for a one-photo `analyze` that decode is a sixth of the run, and the second core is otherwise idle
/// then. The photo's result is the same as when the batch reads it; only the wall time differs.
public struct EarlyDecode: Sendable {
    public let path: String
    let file: Result<PhotoFile, ImageCodecError>
    /// `decoder.decode(file)`'s answer; after a failed read, that read's error (the batch reports it from `file`).
    let decoded: Result<(DecodedImage, DecodeSummary), PhotoError>
    /// From the start of the read to the end of the decode.
    let elapsed: Duration

    public init(path: String, decoder: PhotoDecoder) {
        let start = ContinuousClock.now
        self.path = path
        do throws(ImageCodecError) {
            let file = try PhotoFile.read(atPath: path, maxBytes: decoder.options.maxFileBytes)
            self.file = .success(file)
            decoded = decoder.decode(file, start: start)
        } catch {
            file = .failure(error)
            decoded = .failure(PhotoError(error))
        }
        elapsed = ContinuousClock.now - start
    }
}
