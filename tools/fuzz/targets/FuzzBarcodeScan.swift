import Barcodes
import FoodCore

/// libFuzzer entry: arbitrary pixels (the first two bytes choose the width) through the barcode scanner, and the
/// rest as a typed number through GTIN parsing. Must never crash or hang; reporting nothing is fine.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzBarcodeScan(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    _ = try? GTIN.parse(String(decoding: bytes.prefix(20), as: UTF8.self))
    guard size >= 8 else { return 0 }
    let width = 8 + Int(bytes[0]) % 120
    let height = max(1, min(120, (size - 2) / (width * 3)))
    guard width * height * 3 <= size - 2 else { return 0 }
    let image = RGBImage(width: width, height: height, pixels: Array(bytes[2..<(2 + width * height * 3)]))
    _ = BarcodeScanner.scan(image)
    return 0
}
