import ArgumentParser
import FoodCore
import FoodVision
import Foundation
import FoodMoment
import FoodRecognition
import FoodTraining

struct FineTuneCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "finetune",
        abstract: "Fine-tune the backbone's head conv (and optionally its last MBConv blocks) jointly with the food head (writes food-top.bin/.json + head.json).",
        discussion: """
        Every training photo (as `train`: DIR/<label>/ plus SOHL box crops) gives --views strong views (whole, mirror, \
        random resized crops of 30–100 % area with colour jitter); the backbone's last MBConv block output \
        (7×7×320) of each is cached in memory (and in --cache). The head conv (320→1280, BN folded, ReLU6), the \
        global average pool and the softmax head are then trained jointly (Adam, weight decay toward the ImageNet \
        conv, label smoothing), starting from the ImageNet conv and HEAD, with early stopping on the photos the \
        linear head held out (15 %, same seed). Writes OUT/food-top.bin, OUT/food-top.json, OUT/head.json and adds \
        `fine_tune` to OUT/training-report.json.

        Examples:
          foodmoment dev finetune --data ../shared/data/images/train --detection ../shared/data/detection/sohl.jsonl \\
              --threads 2 --cache /tmp/blocks.bin
        """
    )

    @Option(help: "Folder with one subfolder of photos per label.") var data: String
    @Option(help: "Detection JSON-lines files whose SOHL boxes add plate classes.") var detection: [String] = []
    @Option(help: "The linear head to start from (its classes, standardisation and weights).") var head: String = "models/food-head/head.json"
    @Option(help: "Output folder.") var out: String = "models/food-head"
    @Option(help: "Strong views per photo.") var views = 4
    @Option(help: "Threads (extraction and training).") var threads = ProcessInfo.processInfo.activeProcessorCount
    @Option(help: "Maximum epochs.") var epochs = 20
    @Option(help: "Views per Adam step.") var batchSize = 64
    @Option(help: "Adam step size of the head conv.") var learningRate: Float = 1e-4
    @Option(help: "Adam step size of the softmax head.") var headLearningRate: Float = 1e-4
    @Option(help: "L2 pull of the head conv toward the ImageNet weights.") var weightDecay: Float = 1e-3
    @Option(help: "L2 on the softmax head's weights.") var headL2: Float = 0.01
    @Option(help: "Label smoothing (0.1 made the held-out loss worse).") var labelSmoothing: Float = 0
    @Option(help: "Epochs without a better held-out loss before stopping.") var patience = 4
    @Option(help: "Pool each training view over a random window of at least this many cells per side (7 = whole grid).") var minWindowCells = 2
    @Option(help: "Random seed (augmentation, split, training); the split matches `train --seed`.") var seed: UInt64 = 1
    @Option(help: "Block-output cache (a /tmp file, ~1.5 GB): reused when it matches, written otherwise.") var cache: String?
    @Option(help: "Held-out views that choose the epoch: whole (each held-out photo as analyze sees it) or all (its strong views too).") var holdOutViews = "whole"
    @Option(help: "Also fine-tune this many of the backbone's last MBConv blocks (0 = the head conv only; at most 4, the blocks at 7×7).") var blocks = 0
    @Option(help: "Adam step size of the fine-tuned blocks.") var blockLearningRate: Float = 3e-5
    @Flag(help: "Measure the starting point and the split, do not train or write anything.") var dryRun = false

    func validate() throws {
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: data, isDirectory: &isDir), isDir.boolValue else {
            throw ValidationError("--data must be a folder of <label>/ subfolders: \(data)")
        }
        for d in detection where !FileManager.default.fileExists(atPath: d) { throw ValidationError("no such file: \(d)") }
        guard FileManager.default.fileExists(atPath: head) else { throw ValidationError("no head at \(head); run `foodmoment dev train` first") }
        if views < 1 || threads < 1 || epochs < 1 || batchSize < 1 { throw ValidationError("--views, --threads, --epochs and --batch-size must be at least 1") }
        if !["whole", "all"].contains(holdOutViews) { throw ValidationError("--hold-out-views must be whole or all") }
        if !(0...4).contains(blocks) { throw ValidationError("--blocks must be 0…4 (the stride-1 blocks at the 7×7 grid)") }
    }

    func run() async throws {
        var samples = try TrainingSet.folders(data)
        for file in detection { samples += TrainingSet.detectionCrops(try DetectionRecord.load(jsonl: file)) }
        // finetune starts from a linear head (train's output); starting from a fine-tuned one would fit the same
        // photos twice.
        let linear = try SoftmaxHead.load(from: head)
        if linear.fineTuned == true {
            throw ValidationError("\(head) was written by an earlier finetune; run `foodmoment dev train` first to get the linear head")
        }
        let classes = Array(Set(samples.map(\.label))).sorted()
        guard classes == linear.classes else {
            throw ValidationError("the training data has \(classes.count) labels, the head \(head) \(linear.classes.count); train the head on the same data first")
        }
        let index = Dictionary(uniqueKeysWithValues: classes.enumerated().map { ($1, $0) })
        let photoLabels = samples.map { index[$0.label]! }
        let modelDir = ProcessSettings.modelsDirectory + "/efficientnet-lite0"
        let imageNetTop = try FoodTop.imageNet(modelDirectory: modelDir, blocks: blocks)

        var set: BlockOutputSet
        let tapBlock = imageNetTop.tapBlock, tapChannels = imageNetTop.inputChannels
        if let cache, let cached = BlockOutputSet.read(from: cache), cached.count == samples.count * views, cached.channels == tapChannels,
           cached.tag == UInt32(tapBlock) {
            set = cached
            Output.note("finetune: \(set.count) block outputs from the cache \(cache)")
        } else {
            Output.note("finetune: \(samples.count) photos/crops, \(classes.count) labels, \(views) views each, \(threads) threads")
            let extractor = try EmbeddingExtractor(modelDirectory: modelDir, threads: threads, inference: ProcessSettings.inference())
            let start = ContinuousClock.now
            let progress = ProgressLine(total: samples.count)
            let (extracted, failures) = extractor.blockOutputs(samples, labels: photoLabels, views: views, seed: seed, tapBlock: tapBlock) { done, total in
                progress.advance("\(done)/\(total)")
            }
            progress.finish()
            for f in failures { Output.note("note: skipped \(f.path): \(f.reason)") }
            set = extracted
            set.tag = UInt32(tapBlock)
            Output.note(String(format: "finetune: extracted %d views in %.0f s", set.count,
                               (ContinuousClock.now - start).milliseconds / 1000))
            if let cache { try set.write(to: cache) }
        }
        // The photos `train` held out (same seed, fraction and groups) stay held out here.
        let held = HoldOutSplit.photos(labels: photoLabels, classes: classes.count, fraction: 0.15, seed: seed,
                                       groups: TrainingSet.holdOutGroups(samples))
        var trainViews: [Int] = [], holdViews: [Int] = []
        for s in samples.indices {
            for v in 0..<views where set.labels[s * views + v] >= 0 {
                // View 0 is the whole photo (`strongViews`).
                if held.contains(s) { if v == 0 || holdOutViews == "all" { holdViews.append(s * views + v) } } else { trainViews.append(s * views + v) }
            }
        }
        var options = TopFineTuneOptions()
        options.maxEpochs = dryRun ? 0 : epochs
        options.batchSize = batchSize
        options.learningRate = learningRate
        options.headLearningRate = headLearningRate
        options.blockLearningRate = blockLearningRate
        options.weightDecay = weightDecay
        options.headL2 = headL2
        options.labelSmoothing = labelSmoothing
        options.patience = patience
        options.minWindowCells = minWindowCells
        options.threads = threads
        options.seed = seed
        Output.note("finetune: \(trainViews.count) training views, \(holdViews.count) held-out views (\(held.count) photos)")
        if dryRun {
            options.maxEpochs = 1
            options.learningRate = 0
            options.headLearningRate = 0
            options.blockLearningRate = 0
        }
        let (top, tunedHead, report) = try TopFineTuner.train(
            set: set, gridWidth: FoodRecognizer.inputSize / 32, train: dryRun ? Array(trainViews.prefix(1)) : trainViews,
            holdOut: holdViews, top: imageNetTop, head: linear, anchor: imageNetTop, options: options
        ) { Output.note($0) }
        print(String(format: "fine-tune: held-out accuracy %.4f → %.4f (loss %.4f → %.4f), best epoch %d of %d",
                     report.initialHoldOutAccuracy, report.holdOutAccuracy, report.initialHoldOutLoss, report.holdOutLoss,
                     report.bestEpoch, report.epochs))
        if dryRun { return }
        guard report.bestEpoch > 0 else {
            print("fine-tuning did not beat the linear head on the held-out views; nothing written")
            return
        }
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        let note = String(format: "foodmoment dev finetune --blocks %d --hold-out-views \(holdOutViews) --views %d --epochs %d --learning-rate %g --block-learning-rate %g --head-learning-rate %g --weight-decay %g --label-smoothing %g --min-window-cells %d --seed %llu; held-out view accuracy %.4f (linear head %.4f)",
                          blocks, views, epochs, learningRate, blockLearningRate, headLearningRate, weightDecay, labelSmoothing, minWindowCells, seed,
                          report.holdOutAccuracy, report.initialHoldOutAccuracy)
        var tuned = tunedHead
        tuned.fineTuned = true
        try tuned.save(to: out + "/head.json")
        try top.save(directory: out, note: note)
        // The fine-tuning figures join the linear head's report.
        let reportPath = out + "/training-report.json"
        var object = (FileManager.default.contents(atPath: reportPath)
            .flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] }) ?? [:]
        object["fine_tune"] = try JSONSerialization.jsonObject(with: Data(try Output.json(report).utf8))
        let data = try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])
        try data.write(to: URL(fileURLWithPath: reportPath))
        print("wrote \(out)/food-top.bin, food-top.json, head.json")
    }
}
