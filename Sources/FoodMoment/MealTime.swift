import FoodRecognition
import FoodCore
public import Foundation
import ImageCodecs
import FoodVision

/// When a meal was eaten: the time the user gave (`--time`), else EXIF DateTimeOriginal (with OffsetTimeOriginal
/// when present), else the file time (which copying a photo changes: never used to merge photos into one meal).
public enum MealTime {
    public struct Resolved: Sendable, Equatable {
        public var date: Date
        public var utcOffsetSeconds: Int?
        public var source: TimeSource
    }

    public static func resolve(dateTimeOriginal: String?, offsetTimeOriginal: String?, fileModified: Date,
                               timeZone: TimeZone, given: Date? = nil) -> Resolved {
        if let given { return Resolved(date: given, utcOffsetSeconds: timeZone.secondsFromGMT(for: given), source: .given) }
        if let dto = dateTimeOriginal, let parts = parseExifDateTime(dto) {
            var calendar = Calendar(identifier: .gregorian)
            if let offsetText = offsetTimeOriginal, let offset = parseOffset(offsetText),
               let zone = TimeZone(secondsFromGMT: offset) {
                calendar.timeZone = zone
                if let date = calendar.date(from: parts) { return Resolved(date: date, utcOffsetSeconds: offset, source: .exif) }
            }
            calendar.timeZone = timeZone
            if let date = calendar.date(from: parts) {
                return Resolved(date: date, utcOffsetSeconds: timeZone.secondsFromGMT(for: date), source: .exifLocal)
            }
        }
        return Resolved(date: fileModified, utcOffsetSeconds: nil, source: .fileTime)
    }

    /// "YYYY:MM:DD HH:MM:SS" (EXIF); all-zero or blank dates (cameras write them) are nil.
    static func parseExifDateTime(_ text: String) -> DateComponents? {
        let digits = text.split(whereSeparator: { $0 == ":" || $0 == " " || $0 == "-" || $0 == "T" }).map { Int($0) }
        guard digits.count >= 6, let y = digits[0], let mo = digits[1], let d = digits[2], let h = digits[3],
              let mi = digits[4], let s = digits[5], (1900...2200).contains(y), (1...12).contains(mo), (1...31).contains(d),
              (0...23).contains(h), (0...59).contains(mi), (0...60).contains(s) else { return nil }
        return DateComponents(year: y, month: mo, day: d, hour: h, minute: mi, second: min(s, 59))
    }

    /// "+08:00", "-05:30", "Z".
    static func parseOffset(_ text: String) -> Int? {
        let t = text.trimmingCharacters(in: .whitespaces)
        if t == "Z" { return 0 }
        guard let sign = t.first, sign == "+" || sign == "-" else { return nil }
        let parts = t.dropFirst().split(separator: ":")
        guard parts.count == 2, let h = Int(parts[0]), let m = Int(parts[1]), (0...14).contains(h), (0...59).contains(m) else { return nil }
        return (sign == "-" ? -1 : 1) * (h * 3600 + m * 60)
    }
}
