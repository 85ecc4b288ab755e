import FoodRecognition
public import FoodCore
public import Foundation
import ImageCodecs
import FoodVision

/// What a batch remembers between runs: the result of every photo it finished (keyed by content hash and the
/// settings that produced it) and, with `--log`, the meal it went into. The concrete journal (the meal store) is
/// chosen by the executable.
public protocol BatchJournal: Sendable {
    /// Stored results (JSON of `PhotoResult`) for the hashes that were finished with these settings.
    func finishedResults(hashes: [String], settings: String) throws -> [String: Data]
    /// Stores one finished photo; with `meal` also merges it into the diary, in the same transaction.
    /// Returns how the meal was logged (nil when `meal` is nil).
    func record(hash: String, path: String, settings: String, result: Data, meal: PhotoMealInput?, replace: Bool) throws -> LoggedMeal?
}

/// A photo's contribution to the diary.
public struct PhotoMealInput: Sendable, Equatable {
    public var photo: MealPhoto
    public var foods: [MealFood]
    public var analysis: String?
    public var utcOffsetSeconds: Int?
    /// Set for an unrecognised photo ("Unrecognised photo"); nil lets the diary title the meal from its foods.
    public var title: String?
}

/// How a photo landed in the diary: `created`, `merged`, `duplicate`, `replaced` or `deleted` (the user deleted its
/// meal earlier; not logged again), the meal's id (empty for `deleted`), and the time the photo was logged at.
public struct LoggedMeal: Sendable, Equatable, Codable {
    public var outcome: MealOutcome
    public var mealID: String
    /// When the photo says it was taken, as logged.
    public var time: Date?
    /// Where `time` came from: `exif`, `exif_local`, `given` (`--time`) or `file_time` (never merged with others).
    public var timeSource: String?
    public init(outcome: MealOutcome, mealID: String, time: Date? = nil, timeSource: String? = nil) {
        self.outcome = outcome; self.mealID = mealID; self.time = time; self.timeSource = timeSource
    }
    enum CodingKeys: String, CodingKey { case outcome, time; case mealID = "meal_id", timeSource = "time_source" }
}

/// `--shard K/N`: a deterministic 1/N of the files, chosen from each file's path relative to the folder named on
/// the command line (so machines that mount the corpus in different places agree). K counts from 0, as a
/// Kubernetes Indexed Job's `JOB_COMPLETION_INDEX` does.
public struct Shard: Sendable, Equatable, CustomStringConvertible {
    public var index: Int
    public var count: Int

    public init(index: Int, count: Int) { self.index = index; self.count = count }

    /// Parses `K/N` with 0 ≤ K < N.
    public init?(parsing text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let k = Int(parts[0]), let n = Int(parts[1]), n >= 1, k >= 0, k < n else { return nil }
        index = k; count = n
    }

    public var description: String { "\(index)/\(count)" }

    /// Where `--shard auto` found its index and count.
    public enum Scheduler: String, Sendable, Equatable {
        case kubernetes = "Kubernetes Indexed Job"
        case slurm = "Slurm job array"
    }

    /// The shard a scheduler's array job gives this process: a Kubernetes Indexed Job (`JOB_COMPLETION_INDEX`, the count
    /// in `FOODMOMENT_SHARD_COUNT`, which the Job sets to its `completions`) or a Slurm job array (the task's place,
    /// `(SLURM_ARRAY_TASK_ID − SLURM_ARRAY_TASK_MIN) / SLURM_ARRAY_TASK_STEP`, of `SLURM_ARRAY_TASK_COUNT`). The error says
    /// what is missing or inconsistent.
    public static func fromScheduler(environment env: [String: String]) -> Result<(Shard, Scheduler), ShardError> {
        func int(_ name: String) -> Result<Int?, ShardError> {
            guard let text = env[name]?.trimmingCharacters(in: .whitespaces), !text.isEmpty else { return .success(nil) }
            guard let v = Int(text) else { return .failure(.notANumber(name, text)) }
            return .success(v)
        }
        do {
            if let index = try int("JOB_COMPLETION_INDEX").get() {
                guard let count = try int("FOODMOMENT_SHARD_COUNT").get() else { return .failure(.kubernetesWithoutCount) }
                guard count >= 1, (0..<count).contains(index) else { return .failure(.outOfRange(index: index, count: count, from: .kubernetes)) }
                return .success((Shard(index: index, count: count), .kubernetes))
            }
            if let id = try int("SLURM_ARRAY_TASK_ID").get() {
                guard let count = try int("SLURM_ARRAY_TASK_COUNT").get(), let min = try int("SLURM_ARRAY_TASK_MIN").get() else {
                    return .failure(.slurmIncomplete)
                }
                let step = max(1, try int("SLURM_ARRAY_TASK_STEP").get() ?? 1)
                let offset = id - min
                guard count >= 1, offset >= 0, offset % step == 0, (0..<count).contains(offset / step) else {
                    return .failure(.outOfRange(index: offset / step, count: count, from: .slurm))
                }
                return .success((Shard(index: offset / step, count: count), .slurm))
            }
        } catch {
            return .failure(error)
        }
        return .failure(.noScheduler)
    }

