import FoodCore
import Foundation
import Testing
@testable import Nutrition

/// The shipped, gzip-packed tables: unpacked once into a cache folder, mapped from there afterwards, and every way the
/// packed file or its copy can be wrong turned into a clear error or a fresh unpack.
@Suite struct PackedTablesTests {
    static let packed = Paths.nutritionDB.appendingPathComponent(Format.packedFileName)

    /// A folder holding a copy of the committed packed file and labels.json, and an empty cache folder.
    struct Scratch {
        let root: URL
        var tables: URL { root.appendingPathComponent("db") }
        var cache: URL { root.appendingPathComponent("cache") }
        var packed: URL { tables.appendingPathComponent(Format.packedFileName) }

        init() throws {
            root = FileManager.default.temporaryDirectory.appendingPathComponent("nutrition-packed-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: root.appendingPathComponent("db"), withIntermediateDirectories: true)
            for name in [Format.packedFileName, Format.labelsFileName] {
                try FileManager.default.copyItem(at: Paths.nutritionDB.appendingPathComponent(name),
                                                 to: root.appendingPathComponent("db/" + name))
            }
        }

        func cachedCopies() -> [String] {
            ((try? FileManager.default.contentsOfDirectory(atPath: cache.path)) ?? []).filter { $0.hasSuffix(".fmdb") }.sorted()
        }

        func remove() { try? FileManager.default.removeItem(at: root) }
    }

    @Test func theShippedFileIsPackedAndUnderGitsSizeCheck() throws {
        let size = try #require(fileSize(atPath: Self.packed.path))
        #expect(size < 25_000_000)
        // No plain copy in the package: it would be loaded instead of the packed one and go stale unnoticed.
        #expect(!FileManager.default.fileExists(atPath: Paths.nutritionDB.appendingPathComponent(Format.fileName).path))
    }

    @Test func firstLoadUnpacksOnceAndLaterLoadsMapTheCopy() throws {
        let s = try Scratch()
        defer { s.remove() }
        let first = try NutritionDatabase.load(directory: s.tables, cacheDirectory: s.cache)
        let copies = s.cachedCopies()
        try #require(copies.count == 1)
        let trailer = try PackedTables.readTrailer(s.packed)
        #expect(copies[0] == PackedTables.cacheName(trailer))
        let copy = s.cache.appendingPathComponent(copies[0])
        #expect(fileSize(atPath: copy.path) == trailer.length)
        let written = try FileManager.default.attributesOfItem(atPath: copy.path)[.modificationDate] as? Date

        let second = try NutritionDatabase.load(directory: s.tables, cacheDirectory: s.cache)
        #expect(try FileManager.default.attributesOfItem(atPath: copy.path)[.modificationDate] as? Date == written)
        #expect(second.foodCount == first.foodCount && second.productCount == first.productCount)
        #expect(second.food(id: "sr:173944")?.name == "Bananas, raw")
        // And the same tables as the committed ones loaded through the default path.
        let committed = try db()
        #expect(first.foodCount == committed.foodCount && first.productCount == committed.productCount)
    }

