internal import CImageShims
public import FoodCore

/// JPEG and PNG encoding (annotated results, thumbnails, LLM uploads). Output carries no metadata.
public enum ImageEncoder {
    public static func jpeg(_ image: RGBImage, quality: Int = 90) throws(ImageCodecError) -> [UInt8] {
        try encode(image) { px, out, size, report in
            fm_jpeg_encode_rgb(px, UInt32(image.width), UInt32(image.height), Int32(quality), out, size, report)
        }
    }

    public static func png(_ image: RGBImage) throws(ImageCodecError) -> [UInt8] {
        try encode(image) { px, out, size, report in
            fm_png_encode_rgb(px, UInt32(image.width), UInt32(image.height), out, size, report)
        }
    }

    private static func encode(
        _ image: RGBImage,
        _ call: (UnsafePointer<UInt8>, UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>, UnsafeMutablePointer<Int>, UnsafeMutablePointer<fm_report>) -> fm_status
    ) throws(ImageCodecError) -> [UInt8] {
        guard image.width > 0, image.height > 0 else { throw .encodeFailed("image is empty") }
        var out: UnsafeMutablePointer<UInt8>? = nil
        var size = 0
        var report = fm_report()
        let status = image.pixels.withUnsafeBufferPointer { px in call(px.baseAddress!, &out, &size, &report) }
        defer { fm_free(out) }
        guard status == FM_OK, let out else {
            throw .encodeFailed(ImageDecoder.message(report).isEmpty ? "encoder status \(status.rawValue)" : ImageDecoder.message(report))
        }
        return Array(UnsafeBufferPointer(start: out, count: size))
    }
}
