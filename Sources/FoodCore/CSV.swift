import Foundation

/// The one CSV writer (analyze's `--csv`, the diary's export, `dev eval`'s tables): RFC 4180 quoting (a field with a
/// comma, quote, CR or LF is quoted, its quotes doubled), and a field that starts with `=`, `+`, `-` or `@` and is not
/// a number gets a leading `'`, so a spreadsheet never runs a file name, a food name or a meal title as a formula.
public enum CSV {
    /// One line, without its line end.
    public static func line(_ fields: [String]) -> String {
        fields.map(field).joined(separator: ",")
    }

    public static func field(_ value: String) -> String {
        var f = value
        if let c = f.first, "=+-@".contains(c), Double(f) == nil { f = "'" + f }
        if f.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) {
            return "\"" + f.replacingOccurrences(of: "\"", with: "\"\"") + "\""
        }
        return f
    }
}
