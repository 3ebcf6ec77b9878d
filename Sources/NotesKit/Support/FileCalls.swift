import CSQLite  // syncfs, declared by its shim
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The system calls through which NotesKit writes files outside SQLite (the exporters' files and
/// folders) and syncs folders: one small seam, POSIX unless replaced. Only a test replaces it, to
/// stand a power-cut simulator behind it (`nk_testing_set_file_calls`); SQLite's own files go
/// through SQLite's VFS, which the same simulator wraps.
public struct FileCalls: Sendable {
    public typealias OpenAt = @Sendable @convention(c) (Int32, UnsafePointer<CChar>?, Int32, UInt32) -> Int32
    public typealias Write = @Sendable @convention(c) (Int32, UnsafeRawPointer?, Int) -> Int
    public typealias OnFD = @Sendable @convention(c) (Int32) -> Int32
    public typealias RenameAt = @Sendable @convention(c) (Int32, UnsafePointer<CChar>?, Int32, UnsafePointer<CChar>?) -> Int32
    public typealias MkdirAt = @Sendable @convention(c) (Int32, UnsafePointer<CChar>?, UInt32) -> Int32
    public typealias UnlinkAt = @Sendable @convention(c) (Int32, UnsafePointer<CChar>?, Int32) -> Int32

    public var openat: OpenAt
    public var write: Write
    public var fsync: OnFD
    public var syncfs: OnFD
    public var close: OnFD
    public var renameat: RenameAt
    public var mkdirat: MkdirAt
    public var unlinkat: UnlinkAt

    public init(openat: OpenAt, write: Write, fsync: OnFD, syncfs: OnFD, close: OnFD, renameat: RenameAt,
                mkdirat: MkdirAt, unlinkat: UnlinkAt) {
        self.openat = openat
        self.write = write
        self.fsync = fsync
        self.syncfs = syncfs
        self.close = close
        self.renameat = renameat
        self.mkdirat = mkdirat
        self.unlinkat = unlinkat
    }

    public static let posix = FileCalls(
        openat: { Glibc.openat($0, $1!, $2, mode_t($3)) },
        write: { Glibc.write($0, $1, $2) },
        fsync: { Glibc.fsync($0) },
        syncfs: { CSQLite.syncfs($0) },
        close: { Glibc.close($0) },
        renameat: { Glibc.renameat($0, $1!, $2, $3!) },
        mkdirat: { Glibc.mkdirat($0, $1!, mode_t($2)) },
        unlinkat: { Glibc.unlinkat($0, $1!, $2) })

    private static let installed = Mutex<FileCalls>(FileCalls.posix)

    /// The calls in use.
    public static var current: FileCalls { installed.withLock { $0 } }

    /// Replaces the calls for the whole process (nil: back to POSIX). For tests only.
    public static func install(_ calls: FileCalls?) {
        installed.withLock { $0 = calls ?? .posix }
    }
}
