#if canImport(Glibc)
import Glibc
#endif

/// A folder of Markdown files, one per article, each with YAML front matter (see ``FrontMatter``)
/// and the content as its body.
///
/// Export names each file after its article's title, made safe (``SafeFileName``) and unique in
/// the folder; every file is created inside the new folder by name (one path component, never a
/// link), so no title can write outside it. Import reads every `.md` file under the folder
/// (sub-folders too; hidden names and symbolic links are skipped, and links leading outside the
/// folder are listed in the report), in name order, one file in memory at a time; every file is
/// opened one path component at a time without following a link. A file without front matter is
/// imported too: its title is its file name, its times the file's modification time. A file
/// without a `uid` gets one derived from its path in the folder, so importing the folder again
/// finds it.
enum MarkdownFolder {
    // MARK: - Export

    static func export(_ store: Store, to path: String, options: ExportOptions) throws -> ExportReport {
        let folder = try OutputFolder(path, mode: options.fileMode)
        var report = ExportReport()
        var names = SafeFileName.Registry()
        try store.exportSnapshot(range: options.range) { reader in
            var w = JSONWriter(capacity: 1 << 16)
            try reader.forEachArticle { a in
                w.bytes.removeAll(keepingCapacity: true)
                FrontMatter.write(a, into: &w)
                w.bytes.append(contentsOf: a.content.utf8)
                var attempt = 1
                while true {
                    let name = names.claim(SafeFileName.make(a.title), attempt: &attempt)
                    if let file = try folder.create(name) {
                        try file.drain(&w, force: true)
                        try file.commit()
                        break
                    }
                }
                report.articles += 1
                report.files += 1
            }
        }
        try folder.commit()
        return report
    }

    // MARK: - Import

    static func read(_ path: String, isFolder: Bool, into importer: Importer) throws {
        guard isFolder else {
            try importer.begin(total: 1)
            try readFile(path, relative: baseName(path), open: { try InputFile(path: path) }, into: importer)
            importer.advance(to: 1)
            return
        }
        let listed = try markdownFiles(under: path)
        for link in listed.links { importer.skippedLink(link) }
        try importer.begin(total: Int64(listed.files.count))
        for (n, relative) in listed.files.enumerated() {
            try readFile(joinPath(path, relative), relative: relative, open: {
                guard let fd = try openBeneath(path, relative) else { return nil }
                return try InputFile(fd: fd, path: joinPath(path, relative))
            }, into: importer)
            importer.advance(to: Int64(n + 1))
        }
    }

    /// Every `.md` file under `root`, as paths relative to it, sorted, and the symbolic links that
    /// are not read because they lead outside `root` (or nowhere) where a Markdown file or a folder
    /// would have been read. A name that is not UTF-8 is listed too (to be reported, not silently
    /// left out). Links that stay inside `root` are left out: what they lead to is read under its
    /// own name.
    static func markdownFiles(under root: String) throws -> (files: [String], links: [String]) {
        var files: [String] = [], links: [String] = []
        let rootPath = realPath(root)
        let inside = rootPath.map { $0 == "/" ? "/" : $0 + "/" }
        func isMarkdown(_ name: String) -> Bool {
            name.lowercased().hasSuffix(".md") || name.lowercased().hasSuffix(".markdown")
        }
        func walk(_ relative: String, depth: Int) throws {
            guard depth < 64 else { return }
            let folder = relative.isEmpty ? root : joinPath(root, relative)
            for entry in try folderEntries(folder) {
                let child = relative.isEmpty ? entry.name : relative + "/" + entry.name
                switch entry.kind {
                case .folder:
                    try walk(child, depth: depth + 1)
                case .file:
                    if isMarkdown(entry.name) { files.append(entry.validName ? child : "\u{FFFD}" + child) }
                case .link:
                    let target = joinPath(folder, entry.name)
                    if let inside, let resolved = realPath(target), resolved == rootPath || resolved.hasPrefix(inside) { continue }
                    if isMarkdown(entry.name) || fileKind(target)?.isDirectory == true {
                        links.append(entry.validName ? child : "\u{FFFD}" + child)
                    }
                }
            }
        }
        try walk("", depth: 0)
        return (files, links)
    }

    /// Reads one file, opened by `open` (nil: it turned into a symbolic link since it was listed,
    /// and is skipped as one).
    private static func readFile(_ path: String, relative: String, open: () throws -> InputFile?, into importer: Importer) throws {
        let location = SourceLocation(file: path, line: 1)
        guard !relative.hasPrefix("\u{FFFD}") else {
            try importer.fail(formatError("path", "the file name is not valid UTF-8; rename it"), at: location)
            return
        }
        guard let file = try open() else {
            importer.skippedLink(relative)
            return
        }
        let modified = file.modified
        var bytes = try file.readAll()
        if try bytes.withUnsafeBufferPointer({ try ByteOrderMark.check($0, path: path); return ByteOrderMark.isUTF8($0) }) {
            bytes.removeFirst(3)
        }
        if isEmptyNote(bytes) {
            try importer.leaveOut(.emptyNote, at: location)
            return
        }
        try importer.add(try record(bytes, modified: modified, relative: relative, times: importer.times), at: location)
    }

    /// A file with nothing but white space, or front matter and no body (Obsidian makes one on
    /// every stray click): skipped, not an error.
    static func isEmptyNote(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBufferPointer { buffer in
            guard String(validating: buffer, as: UTF8.self) != nil, let front = try? FrontMatter.parse(buffer) else { return false }
            return buffer[front.bodyOffset...].allSatisfy { $0 == 32 || $0 == 9 || $0 == 10 || $0 == 13 }
        }
    }

