internal import CImageShims
public import FoodCore
import Foundation

/// How to decode: limits first (checked from the header, before any pixel buffer exists), then speed hints.
public struct DecodeOptions: Sendable, Equatable {
    /// When set, JPEGs are decoded at the smallest libjpeg DCT scale n/8 (n = 1…8) whose shorter side is still
    /// at least this many pixels (measured in the stored grid); a HEIC whose embedded thumbnail is at least this
    /// large is decoded from the thumbnail; a WebP is scaled by libwebp while decoding. PNGs are always decoded at
    /// full size.
    public var minShortSide: Int?
    /// Refuse images with more pixels than this (stored width × height). Default 100 MP.
    public var maxPixels: Int = 100_000_000
    /// Refuse files larger than this many bytes. Default 256 MiB.
    public var maxFileBytes: Int = 256 << 20
    /// Refuse progressive JPEGs with more scans than this (a hostile file can otherwise spin for minutes).
    public var maxProgressiveScans: Int = 1000
    /// Rotate/flip to the EXIF orientation so the result is upright.
    public var applyOrientation: Bool = true
    /// Truncated or corrupt JPEG data is an error by default. With this set, libjpeg's recovered pixels are
    /// returned and the problem is listed in `DecodedImage.warnings` instead.
    public var acceptDamagedData: Bool = false
    /// Wall-time budget for decoding one image (checked by libjpeg's progress monitor and after every PNG row):
    /// past it the decode stops with `resourceLimit`. nil = none. Pixel and scan limits bound the work anyway;
    /// this bounds what a hostile file can cost on a slow or busy machine.
    public var timeBudget: Duration?

    public init(minShortSide: Int? = nil, maxPixels: Int = 100_000_000, maxFileBytes: Int = 256 << 20,
                applyOrientation: Bool = true, acceptDamagedData: Bool = false, timeBudget: Duration? = nil) {
        self.timeBudget = timeBudget
        self.minShortSide = minShortSide
        self.maxPixels = maxPixels
        self.maxFileBytes = maxFileBytes
        self.applyOrientation = applyOrientation
        self.acceptDamagedData = acceptDamagedData
    }
}

extension DecodeOptions {
    var budgetNanoseconds: Int64 {
        guard let b = timeBudget else { return 0 }
        let c = b.components
        return max(1, c.seconds * 1_000_000_000 + c.attoseconds / 1_000_000_000)
    }
}

/// A decoded photo, upright (unless orientation was not applied), with what we learnt on the way.
public struct DecodedImage: Sendable {
    public var image: RGBImage
    public var format: ImageFormat
    /// Size of the stored pixel grid before scaling and orientation.
    public var storedWidth: Int
    public var storedHeight: Int
    /// The DCT scale used: the image was decoded at `scaleNumerator`/8 of the stored size (8 = full size).
    public var scaleNumerator: Int
    public var exif: ExifInfo
    /// Warnings from the C library about data it recovered from (only non-empty for benign problems, or when
    /// `acceptDamagedData` is set).
    public var warnings: [String]
    /// True when the pixels are the HEIC's embedded thumbnail (large enough for `minShortSide`), not the full image.
    public var fromThumbnail = false

    /// Displayed (upright) size at full resolution.
    public var uprightFullSize: (width: Int, height: Int) {
        exif.orientation.swapsAxes ? (storedHeight, storedWidth) : (storedWidth, storedHeight)
    }
}

/// Decodes JPEG and PNG into RGB8. Everything that can go wrong comes back as a typed `ImageCodecError`;
/// the C libraries never print, exit or abort (see `CImageShims`).
public enum ImageDecoder {
    public static func decodeFile(atPath path: String, options: DecodeOptions = .init()) throws(ImageCodecError) -> DecodedImage {
        let bytes = try readFile(atPath: path, maxBytes: options.maxFileBytes)
        return try decode(bytes, options: options)
    }

    public static func decode(_ bytes: [UInt8], options: DecodeOptions = .init()) throws(ImageCodecError) -> DecodedImage {
        if bytes.isEmpty { throw .empty }
        if bytes.count > options.maxFileBytes { throw .fileTooLarge(bytes: bytes.count, limit: options.maxFileBytes) }
        guard let format = ImageFormat.sniff(bytes) else {
            throw .notAnImage(firstBytes: describeFirstBytes(bytes))
        }
        var decoded: DecodedImage
        switch format {
        case .jpeg: decoded = try decodeJPEG(bytes, options: options)
        case .png: decoded = try decodePNG(bytes, options: options)
        case .heic, .avif: decoded = try decodeHEIF(bytes, format: format, options: options)
        case .webp: decoded = try decodeWebP(bytes, options: options)
        default: throw .unsupportedFormat(format)
        }
        if options.applyOrientation, decoded.exif.orientation != .up {
            decoded.image = decoded.image.applying(decoded.exif.orientation)
        }
        return decoded
    }

