/// A small RFC 4180 reader over raw bytes: quoted fields may hold delimiters, doubled quotes and newlines.
///
/// Rows are handed to a closure as byte ranges so that large tables (the 816k-row Open Food Facts dump)
/// only pay for the fields the builder actually reads.
package struct CSVRow {
    fileprivate var bytes: UnsafeBufferPointer<UInt8>
    fileprivate var starts: [Int] = []
    fileprivate var ends: [Int] = []
    fileprivate var quoted: [Bool] = []

    package var count: Int { starts.count }

    /// The field as a String (quotes removed, doubled quotes collapsed); "" when the row is short.
    package subscript(_ i: Int) -> String {
        guard i < starts.count else { return "" }
        let slice = UnsafeBufferPointer(rebasing: bytes[starts[i]..<ends[i]])
        if !quoted[i] { return String(decoding: slice, as: UTF8.self) }
        var out: [UInt8] = []
        out.reserveCapacity(slice.count)
        var j = 0
        while j < slice.count {
            let b = slice[j]
            out.append(b)
            if b == UInt8(ascii: "\""), j + 1 < slice.count, slice[j + 1] == UInt8(ascii: "\"") { j += 1 }
            j += 1
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The field trimmed of spaces, or nil when empty.
    package func value(_ i: Int) -> String? {
        let s = self[i].trimmingSpaces
        return s.isEmpty ? nil : s
    }

    /// The field as a finite Double, or nil when empty or not a number.
    package func number(_ i: Int) -> Double? {
        guard let s = value(i), let d = Double(s), d.isFinite else { return nil }
        return d
    }
}

package enum CSV {
    /// Calls `body` for every row after the header; returns the header fields.
    @discardableResult
    package static func forEachRow(in data: [UInt8], delimiter: UInt8 = UInt8(ascii: ","), _ body: (CSVRow) throws(NutritionError) -> Void) throws(NutritionError) -> [String] {
        var header: [String] = []
        var failure: NutritionError?
        data.withUnsafeBufferPointer { buf in
            var row = CSVRow(bytes: buf)
            var i = 0
            // UTF-8 byte order mark.
            if buf.count >= 3, buf[0] == 0xEF, buf[1] == 0xBB, buf[2] == 0xBF { i = 3 }
            let n = buf.count
            var isHeader = true
            while i < n {
                row.starts.removeAll(keepingCapacity: true)
                row.ends.removeAll(keepingCapacity: true)
                row.quoted.removeAll(keepingCapacity: true)
                var endOfRow = false
                while !endOfRow {
                    if i < n, buf[i] == UInt8(ascii: "\"") {
                        i += 1
                        let start = i
                        while i < n {
                            if buf[i] == UInt8(ascii: "\"") {
                                if i + 1 < n, buf[i + 1] == UInt8(ascii: "\"") { i += 2; continue }
                                break
                            }
                            i += 1
                        }
                        row.starts.append(start); row.ends.append(min(i, n)); row.quoted.append(true)
                        i += 1 // closing quote
                        // Skip anything between the closing quote and the delimiter.
                        while i < n, buf[i] != delimiter, buf[i] != 10, buf[i] != 13 { i += 1 }
                    } else {
                        let start = i
                        while i < n, buf[i] != delimiter, buf[i] != 10, buf[i] != 13 { i += 1 }
                        row.starts.append(start); row.ends.append(i); row.quoted.append(false)
                    }
                    if i < n, buf[i] == delimiter {
                        i += 1
                    } else {
                        if i < n, buf[i] == 13 { i += 1 }
                        if i < n, buf[i] == 10 { i += 1 }
                        endOfRow = true
                    }
                }
                if row.starts.count == 1, row.starts[0] == row.ends[0] { continue } // blank line
                if isHeader {
                    header = (0..<row.count).map { row[$0] }
                    isHeader = false
                } else {
                    do throws(NutritionError) { try body(row) } catch { failure = error; return }
                }
            }
        }
        if let failure { throw failure }
        return header
    }
}

extension String {
    package var trimmingSpaces: String {
        var s = Substring(self)
        while let f = s.first, f == " " || f == "\t" || f == "\u{FEFF}" { s.removeFirst() }
        while let l = s.last, l == " " || l == "\t" { s.removeLast() }
        return String(s)
    }
}
