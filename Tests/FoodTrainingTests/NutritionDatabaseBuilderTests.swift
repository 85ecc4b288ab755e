import FoodCore
import FoodMomentTestSupport
import Foundation
@testable import FoodTraining
import Nutrition
import Testing

@Suite struct NutritionDatabaseBuilderTests {
    static let sharedNutrition = URL(fileURLWithPath: TestPaths.sharedData + "/nutrition")
    static var hasSharedNutrition: Bool {
        FileManager.default.fileExists(atPath: sharedNutrition.appendingPathComponent("sr_legacy_per100g.csv").path)
    }

    @Test func gtinNormalisation() {
        #expect(GTIN.checkDigitValid("5449000039231"))
        #expect(!GTIN.checkDigitValid("5449000039232"))
        #expect(NutritionDatabaseBuilder.gtin14("5449000039231") == 5_449_000_039_231)
        // The 2020 export lost leading zeros: 11110786043 is UPC-A 011110786043.
        #expect(NutritionDatabaseBuilder.gtin14("11110786043") == 11_110_786_043)
        #expect(NutritionDatabaseBuilder.gtin14("96385074") == 96_385_074) // EAN-8
        #expect(NutritionDatabaseBuilder.gtin14("abc") == nil)
        #expect(NutritionDatabaseBuilder.gtin14("5449000039232") == nil)
    }

    @Test(.enabled(if: hasSharedNutrition, "needs ../shared/data/nutrition (the source tables)"), .timeLimit(.minutes(10)))
    func sameInputsGiveIdenticalBytes() throws {
        let tmp = URL(fileURLWithPath: TestPaths.makeTempDirectory("nutrition-repro"))
        defer { try? FileManager.default.removeItem(at: tmp) }
        let builder = NutritionDatabaseBuilder(sourceDirectory: Self.sharedNutrition)
        // One build compared with the committed file, which an earlier process built from the same inputs: equal
        // bytes show the builder is deterministic (no time, order or address dependence) and the file is not stale.
        let a = tmp.appendingPathComponent("a")
        try FileManager.default.createDirectory(at: a, withIntermediateDirectories: true)
        try Data("stale".utf8).write(to: a.appendingPathComponent(Format.fileName))
        let reportA = try builder.write(to: a)
        let bytesA = try PackedTables.unpack(a.appendingPathComponent(Format.packedFileName))
        #expect(bytesA.count == reportA.bytes)
        #expect(reportA.packedBytes == fileSize(atPath: a.appendingPathComponent(Format.packedFileName).path))
        let committed = try PackedTables.unpack(URL(fileURLWithPath: TestPaths.repoRoot + "/nutrition-db/" + Format.packedFileName))
        #expect(committed == bytesA, "nutrition-db/nutrition.fmdb.gz is stale: rebuild with `foodmoment dev nutrition-db build`")
        // The tables stay within the 40 MB budget, and the packed file under git's 25 MB check.
        #expect(bytesA.count < 40_000_000)
        #expect(reportA.packedBytes < 25_000_000)
        // A plain file left in the output folder would be loaded instead of the new packed one: the build removed it.
        #expect(!FileManager.default.fileExists(atPath: a.appendingPathComponent(Format.fileName).path))
    }

    @Test func missingSourceIsAClearError() {
        let builder = NutritionDatabaseBuilder(sourceDirectory: URL(fileURLWithPath: "/nonexistent-nutrition"))
        #expect(throws: NutritionError.self) { try builder.build() }
    }
}