    /// FNV-1a (64-bit) of the relative path, then the SplitMix64 finaliser (FNV alone spreads names that differ
    /// only in their last characters unevenly), modulo N.
    public func contains(relativePath: String) -> Bool {
        Int(SplitMix64.mix(SplitMix64.fnv1a(relativePath)) % UInt64(count)) == index
    }

    /// The path relative to the root argument it was found under (the file name for a file named directly).
    public static func relativePath(_ path: String, root: String) -> String {
        let r = root.hasSuffix("/") ? root : root + "/"
        if path.hasPrefix(r) { return String(path.dropFirst(r.count)) }
        return (path as NSString).lastPathComponent
    }
}

public enum ShardError: Error, Equatable, CustomStringConvertible {
    case noScheduler
    case kubernetesWithoutCount
    case slurmIncomplete
    case notANumber(String, String)
    case outOfRange(index: Int, count: Int, from: Shard.Scheduler)

    public var description: String {
        switch self {
        case .noScheduler:
            "--shard auto found no array job: run it as a Kubernetes Indexed Job (JOB_COMPLETION_INDEX, with "
                + "FOODMOMENT_SHARD_COUNT set to the Job's completions) or a Slurm job array (sbatch --array), or give --shard K/N"
        case .kubernetesWithoutCount:
            "JOB_COMPLETION_INDEX is set but FOODMOMENT_SHARD_COUNT is not: set it to the Job's completions (see deploy/kubernetes-job.yaml)"
        case .slurmIncomplete:
            "SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_COUNT or SLURM_ARRAY_TASK_MIN is not: submit with sbatch --array"
        case let .notANumber(name, value):
            "\(name)=\(value) is not a whole number"
        case let .outOfRange(index, count, from):
            "the \(from.rawValue) gives shard \(index) of \(count), which does not exist (0…\(max(0, count - 1)))"
        }
    }
}

/// When a meal was eaten: the time the user gave (`--time`), else EXIF DateTimeOriginal (with OffsetTimeOriginal
/// when present), else the file time (which copying a photo changes: never used to merge photos into one meal).
public enum MealTime {
    public struct Resolved: Sendable, Equatable {
        public var date: Date
        public var utcOffsetSeconds: Int?
        /// `given`, `exif`, `exif_local` (no offset in the photo: read in `timeZone`) or `file_time`.
        public var source: String
    }

    public static func resolve(dateTimeOriginal: String?, offsetTimeOriginal: String?, fileModified: Date,
                               timeZone: TimeZone, given: Date? = nil) -> Resolved {
        if let given { return Resolved(date: given, utcOffsetSeconds: timeZone.secondsFromGMT(for: given), source: "given") }
        if let dto = dateTimeOriginal, let parts = parseExifDateTime(dto) {
            var calendar = Calendar(identifier: .gregorian)
            if let offsetText = offsetTimeOriginal, let offset = parseOffset(offsetText),
               let zone = TimeZone(secondsFromGMT: offset) {
                calendar.timeZone = zone
                if let date = calendar.date(from: parts) { return Resolved(date: date, utcOffsetSeconds: offset, source: "exif") }
            }
            calendar.timeZone = timeZone
            if let date = calendar.date(from: parts) {
                return Resolved(date: date, utcOffsetSeconds: timeZone.secondsFromGMT(for: date), source: "exif_local")
            }
        }
        return Resolved(date: fileModified, utcOffsetSeconds: nil, source: "file_time")
    }

