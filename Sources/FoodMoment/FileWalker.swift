import FoodRecognition
import ImageCodecs
import Foundation

/// One input the batch will process, or a note about something it skipped.
public enum WalkItem: Sendable, Equatable {
    case photo(path: String)
    /// A file under a folder whose content is not an image (skipped with a note, not an error).
    case skipped(path: String, reason: String)
}

/// Expands files and folders into photo paths: folders recursively, in sorted order, never following a
/// symlink into a folder already visited (no loops).
///
/// Inside a folder a file is a photo when it has a photo's name (`imageExtensions`, any case) or, whatever its name,
/// starts like an image; a damaged `IMG_0001.JPG` is therefore a photo that fails with its reason, never a file that
/// silently drops out of the results. Other files are `skipped` with the reason, and every output lists them.
public struct FileWalker: Sendable {
    /// Names that promise a photo: such a file is always analysed (and fails loudly when its content is not one).
    public static let imageExtensions: Set<String> = ["jpg", "jpeg", "jpe", "png", "heic", "heif", "webp"]

    public init() {}

    /// Paths named explicitly are always returned as photos (a missing or bad file named by the user is reported as
    /// a failed photo); files found inside folders are photos by name or content, the rest are skipped.
    public func expand(_ paths: [String]) -> [WalkItem] {
        var items: [WalkItem] = []
        var visited = Set<String>()
        for path in paths {
            var isDir: ObjCBool = false
            if FileManager.default.fileExists(atPath: path, isDirectory: &isDir), isDir.boolValue {
                walk(directory: path, into: &items, visited: &visited)
            } else {
                items.append(.photo(path: path))
            }
        }
        return items
    }

    private func walk(directory: String, into items: inout [WalkItem], visited: inout Set<String>) {
        let real = URL(fileURLWithPath: directory).resolvingSymlinksInPath().path
        guard visited.insert(real).inserted else { return }
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else {
            items.append(.skipped(path: directory, reason: "folder cannot be read"))
            return
        }
        for name in names.sorted() where !name.hasPrefix(".") {
            let path = directory.hasSuffix("/") ? directory + name : directory + "/" + name
            switch FileKind(path: path) {
            case nil:
                items.append(.skipped(path: path, reason: "broken link"))
            case .folder?:
                walk(directory: path, into: &items, visited: &visited)
            case .other(let reason)?:
                // A named pipe, socket or device: opening or reading one can wait forever, and it is no photo.
                items.append(.skipped(path: path, reason: reason))
            case .regular?:
                if !Self.hasImageName(path), let reason = Self.notAnImageReason(path) {
                    items.append(.skipped(path: path, reason: reason))
                } else {
                    items.append(.photo(path: path))
                }
            }
        }
    }

    static func hasImageName(_ path: String) -> Bool {
        imageExtensions.contains((path as NSString).pathExtension.lowercased())
    }

    /// `nil` when the file starts like an image (supported or not: unsupported formats are reported as errors
    /// so the user learns about them); otherwise why it is skipped.
    static func notAnImageReason(_ path: String) -> String? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return "cannot be opened" }
        defer { try? handle.close() }
        let head = (try? handle.read(upToCount: 32)) ?? Data()
        if head.isEmpty { return "empty file" }
        return ImageFormat.sniff(Array(head)) == nil ? "not an image (content is not JPEG/PNG/HEIC/WebP/GIF/BMP/TIFF)" : nil
    }
}
