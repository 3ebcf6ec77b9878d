import Testing
@testable import NotesKit
#if canImport(Glibc)
import Glibc
#endif

// The readers' edge cases, in Swift: the same hostile files the Python suite feeds through the
// ABI (bindings/python/tests/test_exchange.py, test_import_real_files.py), so that `swift test`
// alone catches a change in the CSV, front matter, transcript and JSON readers.

private let uid1 = "0b6f6c1e-3c1a-4f5e-9d2a-7f1c2b3a4d5e"
private let uid2 = "1c7a7d2f-4d2b-4a6f-8e3b-8a2d3c4b5e6f"
private let bom: [UInt8] = [0xEF, 0xBB, 0xBF]

/// Writes `bytes` to a file called `name` in a fresh folder and returns its path.
private func file(_ name: String, _ bytes: [UInt8]) throws -> String {
    let path = try temporaryFolder() + "/" + name
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    guard fd >= 0 else { throw NotesError(.storage, "cannot write \(path)") }
    defer { close(fd) }
    _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    return path
}

private func file(_ name: String, _ text: String) throws -> String { try file(name, Array(text.utf8)) }

/// One article record as NotesKit JSON text (keys in the exporter's order); `changes` replaces or
/// adds members (raw JSON values), nil removes one.
private func article(uid: String? = uid1, type: Bool = true, _ changes: KeyValuePairs<String, String?> = [:]) -> String {
    var members: [(String, String)] = []
    if type { members.append(("type", "\"article\"")) }
    if let uid { members.append(("uid", "\"\(uid)\"")) }
    members += [("title", "\"t\""), ("content", "\"c\""), ("created_at", "\"2024-05-06T07:08:09.123Z\""),
                ("updated_at", "\"2024-05-06T07:08:09.123Z\""), ("revision", "1")]
    for (key, value) in changes {
        if let i = members.firstIndex(where: { $0.0 == key }) {
            if let value { members[i].1 = value } else { members.remove(at: i) }
        } else if let value {
            members.append((key, value))
        }
    }
    return "{" + members.map { "\"\($0.0)\": \($0.1)" }.joined(separator: ", ") + "}"
}

private func nothingWritten(_ store: Store) throws -> Bool {
    try store.articles.count() == 0 && store.articles.drafts().isEmpty && store.lastChangeSeq() == 0
}

/// A file the readers must refuse: where, and what the error says.
struct BadFile: Sendable, CustomTestStringConvertible {
    let name: String
    let bytes: [UInt8]
    let line: Int
    let field: String?
    let message: String

    init(_ name: String, _ text: String, _ line: Int, _ field: String?, _ message: String) {
        self.init(name, Array(text.utf8), line, field, message)
    }

    init(_ name: String, _ bytes: [UInt8], _ line: Int, _ field: String?, _ message: String) {
        self.name = name
        self.bytes = bytes
        self.line = line
        self.field = field
        self.message = message
    }

    var testDescription: String { name + ": " + message }
}

private let good = article(uid: uid2)
private let document = article(uid: uid2, type: false)  // a NotesKit JSON record
private let header = "{\"format\": \"noteskit\", \"version\": 1,\n\"articles\": [\n"

@Suite("The readers of exchange files, edge by edge")
struct ReaderTests {
    // MARK: - Every reader: a malformed file is one clear error, and nothing is written

