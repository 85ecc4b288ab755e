import Foundation

/// Which public source each photo of a `<label>/` folder tree came from, read from the `MANIFEST.csv` that sits
/// beside the split folders (`images/MANIFEST.csv` with rows `path,label,source,…`, `path` relative to `images/`).
/// Cross-source evaluation holds out whole sources: a head trained without a source is scored on that source's
/// photos only, so shop, lighting and camera of the reported photos were never seen in training.
package struct SourceManifest: Sendable {
    /// Standardised absolute path → source name.
    package var sources: [String: String]

    package init(sources: [String: String]) { self.sources = sources }

    /// The manifest for a split folder (`…/images/train` → `…/images/MANIFEST.csv`); nil when there is none.
    package static func find(forDataFolder folder: String) throws -> SourceManifest? {
        let root = URL(fileURLWithPath: folder).standardizedFileURL.deletingLastPathComponent()
        let file = root.appendingPathComponent("MANIFEST.csv").path
        guard FileManager.default.fileExists(atPath: file) else { return nil }
        return try load(csv: file)
    }

    /// Reads `path,label,source,…` rows; `path` is relative to the manifest's folder.
    package static func load(csv file: String) throws -> SourceManifest {
        let text = try String(contentsOfFile: file, encoding: .utf8)
        let root = URL(fileURLWithPath: file).deletingLastPathComponent().standardizedFileURL.path
        var lines = text.split(whereSeparator: \.isNewline)
        guard let header = lines.first?.split(separator: ",", omittingEmptySubsequences: false).map(String.init),
              let pathColumn = header.firstIndex(of: "path"), let sourceColumn = header.firstIndex(of: "source") else {
            throw SourceManifestError.malformed(file: file, reason: "the first line must name the columns path and source")
        }
        lines.removeFirst()
        var sources: [String: String] = [:]
        for (n, line) in lines.enumerated() {
            // Paths in this manifest never hold commas (checked here: a row with too few columns is refused).
            let cols = line.split(separator: ",", omittingEmptySubsequences: false)
            guard cols.count > max(pathColumn, sourceColumn) else {
                throw SourceManifestError.malformed(file: file, reason: "line \(n + 2) has \(cols.count) columns")
            }
            sources[root + "/" + cols[pathColumn]] = String(cols[sourceColumn])
        }
        return SourceManifest(sources: sources)
    }

    package func source(of path: String) -> String? {
        sources[URL(fileURLWithPath: path).standardizedFileURL.path]
    }

    /// Keeps samples whose source is in `only` (when non-empty) and not in `excluding`. A sample the manifest does
    /// not list is an error: a cross-source figure must not silently mix in photos of unknown origin.
    package func filter(_ samples: [TrainingSample], only: Set<String>, excluding: Set<String>) throws -> [TrainingSample] {
        try samples.filter { s in
            guard let src = source(of: s.path) else { throw SourceManifestError.unlisted(path: s.path) }
            return (only.isEmpty || only.contains(src)) && !excluding.contains(src)
        }
    }

    package var allSources: Set<String> { Set(sources.values) }
}

package enum SourceManifestError: Error, CustomStringConvertible, Equatable {
    case malformed(file: String, reason: String)
    case unlisted(path: String)
    case noManifest(folder: String)
    case unknownSource(String, known: [String])

    package var description: String {
        switch self {
        case .malformed(let file, let reason): "\(file): not a source manifest: \(reason)"
        case .unlisted(let path): "\(path) is not in the folder's MANIFEST.csv, so its source is unknown"
        case .noManifest(let folder): "no MANIFEST.csv beside \(folder): --source / --exclude-source need one (path,label,source,…)"
        case .unknownSource(let s, let known): "no source named \(s) in MANIFEST.csv (sources: \(known.joined(separator: ", ")))"
        }
    }
}

extension TrainingSet {
    /// `folders(dir)` restricted by source (empty sets = no restriction), with the names checked against the manifest.
    package static func folders(_ dir: String, sources only: Set<String>, excluding: Set<String>) throws -> [TrainingSample] {
        let samples = try folders(dir)
        if only.isEmpty && excluding.isEmpty { return samples }
        guard let manifest = try SourceManifest.find(forDataFolder: dir) else { throw SourceManifestError.noManifest(folder: dir) }
        let known = manifest.allSources
        for s in only.union(excluding) where !known.contains(s) { throw SourceManifestError.unknownSource(s, known: known.sorted()) }
        return try manifest.filter(samples, only: only, excluding: excluding)
    }
}
