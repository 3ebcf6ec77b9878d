#if canImport(Glibc)
import Glibc
#endif

// Files for import and export, on plain POSIX calls (no Foundation): a chunked reader, an
// atomically replaced output file, and an output folder that appears whole or not at all. Output
// goes through ``FileCalls`` (the seam a power-cut simulator stands behind in tests), and an
// export that returned is on disk under its final name: data synced, renamed, folder synced.

/// The error for a failed file call, from `errno`: a missing file is `.notFound`, a refused one
/// `.readOnly`, a full disk `.storageFull`, anything else `.storage`.
func fileError(_ what: String, _ path: String, _ code: Int32 = errno) -> NotesError {
    let reason = String(cString: strerror(code))
    let kind: NotesError.Kind
    switch code {
    case ENOENT, ENOTDIR: kind = .notFound
    case EACCES, EPERM, EROFS: kind = .readOnly
    case ENOSPC, EDQUOT: kind = .storageFull
    default: kind = .storage
    }
    return NotesError(kind, "cannot \(what) \(path): \(reason)", field: "path")
}

/// What is at `path`: nil when nothing is, else whether it is a folder (symbolic links followed,
/// unless `followingLinks` is false: then a link is not a folder).
func fileKind(_ path: String, followingLinks: Bool = true) -> (isDirectory: Bool, size: Int64)? {
    var info = stat()
    guard (followingLinks ? stat(path, &info) : lstat(path, &info)) == 0 else { return nil }
    return ((info.st_mode & S_IFMT) == S_IFDIR, Int64(info.st_size))
}

/// The last path component of `path` ("notes.json" of "/tmp/x/notes.json").
func baseName(_ path: String) -> String {
    var trimmed = Substring(path)
    while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
    if let slash = trimmed.lastIndex(of: "/") { return String(trimmed[trimmed.index(after: slash)...]) }
    return String(trimmed)
}

/// The folder holding `path` ("." for a bare name).
func parentFolder(_ path: String) -> String {
    var trimmed = Substring(path)
    while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
    guard let slash = trimmed.lastIndex(of: "/") else { return "." }
    return slash == trimmed.startIndex ? "/" : String(trimmed[..<slash])
}

/// The name of a directory entry `readdir` returned, as bytes (measured with `strlen`: the bytes
/// of `d_name` past its NUL may be uninitialised).
func direntName(_ entry: UnsafeMutablePointer<dirent>) -> [UInt8] {
    withUnsafeMutablePointer(to: &entry.pointee.d_name) { tuple in
        tuple.withMemoryRebound(to: CChar.self, capacity: MemoryLayout.size(ofValue: tuple.pointee)) { chars in
            Array(UnsafeRawBufferPointer(start: chars, count: strlen(chars)))
        }
    }
}

/// Joins a folder and a name with one slash.
func joinPath(_ folder: String, _ name: String) -> String {
    folder.hasSuffix("/") ? folder + name : folder + "/" + name
}

// MARK: - Reading

/// A file read front to back in chunks, so that a file of any size is read in bounded memory.
///
/// Consumers look at ``available`` (the bytes read and not yet consumed), ``consume(_:)`` what
/// they used, and ``fill()`` for more. ``nextLine()`` does this for line-oriented formats.
final class InputFile {
    /// A single line (or record) longer than this is refused: no valid record comes near it (the
    /// longest content, 1 000 000 code points, takes at most 12 MB even as JSON `\u` escapes).
    static let maxRecordBytes = 64 << 20
    static let chunk = 1 << 20

    let path: String
    /// The file's size in bytes when it was opened.
    let size: Int64
    private let fd: Int32
    private var buffer: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    private var start = 0
    private var end = 0
    private(set) var atEnd = false
    /// Bytes consumed so far: the file offset of the first available byte.
    private(set) var consumed: Int64 = 0
    /// Lines returned by ``nextLine()`` so far: the 1-based number of the last one.
    private(set) var lineNumber = 0
    /// Decodes a file in another encoding to UTF-8 as it is read (nil: read as it is).
    private var decoder: Transcoder?