    @Test("each malformed file is a format error naming file, line and field, and writes nothing", arguments: [
        BadFile("syntax.jsonl", good + "\n{\"type\": \"article\", \"title\": }\n", 2, nil, "invalid JSON"),
        BadFile("type.jsonl", good + "\n" + article(["title": "5"]) + "\n", 2, "title", "title must be a string"),
        BadFile("missing.jsonl", good + "\n{\"type\": \"article\", \"title\": \"t\"}\n", 2, "content", "content is missing"),
        BadFile("blank.jsonl", good + "\n" + article(["title": "\"  \""]) + "\n", 2, "title", "must not be empty"),
        BadFile("uid.jsonl", article(uid: "nope") + "\n", 1, "uid", "must be a UUID"),
        BadFile("time.jsonl", article(["created_at": "\"yesterday\""]) + "\n", 1, "created_at", "ISO-8601"),
        BadFile("rev.jsonl", article(["revision": "0"]) + "\n", 1, "revision", "≥ 1"),
        BadFile("unknown.jsonl", article(["colour": "\"red\""]) + "\n", 1, "colour", "unknown field"),
        BadFile("kind.jsonl", "{\"type\": \"tweet\"}\n", 1, "type", "unknown type"),
        BadFile("dup.jsonl", good + "\n" + good + "\n", 2, "uid", "two articles with uid"),
        BadFile("utf8.jsonl", Array((good + "\n{\"type\": \"article\", \"title\": \"").utf8) + [0xFF] + Array("\", \"content\": \"c\"}\n".utf8),
                2, nil, "UTF-8"),
        BadFile("truncated.jsonl", good + "\n" + good.dropLast(30), 2, nil, "invalid JSON"),
        BadFile("version.jsonl", "{\"type\": \"noteskit\", \"version\": 2}\n" + good + "\n", 1, "version", "unknown NotesKit JSON Lines version 2"),
        BadFile("version.json", "{\"format\": \"noteskit\", \"version\": 2, \"articles\": []}", 1, nil, "unknown NotesKit JSON version 2"),
        BadFile("other.json", "{\"format\": \"evernote\", \"version\": 1}", 1, nil, "not a NotesKit JSON document"),
        BadFile("array.json", "[]", 1, nil, "not a NotesKit JSON document"),
        BadFile("empty.json", "", 1, nil, "the file is empty"),
        BadFile("syntax.json", header + document + ",\n{\"title\" \"x\"}\n]}", 4, nil, "invalid JSON"),
        BadFile("truncated.json", header + document + ",\n" + document.prefix(40), 4, nil, "truncated"),
        BadFile("cut.json", header + document + ",\n", 4, nil, "truncated"),
        BadFile("order.json", "{\"articles\": [], \"format\": \"noteskit\", \"version\": 1}", 1, nil, "must come before"),
        BadFile("dup.json", header + document + ",\n" + document + "]}", 4, "uid", "two articles"),
        BadFile("quote.csv", "title,content\r\nok,fine\r\nbad,\"unterminated\r\nmore\r\n", 3, nil, "ends inside a quoted field"),
        BadFile("stray.csv", "title,content\r\nbad,un\"quoted\r\n", 2, nil, "a quote inside unquoted field"),
        BadFile("after.csv", "title,content\r\n\"a\"b,c\r\n", 2, nil, "text after a closing quote"),
        BadFile("fields.csv", "title,content\r\nonly one field\r\n", 2, nil, "the row has 1 fields, the header 2"),
        BadFile("column.csv", "title,content,colour\r\n", 1, "colour", "unknown column"),
        BadFile("nocontent.csv", "title\r\nt\r\n", 1, "content", "no \"content\" column"),
        BadFile("utf8.csv", Array("title,content\r\nok,".utf8) + [0xC3, 0x28] + [13, 10], 2, "content", "not valid UTF-8"),
        BadFile("time.csv", "title,content,created_at\r\nt,c,2024-13-01T00:00:00Z\r\n", 2, "created_at", "ISO-8601"),
        BadFile("twice.jsonl", "{\"type\": \"article\", \"title\": \"a\", \"title\": \"b\", \"content\": \"c\"}\n", 1, "title", "given twice"),
        BadFile("big.jsonl", article(["revision": "123456789012345678901234567890"]) + "\n", 1, "revision", "whole number"),
        BadFile("deep.jsonl", String(repeating: "[", count: 600) + String(repeating: "]", count: 600) + "\n", 1, nil, "deeper than 512"),
        BadFile("control.jsonl", "{\"type\": \"article\", \"title\": \"a\tb\", \"content\": \"c\"}\n", 1, nil, "control character"),
        BadFile("surrogate.jsonl", "{\"type\": \"article\", \"title\": \"\\udc00\", \"content\": \"c\"}\n", 1, nil, "unpaired surrogate"),
    ])
    func malformed(bad: BadFile) throws {
        let path = try file(bad.name, bad.bytes)
        let store = try Store.memory()
        let error = try #require(throws: NotesError.self) { try store.import(from: path) }
        #expect(error.kind == .format)
        #expect(error.message.contains(bad.message), "\(error.message)")
        #expect(error.file == path && error.line == bad.line && error.field == bad.field)
        #expect(try nothingWritten(store))
    }

