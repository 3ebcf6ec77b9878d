import NotesKit

// TESTING ONLY: the seam a power-cut simulator stands behind. See include/noteskit.h.

/// `nk_file_calls` of include/noteskit.h, field for field.
private struct CFileCalls {
    var openat: FileCalls.OpenAt?
    var write: FileCalls.Write?
    var fsync: FileCalls.OnFD?
    var syncfs: FileCalls.OnFD?
    var close: FileCalls.OnFD?
    var renameat: FileCalls.RenameAt?
    var mkdirat: FileCalls.MkdirAt?
    var unlinkat: FileCalls.UnlinkAt?
}

@_cdecl("nk_testing_set_file_calls")
public func nk_testing_set_file_calls(_ calls: UnsafeRawPointer?) -> Int32 {
    call {
        guard let calls else { return FileCalls.install(nil) }
        let c = calls.loadUnaligned(as: CFileCalls.self)
        guard let openat = c.openat, let write = c.write, let fsync = c.fsync, let syncfs = c.syncfs, let close = c.close,
              let renameat = c.renameat, let mkdirat = c.mkdirat, let unlinkat = c.unlinkat else {
            throw NotesError(.invalidArgument, "every function of nk_file_calls must be set", field: "calls")
        }
        FileCalls.install(FileCalls(openat: openat, write: write, fsync: fsync, syncfs: syncfs, close: close,
                                    renameat: renameat, mkdirat: mkdirat, unlinkat: unlinkat))
    }
}
