import ArgumentParser
import FoodCore
import Foundation
import MealStore
import FoodMoment
import FoodRecognition
import FoodTraining

/// `foodmoment report`: one self-contained HTML page of the diary (thumbnails, meal totals, daily chart, macros).
struct ReportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "Write the diary as one self-contained HTML page (opens in any browser, works offline).",
        discussion: """
        The page holds per-day meal cards with thumbnails (embedded, so the page can be mailed or archived), \
        foods with grams and kcal, a daily calorie chart against your goal and the macro split, as inline SVG. \
        No scripts, no external URLs.

        Which meals: those in --range around --date (default: this week), or, with FOLDER, every meal that has a \
        photo under that folder (analyse it first with `foodmoment analyze FOLDER --log`).

        Examples:
          foodmoment diary report --range week --html week.html
          foodmoment diary report --range month --date 2026-10-01 --html october.html
          foodmoment report ~/Photos/trip --html trip.html
        """
    )

    @Argument(help: "Report the meals whose photos are under this folder (instead of a date range).")
    var folder: String?

    @OptionGroup var store: StoreOptions

    @Option(help: ArgumentHelp("day, week, month or year.", valueName: "range")) var range: String = "week"
    @Option(help: ArgumentHelp("A day inside the period (YYYY-MM-DD, today, yesterday).", valueName: "day")) var date = "today"
    @Option(help: ArgumentHelp("Where to write the page.", valueName: "file")) var html: String
    @Option(help: "Title of the page.") var title: String?

    func validate() throws {
        guard StatsRange(rawValue: range) != nil else { throw ValidationError("bad --range \(range): use day, week, month or year") }
        if let folder {
            var isDir: ObjCBool = false
            guard FileManager.default.fileExists(atPath: folder, isDirectory: &isDir), isDir.boolValue else {
                throw ValidationError("no such folder: \(folder)")
            }
        }
    }

    func run() throws {
        let db = try store.open()
        let zone = LocalDates.zone
        let meals: [MealRecord]
        var bounds: ClosedRange<Date>?
        let heading: String
        if let folder {
            let root = URL(fileURLWithPath: folder).standardizedFileURL.resolvingSymlinksInPath().path + "/"
            meals = try storeCall { try db.allMeals() }.filter { meal in
                meal.photos.contains { URL(fileURLWithPath: $0.path).standardizedFileURL.resolvingSymlinksInPath().path.hasPrefix(root) }
            }
            heading = "Meals from \(folder)"
        } else {
            let period = Stats.period(StatsRange(rawValue: range)!, containing: try LocalDates.day(date))
            let start = period.start.start(in: zone), end = period.end.adding(days: 1).start(in: zone)
            meals = try storeCall { try db.meals(from: start, to: end) }
            bounds = start...end.addingTimeInterval(-1)
            heading = "FoodMoment \(range): \(period.start) – \(period.end)"
        }
        let goals = try storeCall { try db.goals() }
        let (page, warnings) = ReportBuilder().build(title: title ?? heading, meals: meals, goals: goals, range: bounds, timeZone: zone)
        for w in warnings { Output.note("note: \(w)") }
        let writer = try LineWriter(path: html)
        writer.write(page, newline: false)
        writer.close()
        let photos = meals.reduce(0) { $0 + $1.photos.count }
        print("wrote \(html): \(meals.count) meals, \(photos) photos, \(page.utf8.count / 1024) KB")
        if meals.isEmpty { Output.note("note: no meals in that \(folder == nil ? "period" : "folder"); log some with `foodmoment analyze PHOTOS --log`") }
    }
}