    /// Opens `path`, to be read as UTF-8, or decoded from `encoding` (any name iconv knows;
    /// `.validation` on `encoding` for one it does not).
    convenience init(path: String, encoding: String) throws {
        try self.init(path: path)
        guard let decoder = Transcoder(from: encoding) else {
            throw NotesError(.validation, "encoding \"\(encoding.prefix(40))\" is not one this system can read (try gb18030, cp1252, utf-16, latin1, shift_jis, big5)", field: "encoding")
        }
        self.decoder = decoder
    }

    /// The file open as `fd` (taken over: closed with this object), named `path` in messages.
    init(fd: Int32, path: String) throws {
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let error = fileError("read", path)
            close(fd)
            throw error
        }
        self.path = path
        self.fd = fd
        self.size = Int64(info.st_size)
        capacity = Self.chunk
        buffer = .allocate(capacity: capacity)
    }

    init(path: String) throws {
        guard let kind = fileKind(path) else { throw fileError("read", path) }
        guard !kind.isDirectory else {
            throw NotesError(.validation, "\(path) is a folder; give a file, or \(option: "format", choice: "markdown") or \(option: "format", choice: "csv") for a folder", field: "path",
                             code: "folder_needs_format")
        }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw fileError("read", path) }
        self.path = path
        self.fd = fd
        self.size = kind.size
        capacity = Self.chunk
        buffer = .allocate(capacity: capacity)
    }

    deinit {
        close(fd)
        buffer.deallocate()
    }

    /// The bytes read and not consumed yet.
    var available: UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(start: buffer + start, count: end - start)
    }

    func consume(_ count: Int) {
        start += count
        consumed += Int64(count)
    }

    /// Reads more of the file after the available bytes (keeping them); false at the end of the
    /// file. The buffer grows when the available bytes fill it, up to ``maxRecordBytes``.
    func fill() throws -> Bool {
        if atEnd { return false }
        if start > 0 {
            if end > start { memmove(buffer, buffer + start, end - start) }
            end -= start
            start = 0
        }
        if end == capacity || (decoder != nil && capacity - end < 16) {
            guard capacity < Self.maxRecordBytes + Self.chunk else {
                throw NotesError(.format, "\(path): a record near byte \(consumed) is longer than \(Self.maxRecordBytes >> 20) MiB; the file is not in the format it claims", field: nil)
            }
            let grown = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity * 2)
            grown.update(from: buffer, count: end)
            buffer.deallocate()
            buffer = grown
            capacity *= 2
        }
        if let decoder {
            let n = try decoder.read(fd, into: buffer + end, capacity: capacity - end, path: path)
            if n == 0 { atEnd = true; return false }
            end += n
            return true
        }
        while true {
            let n = read(fd, buffer + end, capacity - end)
            if n > 0 { end += n; return true }
            if n == 0 { atEnd = true; return false }
            if errno != EINTR { throw fileError("read", path) }
        }
    }

    /// The next line, without its `\n` (a `\r` before it is kept), or nil after the last one. A
    /// last line without a final newline is returned too. The bytes are valid until the next call.
    func nextLine() throws -> UnsafeBufferPointer<UInt8>? {
        var scanned = 0
        while true {
            let bytes = available
            if scanned < bytes.count, let base = bytes.baseAddress,
               let hit = memchr(base + scanned, 10, bytes.count - scanned) {
                let length = UnsafeRawPointer(hit).assumingMemoryBound(to: UInt8.self) - base
                consume(length + 1)
                lineNumber += 1
                return UnsafeBufferPointer(start: base, count: length)
            }
            scanned = bytes.count
            if bytes.count > Self.maxRecordBytes {
                throw NotesError(.format, "\(path), line \(lineNumber + 1): the line is longer than \(Self.maxRecordBytes >> 20) MiB", line: lineNumber + 1)
            }
            if try !fill() {
                let rest = available
                guard !rest.isEmpty else { return nil }
                consume(rest.count)
                lineNumber += 1
                return rest
            }
        }
    }

    /// The rest of the (small) file, at most ``maxRecordBytes``.
    func readAll() throws -> [UInt8] {
        while try fill() {}
        return Array(available)
    }

    /// The file's modification time (nil when it cannot be read or is out of range).
    var modified: Timestamp? {
        var info = stat()
        guard fstat(fd, &info) == 0 else { return nil }
        let ms = Int64(info.st_mtim.tv_sec) * 1000 + Int64(info.st_mtim.tv_nsec) / 1_000_000
        return Timestamp.range.contains(ms) ? Timestamp(milliseconds: ms) : nil
    }

    /// Skips a UTF-8 byte order mark at the start of the file (Notepad and Excel write one); a
    /// UTF-16 or UTF-32 mark is a `.format` error naming the encoding. Call before reading.
    func skipByteOrderMark() throws {
        while available.count < 4, try fill() {}
        try ByteOrderMark.check(available, path: path)
        if ByteOrderMark.isUTF8(available) { consume(3) }
    }

    /// The whole (small) file, at most ``maxRecordBytes``.
    static func readAll(_ path: String) throws -> [UInt8] {
        try InputFile(path: path).readAll()
    }
}