    @Test func aDamagedCachedCopyIsReplaced() throws {
        let s = try Scratch()
        defer { s.remove() }
        _ = try NutritionDatabase.load(directory: s.tables, cacheDirectory: s.cache)
        let copy = s.cache.appendingPathComponent(try #require(s.cachedCopies().first))
        let good = try Data(contentsOf: copy)

        // Cut short: the wrong length is seen before mapping.
        try good.prefix(good.count / 2).write(to: copy)
        #expect(try NutritionDatabase.load(directory: s.tables, cacheDirectory: s.cache).food(id: "sr:173944") != nil)
        #expect(try Data(contentsOf: copy) == good)

        // Same length, broken header: refused by validation, then unpacked again.
        var broken = good
        broken.replaceSubrange(0..<8, with: Data("NOTADB!!".utf8))
        try broken.write(to: copy)
        #expect(try NutritionDatabase.load(directory: s.tables, cacheDirectory: s.cache).food(id: "sr:173944") != nil)
        #expect(try Data(contentsOf: copy) == good)
    }

    @Test func anUnwritableCacheStillLoadsFromMemory() throws {
        let s = try Scratch()
        defer { s.remove() }
        // A cache "folder" below a regular file cannot be created, whoever runs the test (root included).
        let blocker = s.root.appendingPathComponent("file")
        try Data("x".utf8).write(to: blocker)
        let d = try NutritionDatabase.load(directory: s.tables, cacheDirectory: blocker.appendingPathComponent("cache"))
        #expect(d.food(id: "sr:173944")?.name == "Bananas, raw")
    }

    @Test func aPlainFileBesideThePackedOneWins() throws {
        let s = try Scratch()
        defer { s.remove() }
        try Data("FMNUTDB1 but truncated".utf8).write(to: s.tables.appendingPathComponent(Format.fileName))
        do {
            _ = try NutritionDatabase.load(directory: s.tables, cacheDirectory: s.cache)
            Issue.record("loaded the packed file although a plain one is beside it")
        } catch {
            #expect(error.description.contains(Format.fileName) && !error.description.contains(Format.packedFileName))
        }
        #expect(s.cachedCopies().isEmpty)
    }

    /// Each damaged packed file, and words one of which its error must contain.
    static let damage: [(name: String, damage: @Sendable (Data) -> Data, says: [String])] = [
        ("cut in half, trailer kept", { $0.prefix($0.count / 2) + $0.suffix(8) }, ["truncated", "corrupt", "inflates to"]),
        ("cut in half", { $0.prefix($0.count / 2) }, ["truncated", "corrupt", "trailer"]),
        ("a flipped byte", { var d = $0; d[d.count / 2] ^= 0x40; return d }, ["corrupt", "inflates to", "more bytes than"]),
        ("not gzip", { _ in Data(repeating: 0x01, count: 4096) }, ["not a gzip file"]),
        ("too short", { $0.prefix(12) }, ["12 bytes, too short"]),
        ("empty", { _ in Data() }, ["0 bytes"]),
        ("a trailer claiming 2 GB", { var d = $0; d.replaceSubrange((d.count - 4)..<d.count, with: [0, 0, 0, 0x80]); return d }, ["outside"]),
        // Under the 1 GiB limit, but more than the file could inflate to: refused before a 1 GiB buffer is allocated.
        ("100 bytes and a trailer claiming 1 GB", { $0.prefix(100) + $0.suffix(8).prefix(4) + Data([0, 0, 0, 0x40]) }, ["the most 108 bytes"]),
        ("a trailer claiming fewer bytes", { var d = $0; d.replaceSubrange((d.count - 4)..<d.count, with: [0, 0x10, 0, 0]); return d }, ["more bytes than"]),
    ]

    @Test(arguments: 0..<damage.count)
    func aDamagedPackedFileIsAClearError(_ index: Int) throws {
        let (name, damage, says) = Self.damage[index]
        let s = try Scratch()
        defer { s.remove() }
        try damage(try Data(contentsOf: s.packed)).write(to: s.packed)
        do {
            _ = try NutritionDatabase.load(directory: s.tables, cacheDirectory: s.cache)
            Issue.record("loaded a packed file with \(name)")
        } catch {
            #expect(error.description.contains(s.packed.path), "\(name): \(error)")
            #expect(says.contains { error.description.contains($0) }, "\(name): \(error)")
        }
        #expect(s.cachedCopies().isEmpty, "\(name) left a cached copy")
    }

    @Test func writeThenUnpackGivesTheSameBytes() throws {
        let s = try Scratch()
        defer { s.remove() }
        let bytes = (0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 13) }
        let out = s.root.appendingPathComponent("t.gz")
        try PackedTables.write(bytes, to: out)
        #expect(try PackedTables.unpack(out) == Data(bytes))
        #expect(throws: NutritionError.self) { try PackedTables.write(bytes, to: s.root.appendingPathComponent("file-missing-dir/x/t.gz")) }
    }
}
