import FoodCore
import Foundation

/// Validated answers on disk, one JSON file per (image, provider, model, prompt version): a re-run sends nothing.
/// Only answers are stored; never a key, never the photo.
public struct LLMCache: Sendable {
    public let directory: String

    public init(directory: String) { self.directory = directory }

    struct Entry: Codable {
        var provider: String
        var model: String
        var promptVersion: String
        var imageSHA256: String
        var foods: [LLMFood]
        enum CodingKeys: String, CodingKey {
            case provider, model, foods
            case promptVersion = "prompt_version", imageSHA256 = "image_sha256"
        }
    }

    public static func imageHash(_ jpeg: [UInt8]) -> String { SHA256.hexDigest(of: jpeg) }

    public static func key(imageSHA256: String, provider: String, model: String, promptVersion: String) -> String {
        SHA256.hexDigest(of: Array("fm-llm-cache-1\n\(provider)\n\(model)\n\(promptVersion)\n\(imageSHA256)".utf8))
    }

    func path(_ key: String) -> String { directory + "/" + key + ".json" }

    public func load(key: String) -> [LLMFood]? {
        guard let data = FileManager.default.contents(atPath: path(key)),
              let entry = try? JSONDecoder().decode(Entry.self, from: data) else { return nil }
        return entry.foods
    }

    /// Best effort: a cache that cannot be written only costs a re-send next time.
    public func store(key: String, foods: [LLMFood], provider: String, model: String, promptVersion: String, imageSHA256: String) {
        let entry = Entry(provider: provider, model: model, promptVersion: promptVersion, imageSHA256: imageSHA256, foods: foods)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let data = try? encoder.encode(entry) else { return }
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try? data.write(to: URL(fileURLWithPath: path(key)), options: .atomic)
    }
}
