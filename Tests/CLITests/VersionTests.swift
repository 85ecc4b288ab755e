import FoodMomentTestSupport
import Foundation
import Testing

/// One version number everywhere (issue 38): the binary, the OpenAPI document, the newest CHANGELOG entry and the
/// dependency lines a library user copies.
@Suite("one version number")
struct VersionTests {
    static func text(_ path: String) throws -> String { try String(contentsOfFile: TestPaths.repoRoot + "/" + path, encoding: .utf8) }

    @Test func everyPlaceSaysTheSameVersion() throws {
        let source = try Self.text("Sources/FoodMoment/Version.swift")
        let version = try #require(source.firstMatch(of: /static let string = "([0-9]+\.[0-9]+\.[0-9]+)"/)?.1).description
        let printed = try foodmoment("--version")
        #expect(printed.status == 0 && printed.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == version, "\(printed.stdout)")
        #expect(try Self.text("server/openapi.yaml").contains("\n  version: \(version)\n"))
        let changelog = try Self.text("CHANGELOG.md")
        let newest = changelog.split(separator: "\n").first { $0.hasPrefix("## ") }?.split(separator: " ").dropFirst().first
        #expect(newest.map(String.init) == version, "the newest CHANGELOG entry")
        for doc in ["README.md", "Sources/FoodMoment/FoodMoment.docc/GettingStarted.md"] {
            let lines = try Self.text(doc).split(separator: "\n").filter { $0.contains(".package(url:") && $0.contains("foodmoment/foodmoment") }
            #expect(!lines.isEmpty && lines.allSatisfy { $0.contains("from: \"\(version)\"") }, "\(doc): \(lines)")
        }
    }
}
