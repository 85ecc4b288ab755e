internal import FoodCore
public import Foundation

/// A photo file read once: its bytes (decoded from memory afterwards), its content hash and its modification
/// time. The batch reads every file exactly once.
public struct PhotoFile: Sendable {
    public var path: String
    public var bytes: [UInt8]
    /// SHA-256 of the bytes, lowercase hex: the photo's identity (a renamed or copied photo keeps it).
    public var sha256: String
    public var modified: Date

    /// Bytes that come from elsewhere than a file (an upload): `name` stands in for the path in results and errors.
    public init(name: String, bytes: [UInt8], modified: Date = Date()) {
        self.init(path: name, bytes: bytes, sha256: ContentDigest.sha256Hex(bytes), modified: modified)
    }

    init(path: String, bytes: [UInt8], sha256: String, modified: Date) {
        self.path = path; self.bytes = bytes; self.sha256 = sha256; self.modified = modified
    }

    /// Reads the file (refusing more than `maxBytes`, non-regular files and unreadable paths) and hashes it.
    public static func read(atPath path: String, maxBytes: Int) throws(ImageCodecError) -> PhotoFile {
        let bytes = try ImageDecoder.readFile(atPath: path, maxBytes: maxBytes)
        var modified = Date(timeIntervalSince1970: 0)
        var st = stat()
        if stat(path, &st) == 0 {
            modified = Date(timeIntervalSince1970: Double(st.st_mtim.tv_sec) + Double(st.st_mtim.tv_nsec) / 1e9)
        }
        return PhotoFile(path: path, bytes: bytes, sha256: ContentDigest.sha256Hex(bytes), modified: modified)
    }
}

/// A photo's identity: SHA-256 of its bytes, lowercase hex (FoodCore's SHA256, libcrypto).
public enum ContentDigest {
    public static func sha256Hex(_ bytes: [UInt8]) -> String { SHA256.hexDigest(of: bytes) }
}
