import FoodCore
import FoodMoment
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import MealStore
import Nutrition

/// The open SQLite diaries of `LocalStore`: the most recently used `capacity` (512) stay open (each holds a connection pool,
/// its caches and descriptors), the least recently used is closed once no request holds it.
final class UserStores: @unchecked Sendable {
    private let folders: UserFolders
    private let capacity: Int
    private let lock = NSLock()
    private var open: [UserID: (store: MealStore, used: UInt64)] = [:]
    private var tick: UInt64 = 0

    init(dataDirectory: String, capacity: Int = 512) {
        folders = UserFolders(dataDirectory: dataDirectory)
        self.capacity = max(1, capacity)
    }

    var openCount: Int { lock.withLock { open.count } }

    func store(for user: UserID) throws -> MealStore {
        var evicted: MealStore?
        defer {
            // Closing a pool checkpoints its WAL: done off the request path and outside the lock.
            if let evicted { DispatchQueue.global(qos: .utility).async { withExtendedLifetime(evicted) {} } }
        }
        lock.lock(); defer { lock.unlock() }
        tick += 1
        if let s = open[user] { open[user]!.used = tick; return s.store }
        // Days, meal types and windows are computed per request in the caller's time zone; the store keeps UTC.
        let s = try MealStore(path: folders.folder(user) + "/meals.sqlite", timeZone: TimeZone(identifier: "UTC")!)
        if open.count >= capacity, let oldest = open.min(by: { $0.value.used < $1.value.used })?.key {
            evicted = open.removeValue(forKey: oldest)?.store
        }
        open[user] = (s, tick)
        return s
    }

    /// Closes the user's diary and removes their folder (diary and photos).
    func remove(_ user: UserID) throws {
        lock.lock(); defer { lock.unlock() }
        open[user] = nil
        try folders.remove(user)
    }
}

/// `POST /api/v1/meals`.
struct NewMeal: Decodable {
    struct Item: Decodable {
        /// A recognition label (`banana`, as `detected_foods[].label` gives it) or a food's name.
        var food: String
        var grams: Double?
        /// Where in the photo (`detected_foods[].box`), with `image_id`.
        var box: NormalizedBox?
        /// How sure the recogniser was (`detected_foods[].confidence`, 0–1); default 1 (a food the person named).
        var confidence: Double?
    }
    var foods: [Item]
    var time: Date?
    var type: MealType?
    var title: String?
    /// IANA time zone of the user (`Asia/Shanghai`); decides the meal type when none is given. Default UTC.
    var tz: String?
    /// The photo analyze kept (`store_photo=true`, its `image_id`): the meal keeps it, so a later correction
    /// (`PUT /meals/{id}`) can teach the user's own foods from it.
    var imageId: String?
    /// The analysis's own words about the photo (`ai_analysis`), kept with the meal (at most 4,000 characters).
    var analysis: String?
    enum CodingKeys: String, CodingKey { case foods, time, type, title, tz, analysis, imageId = "image_id" }
}

struct MealRoutes: Sendable {
    let store: any ServerStore
    let nutrition: NutritionDatabase
    let folders: UserFolders
    /// Embeds a corrected meal's photo (teaching runs on the analyzers, like analysis).
    let pool: AnalyzerPool
    let timeout: Double
    let logger: Logger

    static func user(_ context: APIContext) throws -> UserID {
        guard let user = context.user else { throw APIError.unauthorized }
        return user
    }

    static func timeZone(_ name: String?) throws -> TimeZone {
        guard let name, !name.isEmpty else { return TimeZone(identifier: "UTC")! }
        guard let tz = TimeZone(identifier: name) else {
            throw APIError.badRequest("invalid_time_zone", "tz \(name) is not an IANA time zone (e.g. Europe/Paris, Asia/Shanghai)")
        }
        return tz
    }

    /// Diary values as the CLI's `--json` prints them (ISO 8601 times with milliseconds).
    static func json(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
        try JSONResponse.make(value, status: status, encoder: DiaryExport.encoder())
    }

    /// The time zone a request means: `tz=`, else the profile's, else UTC.
    static func zone(_ request: Request, _ context: APIContext) throws -> TimeZone {
        if let name = request.uri.queryParameters.get("tz") { return try timeZone(name) }
        return context.profileTimeZone ?? TimeZone(identifier: "UTC")!
    }

