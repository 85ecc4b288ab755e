import FoodCore
import FoodVision
import ImageCodecs

/// libFuzzer entry: any bytes through the JPEG/PNG decoder (EXIF included), with small limits so the fuzzer
/// explores parsing rather than allocating. Must never crash, hang or leak; typed errors are fine.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzImageDecode(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let options = DecodeOptions(minShortSide: size % 3 == 0 ? 32 : nil, maxPixels: 4_000_000)
    if let decoded = try? ImageDecoder.decode(bytes, options: options) {
        // Exercise the rest of the image path on whatever decoded.
        if decoded.image.width > 0 && decoded.image.height > 0 {
            _ = ImageResampler.tensor(from: decoded.image, mode: .center, size: 16)
        }
    }
    _ = try? ImageDecoder.probe(bytes)
    return 0
}
