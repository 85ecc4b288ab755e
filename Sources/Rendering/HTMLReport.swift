public import FoodCore
public import Foundation

/// What a report shows: meals from the diary, their thumbnails, the user's goals and the days to cover.
public struct ReportModel: Sendable {
    public var title: String
    public var meals: [MealRecord]
    /// Photo content hash (`MealPhoto.hash`) → JPEG bytes, embedded as `data:` URIs.
    public var thumbnails: [String: [UInt8]]
    public var goals: Goals?
    /// The days shown (inclusive, by local date); nil: from the first to the last meal's day. Meals outside are left out.
    public var range: ClosedRange<Date>?
    /// Local time for meals that carry no UTC offset, and for the range's days.
    public var timeZone: TimeZone
    /// Printed in the header when set.
    public var generatedAt: Date?

    public init(title: String, meals: [MealRecord], thumbnails: [String: [UInt8]] = [:], goals: Goals? = nil,
                range: ClosedRange<Date>? = nil, timeZone: TimeZone = .current, generatedAt: Date? = nil) {
        self.title = title; self.meals = meals; self.thumbnails = thumbnails; self.goals = goals
        self.range = range; self.timeZone = timeZone; self.generatedAt = generatedAt
    }
}

/// One local calendar day of a report.
public struct ReportDay: Sendable, Equatable {
    /// `yyyy-MM-dd`.
    public var date: String
    /// `Monday` …
    public var weekday: String
    /// The day's meals, earliest first.
    public var meals: [MealRecord]
    /// Sum of the meals' totals.
    public var totals: Macros
}

/// Protein, carbohydrate and fat as shares of their energy (4, 4 and 9 kcal per gram).
public struct MacroSplit: Sendable, Equatable {
    public var proteinKcal: Double
    public var carbsKcal: Double
    public var fatKcal: Double

    public init(_ m: Macros) {
        proteinKcal = max(0, m.proteinG) * 4; carbsKcal = max(0, m.carbsG) * 4; fatKcal = max(0, m.fatG) * 9
    }

    public var totalKcal: Double { proteinKcal + carbsKcal + fatKcal }
    /// Percentages 0…100 (all zero when there is nothing).
    public var percentages: (protein: Double, carbs: Double, fat: Double) {
        let t = totalKcal
        guard t > 0 else { return (0, 0, 0) }
        return (proteinKcal / t * 100, carbsKcal / t * 100, fatKcal / t * 100)
    }
}

/// One self-contained HTML page (inline CSS and SVG, thumbnails as `data:` URIs, no scripts, no external URL),
/// written as well-formed XHTML-compatible markup so XML tools read it too.
public enum HTMLReport {
    /// At most this many days are shown (about three years); a longer range keeps its last days.
    public static let maximumDays = 1100

    /// Every day of the report's range, days without meals included.
    public static func days(_ model: ReportModel) -> [ReportDay] {
        let located = model.meals.map { (meal: $0, day: localDay($0, model.timeZone)) }
        let first: Int, last: Int
        if let range = model.range {
            first = dayNumber(range.lowerBound, offset: model.timeZone.secondsFromGMT(for: range.lowerBound))
            last = dayNumber(range.upperBound, offset: model.timeZone.secondsFromGMT(for: range.upperBound))
        } else {
            guard let lo = located.map(\.day).min(), let hi = located.map(\.day).max() else { return [] }
            first = lo; last = hi
        }
        guard last >= first else { return [] }
        let start = max(first, last - maximumDays + 1)
        var byDay: [Int: [MealRecord]] = [:]
        for m in located where m.day >= start && m.day <= last { byDay[m.day, default: []].append(m.meal) }
        return (start...last).map { d in
            let meals = (byDay[d] ?? []).sorted { ($0.time, $0.type) < ($1.time, $1.type) }
            let totals = meals.reduce(Macros.zero) { $0 + $1.totals }.rounded
            return ReportDay(date: dateString(d), weekday: weekdayName(d), meals: meals, totals: totals)
        }
    }

