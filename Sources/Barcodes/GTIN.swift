/// The retail symbologies this module reads and writes.
public enum BarcodeFormat: String, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
    case ean13 = "EAN-13"
    case upcA = "UPC-A"
    case ean8 = "EAN-8"
    case upcE = "UPC-E"
    /// A bare 14-digit GTIN (as printed under ITF-14 cartons or stored in databases); never scanned here.
    case gtin14 = "GTIN-14"

    public var description: String { rawValue }

    /// Number of digits in the printed human-readable form, check digit included.
    public var digitCount: Int {
        switch self {
        case .ean13: 13
        case .upcA: 12
        case .ean8, .upcE: 8
        case .gtin14: 14
        }
    }
}

/// Why a code string is not a valid GTIN.
public enum GTINError: Error, Equatable, Sendable, CustomStringConvertible {
    case empty
    /// A character that is neither a digit nor a separator (space, hyphen), at a 0-based offset.
    case invalidCharacter(Character, offset: Int)
    /// The digit count fits no format (8, 12, 13 or 14 digits).
    case invalidLength(Int)
    /// The digit count does not fit the format that was asked for.
    case lengthMismatch(format: BarcodeFormat, digits: Int)
    /// The last digit is not the GS1 check digit of the others.
    case checkDigitMismatch(format: BarcodeFormat, code: String, expected: Int, found: Int)
    /// UPC-E codes must start with number system 0 or 1.
    case invalidUPCENumberSystem(Int)

    public var description: String {
        switch self {
        case .empty:
            "empty barcode: give 8, 12, 13 or 14 digits"
        case let .invalidCharacter(c, offset):
            "invalid character '\(c)' at position \(offset + 1): a barcode number has only digits (spaces and hyphens are ignored)"
        case let .invalidLength(n):
            "\(n) digits fit no retail barcode: EAN-8/UPC-E have 8, UPC-A 12, EAN-13 13, GTIN-14 14"
        case let .lengthMismatch(format, n):
            "\(format) has \(format.digitCount) digits, got \(n)"
        case let .checkDigitMismatch(format, code, expected, found):
            "wrong check digit in \(format) \(code): the last digit is \(found) but should be \(expected); re-read the number"
        case let .invalidUPCENumberSystem(ns):
            "UPC-E must start with number system 0 or 1, got \(ns)"
        }
    }
}

/// A validated retail product number (GS1 GTIN) in the form it was printed, with its GTIN-14 normal form.
///
/// Two codes name the same product exactly when their `gtin14` are equal: UPC-A `041196133066`,
/// EAN-13 `0041196133066` and GTIN-14 `00041196133066` are one product; a UPC-E is expanded to UPC-A first.
public struct GTIN: Sendable, Hashable, Codable, CustomStringConvertible {
    public let format: BarcodeFormat
    /// The digits as printed, check digit last (UPC-E: 8 digits, not expanded).
    public let digits: String

    /// Validates `digits` as `format`. The check digit must be right.
    public init(format: BarcodeFormat, digits: String) throws(GTINError) {
        let values = try GTIN.digitValues(digits)
        guard values.count == format.digitCount else { throw .lengthMismatch(format: format, digits: values.count) }
        let clean = String(values.map { Character(String($0)) })
        switch format {
        case .upcE:
            guard values[0] <= 1 else { throw .invalidUPCENumberSystem(values[0]) }
            let expanded = GTIN.expandUPCEDigits(values)
            let expected = GTIN.checkDigit(forPayload: expanded.dropLast())
            guard expected == values[7] else {
                throw .checkDigitMismatch(format: .upcE, code: clean, expected: expected, found: values[7])
            }
        default:
            let expected = GTIN.checkDigit(forPayload: values.dropLast())
            guard expected == values.last! else {
                throw .checkDigitMismatch(format: format, code: clean, expected: expected, found: values.last!)
            }
        }
        self.format = format
        self.digits = clean
    }

