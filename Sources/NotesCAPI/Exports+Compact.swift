import NotesKit

// Compacting the change feed. See include/noteskit.h.

@_cdecl("nk_store_compact")
public func nk_store_compact(_ handle: OpaquePointer?, _ retainMilliseconds: Int64,
                             _ out: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    callJSON(out) { w in
        let report = try store(handle).compact(retainMilliseconds: retainMilliseconds)
        w.raw("{"); w.key("changes_removed"); w.int(Int64(report.changesRemoved))
        w.raw(","); w.key("changes_kept"); w.int(Int64(report.changesKept))
        w.raw(","); w.key("bytes_freed"); w.int(report.bytesFreed)
        w.raw(","); w.key("horizon"); w.int(report.horizon)
        w.raw("}")
    }
}
