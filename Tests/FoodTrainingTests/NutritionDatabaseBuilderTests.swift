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
        let reportA = try builder.write(to: a)
        let bytesA = try Data(contentsOf: a.appendingPathComponent(Format.fileName))
        #expect(bytesA.count == reportA.bytes)
        let committed = try Data(contentsOf: URL(fileURLWithPath: TestPaths.repoRoot + "/nutrition-db/" + Format.fileName))
        #expect(committed == bytesA, "nutrition-db/nutrition.fmdb is stale: rebuild with `foodmoment dev nutrition-db build`")
        // The whole directory stays within the 40 MB budget.
        #expect(bytesA.count < 40_000_000)
    }

    @Test func missingSourceIsAClearError() {
        let builder = NutritionDatabaseBuilder(sourceDirectory: URL(fileURLWithPath: "/nonexistent-nutrition"))
        #expect(throws: NutritionError.self) { try builder.build() }
    }
}