// MARK: - Writing

/// A file written through a buffer. Made with ``replacing(_:mode:)`` it is written to a temporary
/// file in the same folder (``TempEntries``: an unpredictable name, created with `O_EXCL`, locked
/// while written) and renamed over `path` by ``commit()``, so readers see the old file or the whole
/// new one, never a part (after a power cut too); an export that fails leaves nothing behind, and
/// one killed leaves a leftover the next export or open of that folder removes. A symbolic link at
/// `path` is replaced, never written through. The file has exactly the mode given, whatever the
/// umask. Output goes through ``FileCalls``.
final class OutputFile {
    let path: String
    /// The folder the file is written in, and whether this file closes it.
    private let folderFD: Int32
    private let ownsFolder: Bool
    /// The name written to until ``commit()``, and the name it then gets (nil: stays as it is, for a
    /// file made inside an ``OutputFolder``, whose folder is the temporary thing, synced with it).
    private let writingName: String
    private let finalName: String?
    private var fd: Int32
    private var pending: [UInt8] = []
    private var done = false
    private let calls: FileCalls

    private init(path: String, folderFD: Int32, ownsFolder: Bool, writingName: String, finalName: String?, fd: Int32,
                 calls: FileCalls) {
        self.path = path
        self.folderFD = folderFD
        self.ownsFolder = ownsFolder
        self.writingName = writingName
        self.finalName = finalName
        self.fd = fd
        self.calls = calls
        pending.reserveCapacity(1 << 20)
    }

    /// A new file that replaces `path` on ``commit()``, with permissions `mode`.
    static func replacing(_ path: String, mode: UInt32) throws -> OutputFile {
        var info = stat()
        if lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR {
            throw NotesError(.validation, "\(path) is a folder; exporting to one needs \(option: "format", choice: "markdown") or \(option: "format", choice: "csv")", field: "path",
                             code: "folder_needs_format")
        }
        let calls = FileCalls.current
        let folderFD = calls.openat(AT_FDCWD, parentFolder(path), O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0)
        guard folderFD >= 0 else { throw fileError("write", path, errno == ENOTDIR ? ENOENT : errno) }
        TempEntries.sweep(folderFD, calls)
        do {
            let (name, fd) = try TempEntries.createFile(in: folderFD, mode: mode, for: path, calls)
            return OutputFile(path: path, folderFD: folderFD, ownsFolder: true, writingName: name, finalName: baseName(path), fd: fd,
                              calls: calls)
        } catch {
            _ = calls.close(folderFD)
            throw error
        }
    }

