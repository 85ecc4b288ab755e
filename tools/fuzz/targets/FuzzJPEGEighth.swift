import ImageCodecs

/// libFuzzer entry, differential: any bytes through our 1/8 JPEG decoder and through libjpeg-turbo's. Whenever ours
/// decodes, libjpeg-turbo must decode the same bytes without an error or a warning to the same pixels; anything else
/// is a finding (the trap below). Ours declining is always fine: the product then uses libjpeg-turbo.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJPEGEighth(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let fast = JPEGEighthDecoders.fast(bytes, maxPixels: 1 << 20) else { return 0 }
    guard let reference = JPEGEighthDecoders.libjpeg(bytes, maxPixels: 1 << 20) else {
        fatalError("the 1/8 decoder decoded a file libjpeg-turbo cannot start")
    }
    if !reference.clean { fatalError("the 1/8 decoder decoded a file libjpeg-turbo fails or warns on") }
    if reference.pixels != fast { fatalError("the 1/8 decoder and libjpeg-turbo give different pixels") }
    return 0
}
