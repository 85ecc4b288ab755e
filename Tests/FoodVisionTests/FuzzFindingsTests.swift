import Foundation
import Testing
@testable import FoodVision

/// Regression tests for what the model-manifest and food-head fuzz targets found (README "Tests" lists each).
@Suite struct FoodVisionFuzzFindingsTests {
    func tempDir() throws -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("fv-fuzz-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }

    func write(_ text: String, _ path: String) throws { try Data(text.utf8).write(to: URL(fileURLWithPath: path)) }

    func manifest(tensors: String) -> String {
        #"{"format":"foodmoment-cnn","formatVersion":1,"name":"t","version":"1","architecture":"a","weightsFile":"weights.bin","weightsBytes":4,"weightsSHA256":"x","parameterCount":1,"license":{"name":"x","file":"L","source":"s"},"input":{"height":1,"width":1,"channels":3,"layout":"NHWC","colorOrder":"RGB"},"preprocessing":{"mean":1,"divisor":1,"formula":"f","crop":"c","resize":"r"},"batchNormEpsilon":0.001,"labelsFile":"labels.txt","classCount":3,"tensors":[\#(tensors)]}"#
    }

    func loadModel(_ dir: String) -> FoodVisionError? {
        do throws(FoodVisionError) { _ = try EfficientNetLite0(modelDirectory: dir); return nil } catch { return error }
    }

    /// A shape whose element count overflows `Int` trapped in `reduce(1, *)`; now a manifest mismatch naming it.
    @Test func manifestShapeThatOverflowsIsAMismatch() throws {
        let dir = try tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try write(manifest(tensors: #"{"name":"a","shape":[4294967296,4294967296],"dtype":"f32","offset":0,"count":0}"#), dir + "/manifest.json")
        try write("abcd", dir + "/weights.bin")
        guard case .manifestMismatch(_, let reason)? = loadModel(dir) else { Issue.record("expected a manifest mismatch"); return }
        #expect(reason.contains("too many values"), "\(reason)")
        // count * 4 overflowing (count matches the shape) is caught too.
        try write(manifest(tensors: #"{"name":"a","shape":[4611686018427387904],"dtype":"f32","offset":0,"count":4611686018427387904}"#), dir + "/manifest.json")
        guard case .manifestMismatch(_, let reason2)? = loadModel(dir) else { Issue.record("expected a manifest mismatch"); return }
        #expect(reason2.contains("beyond any possible file"), "\(reason2)")
    }

    /// Safetensors headers: an overflowing or negative shape is an invalid format, not a trap.
    @Test func safetensorsShapeThatOverflowsIsInvalid() throws {
        for header in [#"{"a":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,0]}}"#,
                       #"{"a":{"dtype":"F64","shape":[2305843009213693952],"data_offsets":[0,0]}}"#,
                       #"{"a":{"dtype":"F32","shape":[-1,-4],"data_offsets":[0,16]}}"#] {
            var bytes = Data()
            var length = UInt64(header.utf8.count).littleEndian
            withUnsafeBytes(of: &length) { bytes.append(contentsOf: $0) }
            bytes.append(contentsOf: Array(header.utf8) + [UInt8](repeating: 0, count: 16))
            do throws(FoodVisionError) {
                _ = try SafetensorsFile(data: bytes, path: "x.safetensors")
                Issue.record("accepted \(header)")
            } catch {
                guard case .invalidFormat(_, let reason) = error else { Issue.record("\(error)"); continue }
                #expect(reason.contains("negative dimension or too many elements"), "\(reason)")
            }
        }
    }

    /// A head whose class count times dimension overflows trapped in `load`; now an invalid format.
    @Test func headWhoseSizeOverflowsIsInvalid() throws {
        let dir = try tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try write(#"{"classes":["a","b","c"],"dimension":6148914691236517206,"weights":[],"bias":[0,0,0],"featureMean":[],"featureScale":[]}"#, dir + "/head.json")
        #expect(throws: FoodVisionError.self) { try SoftmaxHead.load(from: dir + "/head.json") }
    }

    /// Empty head, matcher, manifest and safetensors files are refused unread (Foundation leaked its 4 KiB read
    /// buffer on every attempt to read an empty file; the leak showed in the fuzzers, the message here).
    @Test func emptyFilesAreRefusedWithAClearMessage() throws {
        let dir = try tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(FileManager.default.createFile(atPath: dir + "/empty.json", contents: Data()))
        func expectRefused(_ what: String, _ load: () throws -> Void) {
            do { try load(); Issue.record("\(what): an empty file loaded") } catch {
                #expect("\(error)".contains("empty") || "\(error)".contains("0 bytes"), "\(what): \(error)")
            }
        }
        expectRefused("head") { _ = try SoftmaxHead.load(from: dir + "/empty.json") }
        expectRefused("matcher") { _ = try PrototypeMatcher.load(from: dir + "/empty.json") }
        expectRefused("safetensors") { _ = try SafetensorsFile(path: dir + "/empty.json") }
        #expect(FileManager.default.createFile(atPath: dir + "/manifest.json", contents: Data()))
        guard case .invalidFormat(_, let reason)? = loadModel(dir) else { Issue.record("expected invalid format"); return }
        #expect(reason.contains("empty"))
    }
}
