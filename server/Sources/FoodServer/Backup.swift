import Foundation
import GRDB

/// `foodmoment serve backup` / `restore`: the server's data folder as one archive (POSIX ustar), taken while the server
/// runs. Every SQLite database (accounts, each user's diary) goes in as an online-backup snapshot — SQLite's backup API,
/// consistent even with writes in flight — and every other file (kept photos, taught foods, the token secret) as it is;
/// WAL and shared-memory files are left out (each snapshot is whole without them). A write acknowledged before the
/// backup started is in it. With PostgreSQL the accounts and diaries live there: back them up with `pg_dump`; this
/// archive then holds the photos and taught foods.
public enum ServerBackup {
    public struct Summary: Sendable, Equatable {
        /// SQLite databases snapshotted (written) or restored.
        public var databases = 0
        /// Other files.
        public var files = 0
        public var bytes: Int64 = 0
    }

    public enum Failure: Error, CustomStringConvertible {
        case notADataFolder(String)
        case targetNotEmpty(String, Int)
        case unreadableArchive(String)
        case unsafeName(String)

        public var description: String {
            switch self {
            case .notADataFolder(let p): "\(p) is not a server data folder (no accounts.sqlite, no users/): give the folder `serve --data` uses"
            case .targetNotEmpty(let p, let n): "\(p) is not empty (\(n) entries): restore into a new or empty folder, then start the server on it"
            case .unreadableArchive(let why): "this is not a FoodMoment server backup: \(why)"
            case .unsafeName(let name): "the archive names a path outside the data folder (\(name.prefix(120))): refused"
            }
        }
    }

    /// Snapshots `dataDirectory` into `file` (written next to it first, then renamed, so a failed backup leaves no
    /// half file under the name asked for).
    public static func write(dataDirectory: String, to file: String) throws -> Summary {
        let root = URL(fileURLWithPath: dataDirectory).standardizedFileURL.path
        let fm = FileManager.default
        guard fm.fileExists(atPath: root + "/accounts.sqlite") || fm.fileExists(atPath: root + "/users") else {
            throw Failure.notADataFolder(dataDirectory)
        }
        let partial = file + ".partial"
        fm.createFile(atPath: partial, contents: nil, attributes: [.posixPermissions: 0o600])
        guard let out = FileHandle(forWritingAtPath: partial) else { throw CocoaError(.fileWriteNoPermission) }
        var summary = Summary()
        let scratch = fm.temporaryDirectory.appendingPathComponent("foodmoment-backup-\(UUID().uuidString)").path
        try fm.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        defer { try? fm.removeItem(atPath: scratch) }
        do {
            // Accounts first: a user created after this point may appear with a diary and no account, never the reverse.
            let names = (fm.enumerator(atPath: root)?.allObjects as? [String] ?? [])
                .sorted { ($0 == "accounts.sqlite" ? 0 : 1, $0) < ($1 == "accounts.sqlite" ? 0 : 1, $1) }
            for name in names {
                let path = root + "/" + name
                var isDir: ObjCBool = false
                guard fm.fileExists(atPath: path, isDirectory: &isDir), !isDir.boolValue else { continue }
                if name.hasSuffix("-wal") || name.hasSuffix("-shm") || name.hasSuffix("-journal") || name.hasSuffix(".partial") { continue }
                if name.hasSuffix(".sqlite") {
                    let copy = scratch + "/snapshot.sqlite"
                    try? fm.removeItem(atPath: copy)
                    try snapshot(path, to: copy)
                    summary.bytes += try append(name, contentsOf: copy, to: out)
                    summary.databases += 1
                } else {
                    // A file deleted between the listing and now (a photo of an account being deleted) is skipped.
                    guard fm.fileExists(atPath: path) else { continue }
                    summary.bytes += try append(name, contentsOf: path, to: out)
                    summary.files += 1
                }
            }
            out.write(Data(count: 1024))   // the end: two empty blocks
            try out.synchronize()
            try out.close()
        } catch {
            try? out.close()
            try? fm.removeItem(atPath: partial)
            throw error
        }
        if fm.fileExists(atPath: file) { try fm.removeItem(atPath: file) }
        try fm.moveItem(atPath: partial, toPath: file)
        return summary
    }

    /// SQLite's online backup of the database at `path` into a new file: a consistent snapshot while others write.
    static func snapshot(_ path: String, to copy: String) throws {
        var config = Configuration()
        config.busyMode = .timeout(10)
        let source = try DatabaseQueue(path: path, configuration: config)
        let target = try DatabaseQueue(path: copy)
        try source.backup(to: target)
        try target.close()
        try source.close()
    }

