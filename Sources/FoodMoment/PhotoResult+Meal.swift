import FoodRecognition
import FoodCore
public import Foundation
import ImageCodecs
import FoodVision

extension PhotoResult {
    /// This photo as a diary entry: nil for failures and decode-only results. A photo with no food we know becomes
    /// a meal of its own with no foods, titled "Unrecognised photo" and with the best guess in its analysis, so the
    /// user sees it and can add its foods (`meal edit`).
    public func mealInput(fileModified: Date, timeZone: TimeZone, givenTime: Date? = nil) -> PhotoMeal? {
        guard succeeded, let hash = photoHash, let foods else { return nil }
        let time = MealTime.resolve(dateTimeOriginal: decode?.dateTimeOriginal, offsetTimeOriginal: decode?.offsetTimeOriginal,
                                    fileModified: fileModified, timeZone: timeZone, given: givenTime)
        let photo = MealPhoto(hash: hash, path: file, takenAt: time.date, timeSource: time.source)
        if unknown == true || foods.isEmpty {
            let guess = top?.first.map { String(format: "best guess %@ %.2f", $0.label, $0.probability) } ?? "no guess"
            return PhotoMeal(photo: photo, foods: [],
                                  analysis: "On-device recognition: not a food we know (\(guess)); add its foods with `foodmoment meal edit`",
                                  utcOffsetSeconds: time.utcOffsetSeconds, title: "Unrecognised photo")
        }
        let items = foods.map { $0.logged(photoHash: hash) }
        let summary = foods.map { String(format: "%@ %.2f", $0.label, $0.confidence) }.joined(separator: ", ")
        return PhotoMeal(photo: photo,
                              foods: items, analysis: "On-device recognition: \(summary)", utcOffsetSeconds: time.utcOffsetSeconds)
    }
}