    /// A new file `name` with permissions `mode` inside the folder open as `folderFD`; nil when
    /// that name is taken.
    static func creating(_ name: String, in folderFD: Int32, folderPath: String, mode: UInt32, calls: FileCalls) throws -> OutputFile? {
        let fd = calls.openat(folderFD, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, FileModes.privateFile)
        if fd < 0 {
            if errno == EEXIST { return nil }
            throw fileError("write", joinPath(folderPath, name))
        }
        let file = OutputFile(path: joinPath(folderPath, name), folderFD: folderFD, ownsFolder: false, writingName: name, finalName: nil,
                              fd: fd, calls: calls)
        if mode != FileModes.privateFile && fchmod(fd, mode_t(mode)) != 0 {
            let error = fileError("write", file.path)
            file.abandon()
            throw error
        }
        return file
    }

    deinit {
        if !done { abandon() }
        if ownsFolder { _ = calls.close(folderFD) }
    }

    func write(_ bytes: [UInt8]) throws {
        pending.append(contentsOf: bytes)
        if pending.count >= 1 << 20 { try flush() }
    }

    /// Writes the bytes a JSON writer collected and empties it, once it holds enough to be worth
    /// a system call (or always, with `force`).
    func drain(_ writer: inout JSONWriter, force: Bool = false) throws {
        guard force || writer.bytes.count >= 1 << 18 else { return }
        if pending.isEmpty {
            try writeOut(writer.bytes)
        } else {
            try write(writer.bytes)
        }
        writer.bytes.removeAll(keepingCapacity: true)
    }

    func flush() throws {
        try writeOut(pending)
        pending.removeAll(keepingCapacity: true)
    }

    private func writeOut(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { raw in
            guard let base = raw.baseAddress else { return }
            var offset = 0
            while offset < raw.count {
                let n = calls.write(fd, base + offset, raw.count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    throw fileError("write", path)
                }
                offset += n
            }
        }
    }

    /// Writes what is buffered and puts the file in place: its bytes synced, renamed over `path`,
    /// the folder synced, so that once this returns the whole file survives a power cut. A replacing
    /// file is renamed while still open, so its lock keeps other exports' sweeps off it until it is
    /// in place.
    func commit() throws {
        do {
            try flush()
            if let finalName {
                if calls.fsync(fd) != 0 { throw fileError("write", path) }
                if calls.renameat(folderFD, writingName, folderFD, finalName) != 0 { throw fileError("write", path) }
                done = true
                _ = calls.close(fd)
                fd = -1
                if calls.fsync(folderFD) != 0 { throw fileError("sync the folder", parentFolder(path)) }
            } else {
                let status = calls.close(fd)
                fd = -1
                if status != 0 { throw fileError("write", path) }
            }
            done = true
        } catch {
            if !done { abandon() }
            throw error
        }
    }

    /// Removes what was written and closes the file.
    func abandon() {
        _ = calls.unlinkat(folderFD, writingName, 0)
        if fd >= 0 { _ = calls.close(fd) }
        fd = -1
        done = true
    }
}

/// A folder of exported files that appears at `path` whole, or not at all: the files are written
/// into a temporary folder beside it (``TempEntries``), synced (one `syncfs`) and renamed into
/// place by ``commit()``.
///
/// `path` must not exist yet, be an empty folder, or be a symbolic link (which is replaced, never
/// followed): an export never mixes its files with others, and never deletes anything else. The
/// folder gets ``FileModes/folderMode(forFiles:)`` of the files' mode, whatever the umask.
final class OutputFolder {
    let path: String
    let tempPath: String
    /// The temporary folder, open (and locked) until this object goes.
    let fd: Int32
    private let parentFD: Int32
    private let tempName: String
    private let fileMode: UInt32
    private var done = false
    private let calls = FileCalls.current

