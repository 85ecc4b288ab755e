import FoodRecognition
import FoodCore
import Foundation
import ImageCodecs
import FoodVision

/// One row of `--csv`: one per food (or one per file without foods).
public enum ResultCSV {
    public static let header = "file,photo_hash,status,error,label,name,name_zh,confidence,box_x,box_y,box_w,box_h,"
        + "grams,grams_source,food_id,kcal,protein_g,carbs_g,fat_g,fiber_g,sugars_g,sodium_mg"

    public static func rows(_ r: PhotoResult) -> [String] {
        let problem = r.error.map { "\($0.kind): \($0.message)" } ?? r.skipReason ?? ""
        let base = [r.file, r.photoHash ?? "", r.status.rawValue, problem]
        guard let foods = r.foods, !foods.isEmpty else {
            return [line(base + Array(repeating: "", count: 18))]
        }
        return foods.map { f in
            let n = f.knownNutrients
            func num(_ v: Double?, _ fmt: String = "%.1f") -> String { v.map { String(format: fmt, $0) } ?? "" }
            return line(base + [f.label, f.name, f.nameZh, num(f.confidence, "%.3f"), num(f.box?.x, "%.4f"), num(f.box?.y, "%.4f"),
                                num(f.box?.w, "%.4f"), num(f.box?.h, "%.4f"), num(f.grams, "%.0f"), f.gramsSource.rawValue, f.foodId ?? "",
                                num(n?.kcal, "%.0f"), num(n?.proteinG), num(n?.carbsG), num(n?.fatG), num(n?.fiberG),
                                num(n?.sugarsG), num(n?.sodiumMg, "%.0f")])
        }
    }

    /// `CSV.line`: RFC 4180 with the spreadsheet-formula guard.
    public static func line(_ fields: [String]) -> String { CSV.line(fields) }
}
