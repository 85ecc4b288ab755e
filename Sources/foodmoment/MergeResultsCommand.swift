import ArgumentParser
import Foundation
import FoodMoment
import FoodRecognition
import FoodTraining

/// `foodmoment merge-results part-*.ndjson`: joins the NDJSON outputs of sharded runs into one.
struct MergeResultsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "merge-results",
        abstract: "Merge the NDJSON outputs of `analyze --ndjson --shard K/N` runs into one result set.",
        discussion: """
        Reads each file line by line (bounded memory per line), keeps one result per photo (by content hash, else \
        by path; the later file wins), and writes them sorted by path: NDJSON by default, or --json / --csv. A \
        malformed line is reported with its file and line number and skipped.

        Examples:
          foodmoment merge-results part-*.ndjson > all.ndjson
          foodmoment merge-results part-*.ndjson --csv all.csv --summary

        Exit codes: 0 merged, 1 some lines could not be read, 2 usage error.
        """
    )

    @Argument(help: "NDJSON files written by `foodmoment analyze --ndjson`.")
    var files: [String]

    @Flag(help: "Write one JSON array instead of NDJSON.")
    var json = false

    @Option(help: ArgumentHelp("Write CSV (one row per food) to this file instead of results on stdout.", valueName: "file"))
    var csv: String?

    @Flag(help: "Print counts per shard file and in all on stderr.")
    var summary = false

    func validate() throws {
        if files.isEmpty { throw ValidationError("name at least one NDJSON file") }
        for f in files where !FileManager.default.isReadableFile(atPath: f) { throw ValidationError("cannot read \(f)") }
    }

    func run() throws {
        var byKey: [String: PhotoResult] = [:]
        var badLines = 0
        let decoder = JSONDecoder()
        for file in files {
            guard let handle = FileHandle(forReadingAtPath: file) else { throw ValidationError("cannot read \(file)") }
            defer { try? handle.close() }
            var lineNumber = 0, count = 0
            var pending = Data()
            func consume(_ line: Data) {
                lineNumber += 1
                if line.allSatisfy({ $0 == 32 || $0 == 13 || $0 == 9 }) { return }
                do {
                    let r = try decoder.decode(PhotoResult.self, from: line)
                    byKey[r.photoHash ?? "path:" + r.file] = r
                    count += 1
                } catch {
                    badLines += 1
                    Output.note("warning: \(file):\(lineNumber): not a result line (\(error.localizedDescription)); skipped")
                }
            }
            while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty {
                pending.append(chunk)
                // Consume every complete line, then drop them in one step (not one shift of the buffer per line).
                var lineStart = pending.startIndex
                while let nl = pending[lineStart...].firstIndex(of: 10) {
                    consume(pending[lineStart..<nl])
                    lineStart = nl + 1
                }
                pending.removeSubrange(pending.startIndex..<lineStart)
            }
            if !pending.isEmpty { consume(pending) }
            if summary { Output.note("\(file): \(count) results") }
        }
        let results = byKey.values.sorted { $0.file < $1.file }
        if let csv {
            let writer = try LineWriter(path: csv)
            writer.write(ResultCSV.header)
            for r in results { for row in ResultCSV.rows(r) { writer.write(row) } }
            writer.close()
        } else if json {
            print(try Output.json(results))
        } else {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            for r in results { LineWriter.standardOutput.write(String(decoding: try encoder.encode(r), as: UTF8.self)) }
        }
        if summary {
            let failed = results.filter { !$0.succeeded }.count
            let skipped = results.filter { $0.status == .skipped }.count
            let foods = results.reduce(0) { $0 + ($1.foods?.count ?? 0) }
            Output.note("merged: \(results.count - skipped) photos, \(failed) failed, \(skipped) skipped, \(foods) foods, \(badLines) unreadable lines")
        }
        if badLines > 0 { throw Exit.failed }
    }
}
