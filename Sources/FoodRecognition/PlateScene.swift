public import FoodVision
import Foundation

/// `models/food-head/plate-head.json`: whether a photo shows a shared plate of several foods (a thali, a fruit
/// bowl) or one dish. The food head cannot tell: it was trained on single dishes and on the crops of plate items,
/// so on a whole thali it answers with some dish ("breakfast_burrito 0.5"), while on a bowl of ramen the cell
/// detector sees rice, curry and a drink. This two-class head on the same food embedding decides which of the two
/// to trust when they disagree (`FoodRecognizer.detectCells`).
public struct PlateHeadModel: Sendable, Codable, Equatable {
    /// Classes `dish` and `plate`.
    public var head: SoftmaxHead
    /// A photo whose plate probability reaches this keeps the cell detector's regions.
    public var threshold: Double
    public var note: String

    public static let fileName = "plate-head.json"
    public static let plateClass = "plate"

    public init(head: SoftmaxHead, threshold: Double, note: String) {
        self.head = head; self.threshold = threshold; self.note = note
    }

    /// The head's probability of `plate` for a food embedding.
    public func plateProbability(_ embedding: [Float]) throws(FoodVisionError) -> Double {
        Double(try head.predict(embedding).first { $0.label == Self.plateClass }?.probability ?? 0)
    }

    public func isPlate(_ embedding: [Float]) throws(FoodVisionError) -> Bool { try plateProbability(embedding) >= threshold }

    /// The model in `<models>/food-head/`, or nil when there is none (then no photo counts as a plate).
    public static func load(modelsDirectory: String) throws(FoodVisionError) -> PlateHeadModel? {
        let path = modelsDirectory + "/food-head/" + fileName
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        let model = try decodeModelFile(PlateHeadModel.self, from: path, what: "plate head")
        try model.head.checkSizes(path: path)
        guard Set(model.head.classes) == ["dish", plateClass] else {
            throw .invalidFormat(path: path, reason: "classes are \(model.head.classes); expected dish and plate")
        }
        return model
    }

    public func save(to path: String) throws(FoodVisionError) {
        try writeModelFile(self, to: path, what: "plate head")
    }
}
