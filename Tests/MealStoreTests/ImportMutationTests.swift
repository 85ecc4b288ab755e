import FoodCore
import FoodMomentTestSupport
import Foundation
import MealStore
import Testing

/// The import reader over thousands of damaged export documents (byte flips, truncations, hostile numbers and
/// strings spliced into values): each one is refused with `badExport` or imported, never a crash, and the store
/// stays consistent throughout. A mutation test, not coverage-guided (the libFuzzer harness in tools/fuzz builds
/// modules without SwiftPM and so cannot link GRDB).
@Suite struct ImportMutationTests {
    static let hostile = ["1e308", "-1e308", "-1", "0", "null", "[]", "{}", "\"\"", "true", "\"\\u0000\"", "9223372036854775807",
                          "\"9999-99-99T99:99:99Z\"", "\"0000-01-01T00:00:00Z\"", "\"+275760-09-13T00:00:00Z\"",
                          "\"<script>\"", String(repeating: "9", count: 400), "\"\(String(repeating: "é", count: 2000))\""]

    @Test func damagedExportsAreRefusedOrImportedNeverCrash() throws {
        let source = try TempStore()
        defer { source.cleanup() }
        try ExportTests().fill(source.store)
        let original = Array(try source.store.exportDocument().jsonData())
        let target = try TempStore()
        defer { target.cleanup() }
        var rng = SplitMix64(seed: 0xF00D)
        var imported = 0, refused = 0
        for _ in 0..<2_000 {
            var bytes = original
            switch rng.next() % 4 {
            case 0:  // flip a few bytes
                for _ in 0..<(1 + Int(rng.next() % 4)) {
                    bytes[Int(rng.next() % UInt64(bytes.count))] ^= UInt8(truncatingIfNeeded: rng.next() | 1)
                }
            case 1:  // truncate
                bytes = Array(bytes.prefix(Int(rng.next() % UInt64(bytes.count))))
            default:  // replace the value after a random ':' with a hostile token
                let colons = bytes.indices.filter { bytes[$0] == UInt8(ascii: ":") }
                guard let c = colons.isEmpty ? nil : colons[Int(rng.next() % UInt64(colons.count))] else { continue }
                var end = c + 1
                while end < bytes.count, bytes[end] != UInt8(ascii: ","), bytes[end] != UInt8(ascii: "\n") { end += 1 }
                let token = Self.hostile[Int(rng.next() % UInt64(Self.hostile.count))]
                bytes.replaceSubrange((c + 1)..<end, with: Array((" " + token).utf8))
            }
            do {
                let doc = try DiaryExport.decode(Data(bytes))
                _ = try target.store.importDocument(doc)
                imported += 1
            } catch {
                refused += 1
            }
        }
        #expect(imported + refused == 2_000)
        #expect(refused > 0 && imported > 0)  // both paths exercised
        #expect(try target.store.integrityProblems().isEmpty)
        _ = try target.store.exportDocument()  // whatever went in reads back out
    }
}