    /// Reads only the header: format, stored size and EXIF, without decoding pixels.
    public static func probe(_ bytes: [UInt8]) throws(ImageCodecError) -> (format: ImageFormat, width: Int, height: Int, exif: ExifInfo) {
        if bytes.isEmpty { throw .empty }
        guard let format = ImageFormat.sniff(bytes) else { throw .notAnImage(firstBytes: describeFirstBytes(bytes)) }
        var report = fm_report()
        switch format {
        case .jpeg:
            var info = fm_jpeg_info()
            let status = bytes.withUnsafeBufferPointer { fm_jpeg_info_read($0.baseAddress, $0.count, 8, &info, &report) }
            try check(status, report, .jpeg)
            let exif = bytes.withUnsafeBufferPointer { ExifReader.read(jpeg: $0) }
            return (.jpeg, Int(info.width), Int(info.height), exif)
        case .png:
            var info = fm_png_info()
            let status = bytes.withUnsafeBufferPointer { fm_png_info_read($0.baseAddress, $0.count, &info, &report) }
            try check(status, report, .png)
            let exif = bytes.withUnsafeBufferPointer { ExifReader.read(png: $0) }
            return (.png, Int(info.width), Int(info.height), exif)
        case .heic, .avif:
            var info = fm_heif_info()
            let status = bytes.withUnsafeBufferPointer { fm_heif_info_read($0.baseAddress, $0.count, &info, &report) }
            try check(status, report, format)
            return (format, Int(info.width), Int(info.height), heifExif(bytes, size: info.exif_size))
        case .webp:
            var info = fm_webp_info()
            let status = bytes.withUnsafeBufferPointer { fm_webp_info_read($0.baseAddress, $0.count, &info, &report) }
            try check(status, report, .webp)
            return (.webp, Int(info.width), Int(info.height), bytes.withUnsafeBufferPointer { ExifReader.read(webp: $0) })
        default:
            throw .unsupportedFormat(format)
        }
    }

    /// The libjpeg scale numerator (denominator 8) for a stored size and a wanted shorter side.
    public static func dctScaleNumerator(width: Int, height: Int, minShortSide: Int?) -> Int {
        guard let target = minShortSide, target > 0 else { return 8 }
        let short = min(width, height)
        for n in 1...8 where (short * n + 7) / 8 >= target { return n }
        return 8
    }

    // MARK: - JPEG

    static func decodeJPEG(_ bytes: [UInt8], options: DecodeOptions) throws(ImageCodecError) -> DecodedImage {
        var report = fm_report()
        var info = fm_jpeg_info()
        var status = bytes.withUnsafeBufferPointer { fm_jpeg_info_read($0.baseAddress, $0.count, 8, &info, &report) }
        try check(status, report, .jpeg)
        let w = Int(info.width), h = Int(info.height)
        try checkLimits(width: w, height: h, options: options)
        let n = dctScaleNumerator(width: w, height: h, minShortSide: options.minShortSide)
        if n != 8 {
            status = bytes.withUnsafeBufferPointer { fm_jpeg_info_read($0.baseAddress, $0.count, Int32(n), &info, &report) }
            try check(status, report, .jpeg)
        }
        let outW = Int(info.out_width), outH = Int(info.out_height)
        let size = outW * outH * 3
        var gotW: UInt32 = 0, gotH: UInt32 = 0
        var pixels = [UInt8](unsafeUninitializedCapacity: size) { buffer, count in
            status = bytes.withUnsafeBufferPointer { src in
                fm_jpeg_decode_rgb(src.baseAddress, src.count, Int32(n), Int32(options.maxProgressiveScans), options.budgetNanoseconds,
                                   buffer.baseAddress, size, &gotW, &gotH, &report)
            }
            count = size
        }
        try check(status, report, .jpeg)
        var warnings: [String] = []
        if report.premature_end != 0 || report.corrupt != 0 {
            let detail = message(report)
            if !options.acceptDamagedData {
                if report.premature_end != 0 {
                    throw .truncated(.jpeg, detail: "premature end of data after \(bytes.count) bytes: \(detail)")
                }
                throw .corrupt(.jpeg, detail: detail)
            }
            warnings.append(detail)
        } else if report.warning_count > 0 {
            warnings.append(message(report))
        }
        if pixels.count != Int(gotW) * Int(gotH) * 3 { pixels = [] }
        let exif = bytes.withUnsafeBufferPointer { ExifReader.read(jpeg: $0) }
        return DecodedImage(image: RGBImage(width: Int(gotW), height: Int(gotH), pixels: pixels), format: .jpeg,
                            storedWidth: w, storedHeight: h, scaleNumerator: n, exif: exif, warnings: warnings)
    }