    @Test("a byte order mark is skipped in every format", arguments: ["b.json", "b.jsonl", "b.csv", "b.txt", "note.md"])
    func byteOrderMark(name: String) throws {
        let source = try Store.memory()
        _ = try source.articles.create(title: "周末", content: "今天天气真好")
        let chat = try source.conversations.create(title: "Alice")
        _ = try source.messages.receive("hi", in: chat.id, sentAt: Timestamp(iso8601: "2024-01-02T03:04:05Z"))
        let folder = try temporaryFolder()
        var path = folder + "/" + name
        if name.hasSuffix(".md") {
            _ = try source.export(to: folder + "/vault", format: .markdown)
            path = folder + "/vault/周末.md"
        } else {
            _ = try source.export(to: path, options: name.hasSuffix(".txt") ? ExportOptions(conversation: chat.id) : ExportOptions())
        }
        let bytes = try #require(readAll(path))
        let marked = try file("marked-" + name, bom + bytes)
        let plain = try Store.memory(), store = try Store.memory()
        let expected = try plain.import(from: path), got = try store.import(from: marked)
        #expect(got.created == expected.created && got.created > 0 && got.skipped == expected.skipped)
        #expect(try store.articles.list().items.map { [$0.uid, $0.title, $0.content] } == plain.articles.list().items.map { [$0.uid, $0.title, $0.content] })
        let texts = { (s: Store) in try s.conversations.list().items.flatMap { try s.messages.history(of: $0.id).items.map(\.content) } }
        #expect(try texts(store) == texts(plain))
    }

    @Test("a UTF-16 or UTF-32 mark is a format error naming the encoding", arguments: [
        ([0xFF, 0xFE] as [UInt8], "UTF-16 (little-endian)"), ([0xFE, 0xFF], "UTF-16 (big-endian)"), ([0xFF, 0xFE, 0x00, 0x00], "UTF-32 (little-endian)"),
    ], [".json", ".jsonl", ".csv", ".txt", ".md"])
    func wideMarks(mark: ([UInt8], String), suffix: String) throws {
        let path = try file("file" + suffix, mark.0 + Array("title,content\n".utf8).flatMap { [$0, 0] })
        let store = try Store.memory()
        let error = try #require(throws: NotesError.self) { try store.import(from: path) }
        #expect(error.kind == .format && error.message.contains(mark.1) && error.line == 1, "\(error.message)")
        #expect(try nothingWritten(store))
    }

    // MARK: - CSV

    @Test("CSV: quotes, doubled quotes, delimiters and line breaks inside fields, CRLF or LF, empty optional cells")
    func csvFields() throws {
        let store = try Store.memory()
        let empty = try file("empty.csv", "title,content\r\nfine,x\r\nplain,\"\"\r\n")
        let error = try #require(throws: NotesError.self) { try store.import(from: empty) }
        #expect(error.kind == .format && error.line == 3 && error.field == "content", "\(error.message)")  // an empty article
        #expect(try nothingWritten(store))
        let fixed = try file("b.csv", "title,content,created_at\r\n\"a, \"\"b\"\"\",\"line 1\r\nline 2\nline 3\",\r\n\r\nlf,\"x\ny\",2024-01-15T00:00:00Z\n")
        #expect(try store.import(from: fixed).created == 2)
        let byTitle = Dictionary(uniqueKeysWithValues: try store.articles.list().items.map { ($0.title, $0) })
        #expect(byTitle["a, \"b\""]?.content == "line 1\r\nline 2\nline 3")
        #expect(byTitle["lf"]?.content == "x\ny" && byTitle["lf"]?.createdAt == Timestamp(iso8601: "2024-01-15T00:00:00Z"))
    }