    /// Parses a printed code, inferring the format from its length.
    ///
    /// 12 digits are UPC-A, 13 EAN-13, 14 GTIN-14. 8 digits are read as EAN-8 when that check digit holds,
    /// otherwise as UPC-E; pass a format to `init(format:digits:)` when the symbology is known.
    public static func parse(_ text: String) throws(GTINError) -> GTIN {
        let values = try digitValues(text)
        let clean = String(values.map { Character(String($0)) })
        switch values.count {
        case 12: return try GTIN(format: .upcA, digits: clean)
        case 13: return try GTIN(format: .ean13, digits: clean)
        case 14: return try GTIN(format: .gtin14, digits: clean)
        case 8:
            do {
                return try GTIN(format: .ean8, digits: clean)
            } catch let ean8Error {
                guard values[0] <= 1 else { throw ean8Error }
                do {
                    return try GTIN(format: .upcE, digits: clean)
                } catch {
                    // Neither reading holds; the EAN-8 message is the one people expect for 8 digits.
                    throw ean8Error
                }
            }
        default: throw .invalidLength(values.count)
        }
    }

    /// The 14-digit normal form (left-padded with zeros; UPC-E expanded to UPC-A first).
    public var gtin14: String {
        let body = format == .upcE ? upcA! : digits
        return String(repeating: "0", count: 14 - body.count) + body
    }

    /// The 13-digit form, or nil when the GTIN-14 has a non-zero packaging indicator.
    public var gtin13: String? {
        let g = gtin14
        return g.first == "0" ? String(g.dropFirst()) : nil
    }

    /// The 12-digit UPC-A form of UPC-A, UPC-E and EAN-13/GTIN-14 codes that are UPC-A in disguise; else nil.
    public var upcA: String? {
        switch format {
        case .upcA: return digits
        case .upcE: return String(GTIN.expandUPCEDigits(digits.map { Int($0.asciiValue! - 48) }).map { Character(String($0)) })
        case .ean13, .gtin14, .ean8:
            let padded = String(repeating: "0", count: 14 - digits.count) + digits
            return padded.hasPrefix("00") ? String(padded.dropFirst(2)) : nil
        }
    }

    public var description: String { "\(format) \(digits)" }

    /// The GS1 check digit for the payload digits (all digits but the check): weights 3,1,3,… from the right.
    public static func checkDigit<C: BidirectionalCollection>(forPayload payload: C) -> Int where C.Element == Int {
        var sum = 0
        var weight = 3
        for d in payload.reversed() {
            sum += d * weight
            weight = 4 - weight
        }
        return (10 - sum % 10) % 10
    }

    /// Expands an 8-digit UPC-E (number system, 6 data digits, check) to the 12 digits of its UPC-A.
    public static func expandUPCE(_ upce: String) throws(GTINError) -> String {
        try GTIN(format: .upcE, digits: upce).upcA!
    }

    /// UPC-E → UPC-A by the last data digit: 0-2 manufacturer `ab{d6}00`/`00cde`, 3 `abc00`/`000de`,
    /// 4 `abcd0`/`0000e`, 5-9 `abcde`/`0000{d6}`. Keeps the input's check digit at the end.
    static func expandUPCEDigits(_ v: [Int]) -> [Int] {
        precondition(v.count == 8)
        let ns = v[0], d = Array(v[1...6]), check = v[7]
        let body: [Int]
        switch d[5] {
        case 0, 1, 2: body = [d[0], d[1], d[5], 0, 0, 0, 0, d[2], d[3], d[4]]
        case 3: body = [d[0], d[1], d[2], 0, 0, 0, 0, 0, d[3], d[4]]
        case 4: body = [d[0], d[1], d[2], d[3], 0, 0, 0, 0, 0, d[4]]
        default: body = [d[0], d[1], d[2], d[3], d[4], 0, 0, 0, 0, d[5]]
        }
        return [ns] + body + [check]
    }

    static func digitValues(_ text: String) throws(GTINError) -> [Int] {
        var out: [Int] = []
        var offset = 0
        var sawAny = false
        for ch in text {
            defer { offset += 1 }
            if let a = ch.asciiValue, a >= 48, a <= 57 {
                out.append(Int(a - 48)); sawAny = true
            } else if ch == " " || ch == "-" || ch == "\t" || ch == "\n" || ch == "\r" {
                continue
            } else {
                throw .invalidCharacter(ch, offset: offset)
            }
        }
        guard sawAny else { throw .empty }
        return out
    }
}
