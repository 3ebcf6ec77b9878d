#if canImport(Glibc)
import Glibc
#endif

// Private by default: the modes of the files NotesKit creates, the store files other accounts can
// read, and the temporary files and folders an export writes beside its target (made under an
// unpredictable name, locked while in use, and removed by the next export or open when their
// writer died).

/// The permissions NotesKit gives what it creates: owner-only unless a caller asks for more.
public enum FileModes {
    /// A file only its owner reads and writes: stores, their `-wal`/`-shm`, exports.
    public static let privateFile: UInt32 = 0o600
    /// A folder only its owner lists and enters: exported folders, NotesKit's own folders.
    public static let privateFolder: UInt32 = 0o700

    /// `mode` (nil: ``privateFile``) checked as a file mode a caller may ask for: read and write
    /// bits only (no execute, setuid, setgid or sticky bit), with read and write for the owner.
    public static func fileMode(_ mode: UInt32?, field: String = "mode") throws -> UInt32 {
        guard let mode else { return privateFile }
        guard mode & ~0o666 == 0 else {
            throw NotesError(.validation, "mode must be read and write bits only, 0o600 to 0o666 (got 0o\(String(mode, radix: 8))): files NotesKit writes are never executable", field: field)
        }
        guard mode & 0o600 == 0o600 else {
            throw NotesError(.validation, "mode must let the owner read and write (0o600 and up, got 0o\(String(mode, radix: 8)))", field: field)
        }
        return mode
    }

    /// The mode of a folder holding files of `mode`: whoever may read the files may also list and
    /// enter the folder (0o600 → 0o700, 0o640 → 0o750, 0o644 → 0o755).
    public static func folderMode(forFiles mode: UInt32) -> UInt32 {
        mode | ((mode & 0o444) >> 2)
    }
}

/// A file of a store that lets other accounts do more than the store's mode allows.
public struct ExposedFile: Sendable, Equatable {
    public let path: String
    /// The file's permission bits (`st_mode & 0o7777`).
    public let mode: UInt32
}

extension Store {
    /// The files of the store at `path` (the store, its `-wal` and `-shm`) whose permissions let
    /// other accounts do more than `mode` (nil: ``FileModes/privateFile``) allows; files that do
    /// not exist are left out. Nothing is changed: an existing store is never chmodded.
    public static func exposedFiles(path: String, mode: UInt32? = nil) throws -> [ExposedFile] {
        let allowed = try FileModes.fileMode(mode)
        var out: [ExposedFile] = []
        for file in [path, path + "-wal", path + "-shm"] {
            var info = stat()
            guard stat(file, &info) == 0 else { continue }
            let bits = UInt32(info.st_mode) & 0o7777
            if bits & 0o077 & ~allowed != 0 { out.append(ExposedFile(path: file, mode: bits)) }
        }
        return out
    }
}