    // MARK: - PNG

    static func decodePNG(_ bytes: [UInt8], options: DecodeOptions) throws(ImageCodecError) -> DecodedImage {
        var report = fm_report()
        var info = fm_png_info()
        var status = bytes.withUnsafeBufferPointer { fm_png_info_read($0.baseAddress, $0.count, &info, &report) }
        try check(status, report, .png)
        let w = Int(info.width), h = Int(info.height)
        try checkLimits(width: w, height: h, options: options)
        let size = w * h * 3
        let pixels = [UInt8](unsafeUninitializedCapacity: size) { buffer, count in
            status = bytes.withUnsafeBufferPointer { src in
                fm_png_decode_rgb(src.baseAddress, src.count, options.budgetNanoseconds, buffer.baseAddress, size, &report)
            }
            count = size
        }
        try check(status, report, .png)
        let warnings = report.warning_count > 0 ? [message(report)] : []
        let exif = bytes.withUnsafeBufferPointer { ExifReader.read(png: $0) }
        return DecodedImage(image: RGBImage(width: w, height: h, pixels: pixels), format: .png,
                            storedWidth: w, storedHeight: h, scaleNumerator: 8, exif: exif, warnings: warnings)
    }

    // MARK: - HEIC / HEIF (libheif)

    /// The primary image with the container's rotation and mirroring applied by libheif (so the result is upright
    /// and an EXIF Orientation tag inside is not applied again); from its embedded thumbnail when that is at least
    /// `minShortSide` on its shorter side and has the same aspect ratio (an iPhone HEIC carries one of about 320 px).
    /// libheif has no progress hook to stop a decode, so `timeBudget` does not apply; the pixel limit is checked first.
    static func decodeHEIF(_ bytes: [UInt8], format: ImageFormat, options: DecodeOptions) throws(ImageCodecError) -> DecodedImage {
        var report = fm_report()
        var info = fm_heif_info()
        var status = bytes.withUnsafeBufferPointer { fm_heif_info_read($0.baseAddress, $0.count, &info, &report) }
        try check(status, report, format)
        let w = Int(info.width), h = Int(info.height)
        try checkLimits(width: w, height: h, options: options, format: format)
        let tw = Int(info.thumb_width), th = Int(info.thumb_height)
        let sameShape = tw > 0 && th > 0 && abs(Double(tw) / Double(th) - Double(w) / Double(h)) < 0.02
        let useThumbnail = options.minShortSide.map { sameShape && min(tw, th) >= $0 && tw * th < w * h } ?? false
        let (dw, dh) = useThumbnail ? (tw, th) : (w, h)
        let size = dw * dh * 3
        var gotW: UInt32 = 0, gotH: UInt32 = 0
        let pixels = [UInt8](unsafeUninitializedCapacity: size) { buffer, count in
            buffer.initialize(repeating: 0)
            status = bytes.withUnsafeBufferPointer { src in
                fm_heif_decode_rgb(src.baseAddress, src.count, useThumbnail ? 1 : 0, UInt64(options.maxPixels), buffer.baseAddress, size,
                                   &gotW, &gotH, &report)
            }
            count = size
        }
        try check(status, report, format)
        var exif = heifExif(bytes, size: info.exif_size)
        exif.orientation = .up
        var decoded = DecodedImage(image: RGBImage(width: dw, height: dh, pixels: pixels), format: format,
                                   storedWidth: w, storedHeight: h, scaleNumerator: 8, exif: exif, warnings: [])
        decoded.fromThumbnail = useThumbnail
        return decoded
    }

    /// EXIF of a HEIF file (dates for the diary); defaults when it has none or it is malformed.
    static func heifExif(_ bytes: [UInt8], size: Int) -> ExifInfo {
        guard size >= 12, size <= ExifReader.maxPayloadBytes + 4 else { return ExifInfo() }
        var report = fm_report()
        var block = [UInt8](repeating: 0, count: size)
        let status = bytes.withUnsafeBufferPointer { src in
            block.withUnsafeMutableBufferPointer { fm_heif_exif(src.baseAddress, src.count, $0.baseAddress, size, &report) }
        }
        guard status == FM_OK else { return ExifInfo() }
        return block.withUnsafeBufferPointer { ExifReader.read(heifExifBlock: $0) }
    }

