import FoodRecognition
import FoodCore
import Foundation
import ImageCodecs
public import FoodVision

/// The settings key of a batch result: a digest of everything that changes what a photo's result is — the
/// model files, the arithmetic the network runs in (the recogniser's `InferenceOptions.precision`: BF16 and INT8 move confidences and box edges by a hundredth), the user's learned foods, the nutrition tables
/// (size and time) and the decode options. A result made under another key is analysed again.
public enum BatchSettings {
    /// What a stored result holds; raised when a result gains fields, so a resumed run never hands back a result
    /// without them (2: sugars and sodium per food, 0.6.0).
    static let resultFormat = 2

    public static func key(modelsDirectory: String, nutritionDirectory: String, userDataDirectory: String,
                           decodeSize: Int, acceptDamaged: Bool, precision: InferencePrecision) -> String {
        var material = "foodmoment-batch-\(resultFormat);decode=\(decodeSize);damaged=\(acceptDamaged);precision=\(precision.available.rawValue)"
        // Every file of the food head folder (head, calibration, cell detector, plate head, coin head, …): a result
        // made before any of them changed is analysed again.
        let headFiles = ((try? FileManager.default.contentsOfDirectory(atPath: modelsDirectory + "/food-head")) ?? [])
            .filter { !$0.hasPrefix(".") }.sorted().map { "food-head/" + $0 }
        for file in ["efficientnet-lite0/manifest.json"] + headFiles {
            let bytes = FileManager.default.contents(atPath: modelsDirectory + "/" + file).map { [UInt8]($0) } ?? []
            material += ";\(file)=\(ContentDigest.sha256Hex(bytes))"
        }
        let learned = FileManager.default.contents(atPath: userDataDirectory + "/learned-foods.json").map { [UInt8]($0) } ?? []
        material += ";learned=\(ContentDigest.sha256Hex(learned))"
        for file in ["nutrition.fmdb", "nutrition.fmdb.gz", "labels.json"] {
            let attributes = try? FileManager.default.attributesOfItem(atPath: nutritionDirectory + "/" + file)
            let size = (attributes?[.size] as? NSNumber)?.intValue ?? -1
            let time = (attributes?[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0
            material += ";\(file)=\(size)@\(Int(time))"
        }
        return String(ContentDigest.sha256Hex(Array(material.utf8)).prefix(16))
    }
}
