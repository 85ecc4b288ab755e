import Foundation
import FoodMoment
import FoodRecognition
import FoodTraining

/// Writes lines to stdout or to a file the user named. Files are created without following a symlink at the
/// final path component (`O_NOFOLLOW`), so a planted link cannot redirect output somewhere the user did not name.
final class LineWriter: @unchecked Sendable {
    private let fd: Int32
    private let owned: Bool

    static let standardOutput = LineWriter(fd: STDOUT_FILENO, owned: false)

    private init(fd: Int32, owned: Bool) { self.fd = fd; self.owned = owned }

    convenience init(path: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0o644)
        if fd < 0 {
            let why = errno == ELOOP ? "it is a symbolic link (refused; name the real file)" : String(cString: strerror(errno))
            throw ValidationErrorMessage("cannot write \(path): \(why)")
        }
        self.init(fd: fd, owned: true)
    }

    func write(_ line: String, newline: Bool = true) {
        var bytes = Array(line.utf8)
        if newline { bytes.append(10) }
        _ = writeAll(fd, bytes)
    }

    func close() { if owned { _ = Foundation.close(fd) } }
}

/// Writes all of `bytes` to `fd`, retrying after EINTR and short writes; false on an error.
func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
    bytes.withUnsafeBytes { raw in
        var done = 0
        while done < raw.count {
            let n = Foundation.write(fd, raw.baseAddress! + done, raw.count - done)
            if n < 0 { if errno == EINTR { continue }; return false }
            done += n
        }
        return true
    }
}

struct ValidationErrorMessage: Error, CustomStringConvertible {
    var description: String
    init(_ message: String) { description = message }
}

/// Ctrl-C (SIGINT) and SIGTERM ask the batch to stop after the chunk in flight (everything finished is already
/// journaled); a second Ctrl-C stops at once.
final class InterruptFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var set = false
    private var sources: [any DispatchSourceSignal] = []

    init() {
        for sig in [SIGINT, SIGTERM] {
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            source.setEventHandler { [weak self] in
                guard let self else { return }
                self.lock.lock()
                let again = self.set
                self.set = true
                self.lock.unlock()
                if again { signal(sig, SIG_DFL); raise(sig) }
                Output.note("\nstopping after the photos in flight (Ctrl-C again to stop now)…")
            }
            source.resume()
            sources.append(source)
        }
    }

    var isSet: Bool { lock.lock(); defer { lock.unlock() }; return set }
}

/// `--annotate DIR`: one JPEG per photo, named `<photo name>-<first 8 hex of its hash>.jpg` (two photos with the
/// same name in different folders do not collide; the same photo is the same file). Written to a temporary name
/// and renamed, never through a symlink.
struct AnnotationWriter: Sendable {
    let directory: String
    let annotator = PhotoAnnotator()

    init(directory: String) throws {
        var isDir: ObjCBool = false
        if FileManager.default.fileExists(atPath: directory, isDirectory: &isDir) {
            if !isDir.boolValue { throw ValidationErrorMessage("--annotate \(directory): exists and is not a folder") }
        } else {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        }
        self.directory = directory
    }

    func write(_ photo: AnalyzedPhoto) -> Result<String, PhotoError> {
        let result = photo.result
        let picture: AnnotatedPhoto
        do { picture = try annotator.annotate(result, bytes: photo.bytes) } catch {
            return .failure(PhotoError(kind: .annotateFailed, message: error.description))
        }
        let base = ((result.file as NSString).lastPathComponent as NSString).deletingPathExtension
        let name = "\(base)-\(result.photoHash?.prefix(8) ?? "nohash").jpg"
        let path = (directory as NSString).appendingPathComponent(name)
        let temp = path + ".tmp-\(getpid())"
        let fd = open(temp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        if fd < 0 { return .failure(PhotoError(kind: .writeFailed, message: "cannot write \(temp): \(String(cString: strerror(errno)))")) }
        let ok = writeAll(fd, picture.jpeg)
        Foundation.close(fd)
        // rename() replaces a symlink at `path` itself rather than following it.
        guard ok, rename(temp, path) == 0 else {
            unlink(temp)
            return .failure(PhotoError(kind: .writeFailed, message: "cannot write \(path): \(String(cString: strerror(errno)))"))
        }
        return .success(path)
    }
}