    /// The local day a list asks for: `date=YYYY-MM-DD` in the request's time zone.
    static func day(_ request: Request, _ context: APIContext) throws -> CivilDay {
        let tz = try zone(request, context)
        guard let text = request.uri.queryParameters.get("date"), let day = CivilDay(text, timeZone: tz) else {
            throw APIError.badRequest("invalid_date", "give the day as date=YYYY-MM-DD (the user's local day; tz= sets the time zone, default UTC)")
        }
        return day
    }

    /// A JSON body of at most `limit` bytes, or a 400 that shows the shape expected (`example`) and what was wrong.
    static func body<T: Decodable>(_ type: T.Type, of request: Request, limit: Int, example: String) async throws -> T {
        var request = request
        let body = try await request.collectBody(upTo: limit)
        do {
            return try DiaryExport.decoder().decode(T.self, from: Data(body.readableBytesView))
        } catch {
            throw APIError.badRequest("invalid_body", "the body must be JSON like \(example) (\(reason(error)))")
        }
    }

    /// Food `i` of a body, resolved in the tables like `meal add --food`: unknown → 422, malformed → 400.
    func food(_ name: String, grams: Double?, at i: Int) throws -> MealFood {
        do { return try ManualFood.make(name: name, grams: grams, db: nutrition) } catch {
            if case .notFound = error { throw APIError(.unprocessableContent, code: "unknown_food", "foods[\(i)]: \(error.description)") }
            throw APIError.badRequest("invalid_foods", "foods[\(i)]: \(error.description)")
        }
    }

