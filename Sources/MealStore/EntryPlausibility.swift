public import FoodCore
public import Foundation

/// Entries that are possible but far more likely a typo (172 kg the day after 72.4 kg): the CLI refuses them with a
/// message that says how to store them anyway (`--force`).
public enum EntryPlausibility {
    /// More water than this in one entry needs confirming.
    public static let largeWaterMilliliters = 2_500.0

    /// Why `kilograms` at `time` looks like a typo next to the nearest earlier log, or nil when it does not: a change of
    /// more than 5 kg plus 0.5 kg per day between the two (several times what a body changes by in that time).
    public static func weightChange(_ kilograms: Double, at time: Date, previous: WeightLog?) -> String? {
        guard let previous else { return nil }
        let days = max(0, time.timeIntervalSince(previous.time) / 86_400)
        let change = kilograms - previous.kilograms
        guard abs(change) > 5 + 0.5 * days else { return nil }
        let when = days < 1 ? String(format: "%.0f h", days * 24) : String(format: "%.0f day%@", days.rounded(), days.rounded() == 1 ? "" : "s")
        return String(format: "%.1f kg is %.1f kg %@ than the %.1f kg logged %@ earlier", kilograms, abs(change),
                      change > 0 ? "more" : "less", previous.kilograms, when)
    }

    /// Why one water entry looks like a typo, or nil.
    public static func water(_ milliliters: Double) -> String? {
        milliliters > largeWaterMilliliters
            ? String(format: "%.0f ml in one drink is more than %.0f ml", milliliters, largeWaterMilliliters) : nil
    }
}
