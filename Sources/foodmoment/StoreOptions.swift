import ArgumentParser
import FoodCore
import Foundation
import MealStore
import FoodMoment
import FoodRecognition
import FoodTraining

/// `--db PATH`: the meal store every diary command reads and writes.
struct StoreOptions: ParsableArguments {
    @Option(name: .customLong("db"), help: ArgumentHelp(
        "Meal store file (default: meals.sqlite in $FOODMOMENT_HOME, else $XDG_DATA_HOME/foodmoment, else ~/.local/share/foodmoment).",
        valueName: "path"))
    var path: String?

    @Flag(name: .customLong("read-only"), help: "Open the meal store for viewing only (a store you cannot write opens this way by itself).")
    var readOnly = false

    var resolvedPath: String {
        path ?? MealStore.defaultPath(dataDirectory: ProcessSettings.userDataDirectory)
    }

    func open() throws -> MealStore {
        do { return try MealStore(path: resolvedPath, readOnly: readOnly) } catch {
            Output.error("\(error)")
            throw Exit.failed
        }
    }
}

/// Runs a store operation; a store error is printed and becomes exit code 1.
func storeCall<T>(_ body: () throws -> T) throws -> T {
    do { return try body() } catch let e as MealStoreError {
        Output.error(e.description)
        throw Exit.failed
    }
}

func storeCall<T>(_ body: () async throws -> T) async throws -> T {
    do { return try await body() } catch let e as MealStoreError {
        Output.error(e.description)
        throw Exit.failed
    }
}

/// Local days and times as the user types them: `2026-11-22`, `today`, `yesterday`; times `HH:MM` on that day
/// or a full ISO 8601 time. Local means the `TZ` environment variable, else the machine's zone.
enum LocalDates {
    static var zone: TimeZone { TimeZone.current }

    static var today: LocalDay { LocalDay(Date(), timeZone: zone) }

    static func day(_ text: String) throws -> LocalDay {
        switch text.lowercased() {
        case "today": return today
        case "yesterday": return today.adding(days: -1)
        case "tomorrow": return today.adding(days: 1)
        default:
            guard let d = LocalDay(text) else {
                throw ValidationError("bad date \(text): use YYYY-MM-DD, today or yesterday")
            }
            return d
        }
    }

    /// `HH:MM` on `day`, `YYYY-MM-DD HH:MM`, or ISO 8601 (`2026-11-22T08:15:00+01:00`).
    static func time(_ text: String, on day: LocalDay) throws -> Date {
        let parts = text.split(separator: " ")
        if parts.count == 2 { return try time(String(parts[1]), on: try self.day(String(parts[0]))) }
        let hm = text.split(separator: ":")
        if hm.count == 2, let h = Int(hm[0]), let m = Int(hm[1]), (0..<24).contains(h), (0..<60).contains(m) {
            return day.start(in: zone).addingTimeInterval(TimeInterval(h * 3600 + m * 60))
        }
        let f = ISO8601DateFormatter()
        if let d = f.date(from: text) { return d }
        throw ValidationError("bad time \(text): use HH:MM, 'YYYY-MM-DD HH:MM' or ISO 8601")
    }

    static func hhmm(_ date: Date) -> String {
        var c = Calendar(identifier: .gregorian)
        c.timeZone = zone
        let x = c.dateComponents([.hour, .minute], from: date)
        return String(format: "%02d:%02d", x.hour ?? 0, x.minute ?? 0)
    }

    /// `Sunday 22 November 2026`.
    static func long(_ day: LocalDay) -> String {
        let names = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
        let months = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
                      "November", "December"]
        return "\(names[day.weekdayFromMonday]) \(day.day) \(months[day.month - 1]) \(day.year)"
    }
}

/// Little text pictures: bars and numbers.
enum Bars {
    /// `███████░░░` for `value / total` in `width` cells (eighths for the last cell).
    static func bar(_ value: Double, of total: Double, width: Int = 20) -> String {
        guard total > 0, value.isFinite else { return String(repeating: "░", count: width) }
        let frac = min(max(value / total, 0), 1)
        let eighths = Int((frac * Double(width) * 8).rounded())
        let full = eighths / 8, rest = eighths % 8
        let partial = ["", "▏", "▎", "▍", "▌", "▋", "▊", "▉"][rest]
        let used = full + (rest > 0 ? 1 : 0)
        return String(repeating: "█", count: full) + partial + String(repeating: "░", count: max(0, width - used))
    }

    /// `1,532`.
    static func int(_ v: Double) -> String {
        let n = Int(v.rounded())
        let s = String(abs(n))
        var out = ""
        for (i, c) in s.reversed().enumerated() {
            if i > 0, i % 3 == 0 { out.append(",") }
            out.append(c)
        }
        return (n < 0 ? "-" : "") + String(out.reversed())
    }

    /// `12.5` or `12`.
    static func g(_ v: Double) -> String {
        v == v.rounded() ? String(Int(v)) : String(format: "%.1f", v)
    }

    static func typeName(_ t: MealType) -> String {
        t.rawValue.prefix(1).uppercased() + t.rawValue.dropFirst()
    }

    static func typeEmoji(_ t: MealType) -> String {
        switch t {
        case .breakfast: "🌅"
        case .lunch: "☀️"
        case .dinner: "🌙"
        case .snack: "🍪"
        }
    }
}