    /// The page.
    public static func render(_ model: ReportModel) -> String {
        let days = days(model)
        let shown = days.filter { !$0.meals.isEmpty }
        let mealCount = shown.reduce(0) { $0 + $1.meals.count }
        let total = days.reduce(Macros.zero) { $0 + $1.totals }.rounded
        var h = Page()
        h.raw("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n")
        h.raw("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n")
        h.raw("<title>"); h.text(model.title); h.raw("</title>\n<style>\n\(css)</style>\n</head>\n<body>\n")
        h.raw("<header>\n<h1>"); h.text(model.title); h.raw("</h1>\n<p class=\"sub\">")
        if let f = days.first, let l = days.last {
            h.text(f.date == l.date ? f.date : "\(f.date) – \(l.date)")
            h.text(" · \(days.count) day\(days.count == 1 ? "" : "s") · \(mealCount) meal\(mealCount == 1 ? "" : "s")")
        } else {
            h.text("No meals")
        }
        if let g = model.generatedAt { h.text(" · made \(timestamp(g, model.timeZone))") }
        h.raw("</p>\n</header>\n")

        if !days.isEmpty {
            h.raw("<section class=\"overview\">\n")
            stats(&h, days: days, total: total, goals: model.goals)
            h.raw("<figure class=\"chart\">\n<figcaption>Calories per day</figcaption>\n")
            calorieChart(&h, days: days, goal: model.goals?.dailyKcal)
            h.raw("</figure>\n<figure class=\"macros\">\n<figcaption>Macro split (by kcal)</figcaption>\n")
            macroChart(&h, MacroSplit(total))
            h.raw("</figure>\n</section>\n")
        }
        for day in shown.reversed() {
            h.raw("<section class=\"day\" id=\"d\(day.date)\">\n<h2>"); h.text("\(day.weekday) \(day.date)")
            h.raw(" <span class=\"kcal\">"); h.text("\(number(day.totals.kcal)) kcal")
            if let goal = model.goals?.dailyKcal, goal > 0 { h.text(" of \(number(goal))") }
            h.raw("</span></h2>\n")
            if let goal = model.goals?.dailyKcal, goal > 0 {
                let pct = min(100, max(0, day.totals.kcal / goal * 100))
                h.raw("<div class=\"progress\"><div class=\"fill\(day.totals.kcal > goal ? " over" : "")\" style=\"width:\(number(pct, places: 1))%\"></div></div>\n")
            }
            for meal in day.meals { mealCard(&h, meal, model) }
            h.raw("</section>\n")
        }
        h.raw("<footer>Made by FoodMoment. Numbers are estimates from photos and food tables.</footer>\n</body>\n</html>\n")
        return h.out
    }

    /// Text for an element's content or an attribute value: markup characters become entities, and characters
    /// XML forbids (controls other than tab/newline, U+FFFE/U+FFFF) become U+FFFD.
    public static func escape(_ s: String) -> String {
        var out = ""
        out.reserveCapacity(s.utf8.count)
        for u in s.unicodeScalars {
            switch u {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            case "\t", "\n", "\r": out.unicodeScalars.append(u)
            default:
                let v = u.value
                if v < 0x20 || v == 0xFFFE || v == 0xFFFF || (0x7F...0x9F).contains(v) {
                    out += "\u{FFFD}"
                } else {
                    out.unicodeScalars.append(u)
                }
            }
        }
        return out
    }

    // MARK: - Parts

    private static func stats(_ h: inout Page, days: [ReportDay], total: Macros, goals: Goals?) {
        let logged = days.filter { !$0.meals.isEmpty }
        let average = logged.isEmpty ? 0 : total.kcal / Double(logged.count)
        h.raw("<div class=\"stats\">\n")
        func stat(_ label: String, _ value: String) {
            h.raw("<div class=\"stat\"><span class=\"v\">"); h.text(value); h.raw("</span><span class=\"l\">")
            h.text(label); h.raw("</span></div>\n")
        }
        stat("kcal in total", number(total.kcal))
        stat("kcal per logged day", number(average))
        if let goals, let goal = goals.dailyKcal, goal > 0 {
            // The same rule as `foodmoment stats`.
            let met = logged.filter { goals.kcalWithinGoal($0.totals.kcal) == true }.count
            stat("days within ±10 % of \(number(goal)) kcal", "\(met) of \(logged.count)")
        }
        stat("protein · carbs · fat (g)", "\(number(total.proteinG)) · \(number(total.carbsG)) · \(number(total.fatG))")
        h.raw("</div>\n")
    }