    // MARK: - WebP (libwebp)

    /// Still WebP images, scaled by libwebp while decoding to the smallest size whose shorter side is at least
    /// `minShortSide` (in whole eighths of the stored size, as JPEG's DCT scaling); animations are refused.
    static func decodeWebP(_ bytes: [UInt8], options: DecodeOptions) throws(ImageCodecError) -> DecodedImage {
        var report = fm_report()
        var info = fm_webp_info()
        var status = bytes.withUnsafeBufferPointer { fm_webp_info_read($0.baseAddress, $0.count, &info, &report) }
        try check(status, report, .webp)
        let w = Int(info.width), h = Int(info.height)
        try checkLimits(width: w, height: h, options: options, format: .webp)
        if info.has_animation != 0 { throw .corrupt(.webp, detail: "animated WebP: only still images are read (export one frame)") }
        let n = dctScaleNumerator(width: w, height: h, minShortSide: options.minShortSide)
        let dw = max(1, (w * n + 7) / 8), dh = max(1, (h * n + 7) / 8)
        let size = dw * dh * 3
        let pixels = [UInt8](unsafeUninitializedCapacity: size) { buffer, count in
            buffer.initialize(repeating: 0)
            status = bytes.withUnsafeBufferPointer { src in
                fm_webp_decode_rgb(src.baseAddress, src.count, UInt32(dw), UInt32(dh), buffer.baseAddress, size, &report)
            }
            count = size
        }
        try check(status, report, .webp)
        let exif = bytes.withUnsafeBufferPointer { ExifReader.read(webp: $0) }
        return DecodedImage(image: RGBImage(width: dw, height: dh, pixels: pixels), format: .webp,
                            storedWidth: w, storedHeight: h, scaleNumerator: n, exif: exif, warnings: [])
    }

    // MARK: - Helpers

    static func checkLimits(width: Int, height: Int, options: DecodeOptions, format: ImageFormat = .jpeg) throws(ImageCodecError) {
        if width <= 0 || height <= 0 { throw .corrupt(format, detail: "image has zero width or height") }
        let (pixels, overflow) = width.multipliedReportingOverflow(by: height)
        if overflow || pixels > options.maxPixels {
            throw .tooLarge(width: width, height: height, limit: options.maxPixels)
        }
    }

    static func check(_ status: fm_status, _ report: fm_report, _ format: ImageFormat) throws(ImageCodecError) {
        switch status {
        case FM_OK: return
        case FM_ERR_TRUNCATED: throw .truncated(format, detail: message(report))
        case FM_ERR_LIMIT: throw .resourceLimit(message(report))
        case FM_ERR_MEMORY: throw .outOfMemory(message(report))
        case FM_ERR_ARGUMENT: throw .corrupt(format, detail: "inconsistent image header")
        case FM_ERR_UNAVAILABLE: throw .decoderUnavailable(format, detail: message(report))
        default:
            let detail = message(report)
            // libjpeg reports data that ends inside the headers as a decode error; say "truncated" when it is.
            if report.premature_end != 0 { throw .truncated(format, detail: detail) }
            throw .corrupt(format, detail: detail.isEmpty ? "rejected by the decoder" : detail)
        }
    }

    /// The C library's message on one line (libheif's end with a newline).
    static func message(_ report: fm_report) -> String {
        var r = report
        let text = withUnsafeBytes(of: &r.message) { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            let end = bytes.firstIndex(of: 0) ?? bytes.count
            return String(decoding: bytes[0..<end], as: UTF8.self)
        }
        return text.split(whereSeparator: \.isNewline).joined(separator: " ").trimmingCharacters(in: .whitespaces)
    }

    static func describeFirstBytes(_ bytes: [UInt8]) -> String {
        bytes.prefix(8).map { b in
            let hex = String(b, radix: 16)
            return b < 16 ? "0\(hex)" : hex
        }.joined(separator: " ")
    }