    init(_ path: String, mode: UInt32) throws {
        var info = stat()
        if lstat(path, &info) == 0 {
            switch info.st_mode & S_IFMT {
            case S_IFDIR:
                guard Self.isEmptyFolder(path) else {
                    throw NotesError(.validation, "the folder \(path) is not empty; export into a new or empty folder", field: "path")
                }
            case S_IFLNK:
                break  // replaced by the new folder on commit
            default:
                throw NotesError(.validation, "\(path) is a file; this format exports into a folder (a new or empty one)", field: "path")
            }
        }
        let parent = parentFolder(path)
        let parentFD = calls.openat(AT_FDCWD, parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0)
        guard parentFD >= 0 else { throw fileError("write", path, errno == ENOTDIR ? ENOENT : errno) }
        TempEntries.sweep(parentFD, calls)
        do {
            (tempName, fd) = try TempEntries.createFolder(in: parentFD, mode: FileModes.folderMode(forFiles: mode), for: path, calls)
        } catch {
            _ = calls.close(parentFD)
            throw error
        }
        self.path = path
        self.parentFD = parentFD
        self.fileMode = mode
        tempPath = joinPath(parent, tempName)
    }

    deinit {
        if !done { abandon() }
        _ = calls.close(fd)
        _ = calls.close(parentFD)
    }

    /// A new file named `name` (one path component), or nil when that name is taken.
    func create(_ name: String) throws -> OutputFile? {
        try OutputFile.creating(name, in: fd, folderPath: tempPath, mode: fileMode, calls: calls)
    }

    /// Moves the finished folder to `path` (in place of a symbolic link there): its files and names
    /// synced first (one `syncfs` of the file system, rather than one `fsync` per file), the parent
    /// folder synced after.
    func commit() throws {
        let name = baseName(path)
        var info = stat()
        if fstatat(parentFD, name, &info, AT_SYMLINK_NOFOLLOW) == 0, (info.st_mode & S_IFMT) == S_IFLNK {
            _ = calls.unlinkat(parentFD, name, 0)
        }
        if calls.syncfs(fd) != 0 || calls.renameat(parentFD, tempName, parentFD, name) != 0 {
            let error = fileError("write", path)
            abandon()
            throw error
        }
        done = true
        if calls.fsync(parentFD) != 0 { throw fileError("sync the folder", parentFolder(path)) }
    }

    /// Removes the temporary folder and every file written into it.
    func abandon() {
        done = true
        guard let dir = fdopendir(dup(fd)) else { return }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = String(decoding: direntName(entry), as: UTF8.self)
            if name != "." && name != ".." { names.append(name) }
        }
        closedir(dir)
        for name in names { _ = calls.unlinkat(fd, name, 0) }
        _ = calls.unlinkat(parentFD, tempName, AT_REMOVEDIR)
    }

    static func isEmptyFolder(_ path: String) -> Bool {
        guard let dir = opendir(path) else { return false }
        defer { closedir(dir) }
        while let entry = readdir(dir) {
            let name = direntName(entry)
            if name != [46] && name != [46, 46] { return false }
        }
        return true
    }
}

/// One entry of a folder being imported.
struct FolderEntry {
    /// The name, decoded as UTF-8 (with U+FFFD for bytes that are not, when `validName` is false).
    var name: String
    var kind: Kind
    var validName: Bool

    enum Kind { case file, folder, link }
}

