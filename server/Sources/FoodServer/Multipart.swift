import Foundation
import Hummingbird
import MultipartKit
import NIOCore

/// The photo of a `multipart/form-data` upload: the first part that is a file (it has a filename or an image content
/// type). Its content type, when it names one we read, wins over sniffing.
enum MultipartPhoto {
    struct Part {
        var headers: [String: String] = [:]
        var body = ByteBuffer()
    }

    /// The boundary of a `multipart/form-data; boundary=…` content type, or nil.
    static func boundary(_ contentType: String) -> String? {
        for parameter in contentType.split(separator: ";").dropFirst() {
            let kv = parameter.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            if kv.count == 2, kv[0].lowercased() == "boundary" {
                let b = kv[1].trimmingCharacters(in: CharacterSet(charactersIn: "\""))
                return (1...70).contains(b.count) ? b : nil
            }
        }
        return nil
    }

    static func photo(_ body: ByteBuffer, contentType: String) throws -> [UInt8] {
        guard let boundary = boundary(contentType) else {
            throw APIError.badRequest("invalid_multipart", "multipart/form-data needs a boundary= parameter (1–70 characters)")
        }
        guard headerNamesAreASCII(Array(body.readableBytesView), boundary: boundary) else {
            throw APIError.badRequest("invalid_multipart", "a part's header name holds a byte outside ASCII: header names are ASCII (e.g. Content-Disposition)")
        }
        var parts: [Part] = []
        var current = Part()
        let parser = MultipartParser(boundary: boundary)
        parser.onHeader = { name, value in current.headers[name.lowercased()] = value }
        parser.onBody = { buffer in current.body.writeBuffer(&buffer) }
        parser.onPartComplete = { parts.append(current); current = Part() }
        do { try parser.execute(body) } catch {
            throw APIError.badRequest("invalid_multipart", "the multipart body could not be read: send one part with the photo (e.g. curl -F photo=@meal.jpg)")
        }
        let file = parts.first { part in
            let disposition = part.headers["content-disposition"] ?? ""
            return disposition.contains("filename=") || (part.headers["content-type"]?.lowercased().hasPrefix("image/") ?? false)
        }
        guard let file, file.body.readableBytes > 0 else {
            throw APIError.badRequest("empty_body", "the multipart body has no file part: send the photo as a file (e.g. curl -F photo=@meal.jpg)")
        }
        return Array(file.body.readableBytesView)
    }

    /// MultipartKit 4.7.1 looks every byte of a part's header name up in a 128-entry table, so a byte of 0x80 or more
    /// there is an index out of range: the server process dies (schemathesis found it, 2026-12-06). Each header line
    /// after a delimiter, up to its first colon, must be ASCII; names never legitimately hold anything else (values,
    /// such as a UTF-8 file name, are not checked). Conservative: a line is read up to LF, whatever MultipartKit would do.
    static func headerNamesAreASCII(_ bytes: [UInt8], boundary: String) -> Bool {
        let delimiter = Array(("--" + boundary).utf8)
        var i = 0
        while let found = firstIndex(of: delimiter, in: bytes, from: i) {
            i = found + delimiter.count
            // The rest of the delimiter line ("--" closes the body; otherwise transport padding and CRLF).
            while i < bytes.count, bytes[i] != 0x0A { i += 1 }
            i += 1
            // Header lines until the empty one.
            while i < bytes.count {
                var end = i
                while end < bytes.count, bytes[end] != 0x0A { end += 1 }
                let line = bytes[i..<end].last == 0x0D ? bytes[i..<end - 1] : bytes[i..<end]
                i = end + 1
                if line.isEmpty { break }
                if line.prefix(while: { $0 != UInt8(ascii: ":") }).contains(where: { $0 >= 0x80 }) { return false }
            }
        }
        return true
    }

    static func firstIndex(of needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
        guard let first = needle.first, haystack.count >= needle.count else { return nil }
        var i = start
        while i <= haystack.count - needle.count {
            if haystack[i] == first, haystack[i..<i + needle.count].elementsEqual(needle) { return i }
            i += 1
        }
        return nil
    }
}