    /// Unpacks `file` into `dataDirectory`, which must be new or empty; the server can then start on it.
    public static func restore(from file: String, into dataDirectory: String) throws -> Summary {
        let fm = FileManager.default
        if fm.fileExists(atPath: dataDirectory) {
            let entries = try fm.contentsOfDirectory(atPath: dataDirectory)
            guard entries.isEmpty else { throw Failure.targetNotEmpty(dataDirectory, entries.count) }
        }
        try fm.createDirectory(atPath: dataDirectory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        guard let input = FileHandle(forReadingAtPath: file) else { throw Failure.unreadableArchive("\(file) cannot be read") }
        defer { try? input.close() }
        var summary = Summary()
        var sawAccounts = false
        while true {
            let header = Data(try input.read(upToCount: 512) ?? Data())   // indices from 0
            guard header.count == 512 else { throw Failure.unreadableArchive("it ends in the middle of an entry") }
            if header.allSatisfy({ $0 == 0 }) { break }
            guard header[257..<262].elementsEqual(Array("ustar".utf8)) else { throw Failure.unreadableArchive("an entry is not a ustar header") }
            let name = (field(header, 345, 155).map { $0 + "/" } ?? "") + (field(header, 0, 100) ?? "")
            guard let size = Int64(field(header, 124, 12)?.trimmingCharacters(in: .whitespaces) ?? "", radix: 8), size >= 0 else {
                throw Failure.unreadableArchive("an entry has no size")
            }
            let parts = name.split(separator: "/")
            guard !name.hasPrefix("/"), !parts.isEmpty, !parts.contains(where: { $0 == ".." || $0 == "." }) else { throw Failure.unsafeName(name) }
            let target = dataDirectory + "/" + parts.joined(separator: "/")
            try fm.createDirectory(atPath: (target as NSString).deletingLastPathComponent, withIntermediateDirectories: true,
                                   attributes: [.posixPermissions: 0o700])
            fm.createFile(atPath: target, contents: nil, attributes: [.posixPermissions: 0o600])
            guard let out = FileHandle(forWritingAtPath: target) else { throw CocoaError(.fileWriteNoPermission) }
            var left = size
            while left > 0 {
                let chunk = try input.read(upToCount: Int(min(left, 1 << 20))) ?? Data()
                guard !chunk.isEmpty else { try? out.close(); throw Failure.unreadableArchive("\(name) is cut short") }
                out.write(chunk)
                left -= Int64(chunk.count)
            }
            try out.close()
            let pad = (512 - Int(size % 512)) % 512
            if pad > 0 { _ = try input.read(upToCount: pad) }
            if name.hasSuffix(".sqlite") { summary.databases += 1 } else { summary.files += 1 }
            if name == "accounts.sqlite" { sawAccounts = true }
            summary.bytes += size
        }
        guard sawAccounts || summary.files > 0 else { throw Failure.unreadableArchive("it holds nothing") }
        return summary
    }

    /// Appends one file as a ustar entry; returns its size.
    static func append(_ name: String, contentsOf path: String, to out: FileHandle) throws -> Int64 {
        guard let input = FileHandle(forReadingAtPath: path) else { throw CocoaError(.fileReadNoPermission) }
        defer { try? input.close() }
        let size = Int64((try FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.int64Value ?? 0)
        out.write(try header(name, size: size))
        var left = size
        while left > 0 {
            // A file that shrank while being read is padded with zeros to the size the header promised.
            let chunk = try input.read(upToCount: Int(min(left, 1 << 20))) ?? Data()
            if chunk.isEmpty { out.write(Data(count: Int(left))); break }
            out.write(chunk)
            left -= Int64(chunk.count)
        }
        let pad = (512 - Int(size % 512)) % 512
        if pad > 0 { out.write(Data(count: pad)) }
        return size
    }

    /// A POSIX ustar header: names over 100 bytes are split at a `/` into prefix (155) and name (100).
    static func header(_ path: String, size: Int64) throws -> Data {
        var prefix = "", name = path
        if Array(path.utf8).count > 100 {
            let bytes = Array(path.utf8)
            guard let cut = bytes.indices.reversed().first(where: { bytes[$0] == UInt8(ascii: "/") && $0 <= 155 && bytes.count - $0 - 1 <= 100 }) else {
                throw Failure.unsafeName(path)
            }
            prefix = String(decoding: bytes[..<cut], as: UTF8.self)
            name = String(decoding: bytes[(cut + 1)...], as: UTF8.self)
        }
        var h = [UInt8](repeating: 0, count: 512)
        func put(_ text: String, _ at: Int, _ width: Int) { for (i, b) in Array(text.utf8).prefix(width).enumerated() { h[at + i] = b } }
        func octal(_ v: Int64, _ at: Int, _ width: Int) { put(String(String(v, radix: 8).suffix(width - 1)).leftPadded(width - 1), at, width) }
        put(name, 0, 100)
        octal(0o600, 100, 8); octal(0, 108, 8); octal(0, 116, 8)
        octal(size, 124, 12)
        octal(Int64(Date().timeIntervalSince1970), 136, 12)
        h[156] = UInt8(ascii: "0")
        put("ustar", 257, 6); put("00", 263, 2)
        put(prefix, 345, 155)
        for i in 148..<156 { h[i] = UInt8(ascii: " ") }
        let sum = h.reduce(0) { $0 + Int($1) }
        put(String(String(sum, radix: 8)).leftPadded(6), 148, 6)
        h[154] = 0; h[155] = UInt8(ascii: " ")
        return Data(h)
    }

    static func field(_ header: Data, _ at: Int, _ width: Int) -> String? {
        let bytes = header[header.startIndex + at ..< header.startIndex + at + width].prefix { $0 != 0 }
        return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self)
    }
}

private extension String {
    func leftPadded(_ width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