    /// One `rect.bar` per day (with `data-date` and `data-kcal`), a dashed goal line, kcal ticks and day labels.
    private static func calorieChart(_ h: inout Page, days: [ReportDay], goal: Double?) {
        let width = 720.0, height = 240.0, left = 44.0, right = 8.0, top = 12.0, bottom = 26.0
        let plotW = width - left - right, plotH = height - top - bottom
        let peak = max(days.map(\.totals.kcal).max() ?? 0, goal ?? 0, 100)
        let step = niceStep(peak / 4)
        let yMax = (peak * 1.08 / step).rounded(.up) * step
        func y(_ kcal: Double) -> Double { top + plotH * (1 - kcal / yMax) }
        h.raw("<svg class=\"bars\" viewBox=\"0 0 \(number(width)) \(number(height))\" role=\"img\" aria-label=\"Calories per day\">\n")
        var tick = 0.0
        while tick <= yMax + 0.5 {
            let ty = number(y(tick), places: 1)
            h.raw("<line class=\"grid\" x1=\"\(number(left))\" y1=\"\(ty)\" x2=\"\(number(width - right))\" y2=\"\(ty)\"/>")
            h.raw("<text class=\"tick\" x=\"\(number(left - 4))\" y=\"\(ty)\" text-anchor=\"end\" dominant-baseline=\"middle\">\(number(tick))</text>\n")
            tick += step
        }
        let slot = plotW / Double(days.count)
        let barW = max(1, slot * 0.7)
        let labelEvery = max(1, Int((Double(days.count) / 16).rounded(.up)))
        for (i, day) in days.enumerated() {
            let x = left + slot * Double(i) + (slot - barW) / 2
            let kcal = max(0, day.totals.kcal)
            let over = goal.map { $0 > 0 && kcal > $0 } ?? false
            h.raw("<rect class=\"bar\(over ? " over" : "")\" data-date=\"\(day.date)\" data-kcal=\"\(number(kcal))\" ")
            h.raw("x=\"\(number(x, places: 2))\" y=\"\(number(y(kcal), places: 2))\" width=\"\(number(barW, places: 2))\" ")
            h.raw("height=\"\(number(max(0, top + plotH - y(kcal)), places: 2))\"><title>")
            h.text("\(day.weekday) \(day.date): \(number(kcal)) kcal, \(day.meals.count) meal\(day.meals.count == 1 ? "" : "s")")
            h.raw("</title></rect>\n")
            if i % labelEvery == 0 {
                let label = days.count <= 7 ? String(day.weekday.prefix(3)) : String(day.date.suffix(2))
                h.raw("<text class=\"day\" x=\"\(number(x + barW / 2, places: 1))\" y=\"\(number(height - 8))\" text-anchor=\"middle\">")
                h.text(label); h.raw("</text>\n")
            }
        }
        if let goal, goal > 0 {
            let gy = number(y(goal), places: 1)
            h.raw("<line class=\"goal\" x1=\"\(number(left))\" y1=\"\(gy)\" x2=\"\(number(width - right))\" y2=\"\(gy)\"/>")
            h.raw("<text class=\"goal-label\" x=\"\(number(width - right - 2))\" y=\"\(number(y(goal) - 4, places: 1))\" text-anchor=\"end\">")
            h.text("goal \(number(goal)) kcal"); h.raw("</text>\n")
        }
        h.raw("</svg>\n")
    }

