import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A small real HTTP/1.1 server on 127.0.0.1 (port chosen by the kernel) for transport and client tests:
/// each connection is read up to the end of the request (head, then `Content-Length` bytes of body), answered by
/// the handler, and closed. Faults: delays, resets, bodies cut short, huge bodies.
public final class LoopbackHTTPServer: @unchecked Sendable {
    public struct Reply: Sendable {
        public var status: Int
        public var headers: [String: String]
        public var body: [UInt8]
        /// Close the connection without answering (a reset from the client's point of view).
        public var drop: Bool
        /// Wait this long before answering. The wait ends early, with no answer sent, as soon as the client hangs up
        /// (its timeout fired or its task was cancelled): a test can pick a delay far beyond any client timeout it
        /// checks, however slow the machine, and still not wait for it.
        public var delay: Duration
        /// Announce the whole body but send only this many bytes of it, then close.
        public var truncateAfter: Int? = nil

        public init(status: Int = 200, headers: [String: String] = ["Content-Type": "application/json"], body: [UInt8] = [],
                    drop: Bool = false, delay: Duration = .zero) {
            self.status = status; self.headers = headers; self.body = body; self.drop = drop; self.delay = delay
        }

        public static func json(_ text: String, status: Int = 200, headers: [String: String] = [:]) -> Reply {
            Reply(status: status, headers: headers.merging(["Content-Type": "application/json"]) { a, _ in a }, body: Array(text.utf8))
        }
    }

    public struct Received: Sendable {
        public var method: String = "GET"
        public var path: String
        /// Header names lower-cased.
        public var headers: [String: String]
        public var body: [UInt8] = []
        public var bodyText: String { String(decoding: body, as: UTF8.self) }
    }

    public let port: Int
    private let fd: Int32
    private let handler: @Sendable (Received) -> Reply
    private let lock = NSLock()
    private var stopped = false
    private var log: [Received] = []

    public var baseURL: String { "http://127.0.0.1:\(port)" }
    public var requests: [Received] { lock.lock(); defer { lock.unlock() }; return log }

    /// A server answering by path only.
    public convenience init(handler: @escaping @Sendable (String) -> Reply) throws {
        try self.init(respond: { handler($0.path) })
    }

    /// Replies in order, one per request; the last one repeats.
    public convenience init(script: [Reply]) throws {
        let counter = Counter()
        try self.init(respond: { _ in script[min(counter.next(), script.count - 1)] })
    }

    public init(respond handler: @escaping @Sendable (Received) -> Reply) throws {
        self.handler = handler
        let sock = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard sock >= 0 else { throw POSIXError(.EIO) }
        var yes: Int32 = 1
        setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = 0
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(sock, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard bound == 0, listen(sock, 16) == 0 else { close(sock); throw POSIXError(.EADDRINUSE) }
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(sock, $0, &len) } }
        fd = sock
        port = Int(UInt16(bigEndian: addr.sin_port))
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    deinit { stop() }

    public func stop() {
        lock.lock()
        let wasStopped = stopped
        stopped = true
        lock.unlock()
        if !wasStopped { shutdown(fd, Int32(SHUT_RDWR)); close(fd) }
    }

    private func acceptLoop() {
        while true {
            let client = accept(fd, nil, nil)
            if client < 0 {
                lock.lock(); let done = stopped; lock.unlock()
                if done { return }
                continue
            }
            let t = Thread { [self] in serve(client) }
            t.start()
        }
    }

    private func serve(_ client: Int32) {
        defer { close(client) }
        var data = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !data.containsHeadEnd, data.count < 65536 {
            let n = read(client, &buffer, buffer.count)
            if n <= 0 { return }
            data += buffer[0..<n]
        }
        let headEnd = data.headEndIndex ?? data.count
        let head = String(decoding: data[0..<headEnd], as: UTF8.self)
        let lines = head.components(separatedBy: "\r\n")
        let parts = lines.first?.split(separator: " ") ?? []
        let method = parts.first.map(String.init) ?? "GET"
        let path = parts.count > 1 ? String(parts[1]) : "/"
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        var body = Array(data[min(data.count, headEnd + 4)...])
        let wanted = Int(headers["content-length"] ?? "0") ?? 0
        while body.count < wanted {
            let n = read(client, &buffer, buffer.count)
            if n <= 0 { break }
            body += buffer[0..<n]
        }
        let received = Received(method: method, path: path, headers: headers, body: body)
        lock.lock(); log.append(received); lock.unlock()
        let reply = handler(received)
        if reply.delay > .zero, !Self.delayReply(reply.delay, client: client) { return }
        if reply.drop {
            var linger = linger(l_onoff: 1, l_linger: 0)
            setsockopt(client, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<linger>.size))
            return
        }
        var out = "HTTP/1.1 \(reply.status) Status\r\nContent-Length: \(reply.body.count)\r\nConnection: close\r\n"
        for (k, v) in reply.headers { out += "\(k): \(v)\r\n" }
        out += "\r\n"
        let bytes = Array(out.utf8) + (reply.truncateAfter.map { Array(reply.body.prefix($0)) } ?? reply.body)
        var sent = 0
        while sent < bytes.count {
            // MSG_NOSIGNAL: a client that hung up (a refused huge body) must not SIGPIPE the test process.
            let n = bytes[sent...].withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return }
            sent += n
        }
    }
}

extension LoopbackHTTPServer {
    /// Waits `delay` while watching the connection: true when the whole delay passed, false as soon as the client
    /// closed or reset it (there is nobody left to answer). Bytes the client sends meanwhile are read and dropped.
    static func delayReply(_ delay: Duration, client: Int32) -> Bool {
        let deadline = ContinuousClock.now + delay
        var scratch = [UInt8](repeating: 0, count: 512)
        while true {
            let left = deadline - ContinuousClock.now
            if left <= .zero { return true }
            let ms = left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000 + 1
            var watch = pollfd(fd: client, events: Int16(POLLIN), revents: 0)
            let ready = poll(&watch, 1, Int32(min(ms, 1000)))
            if ready < 0 {
                if errno == EINTR { continue }
                return false
            }
            if ready == 0 { continue }
            // Readable (or hung up / in error, which poll reports regardless): end of stream or an error is a hang-up.
            let n = read(client, &scratch, scratch.count)
            if n == 0 { return false }
            if n < 0, errno != EINTR { return false }
        }
    }
}

private final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var n = 0
    func next() -> Int { lock.lock(); defer { n += 1; lock.unlock() }; return n }
}

private extension Array where Element == UInt8 {
    var containsHeadEnd: Bool { headEndIndex != nil }

    /// Index of the CR of the blank line ending the head.
    var headEndIndex: Int? {
        guard count >= 4 else { return nil }
        for i in 0...(count - 4) where self[i] == 13 && self[i + 1] == 10 && self[i + 2] == 13 && self[i + 3] == 10 { return i }
        return nil
    }
}
