import Testing
@testable import NotesKit
#if canImport(Glibc)
import Glibc
#endif

/// A fresh temporary folder.
func temporaryFolder() throws -> String {
    var template = Array("/tmp/noteskit-test-XXXXXX".utf8CString)
    guard let made = mkdtemp(&template) else { throw NotesError(.storage, "mkdtemp failed") }
    return String(cString: made)
}

func writeFile(_ path: String, _ text: String) throws {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    guard fd >= 0 else { throw NotesError(.storage, "cannot write \(path)") }
    defer { close(fd) }
    var text = text
    _ = text.withUTF8 { write(fd, $0.baseAddress, $0.count) }
}

@Suite("Import and export in the core")
struct ExchangeTests {
    @Test("an error names the options to pass in the core's own words, and lists them for the bindings")
    func optionsInMessages() throws {
        let folder = try temporaryFolder()
        let store = try Store.memory()
        let error = try #require(throws: NotesError.self) { try store.export(to: folder) }
        #expect(error.code == "folder_needs_format")
        #expect(error.message.contains("`format: .markdown` or `format: .csv`"))
        #expect(error.options == [NotesError.Option(name: "format", value: .choice("markdown")),
                                  NotesError.Option(name: "format", value: .choice("csv"))])
        #expect(error.options.allSatisfy { error.message.contains($0.text) })
        let plain = NotesError(.validation, "no options here")
        #expect(plain.options.isEmpty)
    }

    @Test("a store round-trips through NotesKit JSON and JSON Lines with every field")
    func roundTrip() throws {
        let folder = try temporaryFolder()
        let source = try Store.memory()
        let made = try source.articles.createMany([
            NewArticle(title: "一", content: "line\n\"two\"", createdAt: Timestamp(milliseconds: 1_000)),
            NewArticle(title: "two", content: "2", createdAt: Timestamp(milliseconds: -5_000), updatedAt: Timestamp(milliseconds: 9_000)),
        ])
        _ = try source.articles.update(made[1].id, content: "edited")
        let draft = try source.articles.edit(made[0].id)
        _ = try source.articles.updateDraft(draft.id, content: "")
        for name in ["b.json", "b.jsonl"] {
            let path = folder + "/" + name
            let exported = try source.export(to: path)
            #expect(exported.articles == 2 && exported.drafts == 1)
            let target = try Store.memory()
            let report = try target.import(from: path)
            #expect(report.created == 3 && report.errors.isEmpty)
            #expect(try target.articles.list().items.map { [$0.uid, $0.title, $0.content, "\($0.createdAt)", "\($0.updatedAt)", "\($0.revision)"] }
                    == source.articles.list().items.map { [$0.uid, $0.title, $0.content, "\($0.createdAt)", "\($0.updatedAt)", "\($0.revision)"] })
            let copied = try #require(try target.articles.drafts().first)
            #expect(copied.uid == draft.uid && copied.baseRevision == draft.baseRevision && copied.content == "")
            #expect(try target.import(from: path).skipped == 3)
        }
    }

    @Test("a malformed record names file, line and field, and writes nothing")
    func malformed() throws {
        let folder = try temporaryFolder()
        let path = folder + "/bad.jsonl"
        try writeFile(path, "{\"type\":\"article\",\"title\":\"ok\",\"content\":\"c\"}\n{\"type\":\"article\",\"title\":\" \",\"content\":\"c\"}\n")
        let store = try Store.memory()
        let error = try #require(throws: NotesError.self) { try store.import(from: path) }
        #expect(error.kind == .format && error.file == path && error.line == 2 && error.field == "title")
        #expect(try store.articles.count() == 0)
        let report = try store.import(from: path, options: ImportOptions(onError: .skip))
        #expect(report.created == 1 && report.errors.map(\.line) == [2])
    }

    @Test("a cancelled import writes nothing")
    func cancel() throws {
        let folder = try temporaryFolder()
        let path = folder + "/many.jsonl"
        try writeFile(path, (0..<2_000).map { "{\"type\":\"article\",\"title\":\"t\($0)\",\"content\":\"c\"}\n" }.joined())
        let store = try Store.memory()
        var calls = 0
        let error = try #require(throws: NotesError.self) {
            try store.import(from: path, options: ImportOptions(progress: { _, _ in calls += 1; return calls < 2 }))
        }
        #expect(error.kind == .cancelled && calls == 2)
        #expect(try store.articles.count() == 0 && store.lastChangeSeq() == 0)
    }

    @Test("CSV fields with quotes, commas and line breaks survive a round trip")
    func csv() throws {
        let folder = try temporaryFolder()
        let source = try Store.memory()
        _ = try source.articles.create(title: "a, \"b\"", content: "x\r\ny\nz\r")
        _ = try source.export(to: folder + "/a.csv")
        let target = try Store.memory()
        #expect(try target.import(from: folder + "/a.csv").created == 1)
        #expect(try target.articles.list().items.map(\.content) == ["x\r\ny\nz\r"])
        #expect(try target.articles.list().items.map(\.title) == ["a, \"b\""])
    }

    @Test("file names made from titles are one safe path component")
    func safeNames() {
        #expect(SafeFileName.make("../../etc/passwd") == "_.._etc_passwd")
        #expect(SafeFileName.make("..") == "untitled")
        #expect(SafeFileName.make("  .hidden. ") == "hidden")
        #expect(SafeFileName.make("CON") == "_CON")
        #expect(SafeFileName.make("nul.txt") == "_nul.txt")
        #expect(SafeFileName.make("a\u{0}b\nc") == "a_b_c")
        #expect(SafeFileName.make(String(repeating: "新", count: 100)).utf8.count <= SafeFileName.maxBytes)
        var registry = SafeFileName.Registry()
        var attempt = 1
        #expect(registry.claim("Note", attempt: &attempt) == "Note.md")
        attempt = 1
        #expect(registry.claim("NOTE", attempt: &attempt) == "NOTE (2).md")
    }

    @Test("front matter reads Joplin's keys and skips the ones it does not know")
    func frontMatter() throws {
        let text = "---\ntitle: 'It''s'\ntags:\n  - a\n  - b\nupdated: 2021-04-05 10:11:12Z\nauthor: \"x\" # who\n---\n\nbody\n"
        let parsed = try Array(text.utf8).withUnsafeBufferPointer { try FrontMatter.parse($0) }
        #expect(parsed.values == ["title": "It's", "updated": "2021-04-05 10:11:12Z"])
        #expect(parsed.bodyLine == 10)
        #expect(try FrontMatter.doubleQuoted("\"a\\tb\\u00e9\\U0001F600\\\"\"") == "a\tbé😀\"")
    }

    @Test("fast UTF-8 validation agrees with the standard library")
    func utf8() {
        let cases: [[UInt8]] = [
            [], Array("plain".utf8), Array("今天，天气😀 \u{FFFD}".utf8), [0xFF], [0xEF, 0xBF], [0xEF, 0xBF, 0xBD],
            [0xEF, 0xEF, 0xBF, 0xBD], [0xF0, 0xEF, 0xBF, 0xBD], [0xE0, 0x80, 0x80], [0xED, 0xA0, 0x80], [0xC0, 0xAF],
            [0xF4, 0x90, 0x80, 0x80], [0x61, 0xEF, 0xBF, 0xBD, 0xC3], [0xEF, 0xBF, 0xBD, 0xEF, 0xBF, 0xBD, 0x80],
        ]
        var rng = SystemRandomNumberGenerator()
        let random = (0..<2_000).map { _ in (0..<Int.random(in: 0...8, using: &rng)).map { _ in [0xEF, 0xBF, 0xBD, 0x80, 0xC3, 0x61, UInt8.random(in: 0...255, using: &rng)].randomElement(using: &rng)! } }
        for bytes in cases + random {
            bytes.withUnsafeBufferPointer { buffer in
                #expect(String.validatingUTF8(buffer) == String(validating: buffer, as: UTF8.self), "\(bytes)")
            }
        }
    }

    @Test("transcript lines read back as written, look-alike lines included")
    func transcriptLines() throws {
        let content = "first\n[2024-01-02 03:04:05] Me: not a new message\n\\back\n\n"
        var out: [UInt8] = []
        TranscriptLines.write(sentAt: Timestamp(milliseconds: 1_704_164_645_678), fromMe: false, content: content, into: &out)
        let text = String(decoding: out, as: UTF8.self)
        #expect(text == "[2024-01-02 03:04:05] Them: first\n\\[2024-01-02 03:04:05] Me: not a new message\n\\\\back\n\n\n")
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        let header = try #require(TranscriptLines.header(lines.removeFirst()))
        #expect(header.fromMe == false && header.sentAt == Timestamp(milliseconds: 1_704_164_645_000) && header.text == "first")
        #expect(([header.text] + lines.map { TranscriptLines.unescape($0) }).joined(separator: "\n") == content)
        #expect(TranscriptLines.header("[2024-13-02 03:04:05] Me: x") == nil)
        #expect(TranscriptLines.header("[2024-01-02 03:04:05] You: x")?.sender == "You")  // a group chat's line
        #expect(TranscriptLines.header("[2024-01-02 03:04:05] : x") == nil)
        #expect(TranscriptLines.header("[2024-01-02 03:04:05]  You: x") == nil)
        #expect(TranscriptLines.header("[2024-01-02 03:04:05] no colon here") == nil)
        #expect(TranscriptLines.unescape("\\not special") == "\\not special")
    }

    @Test("a POSIX rule gives summer and winter offsets after a zone's last transition")
    func posixRule() throws {
        let berlin = try #require(PosixRule("CET-1CEST,M3.5.0,M10.5.0/3"))
        let summer2100 = Timestamp(iso8601: "2100-07-01T08:00:00Z")!.milliseconds / 1000
        let winter2100 = Timestamp(iso8601: "2100-01-01T08:00:00Z")!.milliseconds / 1000
        #expect(berlin.offset(atUTC: summer2100) == 7200 && berlin.offset(atUTC: winter2100) == 3600)
        // The changes: the last Sunday of March at 01:00 UTC, of October at 01:00 UTC.
        let before = Timestamp(iso8601: "2100-03-28T00:59:59Z")!.milliseconds / 1000
        #expect(berlin.offset(atUTC: before) == 3600 && berlin.offset(atUTC: before + 1) == 7200)
        let sydney = try #require(PosixRule("AEST-10AEDT,M10.1.0,M4.1.0/3"))  // summer across the new year
        #expect(sydney.offset(atUTC: winter2100) == 39600 && sydney.offset(atUTC: summer2100) == 36000)
        #expect(PosixRule("<+08>-8")?.offset(atUTC: summer2100) == 28800)
        #expect(PosixRule("") == nil && PosixRule("CET-1CEST,J60,J300") != nil)
    }

    @Test("conversations and messages round-trip through JSON Lines, and a transcript twice adds nothing")
    func chat() throws {
        let folder = try temporaryFolder()
        let source = try Store.memory()
        let alice = try source.conversations.create(title: "Alice")
        _ = try source.messages.insertMany([
            NewMessage(content: "hi\nthere", fromMe: false, sentAt: Timestamp(milliseconds: 1_000_000)),
            NewMessage(content: "hello", fromMe: true, sentAt: Timestamp(milliseconds: 2_000_000)),
        ], in: alice.id)
        _ = try source.export(to: folder + "/chat.jsonl")
        let target = try Store.memory()
        #expect(try target.import(from: folder + "/chat.jsonl").created == 3)
        let copied = try #require(try target.conversations.list().items.first)
        #expect(copied.uid == alice.uid && copied.title == "Alice")
        #expect(try target.messages.history(of: copied.id).items.map(\.content) == ["hi\nthere", "hello"])

        _ = try source.export(to: folder + "/alice.txt", options: ExportOptions(conversation: alice.id))
        let again = try source.import(from: folder + "/alice.txt", options: ImportOptions(title: "Alice"))
        #expect(again.created == 0 && again.skipped == 2)
    }
}