/// The entries of a folder, sorted by the bytes of their names: regular files, folders and
/// symbolic links (not followed: a link is listed as a link), without hidden names (starting with
/// ".") and anything else.
func folderEntries(_ path: String) throws -> [FolderEntry] {
    guard let dir = opendir(path) else { throw fileError("read", path) }
    defer { closedir(dir) }
    var out: [(name: [UInt8], kind: FolderEntry.Kind)] = []
    let folderFD = dirfd(dir)
    while let entry = readdir(dir) {
        let name = direntName(entry)
        if name.isEmpty || name.first == 46 { continue }
        var info = stat()
        let found = name.withUnsafeBufferPointer { bytes in
            bytes.withMemoryRebound(to: CChar.self) { chars in
                var cName = Array(chars)
                cName.append(0)
                return fstatat(folderFD, cName, &info, AT_SYMLINK_NOFOLLOW) == 0
            }
        }
        guard found else { continue }
        switch info.st_mode & S_IFMT {
        case S_IFDIR: out.append((name, .folder))
        case S_IFREG: out.append((name, .file))
        case S_IFLNK: out.append((name, .link))
        default: break
        }
    }
    out.sort { $0.name.lexicographicallyPrecedes($1.name) }
    return out.map { entry in
        let valid = String(validating: entry.name, as: UTF8.self)
        return FolderEntry(name: valid ?? String(decoding: entry.name, as: UTF8.self), kind: entry.kind, validName: valid != nil)
    }
}

/// The canonical absolute path of `path` (every link resolved), or nil when it leads nowhere.
func realPath(_ path: String) -> String? {
    guard let resolved = realpath(path, nil) else { return nil }
    defer { free(resolved) }
    return String(cString: resolved)
}

/// Opens the regular file `relative` ("a/b/c.md") under the folder `root` for reading, following no
/// symbolic link on the way (each component opened with `O_NOFOLLOW`), so that a file or folder
/// swapped for a link after the folder was listed is not read through. Returns the descriptor, or
/// nil when a component is a link (`ELOOP`); other failures throw.
func openBeneath(_ root: String, _ relative: String) throws -> Int32? {
    var fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    guard fd >= 0 else { throw fileError("read", root) }
    let parts = relative.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
    for (n, part) in parts.enumerated() {
        let last = n == parts.count - 1
        let next = openat(fd, part, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | (last ? O_NONBLOCK : O_DIRECTORY))
        let code = errno
        close(fd)
        guard next >= 0 else {
            if code == ELOOP || (code == ENOTDIR && !last) { return nil }
            throw fileError("read", joinPath(root, relative), code)
        }
        fd = next
    }
    var info = stat()
    guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
        close(fd)
        throw NotesError(.validation, "\(joinPath(root, relative)) is not a regular file", field: "path")
    }
    return fd
}

/// Byte order marks at the start of a text file.
enum ByteOrderMark {
    static func isUTF8(_ b: UnsafeBufferPointer<UInt8>) -> Bool {
        b.count >= 3 && b[0] == 0xEF && b[1] == 0xBB && b[2] == 0xBF
    }

    /// The encoding a UTF-16 or UTF-32 mark announces, or nil.
    static func foreign(_ b: UnsafeBufferPointer<UInt8>) -> String? {
        if b.count >= 4 && b[0] == 0xFF && b[1] == 0xFE && b[2] == 0 && b[3] == 0 { return "UTF-32 (little-endian)" }
        if b.count >= 4 && b[0] == 0 && b[1] == 0 && b[2] == 0xFE && b[3] == 0xFF { return "UTF-32 (big-endian)" }
        if b.count >= 2 && b[0] == 0xFF && b[1] == 0xFE { return "UTF-16 (little-endian)" }
        if b.count >= 2 && b[0] == 0xFE && b[1] == 0xFF { return "UTF-16 (big-endian)" }
        return nil
    }

    /// Refuses a file that starts with a UTF-16 or UTF-32 mark, naming the encoding.
    static func check(_ b: UnsafeBufferPointer<UInt8>, path: String) throws {
        guard let encoding = foreign(b) else { return }
        let start = "\(path), line 1: the file is \(encoding) text (it starts with that byte order mark), not UTF-8"
        throw NotesError(.format, encoding.hasPrefix("UTF-16") ? "\(start); for a CSV file pass \(option: "encoding", string: "utf-16"), or save it as UTF-8"
                                                                : "\(start); save it as UTF-8", line: 1, file: path)
    }
}

