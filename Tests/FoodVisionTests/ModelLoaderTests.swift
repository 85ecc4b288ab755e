import Foundation
import Testing
@testable import FoodVision

/// Each test works on a copy of the committed model in a fresh temporary directory.
@Suite struct ModelLoaderTests {
    func copyOfModel() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("fv-model-\(UUID().uuidString)")
        try FileManager.default.copyItem(at: TestPaths.model, to: dir)
        return dir
    }

    func load(_ dir: URL) -> Result<EfficientNetLite0, FoodVisionError> {
        do throws(FoodVisionError) { return .success(try EfficientNetLite0(modelDirectory: dir.path)) } catch { return .failure(error) }
    }

    @Test func corruptByteIsAChecksumMismatch() throws {
        let dir = try copyOfModel()
        defer { try? FileManager.default.removeItem(at: dir) }
        let weights = dir.appendingPathComponent("weights.bin")
        var data = try Data(contentsOf: weights)
        data[1_000_003] ^= 0x01
        try data.write(to: weights)
        guard case .failure(let error) = load(dir), case .checksumMismatch(let path, _, _) = error else {
            Issue.record("expected a checksum mismatch"); return
        }
        #expect(path.hasSuffix("weights.bin"))
        #expect(error.description.contains("corrupt"))
    }

    @Test(arguments: ["../weights.bin", "/etc/passwd", ".hidden", "sub/weights.bin"])
    func manifestFileNamesMustStayInTheModelFolder(name: String) throws {
        let dir = try copyOfModel()
        defer { try? FileManager.default.removeItem(at: dir) }
        let url = dir.appendingPathComponent("manifest.json")
        var object = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        object["weightsFile"] = name
        try JSONSerialization.data(withJSONObject: object).write(to: url)
        guard case .failure(.manifestMismatch(_, let reason)) = load(dir) else { Issue.record("expected a manifest mismatch for \(name)"); return }
        #expect(reason.contains("plain file name"))
    }

    @Test func truncatedWeightsAreReported() throws {
        let dir = try copyOfModel()
        defer { try? FileManager.default.removeItem(at: dir) }
        let weights = dir.appendingPathComponent("weights.bin")
        let data = try Data(contentsOf: weights)
        try data.prefix(data.count - 1000).write(to: weights)
        guard case .failure(.truncatedWeights(_, let expected, let actual)) = load(dir) else {
            Issue.record("expected truncated weights"); return
        }
        #expect(expected == data.count && actual == data.count - 1000)
    }

    @Test func editedShapeIsAManifestMismatch() throws {
        let dir = try copyOfModel()
        defer { try? FileManager.default.removeItem(at: dir) }
        let manifestURL = dir.appendingPathComponent("manifest.json")
        var manifest = try JSONDecoder().decode(ModelManifest.self, from: Data(contentsOf: manifestURL))
        let i = try #require(manifest.tensors.firstIndex { $0.name == "_blocks.3._depthwise_conv.weight" })
        manifest.tensors[i].shape = [144, 1, 3, 3]  // was [144, 1, 5, 5]
        try JSONEncoder().encode(manifest).write(to: manifestURL)
        guard case .failure(.manifestMismatch(_, let reason)) = load(dir) else { Issue.record("expected a mismatch"); return }
        #expect(reason.contains("_blocks.3._depthwise_conv.weight"))
    }

    @Test func consistentButWrongShapeIsAManifestMismatch() throws {
        // Shape and count edited together (so the table is self-consistent) still disagree with the network.
        let dir = try copyOfModel()
        defer { try? FileManager.default.removeItem(at: dir) }
        let manifestURL = dir.appendingPathComponent("manifest.json")
        var manifest = try JSONDecoder().decode(ModelManifest.self, from: Data(contentsOf: manifestURL))
        let i = try #require(manifest.tensors.firstIndex { $0.name == "_conv_stem.weight" })
        manifest.tensors[i].shape = [3, 32, 3, 3]
        try JSONEncoder().encode(manifest).write(to: manifestURL)
        guard case .failure(.manifestMismatch(_, let reason)) = load(dir) else { Issue.record("expected a mismatch"); return }
        #expect(reason.contains("_conv_stem.weight"))
    }

    @Test(arguments: ["manifest.json", "weights.bin", "imagenet_labels_1000.txt"])
    func missingFileIsNamed(_ file: String) throws {
        let dir = try copyOfModel()
        defer { try? FileManager.default.removeItem(at: dir) }
        try FileManager.default.removeItem(at: dir.appendingPathComponent(file))
        guard case .failure(.missingFile(let path)) = load(dir) else { Issue.record("expected missing \(file)"); return }
        #expect(path.hasSuffix(file))
    }

    @Test(.enabled(if: TestPaths.hasSafetensors, "shared/data/weights is not beside the repository"))
    func converterReproducesTheCommittedModel() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("fv-convert-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        let manifest = try ModelConverter.convertEfficientNetLite(
            safetensors: TestPaths.weights.appendingPathComponent("efficientnet_lite0.safetensors").path, outDirectory: dir.path)
        let committed = try JSONDecoder().decode(ModelManifest.self,
                                                 from: Data(contentsOf: TestPaths.model.appendingPathComponent("manifest.json")))
        #expect(manifest == committed)
        #expect(manifest.tensors.count == 247 && manifest.parameterCount == 4_694_024)
        #expect(try Data(contentsOf: dir.appendingPathComponent("weights.bin")) ==
                Data(contentsOf: TestPaths.model.appendingPathComponent("weights.bin")))
    }

    @Test func truncatedSafetensorsIsRejected() throws {
        let src = FileManager.default.temporaryDirectory.appendingPathComponent("fv-st-\(UUID().uuidString).safetensors")
        defer { try? FileManager.default.removeItem(at: src) }
        var header = Data("{\"a\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]}}".utf8)
        var file = Data()
        var n = UInt64(header.count)
        withUnsafeBytes(of: &n) { file.append(contentsOf: $0) }
        file.append(header)
        file.append(Data(count: 8))  // 8 of the 16 data bytes
        try file.write(to: src)
        #expect(throws: FoodVisionError.self) { try SafetensorsFile(path: src.path) }
        header = Data()
        _ = header
    }
}