    @Test("CSV: the delimiter is sniffed, named by Excel's sep= line, or given")
    func csvDelimiters() throws {
        let store = try Store.memory()
        let excel = try file("excel.csv", bom + Array("title;content\r\nBericht;\"Zahlen; Fakten\"\r\nMüll;a,b\r\n".utf8))
        let sep = try file("sep.csv", "sep=|\r\ntitle|content\r\na|b,c\r\n")
        let tabs = try file("tabs.csv", "title\tcontent\r\nx\ty;z\r\n")
        _ = try store.import(from: excel)
        _ = try store.import(from: sep)
        var options = ImportOptions()
        options.delimiter = "\t"
        _ = try store.import(from: tabs, options: options)
        #expect(try store.articles.list().items.map { [$0.title, $0.content] }.sorted { $0[0] < $1[0] }
                == [["Bericht", "Zahlen; Fakten"], ["Müll", "a,b"], ["a", "b,c"], ["x", "y;z"]])
    }

    @Test("CSV: a legacy encoding is read when named, and located with the likely one when not")
    func csvEncodings() throws {
        let gb18030: [UInt8] = [189, 241, 204, 236, 204, 236, 198, 248, 213, 230, 186, 195]  // 今天天气真好
        let cp1252: [UInt8] = [99, 97, 102, 233, 32, 99, 114, 232, 109, 101]  // café crème
        for (encoding, bytes, text) in [("gb18030", gb18030, "今天天气真好"), ("cp1252", cp1252, "café crème")] {
            let path = try file("legacy.csv", Array("title,content\r\nok,fine\r\nt,".utf8) + bytes + [13, 10])
            let store = try Store.memory()
            let error = try #require(throws: NotesError.self) { try store.import(from: path) }
            #expect(error.kind == .format && error.line == 3 && error.field == "content")
            #expect(error.message.contains("`encoding: \"\(encoding)\"`") && error.message.contains("column \"content\""), "\(error.message)")
            #expect(error.options == [NotesError.Option(name: "encoding", value: .string(encoding))])
            #expect(try nothingWritten(store))
            var options = ImportOptions()
            options.encoding = encoding
            #expect(try store.import(from: path, options: options).created == 2)
            #expect(try store.articles.list().items.map(\.content).contains(text))
        }
    }

    @Test("CSV: columns map other headers, and unknown ones are refused unless ignored")
    func csvColumns() throws {
        let path = try file("export.csv", "Title,Body,Tags,Created\r\nTrip,Pack the tent,travel,2024-01-15\r\n")
        let store = try Store.memory()
        let unknown = try #require(throws: NotesError.self) { try store.import(from: path) }
        #expect(unknown.message.contains("unknown column \"Title\""))
        var options = ImportOptions()
        options.columns = [("Title", "title"), ("Body", "content"), ("Created", "created_at")]
        let tags = try #require(throws: NotesError.self) { try store.import(from: path, options: options) }
        #expect(tags.message.contains("unknown column \"Tags\""))
        options.unknownColumns = .ignore
        #expect(try store.import(from: path, options: options).created == 1)
        let a = try #require(try store.articles.list().items.first)
        #expect(a.title == "Trip" && a.content == "Pack the tent" && a.createdAt == Timestamp(iso8601: "2024-01-15T00:00:00Z"))
    }

    // MARK: - Front matter

    @Test("front matter that is malformed is a format error with its line", arguments: [
        BadFile("b.md", "---\ntitle: x\n", 1, nil, "never closed"),
        BadFile("b.md", "---\r\ntitle: x\r\n", 1, nil, "never closed"),
        BadFile("b.md", "---\ntitle: x\njust words\n---\n\nbody", 3, nil, "not \"key: value\""),
        BadFile("b.md", "---\ntitle:x\n---\n\nbody", 2, nil, "not \"key: value\""),
        BadFile("b.md", "---\ntitle: \"unclosed\n---\n\nbody", 2, "title", "not closed"),
        BadFile("b.md", "---\ntitle: 'unclosed\n---\n\nbody", 2, "title", "not closed"),
        BadFile("b.md", "---\ntitle: \"a\" b\n---\n\nbody", 2, "title", "text after the closing quote"),
        BadFile("b.md", "---\ntitle: \"\\q\"\n---\n\nbody", 2, "title", "unknown escape"),
        BadFile("b.md", "---\ntitle: \"\\ud800\"\n---\n\nbody", 2, "title", "invalid \\u escape"),
        BadFile("b.md", "---\ntitle: x\ncreated: last tuesday\n---\n\nbody", 3, "created", "ISO-8601"),
        BadFile("b.md", "---\ntitle: x\nTitle: y\n---\n\nbody", 3, "title", "given twice"),
        BadFile("b.md", "---\ntitle: x\nuid: 42\n---\n\nbody", 3, "uid", "must be a UUID"),
        BadFile("b.md", "---\ntitle: \"  \"\n---\n\nbody", 2, "title", "must not be empty"),
        BadFile("b.md", "---\ntitle: |\n  block\n---\n\nbody", 2, "title", "block scalars"),
        BadFile("b.md", "---\ntitle:\n  - a\n---\n\nbody", 3, nil, "on one line"),
        BadFile("b.md", Array("---\ntitle: x\n---\n\nfine\nbad ".utf8) + [0xFF] + Array(" here\n".utf8), 6, nil, "not valid UTF-8"),
    ])
    func frontMatterErrors(bad: BadFile) throws {
        let folder = try temporaryFolder()
        try writeFile(folder + "/a good one.md", "---\ntitle: fine\n---\n\nbody")
        let path = folder + "/" + bad.name
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        _ = bad.bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        let store = try Store.memory()
        let error = try #require(throws: NotesError.self) { try store.import(from: folder, format: .markdown) }
        #expect(error.kind == .format && error.message.contains(bad.message), "\(error.message)")
        #expect(error.file == path && error.line == bad.line && error.field == bad.field)
        #expect(try nothingWritten(store))
    }

    @Test("front matter: fences, CRLF, comments, case, quoting and the values NotesKit ignores")
    func frontMatterValues() throws {
        func parse(_ text: String) throws -> (values: [String: String], body: String, line: Int, has: Bool) {
            try Array(text.utf8).withUnsafeBufferPointer { buffer in
                let parsed = try FrontMatter.parse(buffer)
                return (parsed.values, String(decoding: buffer[parsed.bodyOffset...], as: UTF8.self), parsed.bodyLine, parsed.hasFrontMatter)
            }
        }
        let crlf = try parse("---\r\nTitle: Trip\r\nuid: \(uid1)\r\n---\r\n\r\nbody\r\n")
        #expect(crlf.values == ["title": "Trip", "uid": uid1] && crlf.body == "body\r\n" && crlf.line == 6)
        let dots = try parse("---\ntitle: a: b # not the title\n# a comment\n\ntags: [x, y]\naliases:\n  - one\n  - two\n...\nno blank line")
        #expect(dots.values == ["title": "a: b"] && dots.body == "no blank line" && dots.line == 10)
        #expect(try parse("---\ntitle: a#b\nuid: ~\ncreated: null\nupdated:\n---\n").values == ["title": "a#b"])
        #expect(try parse("---\ntitle: 'It''s'  # quoted\n---\n").values == ["title": "It's"])
        #expect(try parse("---\ntitle: \"\\x41\\uD83D\\uDE00\\u00e9\\t\" # x\n---\n").values == ["title": "A😀é\t"])
        let none = try parse("No front matter here.\n---\n")
        #expect(!none.has && none.values.isEmpty && none.body == "No front matter here.\n---\n" && none.line == 1)
        let unclosedLooking = try parse("--- \ntitle: x\n---")
        #expect(unclosedLooking.has && unclosedLooking.values == ["title": "x"] && unclosedLooking.body.isEmpty)
    }

    @Test("Markdown: a byte order mark keeps the front matter; an empty note is skipped and listed")
    func markdownFiles() throws {
        let note = try file("note.md", bom + Array("---\ntitle: Shopping\nuid: \(uid1)\n---\n\nmilk".utf8))
        let store = try Store.memory()
        #expect(try store.import(from: note).created == 1)
        let a = try #require(try store.articles.list().items.first)
        #expect(a.uid == uid1 && a.title == "Shopping" && a.content == "milk")
        let vault = try temporaryFolder()
        try writeFile(vault + "/Untitled.md", "")
        try writeFile(vault + "/Untitled 1.md", "---\ntags: []\n---\n\n  \n")
        try writeFile(vault + "/Ideas.md", "# Ideas\n\nfly")
        let report = try store.import(from: vault, format: .markdown)
        #expect(report.created == 1 && report.skipped == 2 && report.errors.isEmpty)
        #expect(report.skips.map { [baseName($0.file), "\($0.line)", $0.reason.rawValue] }.sorted { $0[0] < $1[0] }
                == [["Untitled 1.md", "1", "the note is empty"], ["Untitled.md", "1", "the note is empty"]])
    }

    // MARK: - Transcripts

    @Test("a transcript from elsewhere: CRLF, blank and indented lines, backslashes, a group chat's names")
    func transcriptLenient() throws {
        let path = try file("Bob.txt", "\r\n[2024-05-06 07:08:09] Them: hello\r\n  indented\r\n\r\n[2024-05-06 07:09:00] Me: \\not an escape\r\n"
                                         + "[2024-05-06 07:10:00] Carol: from a group\r\n")
        let store = try Store.memory()
        #expect(try store.import(from: path).created == 4)
        let bob = try #require(try store.conversations.list().items.first)
        #expect(bob.title == "Bob")
        let messages = try store.messages.history(of: bob.id).items
        #expect(messages.map(\.content) == ["hello\n  indented\n", "\\not an escape", "from a group"])
        #expect(messages.map(\.fromMe) == [false, true, false] && messages.map(\.sender) == [nil, nil, "Carol"])
        #expect(messages[0].sentAt == Timestamp(iso8601: "2024-05-06T07:08:09Z"))
        #expect(try store.import(from: path).created == 0)  // twice = once
    }

    @Test("a transcript line that starts no message, or is not UTF-8, is a format error on its line", arguments: [
        BadFile("a.txt", "A header the importer does not know\n[2024-05-06 07:08:09] Me: hi\n", 1, nil, "expected a message line"),
        BadFile("b.txt", "\n  \nstray\n[2024-05-06 07:08:09] Me: hi\n", 3, nil, "expected a message line"),
        BadFile("c.txt", Array("[2024-05-06 07:08:09] Me: caf".utf8) + [0xE9, 10], 1, nil, "not valid UTF-8"),
        // Read as a WhatsApp chat (a bracketed date, a name, a colon): its date is refused there.
        BadFile("d.txt", "[2024-13-06 07:08:09] Me: a month that does not exist\n", 1, "date", "the date or time is not valid"),
        BadFile("e.txt", "[2024-05-06T07:08:09] Me: ISO's T is not the transcript's shape\n", 1, nil, "expected a message line"),
    ])
    func transcriptErrors(bad: BadFile) throws {
        let path = try file(bad.name, bad.bytes)
        let store = try Store.memory()
        let error = try #require(throws: NotesError.self) { try store.import(from: path) }
        #expect(error.kind == .format && error.message.contains(bad.message), "\(error.message)")
        #expect(error.file == path && error.line == bad.line && error.field == bad.field)
        #expect(try store.lastChangeSeq() == 0)
    }

    @Test("combining marks, backslashes and header look-alikes at line starts survive a transcript")
    func transcriptRoundTrip() throws {
        let source = try Store.memory()
        let chat = try source.conversations.create(title: "c")
        let texts = ["\u{301}x", "a\n\\\u{301}b", "a\n\u{301}[2024-01-01 00:00:00] Me: b", "a\r\nb\n\u{308}", "x\n[2024-01-01 00:00:00] Carol: y"]
        _ = try source.messages.insertMany(texts.enumerated().map { i, text in
            NewMessage(content: text, fromMe: i % 2 == 0, sentAt: Timestamp(milliseconds: 1_704_067_200_000 + Int64(i) * 1_000))
        }, in: chat.id)
        let path = try temporaryFolder() + "/c.txt"
        _ = try source.export(to: path)
        let target = try Store.memory()
        #expect(try target.import(from: path).created == texts.count + 1)
        let copied = try #require(try target.conversations.list().items.first)
        #expect(try target.messages.history(of: copied.id).items.map(\.content) == texts)
    }

    @Test("with on_error skip, the good records go in and every bad line is reported where it is")
    func skipErrors() throws {
        let path = try file("mixed.jsonl", [article(uid: uid1), "not json", article(uid: uid2, ["title": "\"\""]), article(uid: uid1),
                                             article(uid: nil, ["title": "\"no uid\""]), ""].joined(separator: "\n"))
        let store = try Store.memory()
        let report = try store.import(from: path, options: ImportOptions(onError: .skip))
        #expect(report.created == 2 && report.updated == 0 && report.skipped == 0)
        #expect(report.errors.map(\.line) == [2, 3, 4] && report.errors.map(\.field) == [nil, "title", "uid"])
        #expect(report.errors.allSatisfy { $0.kind == .format && $0.file == path })
        #expect(try store.articles.list().items.map(\.title).sorted() == ["no uid", "t"])
    }

    @Test("transcript message lines: who, when, and what does not start a message")
    func transcriptHeaders() throws {
        let me = try #require(TranscriptLines.header("[2024-01-02 03:04:05] Me: a: b"))
        #expect(me.fromMe && me.text == "a: b" && me.sender == nil)
        #expect(TranscriptLines.header("[2024-01-02 03:04:05] Them: ")?.text == "")
        #expect(TranscriptLines.header("[2024-01-02 03:04:05] Me:x") == nil)
        #expect(TranscriptLines.header("[2024-01-02 03:04:05]Me: x") == nil)
        #expect(TranscriptLines.header("[2024-01-02 03:04] Me: x") == nil)
        #expect(TranscriptLines.header("2024-01-02 03:04:05 Me: x") == nil)
        #expect(TranscriptLines.header("[2024-02-30 03:04:05] Me: x") == nil)
        #expect(TranscriptLines.header("[2024-01-02 03:04:05] \u{301}Me: x")?.sender == "\u{301}Me")  // bytes, not Characters
        let long = String(repeating: "n", count: TranscriptLines.maxSenderBytes + 1)
        #expect(TranscriptLines.header(Substring("[2024-01-02 03:04:05] \(long): x")) == nil)
        #expect(TranscriptLines.header("[2024-01-02 03:04:05]  : x") == nil)
    }

    // MARK: - JSON

    @Test("JSON numbers: integers stay exact to Int64, larger ones become doubles, infinities are refused")
    func jsonNumbers() throws {
        #expect(try JSONValue.parse("9223372036854775807") == .int(.max))
        #expect(try JSONValue.parse("-9223372036854775808") == .int(.min))
        #expect(try JSONValue.parse("9223372036854775808") == .double(9_223_372_036_854_775_808))
        #expect(try JSONValue.parse("123456789012345678901234567890") == .double(1.2345678901234568e29))
        #expect(try JSONValue.parse("-0") == .int(0))
        #expect(try JSONValue.parse("1.5e3") == .double(1_500))
        #expect(try JSONValue.parse("1E-2") == .double(0.01))
        for text in ["1e400", "-1e400", "+1", ".5", "1.", "1e", "1e+", "-", "NaN", "Infinity", "0x10", "1_000"] {
            #expect(throws: JSONSyntaxError.self, "\(text)") { try JSONValue.parse(text) }
        }
    }

    @Test("JSON strings: escapes, surrogate pairs, raw control characters and bad UTF-8")
    func jsonStrings() throws {
        #expect(try JSONValue.parse(#""\ud83d\ude00 \u00E9 \/ \b\f\n\r\t \u0000""#) == .string("😀 é / \u{08}\u{0C}\n\r\t \u{0}"))
        #expect(try JSONValue.parse(Array("\"今天 😀\"".utf8)) == .string("今天 😀"))
        let refused: [[UInt8]] = [
            Array("\"\\ud83d\"".utf8), Array("\"\\ude00\"".utf8), Array("\"\\ud83d\\u0041\"".utf8), Array("\"\\x41\"".utf8),
            Array("\"\\u12G4\"".utf8), Array("\"a\nb\"".utf8), Array("\"a\tb\"".utf8), Array("'single'".utf8), Array("\"open".utf8),
            [34, 0xFF, 34], [34, 0xC0, 0xAF, 34], [34, 0xED, 0xA0, 0x80, 34], [34, 0xF4, 0x90, 0x80, 0x80, 34], [34, 0xE4, 0xBB, 34],
            bom + Array("{}".utf8),
        ]
        for bytes in refused {
            #expect(throws: JSONSyntaxError.self, "\(bytes)") { try JSONValue.parse(bytes) }
        }
    }

    @Test("JSON structure: key order and repeated keys are kept for the reader to judge; nesting is bounded")
    func jsonStructure() throws {
        let value = try JSONValue.parse(#" { "b" : 1 , "a" : [ ] , "b" : { } } "#)
        #expect(value == .object([("b", .int(1)), ("a", .array([])), ("b", .object([]))]))
        #expect(value["b"] == .int(1))
        let twice = try JSONObject(value, kind: .format)
        let error = try #require(throws: NotesError.self) { try twice.only(["a", "b"]) }
        #expect(error.kind == .format && error.field == "b" && error.message.contains("given twice"))
        let deepest = String(repeating: "[", count: JSONParser.maxDepth) + String(repeating: "]", count: JSONParser.maxDepth)
        #expect(throws: Never.self) { try JSONValue.parse(deepest) }
        #expect(throws: JSONSyntaxError.self) { try JSONValue.parse("[" + deepest + "]") }
        for text in ["{\"a\": 1,}", "[1 2]", "{\"a\" 1}", "{1: 2}", "// c\n{}", "{} {}", "\u{A0}{}", "tru", "nul"] {
            #expect(throws: JSONSyntaxError.self, "\(text)") { try JSONValue.parse(text) }
        }
    }

    @Test("a JSON syntax error gives the line and column of its first bad character")
    func jsonPositions() throws {
        let error = try #require(throws: JSONSyntaxError.self) { try JSONValue.parse("{\n  \"今天\": tru\n}") }
        #expect(error.line == 2 && error.column == 9, "\(error)")
        let end = try #require(throws: JSONSyntaxError.self) { try JSONValue.parse("[1,\r\n2,") }
        #expect(end.line == 2 && end.message.contains("end of JSON"))
    }
}

/// The whole file at `path`, or nil.
private func readAll(_ path: String) -> [UInt8]? {
    let fd = open(path, O_RDONLY)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var out: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65_536)
    while true {
        let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if n <= 0 { break }
        out += chunk[..<n]
    }
    return out
}
