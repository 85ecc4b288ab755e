import FoodCore
import FoodMomentTestSupport
import FoodRecognition
import Foundation
import Testing
@testable import FoodTraining

/// The one worker loop, and the training loops built on it: the same data whatever the number of workers.
@Suite("Worker pool and training loops")
struct TrainingLoopsTests {
    @Test func workerPoolKeepsInputOrderAndGivesEachWorkerItsOwnStride() {
        let seen = WorkerPool.map(103, workers: 4) { i, w in (i, w) }
        #expect(seen.map { $0?.0 } == Array(0..<103))
        #expect(seen.allSatisfy { $0.map { $0.1 == $0.0 % 4 } ?? false }, "worker w takes w, w + 4, …")
        #expect(WorkerPool.map(3, workers: 8) { i, w in w }.compactMap { $0 } == [0, 1, 2], "never more workers than items")
        #expect(WorkerPool.map(0, workers: 2) { i, _ in i }.isEmpty)
        let gaps = WorkerPool.map(10, workers: 3) { i, _ in i % 3 == 0 ? nil : i }
        #expect(gaps.compactMap { $0 } == [1, 2, 4, 5, 7, 8])
    }

    /// A few ECUSTFD train photos through `coinCells` and `CellTraining.extract` on one and on two workers.
    @Test func coinCellsAndCellExtractionDoNotDependOnTheWorkers() throws {
        let jsonl = TestPaths.sharedData + "/detection/ecustfd.jsonl"
        guard FileManager.default.fileExists(atPath: jsonl) else { return }   // ../shared/data absent: nothing to read
        let records = Array(try DetectionRecord.load(jsonl: jsonl).filter { $0.split == "train" && ($0.coins?.count ?? 0) == 1 }.prefix(6))
        #expect(records.count == 6)
        let loaded = try FoodRecognizer.load(modelsDirectory: TestPaths.repoRoot + "/models", userDataDirectory: nil, portions: PortionTable())
        let one = [loaded], two = loaded.forWorkers(2)
        let jobs = records.map { (path: $0.image, record: Optional($0)) }
        let a = ReferenceTraining.coinCells(jobs, recognizers: one), b = ReferenceTraining.coinCells(jobs, recognizers: two)
        #expect(a.labels == b.labels && a.features == b.features)
        #expect(a.labels.filter { $0 == 1 }.count == 6, "one coin cell per photo")

        let classes = ["background"] + Set(records.flatMap { $0.boxes.map(\.label) }).sorted()
        let index = Dictionary(uniqueKeysWithValues: classes.enumerated().map { ($1, $0) })
        let c = CellTraining.extract(records, classIndex: index, sizes: [448], aspects: [false], budget: .init(), recognizers: one)
        let d = CellTraining.extract(records, classIndex: index, sizes: [448], aspects: [false], budget: .init(), recognizers: two)
        #expect(c.failures.isEmpty && !c.labels.isEmpty)
        #expect(c.labels == d.labels && c.features == d.features)
    }
}