    /// A ring with one arc per macro (circumference 100, so dash lengths are percentages) and a legend.
    private static func macroChart(_ h: inout Page, _ split: MacroSplit) {
        let p = split.percentages
        h.raw("<div class=\"macro-row\">\n<svg class=\"ring\" viewBox=\"0 0 42 42\" role=\"img\" aria-label=\"Macro split\">\n")
        h.raw("<circle class=\"track\" cx=\"21\" cy=\"21\" r=\"15.9155\"/>\n")
        var start = 0.0
        for (name, pct) in [("protein", p.protein), ("carbs", p.carbs), ("fat", p.fat)] where pct > 0 {
            h.raw("<circle class=\"arc \(name)\" data-percent=\"\(number(pct, places: 1))\" cx=\"21\" cy=\"21\" r=\"15.9155\" ")
            h.raw("stroke-dasharray=\"\(number(pct, places: 3)) \(number(100 - pct, places: 3))\" ")
            h.raw("stroke-dashoffset=\"\(number(25 - start, places: 3))\"/>\n")
            start += pct
        }
        h.raw("<text x=\"21\" y=\"22\" text-anchor=\"middle\" dominant-baseline=\"middle\" class=\"ring-label\">")
        // The largest share in the middle (a kcal figure here would differ from the food tables' kcal: Atwater vs measured).
        let top = [("protein", p.protein), ("carbs", p.carbs), ("fat", p.fat)].max { $0.1 < $1.1 }!
        h.text(split.totalKcal > 0 ? "\(number(top.1))% \(top.0)" : "no data"); h.raw("</text>\n</svg>\n<ul class=\"legend\">\n")
        for (name, label, pct, kcal) in [("protein", "Protein", p.protein, split.proteinKcal), ("carbs", "Carbs", p.carbs, split.carbsKcal),
                                         ("fat", "Fat", p.fat, split.fatKcal)] {
            h.raw("<li><span class=\"swatch \(name)\"></span>"); h.text("\(label) \(number(pct))% · \(number(kcal)) kcal"); h.raw("</li>\n")
        }
        h.raw("</ul>\n</div>\n")
    }

    private static func mealCard(_ h: inout Page, _ meal: MealRecord, _ model: ReportModel) {
        h.raw("<article class=\"meal\">\n<div class=\"thumbs\">")
        var any = false
        for photo in meal.photos {
            guard let jpeg = model.thumbnails[photo.hash], jpeg.count > 3, jpeg[0] == 0xFF, jpeg[1] == 0xD8 else { continue }
            h.raw("<img src=\"data:image/jpeg;base64,\(Base64.encode(jpeg))\" alt=\"")
            h.text("Photo of \(meal.title.isEmpty ? meal.type.rawValue : meal.title)"); h.raw("\"/>")
            any = true
        }
        if !any {
            h.raw("<div class=\"nophoto\">"); h.text(meal.foods.first?.emoji.isEmpty == false ? meal.foods[0].emoji : "🍽️")
            h.raw("</div>")
        }
        h.raw("</div>\n<div class=\"body\">\n<h3>")
        let offset = meal.utcOffsetSeconds ?? model.timeZone.secondsFromGMT(for: meal.time)
        h.text("\(meal.type.rawValue.capitalized) · \(clock(meal.time, offset: offset))")
        h.raw("</h3>\n")
        if !meal.title.isEmpty { h.raw("<p class=\"title\">"); h.text(meal.title); h.raw("</p>\n") }
        if !meal.tags.isEmpty {
            h.raw("<p class=\"tags\">")
            for tag in meal.tags { h.raw("<span class=\"tag\">"); h.text(tag); h.raw("</span> ") }
            h.raw("</p>\n")
        }
        h.raw("<table class=\"foods\">\n<tbody>\n")
        for food in meal.foods {
            h.raw("<tr><td class=\"name\">")
            h.text([food.emoji, food.name].filter { !$0.isEmpty }.joined(separator: " "))
            if !food.nameZh.isEmpty { h.raw(" <span class=\"zh\">"); h.text(food.nameZh); h.raw("</span>") }
            h.raw("</td><td class=\"num\">"); h.text("\(number(food.grams)) g")
            h.raw("</td><td class=\"num\">"); h.text("\(number(food.nutrients.kcal)) kcal"); h.raw("</td></tr>\n")
        }
        let t = meal.totals
        h.raw("</tbody>\n<tfoot><tr><td>Total</td><td class=\"num\">")
        h.text("\(number(meal.foods.reduce(0) { $0 + $1.grams })) g")
        h.raw("</td><td class=\"num total-kcal\" data-kcal=\"\(number(t.kcal))\">"); h.text("\(number(t.kcal)) kcal")
        h.raw("</td></tr></tfoot>\n</table>\n<p class=\"macros-line\">")
        h.text("Protein \(number(t.proteinG, places: 1)) g · Carbs \(number(t.carbsG, places: 1)) g · Fat \(number(t.fatG, places: 1)) g · Fibre \(number(t.fiberG, places: 1)) g"
               + (t.sugarsG.map { " · Sugars \(number($0, places: 1)) g" } ?? "") + (t.sodiumMg.map { " · Sodium \(number($0)) mg" } ?? ""))
        h.raw("</p>\n")
        if let analysis = meal.analysis, !analysis.isEmpty {
            h.raw("<p class=\"analysis\">"); h.text(analysis); h.raw("</p>\n")
        }
        h.raw("</div>\n</article>\n")
    }

