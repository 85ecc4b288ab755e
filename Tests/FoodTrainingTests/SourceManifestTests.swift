import FoodCore
import FoodMomentTestSupport
import Foundation
import FoodTraining
import Testing

@Suite struct SourceManifestTests {
    /// images/{MANIFEST.csv, train/<label>/…}: two sources, one photo the manifest does not list when asked.
    func makeTree(unlisted: Bool = false) throws -> String {
        let root = TestPaths.makeTempDirectory("manifest")
        for (label, file) in [("apple", "a1.jpg"), ("apple", "train_Apple_1.jpg"), ("pizza", "p1.jpg")] {
            try FileManager.default.createDirectory(atPath: "\(root)/train/\(label)", withIntermediateDirectories: true)
            #expect(FileManager.default.createFile(atPath: "\(root)/train/\(label)/\(file)", contents: Data([0xFF, 0xD8])))
        }
        if unlisted { #expect(FileManager.default.createFile(atPath: "\(root)/train/apple/stray.jpg", contents: Data([0xFF]))) }
        let csv = """
        path,label,source,split,license,source_path
        train/apple/a1.jpg,apple,ecustfd,train,x,y
        train/apple/train_Apple_1.jpg,apple,grocerystore,train,MIT,z
        train/pizza/p1.jpg,pizza,food101_a,train,f,w

        """
        try csv.write(toFile: root + "/MANIFEST.csv", atomically: true, encoding: .utf8)
        return root
    }

    @Test func keepsAndLeavesOutWholeSources() throws {
        let root = try makeTree()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let all = try TrainingSet.folders(root + "/train", sources: [], excluding: [])
        #expect(all.count == 3)
        let without = try TrainingSet.folders(root + "/train", sources: [], excluding: ["grocerystore"])
        #expect(without.map { ($0.path as NSString).lastPathComponent } == ["a1.jpg", "p1.jpg"])
        let only = try TrainingSet.folders(root + "/train/", sources: ["grocerystore"], excluding: [])
        #expect(only.map(\.label) == ["apple"] && only[0].path.hasSuffix("train_Apple_1.jpg"))
    }

    @Test func unknownSourcesAndUnlistedPhotosAreErrors() throws {
        let root = try makeTree(unlisted: true)
        defer { try? FileManager.default.removeItem(atPath: root) }
        #expect(throws: SourceManifestError.unknownSource("grocery", known: ["ecustfd", "food101_a", "grocerystore"])) {
            try TrainingSet.folders(root + "/train", sources: ["grocery"], excluding: [])
        }
        #expect(throws: SourceManifestError.unlisted(path: root + "/train/apple/stray.jpg")) {
            try TrainingSet.folders(root + "/train", sources: [], excluding: ["ecustfd"])
        }
        let bare = TestPaths.makeTempDirectory("nomanifest")
        defer { try? FileManager.default.removeItem(atPath: bare) }
        try FileManager.default.createDirectory(atPath: bare + "/dev/apple", withIntermediateDirectories: true)
        #expect(throws: SourceManifestError.noManifest(folder: bare + "/dev")) {
            try TrainingSet.folders(bare + "/dev", sources: ["ecustfd"], excluding: [])
        }
    }

    @Test func aManifestWithoutPathAndSourceColumnsIsRefused() throws {
        let dir = TestPaths.makeTempDirectory("badmanifest")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try "file,label\na.jpg,apple\n".write(toFile: dir + "/MANIFEST.csv", atomically: true, encoding: .utf8)
        #expect(throws: SourceManifestError.self) { try SourceManifest.load(csv: dir + "/MANIFEST.csv") }
    }
}