/// Text in another encoding decoded to UTF-8 with iconv, chunk by chunk.
final class Transcoder {
    let encoding: String
    private let cd: iconv_t
    private let raw: UnsafeMutablePointer<UInt8>
    private let rawCapacity = 1 << 16
    private var rawStart = 0, rawEnd = 0, rawEOF = false
    /// Bytes of the file decoded so far, for errors.
    private var offset: Int64 = 0

    init?(from encoding: String) {
        guard !encoding.isEmpty, encoding.utf8.count < 64, !encoding.utf8.contains(0) else { return nil }
        let cd = iconv_open("UTF-8", encoding)
        guard let cd, Int(bitPattern: cd) != -1 else { return nil }
        self.cd = cd
        self.encoding = encoding
        raw = .allocate(capacity: rawCapacity)
    }

    deinit {
        iconv_close(cd)
        raw.deallocate()
    }

    /// Decodes more of `fd` into `out` (at least 16 bytes of room); 0 at the end of the file.
    func read(_ fd: Int32, into out: UnsafeMutablePointer<UInt8>, capacity: Int, path: String) throws -> Int {
        while true {
            if rawStart == rawEnd || (rawEnd - rawStart < 8 && !rawEOF) {
                if rawStart > 0 {
                    if rawEnd > rawStart { memmove(raw, raw + rawStart, rawEnd - rawStart) }
                    rawEnd -= rawStart
                    rawStart = 0
                }
                while !rawEOF && rawEnd < rawCapacity {
                    let n = Glibc.read(fd, raw + rawEnd, rawCapacity - rawEnd)
                    if n > 0 { rawEnd += n; break }
                    if n == 0 { rawEOF = true; break }
                    if errno != EINTR { throw fileError("read", path) }
                }
            }
            if rawStart == rawEnd {
                return 0
            }
            var inPointer: UnsafeMutablePointer<CChar>? = UnsafeMutableRawPointer(raw + rawStart).assumingMemoryBound(to: CChar.self)
            var inLeft = rawEnd - rawStart
            var outPointer: UnsafeMutablePointer<CChar>? = UnsafeMutableRawPointer(out).assumingMemoryBound(to: CChar.self)
            var outLeft = capacity
            let result = iconv(cd, &inPointer, &inLeft, &outPointer, &outLeft)
            let failure = result == -1 ? errno : 0
            let used = (rawEnd - rawStart) - inLeft
            rawStart += used
            offset += Int64(used)
            let produced = capacity - outLeft
            if produced > 0 { return produced }
            switch failure {
            case 0, E2BIG: continue
            case EINVAL:
                // A character cut by the end of the chunk: read on, unless the file ends there.
                if rawEOF {
                    throw NotesError(.format, "\(path): the file ends inside a character (byte \(offset)); is it really \(encoding) text?", file: path)
                }
            default:
                throw NotesError(.format, "\(path): byte \(offset) is not valid \(encoding) text; pass the file's real encoding as \(option: "encoding")", file: path)
            }
        }
    }

    /// True when `bytes` are valid, complete text in `encoding`.
    static func decodes(_ bytes: [UInt8], from encoding: String) -> Bool {
        guard let t = Transcoder(from: encoding) else { return false }
        var input = bytes.map { CChar(bitPattern: $0) }
        var output = [CChar](repeating: 0, count: bytes.count * 4 + 16)
        return input.withUnsafeMutableBufferPointer { inBuffer in
            output.withUnsafeMutableBufferPointer { outBuffer in
                var inPointer = inBuffer.baseAddress, inLeft = inBuffer.count
                var outPointer = outBuffer.baseAddress, outLeft = outBuffer.count
                return iconv(t.cd, &inPointer, &inLeft, &outPointer, &outLeft) != -1 && inLeft == 0
            }
        }
    }
}
