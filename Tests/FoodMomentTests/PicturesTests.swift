import FoodCore
import FoodVision
import FoodMomentTestSupport
import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import ImageCodecs
import Nutrition
import FoodMoment
import FoodRecognition
import Rendering
import Testing

/// A stage-1 result for `file` with the given foods, as the analyzer writes it (JSON), so the boxes are exact.
func photoResult(_ file: String, foods: [(label: String, box: NormalizedBox, grams: Double, kcal: Double?)]) throws -> PhotoResult {
    let items = foods.map { f -> [String: Any] in
        var item: [String: Any] = [
            "label": f.label, "name": f.label.capitalized, "name_zh": "米饭", "emoji": "🍚", "color": "#D62828",
            "confidence": 0.9, "box": ["x": f.box.x, "y": f.box.y, "w": f.box.w, "h": f.box.h],
            "grams": f.grams, "grams_source": "default_portion", "source": "model",
        ]
        if let kcal = f.kcal {
            // Nutrition is written flat, beside the detection's fields.
            item.merge(["food_id": "sr:1", "food_name": f.label, "provenance": "test", "kcal": kcal]) { a, _ in a }
        }
        return item
    }
    let json = try JSONSerialization.data(withJSONObject: ["file": file, "foods": items])
    return try JSONDecoder().decode(PhotoResult.self, from: json)
}

func elapsedMilliseconds(_ body: () throws -> Void) rethrows -> Double {
    let start = ContinuousClock.now
    try body()
    return (ContinuousClock.now - start).milliseconds
}

@Suite("Pictures: annotated photos and reports", .serialized)
struct PicturesTests {
    let red = RGBColor(r: 0xD6, g: 0x28, b: 0x28)

    @Test func annotatesASampleAndTheJPEGDecodesAgain() throws {
        let path = TestPaths.repoRoot + "/samples/thali-rice-curry-roti.jpg"
        let box = NormalizedBox(x: 0.2, y: 0.3, w: 0.5, h: 0.4)
        let result = try photoResult(path, foods: [("rice", box, 180, 234)])
        let out = try PhotoAnnotator().annotate(result)
        let original = try ImageDecoder.decodeFile(atPath: path).image
        #expect(out.width == original.width && out.height == original.height)   // 289x320: under 1600, kept
        let again = try ImageDecoder.decode(out.jpeg).image
        #expect(again.width == original.width && again.height == original.height)
        // The left edge of the box, mid-height, is red after a JPEG round trip (within compression error).
        let l = out.layout[0]
        #expect(l.box == PixelRect(box, imageWidth: out.width, imageHeight: out.height))
        let p = again[l.box.x, l.box.y + l.box.height / 2]
        #expect(abs(Int(p.r) - Int(red.r)) < 40 && abs(Int(p.g) - Int(red.g)) < 40 && abs(Int(p.b) - Int(red.b)) < 40, "\(p)")
        #expect(out.layout[0].lines == ["🍚 Rice · 米饭 180 g · 234 kcal"])
        try Data(out.jpeg).write(to: URL(fileURLWithPath: NSTemporaryDirectory() + "fm-annotated-sample.jpg"))
    }

    /// The batch hands pictures the bytes it hashed: a file replaced (here: deleted) after analysis is still drawn
    /// from what was analysed, never from whatever the path holds now.
    @Test func theBatchDrawsTheBytesItHashed() async throws {
        let recognizer = try #require(bundledRecognizer)
        let dir = TestPaths.makeTempDirectory("bytes")
        let path = dir + "/meal.jpg"
        try Data(TestPaths.read(TestPaths.repoRoot + "/samples/thali-2.jpg")).write(to: URL(fileURLWithPath: path))
        let runner = BatchRunner(analyzers: [MealAnalyzer(decoder: PhotoDecoder(), recognizer: recognizer, nutrition: nil)],
                                 decoder: PhotoDecoder(), journal: nil, options: .init(settings: "t"))
        runner.output = { photo in
            // By now the file is gone: only the batch's own bytes can be drawn.
            try? FileManager.default.removeItem(atPath: photo.result.file)
            guard let bytes = photo.bytes, ContentDigest.sha256Hex(bytes) == photo.result.photoHash else {
                return .failure(PhotoError(kind: PhotoErrorKind(rawValue: "test"), message: "the output step got no bytes, or other bytes"))
            }
            do { return .success("\(try PhotoAnnotator().annotate(photo.result, bytes: bytes).jpeg.count)") } catch {
                return .failure(PhotoError(kind: .annotateFailed, message: "\(error)"))
            }
        }
        var outputs: [Result<String, PhotoError>?] = []
        var results: [PhotoResult] = []
        _ = await runner.run(paths: [path], workers: 1, onItem: { outputs.append($0.output); results.append($0.result) })
        guard case .success(let size)? = outputs.first ?? nil else { Issue.record("\(outputs)"); return }
        #expect((Int(size) ?? 0) > 1000)
        #expect(!FileManager.default.fileExists(atPath: path))
        // Without the bytes the same result cannot be drawn any more.
        let result = try #require(results.first)
        #expect(throws: PicturesError.self) { try PhotoAnnotator().annotate(result) }
    }

