internal import CDigest

/// SHA-256 (FIPS 180-4) through libcrypto, which uses the CPU's SHA extensions: photo identities (the batch journal and
/// the meal store key on them), model weight files checked at load (19 MB), LLM cache keys. A value: copying a hasher
/// copies its state.
public struct SHA256: Sendable {
    private var context = fm_sha256_ctx()

    public init() { fm_sha256_init(&context) }

    /// The hex digest of `bytes` in one call.
    public static func hexDigest(of bytes: [UInt8]) -> String {
        var h = SHA256()
        h.update(bytes)
        return h.finalizeHex()
    }

    public mutating func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { update($0) }
    }

    public mutating func update(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        fm_sha256_update(&context, base, bytes.count)
    }

    /// The 32-byte digest. The hasher should not be used afterwards.
    public mutating func finalize() -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        out.withUnsafeMutableBufferPointer { fm_sha256_final(&context, $0.baseAddress) }
        return out
    }

    public mutating func finalizeHex() -> String {
        let digits = Array("0123456789abcdef".utf8)
        var s = [UInt8]()
        s.reserveCapacity(64)
        for b in finalize() { s.append(digits[Int(b >> 4)]); s.append(digits[Int(b & 15)]) }
        return String(decoding: s, as: UTF8.self)
    }
}
