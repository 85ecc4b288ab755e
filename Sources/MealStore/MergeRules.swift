public import FoodCore
public import Foundation

/// When each meal type happens, as minutes after local midnight (`start` inclusive, `end` exclusive).
/// Defaults: breakfast 05:00–10:30, lunch 10:30–15:00, dinner 17:00–22:00; any other time is a snack.
public struct MealWindows: Sendable, Codable, Equatable {
    public struct Window: Sendable, Codable, Equatable {
        public var start: Int
        public var end: Int
        public init(start: Int, end: Int) { self.start = start; self.end = end }
        public func contains(_ minute: Int) -> Bool { minute >= start && minute < end }
    }

    public var breakfast: Window
    public var lunch: Window
    public var dinner: Window

    public init(breakfast: Window = Window(start: 5 * 60, end: 10 * 60 + 30),
                lunch: Window = Window(start: 10 * 60 + 30, end: 15 * 60),
                dinner: Window = Window(start: 17 * 60, end: 22 * 60)) {
        self.breakfast = breakfast; self.lunch = lunch; self.dinner = dinner
    }

    public static let standard = MealWindows()

    /// The meal type for a time of day (minutes after local midnight).
    public func type(atMinute minute: Int) -> MealType {
        if breakfast.contains(minute) { return .breakfast }
        if lunch.contains(minute) { return .lunch }
        if dinner.contains(minute) { return .dinner }
        return .snack
    }

    /// The meal type for an instant, read in `timeZone`.
    public func type(at date: Date, timeZone: TimeZone) -> MealType {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let c = calendar.dateComponents([.hour, .minute], from: date)
        return type(atMinute: (c.hour ?? 0) * 60 + (c.minute ?? 0))
    }

    /// Parses `breakfast=06:00-10:00,lunch=11:00-14:30,dinner=18:00-21:30` (any subset; the rest keep their
    /// defaults).
    public init(parsing text: String) throws(MealStoreError) {
        self.init()
        for part in text.split(separator: ",") {
            let kv = part.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            let bad = MealStoreError.invalidValue(field: "meal window", value: String(part),
                                                  expected: "TYPE=HH:MM-HH:MM with TYPE breakfast, lunch or dinner")
            guard kv.count == 2 else { throw bad }
            let ends = kv[1].split(separator: "-").map { MealWindows.minutes(String($0)) }
            guard ends.count == 2, let s = ends[0], let e = ends[1], s < e else { throw bad }
            switch kv[0].lowercased() {
            case "breakfast": breakfast = Window(start: s, end: e)
            case "lunch": lunch = Window(start: s, end: e)
            case "dinner": dinner = Window(start: s, end: e)
            default: throw bad
            }
        }
    }

    /// `"07:30"` → 450; nil when not `H:MM`/`HH:MM` within a day (24:00 allowed as an end).
    static func minutes(_ s: String) -> Int? {
        let p = s.trimmingCharacters(in: .whitespaces).split(separator: ":")
        guard p.count == 2, let h = Int(p[0]), let m = Int(p[1]), (0...24).contains(h), (0..<60).contains(m) else { return nil }
        let v = h * 60 + m
        return v <= 24 * 60 ? v : nil
    }

    /// `05:00-10:30`.
    public static func format(_ w: Window) -> String {
        String(format: "%02d:%02d-%02d:%02d", w.start / 60, w.start % 60, w.end / 60, w.end % 60)
    }
}

/// How a photo joins the diary: its meal type from the windows, and whether it joins an earlier meal.
public struct MergePolicy: Sendable {
    public var windows: MealWindows
    /// A photo of the same meal type taken within this many seconds of a photo of an existing meal on the same
    /// local day joins that meal. Default 45 minutes.
    public var gap: TimeInterval
    /// The zone that decides local days and times of day.
    public var timeZone: TimeZone
    /// False: every photo is a meal of its own (`analyze --log --no-merge`).
    public var merge: Bool

    public init(windows: MealWindows = .standard, gap: TimeInterval = 45 * 60, timeZone: TimeZone = .current, merge: Bool = true) {
        self.windows = windows; self.gap = gap; self.timeZone = timeZone; self.merge = merge
    }
}

/// Titles and tags, derived from a meal's foods and totals (documented in the README).
public enum MealRules {
    /// "Rice, Chicken curry & Naan": distinct food names in order; more than four become
    /// "A, B, C & 2 more"; no foods → the meal type ("Lunch").
    public static func title(foods: [MealFood], type: MealType) -> String {
        var names: [String] = []
        for f in foods {
            let n = f.name.isEmpty ? f.label : f.name
            if !n.isEmpty, !names.contains(n) { names.append(n) }
        }
        switch names.count {
        case 0: return type.rawValue.prefix(1).uppercased() + type.rawValue.dropFirst()
        case 1: return names[0]
        case 2...4: return names.dropLast().joined(separator: ", ") + " & " + names.last!
        default: return names.prefix(3).joined(separator: ", ") + " & \(names.count - 3) more"
        }
    }

    /// Tags from the totals (energy shares use 4 kcal/g protein and carbs, 9 kcal/g fat):
    /// - `high-protein`: protein ≥ 25 g and protein ≥ 20 % of kcal
    /// - `low-carb`: carbs < 26 % of kcal (meals of at least 100 kcal)
    /// - `high-fiber`: fiber ≥ 8 g
    /// - `balanced`: protein 15–35 %, carbs 40–65 %, fat 20–35 % of kcal
    /// - `light`: under 400 kcal (but above 0); `hearty`: over 900 kcal
    public static func tags(totals t: Macros) -> [String] {
        var tags: [String] = []
        let kcal = t.kcal
        func share(_ grams: Double, _ per: Double) -> Double { kcal > 0 ? grams * per / kcal : 0 }
        let p = share(t.proteinG, 4), c = share(t.carbsG, 4), f = share(t.fatG, 9)
        if t.proteinG >= 25, p >= 0.20 { tags.append("high-protein") }
        if kcal >= 100, c < 0.26 { tags.append("low-carb") }
        if t.fiberG >= 8 { tags.append("high-fiber") }
        if kcal > 0, (0.15...0.35).contains(p), (0.40...0.65).contains(c), (0.20...0.35).contains(f) {
            tags.append("balanced")
        }
        if kcal > 0, kcal < 400 { tags.append("light") }
        if kcal > 900 { tags.append("hearty") }
        return tags
    }
}