    @Test(arguments: ["thali-2.jpg", "thali-rice-curry-roti.jpg"])
    func realAnalysisDrawsEveryFood(_ sample: String) throws {
        let recognizer = try #require(bundledRecognizer)
        let db = try? NutritionDatabase.load(directory: URL(fileURLWithPath: TestPaths.repoRoot + "/nutrition-db"))
        let analyzer = MealAnalyzer(decoder: PhotoDecoder(), recognizer: recognizer, nutrition: db)
        let result = analyzer.analyze(path: TestPaths.repoRoot + "/samples/" + sample)
        let foods = try #require(result.foods)
        #expect(!foods.isEmpty)
        let out = try PhotoAnnotator().annotate(result)
        #expect(out.layout.count == foods.count)
        let bounds = PixelRect(x: 0, y: 0, width: out.width, height: out.height)
        for (f, l) in zip(foods, out.layout) {
            #expect(bounds.contains(l.chip))
            #expect(l.lines.joined(separator: " ").contains(f.name) || l.lines[0].hasSuffix("…"))
        }
        try Data(out.jpeg).write(to: URL(fileURLWithPath: NSTemporaryDirectory() + "fm-annotated-\(sample)"))
    }

    @Test func rotatedPhoneShotComesOutUpright() throws {
        // Stored 305x320 with EXIF orientation 6: upright it is 320 wide, 305 tall.
        let path = TestPaths.repoRoot + "/samples/thali-phone-rotated.jpg"
        let out = try PhotoAnnotator().annotate(try photoResult(path, foods: [("roti", NormalizedBox(x: 0.1, y: 0.1, w: 0.3, h: 0.3), 40, nil)]))
        let again = try ImageDecoder.decode(out.jpeg).image
        #expect(again.width == 320 && again.height == 305)
        #expect(out.layout[0].lines == ["🍚 Roti · 米饭 40 g"])
    }

    @Test func largePhotosAreDecodedAtADCTScaleUnderTheLimit() throws {
        // A 1000x750 JPEG with maxSide 400: 3/8 → 375x282 (≤ 400); no resize needed.
        let dir = TestPaths.makeTempDirectory("pictures")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let photo = GeneratedPhotos.blob(seed: 7).resized(width: 1000, height: 750)
        let path = dir + "/big.jpg"
        try Data(try ImageEncoder.jpeg(photo)).write(to: URL(fileURLWithPath: path))
        let out = try PhotoAnnotator(maxSide: 400).annotate(try photoResult(path, foods: [("rice", .whole, 100, 130)]))
        #expect(out.width == 375 && out.height == 282)
        // PNG: decoded whole, then resized to the limit.
        let png = dir + "/big.png"
        try Data(try ImageEncoder.png(photo)).write(to: URL(fileURLWithPath: png))
        let outPNG = try PhotoAnnotator(maxSide: 400).annotate(try photoResult(png, foods: []))
        #expect(outPNG.width == 400 && outPNG.height == 300)
    }