    @Sendable func create(_ request: Request, context: APIContext) async throws -> Response {
        let user = try Self.user(context)
        let meal = try await Self.body(NewMeal.self, of: request, limit: 1 << 20, example: #"{"foods": [{"food": "banana", "grams": 120}], "#
                                       + #""time": "2026-11-26T08:00:00Z", "type": "breakfast", "tz": "Europe/Paris"}"#)
        guard (1...50).contains(meal.foods.count) else {
            throw APIError.badRequest("invalid_foods", "a meal has 1 to 50 foods, not \(meal.foods.count)")
        }
        let tz = try meal.tz.map { try Self.timeZone($0) } ?? context.profileTimeZone ?? TimeZone(identifier: "UTC")!
        let time = meal.time ?? Date()
        var photos: [MealPhoto] = []
        if let id = meal.imageId {
            guard let path = folders.storedPhoto(id, for: user) else {
                throw APIError(.unprocessableContent, code: "unknown_image",
                               "no photo \(id.prefix(64)) is kept for you: send it to POST /api/v1/food/analyze?store_photo=true and use the image_id it returns")
            }
            photos = [MealPhoto(hash: id, path: path, takenAt: time, timeSource: .given)]
        }
        var foods: [MealFood] = []
        for (i, item) in meal.foods.enumerated() {
            var f = try food(item.food, grams: item.grams, at: i)
            if let box = item.box {
                guard photos.count == 1 else { throw APIError.badRequest("invalid_foods", "foods[\(i)]: a box needs the meal's image_id") }
                guard [box.x, box.y, box.w, box.h].allSatisfy({ $0.isFinite && $0 >= 0 && $0 <= 1 }), box.w > 0, box.h > 0,
                      box.x + box.w <= 1.001, box.y + box.h <= 1.001 else {
                    throw APIError.badRequest("invalid_foods", "foods[\(i)]: box x, y, w, h are fractions of the photo (0–1, w and h > 0)")
                }
                f.box = box
            }
            if let c = item.confidence {
                guard c.isFinite, (0...1).contains(c) else { throw APIError.badRequest("invalid_foods", "foods[\(i)]: confidence is 0–1, not \(c)") }
                f.confidence = c
            }
            f.photoHash = photos.first?.hash
            foods.append(f)
        }
        if let text = meal.analysis, text.count > 4000 {
            throw APIError.badRequest("invalid_analysis", "analysis is at most 4,000 characters, not \(text.count)")
        }
        let diary = try await store.diary(for: user)
        var record: MealRecord
        do {
            record = try await diary.addMeal(time: time, type: meal.type ?? MealWindows.standard.type(at: time, timeZone: tz), foods: foods,
                                             title: meal.title, photos: photos)
        } catch let error as MealStoreError {
            if case .photoInAnotherMeal(_, let other) = error {
                throw APIError(.conflict, code: "photo_already_logged",
                               "this photo is already in meal \(other): change that meal (PUT /api/v1/meals/\(other)) or delete it first")
            }
            guard case .invalidValue = error else { throw error }
            throw APIError(.unprocessableContent, code: "invalid_meal", error.description)
        }
        if let text = meal.analysis?.trimmingCharacters(in: .whitespacesAndNewlines), !text.isEmpty {
            // The stores' one way to set a meal's text (the same edit `meal edit` makes); the foods are untouched.
            record = try await diary.edit(mealID: record.id, [.analysis(text)])
        }
        return try Self.json(record, status: .created)
    }

    @Sendable func list(_ request: Request, context: APIContext) async throws -> Response {
        let user = try Self.user(context)
        let day = try Self.day(request, context)
        let meals = try await store.diary(for: user).meals(from: day.start, to: day.end)
        return try Self.json(["meals": meals])
    }

    @Sendable func get(_ request: Request, context: APIContext) async throws -> Response {
        try Self.json(try await find(context))
    }

    /// `PUT /meals/{id}`: the fields given change; `foods`, when given, is the meal's new list — `{"index": i, "grams": g}`
    /// keeps food i (0-based, as GET lists them) with new grams, `{"food": "rice", "grams": 150}` adds one,
    /// `{"index": i, "food": "mapo tofu"}` corrects food i (its box and grams stay unless grams are given). Title, tags
    /// and totals follow the foods, as `meal edit` in the CLI. A correction of a meal with a kept photo teaches the
    /// user's own foods (header `FoodMoment-Taught`), unless the user turned that off (`PUT /user/learning`).
    struct MealUpdate: Decodable {
        struct Item: Decodable {
            var index: Int?
            var food: String?
            var grams: Double?
        }
        var type: MealType?
        var time: Date?
        var title: String?
        var foods: [Item]?
    }

    @Sendable func update(_ request: Request, context: APIContext) async throws -> Response {
        let meal = try await find(context)
        let change = try await Self.body(MealUpdate.self, of: request, limit: 1 << 20,
                                         example: #"{"foods": [{"index": 0, "grams": 90}, {"food": "rice", "grams": 150}], "type": "lunch"}"#)
        var edits: [MealEdit] = []
        if let t = change.type { edits.append(.type(t)) }
        if let t = change.time { edits.append(.time(t)) }
        if let t = change.title { edits.append(.title(t)) }
        var corrections: [Correction] = []
        if let items = change.foods {
            guard (1...50).contains(items.count) else { throw APIError.badRequest("invalid_foods", "a meal has 1 to 50 foods, not \(items.count)") }
            var foods: [MealFood] = []
            for (i, item) in items.enumerated() {
                if let index = item.index, !meal.foods.indices.contains(index) {
                    throw APIError(.unprocessableContent, code: "invalid_foods",
                                   "foods[\(i)]: the meal has foods 0…\(meal.foods.count - 1), not \(index)")
                }
                if let g = item.grams, !(g.isFinite && g >= 0 && g <= 20_000) {
                    throw APIError.badRequest("invalid_foods", "foods[\(i)]: grams must be 0–20000")
                }
                switch (item.index, item.food) {
                case (let index?, nil):
                    var food = meal.foods[index]
                    if let g = item.grams { food.setGrams(g) }
                    foods.append(food)
                case (let index?, let name?):
                    // A correction: the new food where the old one was seen, with its grams unless new ones are given.
                    let food = DiaryRules.replacing(meal.foods[index], with: try food(name, grams: item.grams, at: i))
                    foods.append(food)
                    corrections.append(Correction(meal: meal, index: index, food: food))
                case (nil, let name?):
                    foods.append(try food(name, grams: item.grams, at: i))
                case (nil, nil):
                    throw APIError.badRequest("invalid_foods", "foods[\(i)]: give index (a food of this meal), food (a name), or both (food index is now that food)")
                }
            }
            edits += meal.foods.indices.reversed().map { MealEdit.deleteFood(index: $0) }
            edits += foods.map { MealEdit.addFood($0) }
        }
        guard !edits.isEmpty else { throw APIError.badRequest("nothing_to_change", "give at least one of type, time, title, foods") }
        let user = try Self.user(context)
        let personal = folders.personalFoods(user)
        // Corrections that will teach: the store must be readable before the diary changes.
        var teach: [Correction] = []
        for c in corrections {
            do {
                if try c.plan(personal) == nil { teach.append(c) }
            } catch {
                logger.warning("taught foods unreadable", metadata: ["path": "\(personal.matcherPath)", "error": "\(error)"])
                throw LearningRoutes.unreadable
            }
        }
        var response: Response
        do {
            response = try Self.json(try await store.diary(for: user).edit(mealID: meal.id, edits))
        } catch let error as MealStoreError {
            guard case .invalidValue = error else { throw error }
            throw APIError(.unprocessableContent, code: "invalid_meal", error.description)
        }
        var taught: [String] = []
        let folder = folders.folder(user), logger = self.logger
        for c in teach {
            // The meal is changed; a photo that cannot be used only means nothing is taught (logged, not an error).
            let outcome: Correction.Outcome? = try? await pool.run(timeout: .milliseconds(Int64(timeout * 1000))) { analyzer in
                do { return try c.teach(personal, analyzer: analyzer, photoDirectory: folder) } catch {
                    logger.warning("correction not taught", metadata: ["error": "\(error)"])
                    return nil
                }
            } ?? nil
            if case .taught(let label, _)? = outcome { taught.append(label) }
        }
        if !taught.isEmpty { response.headers[.foodMomentTaught] = taught.joined(separator: ",") }
        return response
    }

    @Sendable func delete(_ request: Request, context: APIContext) async throws -> Response {
        let meal = try await find(context)
        _ = try await store.diary(for: try Self.user(context)).deleteMeal(id: meal.id)
        return Response(status: .noContent)
    }

    /// `GET /meals/search?q=`: the caller's meals, newest first, whose title or a food's name (English or Chinese, the
    /// recognition label, the table's name) contains `q`, or whose food is one the tables find for `q` — so 米饭 finds a
    /// meal logged as "rice" in English, and "rice" one logged in Chinese.
    @Sendable func search(_ request: Request, context: APIContext) async throws -> Response {
        let user = try Self.user(context)
        let q = try Routes.query(request, max: 100, what: "the food or title to look for", example: "/api/v1/meals/search?q=rice")
        let limit = try Routes.limit(request, in: 1...100, default: 20)
        let needle = q.lowercased()
        // The tables' foods for the query (both languages): a meal food with one of these ids matches too.
        let tableIDs = Set(nutrition.search(q, limit: 25).map(\.food.id))
        func matches(_ m: MealRecord) -> Bool {
            if m.title.lowercased().contains(needle) { return true }
            return m.foods.contains { f in
                [f.name, f.nameZh, f.label, f.foodName ?? ""].contains { $0.lowercased().contains(needle) }
                    || f.foodId.map(tableIDs.contains) == true
            }
        }
        let all = try await store.diary(for: user).meals(from: .distantPast, to: .distantFuture)
        let found = all.filter(matches).sorted { $0.time > $1.time }
        return try Self.json(MealSearch(query: q, total: found.count, meals: Array(found.prefix(limit))))
    }

    struct MealSearch: Encodable {
        var query: String
        var total: Int
        var meals: [MealRecord]
    }

    /// `GET /export?format=json|csv`: the caller's whole diary as a download — JSON in the CLI's export format (so
    /// `foodmoment meal import` reads it), CSV one row per food as `meal export --csv` writes it. Photos are named by their
    /// `image_url`, not by where the server keeps them.
    @Sendable func export(_ request: Request, context: APIContext) async throws -> Response {
        let user = try Self.user(context)
        let format = request.uri.queryParameters.get("format") ?? "json"
        guard format == "json" || format == "csv" else {
            throw APIError.badRequest("invalid_format", "format must be json or csv, not \(format.prefix(20))")
        }
        let tz = try Self.zone(request, context)
        let diary = try await store.diary(for: user)
        var meals = try await diary.meals(from: .distantPast, to: .distantFuture)
        for i in meals.indices {
            for j in meals[i].photos.indices { meals[i].photos[j].path = "/api/v1/images/" + meals[i].photos[j].hash }
        }
        let stamp = LocalDay(Date(), timeZone: tz).description
        let body: Data, type: String
        if format == "csv" {
            body = Data(DiaryCSV.render(meals, timeZone: tz).utf8)
            type = "text/csv; charset=utf-8"
        } else {
            let doc = DiaryExport(meals: meals, water: try await diary.waterLogs(from: .distantPast, to: .distantFuture),
                                  weight: try await diary.weightLogs(from: .distantPast, to: .distantFuture),
                                  goals: try await diary.goals(), achievements: try await diary.achievements())
            body = try doc.jsonData()
            type = "application/json"
        }
        return Response(status: .ok, headers: [.contentType: type, .cacheControl: "no-store",
                                               .contentDisposition: "attachment; filename=\"foodmoment-\(stamp).\(format)\""],
                        body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }

    /// The caller's meal with exactly this id; anyone else's (or none) is a 404, never a 403.
    func find(_ context: APIContext) async throws -> MealRecord {
        let user = try Self.user(context)
        let id = context.parameters.get("id") ?? ""
        guard let meal = try await store.diary(for: user).meal(id: id) else {
            throw APIError.notFound("no meal \(id) in your diary")
        }
        return meal
    }

    static func reason(_ error: any Error) -> String {
        switch error {
        case DecodingError.keyNotFound(let key, _): "missing \(key.stringValue)"
        case DecodingError.typeMismatch(_, let c), DecodingError.valueNotFound(_, let c):
            "\(c.codingPath.map(\.stringValue).joined(separator: ".")): \(c.debugDescription)"
        case DecodingError.dataCorrupted(let c):
            c.codingPath.isEmpty ? "not JSON" : "\(c.codingPath.map(\.stringValue).joined(separator: ".")): \(c.debugDescription)"
        default: "unreadable"
        }
    }
}

/// A calendar day in a time zone, as a half-open interval of instants.
struct CivilDay {
    let start: Date, end: Date

    init?(_ text: String, timeZone: TimeZone) {
        let parts = text.split(separator: "-")
        guard text.count == 10, parts.count == 3, let y = Int(parts[0]), let m = Int(parts[1]), let d = Int(parts[2]),
              (1...9999).contains(y) else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let components = DateComponents(year: y, month: m, day: d)
        guard components.isValidDate(in: calendar), let start = calendar.date(from: components),
              let end = calendar.date(byAdding: .day, value: 1, to: start) else { return nil }
        self.start = start; self.end = end
    }
}

/// `POST /api/v1/water`, `GET /api/v1/water?date=&tz=`.
struct WaterRoutes: Sendable {
    let store: any ServerStore

    struct NewWater: Decodable {
        var milliliters: Double
        var time: Date?
    }

    struct Day: Encodable {
        var water: [WaterLog]
        var totalMl: Double
        enum CodingKeys: String, CodingKey { case water, totalMl = "total_ml" }
    }

    @Sendable func create(_ request: Request, context: APIContext) async throws -> Response {
        let user = try MealRoutes.user(context)
        let new = try await MealRoutes.body(NewWater.self, of: request, limit: 64 << 10,
                                            example: #"{"milliliters": 250, "time": "2026-11-26T08:00:00Z"}"#)
        do {
            return try MealRoutes.json(try await store.diary(for: user).addWater(milliliters: new.milliliters, at: new.time), status: .created)
        } catch let error as MealStoreError {
            guard case .invalidValue = error else { throw error }
            throw APIError.badRequest("invalid_amount", error.description)
        }
    }

    @Sendable func list(_ request: Request, context: APIContext) async throws -> Response {
        let user = try MealRoutes.user(context)
        let day = try MealRoutes.day(request, context)
        let logs = try await store.diary(for: user).waterLogs(from: day.start, to: day.end)
        return try MealRoutes.json(Day(water: logs, totalMl: logs.reduce(0) { $0 + $1.milliliters }))
    }
}

extension HTTPField.Name {
    /// The labels a correction taught (`PUT /meals/{id}`), comma-separated.
    static let foodMomentTaught = HTTPField.Name("FoodMoment-Taught")!
}