    /// The article in one file; errors carry their line in the file.
    private static func record(_ bytes: [UInt8], modified: Timestamp?, relative: String, times: TimeReader) throws -> ExchangeRecord {
        try bytes.withUnsafeBufferPointer { buffer in
            if String(validating: buffer, as: UTF8.self) == nil {
                throw NotesError(.format, "the file is not valid UTF-8", line: firstInvalidLine(buffer))
            }
            let front = try FrontMatter.parse(buffer)
            /// Runs `body`, placing its error on the line of the field at fault (the body's line for
            /// the content, or a field the front matter lacks).
            func on<T>(_ body: () throws -> T) throws -> T {
                do {
                    return try body()
                } catch var error as NotesError {
                    error.line = error.field.flatMap { front.lines[$0] } ?? front.bodyLine
                    throw error
                }
            }
            let body = String(decoding: UnsafeBufferPointer(rebasing: buffer[front.bodyOffset...]), as: UTF8.self)
            var title = front.values["title"]
            if title == nil {
                var name = baseName(relative)
                if let dot = name.lastIndex(of: "."), dot != name.startIndex { name = String(name[..<dot]) }
                title = name
            }
            let uid = try on { try Fields.uid(front.values["uid"] ?? DerivedUID.make(["markdown", relative])) }
            let created = try on { try front.values["created"].map { try times.timestamp($0, field: "created") } }
            let updated = try on { try front.values["updated"].map { try times.timestamp($0, field: "updated") } }
            let revision = try on {
                try front.values["revision"].map { try Fields.revision(try Fields.integer($0, field: "revision")) }
            }
            let record = try on {
                try Fields.article(ArticleRecord(uid: uid, title: title ?? "", content: body,
                                                 createdAt: created, updatedAt: updated, revision: revision, modifiedAt: modified))
            }
            return .article(record)
        }
    }

    /// The 1-based number of the first line that is not valid UTF-8.
    static func firstInvalidLine(_ bytes: UnsafeBufferPointer<UInt8>) -> Int {
        var line = 1, start = 0
        for i in 0...bytes.count where i == bytes.count || bytes[i] == 10 {
            if String(validating: UnsafeBufferPointer(rebasing: bytes[start..<i]), as: UTF8.self) == nil { return line }
            line += 1
            start = i + 1
        }
        return 1
    }
}

/// File names made from titles: safe on Linux, macOS and Windows, one path component, unique.
enum SafeFileName {
    /// The longest name made, in UTF-8 bytes (before " (n)" and ".md"); file systems allow 255.
    static let maxBytes = 120

    /// A file name for `title`, without extension: path separators, NUL and other control
    /// characters, and the characters Windows refuses (`\ / : * ? " < > |`) become `_`; leading
    /// and trailing spaces and dots go (so no `.`, `..` or hidden file); Windows device names
    /// (CON, NUL, COM1, …) get a leading `_`; long titles are cut at a character boundary; an
    /// empty result is `untitled`.
    static func make(_ title: String) -> String {
        var out = ""
        for scalar in title.unicodeScalars {
            let v = scalar.value
            let unsafe = v < 0x20 || (0x7F...0x9F).contains(v) || v == 0x2028 || v == 0x2029
                || "\\/:*?\"<>|".unicodeScalars.contains(scalar)
            out.unicodeScalars.append(unsafe ? "_" : scalar)
        }
        out = trim(out)
        if out.utf8.count > maxBytes {
            var cut = ""
            for c in out {
                if cut.utf8.count + c.utf8.count > maxBytes { break }
                cut.append(c)
            }
            out = trim(cut)
        }
        if out.isEmpty { return "untitled" }
        let stem = String(String.UnicodeScalarView(out.unicodeScalars.prefix { $0 != "." })).uppercased()
        let trimmedStem = stem.trimmingSpaces()
        let reserved = ["CON", "PRN", "AUX", "NUL"] + (1...9).flatMap { ["COM\($0)", "LPT\($0)"] }
        if reserved.contains(trimmedStem) { out = "_" + out }
        return out
    }

    /// Without leading and trailing dots and white space, scalar by scalar (a dot followed by a
    /// combining mark is one Character, and must not survive as a leading dot).
    private static func trim(_ s: String) -> String {
        var t = Substring(s).unicodeScalars
        while let c = t.first, c == "." || c.properties.isWhitespace || c.properties.generalCategory == .nonspacingMark { t = t.dropFirst() }
        while let c = t.last, c == "." || c.properties.isWhitespace { t = t.dropLast() }
        return String(t)
    }

    /// The names given out in one folder, compared without regard to case (so the folder can be
    /// copied to a case-insensitive file system). Holds 8 bytes a name.
    struct Registry {
        private var used = Set<UInt64>()

        /// `base.md`, or `base (n).md` for the first n ≥ `attempt` whose name is free; `attempt`
        /// moves past the name given out (in case the file system still refuses it).
        mutating func claim(_ base: String, attempt: inout Int) -> String {
            while true {
                let name = attempt == 1 ? base + ".md" : base + " (\(attempt)).md"
                attempt += 1
                if used.insert(Self.key(name)).inserted { return name }
            }
        }

        static func key(_ name: String) -> UInt64 {
            var h: UInt64 = 0xcbf2_9ce4_8422_2325
            for byte in name.lowercased().utf8 { h = (h ^ UInt64(byte)) &* 0x100_0000_01b3 }
            return DerivedUID.mix(h)
        }
    }
}