    static func readFile(atPath path: String, maxBytes: Int) throws(ImageCodecError) -> [UInt8] {
        // O_NONBLOCK: opening a named pipe (or a device) waits for a writer that may never come; without a writer it
        // returns at once, and the check below refuses it. A regular file reads the same with or without the flag.
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        if fd < 0 { throw .unreadable(path: path, reason: String(cString: strerror(errno))) }
        defer { close(fd) }
        var st = stat()
        if fstat(fd, &st) != 0 { throw .unreadable(path: path, reason: String(cString: strerror(errno))) }
        switch FileKind(mode: st.st_mode) {
        case .regular: break
        case .folder: throw .unreadable(path: path, reason: "a folder, not a file")
        case .other(let reason): throw .unreadable(path: path, reason: reason)
        }
        let size = Int(st.st_size)
        if size > maxBytes { throw .fileTooLarge(bytes: size, limit: maxBytes) }
        // An empty array must not come from `unsafeUninitializedCapacity: 0`: that writes the count into the
        // runtime's shared empty-array storage, a race between workers reading empty files at once.
        if size == 0 { return [] }
        var readError: Int32 = 0
        let bytes = [UInt8](unsafeUninitializedCapacity: size) { buffer, count in
            var done = 0
            while done < size {
                let r = read(fd, buffer.baseAddress! + done, size - done)
                if r < 0 {
                    if errno == EINTR { continue }
                    readError = errno
                    break
                }
                if r == 0 { break }
                done += r
            }
            count = done
        }
        if readError != 0 { throw .unreadable(path: path, reason: String(cString: strerror(readError))) }
        return bytes
    }
}

/// The two 1/8 JPEG decoders one at a time, for the fast decoder's tests and its differential fuzz target:
/// `fm_jpeg_decode_rgb` tries the fast one first, so the product never shows which one ran.
package enum JPEGEighthDecoders {
    /// The 1/8 output size libjpeg-turbo computes, or nil when it cannot read the header.
    static func outputSize(_ bytes: [UInt8], maxPixels: Int) -> Int? {
        var report = fm_report()
        var info = fm_jpeg_info()
        let status = bytes.withUnsafeBufferPointer { fm_jpeg_info_read($0.baseAddress, $0.count, 1, &info, &report) }
        guard status == FM_OK, info.out_width > 0, info.out_height > 0,
              Int(info.out_width) * Int(info.out_height) <= maxPixels else { return nil }
        return Int(info.out_width) * Int(info.out_height) * 3
    }

    /// The fast decoder's pixels, or nil when it declines the file.
    package static func fast(_ bytes: [UInt8], maxPixels: Int = 50_000_000) -> [UInt8]? {
        guard !bytes.isEmpty, let size = outputSize(bytes, maxPixels: maxPixels) else { return nil }
        var w: UInt32 = 0, h: UInt32 = 0
        var pixels = [UInt8](repeating: 0, count: size)
        let ok = pixels.withUnsafeMutableBufferPointer { out in
            bytes.withUnsafeBufferPointer { fm_jpeg_decode_eighth_fast($0.baseAddress, $0.count, out.baseAddress, size, &w, &h) }
        }
        return ok == 1 ? pixels : nil
    }

    /// How many of `blocks` pseudo-random coefficient blocks the vectorised chroma 2x2 IDCT decodes differently from
    /// its scalar formula.
    package static func idctMismatches(seed: UInt64, blocks: Int) -> Int {
        Int(fm_jpeg_eighth_idct_check(seed, Int32(blocks)))
    }

    /// libjpeg-turbo's pixels at 1/8 and whether it decoded without an error or a warning; nil when it cannot start.
    package static func libjpeg(_ bytes: [UInt8], maxPixels: Int = 50_000_000) -> (pixels: [UInt8], clean: Bool)? {
        guard !bytes.isEmpty, let size = outputSize(bytes, maxPixels: maxPixels) else { return nil }
        var w: UInt32 = 0, h: UInt32 = 0
        var report = fm_report()
        var pixels = [UInt8](repeating: 0, count: size)
        let status = pixels.withUnsafeMutableBufferPointer { out in
            bytes.withUnsafeBufferPointer {
                fm_jpeg_decode_rgb_libjpeg($0.baseAddress, $0.count, 1, 0, 0, out.baseAddress, size, &w, &h, &report)
            }
        }
        return (pixels, status == FM_OK && report.warning_count == 0)
    }
}

/// What a path is (links followed), as a folder walk and a read need to know it. A named pipe, socket or device is
/// never a photo, and opening or reading one can wait forever, so both refuse it with `reason`.
public enum FileKind: Equatable, Sendable {
    case regular
    case folder
    case other(reason: String)

    /// What `path` is; nil when it cannot be examined (missing, a broken link, a folder on the way not searchable).
    public init?(path: String) {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        self.init(mode: st.st_mode)
    }

    init(mode: mode_t) {
        switch mode & S_IFMT {
        case S_IFREG: self = .regular
        case S_IFDIR: self = .folder
        case S_IFIFO: self = .other(reason: "not a regular file (a named pipe)")
        case S_IFSOCK: self = .other(reason: "not a regular file (a socket)")
        case S_IFCHR, S_IFBLK: self = .other(reason: "not a regular file (a device)")
        default: self = .other(reason: "not a regular file")
        }
    }
}
