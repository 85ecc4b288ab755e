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
}
