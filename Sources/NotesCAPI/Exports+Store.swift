import NotesKit
#if canImport(Glibc)
import Glibc
#endif

// Library identity, memory, errors, and the store handle. See include/noteskit.h.

/// Bumped whenever an export's signature or meaning changes.
let abiVersion: Int32 = 5
let libraryVersion: StaticString = "0.1.0"

@_cdecl("nk_abi_version")
public func nk_abi_version() -> Int32 { abiVersion }

@_cdecl("nk_version")
public func nk_version() -> UnsafePointer<CChar>? {
    UnsafeRawPointer(libraryVersion.utf8Start).assumingMemoryBound(to: CChar.self)
}

@_cdecl("nk_free")
public func nk_free(_ pointer: UnsafeMutableRawPointer?) {
    free(pointer)
}

@_cdecl("nk_last_error")
public func nk_last_error() -> UnsafeMutablePointer<CChar>? {
    guard let json = LastError.current else { return nil }
    return try? ownedCString(json)
}

/// `nk_store_open` flags.
let NK_OPEN_READ_ONLY: Int32 = 1
let NK_OPEN_FAST: Int32 = 2

@_cdecl("nk_store_open")
public func nk_store_open(_ path: UnsafePointer<CChar>?, _ flags: Int32, _ mode: Int32,
                          _ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    call {
        let out = try outPointer(out, "out_store")
        guard flags & ~(NK_OPEN_READ_ONLY | NK_OPEN_FAST) == 0 else { throw NotesError(.invalidArgument, "unknown nk_store_open flags \(flags)", field: "flags") }
        let store = try Store.open(path: try string(path, "path"), readOnly: flags & NK_OPEN_READ_ONLY != 0,
                                   durability: flags & NK_OPEN_FAST != 0 ? .fast : .durable, mode: try fileMode(mode))
        out.pointee = Handles.add(store, .store)
    }
}

/// A mode argument: 0 for the default (owner-only), else checked by the core.
func fileMode(_ mode: Int32) throws -> UInt32? {
    guard mode != 0 else { return nil }
    guard mode > 0 else { throw NotesError(.validation, "mode must be 0 (owner-only) or a file mode such as 0o640, got \(mode)", field: "mode") }
    return UInt32(mode)
}

@_cdecl("nk_exposed_files")
public func nk_exposed_files(_ path: UnsafePointer<CChar>?, _ mode: Int32, _ out: OutJSON?) -> Int32 {
    callJSON(out) { w in
        let files = try Store.exposedFiles(path: try string(path, "path"), mode: try fileMode(mode))
        w.list(files) { w, file in
            w.raw("{"); w.key("path"); w.string(file.path)
            w.raw(","); w.key("mode"); w.int(Int64(file.mode))
            w.raw("}")
        }
    }
}

@_cdecl("nk_store_open_memory")
public func nk_store_open_memory(_ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    call {
        let out = try outPointer(out, "out_store")
        out.pointee = Handles.add(try Store.memory(), .store)
    }
}

@_cdecl("nk_store_close")
public func nk_store_close(_ handle: OpaquePointer?) -> Int32 {
    call {
        let store = try Handles.remove(handle, .store) as? Store
        store?.close()
    }
}

func store(_ handle: OpaquePointer?) throws -> Store {
    try Handles.get(handle, .store, as: Store.self)
}

@_cdecl("nk_store_changes")
public func nk_store_changes(_ handle: OpaquePointer?, _ since: Int64, _ limit: Int64, _ outArray: OutArray?,
                             _ outSchema: OutSchema?) -> Int32 {
    callBatch(outArray, outSchema) {
        let changes = try store(handle).changes(since: since, limit: count(limit))
        let batch = ColumnBatch.changes()
        for c in changes { batch.append(c); batch.endRow() }
        return batch
    }
}

@_cdecl("nk_store_last_change_seq")
public func nk_store_last_change_seq(_ handle: OpaquePointer?, _ out: UnsafeMutablePointer<Int64>?) -> Int32 {
    call {
        let out = try outPointer(out, "out_seq")
        out.pointee = try store(handle).lastChangeSeq()
    }
}

/// The caller's callback and its user data, carried into the store's subscriber closure. The user
/// data travels as its address: what it points to is the caller's, who the header tells that the
/// callback runs on whichever thread commits.
private struct ChangeCallback: Sendable {
    let function: @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>?) -> Void
    let userData: UInt
}

@_cdecl("nk_store_subscribe")
public func nk_store_subscribe(_ handle: OpaquePointer?,
                               _ callback: (@convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>?) -> Void)?,
                               _ userData: UnsafeMutableRawPointer?, _ out: UnsafeMutablePointer<Int64>?) -> Int32 {
    call {
        let out = try outPointer(out, "out_token")
        guard let callback else { throw NotesError(.invalidArgument, "callback is NULL", field: "callback") }
        let target = ChangeCallback(function: callback, userData: UInt(bitPattern: userData))
        out.pointee = try store(handle).subscribe { changes in
            var json = JSONWriter.encode { $0.list(changes) { $0.change($1) } }
            json.append(0)
            json.withUnsafeBufferPointer { buffer in
                buffer.withMemoryRebound(to: CChar.self) { target.function(UnsafeMutableRawPointer(bitPattern: target.userData), $0.baseAddress) }
            }
        }
    }
}

@_cdecl("nk_store_unsubscribe")
public func nk_store_unsubscribe(_ handle: OpaquePointer?, _ token: Int64) -> Int32 {
    call {
        guard try store(handle).unsubscribe(token) else {
            throw NotesError(.notFound, "subscription \(token) does not exist (already unsubscribed?)")
        }
    }
}

@_cdecl("nk_store_set_max_size")
public func nk_store_set_max_size(_ handle: OpaquePointer?, _ maxBytes: Int64, _ out: UnsafeMutablePointer<Int64>?) -> Int32 {
    call {
        let out = try outPointer(out, "out_max_bytes")
        out.pointee = try store(handle).setMaxSize(bytes: maxBytes)
    }
}