    // MARK: - Helpers

    struct Page {
        var out = ""
        mutating func raw(_ s: String) { out += s }
        mutating func text(_ s: String) { out += HTMLReport.escape(s) }
    }

    /// Days since 1970-01-01 of the local date at `offset` seconds from UTC.
    static func dayNumber(_ date: Date, offset: Int) -> Int {
        let t = date.timeIntervalSince1970 + Double(offset)
        guard t.isFinite else { return 0 }
        return Int((max(-1e12, min(1e12, t)) / 86_400).rounded(.down))
    }

    static func localDay(_ meal: MealRecord, _ zone: TimeZone) -> Int {
        dayNumber(meal.time, offset: meal.utcOffsetSeconds ?? zone.secondsFromGMT(for: meal.time))
    }

    /// `yyyy-MM-dd` of a day number (proleptic Gregorian).
    static func dateString(_ days: Int) -> String {
        let (y, m, d) = CivilDate.fromDays(Int64(days))
        func two(_ v: Int64) -> String { v < 10 ? "0\(v)" : "\(v)" }
        return "\(y)-\(two(m))-\(two(d))"
    }

    static func weekdayName(_ days: Int) -> String {
        let names = ["Thursday", "Friday", "Saturday", "Sunday", "Monday", "Tuesday", "Wednesday"]
        return names[((days % 7) + 7) % 7]
    }

    static func clock(_ date: Date, offset: Int) -> String {
        let t = date.timeIntervalSince1970 + Double(offset)
        guard t.isFinite else { return "--:--" }
        let secs = ((Int(max(-1e12, min(1e12, t)).rounded(.down)) % 86_400) + 86_400) % 86_400
        let hh = secs / 3600, mm = secs % 3600 / 60
        return "\(hh < 10 ? "0" : "")\(hh):\(mm < 10 ? "0" : "")\(mm)"
    }

    static func timestamp(_ date: Date, _ zone: TimeZone) -> String {
        let offset = zone.secondsFromGMT(for: date)
        return "\(dateString(dayNumber(date, offset: offset))) \(clock(date, offset: offset))"
    }

    /// `v` rounded to `places` decimals, without trailing zeros (`1834`, `12.5`).
    static func number(_ v: Double, places: Int = 0) -> String {
        guard v.isFinite else { return "0" }
        var m = 1.0
        for _ in 0..<places { m *= 10 }
        let r = (v * m).rounded() / m
        if r == r.rounded() && abs(r) < 1e15 { return String(Int(r)) }
        var s = String(r)
        if s.contains("e") { return String(Int(r.rounded())) }
        while s.hasSuffix("0") { s.removeLast() }
        if s.hasSuffix(".") { s.removeLast() }
        return s
    }

    /// 1, 2, 2.5 or 5 × a power of ten, at least `raw`.
    static func niceStep(_ raw: Double) -> Double {
        guard raw > 0, raw.isFinite else { return 1 }
        var p = 1.0
        while p * 10 <= raw { p *= 10 }
        while p > raw { p /= 10 }
        for f in [1.0, 2, 2.5, 5, 10] where f * p >= raw { return f * p }
        return 10 * p
    }