    /// "YYYY:MM:DD HH:MM:SS" (EXIF); all-zero or blank dates (cameras write them) are nil.
    static func parseExifDateTime(_ text: String) -> DateComponents? {
        let digits = text.split(whereSeparator: { $0 == ":" || $0 == " " || $0 == "-" || $0 == "T" }).map { Int($0) }
        guard digits.count >= 6, let y = digits[0], let mo = digits[1], let d = digits[2], let h = digits[3],
              let mi = digits[4], let s = digits[5], (1900...2200).contains(y), (1...12).contains(mo), (1...31).contains(d),
              (0...23).contains(h), (0...59).contains(mi), (0...60).contains(s) else { return nil }
        return DateComponents(year: y, month: mo, day: d, hour: h, minute: mi, second: min(s, 59))
    }

    /// "+08:00", "-05:30", "Z".
    static func parseOffset(_ text: String) -> Int? {
        let t = text.trimmingCharacters(in: .whitespaces)
        if t == "Z" { return 0 }
        guard let sign = t.first, sign == "+" || sign == "-" else { return nil }
        let parts = t.dropFirst().split(separator: ":")
        guard parts.count == 2, let h = Int(parts[0]), let m = Int(parts[1]), (0...14).contains(h), (0...59).contains(m) else { return nil }
        return (sign == "-" ? -1 : 1) * (h * 3600 + m * 60)
    }
}

extension PhotoResult {
    /// This photo as a diary entry: nil for failures and decode-only results. A photo with no food we know becomes
    /// a meal of its own with no foods, titled "Unrecognised photo" and with the best guess in its analysis, so the
    /// user sees it and can add its foods (`meal edit`).
    public func mealInput(fileModified: Date, timeZone: TimeZone, givenTime: Date? = nil) -> PhotoMealInput? {
        guard succeeded, let hash = photoHash, let foods else { return nil }
        let time = MealTime.resolve(dateTimeOriginal: decode?.dateTimeOriginal, offsetTimeOriginal: decode?.offsetTimeOriginal,
                                    fileModified: fileModified, timeZone: timeZone, given: givenTime)
        let photo = MealPhoto(hash: hash, path: file, takenAt: time.date, timeSource: time.source)
        if unknown == true || foods.isEmpty {
            let guess = top?.first.map { String(format: "best guess %@ %.2f", $0.label, $0.probability) } ?? "no guess"
            return PhotoMealInput(photo: photo, foods: [],
                                  analysis: "On-device recognition: not a food we know (\(guess)); add its foods with `foodmoment meal edit`",
                                  utcOffsetSeconds: time.utcOffsetSeconds, title: "Unrecognised photo")
        }
        let items = foods.map { MealFood($0, photoHash: hash) }
        let summary = foods.map { String(format: "%@ %.2f", $0.food.label, $0.food.confidence) }.joined(separator: ", ")
        return PhotoMealInput(photo: photo,
                              foods: items, analysis: "On-device recognition: \(summary)", utcOffsetSeconds: time.utcOffsetSeconds)
    }
}

/// One row of `--csv`: one per food (or one per file without foods).
public enum ResultCSV {
    public static let header = "file,photo_hash,status,error,label,name,name_zh,confidence,box_x,box_y,box_w,box_h,"
        + "grams,grams_source,food_id,kcal,protein_g,carbs_g,fat_g,fiber_g"

    public static func rows(_ r: PhotoResult) -> [String] {
        let problem = r.error.map { "\($0.kind): \($0.message)" } ?? r.skipReason ?? ""
        let base = [r.file, r.photoHash ?? "", r.status.rawValue, problem]
        guard let foods = r.foods, !foods.isEmpty else {
            return [line(base + Array(repeating: "", count: 16))]
        }
        return foods.map { f in
            let d = f.food, n = f.nutrition
            func num(_ v: Double?, _ fmt: String = "%.1f") -> String { v.map { String(format: fmt, $0) } ?? "" }
            return line(base + [d.label, d.name, d.nameZh, num(d.confidence, "%.3f"), num(d.box.x, "%.4f"), num(d.box.y, "%.4f"),
                                num(d.box.w, "%.4f"), num(d.box.h, "%.4f"), num(d.grams, "%.0f"), d.gramsSource.rawValue, n?.foodId ?? "",
                                num(n?.kcal, "%.0f"), num(n?.proteinG), num(n?.carbsG), num(n?.fatG), num(n?.fiberG)])
        }
    }

