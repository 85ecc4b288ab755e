import FoodVision
import FoodRecognition
public import FoodCore
public import Foundation
public import ImageCodecs
public import Rendering

/// Why a picture could not be made.
public enum PicturesError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The photo's analysis had failed, so there is nothing to draw.
    case analysisFailed(file: String, message: String)
    /// The photo could not be decoded or the result could not be encoded.
    case image(file: String, ImageCodecError)

    public var description: String {
        switch self {
        case .analysisFailed(let file, let message):
            "cannot annotate \(file): its analysis failed (\(message)); fix the photo and analyse it again"
        case .image(let file, let error):
            "cannot annotate \(file): \(error)"
        }
    }
}

/// A photo with its foods drawn on it, as JPEG.
public struct AnnotatedPhoto: Sendable {
    public var jpeg: [UInt8]
    public var width: Int
    public var height: Int
    /// Where each food's box and label landed, in the order of the result's foods.
    public var layout: [AnnotationLayout]
}

/// Draws a photo's analysis on the photo: boxes in each food's colour, labels `🍚 Rice · 米饭 180 g · 234 kcal`.
public struct PhotoAnnotator: Sendable {
    /// The longest side of the output; JPEGs are decoded at the DCT scale that gets closest below it.
    public var maxSide: Int
    public var jpegQuality: Int
    public var annotator: Annotator

    public init(maxSide: Int = 1600, jpegQuality: Int = 88, annotator: Annotator = Annotator()) {
        self.maxSide = maxSide
        self.jpegQuality = jpegQuality
        self.annotator = annotator
    }

    /// The annotations for a result's foods (kcal from their nutrition when known).
    public static func annotations(for foods: [MealFood]) -> [Annotation] {
        foods.map { f in
            Annotation(box: f.box ?? .whole, color: (try? RGBColor(hex: f.color)) ?? .neutral, emoji: f.emoji,
                       name: f.name, nameZh: f.nameZh, grams: f.grams, kcal: f.knownNutrients?.kcal)
        }
    }

    /// Decodes the photo (upright, at most `maxSide` on its longest side) — from `bytes`, the file as the batch read
    /// and hashed it, when given, else from `result.file` — draws its foods and encodes JPEG.
    public func annotate(_ result: PhotoResult, bytes: [UInt8]? = nil) throws(PicturesError) -> AnnotatedPhoto {
        if let error = result.error { throw .analysisFailed(file: result.file, message: error.message) }
        var image: RGBImage
        do {
            if let bytes {
                image = try Self.decode(bytes: bytes, maxSide: maxSide)
            } else {
                image = try Self.decode(path: result.file, maxSide: maxSide)
            }
        } catch {
            throw .image(file: result.file, error)
        }
        let annotations = Self.annotations(for: result.foods ?? [])
        let layout = annotator.layout(annotations, imageWidth: image.width, imageHeight: image.height)
        annotator.annotate(&image, annotations)
        do {
            return AnnotatedPhoto(jpeg: try ImageEncoder.jpeg(image, quality: jpegQuality), width: image.width,
                                  height: image.height, layout: layout)
        } catch {
            throw .image(file: result.file, error)
        }
    }

    /// The photo upright with its longest side at most `maxSide`: JPEGs at the largest libjpeg DCT scale n/8 that
    /// fits (cheap: a 12 MP photo for 1600 px decodes at 3/8), anything still larger (PNG, huge JPEG) resized.
    public static func decode(path: String, maxSide: Int) throws(ImageCodecError) -> RGBImage {
        try decode(bytes: readAll(path), maxSide: maxSide)
    }

    /// The same for bytes already in memory.
    public static func decode(bytes: [UInt8], maxSide: Int) throws(ImageCodecError) -> RGBImage {
        let header = try ImageDecoder.probe(bytes)
        var options = DecodeOptions()
        if header.format == .jpeg {
            let long = max(header.width, header.height), short = min(header.width, header.height)
            let n = (1...8).last { (long * $0 + 7) / 8 <= maxSide } ?? 1
            options.minShortSide = n == 8 ? nil : max(1, (short * n + 7) / 8)
        }
        let image = try ImageDecoder.decode(bytes, options: options).image
        return image.downscaled(maxSide: max(1, maxSide))
    }

    static func readAll(_ path: String) throws(ImageCodecError) -> [UInt8] {
        do {
            return Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        } catch {
            throw .unreadable(path: path, reason: (error as NSError).localizedDescription)
        }
    }
}

/// Builds the HTML report: thumbnails of the meals' photos (small DCT decode, centre square, ~160 px JPEG) and
/// the page from `HTMLReport`.
public struct ReportBuilder: Sendable {
    /// Thumbnail side in pixels (shown at 120 CSS px, so sharp on 1.33× screens).
    public var thumbnailSide: Int
    public var jpegQuality: Int

    public init(thumbnailSide: Int = 160, jpegQuality: Int = 80) {
        self.thumbnailSide = thumbnailSide
        self.jpegQuality = jpegQuality
    }

    /// A square JPEG thumbnail of the photo at `path` (upright, centre square).
    public func thumbnail(path: String) throws(ImageCodecError) -> [UInt8] {
        let side = max(8, thumbnailSide)
        let decoded = try ImageDecoder.decode(try PhotoAnnotator.readAll(path), options: DecodeOptions(minShortSide: side))
        let image = decoded.image
        let square = min(image.width, image.height)
        let crop = image.cropped(x: (image.width - square) / 2, y: (image.height - square) / 2, width: square, height: square)
        let out = crop.width > side ? crop.resized(width: side, height: side) : crop
        return try ImageEncoder.jpeg(out, quality: jpegQuality)
    }

    /// Thumbnails for every photo of the meals (once per content hash). Photos that cannot be read are left out
    /// and listed in `warnings` (`path: reason`); the report still renders, with an emoji in their place.
    public func thumbnails(for meals: [MealRecord]) -> (thumbnails: [String: [UInt8]], warnings: [String]) {
        var out: [String: [UInt8]] = [:], warnings: [String] = []
        for photo in meals.flatMap(\.photos) where out[photo.hash] == nil {
            do {
                out[photo.hash] = try thumbnail(path: photo.path)
            } catch {
                warnings.append("\(photo.path): no thumbnail (\(error))")
            }
        }
        return (out, warnings)
    }

    /// The whole page for `meals`, with thumbnails read from the photos' paths.
    public func build(title: String, meals: [MealRecord], goals: Goals? = nil, range: ClosedRange<Date>? = nil,
                      timeZone: TimeZone = .current, generatedAt: Date? = nil) -> (html: String, warnings: [String]) {
        let thumbs = thumbnails(for: meals)
        let model = ReportModel(title: title, meals: meals, thumbnails: thumbs.thumbnails, goals: goals, range: range,
                                timeZone: timeZone, generatedAt: generatedAt)
        return (HTMLReport.render(model), thumbs.warnings)
    }
}