    /// No `url(`, no `@import`, nothing that loads.
    static let css = """
    :root { --ink: #1d1d1f; --muted: #6e6e73; --card: #ffffff; --bg: #f4f2ee; --line: #e3e0da;
      --protein: #e07a5f; --carbs: #f2cc8f; --fat: #81b29a; --bar: #3d7dd8; --over: #d1495b; --goal: #1d1d1f; }
    * { box-sizing: border-box; }
    body { margin: 0; padding: 24px; background: var(--bg); color: var(--ink);
      font: 15px/1.45 system-ui, -apple-system, "Segoe UI", "Noto Sans", "Noto Sans CJK SC", "PingFang SC", sans-serif; }
    header, section, footer { max-width: 960px; margin: 0 auto 20px; }
    h1 { margin: 0; font-size: 28px; }
    .sub { margin: 4px 0 0; color: var(--muted); }
    .overview { display: grid; grid-template-columns: 1fr 260px; gap: 16px; }
    .stats { grid-column: 1 / -1; display: flex; flex-wrap: wrap; gap: 12px; }
    .stat { background: var(--card); border-radius: 12px; padding: 10px 16px; flex: 1 1 160px; }
    .stat .v { display: block; font-size: 22px; font-weight: 700; }
    .stat .l { color: var(--muted); font-size: 13px; }
    figure { margin: 0; background: var(--card); border-radius: 12px; padding: 12px 16px; }
    figcaption { font-weight: 600; margin-bottom: 6px; }
    svg.bars { width: 100%; height: auto; display: block; }
    .bars .bar { fill: var(--bar); }
    .bars .bar.over { fill: var(--over); }
    .bars .grid { stroke: var(--line); stroke-width: 1; }
    .bars .goal { stroke: var(--goal); stroke-width: 1.5; stroke-dasharray: 6 4; }
    .bars text { font-size: 11px; fill: var(--muted); }
    .bars .goal-label { fill: var(--goal); font-weight: 600; }
    .macro-row { display: flex; flex-direction: column; align-items: center; gap: 8px; }
    svg.ring { width: 170px; height: 170px; }
    .ring circle { fill: none; stroke-width: 6; }
    .ring .track { stroke: var(--line); }
    .ring .protein { stroke: var(--protein); }
    .ring .carbs { stroke: var(--carbs); }
    .ring .fat { stroke: var(--fat); }
    .ring-label { font-size: 4.2px; font-weight: 700; fill: var(--ink); }
    .legend { list-style: none; margin: 0; padding: 0; font-size: 14px; }
    .swatch { display: inline-block; width: 11px; height: 11px; border-radius: 3px; margin-right: 6px; }
    .swatch.protein { background: var(--protein); } .swatch.carbs { background: var(--carbs); } .swatch.fat { background: var(--fat); }
    .day h2 { font-size: 19px; margin: 28px 0 8px; display: flex; justify-content: space-between; }
    .day h2 .kcal { color: var(--muted); font-weight: 600; }
    .progress { height: 6px; background: var(--line); border-radius: 3px; overflow: hidden; margin-bottom: 12px; }
    .progress .fill { height: 100%; background: var(--bar); }
    .progress .fill.over { background: var(--over); }
    .meal { display: flex; gap: 16px; background: var(--card); border-radius: 12px; padding: 12px; margin-bottom: 12px; }
    .thumbs { display: flex; flex-direction: column; gap: 6px; flex: 0 0 120px; }
    .thumbs img { width: 120px; height: 120px; object-fit: cover; border-radius: 8px; display: block; }
    .nophoto { width: 120px; height: 120px; border-radius: 8px; background: var(--bg); font-size: 48px;
      display: flex; align-items: center; justify-content: center; }
    .body { flex: 1; min-width: 0; }
    .body h3 { margin: 0; font-size: 16px; }
    .title { margin: 2px 0 6px; color: var(--muted); }
    .tag { display: inline-block; font-size: 12px; background: var(--bg); border-radius: 10px; padding: 1px 8px; }
    .foods { width: 100%; border-collapse: collapse; font-size: 14px; }
    .foods td { padding: 3px 0; border-bottom: 1px solid var(--line); }
    .foods .num { text-align: right; white-space: nowrap; padding-left: 12px; font-variant-numeric: tabular-nums; }
    .foods .zh { color: var(--muted); }
    .foods tfoot td { font-weight: 700; border-bottom: none; }
    .macros-line, .analysis { margin: 6px 0 0; font-size: 13px; color: var(--muted); }
    footer { color: var(--muted); font-size: 12px; }
    @media (max-width: 640px) { body { padding: 12px; } .overview { grid-template-columns: 1fr; } .meal { flex-direction: column; } }

    """
}
