import FoodCore
import FoodVision
import ImageCodecs

/// libFuzzer entry: the bytes after the 8-byte PNG signature (the harness prepends it, so every input is a PNG
/// and mutations land in chunks: IHDR, PLTE, tRNS, IDAT, eXIf, ancillary chunks) through libpng and our limits.
/// Must never crash, hang or leak; typed errors are fine.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPNGDecode(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var bytes: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
    bytes.append(contentsOf: UnsafeBufferPointer(start: data, count: size))
    let options = DecodeOptions(minShortSide: size % 2 == 0 ? 16 : nil, maxPixels: 4_000_000,
                                applyOrientation: size % 3 != 0)
    if let decoded = try? ImageDecoder.decode(bytes, options: options), decoded.image.width > 0, decoded.image.height > 0 {
        _ = ImageResampler.tensor(from: decoded.image, mode: .center, size: 8)
    }
    _ = try? ImageDecoder.probe(bytes)
    return 0
}
