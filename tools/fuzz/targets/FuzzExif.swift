import ImageCodecs

/// libFuzzer entry: arbitrary bytes through the EXIF reader three ways — as a whole JPEG, as a whole PNG, and as the
/// TIFF payload of a JPEG APP1 "Exif" segment the harness wraps around them (so mutations land in the IFD parser
/// rather than in the JPEG framing). Must never crash or read out of bounds; defaults are a fine answer.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzExif(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    _ = ExifReader.read(jpeg: bytes)
    _ = ExifReader.read(png: bytes)
    if size <= 65_000 {
        let length = size + 8 // length field (2) + "Exif\0\0" (6) + payload
        var wrapped: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF), 0x45, 0x78, 0x69, 0x66, 0, 0]
        wrapped.append(contentsOf: bytes)
        wrapped += [0xFF, 0xD9]
        _ = wrapped.withUnsafeBufferPointer { ExifReader.read(jpeg: $0) }
    }
    return 0
}