    /// `CSV.line`: RFC 4180 with the spreadsheet-formula guard.
    public static func line(_ fields: [String]) -> String { CSV.line(fields) }
}

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
            let slots = ChunkSlots<(PhotoResult, Origin, Date, [UInt8]?)>(count: chunk.count)
            let early = chunkStart == 0 ? firstPhoto : nil
            Self.forEach(chunk.count, workers: workers) { i, w in
                var value = process(path: chunk[i], worker: w, early: i == 0 ? early?.value : nil)
                if !keepBytes { value.3 = nil }
                slots.set(i, value)
                onDone(chunk[i])
            }
            var values = slots.values
            if let refine {
                let fresh = values.indices.filter { values[$0]?.1 == .analysed && values[$0]?.0.succeeded == true }
                let refined = await refine(fresh.map { AnalyzedPhoto(result: values[$0]!.0, bytes: values[$0]!.3) })
                for (k, i) in fresh.enumerated() where k < refined.count { values[i]!.0 = refined[k] }
            }
            let outputs = ChunkSlots<Result<String, PhotoError>>(count: values.count)
            if let output {
                let done = values
                Self.forEach(done.count, workers: workers) { i, _ in
                    if let (r, _, _, bytes) = done[i], r.succeeded, r.foods != nil {
                        outputs.set(i, output(AnalyzedPhoto(result: r, bytes: bytes)))
                    }
                }
            }
            for (offset, slot) in values.enumerated() {
                guard let (result, origin, modified, _) = slot else { continue }
                var item = Item(index: chunkStart + offset, result: result, origin: origin)
                item.output = outputs.values[offset]
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

extension BatchRunner {
    /// `body(i, worker)` for every i in 0..<count on up to `workers` threads; worker w takes w, w + n, w + 2n, …
    /// (so worker w always uses analyzer w).
    static func forEach(_ count: Int, workers: Int, _ body: @Sendable (Int, Int) -> Void) {
        let n = min(workers, count)
        guard n > 0 else { return }
        DispatchQueue.concurrentPerform(iterations: n) { w in
            var i = w
            while i < count { body(i, w); i += n }
        }
    }
}

/// One value per photo of a chunk, filled from worker threads.
private final class ChunkSlots<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private(set) var values: [Value?]
    init(count: Int) { values = Array(repeating: nil, count: count) }
    func set(_ i: Int, _ v: Value) { lock.lock(); values[i] = v; lock.unlock() }
}

/// The settings key of a batch result: a digest of everything that changes what a photo's result is — the
/// model files, the arithmetic the network runs in (`InferencePrecision.automatic`, what this process's recogniser
/// uses: BF16 and INT8 move confidences and box edges by a hundredth), the user's learned foods, the nutrition tables
/// (size and time) and the decode options. A result made under another key is analysed again.
public enum BatchSettings {
    public static func key(modelsDirectory: String, nutritionDirectory: String, userDataDirectory: String,
                           decodeSize: Int, acceptDamaged: Bool) -> String {
        var material = "foodmoment-batch-1;decode=\(decodeSize);damaged=\(acceptDamaged);precision=\(InferencePrecision.automatic.rawValue)"
        // Every file of the food head folder (head, calibration, cell detector, plate head, coin head, …): a result
        // made before any of them changed is analysed again.
        let headFiles = ((try? FileManager.default.contentsOfDirectory(atPath: modelsDirectory + "/food-head")) ?? [])
            .filter { !$0.hasPrefix(".") }.sorted().map { "food-head/" + $0 }
        for file in ["efficientnet-lite0/manifest.json"] + headFiles {
            let bytes = FileManager.default.contents(atPath: modelsDirectory + "/" + file).map { [UInt8]($0) } ?? []
            material += ";\(file)=\(ContentDigest.sha256Hex(bytes))"
        }
        let learned = FileManager.default.contents(atPath: userDataDirectory + "/learned-foods.json").map { [UInt8]($0) } ?? []
        material += ";learned=\(ContentDigest.sha256Hex(learned))"
        for file in ["nutrition.fmdb", "nutrition.fmdb.gz", "labels.json"] {
            let attributes = try? FileManager.default.attributesOfItem(atPath: nutritionDirectory + "/" + file)
            let size = (attributes?[.size] as? NSNumber)?.intValue ?? -1
            let time = (attributes?[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0
            material += ";\(file)=\(size)@\(Int(time))"
        }
        return String(ContentDigest.sha256Hex(Array(material.utf8)).prefix(16))
    }
}
