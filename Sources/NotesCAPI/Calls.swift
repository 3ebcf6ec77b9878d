import NotesKit
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

// The machinery every export shares: status codes, the thread-local last error, strings in and
// out, and the handle table. Nothing here knows what an article is.

let NK_OK: Int32 = 0

/// Runs one export: returns NK_OK, or the error's status code after leaving it as this thread's
/// last error. No error thrown by the core can escape as a crash.
@inline(__always)
func call(_ body: () throws -> Void) -> Int32 {
    do {
        try body()
        return NK_OK
    } catch let error as NotesError {
        LastError.set(error)
        return error.kind.rawValue
    } catch {
        let wrapped = NotesError(.internalError, "unexpected error: \(error)")
        LastError.set(wrapped)
        return wrapped.kind.rawValue
    }
}

// MARK: - Last error

/// The last error of each thread, as the JSON `nk_last_error` hands out.
enum LastError {
    final class Box { var json: [UInt8] = [] }

    static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key) { pointer in
            if let pointer { Unmanaged<Box>.fromOpaque(pointer).release() }
        }
        return key
    }()

    /// The longest message (and file name) handed out, in bytes: a message quoting a caller's
    /// 100 MB argument is cut here (see `JSONWriter.error`).
    static let maxMessageBytes = 2_000

    static func set(_ error: NotesError) {
        var w = JSONWriter()
        w.error(error)
        if let code = error.sqliteCode {
            w.bytes.removeLast()
            w.raw(","); w.key("sqlite_code"); w.int(Int64(code)); w.raw("}")
        }
        box().json = w.bytes
    }

    static func box() -> Box {
        if let pointer = pthread_getspecific(key) { return Unmanaged<Box>.fromOpaque(pointer).takeUnretainedValue() }
        let box = Box()
        pthread_setspecific(key, Unmanaged.passRetained(box).toOpaque())
        return box
    }

    static var current: [UInt8]? {
        guard let pointer = pthread_getspecific(key) else { return nil }
        let json = Unmanaged<Box>.fromOpaque(pointer).takeUnretainedValue().json
        return json.isEmpty ? nil : json
    }
}

// MARK: - Strings

/// A required UTF-8 string argument: NULL or invalid UTF-8 is an invalid-argument error.
func string(_ pointer: UnsafePointer<CChar>?, _ name: String) throws -> String {
    guard let pointer else { throw NotesError(.invalidArgument, "\(name) is NULL", field: name) }
    return try decode(pointer, name)
}

/// An optional UTF-8 string argument: NULL means "not given".
func optionalString(_ pointer: UnsafePointer<CChar>?, _ name: String) throws -> String? {
    guard let pointer else { return nil }
    return try decode(pointer, name)
}

private func decode(_ pointer: UnsafePointer<CChar>, _ name: String) throws -> String {
    guard let value = String(validatingCString: pointer) else {
        throw NotesError(.invalidArgument, "\(name) is not valid UTF-8", field: name)
    }
    return value
}

/// Checks an out-parameter before any work is done, so a NULL one never half-runs a call.
func outPointer<T>(_ pointer: UnsafeMutablePointer<T>?, _ name: String) throws -> UnsafeMutablePointer<T> {
    guard let pointer else { throw NotesError(.invalidArgument, "\(name) is NULL", field: name) }
    return pointer
}

/// A malloc'ed, NUL-terminated copy of `bytes` for the caller to release with `nk_free`.
func ownedCString(_ bytes: [UInt8]) throws -> UnsafeMutablePointer<CChar> {
    guard let memory = malloc(bytes.count + 1) else { throw NotesError(.internalError, "out of memory") }
    let out = memory.bindMemory(to: CChar.self, capacity: bytes.count + 1)
    bytes.withUnsafeBufferPointer { buffer in
        if let base = buffer.baseAddress { memcpy(out, base, buffer.count) }
    }
    out[bytes.count] = 0
    return out
}

/// Runs an export whose result is JSON in `char **out_json`: checks `out` first (so a NULL one never
/// half-runs a call), then lets `write` produce the JSON and hands it out as an owned C string.
@inline(__always)
func callJSON(_ out: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?, _ write: (inout JSONWriter) throws -> Void) -> Int32 {
    call {
        let out = try outPointer(out, "out_json")
        var w = JSONWriter()
        try write(&w)
        out.pointee = try ownedCString(w.bytes)
    }
}

/// A page size or similar count from the ABI, as an `Int`.
func count(_ value: Int64) -> Int {
    Int(clamping: value)
}

// MARK: - Handles

/// Live handles. A handle's pointer value encodes a table key and its kind; it is never
/// dereferenced, so a stale, forged or wrong-kind handle is an error, not a crash.
enum Handles {
    enum Kind: UInt, Sendable {
        case store = 1
        case layout = 2
        case rows = 4

        var name: String {
            switch self {
            case .store: "nk_store"
            case .layout: "nk_layout"
            case .rows: "nk_rows"
            }
        }
    }

    private struct Table {
        var objects: [UInt: any AnyObject & Sendable] = [:]
        var next: UInt = 1
    }

    private static let table = Mutex(Table())

    static func add(_ object: any AnyObject & Sendable, _ kind: Kind) -> OpaquePointer? {
        table.withLock { t in
            let key = t.next
            t.next += 1
            t.objects[key] = object
            return OpaquePointer(bitPattern: key << 4 | kind.rawValue)
        }
    }

    static func get<T: AnyObject>(_ handle: OpaquePointer?, _ kind: Kind, as type: T.Type) throws -> T {
        let key = try self.key(handle, kind)
        let object = table.withLock { $0.objects[key] }
        guard let object else { throw gone(key, kind) }
        guard let typed = object as? T else { throw NotesError(.internalError, "handle table holds the wrong type for \(kind.name)") }
        return typed
    }

    static func remove(_ handle: OpaquePointer?, _ kind: Kind) throws -> any AnyObject & Sendable {
        let key = try self.key(handle, kind)
        let object = table.withLock { $0.objects.removeValue(forKey: key) }
        guard let object else { throw gone(key, kind) }
        return object
    }

    private static func key(_ handle: OpaquePointer?, _ kind: Kind) throws -> UInt {
        guard let handle else { throw NotesError(.invalidArgument, "the \(kind.name) handle is NULL") }
        let bits = UInt(bitPattern: handle)
        guard bits & 0xF == kind.rawValue else {
            throw NotesError(.invalidArgument, "the handle is not an \(kind.name) (wrong kind of handle, or not a NotesKit handle)")
        }
        return bits >> 4
    }

    private static func gone(_ key: UInt, _ kind: Kind) -> NotesError {
        let issued = table.withLock { key < $0.next }
        return issued
            ? NotesError(.closed, "the \(kind.name) handle was closed")
            : NotesError(.invalidArgument, "the \(kind.name) handle was never opened")
    }
}