/// Creates the file `path` for a new store with exactly `mode` (whatever the umask), so that SQLite,
/// which gives the `-wal` and `-shm` files the mode of the database file, makes them with it too.
/// Does nothing when something is at `path` already (an existing store keeps its mode). A symbolic
/// link to nothing (SQLite follows it and would create its target) gets its target created.
func createStoreFile(_ path: String, mode: UInt32, links: Int = 0) throws {
    guard path != ":memory:" else { return }  // SQLite's name for a private in-memory database
    var info = stat()
    if lstat(path, &info) == 0 {
        guard (info.st_mode & S_IFMT) == S_IFLNK, links < 8, stat(path, &info) != 0, errno == ENOENT else { return }
        var target = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = readlink(path, &target, target.count - 1)
        guard n > 0 else { return }
        let link = String(decoding: target[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        try createStoreFile(link.hasPrefix("/") ? link : joinPath(parentFolder(path), link), mode: mode, links: links + 1)
        return
    }
    guard errno == ENOENT else { return }
    let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode_t(FileModes.privateFile))
    guard fd >= 0 else {
        if errno == EEXIST { return }  // made by another process in the meantime
        throw NotesError(.storage, "cannot open \(NotesError.shown(path)): cannot create the file: \(String(cString: strerror(errno)))")
    }
    defer { close(fd) }
    if fchmod(fd, mode_t(mode)) != 0 {
        let error = fileError("create the store", NotesError.shown(path))
        unlink(path)
        throw error
    }
}

// MARK: - Temporary files and their leftovers

/// The temporary files and folders an export writes beside its target, and their removal once
/// their writer is gone.
///
/// A temporary entry is made as `.noteskit-new-<26 random letters>` (`O_EXCL`, no link followed),
/// locked with `flock` at once, given its mode, then renamed `.noteskit-tmp-<same letters>`; its
/// writer holds the lock until it has renamed the entry into place (or removed it). So an entry is
/// a leftover of a dead export when all of these hold, and only then is it removed:
/// - its name is one of those two prefixes followed by exactly 26 letters of the random alphabet;
/// - it is a regular file or a folder (not a link, not anything else) owned by the current user;
/// - no process holds its lock (a live export does; the kernel drops it when the process dies);
/// - a `.noteskit-new-` entry is also at least ``newGraceSeconds`` old (its writer may be between
///   creating and locking it).
/// A leftover folder is removed with the regular files in it; a folder holding anything else (not
/// written by an export) is left alone.
enum TempEntries {
    static let tempPrefix = ".noteskit-tmp-"
    static let newPrefix = ".noteskit-new-"
    static let newGraceSeconds = 60
    /// What both prefixes start with.
    private static let sharedPrefix = ".noteskit-"
    private static let alphabet = Array("abcdefghijklmnopqrstuvwxyz234567".utf8)
    private static let tokenLength = 26

    /// 26 letters of base32 over 128 bits from the system's random source.
    static func token() -> String {
        var system = SystemRandomNumberGenerator()
        var bits = (system.next() as UInt64, system.next() as UInt64)
        var out: [UInt8] = []
        for _ in 0..<tokenLength {
            out.append(alphabet[Int(bits.0 & 31)])
            bits.0 = (bits.0 >> 5) | (bits.1 << 59)
            bits.1 >>= 5
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Whether `name` is one of ours still under its `new` name (true) or renamed (false); nil
    /// when it is not one of ours.
    static func parse(_ name: [UInt8]) -> Bool? {
        for (prefix, isNew) in [(tempPrefix, false), (newPrefix, true)] {
            let p = Array(prefix.utf8)
            if name.count == p.count + tokenLength, name.starts(with: p),
               name[p.count...].allSatisfy({ alphabet.contains($0) }) { return isNew }
        }
        return nil
    }

    /// A new temporary file in the folder open as `folderFD`, locked, with exactly `mode`.
    static func createFile(in folderFD: Int32, mode: UInt32, for target: String,
                           _ calls: FileCalls = .current) throws -> (name: String, fd: Int32) {
        let token = token()
        let fd = calls.openat(folderFD, newPrefix + token, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, FileModes.privateFile)
        guard fd >= 0 else { throw fileError("write", target) }
        return try finish(fd, token: token, in: folderFD, mode: mode, for: target, isFolder: false, calls)
    }

    /// A new temporary folder in the folder open as `folderFD`, locked, with exactly `mode`; the
    /// returned descriptor is the folder's (`O_DIRECTORY`).
    static func createFolder(in folderFD: Int32, mode: UInt32, for target: String,
                             _ calls: FileCalls = .current) throws -> (name: String, fd: Int32) {
        let token = token()
        guard calls.mkdirat(folderFD, newPrefix + token, FileModes.privateFolder) == 0 else { throw fileError("write", target) }
        let fd = calls.openat(folderFD, newPrefix + token, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0)
        guard fd >= 0 else {
            let error = fileError("write", target)
            _ = calls.unlinkat(folderFD, newPrefix + token, AT_REMOVEDIR)
            throw error
        }
        return try finish(fd, token: token, in: folderFD, mode: mode, for: target, isFolder: true, calls)
    }

    private static func finish(_ fd: Int32, token: String, in folderFD: Int32, mode: UInt32, for target: String,
                               isFolder: Bool, _ calls: FileCalls) throws -> (name: String, fd: Int32) {
        // Where the file system has no flock (rare), the entry is unlocked: the grace period of
        // `new` entries does not apply to it, and another export's sweep may remove it mid-write.
        _ = flock(fd, LOCK_EX)
        if fchmod(fd, mode_t(mode)) != 0 || calls.renameat(folderFD, newPrefix + token, folderFD, tempPrefix + token) != 0 {
            let error = fileError("write", target)
            _ = calls.unlinkat(folderFD, newPrefix + token, isFolder ? AT_REMOVEDIR : 0)
            _ = calls.close(fd)
            throw error
        }
        return (tempPrefix + token, fd)
    }

    /// Removes the leftovers of dead exports from the folder open as `folderFD` (see the type's
    /// rules); anything else is left alone, and failures are ignored (the next sweep tries again).
    /// Returns the names removed. O(entries of the folder).
    @discardableResult
    static func sweep(_ folderFD: Int32, _ calls: FileCalls = .current) -> [String] {
        var removed: [String] = []
        for (name, isNew) in candidates(folderFD) {
            let fd = openat(folderFD, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
            guard fd >= 0 else { continue }
            defer { close(fd) }
            var info = stat()
            guard fstat(fd, &info) == 0, info.st_uid == geteuid() else { continue }
            let type = info.st_mode & S_IFMT
            guard type == S_IFREG || type == S_IFDIR else { continue }
            if isNew && time(nil) - info.st_ctim.tv_sec < newGraceSeconds { continue }
            guard flock(fd, LOCK_EX | LOCK_NB) == 0 else { continue }
            // Still the same entry under that name (not renamed into place since it was opened)?
            var now = stat()
            guard fstatat(folderFD, name, &now, AT_SYMLINK_NOFOLLOW) == 0,
                  now.st_dev == info.st_dev, now.st_ino == info.st_ino else { continue }
            if type == S_IFDIR {
                removeFiles(in: fd, calls)
                if calls.unlinkat(folderFD, name, AT_REMOVEDIR) == 0 { removed.append(name) }
            } else if calls.unlinkat(folderFD, name, 0) == 0 {
                removed.append(name)
            }
        }
        return removed
    }

    /// The names in the folder that look like ours.
    private static func candidates(_ folderFD: Int32) -> [(String, Bool)] {
        let copy = dup(folderFD)
        guard copy >= 0, let dir = fdopendir(copy) else { return [] }
        defer { closedir(dir) }
        rewinddir(dir)
        var out: [(String, Bool)] = []
        while let entry = readdir(dir) {
            // Most folders hold none of ours: compare the prefix in place, without copying each name.
            let maybe = withUnsafeMutablePointer(to: &entry.pointee.d_name) { tuple in
                tuple.withMemoryRebound(to: CChar.self, capacity: MemoryLayout.size(ofValue: tuple.pointee)) {
                    strncmp($0, sharedPrefix, sharedPrefix.utf8.count) == 0
                }
            }
            guard maybe else { continue }
            let name = direntName(entry)
            if let isNew = parse(name) { out.append((String(decoding: name, as: UTF8.self), isNew)) }
        }
        return out
    }

    /// Removes the regular files (owned by this user) directly in the folder open as `fd`.
    private static func removeFiles(in fd: Int32, _ calls: FileCalls) {
        let copy = dup(fd)
        guard copy >= 0, let dir = fdopendir(copy) else { return }
        defer { closedir(dir) }
        var names: [[CChar]] = []
        while let entry = readdir(dir) {
            names.append(direntName(entry).map { CChar(bitPattern: $0) } + [0])
        }
        for name in names {
            var info = stat()
            if fstatat(fd, name, &info, AT_SYMLINK_NOFOLLOW) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_uid == geteuid() {
                _ = calls.unlinkat(fd, name, 0)
            }
        }
    }

    /// Sweeps the folder holding `path` (by path; nothing happens when it cannot be opened).
    static func sweep(folderOf path: String) {
        let fd = open(parentFolder(path), O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        sweep(fd)
        close(fd)
    }
}