    @Test func failuresNameTheFile() throws {
        var failed = PhotoResult(file: "/nowhere/x.jpg")
        failed.error = PhotoError(kind: .truncated, message: "truncated JPEG data")
        #expect(throws: PicturesError.analysisFailed(file: "/nowhere/x.jpg", message: "truncated JPEG data")) {
            try PhotoAnnotator().annotate(failed)
        }
        do {
            _ = try PhotoAnnotator().annotate(PhotoResult(file: "/nowhere/missing.jpg"))
            Issue.record("a missing file must throw")
        } catch {
            #expect(error.description.contains("/nowhere/missing.jpg"))
        }
    }

    @Test func reportEmbedsThumbnailsAndListsUnreadablePhotos() throws {
        let t = Date(timeIntervalSince1970: 1_714_990_000)
        let samples = ["apple.jpg", "banana.jpg", "thali-phone-rotated.jpg"]
        var meals = samples.enumerated().map { i, name in
            MealRecord(type: .lunch, time: t.addingTimeInterval(Double(i) * 86_400), utcOffsetSeconds: 0, title: name,
                       foods: [MealFood(label: "apple", name: "Apple", grams: 182, gramsSource: .defaultPortion, source: .model,
                                        per100g: Macros(kcal: 52, proteinG: 0.3, carbsG: 14, fatG: 0.2))],
                       photos: [MealPhoto(hash: "h\(i)", path: TestPaths.repoRoot + "/samples/" + name, takenAt: t, timeSource: .exif)],
                       createdAt: t)
        }
        meals[2].photos.append(MealPhoto(hash: "gone", path: "/nowhere/gone.jpg", takenAt: t, timeSource: .exif))
        let builder = ReportBuilder()
        let thumb = try ImageDecoder.decode(try builder.thumbnail(path: meals[2].photos[0].path)).image
        #expect(thumb.width == 160 && thumb.height == 160)
        let (html, warnings) = builder.build(title: "Three days", meals: meals, goals: Goals(dailyKcal: 2000),
                                             timeZone: TimeZone(identifier: "UTC")!)
        #expect(warnings.count == 1 && warnings[0].hasPrefix("/nowhere/gone.jpg"))
        #expect(html.components(separatedBy: "data:image/jpeg;base64,").count == 4)
        let parser = XMLParser(data: Data(html.utf8))
        #expect(parser.parse())
        #expect(html.components(separatedBy: "<rect class=\"bar").count == 4)
        try html.write(toFile: NSTemporaryDirectory() + "fm-report-sample.html", atomically: true, encoding: .utf8)
    }

    /// Prints the time to annotate a 12 MP photo and to build a 100-meal report (no thresholds: a figure for the README).
    @Test func benchmarkFigures() throws {
        let bench = TestPaths.sharedData + "/bench/bench_12mp_3.jpg"
        guard FileManager.default.fileExists(atPath: bench) else { return }
        let result = try photoResult(bench, foods: [
            ("rice", NormalizedBox(x: 0.1, y: 0.1, w: 0.4, h: 0.4), 180, 234),
            ("curry", NormalizedBox(x: 0.45, y: 0.35, w: 0.45, h: 0.5), 250, 310),
            ("roti", NormalizedBox(x: 0.05, y: 0.6, w: 0.3, h: 0.3), 40, 120),
        ])
        let annotator = PhotoAnnotator()
        _ = try annotator.annotate(result)
        var out: AnnotatedPhoto?
        let toFit = try (0..<3).map { _ in try elapsedMilliseconds { out = try annotator.annotate(result) } }.min()!
        // Full resolution: decode 12 MP, draw on all of it, encode.
        let full = PhotoAnnotator(maxSide: 100_000)
        var fullOut: AnnotatedPhoto?
        let fullMs = try elapsedMilliseconds { fullOut = try full.annotate(result) }
        var image = try ImageDecoder.decodeFile(atPath: bench).image
        let anns = PhotoAnnotator.annotations(for: result.foods ?? [])
        let drawMs = elapsedMilliseconds { Annotator().annotate(&image, anns) }

        let samples = ["apple.jpg", "banana.jpg", "orange.jpg", "thali-2.jpg", "thali-phone-rotated.jpg", "thali-rice-curry-roti.jpg"]
        let t0 = Date(timeIntervalSince1970: 1_714_990_000)
        let meals = (0..<100).map { i in
            MealRecord(type: MealType.allCases[i % 4], time: t0.addingTimeInterval(Double(i) * 6 * 3600), utcOffsetSeconds: 0,
                       title: "Meal \(i)",
                       foods: [MealFood(label: "rice", name: "Rice", grams: 180, gramsSource: .boxArea, source: .model,
                                        per100g: Macros(kcal: 130, proteinG: 2.7, carbsG: 28, fatG: 0.3)),
                               MealFood(label: "curry", name: "Curry", grams: 150, gramsSource: .boxArea, source: .model,
                                        per100g: Macros(kcal: 150, proteinG: 8, carbsG: 10, fatG: 9))],
                       photos: [MealPhoto(hash: "p\(i)", path: TestPaths.repoRoot + "/samples/" + samples[i % samples.count],
                                          takenAt: t0, timeSource: .exif)],
                       createdAt: t0)
        }
        var html = ""
        let reportMs = elapsedMilliseconds { html = ReportBuilder().build(title: "100 meals", meals: meals).html }
        print("""
        pictures bench (debug build; Rendering and ImageCodecs at -O):
          annotate 12 MP photo → \(out!.width)x\(out!.height) JPEG: \(toFit) ms (decode at DCT 3/8 + draw + encode, best of 3)
          annotate 12 MP photo at full size → \(fullOut!.width)x\(fullOut!.height) JPEG: \(fullMs) ms (of which drawing \(drawMs) ms)
          report for 100 meals with 100 thumbnails: \(reportMs) ms, \(html.utf8.count) bytes
        """)
        #expect(out!.width == 1512 && out!.height == 1134)
        try Data(out!.jpeg).write(to: URL(fileURLWithPath: NSTemporaryDirectory() + "fm-annotated-12mp.jpg"))
    }
}

/// The committed models, as `analyze` loads them.
let bundledRecognizer: FoodRecognizer? = {
    let db = try? NutritionDatabase.load(directory: URL(fileURLWithPath: TestPaths.repoRoot + "/nutrition-db"))
    return try? FoodRecognizer.load(modelsDirectory: TestPaths.repoRoot + "/models", userDataDirectory: nil,
                                    portions: MealAnalyzer.portions(from: db))
}()
